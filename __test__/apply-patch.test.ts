/** `apply_patch` (../docs/tools.md#apply_patch): both formats, matching, all-or-nothing, trash, prompt, result, audit. */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, statSync, chmodSync, utimesSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { Workspace, type ToolResult } from 'agent-fs-tools'
import { tempWorkspace, tempWorkspaceDirs } from './helpers/temp.js'
import { auditLines, modeAsKept, read, sha256, siblingDir, writeTree } from './helpers/files.js'
import { ALL, archiveNames, newestDeltaSizes, recorder } from './helpers/trash.js'

const granted = { permissions: ALL } as const

/** A workspace over `files`, every permission granted. */
function setup(files: Record<string, string | Buffer> = {}, options = {}) {
  const dirs = tempWorkspace({ ...granted, ...options })
  writeTree(dirs.root, files)
  return dirs
}

const patch = (body: string): string => `*** Begin Patch\n${body}*** End Patch\n`

async function applyPatch(ws: Workspace, input: string, ctx?: Parameters<Workspace['call']>[2]): Promise<ToolResult> {
  return ws.call('apply_patch', { input }, ctx)
}

function expectNothingChanged(result: ToolResult, root: string, before: Record<string, string>): void {
  expect(result.output.endsWith('No files were modified.'), result.output).toBe(true)
  for (const [name, content] of Object.entries(before)) expect(read(join(root, name)), name).toBe(content)
}

