/**
 * `edit_file` against the filesystem and the host (../docs/hosts.md#the-workspace-api, ../docs/permissions-and-prompts.md, ../docs/tools.md#edit_file): byte fidelity
 * (CRLF, mixed endings, BOM, no final newline), refusals (encoding, binary, size, missing, directory),
 * the one confirmation with its combined diff, CONFLICT after a pending confirmation, denial,
 * permissions, mode bits, symlinks, parallel calls and a large realistic batch.
 */
import { chmodSync, lstatSync, mkdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import type { ConfirmRequest, ToolResult } from 'agent-fs-tools'
import { tempWorkspace } from './helpers/temp.js'
import { symlinkOrSkip } from './helpers/links.js'
import { modeAsKept } from './helpers/files.js'

type EditArg = { oldString: string; newString: string; replaceAll?: boolean }

/** A workspace allowed to write inside its root, with one file `name` holding `content`. */
function setup(content: string | Buffer, name = 'file.txt', limits: Record<string, number> = {}) {
  const t = tempWorkspace({ permissions: { cwdWriteFile: true }, limits })
  const file = join(t.root, name)
  writeFileSync(file, content)
  const edit = (edits: EditArg[], path = name): Promise<ToolResult> => t.ws.call('edit_file', { path, edits })
  return { ...t, file, edit, bytes: () => readFileSync(file) }
}

/** Lines of a unified diff that are file headers. */
function headers(diff: string) {
  const lines = diff.split('\n')
  return { minus: lines.filter((l) => l.startsWith('--- ')), plus: lines.filter((l) => l.startsWith('+++ ')) }
}

describe('edit_file: line endings, BOM, final newline', () => {
  it('a CRLF file accepts an LF-written oldString/newString and keeps CRLF', async () => {
    const { edit, bytes } = setup('first\r\nsecond\r\nthird\r\nfourth\r\n')
    const result = await edit([{ oldString: 'second\nthird', newString: 'two\nthree\nthree-and-a-half' }])
    expect(result.status).toBe('ok')
    expect(bytes().toString('latin1')).toBe('first\r\ntwo\r\nthree\r\nthree-and-a-half\r\nfourth\r\n')
  })

  it('a CRLF file accepts a CRLF-written oldString as is', async () => {
    const { edit, bytes } = setup('a\r\nb\r\nc\r\n')
    const result = await edit([{ oldString: 'a\r\nb', newString: 'x\r\ny' }])
    expect(result.status).toBe('ok')
    expect(bytes().toString('latin1')).toBe('x\r\ny\r\nc\r\n')
  })

  it('mixed line endings are untouched outside the edit', async () => {
    const original = 'one\r\ntwo\nthree\r\nfour\nfive\r\n'
    const { edit, bytes } = setup(original)
    const result = await edit([{ oldString: 'three', newString: 'THREE' }])
    expect(result.status).toBe('ok')
    expect(bytes().toString('latin1')).toBe('one\r\ntwo\nTHREE\r\nfour\nfive\r\n')
  })

  it('mixed endings: a multi-line LF edit that matches as written stays as written', async () => {
    const { edit, bytes } = setup('one\r\ntwo\nthree\r\nfour\n')
    const result = await edit([{ oldString: 'two\nthree', newString: '2\n3' }])
    expect(result.status).toBe('ok')
    expect(bytes().toString('latin1')).toBe('one\r\n2\n3\r\nfour\n')
  })

  it('keeps a UTF-8 BOM', async () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf])
    const { edit, bytes } = setup(Buffer.concat([bom, Buffer.from('hello\nworld\n')]))
    const result = await edit([
      { oldString: 'hello', newString: 'hi' },
      { oldString: 'world', newString: 'there' },
    ])
    expect(result.status).toBe('ok')
    expect(bytes().equals(Buffer.concat([bom, Buffer.from('hi\nthere\n')]))).toBe(true)
  })

  it('keeps a missing final newline', async () => {
    const { edit, bytes } = setup('a\nb\nlast')
    const result = await edit([{ oldString: 'last', newString: 'final' }])
    expect(result.status).toBe('ok')
    expect(bytes().toString()).toBe('a\nb\nfinal')
  })

  it('keeps a missing final newline in a CRLF file with a BOM', async () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf])
    const { edit, bytes } = setup(Buffer.concat([bom, Buffer.from('x\r\ny\r\nz')]))
    const result = await edit([{ oldString: 'y\nz', newString: 'Y\nZ' }])
    expect(result.status).toBe('ok')
    expect(bytes().equals(Buffer.concat([bom, Buffer.from('x\r\nY\r\nZ')]))).toBe(true)
  })
})

