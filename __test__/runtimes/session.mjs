/**
 * A real session of every tool, runnable unchanged on Node, Bun and Deno (only `node:` built-ins
 * and the package, imported as a host imports it). `scripts/test-runtimes.mjs` runs it on every
 * runtime of the matrix from a host project whose `node_modules/agent-fs-tools` holds the built
 * package.
 *
 * It covers every tool the workspace defines (a tool it does not exercise is a failure, so a new
 * tool must be added here), a prompt answered yes and no (sync and async handlers), an abort before
 * a call and one while its prompt is open, a long content (passed beside the JSON), 200 parallel writes and 200 parallel appends to one
 * file, a patch over several files, undo, the sandbox (outside paths and a link out), grep and
 * glob, a recursive trash and restore. Each check is counted; the last line is
 * `session on <runtime>: N passed, M failed`. A check the platform cannot set up (the link out,
 * where no symbolic link can be made: Wine, Windows without the privilege) is printed as
 * `SKIPPED <check>: <why>` and the last line ends `, K skipped`, which `scripts/test-runtimes.mjs`
 * does not accept (every runtime it runs can make links). The process is left to end by itself (no `process.exit`): a
 * runtime kept alive by the addon's callbacks never prints an exit, and the runner says so.
 */
import { Workspace } from 'agent-fs-tools'
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const runtime = globalThis.Deno ? `Deno ${globalThis.Deno.version.deno}` : process.versions.bun ? `Bun ${process.versions.bun}` : `Node ${process.version}`
let passed = 0
const failures = []
/** Checks this platform cannot make, with why: reported, never counted as passed. */
const skipped = []

/** Counts one check; a failed one is reported with what was seen. */
function check(name, ok, seen) {
  if (ok) passed += 1
  else failures.push(`${name}: ${typeof seen === 'string' ? seen : JSON.stringify(seen)}`)
}

const base = realpathSync(mkdtempSync(join(tmpdir(), 'afs-session-')))
const root = join(base, 'project')
const outside = join(base, 'outside')
const dataDir = join(base, 'data')
mkdirSync(join(root, 'src'), { recursive: true })
mkdirSync(outside)
writeFileSync(join(root, 'src', 'main.ts'), 'export const answer = 41\nexport const name = "demo"\n')
writeFileSync(join(root, 'README.md'), '# demo\n\nA sample project.\n')
writeFileSync(join(outside, 'secret.txt'), 'outside the sandbox\n')
/** Why the link out of the sandbox could not be made here (`null`: it was). */
const noLinkOut = makeLink(join(outside, 'secret.txt'), join(root, 'link-out'))

/**
 * Makes the symbolic link `link` to `target`; returns why not where the platform cannot: Windows
 * refuses without the privilege or Developer Mode, and under Wine 8 `symlinkSync` reports
 * success and makes nothing.
 */
function makeLink(target, link) {
  try {
    symlinkSync(target, link)
  } catch (error) {
    return `this platform cannot make a symbolic link (${error.code ?? error.message})`
  }
  let made = false
  try {
    made = lstatSync(link).isSymbolicLink()
  } catch {}
  return made ? null : 'this platform cannot make a symbolic link (symlinkSync reported success and made none)'
}

/** Every tool called, by name, to check that none was left out. */
const called = new Set()
/** What the confirm handler was asked, in order. */
const asked = []

const ws = new Workspace({
  root,
  allowedPaths: [root],
  permissions: { cwdWriteFile: true, cwdRemoveFile: true, cwdRemoveDir: true },
  trash: { dataDir, sessionId: 'runtime-session', agentName: `session on ${runtime}` },
  // The default handler: approves, and notes what it saw (recursive removals always ask).
  confirm: (request) => {
    asked.push(request.label)
    return true
  },
})

/** `ws.call`, noting the tool. */
function call(name, args, context) {
  called.add(name)
  return ws.call(name, args, context)
}

const file = (...parts) => join(root, ...parts)
const read = (...parts) => readFileSync(file(...parts), 'utf8')

