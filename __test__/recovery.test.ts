/**
 * Recovery of a killed apply_patch (issue 26): exclusive, complete, bounded by the sandbox, and
 * readable at any size. The crash child (`helpers/crash-child.mjs`) applies a patch of many files
 * and dies in the middle of its commit, half of the files exchanged (a debug build's crash point
 * `AGENT_FS_TOOLS_CRASH_AT="step <n>"`), so that its journal record is left. Then:
 *
 * - three Workspaces and two processes recovering it at once leave every file as before the patch
 *   or every one as the patch says, with `keepOverwrites` true and false; no temp file and no
 *   journal record is left, and the history lists the patch exactly when it stands;
 * - a Workspace whose `allowedPaths` reach only part of it leaves all of it as the kill left it
 *   (files and record), refuses to change what it covers (`CONFLICT`), and reads as usual; the
 *   next Workspace that reaches all of it finishes it, all or nothing; so does the MCP server
 *   started with `--allow` on part of it and a client root over all of it;
 * - a patch whose journal record is over 1 MiB (as a patch of 3,000 files makes) is recovered all
 *   or nothing.
 */
import { spawn } from 'node:child_process'
import { existsSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, closeSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ListRootsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { describe, expect, it } from 'vitest'
import { Workspace, type WorkspaceOptions } from 'agent-fs-tools'
import { tempWorkspaceDirs, type TempWorkspaceDirs } from './helpers/temp.js'
import { ALL, sha256 } from './helpers/trash.js'
import { scaled } from './helpers/time.js'
import { wasKilled } from './helpers/crash.js'

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'helpers', 'crash-child.mjs')
const MAIN = resolve(__dirname, '..', 'dist', 'esm', 'cli', 'main.js')
const TEMP = /(\.agent-fs-tools\.tmp|^\.restore-[0-9a-f]+\.partial)$/
const COMMIT_HEAD = '{"kind":"commit"'

type Call = [string, Record<string, unknown>]

interface ChildConfig {
  calls: Call[]
  keepOverwrites?: boolean
  allowedPaths?: string[]
}

let configs = 0

/**
 * Runs the crash child, told to die at the crash point `crashAt` (a debug build's
 * `AGENT_FS_TOOLS_CRASH_AT`) if given. `exit` resolves once it has exited (rejects if it failed
 * without being killed); `ready` once its Workspace exists (and so its recovery has begun).
 */
function startChild(dirs: TempWorkspaceDirs, config: ChildConfig, crashAt?: string): { ready: Promise<void>; exit: Promise<{ killed: boolean }> } {
  const file = join(dirs.dataDir, '..', `child-${process.pid}-${configs++}.json`)
  writeFileSync(file, JSON.stringify({ root: dirs.root, dataDir: dirs.dataDir, ...config }))
  const env = crashAt === undefined ? process.env : { ...process.env, AGENT_FS_TOOLS_CRASH_AT: crashAt }
  const child = spawn(process.execPath, [CHILD, file], { stdio: ['ignore', 'pipe', 'pipe'], env })
  let out = ''
  let isReady: () => void = () => undefined
  const ready = new Promise<void>((resolve) => (isReady = resolve))
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString()
    if (out.includes('ready\n')) isReady()
  })
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()))
  const exit = new Promise<{ killed: boolean }>((resolve, reject) =>
    child.on('exit', (code, signal) => {
      isReady()
      if (wasKilled(code, signal)) resolve({ killed: true })
      else if (code === 0) resolve({ killed: false })
      else reject(new Error(`the child exited with ${code}: ${out}`))
    }),
  )
  return { ready, exit }
}

/**
 * The journal records (of any workspace) whose first bytes say they are a change of many entries
 * (not a `.<record>.partial` a kill cut short while it was being written: that one never counted).
 */
function commitRecords(dirs: TempWorkspaceDirs): string[] {
  const records = journalFiles(dirs).filter((path) => /^[^.].*\.json$/.test(path.split('/').pop()!))
  return records.filter((path) => {
    const fd = openSync(path, 'r')
    try {
      const head = Buffer.alloc(COMMIT_HEAD.length)
      return readSync(fd, head, 0, head.length, 0) === head.length && head.toString() === COMMIT_HEAD
    } finally {
      closeSync(fd)
    }
  })
}

/** Every file in the journals of the data dir (`<dataDir>/journal/<hash>/…`). */
function journalFiles(dirs: TempWorkspaceDirs): string[] {
  const journal = join(dirs.dataDir, 'journal')
  if (!existsSync(journal)) return []
  return readdirSync(journal, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) => readdirSync(join(journal, d.name)).map((n) => join(journal, d.name, n)))
}