describe('edit_file: refusals leave the file unchanged', () => {
  it('invalid UTF-8 → ENCODING', async () => {
    const original = Buffer.concat([Buffer.from('caf'), Buffer.from([0xe9]), Buffer.from(' au lait\nold\n')])
    const { edit, bytes, file } = setup(original)
    const result = await edit([{ oldString: 'old', newString: 'new' }])
    expect(result).toMatchObject({ status: 'error', code: 'ENCODING' })
    expect(result.output).toContain(file)
    expect(bytes().equals(original)).toBe(true)
  })

  it('a NUL byte → BINARY_FILE', async () => {
    const original = Buffer.concat([Buffer.from('header old\n'), Buffer.from([0, 1, 2, 3]), Buffer.from('\nold tail\n')])
    const { edit, bytes, file } = setup(original)
    const result = await edit([{ oldString: 'header old', newString: 'header new' }])
    expect(result).toMatchObject({ status: 'error', code: 'BINARY_FILE' })
    expect(result.output).toContain(file)
    expect(bytes().equals(original)).toBe(true)
  })

  it('over editMaxFileBytes → TOO_LARGE; at the limit is fine', async () => {
    const over = setup('x'.repeat(100) + 'END', 'big.txt', { editMaxFileBytes: 100 })
    const before = over.bytes()
    const result = await over.edit([{ oldString: 'END', newString: 'FIN' }])
    expect(result).toMatchObject({ status: 'error', code: 'TOO_LARGE' })
    expect(result.output).toContain(over.file)
    expect(over.bytes().equals(before)).toBe(true)

    const at = setup('x'.repeat(97) + 'END', 'fits.txt', { editMaxFileBytes: 100 })
    const ok = await at.edit([{ oldString: 'END', newString: 'FIN' }])
    expect(ok.status).toBe('ok')
    expect(at.bytes().toString()).toBe('x'.repeat(97) + 'FIN')
  })

  it('a missing file → NOT_FOUND, naming the absolute path, creating nothing', async () => {
    const { ws, root } = tempWorkspace({ permissions: { cwdWriteFile: true } })
    const result = await ws.call('edit_file', { path: 'nope.txt', edits: [{ oldString: 'a', newString: 'b' }] })
    expect(result).toMatchObject({ status: 'error', code: 'NOT_FOUND' })
    expect(result.output).toContain(join(root, 'nope.txt'))
    expect(() => statSync(join(root, 'nope.txt'))).toThrow()
  })

  it('a directory → NOT_A_FILE', async () => {
    const { ws, root } = tempWorkspace({ permissions: { cwdWriteFile: true } })
    mkdirSync(join(root, 'dir'))
    const result = await ws.call('edit_file', { path: 'dir', edits: [{ oldString: 'a', newString: 'b' }] })
    expect(result).toMatchObject({ status: 'error', code: 'NOT_A_FILE' })
    expect(result.output).toContain(join(root, 'dir'))
    expect(statSync(join(root, 'dir')).isDirectory()).toBe(true)
  })
})

