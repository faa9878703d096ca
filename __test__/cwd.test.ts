/** `cwd_get` / `cwd_push` / `cwd_pop` (../docs/tools.md#cwd_get-cwd_push-cwd_pop): the per-workspace directory stack. */
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { Workspace, type ConfirmHandler } from 'agent-fs-tools'
import { tempWorkspace, tempWorkspaceDirs } from './helpers/temp.js'
import { numbered, read, siblingDir, writeTree } from './helpers/files.js'
import { symlinkOrSkip } from './helpers/links.js'

const NOTE = '\nNote: not a git repository, using directory as project root'

describe('cwd_get', () => {
  it('reports CWD, ProjectRoot and the depth', async () => {
    const { ws, root } = tempWorkspace()
    const result = await ws.call('cwd_get', {})
    expect(result.status).toBe('ok')
    expect(result.output).toBe(`CWD: ${root}\nProjectRoot: ${root}\nStack depth: 0`)
  })

  it('ProjectRoot is the nearest ancestor of root holding .git (a directory)', () => {
    const { root } = tempWorkspaceDirs()
    mkdirSync(join(root, '.git'))
    mkdirSync(join(root, 'packages/app'), { recursive: true })
    const ws = new Workspace({ root: join(root, 'packages/app') })
    expect(ws.cwd()).toEqual({ cwd: join(root, 'packages/app'), projectRoot: root, depth: 0 })
  })

  it('ProjectRoot is found with .git as a file (worktree/submodule) and root itself counts', async () => {
    const { root } = tempWorkspaceDirs()
    writeFileSync(join(root, '.git'), 'gitdir: /elsewhere/.git/worktrees/x\n')
    const ws = new Workspace({ root })
    const result = await ws.call('cwd_get', {})
    expect(result.output).toBe(`CWD: ${root}\nProjectRoot: ${root}\nStack depth: 0`)
  })

  it.each([[{ extra: 1 }], [[]], ['x']])('rejects arguments %j', async (args) => {
    const { ws } = tempWorkspace()
    expect(await ws.call('cwd_get' as string, args)).toMatchObject({ status: 'error', code: 'INVALID_ARGUMENTS' })
  })
})

