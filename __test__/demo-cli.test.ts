/**
 * `agent-fs-tools demo` without a terminal (the scripted session CI and `npm run demo | cat` get),
 * `--script FILE`, its options, and the playground's pure pieces (editor keys, cwd stack, examples).
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { Key } from 'ink'
import { describe, expect, it } from 'vitest'
import { nextCwdStack, displayPath } from '../ts/cli/demo/cwd-stack.js'
import { diffLineKind } from '../ts/cli/demo/diff-lines.js'
import { exampleArgs, oneLineJson } from '../ts/cli/demo/examples.js'
import { parseDemoArgs } from '../ts/cli/demo/options.js'
import { SAMPLE_FILES, writeSampleProject } from '../ts/cli/demo/sample-project.js'
import { BUILTIN_SCRIPT, LAST_TRASHED, parseScript, substituteLastTrashed } from '../ts/cli/demo/script.js'
import { editText, endsWithEnter, type TextState } from '../ts/cli/demo/text-edit.js'
import { wrapWords } from '../ts/cli/demo/wrap.js'
import { staleParts } from '../scripts/stale.mjs'
import { siblingDir } from './helpers/files.js'
import { tempWorkspace, tempWorkspaceDirs } from './helpers/temp.js'
import { scaled } from './helpers/time.js'
import { skipOnWindows } from './helpers/skip.js'

const root = resolve(__dirname, '..')
const bin = join(root, 'dist/esm/cli/main.js')

/** Runs the bin with stdin, stdout and stderr as pipes (no terminal). */
function demo(args: string[], env: NodeJS.ProcessEnv = {}) {
  return spawnSync(process.execPath, [bin, 'demo', ...args], {
    encoding: 'utf8',
    input: '',
    env: { ...process.env, ...env },
    timeout: scaled(60_000),
  })
}

