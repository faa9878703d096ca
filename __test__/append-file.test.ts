/** `append_file` (../docs/tools.md#append_file): appends in place, creates the file, bounded by appendMaxTotalBytes. */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { ConfirmHandler } from 'agent-fs-tools'
import { describe, expect, it, vi } from 'vitest'
import { tempWorkspace, tempWorkspaceDirs } from './helpers/temp.js'
import { mkfifo, names, read, siblingDir, writeTree } from './helpers/files.js'
import { scaled } from './helpers/time.js'
import { NO_UNIX_RESOURCE_LIMITS, skipOnWindows } from './helpers/skip.js'

const writable = { permissions: { cwdWriteFile: true } } as const
/** Runs tool calls in a child process (see the crash harness). */
const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'helpers', 'crash-child.mjs')

describe('append_file success', () => {
  it('appends exactly the content, adding nothing in between', async () => {
    const { ws, root } = tempWorkspace(writable)
    writeTree(root, { 'log.txt': 'first' })
    const result = await ws.call('append_file', { path: 'log.txt', content: ' second\nthird\n' })
    expect(result.status).toBe('ok')
    expect(read(join(root, 'log.txt'))).toBe('first second\nthird\n')
    expect(result.output).toContain(join(root, 'log.txt'))
  })

  it('creates the file, and its parents, when missing', async () => {
    const { ws, root } = tempWorkspace(writable)
    const result = await ws.call('append_file', { path: 'logs/2024/app.log', content: 'boot\n' })
    expect(result.status).toBe('ok')
    expect(read(join(root, 'logs/2024/app.log'))).toBe('boot\n')
  })

  it('appends in place: the inode is kept', async () => {
    const { ws, root } = tempWorkspace(writable)
    writeTree(root, { 'a.txt': 'a\n' })
    const before = statSync(join(root, 'a.txt')).ino
    await ws.call('append_file', { path: 'a.txt', content: 'b\n' })
    expect(statSync(join(root, 'a.txt')).ino).toBe(before)
    expect(read(join(root, 'a.txt'))).toBe('a\nb\n')
  })

  it('the diff shows the appended lines only as added, and `diff` is in the output', async () => {
    const { ws, root } = tempWorkspace(writable)
    writeTree(root, { 'a.txt': 'one\ntwo\n' })
    const result = await ws.call('append_file', { path: 'a.txt', content: 'three\nfour\n' })
    expect(result.diff).toMatch(/^\+three$/m)
    expect(result.diff).toMatch(/^\+four$/m)
    expect(result.diff).not.toMatch(/^[-+](one|two)$/m)
    expect(result.output).toContain(result.diff!.trimEnd())
  })

  it('appending an empty string is ok and changes nothing', async () => {
    const { ws, root } = tempWorkspace(writable)
    writeTree(root, { 'a.txt': 'x' })
    const result = await ws.call('append_file', { path: 'a.txt', content: '' })
    expect(result.status).toBe('ok')
    expect(read(join(root, 'a.txt'))).toBe('x')
  })
})

describe('append_file limits', () => {
  it('appendMaxTotalBytes: reaching the limit exactly is ok, one byte over is TOO_LARGE and nothing changes', async () => {
    const { ws, root } = tempWorkspace({ ...writable, limits: { appendMaxTotalBytes: 10 } })
    writeTree(root, { 'a.txt': '12345' })
    const at = await ws.call('append_file', { path: 'a.txt', content: '67890' })
    expect(at.status).toBe('ok')
    expect(read(join(root, 'a.txt'))).toBe('1234567890')
    const over = await ws.call('append_file', { path: 'a.txt', content: 'X' })
    expect(over).toMatchObject({ status: 'error', code: 'TOO_LARGE' })
    expect(read(join(root, 'a.txt'))).toBe('1234567890')
  })

  it('counts the resulting size in bytes, for a new file too', async () => {
    const { ws, root } = tempWorkspace({ ...writable, limits: { appendMaxTotalBytes: 4 } })
    expect((await ws.call('append_file', { path: 'n.txt', content: 'éé' })).status).toBe('ok')
    const over = await ws.call('append_file', { path: 'm.txt', content: 'éé!' })
    expect(over.code).toBe('TOO_LARGE')
    expect(existsSync(join(root, 'm.txt'))).toBe(false)
  })

  it('the default appendMaxTotalBytes is 10 MiB', async () => {
    const { ws, root } = tempWorkspace(writable)
    writeFileSync(join(root, 'big.log'), Buffer.alloc(10 * 1024 * 1024 - 1, 0x61))
    expect((await ws.call('append_file', { path: 'big.log', content: 'b' })).status).toBe('ok')
    expect(statSync(join(root, 'big.log')).size).toBe(10 * 1024 * 1024)
    const over = await ws.call('append_file', { path: 'big.log', content: 'c' })
    expect(over.code).toBe('TOO_LARGE')
    expect(statSync(join(root, 'big.log')).size).toBe(10 * 1024 * 1024)
  })
})

