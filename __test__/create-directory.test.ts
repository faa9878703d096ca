/** `create_directory` (../docs/tools.md#create_directory): `mkdir -p`; existing directory ok; existing file NOT_A_DIRECTORY. */
import { existsSync, mkdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { ConfirmHandler } from 'agent-fs-tools'
import { describe, expect, it, vi } from 'vitest'
import { tempWorkspace } from './helpers/temp.js'
import { names, read, siblingDir, writeTree } from './helpers/files.js'
import { symlinkOrSkip } from './helpers/links.js'

const writable = { permissions: { cwdWriteFile: true } } as const

describe('create_directory', () => {
  it('creates a directory and every missing parent', async () => {
    const { ws, root } = tempWorkspace(writable)
    const result = await ws.call('create_directory', { path: 'a/b/c' })
    expect(result.status).toBe('ok')
    expect(statSync(join(root, 'a/b/c')).isDirectory()).toBe(true)
    expect(result.output).toContain(join(root, 'a/b/c'))
  })

  it('an existing directory is ok and untouched', async () => {
    const { ws, root } = tempWorkspace(writable)
    writeTree(root, { 'd/keep.txt': 'k' })
    const result = await ws.call('create_directory', { path: 'd' })
    expect(result.status).toBe('ok')
    expect(result.code).toBeUndefined()
    expect(read(join(root, 'd/keep.txt'))).toBe('k')
  })

  it('an existing file is NOT_A_DIRECTORY and stays a file', async () => {
    const { ws, root } = tempWorkspace(writable)
    writeTree(root, { 'f': 'content' })
    const result = await ws.call('create_directory', { path: 'f' })
    expect(result).toMatchObject({ status: 'error', code: 'NOT_A_DIRECTORY' })
    expect(result.output).toContain(join(root, 'f'))
    expect(read(join(root, 'f'))).toBe('content')
  })

  it('a file in the middle of the path is NOT_A_DIRECTORY', async () => {
    const { ws, root } = tempWorkspace(writable)
    writeTree(root, { 'f': 'content' })
    const result = await ws.call('create_directory', { path: 'f/sub/deeper' })
    expect(result).toMatchObject({ status: 'error', code: 'NOT_A_DIRECTORY' })
    expect(read(join(root, 'f'))).toBe('content')
  })

  it('through a symlink to a directory inside root it creates in the target', async () => {
    const { ws, root } = tempWorkspace(writable)
    mkdirSync(join(root, 'real'))
    symlinkOrSkip('real', join(root, 'alias'))
    const result = await ws.call('create_directory', { path: 'alias/new' })
    expect(result.status).toBe('ok')
    expect(statSync(join(root, 'real/new')).isDirectory()).toBe(true)
  })

  it.each([
    [{}, 'path'],
    [{ path: 7 }, 'path'],
    [{ path: 'x', recursive: true }, 'recursive'],
  ])('%j is INVALID_ARGUMENTS naming %s', async (args, field) => {
    const { ws, root } = tempWorkspace(writable)
    const result = await ws.call('create_directory' as string, args)
    expect(result).toMatchObject({ status: 'error', code: 'INVALID_ARGUMENTS' })
    expect(result.output).toContain(field)
    expect(names(root)).toEqual([])
  })

  it('not granted by default: prompts with "Create directory?"; no handler or no is denied, nothing created', async () => {
    const { ws, root } = tempWorkspace()
    const none = await ws.call('create_directory', { path: 'x/y' })
    expect(none.status).toBe('denied')
    expect(none.code).toBe('NO_CONFIRM_HANDLER')
    expect(none.output).toContain('Nobody was asked to approve this write')
    const confirm = vi.fn<ConfirmHandler>(() => false)
    const no = await ws.call('create_directory', { path: 'x/y' }, { confirm })
    expect(no.status).toBe('denied')
    expect(existsSync(join(root, 'x'))).toBe(false)
    expect(confirm.mock.calls[0]![0]).toMatchObject({
      tool: 'create_directory',
      label: 'Create directory?',
      path: join(root, 'x/y'),
      detail: join(root, 'x/y'),
    })
    const yes = await ws.call('create_directory', { path: 'x/y' }, { confirm: () => true })
    expect(yes.status).toBe('ok')
    expect(statSync(join(root, 'x/y')).isDirectory()).toBe(true)
  })

  it('made by someone else while the user was asked: mkdir -p is satisfied, the rest is made', async () => {
    const { ws, root } = tempWorkspace()
    // The whole path appears meanwhile: nothing to make, and nothing recorded.
    const whole = await ws.call('create_directory', { path: 'w/x' }, { confirm: () => (mkdirSync(join(root, 'w/x'), { recursive: true }), true) })
    expect(whole).toMatchObject({ status: 'ok', output: `Directory already exists: ${join(root, 'w/x')}` })
    expect(whole.data).toMatchObject({ created: false })
    // Only a parent appears meanwhile: the rest is made inside it, and the parent is not listed as made.
    const part = await ws.call('create_directory', { path: 'p/q/r' }, { confirm: () => (mkdirSync(join(root, 'p')), true) })
    expect(part).toMatchObject({ status: 'ok', output: `Created directory ${join(root, 'p/q/r')}` })
    expect(statSync(join(root, 'p/q/r')).isDirectory()).toBe(true)
    const history = await ws.history()
    expect(history.map((c) => c.files.map((f) => f.path))).toEqual([[join(root, 'p/q/r')]])
    expect(names(join(root, 'p'))).toEqual(['q'])
  })

  it('outside root needs globalWriteFile', async () => {
    const { ws, root } = tempWorkspace(writable)
    const outside = siblingDir(root)
    const denied = await ws.call('create_directory', { path: join(outside, 'n') })
    expect(denied.status).toBe('denied')
    expect(existsSync(join(outside, 'n'))).toBe(false)
    const ok = await ws.call('create_directory', { path: join(outside, 'n') }, { permissions: { globalWriteFile: true } })
    expect(ok.status).toBe('ok')
    expect(statSync(join(outside, 'n')).isDirectory()).toBe(true)
  })
})
