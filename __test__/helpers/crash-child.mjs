/**
 * The child of the crash harness (`__test__/crash.test.ts`, `crash-undo.test.ts`): opens a
 * Workspace on the given root and data dir and runs a list of tool calls, one after the other,
 * until it is SIGKILLed.
 *
 *   node crash-child.mjs <config.json>
 *
 * config: { root, dataDir, calls: [[tool, args], …], loop?: boolean, keepOverwrites?: boolean,
 * allowedPaths?: string[] }. An argument object may
 * carry `contentFile` instead of `content`, or `inputFile` instead of `input` (large contents and
 * patches are read from files). The "tool" `ws.undo` calls `ws.undo(args)` (the host's undo).
 * Prints `ready` once the workspace exists, `done <i>` after each call, `finished <ms>` at the
 * end; a call that does not succeed prints `failed <json>` and exits with status 2.
 */
import { readFileSync } from 'node:fs'
import { Workspace } from 'agent-fs-tools'

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'))
const contents = new Map()
const fromFile = (file) => {
  if (!contents.has(file)) contents.set(file, readFileSync(file, 'utf8'))
  return contents.get(file)
}
const calls = config.calls.map(([tool, args]) => {
  const { contentFile, inputFile, ...rest } = args
  if (contentFile !== undefined) rest.content = fromFile(contentFile)
  if (inputFile !== undefined) rest.input = fromFile(inputFile)
  return [tool, rest]
})

const ws = new Workspace({
  root: config.root,
  ...(config.allowedPaths !== undefined && { allowedPaths: config.allowedPaths }),
  trash: { dataDir: config.dataDir, ...(config.keepOverwrites === false && { keepOverwrites: false }) },
  permissions: {
    cwdReadFile: true,
    cwdWriteFile: true,
    cwdRemoveFile: true,
    cwdRemoveDir: true,
  },
  limits: { writeMaxBytes: 64 << 20, appendMaxTotalBytes: 1 << 30, editMaxFileBytes: 64 << 20 },
  // Each child is a fresh process rewriting files it never read: the harness tests kills, not
  // the model's view (../../docs/tools.md#stale-views).
  staleWrites: 'allow',
  confirm: () => true,
})

process.stdout.write('ready\n')
const started = performance.now()
for (let i = 0; config.loop || i < calls.length; i++) {
  const [tool, args] = calls[i % calls.length]
  const result = tool === 'ws.undo' ? await ws.undo(args) : await ws.call(tool, args)
  if (result.status !== 'ok') {
    process.stdout.write(`failed ${JSON.stringify({ tool, i, result })}\n`)
    process.exit(2)
  }
  process.stdout.write(`done ${i}\n`)
}
process.stdout.write(`finished ${Math.round(performance.now() - started)}\n`)
