/** `read_file` (../docs/tools.md#read_file): numbered lines, ranges, bounded output, binary and invalid UTF-8. */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ConfirmHandler } from 'agent-fs-tools'
import { describe, expect, it, vi } from 'vitest'
import { tempWorkspace } from './helpers/temp.js'
import { numbered, siblingDir, writeTree } from './helpers/files.js'

const lines = (n: number, make = (i: number) => `line ${i}`): string =>
  Array.from({ length: n }, (_, i) => make(i + 1)).join('\n') + '\n'

describe('read_file success', () => {
  it('numbers lines as String(n).padStart(4) + " | " + line, tabs and spaces kept', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'a.txt': 'alpha\n\tbeta\n  gamma  \n' })
    const result = await ws.call('read_file', { path: 'a.txt' })
    expect(result.status).toBe('ok')
    expect(result.code).toBeUndefined()
    expect(result.output).toBe([numbered(1, 'alpha'), numbered(2, '\tbeta'), numbered(3, '  gamma  ')].join('\n'))
  })

  it('reads a file without a final newline, CRLF lines without the CR, and drops a BOM', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'crlf.txt': '\uFEFFone\r\ntwo\r\nthree' })
    const result = await ws.call('read_file', { path: 'crlf.txt' })
    expect(result.output).toBe([numbered(1, 'one'), numbered(2, 'two'), numbered(3, 'three')].join('\n'))
  })

  it('accepts an absolute path', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'd/x.txt': 'x\n' })
    const result = await ws.call('read_file', { path: join(root, 'd/x.txt') })
    expect(result.output).toBe(numbered(1, 'x'))
  })

  it('pads line numbers to 4 and lets wider numbers grow', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'big.txt': lines(10000) })
    const result = await ws.call('read_file', { path: 'big.txt', startLine: 9999, endLine: 10000 })
    expect(result.output).toBe('9999 | line 9999\n10000 | line 10000')
  })

  it('an empty file is ok', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'empty.txt': '' })
    const result = await ws.call('read_file', { path: 'empty.txt' })
    expect(result.status).toBe('ok')
    expect(result.output).not.toContain('|')
  })

  it('ranges are 1-based and inclusive', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'a.txt': lines(10) })
    const result = await ws.call('read_file', { path: 'a.txt', startLine: 3, endLine: 5 })
    expect(result.output).toBe([3, 4, 5].map((n) => numbered(n, `line ${n}`)).join('\n'))
    const single = await ws.call('read_file', { path: 'a.txt', startLine: 7, endLine: 7 })
    expect(single.output).toBe(numbered(7, 'line 7'))
  })

  it('startLine alone reads to the end; endLine alone reads from the start', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'a.txt': lines(6) })
    const tail = await ws.call('read_file', { path: 'a.txt', startLine: 5 })
    expect(tail.output).toBe([numbered(5, 'line 5'), numbered(6, 'line 6')].join('\n'))
    const head = await ws.call('read_file', { path: 'a.txt', endLine: 2 })
    expect(head.output).toBe([numbered(1, 'line 1'), numbered(2, 'line 2')].join('\n'))
  })

  it('an endLine past the end stops at the last line', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'a.txt': lines(3) })
    const result = await ws.call('read_file', { path: 'a.txt', startLine: 2, endLine: 99 })
    expect(result.status).toBe('ok')
    expect(result.output).toBe([numbered(2, 'line 2'), numbered(3, 'line 3')].join('\n'))
  })

  it('a NUL after the first 8 KiB is not binary', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'late.txt': 'a'.repeat(9000) + '\n' + 'b\0c\n' })
    const result = await ws.call('read_file', { path: 'late.txt' })
    expect(result.status).toBe('ok')
    expect(result.output).toContain(numbered(2, 'b'))
  })

  it('reads a path with spaces and unicode literally', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'dir with space/naïve ü.txt': 'ok\n' })
    const result = await ws.call('read_file', { path: 'dir with space/naïve ü.txt' })
    expect(result.output).toBe(numbered(1, 'ok'))
  })
})