describe('apply_patch: Codex format', () => {
  it('adds, updates, deletes and moves in one change; the result is the text models are trained on', async () => {
    const { ws, root, dataDir } = setup({ 'a.txt': 'one\ntwo\nthree\n', 'gone.txt': 'bye\n', 'mv.txt': 'x\ny\n' })
    const result = await applyPatch(
      ws,
      patch(
        '*** Update File: a.txt\n@@\n one\n-two\n+TWO\n three\n' +
          '*** Add File: new/b.txt\n+hello\n+world\n' +
          '*** Delete File: gone.txt\n' +
          '*** Update File: mv.txt\n*** Move to: moved.txt\n@@\n x\n-y\n+Y\n',
      ),
    )
    expect(result.status, result.output).toBe('ok')
    expect(result.output.split('\n').slice(0, 5)).toEqual([
      'Success. Updated the following files:',
      'M a.txt',
      'A new/b.txt',
      'D gone.txt',
      'M moved.txt',
    ])
    expect(read(join(root, 'a.txt'))).toBe('one\nTWO\nthree\n')
    expect(read(join(root, 'new/b.txt'))).toBe('hello\nworld\n')
    expect(existsSync(join(root, 'gone.txt'))).toBe(false)
    expect(existsSync(join(root, 'mv.txt'))).toBe(false)
    expect(read(join(root, 'moved.txt'))).toBe('x\nY\n')
    // One combined diff, as git prints it, in the output and alone in `diff`.
    expect(result.diff).toContain('--- a/a.txt\n+++ b/a.txt\n')
    expect(result.diff).toContain('--- /dev/null\n+++ b/new/b.txt\n')
    expect(result.diff).toContain('--- a/gone.txt\n+++ /dev/null\n')
    expect(result.diff).toContain('--- a/mv.txt\n+++ b/moved.txt\n')
    expect(result.output).toContain(result.diff!)
    const files = result.data!.files as Array<Record<string, string>>
    expect(files.map((f) => [f.action, f.path, f.from])).toEqual([
      ['modified', join(root, 'a.txt'), undefined],
      ['added', join(root, 'new/b.txt'), undefined],
      ['deleted', join(root, 'gone.txt'), undefined],
      ['moved', join(root, 'moved.txt'), join(root, 'mv.txt')],
    ])
    // The deleted file and the moved file's old content are in the trash; the updated file's old
    // content is the delta in its history record that takes it back, as edit_file keeps it.
    expect(archiveNames(dataDir, root)).toHaveLength(2)
    expect(files[0]!.trashedTo).toBeUndefined()
    const deleted = files[2]!.trashedTo!
    expect(result.output).toContain(`\nIn the trash at ${dirname(deleted)} (restore one with restore_file { "trashedPath": `)
    expect(result.output).toContain(`\n  gone.txt: ${basename(deleted)}`)
    const back = await ws.call('restore_file', { trashedPath: deleted })
    expect(back.status).toBe('ok')
    expect(read(join(root, 'gone.txt'))).toBe('bye\n')
  })

  it('accepts what models send: a heredoc wrapper, spaces around markers, no @@ before the first chunk, a bare empty context line', async () => {
    const { ws, root } = setup({ 'f.py': 'def f():\n\n    return 1\n' })
    const input = "apply_patch <<'EOF'\n  *** Begin Patch  \n*** Update File: f.py\n def f():\n\n-    return 1\n+    return 2\n*** End Patch\nEOF\n"
    const result = await applyPatch(ws, input)
    expect(result.status, result.output).toBe('ok')
    expect(read(join(root, 'f.py'))).toBe('def f():\n\n    return 2\n')
  })

  it('an @@ line naming the enclosing function tells repeated code apart', async () => {
    const file = 'class A:\n    def run(self):\n        return 1\n\nclass B:\n    def run(self):\n        return 1\n'
    const { ws, root } = setup({ 'c.py': file })
    const ambiguous = await applyPatch(ws, patch('*** Update File: c.py\n@@\n     def run(self):\n-        return 1\n+        return 2\n'))
    expect(ambiguous.code).toBe('MULTIPLE_MATCHES')
    expect(ambiguous.output).toContain('c.py')
    expect(ambiguous.output).toMatch(/chunk 1/)
    expect(ambiguous.output).toMatch(/2.*6|lines? 2 and 6/)
    expectNothingChanged(ambiguous, root, { 'c.py': file })
    const anchored = await applyPatch(ws, patch('*** Update File: c.py\n@@ class B:\n     def run(self):\n-        return 1\n+        return 2\n'))
    expect(anchored.status, anchored.output).toBe('ok')
    expect(read(join(root, 'c.py'))).toBe(file.replace(/1\n$/, '2\n'))
  })

  it('matching ladder: trailing and leading whitespace and typographic punctuation, each named in the result', async () => {
    const { ws, root } = setup({ 'n.md': 'He said “hi” — twice   \n  indented\nlast\n' })
    const result = await applyPatch(ws, patch('*** Update File: n.md\n@@\n-He said "hi" - twice\n+He said hello\n@@\n-indented\n+  INDENTED\n'))
    expect(result.status, result.output).toBe('ok')
    expect(read(join(root, 'n.md'))).toBe('He said hello\n  INDENTED\nlast\n')
    expect(result.output).toMatch(/n\.md: chunk 1 matched at line 1 /)
    expect(result.output).toMatch(/n\.md: chunk 2 matched at line 2 /)
  })

  it('lines not found: NO_MATCH naming the file and chunk, with the closest lines; nothing changed', async () => {
    const files = { 'a.txt': 'alpha\nbeta\n', 'b.txt': 'const total = computeTotal(items)\nreturn total\n' }
    const { ws, root } = setup(files)
    const result = await applyPatch(
      ws,
      patch('*** Update File: a.txt\n@@\n-alpha\n+ALPHA\n*** Update File: b.txt\n@@\n-const total = computeTotals(items)\n+const total = 0\n'),
    )
    expect(result.code).toBe('NO_MATCH')
    expect(result.output).toContain('b.txt: chunk 1: could not find the lines to replace')
    expect(result.output).toContain('   1 | const total = computeTotal(items)')
    expectNothingChanged(result, root, files)
  })
})

