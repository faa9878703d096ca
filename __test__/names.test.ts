/**
 * Names with control characters, bidi controls or bytes that are not UTF-8 (issue 15 item 9):
 * every output shows them escaped, one line per entry, and the shown form reaches the entry
 * again as an argument. Paths stay literal first: a name that exists as written means itself.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { ConfirmRequest } from 'agent-fs-tools'
import { tempWorkspace } from './helpers/temp.js'
import { ALL } from './helpers/trash.js'
import { symlinkOrSkip } from './helpers/links.js'
import { NAMES_WINDOWS_REFUSES, skipOnWindows } from './helpers/skip.js'

/** What must never reach a host's terminal in a name: C0, DEL, C1, bidi controls, U+2028/9. */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/

const b = (text: string) => Buffer.from(text, 'utf8')

/** Each name as bytes, and how the tools show it. */
const NAMES: Array<{ name: Buffer; shown: string }> = [
  { name: b('nl\nname.txt'), shown: 'nl\\nname.txt' },
  { name: b('cr\rname.txt'), shown: 'cr\\rname.txt' },
  { name: b('esc\x1b]0;title\x07\x1b[2J.txt'), shown: 'esc\\x1b]0;title\\x07\\x1b[2J.txt' },
  { name: b('tab\tname.txt'), shown: 'tab\\tname.txt' },
  { name: b('del\x7fname.txt'), shown: 'del\\x7fname.txt' },
  { name: b('c1\u0085\u009bname.txt'), shown: 'c1\\u0085\\u009bname.txt' },
  { name: b('bidi\u202etxt.exe'), shown: 'bidi\\u202etxt.exe' },
  { name: b('iso\u2066x\u2069.txt'), shown: 'iso\\u2066x\\u2069.txt' },
  { name: b('sep\u2028x\u2029.txt'), shown: 'sep\\u2028x\\u2029.txt' },
  { name: Buffer.concat([b('bad'), Buffer.from([0xff, 0xfe]), b('.txt')]), shown: 'bad\\xff\\xfe.txt' },
  { name: b('back\\slash.txt'), shown: 'back\\slash.txt' },
  { name: b('both\\x\n.txt'), shown: 'both\\\\x\\n.txt' },
]

/** The name with a terminal escape sequence in it. */
const ESC = NAMES[2]!

const content = (i: number) => `needle ${i}\n`

/** `dir/name` as a Buffer path (names that are not UTF-8 cannot be JS strings). */
const at = (dir: string, name: Buffer) => Buffer.concat([b(dir + '/'), name])

/** Writes every name into `dir` (created), each with its own content. */
function plant(dir: string) {
  mkdirSync(dir, { recursive: true })
  NAMES.forEach(({ name }, i) => writeFileSync(at(dir, name), content(i)))
}

/** The names in `dir`, as bytes. */
const entries = (dir: string) => readdirSync(dir, { encoding: 'buffer' }).map((n) => n.toString('hex')).sort()

/** Every line of `text` is free of unsafe characters (`\n` separates the lines). */
function expectClean(text: string) {
  for (const line of text.split('\n')) expect(line).not.toMatch(UNSAFE)
}