describe('read_file limits', () => {
  it('readMaxLines: exactly at the limit shows everything, no continuation note', async () => {
    const { ws, root } = tempWorkspace({ limits: { readMaxLines: 5 } })
    writeTree(root, { 'a.txt': lines(5) })
    const result = await ws.call('read_file', { path: 'a.txt' })
    expect(result.output).toBe([1, 2, 3, 4, 5].map((n) => numbered(n, `line ${n}`)).join('\n'))
    expect(result.output).not.toMatch(/startLine/)
  })

  it('readMaxLines: one over shows the limit, then how many lines there are and which startLine continues', async () => {
    const { ws, root } = tempWorkspace({ limits: { readMaxLines: 5 } })
    writeTree(root, { 'a.txt': lines(6) })
    const result = await ws.call('read_file', { path: 'a.txt' })
    expect(result.status).toBe('ok')
    const shown = result.output.split('\n').filter((l) => / \| /.test(l))
    expect(shown).toEqual([1, 2, 3, 4, 5].map((n) => numbered(n, `line ${n}`)))
    expect(result.output).not.toContain('line 6')
    const note = result.output.split('\n').at(-1)!
    expect(note).toContain('6') // total lines
    expect(note).toMatch(/startLine:? 6\b/)
  })

  it('the default readMaxLines is 500', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'at.txt': lines(500), 'over.txt': lines(501) })
    const at = await ws.call('read_file', { path: 'at.txt' })
    expect(at.output.split('\n')).toHaveLength(500)
    const over = await ws.call('read_file', { path: 'over.txt' })
    expect(over.output).toContain(numbered(500, 'line 500'))
    expect(over.output).not.toContain(numbered(501, 'line 501'))
    expect(over.output).toMatch(/501/)
    expect(over.output).toMatch(/startLine:? 501\b/)
  })

  it('following the continuation notes reads the whole file exactly once', async () => {
    const { ws, root } = tempWorkspace({ limits: { readMaxLines: 4 } })
    writeTree(root, { 'a.txt': lines(10) })
    const seen: string[] = []
    let startLine = 1
    for (let guard = 0; guard < 10; guard++) {
      const result = await ws.call('read_file', { path: 'a.txt', startLine })
      expect(result.status).toBe('ok')
      seen.push(...result.output.split('\n').filter((l) => / \| /.test(l)))
      const next = /startLine:? (\d+)/.exec(result.output)
      if (!next) break
      startLine = Number(next[1])
    }
    expect(seen).toEqual(Array.from({ length: 10 }, (_, i) => numbered(i + 1, `line ${i + 1}`)))
  })

  it('readMaxBytes: lines whose numbered output fits the budget are all shown', async () => {
    // Each numbered line is "   n | abc" (10 bytes) plus its newline: 3 lines are 33 bytes.
    const { ws, root } = tempWorkspace({ limits: { readMaxBytes: 33 } })
    writeTree(root, { 'a.txt': 'abc\nabc\nabc\n' })
    const result = await ws.call('read_file', { path: 'a.txt' })
    expect(result.output).toBe([1, 2, 3].map((n) => numbered(n, 'abc')).join('\n'))
  })

  it('readMaxBytes: over the budget cuts between lines and says where to continue', async () => {
    const { ws, root } = tempWorkspace({ limits: { readMaxBytes: 31 } })
    writeTree(root, { 'a.txt': 'abc\nabc\nabc\n' })
    const result = await ws.call('read_file', { path: 'a.txt' })
    expect(result.status).toBe('ok')
    const shown = result.output.split('\n').filter((l) => / \| /.test(l))
    expect(shown).toEqual([numbered(1, 'abc'), numbered(2, 'abc')])
    expect(shown.join('\n').length).toBeLessThanOrEqual(31)
    expect(result.output).toMatch(/\b3\b/)
    expect(result.output).toMatch(/startLine:? 3\b/)
  })

  it('readMaxBytes: a single line longer than the budget is cut, not returned whole', async () => {
    const { ws, root } = tempWorkspace({ limits: { readMaxBytes: 200 } })
    writeTree(root, { 'long.txt': 'x'.repeat(5000) + '\nshort\n' })
    const result = await ws.call('read_file', { path: 'long.txt' })
    expect(result.status).toBe('ok')
    expect(result.output.length).toBeLessThan(600)
    expect(result.output).not.toContain('short')
    expect(result.output).toMatch(/startLine:? 2\b/)
  })

  it('the default readMaxBytes is 65536', async () => {
    const { ws, root } = tempWorkspace()
    // 100 lines of 1000 bytes: ~100 KB, well under 500 lines but over 64 KiB.
    writeTree(root, { 'wide.txt': lines(100, () => 'y'.repeat(1000)) })
    const result = await ws.call('read_file', { path: 'wide.txt' })
    const shown = result.output.split('\n').filter((l) => / \| /.test(l))
    expect(shown.length).toBeGreaterThan(50)
    expect(shown.length).toBeLessThan(100)
    expect(shown.join('\n').length).toBeLessThanOrEqual(65536)
    expect(result.output).toMatch(new RegExp(`startLine:? ${shown.length + 1}\\b`))
  })
})