describe('apply_patch: unified diff', () => {
  it('applies git diff output: updates, /dev/null adds and deletes, a rename', async () => {
    const files = { 'src/a.ts': 'export const a = 1\nexport const b = 2\n', 'old.ts': 'x\n', 'tmp.log': 'log\n' }
    const { ws, root } = setup(files)
    const diff = [
      'diff --git a/src/a.ts b/src/a.ts',
      'index 1111111..2222222 100644',
      '--- a/src/a.ts',
      '+++ b/src/a.ts',
      '@@ -1,2 +1,2 @@',
      ' export const a = 1',
      '-export const b = 2',
      '+export const b = 3',
      'diff --git a/new.ts b/new.ts',
      'new file mode 100644',
      '--- /dev/null',
      '+++ b/new.ts',
      '@@ -0,0 +1 @@',
      '+export {}',
      'diff --git a/tmp.log b/tmp.log',
      'deleted file mode 100644',
      '--- a/tmp.log',
      '+++ /dev/null',
      '@@ -1 +0,0 @@',
      '-log',
      'diff --git a/old.ts b/renamed.ts',
      'similarity index 100%',
      'rename from old.ts',
      'rename to renamed.ts',
      '',
    ].join('\n')
    const result = await applyPatch(ws, diff)
    expect(result.status, result.output).toBe('ok')
    expect(read(join(root, 'src/a.ts'))).toBe('export const a = 1\nexport const b = 3\n')
    expect(read(join(root, 'new.ts'))).toBe('export {}\n')
    expect(existsSync(join(root, 'tmp.log'))).toBe(false)
    expect(existsSync(join(root, 'old.ts'))).toBe(false)
    expect(read(join(root, 'renamed.ts'))).toBe('x\n')
    expect(result.output).toMatch(/^M src\/a\.ts$/m)
    expect(result.output).toMatch(/^A new\.ts$/m)
    expect(result.output).toMatch(/^D tmp\.log$/m)
    expect(result.output).toMatch(/^M renamed\.ts$/m)
  })

  it('line numbers are hints: a hunk whose lines moved is still found', async () => {
    const { ws, root } = setup({ 'f.txt': 'new first line\na\nb\nc\n' })
    const result = await applyPatch(ws, '--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n')
    expect(result.status, result.output).toBe('ok')
    expect(read(join(root, 'f.txt'))).toBe('new first line\na\nB\nc\n')
  })

  it('the patch `git diff` prints for a change, applied to the old tree, gives the new tree byte for byte', async () => {
    const { ws, root } = setup()
    execFileSync('git', ['init', '-q'], { cwd: root })
    writeTree(root, { 'crlf.txt': 'a\r\nb\r\nc\r\n', 'no-eol.txt': 'x\ny', 'bom.txt': '\uFEFFhead\nbody\n' })
    execFileSync('git', ['add', '.'], { cwd: root })
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'one'], { cwd: root })
    writeTree(root, { 'crlf.txt': 'a\r\nB\r\nc\r\nd\r\n', 'no-eol.txt': 'x\nY', 'bom.txt': '\uFEFFhead\nBODY\n' })
    const diff = execFileSync('git', ['diff'], { cwd: root, encoding: 'utf8' })
    const wanted = ['crlf.txt', 'no-eol.txt', 'bom.txt'].map((f) => readFileSync(join(root, f)))
    execFileSync('git', ['checkout', '-q', '.'], { cwd: root })
    const result = await applyPatch(ws, diff)
    expect(result.status, result.output).toBe('ok')
    expect(['crlf.txt', 'no-eol.txt', 'bom.txt'].map((f) => readFileSync(join(root, f)))).toEqual(wanted)
  })
})