describe('edit_file: confirmation', () => {
  it('asks exactly once per call with label, absolute path, detail and the combined diff', async () => {
    const requests: ConfirmRequest[] = []
    const { ws, root } = tempWorkspace({ confirm: (req) => (requests.push(req), true) })
    const file = join(root, 'src', 'a.ts')
    mkdirSync(join(root, 'src'))
    writeFileSync(file, 'const a = 1\nconst b = 2\n'.repeat(1) + 'x\n'.repeat(20) + 'const c = 3\n')
    const result = await ws.call('edit_file', {
      path: 'src/a.ts',
      edits: [
        { oldString: 'const a = 1', newString: 'const a = 10' },
        { oldString: 'const c = 3', newString: 'const c = 30' },
        { oldString: 'const b = 2', newString: 'const b = 20' },
      ],
    })
    expect(result.status).toBe('ok')
    expect(requests).toHaveLength(1)
    const req = requests[0]!
    expect(req.tool).toBe('edit_file')
    expect(req.label).toBe('Edit file?')
    expect(req.path).toBe(file)
    expect(req.detail).toBe(file)
    expect(req.recursive ?? false).toBe(false)
    expect(req.permanent ?? false).toBe(false)

    // One unified diff (one header pair) over all three edits, two hunks apart.
    const diff = req.diff!
    expect(typeof diff).toBe('string')
    const h = headers(diff)
    expect(h.minus).toHaveLength(1)
    expect(h.plus).toHaveLength(1)
    expect(diff.split('\n').filter((l) => l.startsWith('@@'))).toHaveLength(2)
    for (const line of ['-const a = 1', '+const a = 10', '-const b = 2', '+const b = 20', '-const c = 3', '+const c = 30']) {
      expect(diff.split('\n')).toContain(line)
    }
    expect(result.diff).toBe(diff)
    expect(result.output).toContain(diff)
    expect(readFileSync(file, 'utf8')).toBe('const a = 10\nconst b = 20\n' + 'x\n'.repeat(20) + 'const c = 30\n')
  })

  it('a long diff (passed beside the result JSON) is the diff the prompt showed, byte for byte, and the keys keep their order', async () => {
    const requests: ConfirmRequest[] = []
    const { ws, root } = tempWorkspace({ confirm: (req) => (requests.push(req), true) })
    // Quotes, backslashes, a tab, an emoji and U+2028: each escaped differently in JSON, or not.
    const line = (i: number) => `row ${i}: "quoted" \\path\tTAB 🙂 \u2028 end`
    writeFileSync(join(root, 'long.txt'), Array.from({ length: 1000 }, (_, i) => line(i)).join('\n') + '\n')
    writeFileSync(join(root, 'short.txt'), 'one\ntwo\n')
    const long = await ws.call('edit_file', { path: 'long.txt', edits: [{ oldString: 'end', newString: 'END', replaceAll: true }] })
    const short = await ws.call('edit_file', { path: 'short.txt', edits: [{ oldString: 'two', newString: 'TWO' }] })
    expect([long.status, short.status]).toEqual(['ok', 'ok'])
    expect(long.diff!.length).toBeGreaterThan(32 * 1024)
    expect(long.diff).toBe(requests[0]!.diff)
    expect(short.diff).toBe(requests[1]!.diff)
    expect(long.diff).toContain(`\n-${line(999)}\n`)
    expect(long.diff).toContain(`\n+${line(999).replace('end', 'END')}\n`)
    expect(Object.keys(long)).toEqual(Object.keys(short))
    expect(Object.keys(long).indexOf('diff')).toBeGreaterThan(Object.keys(long).indexOf('output'))
  })

  it('a per-call confirm handler overrides the workspace one', async () => {
    const wsConfirm = vi.fn(() => true)
    const callConfirm = vi.fn(() => true)
    const { ws, root } = tempWorkspace({ confirm: wsConfirm })
    writeFileSync(join(root, 'f.txt'), 'a\n')
    const result = await ws.call('edit_file', { path: 'f.txt', edits: [{ oldString: 'a', newString: 'b' }] }, { confirm: callConfirm })
    expect(result.status).toBe('ok')
    expect(callConfirm).toHaveBeenCalledTimes(1)
    expect(wsConfirm).not.toHaveBeenCalled()
  })

  it('denial leaves the file unchanged with the documented text', async () => {
    const confirm = vi.fn(() => false)
    const { ws, root } = tempWorkspace({ confirm })
    const file = join(root, 'f.txt')
    writeFileSync(file, 'keep me\n')
    const result = await ws.call('edit_file', { path: 'f.txt', edits: [{ oldString: 'keep', newString: 'lose' }] })
    expect(result.status).toBe('denied')
    expect(result.output).toContain('The user denied this edit.')
    expect(confirm).toHaveBeenCalledTimes(1)
    expect(readFileSync(file, 'utf8')).toBe('keep me\n')
  })

  it('no handler and no permission → denied, file unchanged', async () => {
    const { ws, root } = tempWorkspace()
    const file = join(root, 'f.txt')
    writeFileSync(file, 'keep me\n')
    const result = await ws.call('edit_file', { path: 'f.txt', edits: [{ oldString: 'keep', newString: 'lose' }] })
    expect(result.status).toBe('denied')
    expect(readFileSync(file, 'utf8')).toBe('keep me\n')
  })

  it('a throwing handler counts as no', async () => {
    const { ws, root } = tempWorkspace({
      confirm: () => {
        throw new Error('boom')
      },
    })
    const file = join(root, 'f.txt')
    writeFileSync(file, 'keep me\n')
    const result = await ws.call('edit_file', { path: 'f.txt', edits: [{ oldString: 'keep', newString: 'lose' }] })
    expect(result.status).toBe('denied')
    expect(readFileSync(file, 'utf8')).toBe('keep me\n')
  })

  it('cwdWriteFile: true skips the prompt (workspace or per call)', async () => {
    const confirm = vi.fn(() => false)
    const { ws, root } = tempWorkspace({ confirm, permissions: { cwdWriteFile: true } })
    const file = join(root, 'f.txt')
    writeFileSync(file, 'a\n')
    const result = await ws.call('edit_file', { path: 'f.txt', edits: [{ oldString: 'a', newString: 'b' }] })
    expect(result.status).toBe('ok')
    expect(readFileSync(file, 'utf8')).toBe('b\n')

    const other = tempWorkspace({ confirm })
    const file2 = join(other.root, 'g.txt')
    writeFileSync(file2, 'a\n')
    const perCall = await other.ws.call(
      'edit_file',
      { path: 'g.txt', edits: [{ oldString: 'a', newString: 'c' }] },
      { permissions: { cwdWriteFile: true } },
    )
    expect(perCall.status).toBe('ok')
    expect(readFileSync(file2, 'utf8')).toBe('c\n')
    expect(confirm).not.toHaveBeenCalled()
  })

  for (const [name, replacement] of [
    ['a different size', 'the user rewrote this file meanwhile\n'],
    ['the same size', 'ORIGINAL CONTENT\n'],
  ] as const) {
    it(`the file changed (${name}) while the confirmation was pending → CONFLICT, the handler's content survives`, async () => {
      let file = ''
      const confirm = vi.fn(() => {
        writeFileSync(file, replacement)
        return true
      })
      const { ws, root } = tempWorkspace({ confirm })
      file = join(root, 'f.txt')
      writeFileSync(file, 'original content\n')
      const result = await ws.call('edit_file', {
        path: 'f.txt',
        edits: [{ oldString: 'original', newString: 'edited' }],
      })
      expect(confirm).toHaveBeenCalledTimes(1)
      expect(result).toMatchObject({ status: 'error', code: 'CONFLICT' })
      expect(readFileSync(file, 'utf8')).toBe(replacement)
    })
  }

  it('the combined diff is one unified diff even for edits far apart, and output carries it', async () => {
    const lines = Array.from({ length: 300 }, (_, i) => `line ${i + 1}`)
    const { edit } = setup(lines.join('\n') + '\n')
    const result = await edit([
      { oldString: 'line 10\n', newString: 'LINE TEN\n' },
      { oldString: 'line 150\n', newString: 'LINE 150\n' },
      { oldString: 'line 290\n', newString: '' },
    ])
    expect(result.status).toBe('ok')
    const diff = result.diff!
    const h = headers(diff)
    expect(h.minus).toHaveLength(1)
    expect(h.plus).toHaveLength(1)
    expect(diff.startsWith('--- ')).toBe(true)
    expect(diff.split('\n').filter((l) => l.startsWith('@@'))).toHaveLength(3)
    expect(result.output).toContain(diff)
  })
})