/** Our temp files and trees anywhere under `dir`. */
function temps(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((p) => TEMP.test(p.split('/').pop()!))
}

/** Every entry under `dir` (hidden ones too) with a file's content digest. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const path of readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort()) {
    const full = join(dir, path)
    out[path] = lstatSync(full).isDirectory() ? 'dir' : sha256(readFileSync(full))
  }
  return out
}

/** A patch over `count` files spread over `subdirs` (each updated), plus one file it adds and one it deletes. */
interface Scenario {
  before: Record<string, string | null>
  after: Record<string, string | null>
  input: string
}

function scenario(root: string, count: number, subdirs: string[], name: (i: number) => string): Scenario {
  const before: Record<string, string | null> = {}
  const after: Record<string, string | null> = {}
  const parts = ['*** Begin Patch\n']
  for (const sub of subdirs) mkdirSync(join(root, sub), { recursive: true })
  for (let i = 0; i < count; i++) {
    const path = `${subdirs[i % subdirs.length]}${name(i)}`
    before[path] = `line ${i}\nold ${i}\n`
    after[path] = `line ${i}\nnew ${i}\n`
    parts.push(`*** Update File: ${path}\n@@\n line ${i}\n-old ${i}\n+new ${i}\n`)
  }
  const added = `${subdirs[0]}added.txt`
  const gone = `${subdirs[subdirs.length - 1]}gone.txt`
  Object.assign(before, { [added]: null, [gone]: 'to be deleted\n' })
  Object.assign(after, { [added]: 'added by the patch\n', [gone]: null })
  parts.push(`*** Add File: ${added}\n+added by the patch\n`, `*** Delete File: ${gone}\n`, '*** End Patch\n')
  for (const [path, text] of Object.entries(before)) if (text !== null) writeFileSync(join(root, path), text)
  return { before, after, input: parts.join('') }
}

/**
 * A patch over `count` files whose child died in the middle of its commit, half of its files
 * exchanged (the crash point `step <count/2>`: aimed, where a kill timed from outside could
 * land before or after the commit on a slow system): the journal holds its record.
 */
async function killedPatch(
  count: number,
  subdirs: string[],
  { keepOverwrites = true, name = (i: number): string => `f${i}.txt` } = {},
): Promise<{ dirs: TempWorkspaceDirs; patch: Scenario; record: string }> {
  const dirs = tempWorkspaceDirs()
  const patch = scenario(dirs.root, count, subdirs, name)
  const inputFile = join(dirs.dataDir, '..', 'patch.txt')
  writeFileSync(inputFile, patch.input)
  const at = `step ${Math.floor(count / 2)}`
  const run = await startChild(dirs, { calls: [['apply_patch', { inputFile }]], keepOverwrites }, at).exit
  expect(run.killed, `the child was not killed at the crash point \`${at}\` (is the addon a debug build? only those have crash points)`).toBe(true)
  const [record] = commitRecords(dirs)
  expect(record, 'the commit record of the killed patch').toBeDefined()
  const changed = Object.keys(patch.before).filter((p) => existsSync(join(dirs.root, p)) && readFileSync(join(dirs.root, p), 'utf8') !== patch.before[p]).length
  expect(changed, 'files the patch had changed when it was killed').toBeGreaterThan(0)
  return { dirs, patch, record: record! }
}

function options(dirs: TempWorkspaceDirs, extra: Partial<WorkspaceOptions> = {}): WorkspaceOptions {
  return { root: dirs.root, trash: { dataDir: dirs.dataDir }, permissions: ALL, confirm: () => true, ...extra }
}

/** Every file as before the patch, or every one as it says; nothing of the commit left; the history agrees. */
async function expectAllOrNothing(dirs: TempWorkspaceDirs, patch: Scenario): Promise<'before' | 'after'> {
  const digests = (files: Record<string, string | null>): Record<string, string | null> =>
    Object.fromEntries(Object.entries(files).map(([p, t]) => [p, t === null ? null : sha256(t)]))
  const found = Object.fromEntries(
    Object.keys(patch.before).map((p) => {
      const path = join(dirs.root, p)
      return [p, existsSync(path) ? sha256(readFileSync(path)) : null]
    }),
  )
  const [before, after] = [digests(patch.before), digests(patch.after)]
  const mixed = Object.keys(found).filter((p) => found[p] !== before[p] && found[p] !== after[p])
  expect(mixed, 'files that are neither as before nor as after').toEqual([])
  const changed = Object.keys(found).filter((p) => found[p] !== before[p])
  const unchanged = Object.keys(found).filter((p) => found[p] !== after[p])
  expect(changed.length === 0 || unchanged.length === 0, `a mix: changed ${changed.slice(0, 5)}…, not changed ${unchanged.slice(0, 5)}…`).toBe(true)
  expect(temps(dirs.root), 'temp files left').toEqual([])
  expect(journalFiles(dirs), 'journal records left').toEqual([])
  const stands = changed.length > 0
  const history = await new Workspace(options(dirs)).history()
  expect(history.filter((c) => c.tool === 'apply_patch').length, 'the history lists the patch exactly when it stands').toBe(stands ? 1 : 0)
  return stands ? 'after' : 'before'
}