try {
  // Reading, writing, editing.
  let r = await call('read_file', { path: 'src/main.ts' })
  check('read_file', r.status === 'ok' && r.output.includes('   1 | export const answer = 41'), r)
  r = await call('write_file', { path: 'src/new.ts', content: 'export const fresh = true\n' })
  check('write_file creates', r.status === 'ok' && read('src', 'new.ts') === 'export const fresh = true\n', r)
  // Long top-level strings go to the addon as themselves, beside the JSON (argumentsToNative).
  const long = 'quoted "text" \\ é 😀\r\n'.repeat(2000)
  r = await call('write_file', { path: 'long.txt', content: long })
  check('write_file of a long content, byte for byte', r.status === 'ok' && read('long.txt') === long, r)
  // And a long diff comes back as itself, beside the result's JSON (resultFromNative).
  r = await call('edit_file', { path: 'long.txt', edits: [{ oldString: 'quoted', newString: 'QUOTED', replaceAll: true }] })
  const longDiff = typeof r.diff === 'string' ? r.diff : ''
  check(
    'edit_file with a long diff, whole and in place',
    r.status === 'ok' &&
      read('long.txt') === long.replaceAll('quoted', 'QUOTED') &&
      longDiff.length > 16 * 1024 &&
      longDiff.split('\n').filter((line) => line === '+QUOTED "text" \\ é 😀\r').length === 2000 &&
      Object.keys(r).indexOf('diff') === Object.keys(r).indexOf('output') + 1,
    { keys: Object.keys(r), diff: longDiff.slice(0, 200) },
  )
  r = await call('edit_file', {
    path: 'src/main.ts',
    edits: [
      { oldString: '41', newString: '42' },
      { oldString: '"demo"', newString: '"session"' },
    ],
  })
  check('edit_file, two edits', r.status === 'ok' && read('src', 'main.ts') === 'export const answer = 42\nexport const name = "session"\n', r)
  check('edit_file diff', typeof r.diff === 'string' && r.diff.includes('+export const answer = 42'), r.diff)
  r = await call('append_file', { path: 'README.md', content: 'Appended.\n' })
  check('append_file', r.status === 'ok' && read('README.md').endsWith('A sample project.\nAppended.\n'), r)
  r = await call('create_directory', { path: 'build/out' })
  check('create_directory', r.status === 'ok' && existsSync(file('build', 'out')), r)
  r = await call('list_directory', { path: '.', recursive: true })
  check('list_directory', r.status === 'ok' && r.output.includes('src/main.ts') && r.output.includes('build/'), r)

  // Searching.
  r = await call('glob', { pattern: '**/*.ts' })
  check('glob', r.status === 'ok' && r.output.includes('src/main.ts') && r.output.includes('src/new.ts'), r)
  r = await call('grep', { pattern: 'answer = \\d+', path: '.' })
  check('grep', r.status === 'ok' && r.output.includes('src/main.ts') && r.output.includes('answer = 42'), r)

  // The working-directory stack.
  r = await call('cwd_push', { path: 'src' })
  check('cwd_push', r.status === 'ok' && r.output.startsWith(`Pushed to ${file('src')}`), r)
  r = await call('cwd_get', {})
  check('cwd_get', r.status === 'ok' && r.output.startsWith(`CWD: ${file('src')}`), r)
  r = await call('read_file', { path: 'new.ts' })
  check('a relative path resolves against the pushed cwd', r.status === 'ok' && r.output.includes('fresh'), r)
  r = await call('cwd_pop', {})
  check('cwd_pop', r.status === 'ok' && r.output.startsWith(`Popped to ${root}`), r)

  // Moving, copying, deleting into the trash and restoring, a recursive trash and restore.
  r = await call('move_file', { source: 'src/new.ts', destination: 'src/moved.ts' })
  check('move_file', r.status === 'ok' && !existsSync(file('src', 'new.ts')) && read('src', 'moved.ts').includes('fresh'), r)
  if (ws.definitions().some((d) => d.name === 'copy_file')) {
    r = await call('copy_file', { source: 'src/moved.ts', destination: 'src/copy.ts' })
    check('copy_file', r.status === 'ok' && read('src', 'copy.ts') === read('src', 'moved.ts'), r)
  }
  r = await call('delete_file', { path: 'src/moved.ts' })
  check('delete_file into the trash', r.status === 'ok' && !existsSync(file('src', 'moved.ts')) && typeof r.data?.trashedTo === 'string', r)
  const trashedFile = r.data?.trashedTo
  mkdirSync(file('tree', 'deep'), { recursive: true })
  writeFileSync(file('tree', 'deep', 'leaf.txt'), 'leaf\n')
  writeFileSync(file('tree', 'top.txt'), 'top\n')
  const askedBefore = asked.length
  r = await call('remove_dir', { path: 'tree', recursive: true })
  check('remove_dir recursive', r.status === 'ok' && !existsSync(file('tree')), r)
  check('a recursive removal asks', asked.slice(askedBefore).includes('Remove directory recursively?'), asked)
  const trashedTree = r.data?.trashedTo
  r = await call('trash_list', {})
  check('trash_list', r.status === 'ok' && r.output.includes(file('tree')) && r.output.includes(file('src', 'moved.ts')), r)
  r = await call('restore_file', { trashedPath: trashedTree })
  check('restore_file of a tree', r.status === 'ok' && read('tree', 'deep', 'leaf.txt') === 'leaf\n' && read('tree', 'top.txt') === 'top\n', r)
  r = await call('restore_file', { trashedPath: trashedFile })
  check('restore_file of a file', r.status === 'ok' && read('src', 'moved.ts').includes('fresh'), r)
  mkdirSync(file('empty'))
  r = await call('remove_dir', { path: 'empty' })
  check('remove_dir of an empty directory', r.status === 'ok' && !existsSync(file('empty')), r)

  // Prompts: a call the permissions do not cover asks the handler; yes and no, sync and async.
  const ask = { cwdWriteFile: false }
  let request
  r = await call('write_file', { path: 'asked.txt', content: 'yes\n' }, { permissions: ask, confirm: (q) => ((request = q), true) })
  check('a prompt answered yes writes', r.status === 'ok' && read('asked.txt') === 'yes\n', r)
  check('the prompt shows the label and the diff', request?.label === 'Write file?' && request?.diff?.includes('+yes'), request)
  r = await call('edit_file', { path: 'asked.txt', edits: [{ oldString: 'yes', newString: 'no' }] }, { permissions: ask, confirm: async () => false })
  check('a prompt answered no (async) denies', r.status === 'denied' && r.output.startsWith('The user denied this edit. Do not retry it') && read('asked.txt') === 'yes\n', r)
  r = await call('append_file', { path: 'asked.txt', content: 'later\n' }, { permissions: ask, confirm: () => new Promise((resolve) => setTimeout(() => resolve(true), 1)) })
  check('a prompt answered yes later (async) appends', r.status === 'ok' && read('asked.txt') === 'yes\nlater\n', r)
  r = await call('write_file', { path: 'thrown.txt', content: 'x' }, { permissions: ask, confirm: () => { throw new Error('handler bug') } })
  check('a handler that throws counts as no', r.status === 'denied' && !existsSync(file('thrown.txt')), r)

  // Aborts: before the call, and while its prompt is open (the prompt never answers).
  const early = new AbortController()
  early.abort()
  r = await call('write_file', { path: 'aborted.txt', content: 'x' }, { signal: early.signal })
  check('an aborted signal before the call', r.status === 'error' && r.code === 'ABORTED' && !existsSync(file('aborted.txt')), r)
  const late = new AbortController()
  r = await call(
    'write_file',
    { path: 'aborted.txt', content: 'x' },
    {
      permissions: ask,
      signal: late.signal,
      confirm: () => {
        late.abort()
        return new Promise(() => {}) // never answers: the abort must end the call and not hold the process
      },
    },
  )
  check('an abort while the prompt is open', r.status === 'error' && r.code === 'ABORTED' && !existsSync(file('aborted.txt')), r)

  // 200 parallel writes to distinct files, and 200 parallel appends to one file: none lost.
  const writes = await Promise.all(Array.from({ length: 200 }, (_, i) => call('write_file', { path: `parallel/f${i}.txt`, content: `${i}\n` })))
  check('200 parallel writes', writes.every((w) => w.status === 'ok') && readdirSync(file('parallel')).length === 200, writes.find((w) => w.status !== 'ok'))
  check('200 parallel writes, contents', Array.from({ length: 200 }, (_, i) => read('parallel', `f${i}.txt`) === `${i}\n`).every(Boolean), 'a file has the wrong content')
  const appends = await Promise.all(Array.from({ length: 200 }, (_, i) => call('append_file', { path: 'parallel.log', content: `line ${i}\n` })))
  const lines = read('parallel.log').split('\n').filter(Boolean)
  check('200 parallel appends to one file', appends.every((a) => a.status === 'ok') && lines.length === 200 && new Set(lines).size === 200, lines.length)

  // A patch over several files, then undo of it.
  const before = { main: read('src', 'main.ts'), readme: read('README.md') }
  r = await call('apply_patch', {
    input: [
      '*** Begin Patch',
      '*** Update File: src/main.ts',
      '@@',
      '-export const answer = 42',
      '+export const answer = 43',
      '*** Update File: README.md',
      '@@',
      ' # demo',
      '+',
      '+Patched.',
      '*** Add File: src/added.ts',
      '+export const added = 1',
      '*** End Patch',
    ].join('\n'),
  })
  check('apply_patch over three files', r.status === 'ok' && read('src', 'main.ts').includes('answer = 43') && read('README.md').includes('Patched.') && existsSync(file('src', 'added.ts')), r)
  const history = await ws.history({ limit: 5 })
  check('history records the patch', history[0]?.tool === 'apply_patch' && history[0]?.files.length === 3, history[0])
  r = await ws.undo()
  check('undo takes the patch back', r.status === 'ok' && read('src', 'main.ts') === before.main && read('README.md') === before.readme && !existsSync(file('src', 'added.ts')), r)

  // The sandbox: outside paths, a link out, the data directory.
  r = await call('read_file', { path: join(outside, 'secret.txt') })
  check('sandbox: an outside path', r.status === 'error' && r.code === 'PATH_NOT_ALLOWED', r)
  if (noLinkOut !== null) {
    skipped.push(`sandbox: reading through a link out: ${noLinkOut}`, `sandbox: writing through a link out: ${noLinkOut}`)
  } else {
    r = await call('read_file', { path: 'link-out' })
    check('sandbox: reading through a link out', r.status === 'error' && r.code === 'PATH_NOT_ALLOWED', r)
    r = await call('write_file', { path: 'link-out', content: 'overwritten' })
    check('sandbox: writing through a link out', r.status !== 'ok' && readFileSync(join(outside, 'secret.txt'), 'utf8') === 'outside the sandbox\n', r)
  }
  r = await call('write_file', { path: '../outside/new.txt', content: 'x' })
  check('sandbox: a relative path out', r.status === 'error' && r.code === 'PATH_NOT_ALLOWED' && !existsSync(join(outside, 'new.txt')), r)

  // Every tool the workspace offers was exercised.
  const missing = ws.definitions().map((d) => d.name).filter((name) => !called.has(name))
  check('every tool was called', missing.length === 0, `not exercised: ${missing.join(', ')}`)
} catch (error) {
  failures.push(`threw: ${error?.stack ?? error}`)
} finally {
  rmSync(base, { recursive: true, force: true })
}

for (const failure of failures) console.log(`FAILED ${failure}`)
for (const skip of skipped) console.log(`SKIPPED ${skip}`)
console.log(`session on ${runtime}: ${passed} passed, ${failures.length} failed${skipped.length > 0 ? `, ${skipped.length} skipped` : ''}`)
if (failures.length > 0) process.exitCode = 1