describe('apply_patch: files', () => {
  it('keeps each file’s line endings, BOM and final-newline state; added lines take the file’s ending', async () => {
    const { ws, root } = setup({ 'w.txt': '\uFEFFa\r\nb\r\nc', 'u.txt': 'one\ntwo' })
    const result = await applyPatch(
      ws,
      patch('*** Update File: w.txt\n@@\n a\n-b\n+B\n+extra\n c\n*** Update File: u.txt\n@@\n-one\n+ONE\n two\n'),
    )
    expect(result.status, result.output).toBe('ok')
    expect(readFileSync(join(root, 'w.txt'), 'utf8')).toBe('\uFEFFa\r\nB\r\nextra\r\nc')
    expect(read(join(root, 'u.txt'))).toBe('ONE\ntwo')
  })

  it('an update keeps its old bytes as a delta of the changed lines, not in the trash; undo gives them back byte for byte', async () => {
    // Changes near both ends of a long CRLF file with a BOM: a delta around the common start and
    // end would hold nearly the whole file; one of the changed lines holds a few lines.
    const long = '\uFEFF' + Array.from({ length: 2000 }, (_, i) => `line ${i}\r\n`).join('')
    const { ws, root, dataDir } = setup({ 'long.txt': long, 'short.txt': 'one\ntwo' })
    const before = { long: readFileSync(join(root, 'long.txt')), short: readFileSync(join(root, 'short.txt')) }
    const result = await applyPatch(
      ws,
      patch(
        '*** Update File: long.txt\n@@\n line 1\n-line 2\n+LINE 2\n line 3\n@@\n line 1997\n-line 1998\n+LINE 1998\n line 1999\n' +
          '*** Update File: short.txt\n@@\n-one\n+ONE\n two\n',
      ),
    )
    expect(result.status, result.output).toBe('ok')
    expect(read(join(root, 'long.txt'))).toBe(long.replace('line 2\r\n', 'LINE 2\r\n').replace('line 1998\r\n', 'LINE 1998\r\n'))
    expect(archiveNames(dataDir, root)).toEqual([])
    expect((result.data!.files as Array<Record<string, string>>).map((f) => f.trashedTo)).toEqual([undefined, undefined])
    const sizes = newestDeltaSizes(dataDir, root)
    expect(sizes).toHaveLength(2)
    expect(Math.max(...sizes), `delta sizes ${sizes}`).toBeLessThan(200)
    const undone = await ws.undo()
    expect(undone.status, undone.output).toBe('ok')
    expect(readFileSync(join(root, 'long.txt')).equals(before.long)).toBe(true)
    expect(readFileSync(join(root, 'short.txt')).equals(before.short)).toBe(true)
  })

  it('keeps the mode of an updated file, and a moved file keeps its own', async () => {
    const { ws, root } = setup({ 'run.sh': '#!/bin/sh\necho 1\n', 'tool.sh': 'echo t\n' })
    chmodSync(join(root, 'run.sh'), 0o751)
    chmodSync(join(root, 'tool.sh'), 0o700)
    const result = await applyPatch(
      ws,
      patch('*** Update File: run.sh\n@@\n-echo 1\n+echo 2\n*** Update File: tool.sh\n*** Move to: bin/tool.sh\n@@\n-echo t\n+echo T\n'),
    )
    expect(result.status, result.output).toBe('ok')
    expect(statSync(join(root, 'run.sh')).mode & 0o777).toBe(modeAsKept(0o751))
    expect(statSync(join(root, 'bin/tool.sh')).mode & 0o777).toBe(modeAsKept(0o700))
  })

  it('add onto an existing file, or a move onto one: it goes to the trash first and the result says so', async () => {
    const { ws, root } = setup({ 'taken.txt': 'was here\n', 'src.txt': 'moving\n', 'dest.txt': 'replaced\n' })
    const result = await applyPatch(ws, patch('*** Add File: taken.txt\n+new\n*** Update File: src.txt\n*** Move to: dest.txt\n'))
    expect(result.status, result.output).toBe('ok')
    expect(read(join(root, 'taken.txt'))).toBe('new\n')
    expect(read(join(root, 'dest.txt'))).toBe('moving\n')
    const files = result.data!.files as Array<Record<string, string>>
    for (const [i, previous, name] of [[0, 'was here\n', 'taken.txt'], [1, 'replaced\n', 'dest.txt']] as const) {
      const archive = files[i]!.trashedTo!
      expect(result.output).toContain(`\n  what was at ${name}: ${basename(archive)}`)
      const back = await ws.call('restore_file', { trashedPath: archive, targetPath: `${name}.back` })
      expect(back.status).toBe('ok')
      expect(read(join(root, `${name}.back`))).toBe(previous)
    }
  })

  it('refusals before anything changes: update or delete of a missing file, a directory, a path named twice, an empty patch', async () => {
    const files = { 'a.txt': 'a\n' }
    const { ws, root } = setup(files)
    mkdirSync(join(root, 'dir'))
    const cases: Array<[string, string]> = [
      [patch('*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: missing.txt\n@@\n-x\n+y\n'), 'NOT_FOUND'],
      [patch('*** Update File: a.txt\n@@\n-a\n+A\n*** Delete File: missing.txt\n'), 'NOT_FOUND'],
      [patch('*** Update File: a.txt\n@@\n-a\n+A\n*** Delete File: dir\n'), 'NOT_A_FILE'],
      [patch('*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: ./a.txt\n@@\n-a\n+B\n'), 'INVALID_ARGUMENTS'],
      [patch(''), 'INVALID_ARGUMENTS'],
      ['just some text\n', 'INVALID_ARGUMENTS'],
    ]
    for (const [input, code] of cases) {
      const result = await applyPatch(ws, input)
      expect(result.code, input).toBe(code)
      expectNothingChanged(result, root, files)
    }
  })

  it('binary, non-UTF-8 and oversized files fail as in edit_file; a patch over patchMaxBytes is TOO_LARGE', async () => {
    const { ws, root } = setup({ 'b.bin': Buffer.from([0x61, 0x00, 0x0a]), 'l.txt': Buffer.from('caf\xe9\n', 'latin1'), 'big.txt': 'x\n'.repeat(50) }, { limits: { editMaxFileBytes: 64, patchMaxBytes: 200 } })
    expect((await applyPatch(ws, patch('*** Update File: b.bin\n@@\n-a\n+b\n'))).code).toBe('BINARY_FILE')
    expect((await applyPatch(ws, patch('*** Update File: l.txt\n@@\n-x\n+y\n'))).code).toBe('ENCODING')
    expect((await applyPatch(ws, patch('*** Update File: big.txt\n@@\n-x\n+y\n'))).code).toBe('TOO_LARGE')
    const huge = await applyPatch(ws, patch(`*** Add File: h.txt\n${'+line\n'.repeat(100)}`))
    expect(huge.code).toBe('TOO_LARGE')
    expect(huge.output).toContain('patchMaxBytes')
    expect(existsSync(join(root, 'h.txt'))).toBe(false)
  })

  it('a path outside the allowed trees is PATH_NOT_ALLOWED; nothing changes', async () => {
    const { root, dataDir } = tempWorkspaceDirs()
    writeTree(root, { 'a.txt': 'a\n' })
    const ws = new Workspace({ root, allowedPaths: [root], permissions: ALL, trash: { dataDir } })
    const outside = siblingDir(root)
    const result = await applyPatch(ws, patch(`*** Update File: a.txt\n@@\n-a\n+A\n*** Add File: ${join(outside, 'x.txt')}\n+x\n`))
    expect(result.code).toBe('PATH_NOT_ALLOWED')
    expectNothingChanged(result, root, { 'a.txt': 'a\n' })
    expect(existsSync(join(outside, 'x.txt'))).toBe(false)
  })

  it('a patch already applied: ok, nothing changed; a retry never applies twice', async () => {
    const { ws, root } = setup({ 'a.txt': 'x\ny\n', 'gone.txt': 'g\n' })
    const input = patch('*** Update File: a.txt\n@@\n x\n-y\n+Y\n*** Add File: n.txt\n+n\n*** Delete File: gone.txt\n')
    expect((await applyPatch(ws, input)).status).toBe('ok')
    const again = await applyPatch(ws, input)
    expect(again).toMatchObject({ status: 'ok', output: 'Patch already applied; nothing changed.' })
    expect(read(join(root, 'a.txt'))).toBe('x\nY\n')
    expect(read(join(root, 'n.txt'))).toBe('n\n')
  })
})

