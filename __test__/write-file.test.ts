/** `write_file` (../docs/tools.md#write_file): atomic create/replace, parents, mode kept, diff, limits, errors. */
import { chmodSync, chownSync, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ConfirmHandler } from 'agent-fs-tools'
import { describe, expect, it, vi } from 'vitest'
import { tempWorkspace } from './helpers/temp.js'
import { mkfifo, modeAsKept, names, read, siblingDir, writeTree } from './helpers/files.js'
import { scaled } from './helpers/time.js'
import { symlinkOrSkip } from './helpers/links.js'

const writable = { permissions: { cwdWriteFile: true } } as const

describe('write_file success', () => {
  it('long content (passed beside the JSON) arrives byte for byte, a lone surrogate in it refused', async () => {
    const { ws, root } = tempWorkspace(writable)
    const content = 'line "quoted" \\ back\r\n\ttab é 😀 \u0000 and \u2028\n'.repeat(2000)
    const result = await ws.call('write_file', { path: 'long.txt', content })
    expect(result).toMatchObject({ status: 'ok', data: { created: true } })
    expect(read(join(root, 'long.txt'))).toBe(content)
    const refused = await ws.call('write_file', { path: 'bad.txt', content: content + '\uDC00' })
    expect(refused).toMatchObject({ status: 'error', code: 'INVALID_ARGUMENTS' })
    expect(refused.output).toContain('content: must be valid Unicode text')
    expect(existsSync(join(root, 'bad.txt'))).toBe(false)
  })

  it('identical content: nothing asked, archived or written, and the result says so', async () => {
    const confirm = vi.fn<ConfirmHandler>(() => true)
    const { ws, root } = tempWorkspace({ confirm })
    const path = join(root, 'same.txt')
    writeFileSync(path, 'same\n')
    const before = statSync(path)
    await ws.call('read_file', { path: 'same.txt' })
    const result = await ws.call('write_file', { path: 'same.txt', content: 'same\n' })
    expect(result).toMatchObject({ status: 'ok', data: { unchanged: true, created: false } })
    expect(result.output).toBe(`${path} already has this content (5 bytes); nothing was written.`)
    expect(result.diff).toBeUndefined()
    expect(confirm).not.toHaveBeenCalled()
    expect(statSync(path).ino).toBe(before.ino)
    expect(statSync(path).mtimeMs).toBe(before.mtimeMs)
    expect((await ws.trashList()).length).toBe(0)
  })

  it('identical content in a file the call may not read is still asked, as a write', async () => {
    const confirm = vi.fn<ConfirmHandler>(() => false)
    // A host that lets the model write what it has not read (../docs/tools.md#stale-views): the content is still not told.
    const { ws, root } = tempWorkspace({ confirm, permissions: { cwdReadFile: false }, staleWrites: 'allow' })
    writeFileSync(join(root, 'same.txt'), 'same\n')
    const result = await ws.call('write_file', { path: 'same.txt', content: 'same\n' })
    expect(result.status).toBe('denied')
    expect(confirm).toHaveBeenCalledOnce()
  })

  it('creates a new file with exactly the content', async () => {
    const { ws, root } = tempWorkspace(writable)
    const result = await ws.call('write_file', { path: 'new.txt', content: 'hello\nworld\n' })
    expect(result.status).toBe('ok')
    expect(read(join(root, 'new.txt'))).toBe('hello\nworld\n')
    expect(result.output).toContain(join(root, 'new.txt'))
  })

  it('creates missing parent directories', async () => {
    const { ws, root } = tempWorkspace(writable)
    const result = await ws.call('write_file', { path: 'a/b/c/deep.txt', content: 'x' })
    expect(result.status).toBe('ok')
    expect(read(join(root, 'a/b/c/deep.txt'))).toBe('x')
  })

  it('overwrites an existing file and keeps its mode', async () => {
    const { ws, root } = tempWorkspace(writable)
    const path = join(root, 'run.sh')
    writeFileSync(path, 'echo old\n')
    chmodSync(path, 0o751)
    await ws.call('read_file', { path: 'run.sh' })
    const result = await ws.call('write_file', { path: 'run.sh', content: 'echo new\n' })
    expect(result.status).toBe('ok')
    expect(read(path)).toBe('echo new\n')
    expect(statSync(path).mode & 0o7777).toBe(modeAsKept(0o751))
  })

  it('keeps the owner and group of the file it replaces (a rewrite by root does not take it over)', async (ctx) => {
    if (process.getuid?.() !== 0) ctx.skip() // only root may give a file another owner
    const { ws, root } = tempWorkspace(writable)
    const path = join(root, 'theirs.txt')
    writeFileSync(path, 'one\n')
    chownSync(path, 1234, 5678)
    chmodSync(path, 0o640)
    await ws.call('read_file', { path: 'theirs.txt' })
    const written = await ws.call('write_file', { path: 'theirs.txt', content: 'two\n' })
    expect(written.status, written.output).toBe('ok')
    const edited = await ws.call('edit_file', { path: 'theirs.txt', edits: [{ oldString: 'two', newString: 'three' }] })
    expect(edited.status, edited.output).toBe('ok')
    const after = statSync(path)
    expect(read(path)).toBe('three\n')
    expect([after.uid, after.gid, after.mode & 0o7777]).toEqual([1234, 5678, 0o640])
  })

  it('writes atomically: no temporary file is left beside the target', async () => {
    const { ws, root } = tempWorkspace(writable)
    writeTree(root, { 'd/keep.txt': 'k' })
    await ws.call('write_file', { path: 'd/a.txt', content: 'one' })
    await ws.call('write_file', { path: 'd/a.txt', content: 'two' })
    expect(names(join(root, 'd'))).toEqual(['a.txt', 'keep.txt'])
    expect(read(join(root, 'd/a.txt'))).toBe('two')
  })

  it('writes an empty file and content of exactly the bytes given (no trimming, no newline added)', async () => {
    const { ws, root } = tempWorkspace(writable)
    expect((await ws.call('write_file', { path: 'empty.txt', content: '' })).status).toBe('ok')
    expect(read(join(root, 'empty.txt'))).toBe('')
    await ws.call('write_file', { path: 'ws.txt', content: '  x\t\r\n\n  ' })
    expect(read(join(root, 'ws.txt'))).toBe('  x\t\r\n\n  ')
  })

  it('a new file: the diff, all added lines, is for the host; the model is told the line count', async () => {
    const { ws, root } = tempWorkspace(writable)
    const result = await ws.call('write_file', { path: 'n.txt', content: 'one\ntwo\n' })
    expect(result.diff).toBeDefined()
    expect(result.diff).toContain('+one')
    expect(result.diff).toContain('+two')
    expect(result.diff).not.toMatch(/^-[^-]/m)
    expect(result.diff).toMatch(/^@@ /m)
    expect(result.output).toBe(`Created ${join(root, 'n.txt')} (8 bytes, 2 lines)`)
  })

  it('an overwrite diff is against the old content', async () => {
    const { ws, root } = tempWorkspace(writable)
    writeTree(root, { 'f.txt': 'keep\nold line\n' })
    await ws.call('read_file', { path: 'f.txt' })
    const result = await ws.call('write_file', { path: 'f.txt', content: 'keep\nnew line\n' })
    expect(result.diff).toMatch(/^-old line$/m)
    expect(result.diff).toMatch(/^\+new line$/m)
    expect(result.diff).toMatch(/^ keep$/m)
    expect(result.output).toContain('+new line')
  })

  it('writes through a symlink inside root to its target, keeping the link', async () => {
    const { ws, root } = tempWorkspace(writable)
    const { lstatSync } = await import('node:fs')
    writeTree(root, { 'real.txt': 'old' })
    symlinkOrSkip('real.txt', join(root, 'link.txt'))
    await ws.call('read_file', { path: 'link.txt' })
    const result = await ws.call('write_file', { path: 'link.txt', content: 'new' })
    expect(result.status).toBe('ok')
    expect(read(join(root, 'real.txt'))).toBe('new')
    expect(lstatSync(join(root, 'link.txt')).isSymbolicLink()).toBe(true)
  })
})