describe('recovery of a killed apply_patch (issue 26)', { timeout: scaled(300_000) }, () => {
  for (const keepOverwrites of [true, false]) {
    it(`three Workspaces and two processes recovering it at once leave all or nothing (keepOverwrites: ${keepOverwrites})`, async () => {
      const { dirs, patch } = await killedPatch(400, [''], { keepOverwrites })
      const extra = { trash: { dataDir: dirs.dataDir, keepOverwrites } }
      // Two processes recover it, and, as soon as both have begun, three Workspaces here (each
      // recovers on a thread of its own from when it is made).
      const processes = [0, 1].map(() => startChild(dirs, { calls: [['trash_list', {}]], keepOverwrites }))
      await Promise.all(processes.map((p) => p.ready))
      const workspaces = [0, 1, 2].map(() => new Workspace(options(dirs, extra)))
      await Promise.all([...workspaces.map((ws) => ws.trashList()), ...processes.map((p) => p.exit)])
      await expectAllOrNothing(dirs, patch)
    })
  }

  it('a Workspace that reaches only part of it leaves it whole and refuses changes of what it covers; one that reaches all of it finishes it', async () => {
    const { dirs, patch, record } = await killedPatch(40, ['a/', 'b/'])
    const left = snapshot(dirs.root)
    const narrow = new Workspace(options(dirs, { allowedPaths: [join(dirs.root, 'a')] }))
    await narrow.trashList()
    expect(snapshot(dirs.root), 'the narrower Workspace changed nothing').toEqual(left)
    expect(existsSync(record), 'its record stays').toBe(true)
    const read = await narrow.call('read_file', { path: 'a/f0.txt' })
    expect(read.status, read.output).toBe('ok')
    const refused = await narrow.call('write_file', { path: 'a/f0.txt', content: 'mine\n' })
    expect(refused.code, refused.output).toBe('CONFLICT')
    expect(refused.output).toContain('a crash cut short')
    expect(refused.output).toContain(join(dirs.root, 'b'))
    const elsewhere = await narrow.call('write_file', { path: 'a/other.txt', content: 'other\n' })
    expect(elsewhere.status, elsewhere.output).toBe('ok')
    await new Workspace(options(dirs)).trashList()
    await expectAllOrNothing(dirs, patch)
  })

  it('the MCP server with --allow on part of it and a client root over all of it finishes it', async () => {
    const { dirs, patch } = await killedPatch(40, ['a/', 'b/'])
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MAIN, 'mcp', '--root', dirs.root, '--allow', join(dirs.root, 'a')],
      env: { ...getDefaultEnvironment(), AGENT_FS_TOOLS_DATA_DIR: dirs.dataDir },
      stderr: 'pipe',
    })
    const client = new Client({ name: 'recovery-test', version: '1.0.0' }, { capabilities: { roots: { listChanged: true } } })
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: pathToFileURL(dirs.root).href, name: 'root' }] }))
    await client.connect(transport)
    try {
      const listed = (await client.callTool({ name: 'list_directory', arguments: { path: join(dirs.root, 'b') } })) as CallToolResult
      expect(listed.isError ?? false, JSON.stringify(listed.content)).toBe(false)
    } finally {
      await client.close()
    }
    await expectAllOrNothing(dirs, patch)
  })

  it('a patch whose journal record is over 1 MiB (1,100 files with long names) is recovered all or nothing', async () => {
    // Long names make each step's record long: the size of 3,000 short-named files' record.
    const long = (i: number): string => `${String(i).padStart(4, '0')}-${'x'.repeat(230)}.txt`
    const { dirs, patch, record } = await killedPatch(1100, [`${'d'.repeat(200)}/`], { keepOverwrites: false, name: long })
    expect(readFileSync(record).length).toBeGreaterThan(1 << 20)
    await new Workspace(options(dirs)).trashList()
    await expectAllOrNothing(dirs, patch)
  })
})