describe('agent-fs-tools demo without a terminal', () => {
  it('runs the built-in scripted session on a temporary sample project, then removes it; exit 0', () => {
    const run = demo([])
    expect(run.stderr).toBe('')
    expect(run.status).toBe(0)
    const out = run.stdout
    const workspace = /^agent-fs-tools demo — workspace (\S+)$/m.exec(out)?.[1]
    expect(workspace).toBeDefined()
    expect(out).toMatch(/^tools: read_file, /m)
    // Every call is numbered, with its confirmation and its result.
    expect(out.match(/^── \d+\. /gm)).toHaveLength(BUILTIN_SCRIPT.length)
    expect(out).toContain('   ? Write file?  ')
    expect(out).toContain('→ approved')
    expect(out).toContain('   ┆ +# TODO')
    expect(out).toContain('(NOT_FOUND)')
    expect(out).toMatch(/── \d+\. restore_file[\s\S]*?→ ok\n   │ Restored /)
    expect(out).toContain('── a denial: the same kind of call with a handler that says no')
    expect(out).toContain('   │ The user denied this write.')
    expect(out).toMatch(/── \d+\. apply_patch[\s\S]*?→ ok\n   │ Success\. Updated the following files:\n   │ M src\/index\.ts\n   │ A src\/farewell\.ts/)
    // The tree removed at the end (the deleted file was restored; the file the patch updated
    // keeps its old content as a delta in the history, not in the trash).
    expect(out).toMatch(/^host API: trashList\(\) → 1 archive\(s\)$/m)
    expect(existsSync(workspace!)).toBe(false)
  }, scaled(60_000))

  it('--keep leaves the temporary directory in place', () => {
    const run = demo(['--keep'])
    expect(run.status).toBe(0)
    const kept = /^kept (\S+)$/m.exec(run.stdout)?.[1]
    expect(kept).toBeDefined()
    expect(readFileSync(join(kept!, 'sample-project', 'README.md'), 'utf8')).toBe(SAMPLE_FILES['README.md'])
    spawnSync('rm', ['-rf', kept!])
  }, scaled(60_000))

  it('--script FILE --root DIR runs the listed calls on that directory, approving; $lastTrashed restores', () => {
    const { root: project, dataDir } = tempWorkspaceDirs()
    writeSampleProject(project)
    const script = join(siblingDir(project, 'scripts'), 'calls.json')
    writeFileSync(
      script,
      JSON.stringify([
        { tool: 'write_file', args: { path: 'out/hello.txt', content: 'hello\n' } },
        { tool: 'delete_file', args: { path: 'README.md' } },
        { tool: 'restore_file', args: { trashedPath: LAST_TRASHED }, note: 'bring it back' },
        { tool: 'append_file', args: { path: 'out/hello.txt', content: 'no\n' }, approve: false },
      ]),
    )
    const run = demo(['--root', project, '--script', script], { AGENT_FS_TOOLS_DATA_DIR: dataDir })
    expect(run.stderr).toBe('')
    expect(run.status).toBe(0)
    expect(run.stdout).toContain(`agent-fs-tools demo — workspace ${project}`)
    expect(run.stdout).toContain(`trash and audit log in ${dataDir}`)
    expect(run.stdout).toContain('── bring it back\n── 3. restore_file')
    expect(run.stdout).toContain('The user denied this write.')
    expect(readFileSync(join(project, 'out/hello.txt'), 'utf8')).toBe('hello\n')
    expect(readFileSync(join(project, 'README.md'), 'utf8')).toBe(SAMPLE_FILES['README.md'])
  }, scaled(60_000))

  it('refuses --root without a script (the built-in session would change the files): exit 2', () => {
    const { root: project } = tempWorkspaceDirs()
    const run = demo(['--root', project])
    expect(run.status).toBe(2)
    expect(run.stderr).toContain('--root without a terminal needs --script FILE')
  })

  it('reports a bad script or option with the usage: exit 2', () => {
    const { root: dir } = tempWorkspaceDirs()
    const script = join(dir, 'bad.json')
    writeFileSync(script, JSON.stringify([{ tool: 'read_file', arguments: {} }]))
    let run = demo(['--script', script])
    expect(run.status).toBe(2)
    expect(run.stderr).toContain('call 1: unknown key "arguments"')
    expect(run.stderr).toContain('Usage: agent-fs-tools demo')
    run = demo(['--frobnicate'])
    expect(run.status).toBe(2)
    expect(run.stderr).toContain('unknown option: --frobnicate')
  })

  it('--help prints the usage; the top-level help lists demo', () => {
    const run = demo(['--help'])
    expect(run.status).toBe(0)
    expect(run.stdout).toMatch(/^Usage: agent-fs-tools demo/)
    const top = spawnSync(process.execPath, [bin, '--help'], { encoding: 'utf8' })
    expect(top.stdout).toContain('demo [--root <dir>] [--script <file>]')
  })
})

describe('options and scripts', () => {
  it('parses --root, --script (both forms), --keep, --help', () => {
    expect(parseDemoArgs([])).toEqual({ keep: false, help: false })
    expect(parseDemoArgs(['--root', 'a', '--script=b.json', '--keep'])).toEqual({ root: 'a', script: 'b.json', keep: true, help: false })
    expect(parseDemoArgs(['-h']).help).toBe(true)
    expect(() => parseDemoArgs(['--root'])).toThrow('--root needs a value')
    expect(() => parseDemoArgs(['--keep=1'])).toThrow('--keep takes no value')
  })

  it('parses a script and names the bad entry', () => {
    expect(parseScript('[{"tool":"cwd_get"}]', 's.json')).toEqual([{ tool: 'cwd_get', args: {} }])
    expect(() => parseScript('{}', 's.json')).toThrow('s.json: expected a JSON array of calls')
    expect(() => parseScript('[{"tool":1}]', 's.json')).toThrow('s.json: call 1: "tool" must be a tool name')
    expect(() => parseScript('[{"tool":"a","approve":"yes"}]', 's.json')).toThrow('"approve" must be true or false')
    expect(() => parseScript('[', 's.json')).toThrow('s.json: not JSON')
  })

  it('substitutes $lastTrashed deep in the arguments, once an archive is known', () => {
    const args = { a: LAST_TRASHED, b: [LAST_TRASHED, 'x'], c: { d: LAST_TRASHED } }
    expect(substituteLastTrashed(args, undefined)).toBe(args)
    expect(substituteLastTrashed(args, '/t.tar.gz')).toEqual({ a: '/t.tar.gz', b: ['/t.tar.gz', 'x'], c: { d: '/t.tar.gz' } })
  })
})