describe('write_file limits', () => {
  it('writeMaxBytes counts UTF-8 bytes: at the limit is ok, one over is TOO_LARGE and nothing is written', async () => {
    const { ws, root } = tempWorkspace({ ...writable, limits: { writeMaxBytes: 4 } })
    const at = await ws.call('write_file', { path: 'at.txt', content: 'éé' }) // 4 bytes
    expect(at.status).toBe('ok')
    expect(read(join(root, 'at.txt'))).toBe('éé')
    const over = await ws.call('write_file', { path: 'over.txt', content: 'ééa' }) // 5 bytes, 3 chars
    expect(over).toMatchObject({ status: 'error', code: 'TOO_LARGE' })
    expect(existsSync(join(root, 'over.txt'))).toBe(false)
    const overwrite = await ws.call('write_file', { path: 'at.txt', content: '12345' })
    expect(overwrite.code).toBe('TOO_LARGE')
    expect(read(join(root, 'at.txt'))).toBe('éé')
  })

  it('the default writeMaxBytes is 1 MiB', async () => {
    const { ws, root } = tempWorkspace(writable)
    const at = await ws.call('write_file', { path: 'mib.txt', content: 'a'.repeat(1024 * 1024) })
    expect(at.status).toBe('ok')
    expect(statSync(join(root, 'mib.txt')).size).toBe(1024 * 1024)
    const over = await ws.call('write_file', { path: 'over.txt', content: 'a'.repeat(1024 * 1024 + 1) })
    expect(over.code).toBe('TOO_LARGE')
    expect(existsSync(join(root, 'over.txt'))).toBe(false)
  })

  it('diffTimeoutMs bounds the diff: a pathological rewrite still completes with a usable diff', async () => {
    const { ws, root } = tempWorkspace({ ...writable, confirm: () => true, limits: { diffTimeoutMs: 1 }, trash: { keepOverwrites: false } })
    const n = 30000
    const before = Array.from({ length: n }, (_, i) => `line ${(i * 7919) % n}`).join('\n')
    const after = Array.from({ length: n }, (_, i) => `line ${(i * 104729) % n}`).join('\n')
    writeFileSync(join(root, 'big.txt'), before)
    await ws.call('read_file', { path: 'big.txt' })
    const started = Date.now()
    const result = await ws.call('write_file', { path: 'big.txt', content: after })
    expect(Date.now() - started).toBeLessThan(15_000)
    expect(result.status).toBe('ok')
    expect(read(join(root, 'big.txt'))).toBe(after)
    expect(result.diff).toMatch(/^@@ /m)
    expect(result.diff).toMatch(/^-line /m)
    expect(result.diff).toMatch(/^\+line /m)
  }, scaled(30_000))

  it('TOO_LARGE is decided before asking', async () => {
    const confirm = vi.fn<ConfirmHandler>(() => true)
    const { ws } = tempWorkspace({ limits: { writeMaxBytes: 2 }, confirm })
    const result = await ws.call('write_file', { path: 'a.txt', content: 'abc' })
    expect(result.code).toBe('TOO_LARGE')
    expect(confirm).not.toHaveBeenCalled()
  })
})

