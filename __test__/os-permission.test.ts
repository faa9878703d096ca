/**
 * OS_PERMISSION: what the operating system refuses comes back as a ToolResult, never a rejection.
 * Tests run as root here, so the calls run in a child process as `nobody` (uid 65534).
 */
import { spawnSync } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import type { ToolResult } from 'agent-fs-tools'
import { tempWorkspace, tempWorkspaceDirs } from './helpers/temp.js'
import { read } from './helpers/files.js'
import { scaled } from './helpers/time.js'
import { NO_UNIX_MODES, skipOnWindows } from './helpers/skip.js'

const asRoot = process.getuid?.() === 0

/**
 * Runs `calls` on a fresh Workspace over `root` in a child process (as `nobody` when we are root);
 * with `approve`, every prompt is answered yes.
 */
function callsAsUnprivileged(root: string, calls: Array<[string, unknown]>, approve = false): ToolResult[] {
  const script = `
    import { Workspace } from 'agent-fs-tools'
    const ws = new Workspace({
      ...${JSON.stringify({ root, trash: { dataDir: join(root, '.data') }, permissions: { cwdWriteFile: true } })},
      ${approve ? 'confirm: () => true,' : ''}
    })
    const out = []
    for (const [tool, args] of ${JSON.stringify(calls)}) out.push(await ws.call(tool, args))
    process.stdout.write(JSON.stringify(out))
  `
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: process.cwd(),
    encoding: 'utf8',
    timeout: scaled(20_000),
    ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
  })
  expect(result.status, result.stderr).toBe(0)
  return JSON.parse(result.stdout) as ToolResult[]
}

// Every test here takes access away with chmod.
beforeEach(() => skipOnWindows(NO_UNIX_MODES))

describe('OS_PERMISSION', () => {
  it('unreadable files and unwritable directories give OS_PERMISSION naming the path, nothing changes', () => {
    const { root } = tempWorkspaceDirs()
    chmodSync(dirname(root), 0o755)
    chmodSync(root, 0o777)
    writeFileSync(join(root, 'private.txt'), 'p')
    chmodSync(join(root, 'private.txt'), 0o000)
    mkdirSync(join(root, 'locked'))
    chmodSync(join(root, 'locked'), 0o555)
    const results = callsAsUnprivileged(root, [
      ['read_file', { path: 'private.txt' }],
      ['append_file', { path: 'private.txt', content: 'x' }],
      ['write_file', { path: 'locked/new.txt', content: 'x' }],
      ['append_file', { path: 'locked/new.txt', content: 'x' }],
      ['create_directory', { path: 'locked/sub' }],
    ])
    const paths = ['private.txt', 'private.txt', 'locked/new.txt', 'locked/new.txt', 'locked/sub']
    results.forEach((result, i) => {
      expect(result, paths[i]).toMatchObject({ status: 'error', code: 'OS_PERMISSION' })
      expect(result.output).toContain(join(root, paths[i]!))
    })
    chmodSync(join(root, 'private.txt'), 0o600)
    expect(read(join(root, 'private.txt'))).toBe('p')
    expect(existsSync(join(root, 'locked/new.txt'))).toBe(false)
    expect(existsSync(join(root, 'locked/sub'))).toBe(false)
  })
})