describe('names are shown escaped, one line per entry', () => {
  it('list_directory, flat and recursive', async () => {
    skipOnWindows(NAMES_WINDOWS_REFUSES)
    const { ws, root } = tempWorkspace()
    plant(root)
    const flat = await ws.call('list_directory', { path: '.' })
    expect(flat.status).toBe('ok')
    expectClean(flat.output)
    const lines = flat.output.split('\n')
    expect(lines).toHaveLength(NAMES.length)
    for (const { shown } of NAMES) expect(lines.filter((l) => l.startsWith(`${shown} (`))).toHaveLength(1)

    const sub = join(root, 'd\nsub')
    plant(sub)
    const deep = await ws.call('list_directory', { path: 'd\\nsub' })
    expect(deep.status).toBe('ok')
    expect(deep.output.split('\n')).toHaveLength(NAMES.length)
    const recursive = await ws.call('list_directory', { path: '.', recursive: true })
    expect(recursive.status).toBe('ok')
    expectClean(recursive.output)
    const all = recursive.output.split('\n')
    expect(all).toHaveLength(2 * NAMES.length + 1)
    expect(all).toContain('d\\nsub/')
    for (const { shown } of NAMES) expect(all.filter((l) => l.startsWith(`d\\nsub/${shown} (`))).toHaveLength(1)
  })

  it('a symlink target is shown escaped', async () => {
    const { ws, root } = tempWorkspace()
    symlinkOrSkip('\x1b]0;pwned\x07', join(root, 'link'))
    const listed = await ws.call('list_directory', {})
    expect(listed.output).toBe('link -> \\x1b]0;pwned\\x07')
  })

  it('glob', async () => {
    skipOnWindows(NAMES_WINDOWS_REFUSES)
    const { ws, root } = tempWorkspace()
    plant(join(root, 'd\x1b[2J'))
    const found = await ws.call('glob', { pattern: '**/*' })
    expect(found.status).toBe('ok')
    expectClean(found.output)
    const lines = found.output.split('\n')
    expect(lines).toHaveLength(NAMES.length)
    for (const { shown } of NAMES) expect(lines).toContain(`d\\x1b[2J/${shown}`)
  })

  it('grep: path:line: text', async () => {
    skipOnWindows(NAMES_WINDOWS_REFUSES)
    const { ws, root } = tempWorkspace()
    plant(root)
    const found = await ws.call('grep', { pattern: 'needle' })
    expect(found.status).toBe('ok')
    expectClean(found.output)
    const lines = found.output.split('\n')
    expect(lines).toHaveLength(NAMES.length)
    NAMES.forEach(({ shown }, i) => expect(lines).toContain(`${shown}:1: needle ${i}`))
    // One file by its shown name: labelled with it too.
    const one = await ws.call('grep', { pattern: 'needle', path: ESC.shown })
    expect(one.output).toBe(`${ESC.shown}:1: needle 2`)
  })

  it('delete_file output and data, trash_list, and restore_file with the shown archive path', async () => {
    skipOnWindows(NAMES_WINDOWS_REFUSES)
    const { ws, root } = tempWorkspace({ permissions: ALL })
    plant(root)
    const before = entries(root)
    for (const { shown } of NAMES) {
      const result = await ws.call('delete_file', { path: shown })
      expect(result.status, result.output).toBe('ok')
      expect(result.output.startsWith(`Removed ${root}/${shown}\n`)).toBe(true)
      expectClean(result.output)
      expect(result.data?.path).toBe(`${root}/${shown}`)
      expect(result.data?.trashedTo).not.toMatch(UNSAFE)
      expect(JSON.stringify(result.data)).not.toMatch(UNSAFE)
    }
    expect(entries(root)).toEqual([])

    const listed = await ws.call('trash_list', {})
    expectClean(listed.output)
    expect(listed.output.split('\n')).toHaveLength(1 + 2 * NAMES.length)
    const trashed = listed.data?.entries as Array<{ archivePath: string; originalPath: string }>
    expect(trashed.map((e) => e.originalPath).sort()).toEqual(NAMES.map(({ shown }) => `${root}/${shown}`).sort())
    for (const entry of trashed) expect(listed.output).toContain(`\n${entry.archivePath}\n    was ${entry.originalPath} (`)
    expect(JSON.stringify(await ws.trashList())).not.toMatch(UNSAFE)

    for (const { archivePath } of trashed) {
      const restored = await ws.call('restore_file', { trashedPath: archivePath })
      expect(restored.status, restored.output).toBe('ok')
      expectClean(restored.output)
    }
    expect(entries(root)).toEqual(before)
    NAMES.forEach(({ name }, i) => expect(readFileSync(at(root, name), 'utf8')).toBe(content(i)))
  })

  it('errors name the path escaped, also when the model sent the control characters', async () => {
    skipOnWindows(NAMES_WINDOWS_REFUSES)
    const { ws, root } = tempWorkspace()
    const missing = await ws.call('read_file', { path: 'gone\x1b]0;x\x07' })
    expect(missing.code).toBe('NOT_FOUND')
    expect(missing.output).toBe(`file not found: ${root}/gone\\x1b]0;x\\x07`)
    const outside = await ws.call('read_file', { path: '/\x1b[2J/x' })
    expect(outside.status).toBe('error')
    expect(outside.output).not.toMatch(UNSAFE)
    expect(ws.formatCall('read_file', { path: 'a\x1b[2J\nb' })).toBe('a\\x1b[2J\\nb')
  })

  // Elsewhere these are names like any other (the tests above make them).
  it.runIf(process.platform === 'win32')('on Windows, a name with a character it does not allow is refused before anything is opened, named escaped', async () => {
    const { ws, root } = tempWorkspace({ permissions: ALL })
    for (const path of ['gone\x1b]0;x\x07', 'a.txt:stream', 'what?.txt', 'd/a|b.txt', 'q"uote']) {
      const result = await ws.call('write_file', { path, content: 'x' })
      expect(result.code, path).toBe('INVALID_ARGUMENTS')
      expect(result.output, path).toContain('holds a character Windows does not allow in a name')
      expect(result.output, path).not.toMatch(UNSAFE)
    }
    expect(readdirSync(root)).toEqual([])
  })

  it("the host's prompt names the path escaped", async () => {
    skipOnWindows(NAMES_WINDOWS_REFUSES)
    const asked: ConfirmRequest[] = []
    const { ws, root } = tempWorkspace({ confirm: (request) => (asked.push(request), true) })
    plant(root)
    expect((await ws.call('read_file', { path: ESC.shown })).status).toBe('ok')
    const written = await ws.call('write_file', { path: ESC.shown, content: 'x\n' })
    expect(written.status, written.output).toBe('ok')
    expect(asked).toHaveLength(1)
    expect(asked[0]!.path).toBe(`${root}/${ESC.shown}`)
    expect(asked[0]!.detail).toBe(`${root}/${ESC.shown}`)
    expect(asked[0]!.diff?.split('\n').slice(0, 2)).toEqual([`--- ${ESC.shown}`, `+++ ${ESC.shown}`])
  })
})

