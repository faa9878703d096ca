/**
 * macOS facts, as far as Linux can make them (../docs/platforms.md, issue 17 item 4):
 *
 * - temp directories are reached through a symlink (`/tmp` → `/private/tmp`, `/var` →
 *   `/private/var`): a root, an allowed tree and a data directory given through one work, and are
 *   known by their canonical paths;
 * - one directory can have several paths (firmlinks: `/Users` is also
 *   `/System/Volumes/Data/Users`; on Linux, bind mounts): the data directory and the root are
 *   recognised by device and inode under any of them.
 *
 * (Case-insensitive volumes cannot be made on this kernel; `src/paths/canonical.rs` tests how a
 * stored name replaces a typed one.)
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { Workspace, type ToolResult } from 'agent-fs-tools'
import { bucketDir } from './helpers/trash.js'
import { symlinkOrSkip } from './helpers/links.js'

const ALL_GRANTED = {
  cwdReadFile: true,
  cwdWriteFile: true,
  cwdRemoveFile: true,
  cwdRemoveDir: true,
  globalReadFile: true,
  globalWriteFile: true,
  globalRemoveFile: true,
  globalRemoveDir: true,
}

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup()
})

/** A fresh canonical temporary directory, removed after the test. */
function tempBase(): string {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'afs-platform-')))
  cleanups.push(() => rmSync(base, { recursive: true, force: true }))
  return base
}

function ok(result: ToolResult, label: string): ToolResult {
  expect(result.status, `${label}: ${result.output}`).toBe('ok')
  return result
}

describe('a temp directory reached through a symlink (macOS: /tmp → /private/tmp)', () => {
  it('works as root, allowed tree and data directory, known by the canonical path', async () => {
    const base = tempBase()
    const real = join(base, 'private', 'tmp')
    mkdirSync(join(real, 'w'), { recursive: true })
    symlinkOrSkip(real, join(base, 'tmp'))
    const rootViaLink = join(base, 'tmp', 'w')
    const realRoot = join(real, 'w')
    const ws = new Workspace({
      root: rootViaLink,
      allowedPaths: [rootViaLink],
      trash: { dataDir: join(rootViaLink, '.afs') },
      permissions: ALL_GRANTED,
      confirm: () => true,
    })

    expect(ws.cwd().cwd).toBe(realRoot)
    ok(await ws.call('write_file', { path: 'a.txt', content: 'one\n' }), 'write')
    for (const path of ['a.txt', join(rootViaLink, 'a.txt'), join(realRoot, 'a.txt')]) {
      expect(ok(await ws.call('read_file', { path }), path).output).toContain('one')
    }
    ok(await ws.call('write_file', { path: join(rootViaLink, 'a.txt'), content: 'two\n' }), 'overwrite')
    const deleted = ok(await ws.call('delete_file', { path: join(rootViaLink, 'a.txt') }), 'delete')
    const archive = deleted.data?.trashedTo as string
    // The bucket is named by the canonical root, and lives in the canonical data directory.
    expect(archive.startsWith(bucketDir(join(realRoot, '.afs'), realRoot) + '/')).toBe(true)
    ok(await ws.call('restore_file', { trashedPath: archive }), 'restore')
    expect(ok(await ws.call('read_file', { path: 'a.txt' }), 'restored').output).toContain('two')

    // The data directory stays hidden under both names.
    const audit = join('.afs', 'audit')
    for (const path of [join(rootViaLink, audit), join(realRoot, audit), audit]) {
      const listed = await ws.call('list_directory', { path })
      expect(listed.code, path).toBe('PATH_NOT_ALLOWED')
    }
    const everything = ok(await ws.call('list_directory', { recursive: true }), 'list').output
    expect(everything).not.toContain('.afs')
    const found = ok(await ws.call('grep', { pattern: 'delete_file' }), 'grep').output
    expect(found).not.toContain('.afs')

    // The root through the link is the root; the link itself is not an ancestor of it.
    for (const path of [rootViaLink, real]) {
      const removed = await ws.call('remove_dir', { path, recursive: true })
      expect(removed.code, path).toBe('DANGEROUS_PATH')
    }
  })
})

/** Mounts `from` at the new directory `at` (a bind mount: a second path to the same tree). */
function bindMount(from: string, at: string): boolean {
  mkdirSync(at)
  try {
    execFileSync('mount', ['--bind', from, at], { stdio: 'ignore' })
  } catch {
    return false
  }
  cleanups.push(() => execFileSync('umount', [at], { stdio: 'ignore' }))
  return true
}

describe('one directory under two paths (macOS: firmlinks; Linux: bind mounts)', () => {
  it('the data directory and the root are recognised under the other path', async (context) => {
    const base = tempBase()
    const root = join(base, 'root')
    const dataDir = join(root, '.afs')
    mkdirSync(root)
    // No allowedPaths: every path is reachable, the other path to the root included.
    const ws = new Workspace({ root, trash: { dataDir }, permissions: ALL_GRANTED, confirm: () => true })
    ok(await ws.call('write_file', { path: 'notes.txt', content: 'secret plans\n' }), 'write')
    ok(await ws.call('write_file', { path: 'notes.txt', content: 'public plans\n' }), 'overwrite')
    const alias = join(base, 'alias')
    if (!bindMount(root, alias)) {
      context.skip('a bind mount is not possible here (not root)')
      return
    }
    const bucket = bucketDir(join(alias, '.afs'), root)
    const [archived] = readdirSync(bucket)
    expect(archived, 'the overwrite was trashed').toBeDefined()
    const archive = join(bucket, archived ?? '')

    for (const [tool, args] of [
      ['read_file', { path: archive }],
      ['list_directory', { path: join(alias, '.afs') }],
      ['write_file', { path: join(alias, '.afs', 'planted'), content: 'x' }],
      ['delete_file', { path: archive }],
      ['remove_dir', { path: bucket, recursive: true }],
      ['move_file', { source: archive, destination: join(alias, 'taken.tar.gz') }],
      ['glob', { pattern: '**/*', path: join(alias, '.afs') }],
    ] as const) {
      const result = await ws.call(tool, args)
      expect(result.status, `${tool}: ${result.output}`).toBe('error')
      expect(['PATH_NOT_ALLOWED', 'DANGEROUS_PATH'], `${tool}: ${result.output}`).toContain(result.code)
    }
    // Walking or listing the other path to the root shows nothing of the data directory.
    writeFileSync(join(root, 'visible.txt'), 'plans\n')
    const listed = ok(await ws.call('list_directory', { path: alias }), 'list').output
    expect(listed).toContain('visible.txt')
    expect(listed).not.toContain('.afs')
    const walked = ok(await ws.call('list_directory', { path: alias, recursive: true }), 'walk').output
    expect(walked).not.toContain('.afs')
    const searched = ok(await ws.call('grep', { pattern: 'plans', path: alias, includeIgnored: true }), 'grep').output
    expect(searched).toContain('visible.txt')
    expect(searched).not.toContain('.afs')
    expect(searched).not.toContain('secret')
    // The root under its other path cannot be removed or replaced.
    expect((await ws.call('remove_dir', { path: alias, recursive: true })).code).toBe('DANGEROUS_PATH')
    const replaced = await ws.call('move_file', { source: join(root, 'visible.txt'), destination: alias, overwrite: true })
    expect(replaced.code, replaced.output).toBe('DANGEROUS_PATH')
  })
})