describe('edit_file: file system', () => {
  it('keeps the mode bits (0755 and 0600)', async () => {
    for (const mode of [0o755, 0o600]) {
      const { edit, file } = setup('#!/bin/sh\necho old\n', `script-${mode.toString(8)}.sh`)
      chmodSync(file, mode)
      const result = await edit([{ oldString: 'echo old', newString: 'echo new' }])
      expect(result.status).toBe('ok')
      expect(readFileSync(file, 'utf8')).toBe('#!/bin/sh\necho new\n')
      expect(statSync(file).mode & 0o7777).toBe(modeAsKept(mode))
    }
  })

  it('a symlink inside the root: edits the target, keeps the link', async () => {
    const { ws, root } = tempWorkspace({ permissions: { cwdWriteFile: true } })
    const target = join(root, 'real.txt')
    const link = join(root, 'link.txt')
    writeFileSync(target, 'hello old world\n')
    symlinkOrSkip('real.txt', link)
    const result = await ws.call('edit_file', { path: 'link.txt', edits: [{ oldString: 'old', newString: 'new' }] })
    expect(result.status).toBe('ok')
    expect(lstatSync(link).isSymbolicLink()).toBe(true)
    expect(readlinkSync(link)).toBe('real.txt')
    expect(lstatSync(target).isFile()).toBe(true)
    expect(readFileSync(target, 'utf8')).toBe('hello new world\n')
  })

  it('parallel edit_file calls on the same file all apply, none lost', async () => {
    const n = 12
    const lines = Array.from({ length: n }, (_, i) => `value_${i} = ${i}`)
    const { ws, file } = setup(lines.join('\n') + '\n')
    const results = await Promise.all(
      lines.map((line, i) =>
        ws.call('edit_file', { path: 'file.txt', edits: [{ oldString: line, newString: `value_${i} = changed_${i}` }] }),
      ),
    )
    for (const r of results) expect(r.status, r.output).toBe('ok')
    const expected = Array.from({ length: n }, (_, i) => `value_${i} = changed_${i}`).join('\n') + '\n'
    expect(readFileSync(file, 'utf8')).toBe(expected)
  })

  it('a 2 MB file: 50 unique edits and a replaceAll over 2,000 occurrences give the right content', async () => {
    const lines: string[] = []
    let ident = 0
    for (let i = 0; i < 20_000; i++) {
      let line = `row ${String(i).padStart(5, '0')}: lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore`
      if (i % 10 === 3) {
        line += ' oldIdent()'
        ident++
      }
      if (i % 400 === 7) line += ` UNIQUE_MARK_${i}_END`
      lines.push(line)
    }
    expect(ident).toBe(2_000)
    const original = lines.join('\n') + '\n'
    expect(original.length).toBeGreaterThan(2_000_000)
    const markers = lines.flatMap((_, i) => (i % 400 === 7 ? [i] : []))
    expect(markers).toHaveLength(50)

    const edits: EditArg[] = markers.map((i) => ({ oldString: ` UNIQUE_MARK_${i}_END`, newString: ` edited #${i}` }))
    edits.push({ oldString: 'oldIdent', newString: 'newIdentifier', replaceAll: true })

    let expected = original
    for (const i of markers) expected = expected.replace(` UNIQUE_MARK_${i}_END`, ` edited #${i}`)
    expected = expected.split('oldIdent').join('newIdentifier')

    const { edit, file } = setup(original, 'big.txt')
    const result = await edit(edits)
    expect(result.status, result.output.slice(0, 500)).toBe('ok')
    expect(result.data).toMatchObject({ edits: 51, replacements: 2_050 })
    const after = readFileSync(file, 'utf8')
    expect(after.length).toBe(expected.length)
    expect(after === expected).toBe(true)
    const h = headers(result.diff!)
    expect(h.minus).toHaveLength(1)
    expect(h.plus).toHaveLength(1)
  })
})