describe('cwd_push / cwd_pop', () => {
  it('push then pop round-trips, with the exact messages', async () => {
    const { ws, root } = tempWorkspace()
    mkdirSync(join(root, 'sub'))
    const push = await ws.call('cwd_push', { path: 'sub' })
    expect(push.status).toBe('ok')
    expect(push.output).toBe(`Pushed to ${join(root, 'sub')} (stack depth: 1)${NOTE}`)
    expect(ws.cwd()).toEqual({ cwd: join(root, 'sub'), projectRoot: join(root, 'sub'), depth: 1 })
    const get = await ws.call('cwd_get', {})
    expect(get.output).toBe(`CWD: ${join(root, 'sub')}\nProjectRoot: ${join(root, 'sub')}\nStack depth: 1`)
    const pop = await ws.call('cwd_pop', {})
    expect(pop.output).toBe(`Popped to ${root} (stack depth: 0)\nProjectRoot: ${root}`)
    expect(ws.cwd()).toEqual({ cwd: root, projectRoot: root, depth: 0 })
  })

  it('pop on an empty stack is ok and says so', async () => {
    const { ws, root } = tempWorkspace()
    const pop = await ws.call('cwd_pop', {})
    expect(pop.status).toBe('ok')
    expect(pop.output).toBe(`Stack is empty, already at initial directory: ${root}`)
    expect(ws.cwd().depth).toBe(0)
  })

  it('relative pushes resolve against the pushed cwd; pops unwind in order', async () => {
    const { ws, root } = tempWorkspace()
    mkdirSync(join(root, 'a/b/c'), { recursive: true })
    await ws.call('cwd_push', { path: 'a' })
    const second = await ws.call('cwd_push', { path: 'b' })
    expect(second.output).toContain(`Pushed to ${join(root, 'a/b')} (stack depth: 2)`)
    const third = await ws.call('cwd_push', { path: './c/..' })
    expect(third.output).toContain(`Already in ${join(root, 'a/b')} (stack depth: 3)`)
    const up = await ws.call('cwd_push', { path: '../..' })
    expect(up.output).toContain(`Pushed to ${root} (stack depth: 4)`)
    expect((await ws.call('cwd_pop', {})).output).toContain(`Popped to ${join(root, 'a/b')} (stack depth: 3)`)
    expect((await ws.call('cwd_pop', {})).output).toContain(`Popped to ${join(root, 'a/b')} (stack depth: 2)`)
    expect((await ws.call('cwd_pop', {})).output).toContain(`Popped to ${join(root, 'a')} (stack depth: 1)`)
    expect((await ws.call('cwd_pop', {})).output).toContain(`Popped to ${root} (stack depth: 0)`)
  })

  it('an absolute push and a push through a symlink give the canonical directory', async () => {
    const { ws, root } = tempWorkspace()
    mkdirSync(join(root, 'real'))
    symlinkOrSkip('real', join(root, 'alias'))
    const abs = await ws.call('cwd_push', { path: join(root, 'real') })
    expect(abs.output).toContain(`Pushed to ${join(root, 'real')} (stack depth: 1)`)
    await ws.call('cwd_pop', {})
    const viaLink = await ws.call('cwd_push', { path: 'alias' })
    expect(viaLink.output).toContain(`Pushed to ${join(root, 'real')} (stack depth: 1)`)
    expect(ws.cwd().cwd).toBe(join(root, 'real'))
  })

  it('pushing the current directory still pushes a frame, says "Already in", and pairs with its pop', async () => {
    const { ws, root } = tempWorkspace()
    mkdirSync(join(root, '.git'))
    const same = await ws.call('cwd_push', { path: '.' })
    expect(same.status).toBe('ok')
    expect(same.output).toBe(`Already in ${root} (stack depth: 1)`)
    expect(ws.cwd().depth).toBe(1)
    const again = await ws.call('cwd_push', { path: root })
    expect(again.output).toBe(`Already in ${root} (stack depth: 2)`)
    expect((await ws.call('cwd_pop', {})).output).toBe(`Popped to ${root} (stack depth: 1)\nProjectRoot: ${root}`)
    expect((await ws.call('cwd_pop', {})).output).toBe(`Popped to ${root} (stack depth: 0)\nProjectRoot: ${root}`)
    expect((await ws.call('cwd_pop', {})).output).toContain('Stack is empty')
  })

  it('ProjectRoot of a push is the nearest ancestor holding .git (directory or file), no note then', async () => {
    const { ws, root } = tempWorkspace()
    mkdirSync(join(root, 'repo/.git'), { recursive: true })
    mkdirSync(join(root, 'repo/src/deep'), { recursive: true })
    mkdirSync(join(root, 'wt/src'), { recursive: true })
    writeFileSync(join(root, 'wt/.git'), 'gitdir: ../repo/.git/worktrees/wt\n')
    mkdirSync(join(root, 'plain'))

    const inRepo = await ws.call('cwd_push', { path: 'repo/src/deep' })
    expect(inRepo.output).toBe(`Pushed to ${join(root, 'repo/src/deep')} (stack depth: 1)`)
    expect(ws.cwd().projectRoot).toBe(join(root, 'repo'))
    expect((await ws.call('cwd_get', {})).output).toContain(`ProjectRoot: ${join(root, 'repo')}\n`)

    const inWorktree = await ws.call('cwd_push', { path: join(root, 'wt/src') })
    expect(inWorktree.output).toBe(`Pushed to ${join(root, 'wt/src')} (stack depth: 2)`)
    expect(ws.cwd().projectRoot).toBe(join(root, 'wt'))

    const plain = await ws.call('cwd_push', { path: join(root, 'plain') })
    expect(plain.output).toBe(`Pushed to ${join(root, 'plain')} (stack depth: 3)${NOTE}`)
    expect(ws.cwd().projectRoot).toBe(join(root, 'plain'))

    const pop = await ws.call('cwd_pop', {})
    expect(pop.output).toBe(`Popped to ${join(root, 'wt/src')} (stack depth: 2)\nProjectRoot: ${join(root, 'wt')}`)
    expect((await ws.call('cwd_pop', {})).output).toBe(
      `Popped to ${join(root, 'repo/src/deep')} (stack depth: 1)\nProjectRoot: ${join(root, 'repo')}`,
    )
  })

  it('pop restores the ProjectRoot saved at push time even if .git appeared since', async () => {
    const { ws, root } = tempWorkspace()
    mkdirSync(join(root, 'sub'))
    await ws.call('cwd_push', { path: 'sub' })
    mkdirSync(join(root, '.git'))
    const pop = await ws.call('cwd_pop', {})
    expect(pop.output).toBe(`Popped to ${root} (stack depth: 0)\nProjectRoot: ${root}`)
  })

  it('cwdMaxDepth: N pushes succeed; the next is STACK_OVERFLOW "directory stack overflow (max N)", stack unchanged', async () => {
    const { ws, root } = tempWorkspace({ limits: { cwdMaxDepth: 3 } })
    mkdirSync(join(root, 'a/b/c/d'), { recursive: true })
    for (const [i, dir] of ['a', 'b', 'c'].entries()) {
      const push = await ws.call('cwd_push', { path: dir })
      expect(push.status).toBe('ok')
      expect(push.output).toContain(`(stack depth: ${i + 1})`)
    }
    const over = await ws.call('cwd_push', { path: 'd' })
    expect(over).toMatchObject({ status: 'error', code: 'STACK_OVERFLOW' })
    expect(over.output).toContain('directory stack overflow (max 3)')
    expect(ws.cwd()).toMatchObject({ cwd: join(root, 'a/b/c'), depth: 3 })
    await ws.call('cwd_pop', {})
    expect((await ws.call('cwd_push', { path: 'c' })).status).toBe('ok')
  })

  it('the default cwdMaxDepth is 100', async () => {
    const { ws, root } = tempWorkspace()
    for (let i = 0; i < 100; i++) {
      const push = await ws.call('cwd_push', { path: root })
      expect(push.status).toBe('ok')
    }
    const over = await ws.call('cwd_push', { path: root })
    expect(over.code).toBe('STACK_OVERFLOW')
    expect(over.output).toContain('directory stack overflow (max 100)')
    expect(ws.cwd().depth).toBe(100)
  })

  it('pop when the saved directory was deleted is NOT_FOUND and the stack is unchanged', async () => {
    const { ws, root } = tempWorkspace()
    mkdirSync(join(root, 'gone/inner'), { recursive: true })
    await ws.call('cwd_push', { path: 'gone' })
    await ws.call('cwd_push', { path: 'inner' })
    rmSync(join(root, 'gone'), { recursive: true })
    // The current directory (gone/inner) no longer exists either; popping goes to gone, which is missing.
    const pop = await ws.call('cwd_pop', {})
    expect(pop).toMatchObject({ status: 'error', code: 'NOT_FOUND' })
    expect(pop.output).toContain(join(root, 'gone'))
    expect(ws.cwd()).toEqual({ cwd: join(root, 'gone/inner'), projectRoot: join(root, 'gone/inner'), depth: 2 })
    mkdirSync(join(root, 'gone'))
    expect((await ws.call('cwd_pop', {})).output).toContain(`Popped to ${join(root, 'gone')} (stack depth: 1)`)
  })

  it('push to a file is NOT_A_DIRECTORY; to a missing directory NOT_FOUND; the stack is unchanged', async () => {
    const { ws, root } = tempWorkspace()
    writeTree(root, { 'f.txt': '' })
    const file = await ws.call('cwd_push', { path: 'f.txt' })
    expect(file).toMatchObject({ status: 'error', code: 'NOT_A_DIRECTORY' })
    expect(file.output).toContain(join(root, 'f.txt'))
    const missing = await ws.call('cwd_push', { path: 'nope' })
    expect(missing).toMatchObject({ status: 'error', code: 'NOT_FOUND' })
    expect(ws.cwd()).toEqual({ cwd: root, projectRoot: root, depth: 0 })
  })

  it('push outside allowedPaths is PATH_NOT_ALLOWED; cwd tools never ask', async () => {
    const { root, dataDir } = tempWorkspaceDirs()
    const outside = siblingDir(root)
    const confirm = vi.fn<ConfirmHandler>(() => true)
    const ws = new Workspace({ root, allowedPaths: [root], trash: { dataDir }, confirm, permissions: { cwdReadFile: false } })
    const result = await ws.call('cwd_push', { path: outside })
    expect(result).toMatchObject({ status: 'error', code: 'PATH_NOT_ALLOWED' })
    expect((await ws.call('cwd_push', { path: '..' })).code).toBe('PATH_NOT_ALLOWED')
    expect(ws.cwd().depth).toBe(0)
    mkdirSync(join(root, 'in'))
    expect((await ws.call('cwd_push', { path: 'in' })).status).toBe('ok')
    expect((await ws.call('cwd_get', {})).status).toBe('ok')
    expect((await ws.call('cwd_pop', {})).status).toBe('ok')
    expect(confirm).not.toHaveBeenCalled()
  })

  it('without allowedPaths a push may leave root', async () => {
    const { ws, root } = tempWorkspace()
    const outside = siblingDir(root)
    const result = await ws.call('cwd_push', { path: '../outside' })
    expect(result.output).toContain(`Pushed to ${outside} (stack depth: 1)`)
  })

  it.each([[{}], [{ path: 1 }], [{ path: '' }], [{ path: 'a', extra: true }]])(
    'cwd_push %j is INVALID_ARGUMENTS',
    async (args) => {
      const { ws } = tempWorkspace()
      expect(await ws.call('cwd_push' as string, args)).toMatchObject({ status: 'error', code: 'INVALID_ARGUMENTS' })
    },
  )

  it('cwd_pop with arguments is INVALID_ARGUMENTS and does not pop', async () => {
    const { ws, root } = tempWorkspace()
    mkdirSync(join(root, 's'))
    await ws.call('cwd_push', { path: 's' })
    expect(await ws.call('cwd_pop' as string, { path: '..' })).toMatchObject({ status: 'error', code: 'INVALID_ARGUMENTS' })
    expect(ws.cwd().depth).toBe(1)
  })
})