describe('playground pieces', () => {
  const key = (over: Partial<Key> = {}): Key =>
    ({
      upArrow: false, downArrow: false, leftArrow: false, rightArrow: false, pageDown: false, pageUp: false,
      home: false, end: false, return: false, escape: false, ctrl: false, shift: false, tab: false,
      backspace: false, delete: false, meta: false, super: false, hyper: false, capsLock: false, numLock: false,
      ...over,
    }) as Key

  it('edits text: insert at the cursor, move, erase, clear; pasted newlines become spaces', () => {
    let s: TextState = { text: '', cursor: 0 }
    s = editText(s, '{"a":1}', key())
    expect(s).toEqual({ text: '{"a":1}', cursor: 7 })
    s = editText(s, '', key({ leftArrow: true }))
    s = editText(s, '2', key())
    expect(s).toEqual({ text: '{"a":12}', cursor: 7 })
    s = editText(s, '', key({ delete: true })) // DEL (what Backspace sends) erases backwards
    s = editText(s, '', key({ backspace: true }))
    expect(s).toEqual({ text: '{"a":}', cursor: 5 })
    s = editText(s, 'a', key({ ctrl: true }))
    expect(s.cursor).toBe(0)
    s = editText(s, '', key({ end: true }))
    expect(s.cursor).toBe(6)
    expect(editText(s, 'x\ny', key())).toEqual({ text: '{"a":}x y', cursor: 9 })
    expect(editText(s, 'u', key({ ctrl: true }))).toEqual({ text: '', cursor: 0 })
    expect(editText(s, '', key({ return: true }))).toBe(s)
  })

  it('tracks the cwd stack from the depth; shows paths relative to the root', () => {
    let stack = nextCwdStack([], { cwd: '/r', projectRoot: '/r', depth: 0 })
    expect(stack).toEqual(['/r'])
    stack = nextCwdStack(stack, { cwd: '/r/src', projectRoot: '/r', depth: 1 })
    stack = nextCwdStack(stack, { cwd: '/r/src', projectRoot: '/r', depth: 2 }) // a push to the same directory
    expect(stack).toEqual(['/r', '/r/src', '/r/src'])
    expect(nextCwdStack(stack, { cwd: '/r', projectRoot: '/r', depth: 0 })).toEqual(['/r'])
    expect([displayPath('/r', '/r'), displayPath('/r/a/b', '/r'), displayPath('/other', '/r'), displayPath('/r2', '/r')]).toEqual([
      '.',
      join('a', 'b'),
      '/other',
      '/r2',
    ])
  })

  it('classifies diff lines', () => {
    expect(['--- a', '+++ b', '@@ -1 +1 @@', '+x', '-y', ' z'].map(diffLineKind)).toEqual(['header', 'header', 'hunk', 'add', 'remove', 'context'])
  })

  it('every tool has an example that passes its schema (no INVALID_ARGUMENTS)', async () => {
    const { ws, root: project } = tempWorkspace()
    writeSampleProject(project)
    for (const def of ws.definitions()) {
      const args = exampleArgs(def)
      expect(JSON.parse(oneLineJson(args))).toEqual(args)
      const result = await ws.call(def.name, args, { confirm: () => true })
      expect(result.code, `${def.name} ${JSON.stringify(args)}: ${result.output}`).not.toBe('INVALID_ARGUMENTS')
    }
    expect(exampleArgs(ws.definitions().find((d) => d.name === 'restore_file')!, { latestArchive: '/a.tar.gz' })).toEqual({
      trashedPath: '/a.tar.gz',
    })
    expect(exampleArgs(ws.definitions().find((d) => d.name === 'read_file')!, { fromRoot: (p) => `../${p}` })).toEqual({
      path: '../README.md',
    })
  })
})