describe('apply_patch: permission and prompt', () => {
  const input = patch('*** Update File: a.txt\n@@\n-a\n+A\n*** Add File: b.txt\n+b\n*** Delete File: c.txt\n*** Update File: d.txt\n*** Move to: e.txt\n')
  const files = { 'a.txt': 'a\n', 'c.txt': 'c\n', 'd.txt': 'd\n' }

  it('all granted: no prompt', async () => {
    const { ws } = setup(files)
    const { confirm, requests } = recorder()
    expect((await applyPatch(ws, input, { confirm })).status).toBe('ok')
    expect(requests).toEqual([])
  })

  it('otherwise one prompt for the whole patch: label, first file, a line per file, the combined diff', async () => {
    const { ws, root } = setup(files, { permissions: { cwdWriteFile: true } })
    const { confirm, requests } = recorder()
    const result = await applyPatch(ws, input, { confirm })
    expect(result.status).toBe('ok')
    expect(requests).toHaveLength(1)
    expect(requests[0]).toMatchObject({ tool: 'apply_patch', label: 'Apply patch?', path: join(root, 'a.txt') })
    const [update, add, remove, move, totals] = requests[0]!.detail.split('\n')
    expect([update, add, remove, move].map((line) => line!.replace(/ \(\+\d+ -\d+\)$/, ''))).toEqual([
      `update ${join(root, 'a.txt')}`,
      `add ${join(root, 'b.txt')}`,
      `delete ${join(root, 'c.txt')}`,
      `move ${join(root, 'd.txt')} → ${join(root, 'e.txt')}`,
    ])
    expect(totals).toMatch(/^1 file added, 1 file updated, 1 file moved, 1 file deleted: \+\d+ -\d+ lines$/)
    expect(requests[0]!.diff).toBe(result.diff)
  })

  it('denied: "The user denied this patch.", nothing changed', async () => {
    const { ws, root } = setup(files, { permissions: {} })
    const result = await applyPatch(ws, input, { confirm: () => false })
    expect(result.status).toBe('denied')
    expect(result.output.startsWith('The user denied this patch.')).toBe(true)
    expectNothingChanged(result, root, files)
    expect(existsSync(join(root, 'b.txt'))).toBe(false)
  })

  it('a file changed while the prompt was open: CONFLICT naming it, and no file of the patch changes', async () => {
    const { ws, root, dataDir } = setup(files, { permissions: {} })
    const result = await applyPatch(ws, input, {
      confirm: () => {
        writeFileSync(join(root, 'd.txt'), 'edited meanwhile\n')
        return true
      },
    })
    expect(result.code).toBe('CONFLICT')
    expect(result.output).toContain(join(root, 'd.txt'))
    expectNothingChanged(result, root, { 'a.txt': 'a\n', 'c.txt': 'c\n', 'd.txt': 'edited meanwhile\n' })
    expect(existsSync(join(root, 'b.txt'))).toBe(false)
    expect(existsSync(join(root, 'e.txt'))).toBe(false)
    expect(archiveNames(dataDir, root), 'copies made for it are gone').toEqual([])
  })
})

