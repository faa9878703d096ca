#!/usr/bin/env node
/**
 * `npm run demo` (scripted, until the interactive playground lands): a session in a fresh sample
 * project in a temporary directory that calls every tool through `ws.call`, approves every
 * confirmation, and prints each call, its confirmation request and its result.
 *
 *   node scripts/demo.mjs [--keep]     --keep leaves the temporary directory in place
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { Workspace } from 'agent-fs-tools'

const keep = process.argv.includes('--keep')

/** Writes a small sample project (with a `.git` directory, so it is its own ProjectRoot). */
function sampleProject(root) {
  const files = {
    'README.md': '# Sample project\n\nA tiny project to try the agent-fs-tools tools on.\n',
    '.gitignore': 'node_modules/\nbuild/\n',
    'src/greet.ts': "export function greet(name: string): string {\n  return 'Hello, ' + name\n}\n",
    'src/index.ts': "import { greet } from './greet'\n\nconsole.log(greet('world'))\n",
    'node_modules/left-pad/index.js': 'module.exports = () => {}\n',
  }
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), content)
  }
  mkdirSync(join(root, '.git'))
}

function indent(text, prefix = '   │ ') {
  return text.replace(/\n$/, '').split('\n').map((line) => prefix + line).join('\n')
}

/** A confirm handler that prints each request and gives `answer`. */
function answering(answer) {
  return (request) => {
    const flags = [request.recursive && 'recursive', request.permanent && 'permanent'].filter(Boolean)
    const verdict = answer ? 'approved' : 'denied'
    console.log(`   ? ${request.label}  ${request.detail}${flags.length ? `  [${flags.join(', ')}]` : ''}  → ${verdict}`)
    if (request.diff) console.log(indent(request.diff, '   ┆ '))
    return answer
  }
}

const base = realpathSync(mkdtempSync(join(tmpdir(), 'agent-fs-tools-demo-')))
const root = join(base, 'sample-project')
const dataDir = join(base, 'data')
sampleProject(root)

const ws = new Workspace({
  root,
  trash: { dataDir, sessionId: 'demo-session', runId: 'demo-run', agentName: 'demo-script' },
  confirm: answering(true),
})

console.log(`agent-fs-tools demo — workspace ${root}`)
console.log(`trash and audit log in ${dataDir}\n`)
console.log(`tools: ${ws.definitions().map((d) => d.name).join(', ')}\n`)

let step = 0
/** Calls one tool, printing the call, any confirmation (via the handler) and the result. */
async function call(name, args, ctx) {
  step += 1
  const header = ws.formatCall(name, args)
  console.log(`── ${step}. ${name}${header ? `  ${header}` : ''}`)
  console.log(`   args ${JSON.stringify(args)}`)
  const result = await ws.call(name, args, ctx)
  console.log(`   → ${result.status}${result.code ? ` (${result.code})` : ''}`)
  console.log(indent(result.output))
  console.log('')
  return result
}

try {
  await call('cwd_get', {})
  await call('list_directory', { recursive: true })
  await call('read_file', { path: 'README.md' })
  await call('write_file', { path: 'notes/todo.md', content: '# TODO\n- try the tools\n' })
  await call('append_file', { path: 'notes/todo.md', content: '- look at the trash\n' })
  await call('edit_file', {
    path: 'src/greet.ts',
    edits: [
      { oldString: "'Hello, ' + name", newString: '`Hello, ${name}!`' },
      { oldString: 'greet(name: string)', newString: 'greet(name: string = "you")' },
    ],
  })
  await call('read_file', { path: 'src/greet.ts', startLine: 1, endLine: 2 })
  await call('read_file', { path: 'src/missing.ts' })
  await call('create_directory', { path: 'build/output' })
  await call('write_file', { path: 'build/output/app.js', content: "console.log('built')\n" })
  await call('move_file', { source: 'notes/todo.md', destination: 'docs/todo.md' })
  const deleted = await call('delete_file', { path: 'docs/todo.md' })
  await call('trash_list', {})
  const trashedTo = typeof deleted.data?.trashedTo === 'string' ? deleted.data.trashedTo : join(dataDir, 'no-archive.tar.gz')
  await call('restore_file', { trashedPath: trashedTo })
  await call('remove_dir', { path: 'build', recursive: true })
  await call('remove_dir', { path: 'notes' })
  await call('cwd_push', { path: 'src' })
  await call('list_directory', {})
  await call('cwd_pop', {})

  console.log('── a denial: the same kind of call with a handler that says no')
  await call('write_file', { path: 'README.md', content: 'overwritten\n' }, { confirm: answering(false) })

  try {
    const entries = await ws.trashList()
    console.log(`host API: trashList() → ${entries.length} archive(s)`)
    for (const entry of entries) console.log(`   ${entry.kind} ${entry.originalPath} (${entry.size} bytes) → ${entry.archivePath}`)
  } catch (error) {
    console.log(`host API: trashList() unavailable: ${error.message}`)
  }
} finally {
  if (keep) console.log(`\nkept ${base}`)
  else rmSync(base, { recursive: true, force: true })
}