describe('cwd_pop to a directory that changed (issue 15.10)', () => {
  it('a saved directory that became a link to outside: refused, the stack and ws.cwd() unchanged', async () => {
    const { root, dataDir } = tempWorkspaceDirs()
    const ws = new Workspace({ root, allowedPaths: [root], trash: { dataDir } })
    const outside = siblingDir(root)
    mkdirSync(join(root, 'a/b'), { recursive: true })
    expect((await ws.call('cwd_push', { path: 'a' })).status).toBe('ok')
    expect((await ws.call('cwd_push', { path: 'b' })).status).toBe('ok')
    renameSync(join(root, 'a'), join(root, 'a.moved'))
    symlinkOrSkip(outside, join(root, 'a'))
    const before = ws.cwd()
    const popped = await ws.call('cwd_pop', {})
    expect(popped).toMatchObject({ status: 'error', code: 'PATH_NOT_ALLOWED' })
    expect(popped.output).toContain('the stack is unchanged (depth 2)')
    expect(ws.cwd()).toEqual(before)
  })
})

describe('relative paths follow the pushed cwd', () => {
  it('every tool resolves relative paths against the top of the stack, never process.cwd()', async () => {
    const processCwd = process.cwd()
    const { ws, root } = tempWorkspace({ permissions: { cwdWriteFile: true } })
    writeTree(root, { 'sub/here.txt': 'in sub\n', 'here.txt': 'in root\n' })
    await ws.call('cwd_push', { path: 'sub' })
    const sub = join(root, 'sub')

    expect((await ws.call('read_file', { path: 'here.txt' })).output).toBe(numbered(1, 'in sub'))
    expect((await ws.call('read_file', { path: '../here.txt' })).output).toBe(numbered(1, 'in root'))

    expect((await ws.call('write_file', { path: 'w.txt', content: 'w' })).status).toBe('ok')
    expect(read(join(sub, 'w.txt'))).toBe('w')

    expect((await ws.call('append_file', { path: 'w.txt', content: '+a' })).status).toBe('ok')
    expect(read(join(sub, 'w.txt'))).toBe('w+a')

    expect((await ws.call('edit_file', { path: 'w.txt', edits: [{ oldString: '+a', newString: '+e' }] })).status).toBe('ok')
    expect(read(join(sub, 'w.txt'))).toBe('w+e')

    expect((await ws.call('create_directory', { path: 'made' })).status).toBe('ok')
    expect(existsSync(join(sub, 'made'))).toBe(true)
    expect(existsSync(join(root, 'made'))).toBe(false)

    const listing = await ws.call('list_directory', {})
    expect(listing.output.split('\n').map((l) => l.split(' ')[0])).toEqual(['here.txt', 'made/', 'w.txt'])
    const dot = await ws.call('list_directory', { path: '.' })
    expect(dot.output).toBe(listing.output)

    await ws.call('cwd_pop', {})
    expect((await ws.call('read_file', { path: 'here.txt' })).output).toBe(numbered(1, 'in root'))
    expect(existsSync(join(root, 'w.txt'))).toBe(false)
    expect(process.cwd()).toBe(processCwd)
  })

  it('ws.cwd() and process.cwd(): pushes never change the process cwd', async () => {
    const before = process.cwd()
    const { ws, root } = tempWorkspace()
    mkdirSync(join(root, 'x'))
    await ws.call('cwd_push', { path: 'x' })
    expect(ws.cwd()).toEqual({ cwd: join(root, 'x'), projectRoot: join(root, 'x'), depth: 1 })
    expect(process.cwd()).toBe(before)
  })

  it('two workspaces have independent stacks', async () => {
    const a = tempWorkspace()
    const b = tempWorkspace()
    mkdirSync(join(a.root, 'sub'))
    await a.ws.call('cwd_push', { path: 'sub' })
    expect(a.ws.cwd().depth).toBe(1)
    expect(b.ws.cwd()).toEqual({ cwd: b.root, projectRoot: b.root, depth: 0 })
  })
})