describe('write_file errors', () => {
  it('a directory is "<abs> is a directory, not a file" and stays a directory', async () => {
    const { ws, root } = tempWorkspace(writable)
    mkdirSync(join(root, 'sub'))
    writeTree(root, { 'sub/inner.txt': 'i' })
    const result = await ws.call('write_file', { path: 'sub', content: 'x' })
    expect(result.status).toBe('error')
    expect(result.code).toBe('NOT_A_FILE')
    expect(result.output).toContain(`${join(root, 'sub')} is a directory, not a file`)
    expect(read(join(root, 'sub/inner.txt'))).toBe('i')
  })

  it('a file where a parent directory should be is NOT_A_DIRECTORY', async () => {
    const { ws, root } = tempWorkspace(writable)
    writeTree(root, { 'file.txt': 'f' })
    const result = await ws.call('write_file', { path: 'file.txt/child.txt', content: 'x' })
    expect(result).toMatchObject({ status: 'error', code: 'NOT_A_DIRECTORY' })
    expect(read(join(root, 'file.txt'))).toBe('f')
  })

  it('a path with a trailing slash is refused: no file named like the directory is created', async () => {
    const { ws, root } = tempWorkspace(writable)
    writeTree(root, { 'f.txt': 'f' })
    const created = await ws.call('write_file', { path: 'src/', content: 'x' })
    expect(created.status).toBe('error')
    expect(created.output).toContain('path')
    expect(existsSync(join(root, 'src'))).toBe(false)
    const existing = await ws.call('write_file', { path: 'f.txt/', content: 'x' })
    expect(existing.status).toBe('error')
    expect(read(join(root, 'f.txt'))).toBe('f')
  })

  it('a FIFO is NOT_A_REGULAR_FILE', async () => {
    const { ws, root } = tempWorkspace(writable)
    mkfifo(join(root, 'pipe'))
    const result = await ws.call('write_file', { path: 'pipe', content: 'x' })
    expect(result).toMatchObject({ status: 'error', code: 'NOT_A_REGULAR_FILE' })
  })

  it.each([
    [{ path: 'a.txt' }, 'content'],
    [{ content: 'x' }, 'path'],
    [{ path: 'a.txt', content: 1 }, 'content'],
    [{ path: 'a.txt', content: null }, 'content'],
    [{ path: 'a.txt', content: ['x'] }, 'content'],
    [{ path: '', content: 'x' }, 'path'],
    [{ path: 'a.txt', content: 'x', mode: 0o644 }, 'mode'],
  ])('%j is INVALID_ARGUMENTS naming %s, nothing written', async (args, field) => {
    const { ws, root } = tempWorkspace(writable)
    const result = await ws.call('write_file' as string, args)
    expect(result).toMatchObject({ status: 'error', code: 'INVALID_ARGUMENTS' })
    expect(result.output).toContain(field)
    expect(names(root)).toEqual([])
  })

  it('a file changed while the confirmation is pending is CONFLICT and the newer content stays', async () => {
    const { ws, root } = tempWorkspace()
    const path = join(root, 'f.txt')
    writeFileSync(path, 'original\n')
    await ws.call('read_file', { path: 'f.txt' })
    const result = await ws.call(
      'write_file',
      { path: 'f.txt', content: 'from the model\n' },
      {
        confirm: () => {
          writeFileSync(path, 'edited by the user meanwhile\n')
          return true
        },
      },
    )
    expect(result).toMatchObject({ status: 'error', code: 'CONFLICT' })
    expect(read(path)).toBe('edited by the user meanwhile\n')
  })

  it('a file created while the confirmation is pending is CONFLICT', async () => {
    const { ws, root } = tempWorkspace()
    const path = join(root, 'f.txt')
    const result = await ws.call(
      'write_file',
      { path: 'f.txt', content: 'model\n' },
      {
        confirm: () => {
          writeFileSync(path, 'someone else\n')
          return true
        },
      },
    )
    expect(result.code).toBe('CONFLICT')
    expect(read(path)).toBe('someone else\n')
  })
})