describe('append_file errors', () => {
  it('a directory is "<abs> is a directory, not a file"', async () => {
    const { ws, root } = tempWorkspace(writable)
    mkdirSync(join(root, 'sub'))
    const result = await ws.call('append_file', { path: 'sub', content: 'x' })
    expect(result).toMatchObject({ status: 'error', code: 'NOT_A_FILE' })
    expect(result.output).toContain(`${join(root, 'sub')} is a directory, not a file`)
  })

  it('a path with a trailing slash is refused, creating or changing nothing', async () => {
    const { ws, root } = tempWorkspace(writable)
    writeTree(root, { 'f.log': 'f' })
    expect((await ws.call('append_file', { path: 'logs/', content: 'x' })).status).toBe('error')
    expect(existsSync(join(root, 'logs'))).toBe(false)
    expect((await ws.call('append_file', { path: 'f.log/', content: 'x' })).status).toBe('error')
    expect(read(join(root, 'f.log'))).toBe('f')
  })

  it('a FIFO is NOT_A_REGULAR_FILE and nothing blocks', async () => {
    const { ws, root } = tempWorkspace(writable)
    mkfifo(join(root, 'pipe'))
    const result = await ws.call('append_file', { path: 'pipe', content: 'x' })
    expect(result).toMatchObject({ status: 'error', code: 'NOT_A_REGULAR_FILE' })
  }, scaled(5000))

  it('a file where a parent directory should be is NOT_A_DIRECTORY', async () => {
    const { ws, root } = tempWorkspace(writable)
    writeTree(root, { 'f': 'f' })
    const result = await ws.call('append_file', { path: 'f/x.txt', content: 'x' })
    expect(result.code).toBe('NOT_A_DIRECTORY')
  })

  it.each([
    [{ path: 'a.txt' }, 'content'],
    [{ content: 'x' }, 'path'],
    [{ path: 'a.txt', content: 5 }, 'content'],
    [{ path: 'a.txt', content: 'x', newline: true }, 'newline'],
  ])('%j is INVALID_ARGUMENTS naming %s', async (args, field) => {
    const { ws, root } = tempWorkspace(writable)
    const result = await ws.call('append_file' as string, args)
    expect(result).toMatchObject({ status: 'error', code: 'INVALID_ARGUMENTS' })
    expect(result.output).toContain(field)
    expect(names(root)).toEqual([])
  })

  it('a file changed while the confirmation is pending is CONFLICT; nothing appended', async () => {
    const { ws, root } = tempWorkspace()
    const path = join(root, 'a.txt')
    writeFileSync(path, 'v1\n')
    const result = await ws.call(
      'append_file',
      { path: 'a.txt', content: 'model\n' },
      {
        confirm: () => {
          writeFileSync(path, 'v2\n')
          return true
        },
      },
    )
    expect(result.code).toBe('CONFLICT')
    expect(read(path)).toBe('v2\n')
  })

  it('a write that fails part-way (the file size limit) is rolled back; no journal record is left', () => {
    skipOnWindows(NO_UNIX_RESOURCE_LIMITS)
    const { root, dataDir } = tempWorkspaceDirs()
    const before = 'o'.repeat(48 << 10)
    writeFileSync(join(root, 'log.txt'), before)
    // 64 KiB is the most this child may write to any file: 16 KiB of the 32 KiB go through,
    // then EFBIG (Node ignores SIGXFSZ).
    const config = join(dataDir, '..', 'config.json')
    const calls = [['append_file', { path: 'log.txt', content: 'n'.repeat(32 << 10) }]]
    writeFileSync(config, JSON.stringify({ root, dataDir, calls }))
    const child = spawnSync('bash', ['-c', 'ulimit -f 64 && exec "$0" "$1" "$2"', process.execPath, CHILD, config], {
      encoding: 'utf8',
    })
    expect(child.status, child.stderr).toBe(2)
    const failed = JSON.parse(child.stdout.split('failed ')[1]!) as { result: { output: string } }
    expect(failed.result.output).toContain('cannot append to')
    expect(failed.result.output).not.toContain('changed meanwhile')
    expect(read(join(root, 'log.txt'))).toBe(before)
    const journal = join(dataDir, 'journal')
    const left = existsSync(journal)
      ? readdirSync(journal, { withFileTypes: true }).filter((d) => d.isDirectory()).flatMap((d) => readdirSync(join(journal, d.name)))
      : []
    expect(left).toEqual([])
  })
})