describe('apply_patch: a file rewritten in place while the prompt is open', () => {
  it('the same inode and size (its modification time put back as near as utimes can): still CONFLICT, and the rewrite stays', async () => {
    const { ws, root } = setup({ 'u.txt': 'one\ntwo\n', 'v.txt': 'v\n' }, { permissions: {} })
    const before = statSync(join(root, 'u.txt'))
    const result = await applyPatch(ws, patch('*** Update File: u.txt\n@@\n one\n-two\n+TWO\n*** Update File: v.txt\n@@\n-v\n+V\n'), {
      confirm: () => {
        writeFileSync(join(root, 'u.txt'), 'ONE\ntwo\n')
        utimesSync(join(root, 'u.txt'), before.atime, before.mtime)
        return true
      },
    })
    const now = statSync(join(root, 'u.txt'))
    expect([now.ino, now.size]).toEqual([before.ino, before.size])
    expect(result.code, result.output).toBe('CONFLICT')
    expect(read(join(root, 'u.txt'))).toBe('ONE\ntwo\n')
    expect(read(join(root, 'v.txt'))).toBe('v\n')
  })
})

describe('apply_patch: formatCall and audit', () => {
  it('formatCall: the path for one file, two joined, then (+N more)', () => {
    const { ws } = setup()
    expect(ws.formatCall('apply_patch', { input: patch('*** Add File: a.ts\n+x\n') })).toBe('a.ts')
    expect(ws.formatCall('apply_patch', { input: patch('*** Add File: a.ts\n+x\n*** Delete File: b.ts\n') })).toBe('a.ts, b.ts')
    expect(ws.formatCall('apply_patch', { input: patch('*** Add File: a.ts\n+x\n*** Delete File: b.ts\n*** Delete File: c.ts\n*** Delete File: d.ts\n') })).toBe('a.ts, b.ts (+2 more)')
  })

  it('the change is in the history with formatCall as its summary', async () => {
    const { ws, root } = setup({ 'b.ts': 'b\n', 'c.ts': 'c\n' })
    const input = patch('*** Add File: a.ts\n+x\n*** Delete File: b.ts\n*** Update File: c.ts\n@@\n-c\n+C\n')
    const result = await applyPatch(ws, input)
    expect(result.status, result.output).toBe('ok')
    expect(read(join(root, 'c.ts'))).toBe('C\n')
    const [change] = await ws.history()
    expect(change?.tool).toBe('apply_patch')
    expect(change?.summary).toBe('a.ts, b.ts (+1 more)')
    expect(change?.summary).toBe(ws.formatCall('apply_patch', { input }))
  })

  it('one audit record lists every file with its digests before and after', async () => {
    const { ws, root, dataDir } = setup({ 'a.txt': 'a\n', 'c.txt': 'c\n' })
    await applyPatch(ws, patch('*** Update File: a.txt\n@@\n-a\n+A\n*** Add File: b.txt\n+b\n*** Delete File: c.txt\n'))
    const lines = auditLines(dataDir, root)
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({ tool: 'apply_patch', status: 'ok' })
    expect(lines[0]!.files).toEqual([
      expect.objectContaining({ path: join(root, 'a.txt'), action: 'modified', sha256Before: sha256('a\n'), sha256After: sha256('A\n') }),
      expect.objectContaining({ path: join(root, 'b.txt'), action: 'added', sha256After: sha256('b\n') }),
      expect.objectContaining({ path: join(root, 'c.txt'), action: 'deleted', sha256Before: sha256('c\n') }),
    ])
  })
})