describe('write_file permissions', () => {
  it('not granted by default: prompts with "Write file?" and the diff; no handler is denied', async () => {
    const { ws, root } = tempWorkspace()
    const none = await ws.call('write_file', { path: 'a.txt', content: 'x\n' })
    expect(none.status).toBe('denied')
    expect(none.code).toBe('NO_CONFIRM_HANDLER')
    expect(none.output).toContain('Nobody was asked to approve this write')
    expect(existsSync(join(root, 'a.txt'))).toBe(false)
    const confirm = vi.fn<ConfirmHandler>(() => true)
    const ok = await ws.call('write_file', { path: 'a.txt', content: 'x\n' }, { confirm })
    expect(ok.status).toBe('ok')
    expect(confirm).toHaveBeenCalledOnce()
    expect(confirm.mock.calls[0]![0]).toMatchObject({
      tool: 'write_file',
      label: 'Write file?',
      path: join(root, 'a.txt'),
      detail: join(root, 'a.txt'),
      diff: expect.stringContaining('+x'),
    })
  })

  it('the diff shown for an overwrite is the diff that is applied', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'a.txt': 'before\n' })
    await ws.call('read_file', { path: 'a.txt' })
    const confirm = vi.fn<ConfirmHandler>(() => true)
    const result = await ws.call('write_file', { path: 'a.txt', content: 'after\n' }, { confirm })
    expect(confirm.mock.calls[0]![0].diff).toBe(result.diff)
    expect(result.diff).toMatch(/^-before$/m)
  })

  it('outside root needs globalWriteFile, not cwdWriteFile', async () => {
    const { ws, root } = tempWorkspace(writable)
    const outside = siblingDir(root)
    const target = join(outside, 'o.txt')
    const denied = await ws.call('write_file', { path: target, content: 'x' })
    expect(denied.status).toBe('denied')
    expect(existsSync(target)).toBe(false)
    const ok = await ws.call('write_file', { path: target, content: 'x' }, { permissions: { globalWriteFile: true } })
    expect(ok.status).toBe('ok')
    expect(read(target)).toBe('x')
  })
})