describe('append_file to a file that is not UTF-8 text (issue 15.10)', () => {
  it.each([
    ['UTF-16 LE with a BOM', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('log line\n', 'utf16le')]), 'BINARY_FILE'],
    ['UTF-16 BE with a BOM', Buffer.from([0xfe, 0xff, 0x00, 0x61, 0x00, 0x0a]), 'BINARY_FILE'],
    ['binary', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]), 'BINARY_FILE'],
    ['Latin-1', Buffer.from('caf\xe9\n', 'latin1'), 'ENCODING'],
  ])('%s: refused, nothing appended', async (_, bytes, code) => {
    const { ws, root } = tempWorkspace({ permissions: { cwdWriteFile: true } })
    writeFileSync(join(root, 'f.log'), bytes)
    const result = await ws.call('append_file', { path: 'f.log', content: 'more\n' })
    expect(result).toMatchObject({ status: 'error', code })
    expect(result.output).toMatch(/appending UTF-8 text would (corrupt it|mix two encodings in it); leave it as it is, or write a new file$/)
    expect(Buffer.compare(readFileSync(join(root, 'f.log')), bytes)).toBe(0)
  })
})

describe('append_file permissions', () => {
  it('prompts with "Append to file?" and the diff; no is "The user denied this write."', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'a.txt': 'a\n' })
    const confirm = vi.fn<ConfirmHandler>(() => false)
    const result = await ws.call('append_file', { path: 'a.txt', content: 'b\n' }, { confirm })
    expect(result.status).toBe('denied')
    expect(result.output).toContain('The user denied this write.')
    expect(read(join(root, 'a.txt'))).toBe('a\n')
    expect(confirm.mock.calls[0]![0]).toMatchObject({
      tool: 'append_file',
      label: 'Append to file?',
      path: join(root, 'a.txt'),
      detail: join(root, 'a.txt'),
      diff: expect.stringMatching(/^\+b$/m),
    })
  })

  it('cwdWriteFile grants inside root only; outside root needs globalWriteFile', async () => {
    const { ws, root } = tempWorkspace(writable)
    const outside = siblingDir(root)
    writeTree(outside, { 'o.log': 'o\n' })
    const denied = await ws.call('append_file', { path: join(outside, 'o.log'), content: 'x\n' })
    expect(denied.status).toBe('denied')
    expect(read(join(outside, 'o.log'))).toBe('o\n')
    const ok = await ws.call(
      'append_file',
      { path: join(outside, 'o.log'), content: 'x\n' },
      { permissions: { globalWriteFile: true } },
    )
    expect(ok.status).toBe('ok')
    expect(read(join(outside, 'o.log'))).toBe('o\nx\n')
  })
})
