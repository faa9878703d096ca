/**
 * `agent-fs-tools demo` without a terminal (the scripted session CI and `npm run demo | cat` get),
 * `--script FILE`, its options, and the playground's pure pieces (editor keys, cwd stack, examples).
 */
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { Key } from 'ink'
import { describe, expect, it } from 'vitest'
import { nextCwdStack, displayPath } from '../ts/cli/demo/cwd-stack.js'
import { diffLineKind } from '../ts/cli/demo/diff-lines.js'
import { exampleArgs, oneLineJson } from '../ts/cli/demo/examples.js'
import { parseDemoArgs } from '../ts/cli/demo/options.js'
import { SAMPLE_FILES, writeSampleProject } from '../ts/cli/demo/sample-project.js'
import { BUILTIN_SCRIPT, LAST_TRASHED, parseScript, substituteLastTrashed } from '../ts/cli/demo/script.js'
import { editText, type TextState } from '../ts/cli/demo/text-edit.js'
import { siblingDir } from './helpers/files.js'
import { tempWorkspace, tempWorkspaceDirs } from './helpers/temp.js'

const root = resolve(__dirname, '..')
const bin = join(root, 'dist/esm/cli/main.js')

/** Runs the bin with stdin, stdout and stderr as pipes (no terminal). */
function demo(args: string[], env: NodeJS.ProcessEnv = {}) {
  return spawnSync(process.execPath, [bin, 'demo', ...args], {
    encoding: 'utf8',
    input: '',
    env: { ...process.env, ...env },
    timeout: 60_000,
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
    // The tree removed at the end, and the old content of the file the patch updated.
    expect(out).toMatch(/^host API: trashList\(\) → 2 archive\(s\)$/m)
    expect(existsSync(workspace!)).toBe(false)
  }, 60_000)

  it('--keep leaves the temporary directory in place', () => {
    const run = demo(['--keep'])
    expect(run.status).toBe(0)
    const kept = /^kept (\S+)$/m.exec(run.stdout)?.[1]
    expect(kept).toBeDefined()
    expect(readFileSync(join(kept!, 'sample-project', 'README.md'), 'utf8')).toBe(SAMPLE_FILES['README.md'])
    spawnSync('rm', ['-rf', kept!])
  }, 60_000)

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
  }, 60_000)

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
      'a/b',
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