describe('the shown form reaches the entry it shows', () => {
  it('read_file, write_file, move_file and delete_file by the shown name', async () => {
    skipOnWindows(NAMES_WINDOWS_REFUSES)
    const { ws, root } = tempWorkspace({ permissions: ALL })
    plant(root)
    for (const [i, { name, shown }] of NAMES.entries()) {
      const read = await ws.call('read_file', { path: shown })
      expect(read.status, read.output).toBe('ok')
      expect(read.output).toContain(`needle ${i}`)
      expect(read.data?.path).toBe(`${root}/${shown}`)

      const written = await ws.call('write_file', { path: shown, content: `new ${i}\n` })
      expect(written.status, written.output).toBe('ok')
      expect(readFileSync(at(root, name), 'utf8')).toBe(`new ${i}\n`)
      expectClean(written.output)
    }
    expect(readdirSync(root)).toHaveLength(NAMES.length)

    mkdirSync(join(root, 'to'))
    for (const [i, { name, shown }] of NAMES.entries()) {
      const moved = await ws.call('move_file', { source: shown, destination: `to/${i}` })
      expect(moved.status, moved.output).toBe('ok')
      expectClean(moved.output)
      expect(existsSync(at(root, name))).toBe(false)
      expect(readFileSync(join(root, 'to', String(i)), 'utf8')).toBe(`new ${i}\n`)
      const back = await ws.call('move_file', { source: `to/${i}`, destination: shown })
      expect(back.status, back.output).toBe('ok')
      // The destination does not exist: it is created under the name as written.
      expect(existsSync(join(root, shown))).toBe(true)
      expect(existsSync(at(root, name))).toBe(name.equals(b(shown)))
    }
  })

  it('a directory by its shown name: a new file goes inside it, under its literal name', async () => {
    skipOnWindows(NAMES_WINDOWS_REFUSES)
    const { ws, root } = tempWorkspace({ permissions: ALL })
    mkdirSync(join(root, 'd\nsub'))
    const written = await ws.call('write_file', { path: 'd\\nsub/new\\n.txt', content: 'x' })
    expect(written.status, written.output).toBe('ok')
    expect(readFileSync(join(root, 'd\nsub', 'new\\n.txt'), 'utf8')).toBe('x')
    expect(written.output).toContain(`${root}/d\\nsub/new\\\\n.txt`)
    expect(readdirSync(root)).toEqual(['d\nsub'])
    const created = await ws.call('create_directory', { path: 'd\\nsub/inner' })
    expect(created.status).toBe('ok')
    expect(existsSync(join(root, 'd\nsub', 'inner'))).toBe(true)
  })

  it('a name that exists literally means itself', async () => {
    skipOnWindows(NAMES_WINDOWS_REFUSES)
    const { ws, root } = tempWorkspace({ permissions: ALL })
    writeFileSync(join(root, 'a\\x41'), 'literal\n')
    writeFileSync(join(root, 'aA'), 'decoded\n')
    writeFileSync(join(root, 'x\\ny'), 'backslash n\n')
    writeFileSync(join(root, 'x\ny'), 'newline\n')
    const listed = (await ws.call('list_directory', {})).output.split('\n')
    // `a\x41` is no escape the tools write: shown as it is. `x\ny` is how `x⏎y` is shown, so the
    // literal one is shown with its backslash doubled: two names never look alike.
    expect(listed.map((l) => l.split(' (')[0])).toEqual(['aA', 'a\\x41', 'x\\ny', 'x\\\\ny'])
    expect((await ws.call('read_file', { path: 'a\\x41' })).output).toContain('literal')
    expect((await ws.call('read_file', { path: 'x\\ny' })).output).toContain('backslash n')
    expect((await ws.call('read_file', { path: 'x\\\\ny' })).output).toContain('backslash n')
    const deleted = await ws.call('delete_file', { path: 'x\\ny' })
    expect(deleted.output.startsWith(`Removed ${root}/x\\\\ny`)).toBe(true)
    expect(readFileSync(join(root, 'x\ny'), 'utf8')).toBe('newline\n')
    // Now only `x⏎y` is there: its shown form reaches it.
    expect((await ws.call('read_file', { path: 'x\\ny' })).output).toContain('newline')
  })

  it('a name that is not UTF-8 is written, moved and restored exactly', async () => {
    skipOnWindows(NAMES_WINDOWS_REFUSES)
    const { ws, root } = tempWorkspace({ permissions: ALL })
    const name = Buffer.from([0x6e, 0xe9, 0xff, 0x2e, 0x74])
    writeFileSync(at(root, name), 'old\n')
    const shown = 'n\\xe9\\xff.t'
    const edited = await ws.call('edit_file', { path: shown, edits: [{ oldString: 'old', newString: 'new' }] })
    expect(edited.status, edited.output).toBe('ok')
    expect(edited.output).toContain(`\n--- ${shown}\n+++ ${shown}\n`)
    expect(readFileSync(at(root, name), 'utf8')).toBe('new\n')
    const deleted = await ws.call('delete_file', { path: shown })
    const restored = await ws.call('restore_file', { trashedPath: (deleted.data?.trashedTo as string).split('/').pop()! })
    expect(restored.status, restored.output).toBe('ok')
    expect(restored.data?.path).toBe(`${root}/${shown}`)
    expect(readFileSync(at(root, name), 'utf8')).toBe('new\n')
    expect(readdirSync(root, { encoding: 'buffer' })).toEqual([name])
  })
})