describe('issue 21 playground fixes', () => {
  it('a chunk ending with Enter is its text, then Enter', () => {
    expect(endsWithEnter('{"a":1}\r')).toEqual({ text: '{"a":1}', enter: true })
    expect(endsWithEnter('{"a":1}\r\n')).toEqual({ text: '{"a":1}', enter: true })
    expect(endsWithEnter('\r')).toEqual({ text: '', enter: true })
    expect(endsWithEnter('a\nb')).toEqual({ text: 'a\nb', enter: false })
  })

  it('wraps words to the width, no line starting with the space it broke at', () => {
    const wrapped = wrapWords('Create a file, or replace the whole content of one. Use it for new files.', 20)
    expect(wrapped.split('\n')).toEqual(['Create a file, or', 'replace the whole', 'content of one. Use', 'it for new files.'])
    expect(wrapWords('  indented code line\nnext', 30)).toBe('  indented code line\nnext')
    expect(wrapWords('abcdefghij', 4)).toBe('abcd\nefgh\nij')
  })

  it("examples name a file that exists in your own --root instead of the sample project's", () => {
    const { ws } = tempWorkspace()
    const read = ws.definitions().find((d) => d.name === 'read_file')!
    expect(exampleArgs(read, { exists: () => false, someFile: 'notes.txt' })).toEqual({ path: 'notes.txt' })
    expect(exampleArgs(read, { exists: () => true, someFile: 'notes.txt' })).toEqual({ path: 'README.md' })
    const write = ws.definitions().find((d) => d.name === 'write_file')!
    // A new file's example stays as it is.
    expect(exampleArgs(write, { exists: () => false, someFile: 'notes.txt' })).toMatchObject({ path: 'notes/hello.md' })
  })

  it('piping the scripted demo into head removes its temporary directory', () => {
    skipOnWindows('the pipe into head is a Unix shell\'s (no sh on Windows)')
    const tmp = tempWorkspaceDirs().root
    const run = spawnSync('sh', ['-c', `"${process.execPath}" "${bin}" demo | head -1`], {
      encoding: 'utf8',
      env: { ...process.env, TMPDIR: tmp },
      timeout: scaled(60_000),
    })
    expect(run.stdout).toMatch(/^agent-fs-tools demo — workspace /)
    expect(run.stderr).not.toContain('EPIPE')
    expect(readdirSync(tmp)).toEqual([])
  })
})

describe('npm run demo builds only what is out of date', () => {
  /** A checkout-shaped directory: Rust and TS sources, an addon, a built dist. */
  function checkout(): string {
    const dir = tempWorkspaceDirs().root
    for (const path of ['src/lib.rs', 'Cargo.toml', 'Cargo.lock', 'build.rs', 'ts/index.ts', 'index.js', 'index.d.ts', 'agent-fs-tools.test-platform.node', 'dist/esm/index.js', 'dist/cjs/index.js']) {
      mkdirSync(join(dir, path, '..'), { recursive: true })
      writeFileSync(join(dir, path), '')
    }
    const age = (path: string, seconds: number): void => utimesSync(join(dir, path), seconds, seconds)
    for (const source of ['src/lib.rs', 'Cargo.toml', 'Cargo.lock', 'build.rs', 'ts/index.ts', 'index.js', 'index.d.ts']) age(source, 1_000)
    for (const built of ['agent-fs-tools.test-platform.node', 'dist/esm/index.js', 'dist/cjs/index.js']) age(built, 2_000)
    return dir
  }

  it('nothing when the builds are newer than their sources (a release addon is kept)', () => {
    expect(staleParts(checkout(), 'test-platform')).toEqual({ native: undefined, js: undefined })
  })

  it('the addon when a Rust source is newer or there is none; the JS when a TS source is newer or dist is missing', () => {
    const dir = checkout()
    utimesSync(join(dir, 'src/lib.rs'), 3_000, 3_000)
    expect(staleParts(dir, 'test-platform')).toEqual({ native: 'the Rust sources changed since the addon was built', js: undefined })
    expect(staleParts(dir, 'other-platform').native).toBe('there is no native addon for other-platform yet')
    utimesSync(join(dir, 'ts/index.ts'), 3_000, 3_000)
    expect(staleParts(dir, 'test-platform').js).toBe('the TypeScript sources changed since dist/ was built')
    const unbuilt = checkout()
    rmSync(join(unbuilt, 'dist/cjs/index.js'))
    expect(staleParts(unbuilt, 'test-platform').js).toBe('dist/ is not built yet')
  })

  it('npm run demo runs the script (no unconditional npm run build)', () => {
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    expect(manifest.scripts['demo']).toBe('node scripts/demo.mjs')
  })
})