describe('a recursive removal stopped by an unwritable folder', () => {
  it('puts back what it removed, says what stopped it, and works on the first try once the folder is writable', () => {
    const { root } = tempWorkspaceDirs()
    chmodSync(dirname(root), 0o755)
    chmodSync(root, 0o777)
    const files = { 'proj/a.txt': 'a', 'proj/b/c.txt': 'c', 'proj/locked/x.txt': 'x', 'proj/z.txt': 'z' }
    for (const [rel, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, rel)), { recursive: true })
      writeFileSync(join(root, rel), text)
    }
    if (asRoot) for (const rel of ['proj', 'proj/b', 'proj/locked', ...Object.keys(files)]) chownSync(join(root, rel), 65534, 65534)
    chmodSync(join(root, 'proj/locked'), 0o555)
    const [removed, listed] = callsAsUnprivileged(
      root,
      [
        ['remove_dir', { path: 'proj', recursive: true }],
        ['trash_list', {}],
      ],
      true,
    )
    expect(removed).toMatchObject({ status: 'error', code: 'OS_PERMISSION' })
    expect(removed!.output).toContain(`${join(root, 'proj')} was not removed: cannot remove ${join(root, 'proj/locked/x.txt')}`)
    expect(removed!.output).toContain('is as it was and nothing of it is in the trash')
    for (const [rel, text] of Object.entries(files)) expect(read(join(root, rel)), rel).toBe(text)
    expect(listed!.data!.total).toBe(0)

    chmodSync(join(root, 'proj/locked'), 0o755)
    const [again] = callsAsUnprivileged(root, [['remove_dir', { path: 'proj', recursive: true }]], true)
    expect(again, again!.output).toMatchObject({ status: 'ok' })
    expect(existsSync(join(root, 'proj'))).toBe(false)
    const [back] = callsAsUnprivileged(root, [['restore_file', { trashedPath: again!.data!.trashedTo }]], true)
    expect(back, back!.output).toMatchObject({ status: 'ok' })
    for (const [rel, text] of Object.entries(files)) expect(read(join(root, rel)), rel).toBe(text)
  })
})

describe('read-only files', () => {
  it('write_file and edit_file refuse a file the user may not write, as append_file does; nothing changes', () => {
    const { root } = tempWorkspaceDirs()
    chmodSync(dirname(root), 0o755)
    // The directory is writable: a rename over the file would succeed without this rule.
    chmodSync(root, 0o777)
    writeFileSync(join(root, 'mine-read-only.txt'), 'protected\n')
    chmodSync(join(root, 'mine-read-only.txt'), 0o444)
    if (asRoot) chownSync(join(root, 'mine-read-only.txt'), 65534, 65534)
    const calls: Array<[string, unknown]> = [
      ['write_file', { path: 'mine-read-only.txt', content: 'replaced\n' }],
      ['edit_file', { path: 'mine-read-only.txt', edits: [{ oldString: 'protected', newString: 'edited' }] }],
      ['append_file', { path: 'mine-read-only.txt', content: 'more\n' }],
    ]
    const paths = ['mine-read-only.txt', 'mine-read-only.txt', 'mine-read-only.txt']
    if (asRoot) {
      // Someone else's file, readable but not writable by the caller.
      writeFileSync(join(root, 'root-owned.txt'), 'root only\n')
      chmodSync(join(root, 'root-owned.txt'), 0o644)
      calls.push(
        ['write_file', { path: 'root-owned.txt', content: 'replaced\n' }],
        ['edit_file', { path: 'root-owned.txt', edits: [{ oldString: 'root', newString: 'anyone' }] }],
      )
      paths.push('root-owned.txt', 'root-owned.txt')
    }
    const results = callsAsUnprivileged(root, calls)
    results.forEach((result, i) => {
      expect(result, `${calls[i]![0]} ${paths[i]}`).toMatchObject({ status: 'error', code: 'OS_PERMISSION' })
      expect(result.output).toContain(join(root, paths[i]!))
    })
    expect(results[0]!.output).toContain('is read-only (mode 0444); nothing was written')
    expect(read(join(root, 'mine-read-only.txt'))).toBe('protected\n')
    if (asRoot) expect(read(join(root, 'root-owned.txt'))).toBe('root only\n')
  })

  it('a file without any write bit is refused by write_file, edit_file and append_file, even as root', async () => {
    const { ws, root } = tempWorkspace({ permissions: { cwdWriteFile: true } })
    const file = join(root, 'generated.txt')
    writeFileSync(file, 'do not edit\n')
    chmodSync(file, 0o444)
    const calls: Array<[string, Record<string, unknown>]> = [
      ['write_file', { path: 'generated.txt', content: 'replaced\n' }],
      ['edit_file', { path: 'generated.txt', edits: [{ oldString: 'not', newString: 'now' }] }],
      ['append_file', { path: 'generated.txt', content: 'more\n' }],
    ]
    for (const [tool, args] of calls) {
      const result = await ws.call(tool, args)
      expect(result, tool).toMatchObject({ status: 'error', code: 'OS_PERMISSION' })
      expect(result.output).toBe(
        `${file} is read-only (mode 0444); nothing was written. If it should change, ask the user to make it writable (e.g. chmod u+w)`,
      )
    }
    expect(read(file)).toBe('do not edit\n')
  })
})