describe('read_file binary and encoding', () => {
  it('a NUL in the first 8 KiB is BINARY_FILE', async () => {
    const { ws, root } = tempWorkspace()
    writeFileSync(join(root, 'bin.dat'), Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x00, 0x01, 0x02]))
    writeFileSync(join(root, 'edge.dat'), Buffer.concat([Buffer.from('a'.repeat(8191)), Buffer.from([0])]))
    for (const path of ['bin.dat', 'edge.dat']) {
      const result = await ws.call('read_file', { path })
      expect(result).toMatchObject({ status: 'error', code: 'BINARY_FILE' })
      expect(result.output).toContain(join(root, path))
    }
  })

  it('invalid UTF-8 is shown lossily with a note that edit_file will refuse the file', async () => {
    const { ws, root } = tempWorkspace()
    writeFileSync(join(root, 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a, 0x6f, 0x6b, 0x0a]))
    const result = await ws.call('read_file', { path: 'latin1.txt' })
    expect(result.status).toBe('ok')
    expect(result.output).toContain(numbered(1, 'caf\uFFFD'))
    expect(result.output).toContain(numbered(2, 'ok'))
    expect(result.output).toMatch(/UTF-8/)
    expect(result.output).toContain('edit_file')
  })

  it('valid UTF-8 has no encoding note', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'u.txt': 'café 日本\n' })
    const result = await ws.call('read_file', { path: 'u.txt' })
    expect(result.output).toBe(numbered(1, 'café 日本'))
  })
})

describe('read_file errors', () => {
  it('a missing file is NOT_FOUND: "file not found: <abs>"', async () => {
    const { ws, root } = tempWorkspace()
    const result = await ws.call('read_file', { path: 'nope.txt' })
    expect(result).toMatchObject({ status: 'error', code: 'NOT_FOUND' })
    expect(result.output).toContain(`file not found: ${join(root, 'nope.txt')}`)
  })

  it('a missing parent is NOT_FOUND too', async () => {
    const { ws, root } = tempWorkspace()
    const result = await ws.call('read_file', { path: 'no/such/dir/f.txt' })
    expect(result).toMatchObject({ status: 'error', code: 'NOT_FOUND' })
    expect(result.output).toContain(join(root, 'no/such/dir/f.txt'))
  })

  it('a directory is "<abs> is a directory, not a file"', async () => {
    const { ws, root } = tempWorkspace()
    mkdirSync(join(root, 'sub'))
    const result = await ws.call('read_file', { path: 'sub' })
    expect(result.status).toBe('error')
    expect(result.code).toBe('NOT_A_FILE')
    expect(result.output).toContain(`${join(root, 'sub')} is a directory, not a file`)
    const rootItself = await ws.call('read_file', { path: '.' })
    expect(rootItself.output).toContain(`${root} is a directory, not a file`)
  })

  it('a file used as a directory is an error, not a crash', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'f.txt': 'x' })
    const result = await ws.call('read_file', { path: 'f.txt/inner' })
    expect(result.status).toBe('error')
    expect(['NOT_A_DIRECTORY', 'NOT_FOUND']).toContain(result.code)
  })

  it('a file path with a trailing slash is refused (it names a directory), not read as the file', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'a.txt': 'a\n' })
    const result = await ws.call('read_file', { path: 'a.txt/' })
    expect(result.status).toBe('error')
    expect(result.output).not.toContain(numbered(1, 'a'))
    mkdirSync(join(root, 'dir'))
    const dir = await ws.call('read_file', { path: 'dir/' })
    expect(dir.output).toContain(`${join(root, 'dir')} is a directory, not a file`)
  })

  it('startLine past the end is INVALID_ARGUMENTS naming the line count', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'a.txt': lines(3) })
    const result = await ws.call('read_file', { path: 'a.txt', startLine: 10 })
    expect(result).toMatchObject({ status: 'error', code: 'INVALID_ARGUMENTS' })
    expect(result.output).toMatch(/\b3\b/)
  })

  it.each([
    [{}, 'path'],
    [{ path: 1 }, 'path'],
    [{ path: '' }, 'path'],
    [{ path: 'a.txt', startLine: 0 }, 'startLine'],
    [{ path: 'a.txt', startLine: -1 }, 'startLine'],
    [{ path: 'a.txt', startLine: 1.5 }, 'startLine'],
    [{ path: 'a.txt', startLine: '2' }, 'startLine'],
    [{ path: 'a.txt', endLine: 0 }, 'endLine'],
    [{ path: 'a.txt', startLine: 5, endLine: 4 }, 'endLine'],
    [{ path: 'a.txt', bogus: true }, 'bogus'],
    [{ path: 'a.txt', offset: 3 }, 'offset'],
  ])('%j is INVALID_ARGUMENTS naming %s', async (args, field) => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'a.txt': lines(10) })
    const result = await ws.call('read_file' as string, args)
    expect(result).toMatchObject({ status: 'error', code: 'INVALID_ARGUMENTS' })
    expect(result.output).toContain(field)
  })

  it('non-object arguments are INVALID_ARGUMENTS', async () => {
    const { ws } = tempWorkspace()
    for (const args of [null, [], 'a.txt', 3]) {
      const result = await ws.call('read_file' as string, args)
      expect(result).toMatchObject({ status: 'error', code: 'INVALID_ARGUMENTS' })
    }
  })
})