describe('a name every system can hold, shown escaped (Windows too)', () => {
  // A bidi override and a line separator are allowed in NTFS names; control characters are not,
  // so this is the part of the contract Windows runs. There a path with an escaped name is shown
  // with `/` between its components (`\` is a separator there, and the escape character here).
  const name = 'bidi\u202etxt\u2028.exe'
  const shownName = 'bidi\\u202etxt\\u2028.exe'
  const shownPath = (root: string) => `${process.platform === 'win32' ? root.replaceAll('\\', '/') : root}/tmp/${shownName}`

  it('its absolute shown path, given back, reaches it; restore_file puts it back under its name', async () => {
    const { ws, root } = tempWorkspace({ permissions: ALL })
    mkdirSync(join(root, 'tmp'))
    writeFileSync(join(root, 'tmp', name), 'hello\n')
    const read = await ws.call('read_file', { path: `tmp/${shownName}` })
    expect(read.status, read.output).toBe('ok')
    expect(read.data?.path).toBe(shownPath(root))
    expectClean(read.output)
    const again = await ws.call('read_file', { path: shownPath(root) })
    expect(again.status, again.output).toBe('ok')
    expect(again.output).toContain('hello')
    // The bare name a listing shows reaches it from the directory it is in.
    const listed = await ws.call('list_directory', { path: 'tmp' })
    expect(listed.output.split('\n')[0]).toMatch(new RegExp(`^${shownName.replaceAll('\\', '\\\\')} \\(`))
    expect((await ws.call('cwd_push', { path: 'tmp' })).status).toBe('ok')
    expect((await ws.call('read_file', { path: shownName })).output).toContain('hello')
    expect((await ws.call('cwd_pop', {})).status).toBe('ok')
    const deleted = await ws.call('delete_file', { path: shownPath(root) })
    expect(deleted.status, deleted.output).toBe('ok')
    expect(existsSync(join(root, 'tmp', name))).toBe(false)
    const trashedTo = deleted.data?.trashedTo as string
    // Escaped, the archive's path has `/` between its components on every system.
    expect(trashedTo.endsWith(`-${shownName}.tar.gz`), trashedTo).toBe(true)
    const restored = await ws.call('restore_file', { trashedPath: trashedTo.split('/').pop()! })
    expect(restored.status, restored.output).toBe('ok')
    expect(restored.data?.path).toBe(shownPath(root))
    expect(readFileSync(join(root, 'tmp', name), 'utf8')).toBe('hello\n')
    expect(readdirSync(join(root, 'tmp'))).toEqual([name])
  })
})