describe('read_file permissions', () => {
  it('inside root is granted by default (cwdReadFile), no prompt', async () => {
    const confirm = vi.fn<ConfirmHandler>(() => false)
    const { ws, root } = tempWorkspace({ confirm })
    writeTree(root, { 'a.txt': 'a\n' })
    expect((await ws.call('read_file', { path: 'a.txt' })).status).toBe('ok')
    expect(confirm).not.toHaveBeenCalled()
  })

  it('cwdReadFile: false prompts with "Read file?"; yes reads, no is "The user denied this read."', async () => {
    const { ws, root } = tempWorkspace({ permissions: { cwdReadFile: false } })
    writeTree(root, { 'a.txt': 'secret\n' })
    const yes = vi.fn<ConfirmHandler>(() => true)
    const ok = await ws.call('read_file', { path: 'a.txt' }, { confirm: yes })
    expect(ok.output).toBe(numbered(1, 'secret'))
    expect(yes).toHaveBeenCalledOnce()
    expect(yes.mock.calls[0]![0]).toMatchObject({
      tool: 'read_file',
      label: 'Read file?',
      path: join(root, 'a.txt'),
      detail: join(root, 'a.txt'),
    })
    expect(yes.mock.calls[0]![0]).not.toHaveProperty('diff')
    const no = await ws.call('read_file', { path: 'a.txt' }, { confirm: () => false })
    expect(no.status).toBe('denied')
    expect(no.output).toContain('The user denied this read.')
    expect(no.output).not.toContain('secret')
    const none = await ws.call('read_file', { path: 'a.txt' })
    expect(none.status).toBe('denied')
    expect(none.output).not.toContain('secret')
  })

  it('outside root needs globalReadFile', async () => {
    const { ws, root } = tempWorkspace()
    const outside = siblingDir(root)
    writeTree(outside, { 'o.txt': 'out\n' })
    const denied = await ws.call('read_file', { path: join(outside, 'o.txt') })
    expect(denied.status).toBe('denied')
    expect(denied.output).toContain('Nobody was asked to approve this read')
    const granted = await ws.call('read_file', { path: join(outside, 'o.txt') }, { permissions: { globalReadFile: true } })
    expect(granted.output).toBe(numbered(1, 'out'))
    const relative = await ws.call('read_file', { path: '../outside/o.txt' }, { permissions: { globalReadFile: true } })
    expect(relative.output).toBe(numbered(1, 'out'))
  })
})
