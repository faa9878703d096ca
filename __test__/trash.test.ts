/**
 * The trash (../docs/trash.md): bucket and archive format, listing, clearing, the trash_list tool,
 * overwrites kept by write_file, name collisions, faults, and the audit log of the
 * destructive tools.
 */
import { appendFileSync, chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import type { ConfirmHandler } from 'agent-fs-tools'
import { tempWorkspace } from './helpers/temp.js'
import { auditLines, read, siblingDir, sleep, writeTree } from './helpers/files.js'
import { ALL, archiveNames, bucketDir, bucketNames, sha256, snapshot, systemTar, tarExtract, tarList, tarMetadata } from './helpers/trash.js'
import { symlinkOrSkip } from './helpers/links.js'

const ids = { sessionId: 'sess-abcdefghij', runId: 'run-0123456789', agentName: 'tester' }

describe('archive format (../docs/trash.md#where, ../docs/trash.md#archive-format)', () => {
  it('bucket is <dataDir>/trash/<sha256(root)>; name is <timestamp>-<session8>-<run8>-<unique>-<basename>.tar.gz', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL, trash: ids })
    writeTree(root, { 'src/notes.md': 'notes\n' })
    const t0 = Date.now()
    const archive = (await ws.call('delete_file', { path: 'src/notes.md' })).data!.trashedTo as string
    expect(dirname(archive)).toBe(join(dataDir, 'trash', sha256(root)))
    expect(sha256(root)).toMatch(/^[0-9a-f]{64}$/)
    const m = /^(\d{8}T\d{9}Z)-sess-abc-run-0123-([0-9A-Za-z]+)-notes\.md\.tar\.gz$/.exec(basename(archive))
    expect(m, basename(archive)).not.toBeNull()
    const meta = tarMetadata(archive)
    // The timestamp is the compact form of trashedAt (UTC).
    expect(m![1]).toBe((meta.trashedAt as string).replace(/[-:.]/g, ''))
    const when = Date.parse(meta.trashedAt as string)
    expect(when).toBeGreaterThanOrEqual(t0 - 1000)
    expect(when).toBeLessThanOrEqual(Date.now() + 1000)
    expect(meta.trashedAt as string).toMatch(/Z$/)
  })

  it('metadata.json is the first entry, with every field; the content sits at its workspace-relative path', async () => {
    const { ws, root } = tempWorkspace({ permissions: ALL, trash: ids })
    writeTree(root, { 'src/a/b.txt': 'bee\n' })
    chmodSync(join(root, 'src/a/b.txt'), 0o640)
    const archive = (await ws.call('delete_file', { path: 'src/a/b.txt' })).data!.trashedTo as string
    expect(tarList(archive)).toEqual(['metadata.json', 'src/a/b.txt'])
    const meta = tarMetadata(archive)
    expect(Object.keys(meta).sort()).toEqual(
      ['agentName', 'kind', 'mode', 'originalPath', 'originalSha256', 'relativePath', 'runId', 'sessionId', 'size', 'trashedAt'].sort(),
    )
    expect(meta).toEqual({
      sessionId: ids.sessionId,
      runId: ids.runId,
      agentName: ids.agentName,
      trashedAt: expect.any(String),
      originalPath: join(root, 'src/a/b.txt'),
      relativePath: 'src/a/b.txt',
      kind: 'file',
      originalSha256: sha256('bee\n'),
      size: 4,
      mode: 0o640,
    })
    const out = mkdtempSync(join(tmpdir(), 'afs-x-'))
    try {
      tarExtract(archive, out)
      expect(read(join(out, 'src/a/b.txt'))).toBe('bee\n')
      expect(statSync(join(out, 'src/a/b.txt')).mode & 0o7777).toBe(0o640)
    } finally {
      rmSync(out, { recursive: true, force: true })
    }
  })

  it('a directory: kind directory, fileCount, size over the tree; entries under its relative path; tar extracts the tree', async () => {
    const { ws, root } = tempWorkspace({ permissions: ALL, trash: ids, confirm: () => true })
    writeTree(root, { 'pkg/a.txt': 'aa', 'pkg/sub/b.txt': 'bbb' })
    mkdirSync(join(root, 'pkg/empty'))
    symlinkOrSkip('a.txt', join(root, 'pkg/link'))
    const before = snapshot(join(root, 'pkg'))
    const archive = (await ws.call('remove_dir', { path: 'pkg', recursive: true })).data!.trashedTo as string
    const meta = tarMetadata(archive)
    expect(meta).toMatchObject({ kind: 'directory', relativePath: 'pkg', fileCount: 2, size: 5, originalPath: join(root, 'pkg') })
    expect(meta.originalSha256).toMatch(/^[0-9a-f]{64}$/)
    const entries = tarList(archive)
    expect(entries[0]).toBe('metadata.json')
    expect(entries.slice(1).every((e) => e === 'pkg' || e === 'pkg/' || e.startsWith('pkg/'))).toBe(true)
    const out = mkdtempSync(join(tmpdir(), 'afs-x-'))
    try {
      tarExtract(archive, out)
      const extracted = snapshot(join(out, 'pkg'))
      const strip = (s: typeof before) => Object.fromEntries(Object.entries(s).map(([k, v]) => [k, { ...v, mtimeNs: undefined }]))
      expect(strip(extracted)).toEqual(strip(before))
    } finally {
      rmSync(out, { recursive: true, force: true })
    }
  })

  it('a symlink: kind symlink, the link entry, digest of the target text', async () => {
    const { ws, root } = tempWorkspace({ permissions: ALL, trash: ids })
    symlinkOrSkip('some/where.txt', join(root, 'l'))
    const archive = (await ws.call('delete_file', { path: 'l' })).data!.trashedTo as string
    expect(tarMetadata(archive)).toMatchObject({ kind: 'symlink', size: 'some/where.txt'.length, originalSha256: sha256('some/where.txt') })
    const verbose = systemTar(['-tvzf', archive])
    expect(verbose).toMatch(/^l.* l -> some\/where\.txt$/m)
  })

  it('outside root: the content is under absolute/<absolute path>', async () => {
    const { ws, root } = tempWorkspace({ permissions: ALL, trash: ids })
    const outside = siblingDir(root)
    writeFileSync(join(outside, 'o.txt'), 'o')
    const archive = (await ws.call('delete_file', { path: join(outside, 'o.txt') })).data!.trashedTo as string
    const rel = `absolute/${join(outside, 'o.txt').slice(1)}`
    expect(tarMetadata(archive)).toMatchObject({ relativePath: rel, originalPath: join(outside, 'o.txt') })
    expect(tarList(archive)).toEqual(['metadata.json', rel])
  })

  it('ids are truncated to 8 characters in the name but kept whole in the metadata', async () => {
    const { ws, root } = tempWorkspace({ permissions: ALL, trash: { sessionId: 'S1234567890', runId: 'R1234567890', agentName: 'agent-x' } })
    writeTree(root, { 'a.txt': 'a' })
    const archive = (await ws.call('delete_file', { path: 'a.txt' })).data!.trashedTo as string
    expect(basename(archive)).toMatch(/^\d{8}T\d{9}Z-S1234567-R1234567-[0-9A-Za-z]+-a\.txt\.tar\.gz$/)
    expect(tarMetadata(archive)).toMatchObject({ sessionId: 'S1234567890', runId: 'R1234567890', agentName: 'agent-x' })
  })

  it('same-named files trashed in a tight loop get distinct archives', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL, trash: ids })
    const archives: string[] = []
    for (let i = 0; i < 20; i++) {
      writeFileSync(join(root, 'same.txt'), `v${i}`)
      archives.push((await ws.call('delete_file', { path: 'same.txt' })).data!.trashedTo as string)
    }
    expect(new Set(archives).size).toBe(20)
    expect(archiveNames(dataDir, root)).toHaveLength(20)
  })
})

describe('collisions', () => {
  it('200 same-basename files in different dirs trashed concurrently: 200 distinct archives, all restorable', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL, trash: ids })
    const rels = Array.from({ length: 200 }, (_, i) => `d${i}/same.txt`)
    writeTree(root, Object.fromEntries(rels.map((rel, i) => [rel, `content ${i}\n`])))
    const deleted = await Promise.all(rels.map((path) => ws.call('delete_file', { path })))
    expect(deleted.map((r) => r.status)).toEqual(rels.map(() => 'ok'))
    const archives = deleted.map((r) => r.data!.trashedTo as string)
    expect(new Set(archives).size).toBe(200)
    expect(archiveNames(dataDir, root)).toHaveLength(200)
    expect(bucketNames(dataDir, root)).toHaveLength(200) // no temp files left behind
    for (const rel of rels) expect(existsSync(join(root, rel))).toBe(false)
    expect(await ws.trashList()).toHaveLength(200)

    const restored = await Promise.all(archives.map((trashedPath) => ws.call('restore_file', { trashedPath })))
    expect(restored.map((r) => r.status)).toEqual(rels.map(() => 'ok'))
    rels.forEach((rel, i) => expect(read(join(root, rel))).toBe(`content ${i}\n`))
    expect(bucketNames(dataDir, root)).toEqual([])
  })
})

describe('ws.trashList()', () => {
  it('is empty before anything was trashed (no bucket yet)', async () => {
    const { ws, root, dataDir } = tempWorkspace()
    expect(await ws.trashList()).toEqual([])
    expect(existsSync(bucketDir(dataDir, root))).toBe(false)
  })

  it('lists newest first with archive and original paths, kind, size, time and ids', async () => {
    const { ws, root } = tempWorkspace({ permissions: ALL, trash: ids, confirm: () => true })
    writeTree(root, { 'first.txt': '1', 'second.txt': '22', 'third/x.txt': '333' })
    const a1 = (await ws.call('delete_file', { path: 'first.txt' })).data!.trashedTo as string
    await sleep(5)
    const a2 = (await ws.call('delete_file', { path: 'second.txt' })).data!.trashedTo as string
    await sleep(5)
    const a3 = (await ws.call('remove_dir', { path: 'third', recursive: true })).data!.trashedTo as string
    const list = await ws.trashList()
    expect(list.map((e) => e.archivePath)).toEqual([a3, a2, a1])
    expect(list[2]).toMatchObject({
      archivePath: a1,
      originalPath: join(root, 'first.txt'),
      relativePath: 'first.txt',
      kind: 'file',
      size: 1,
      ...ids,
    })
    expect(list[0]).toMatchObject({ kind: 'directory', fileCount: 1, size: 3, originalPath: join(root, 'third') })
    expect(Date.parse(list[0]!.trashedAt)).toBeGreaterThan(Date.parse(list[2]!.trashedAt))
  })

  it('skips garbage in the bucket: foreign files, corrupt archives, temp files, directories', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL, trash: ids })
    writeTree(root, { 'a.txt': 'a' })
    const real = (await ws.call('delete_file', { path: 'a.txt' })).data!.trashedTo as string
    const bucket = bucketDir(dataDir, root)
    writeFileSync(join(bucket, '20990101T000000000Z-x-y-000000000000-junk.tar.gz'), 'not gzip at all')
    writeFileSync(join(bucket, '20990101T000000000Z-x-y-000000000001-half.tar.gz'), readFileSync(real).subarray(0, 20))
    writeFileSync(join(bucket, 'README.txt'), 'hello')
    writeFileSync(join(bucket, '.content-123.partial'), 'in flight')
    mkdirSync(join(bucket, 'dir.tar.gz'))
    symlinkOrSkip(real, join(bucket, '20990101T000000000Z-x-y-000000000002-link.tar.gz'))
    const list = await ws.trashList()
    expect(list.map((e) => e.archivePath)).toEqual([real])
    const tool = await ws.call('trash_list', {})
    expect(tool.status).toBe('ok')
    expect(tool.output).toContain(real)
    expect(tool.output).not.toContain('junk')
    expect(tool.output).not.toContain('README')
  })

  it('two workspaces on the same data dir see only their own bucket', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL })
    const otherRoot = siblingDir(root, 'other-root')
    const { Workspace } = await import('agent-fs-tools')
    const other = new Workspace({ root: otherRoot, trash: { dataDir }, permissions: ALL })
    writeTree(root, { 'a.txt': 'a' })
    writeFileSync(join(otherRoot, 'b.txt'), 'b')
    await ws.call('delete_file', { path: 'a.txt' })
    await other.call('delete_file', { path: 'b.txt' })
    expect((await ws.trashList()).map((e) => e.originalPath)).toEqual([join(root, 'a.txt')])
    expect((await other.trashList()).map((e) => e.originalPath)).toEqual([join(otherRoot, 'b.txt')])
  })
})

describe('ws.trashClear()', () => {
  it('removes archives only: counts and bytes freed; foreign and temp files stay', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL })
    writeTree(root, { 'a.txt': 'a'.repeat(1000), 'b.txt': 'b' })
    const a = (await ws.call('delete_file', { path: 'a.txt' })).data!.trashedTo as string
    const b = (await ws.call('delete_file', { path: 'b.txt' })).data!.trashedTo as string
    const bytes = statSync(a).size + statSync(b).size
    const bucket = bucketDir(dataDir, root)
    writeFileSync(join(bucket, 'README.txt'), 'keep me')
    writeFileSync(join(bucket, '.content-1.partial'), 'in flight')
    await sleep(20) // archives must be older than the clear's start on the filesystem clock
    const result = await ws.trashClear()
    expect(result).toEqual({ cleared: 2, bytesFreed: bytes })
    expect(bucketNames(dataDir, root)).toEqual(['.content-1.partial', 'README.txt'])
    expect(await ws.trashList()).toEqual([])
    expect(await ws.trashClear()).toEqual({ cleared: 0, bytesFreed: 0 })
  })

  it('never touches the workspace files or the audit log', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL })
    writeTree(root, { 'a.txt': 'a', 'keep.txt': 'k' })
    await ws.call('delete_file', { path: 'a.txt' })
    const auditBefore = auditLines(dataDir, root).length
    await sleep(20)
    await ws.trashClear()
    expect(read(join(root, 'keep.txt'))).toBe('k')
    expect(auditLines(dataDir, root)).toHaveLength(auditBefore)
  })

  it('with no bucket yet: nothing to clear', async () => {
    const { ws } = tempWorkspace()
    expect(await ws.trashClear()).toEqual({ cleared: 0, bytesFreed: 0 })
    expect(await ws.trashClear({ olderThanMs: 1000 })).toEqual({ cleared: 0, bytesFreed: 0 })
  })

  it('olderThanMs: only archives trashed at least that long ago', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL })
    writeTree(root, { 'old.txt': 'old', 'new.txt': 'new' })
    const old = (await ws.call('delete_file', { path: 'old.txt' })).data!.trashedTo as string
    await sleep(1200)
    const fresh = (await ws.call('delete_file', { path: 'new.txt' })).data!.trashedTo as string
    await sleep(20)
    expect(await ws.trashClear({ olderThanMs: 60_000 })).toEqual({ cleared: 0, bytesFreed: 0 })
    const result = await ws.trashClear({ olderThanMs: 1000 })
    expect(result).toEqual({ cleared: 1, bytesFreed: expect.any(Number) })
    expect(result.bytesFreed).toBeGreaterThan(0)
    expect(existsSync(old)).toBe(false)
    expect(archiveNames(dataDir, root)).toEqual([basename(fresh)])
    expect((await ws.call('restore_file', { trashedPath: fresh })).status).toBe('ok')
  })

  it('is safe beside concurrent trashing and listing: every delete succeeds, nothing half-written is cleared', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL })
    const rels = Array.from({ length: 60 }, (_, i) => `f${i}.txt`)
    writeTree(root, Object.fromEntries(rels.map((rel) => [rel, `${rel}\n`.repeat(500)])))
    const deletes = rels.map((path) => ws.call('delete_file', { path }))
    const [clears, lists, results] = await Promise.all([
      Promise.all([sleep(2).then(() => ws.trashClear()), sleep(10).then(() => ws.trashClear())]),
      Promise.all([ws.trashList(), sleep(5).then(() => ws.trashList())]),
      Promise.all(deletes),
    ])
    expect(results.map((r) => r.status)).toEqual(rels.map(() => 'ok'))
    for (const list of lists) for (const entry of list) expect(entry.kind).toBe('file')
    const cleared = clears[0]!.cleared + clears[1]!.cleared
    const remaining = archiveNames(dataDir, root)
    expect(cleared + remaining.length).toBe(60)
    expect(bucketNames(dataDir, root)).toEqual(remaining) // no temp files left
    for (const name of remaining) {
      const back = await ws.call('restore_file', { trashedPath: name })
      expect(back.status, back.output).toBe('ok')
    }
  })

  it('a clear looping beside recursive remove_dir calls never removes an archive before its call is done with it', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL, confirm: () => true })
    const bucket = bucketDir(dataDir, root)
    const trees = Array.from({ length: 20 }, (_, i) => `tree${i}`)
    for (const tree of trees) {
      const files: Record<string, string> = {}
      for (let d = 0; d < 8; d++) for (let f = 0; f < 30; f++) files[`${tree}/d${d}/f${f}.txt`] = `${tree} ${d} ${f}\n`.repeat(20)
      writeTree(root, files)
    }
    const expected = new Map(trees.map((tree) => [tree, snapshot(join(root, tree))]))
    let running = true
    let cleared = 0
    const clearing = (async () => {
      while (running) cleared += (await ws.trashClear()).cleared
    })()
    // A trash removes the original only after its archive is in place, and lets go of the
    // archive only after that: an archive that vanishes while (part of) its tree is still there
    // was cleared under a trash in flight. Watched from here, as the calls run.
    const seen = new Map<string, string>()
    const clearedInFlight: string[] = []
    const watching = (async () => {
      while (running) {
        const names = existsSync(bucket) ? readdirSync(bucket) : []
        for (const name of names) {
          const tree = /-(tree\d+)\.tar\.gz$/.exec(name)?.[1]
          if (tree !== undefined && !name.startsWith('.')) seen.set(tree, name)
        }
        for (const [tree, name] of seen) {
          if (!names.includes(name) && existsSync(join(root, tree)) && !clearedInFlight.includes(name)) clearedInFlight.push(name)
        }
        await new Promise((resolve) => setImmediate(resolve))
      }
    })()
    const reported = await Promise.all(
      trees.map(async (path) => {
        const result = await ws.call('remove_dir', { path, recursive: true })
        expect(result.status, result.output).toBe('ok')
        expect(result.output).toContain(result.data?.trashedTo as string)
        return result.data?.trashedTo as string
      }),
    )
    running = false
    await Promise.all([clearing, watching])
    expect(clearedInFlight, 'archives cleared while their trash was removing the tree').toEqual([])
    // Every reported archive is still there or was counted by a clear; what is left restores whole.
    const remaining = reported.filter((archive) => existsSync(archive))
    expect(cleared + remaining.length).toBe(trees.length)
    expect(archiveNames(dataDir, root)).toEqual(remaining.map((archive) => basename(archive)).sort())
    for (const archive of remaining) {
      const back = await ws.call('restore_file', { trashedPath: archive })
      expect(back.status, back.output).toBe('ok')
      const tree = back.data?.path as string
      expect(snapshot(tree)).toEqual(expected.get(basename(tree)))
    }
    console.log(`trashClear beside remove_dir: ${cleared} of ${trees.length} archives cleared once their call was done with them, ${seen.size} seen while the calls ran`)
  })

  it('rejects a bad olderThanMs with a TypeError', async () => {
    const { ws } = tempWorkspace()
    await expect(ws.trashClear({ olderThanMs: -1 })).rejects.toThrow(TypeError)
    await expect(ws.trashClear({ olderThanMs: 'x' as unknown as number })).rejects.toThrow(/olderThanMs/)
  })

  it('is not a tool', () => {
    const { ws } = tempWorkspace()
    expect(ws.definitions().map((d) => d.name)).not.toContain('trash_clear')
  })
})

describe('trash_list tool', () => {
  it('names each archive and its original path, kind, size and agent, newest first; never asks', async () => {
    const confirm = vi.fn(() => true)
    const { ws, root } = tempWorkspace({ permissions: { ...ALL }, trash: ids, confirm })
    writeTree(root, { 'a.txt': 'aaa', 'b.txt': 'bb' })
    const a = (await ws.call('delete_file', { path: 'a.txt' })).data!.trashedTo as string
    await sleep(5)
    const b = (await ws.call('delete_file', { path: 'b.txt' })).data!.trashedTo as string
    const noPerms = await ws.call('trash_list', {}, { permissions: { cwdReadFile: false } })
    expect(confirm).not.toHaveBeenCalled()
    expect(noPerms.status).toBe('ok')
    const out = noPerms.output
    expect(out).toContain(a)
    expect(out).toContain(b)
    expect(out).toContain(join(root, 'a.txt'))
    expect(out).toContain(join(root, 'b.txt'))
    expect(out).toContain('tester')
    expect(out).toContain('file')
    expect(out.indexOf(b)).toBeLessThan(out.indexOf(a))
    const entries = noPerms.data!.entries as unknown as Array<Record<string, unknown>>
    expect(entries.map((e) => e.archivePath)).toEqual([b, a])
    expect(entries[1]).toMatchObject({ originalPath: join(root, 'a.txt'), size: 3, kind: 'file' })
  })

  it('an empty trash says so; unknown arguments are INVALID_ARGUMENTS', async () => {
    const { ws } = tempWorkspace()
    const empty = await ws.call('trash_list', {})
    expect(empty.status).toBe('ok')
    expect(empty.output.toLowerCase()).toContain('empty')
    expect((await ws.call('trash_list' as string, { all: true })).code).toBe('INVALID_ARGUMENTS')
  })

  it('is not logged in the audit (it does not mutate)', async () => {
    const { ws, root, dataDir } = tempWorkspace()
    await ws.call('trash_list', {})
    expect(auditLines(dataDir, root)).toEqual([])
  })
})

describe('write_file keeps overwritten content', () => {
  it('an overwrite puts the old bytes in the trash (default keepOverwrites), restorable', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL, trash: ids })
    writeTree(root, { 'f.txt': 'old content\n' })
    chmodSync(join(root, 'f.txt'), 0o640)
    await ws.call('read_file', { path: 'f.txt' })
    const result = await ws.call('write_file', { path: 'f.txt', content: 'new content\n' })
    expect(result.status).toBe('ok')
    const trashedTo = result.data!.trashedTo as string
    expect(result.output).toContain(trashedTo)
    expect(archiveNames(dataDir, root)).toEqual([basename(trashedTo)])
    expect(tarMetadata(trashedTo)).toMatchObject({ originalPath: join(root, 'f.txt'), originalSha256: sha256('old content\n'), mode: 0o640 })
    expect(read(join(root, 'f.txt'))).toBe('new content\n')
    const back = await ws.call('restore_file', { trashedPath: trashedTo, overwrite: true })
    expect(back.status).toBe('ok')
    expect(read(join(root, 'f.txt'))).toBe('old content\n')
    expect(statSync(join(root, 'f.txt')).mode & 0o7777).toBe(0o640)
  })

  it('creating a new file puts nothing in the trash', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL })
    const result = await ws.call('write_file', { path: 'n.txt', content: 'n' })
    expect(result.data?.trashedTo).toBeUndefined()
    expect(archiveNames(dataDir, root)).toEqual([])
  })

  it('keepOverwrites: false keeps nothing, so an overwrite always asks (it cannot be undone)', async () => {
    const confirm = vi.fn<ConfirmHandler>(() => true)
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL, confirm, trash: { keepOverwrites: false } })
    writeTree(root, { 'f.txt': 'old' })
    await ws.call('read_file', { path: 'f.txt' })
    const result = await ws.call('write_file', { path: 'f.txt', content: 'new' })
    expect(result.status).toBe('ok')
    expect(confirm).toHaveBeenCalledOnce()
    expect(confirm.mock.calls[0]![0]).toMatchObject({ label: 'Write file?', detail: `${join(root, 'f.txt')} (permanent)`, permanent: true })
    // A new file loses nothing: granted as usual.
    expect((await ws.call('write_file', { path: 'g.txt', content: 'new' })).status).toBe('ok')
    expect(confirm).toHaveBeenCalledOnce()
    expect(result.data?.trashedTo).toBeUndefined()
    expect(read(join(root, 'f.txt'))).toBe('new')
    expect(archiveNames(dataDir, root)).toEqual([])
  })

  it('a denied overwrite keeps nothing in the trash', async () => {
    const { ws, root, dataDir } = tempWorkspace({ confirm: () => false })
    writeTree(root, { 'f.txt': 'old' })
    await ws.call('read_file', { path: 'f.txt' })
    expect((await ws.call('write_file', { path: 'f.txt', content: 'new' })).status).toBe('denied')
    expect(archiveNames(dataDir, root)).toEqual([])
  })
})

describe('nothing lost (../docs/trash.md#nothing-lost)', () => {
  it('a file that changes while it is archived: CONFLICT, the original (with the change) kept, no archive', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL, trash: { compressionLevel: 9 } })
    const path = join(root, 'big.bin')
    writeFileSync(path, randomBytes(48 * 1024 * 1024))
    const pending = ws.call('delete_file', { path: 'big.bin' })
    // The archive shows in the bucket as it starts: 48 MiB at level 9 leave hundreds of
    // milliseconds of reading and compressing (more on a slower machine) for the write to land in.
    while (bucketNames(dataDir, root).length === 0) await sleep(2)
    appendFileSync(path, 'late write')
    const result = await pending
    expect(result.status, result.output).toBe('error')
    expect(result.code).toBe('CONFLICT')
    expect(statSync(path).size).toBe(48 * 1024 * 1024 + 'late write'.length)
    expect(bucketNames(dataDir, root)).toEqual([])
  })

  it('the event loop keeps running while a large file is compressed', async () => {
    const { ws, root } = tempWorkspace({ permissions: ALL, trash: { compressionLevel: 9 } })
    writeFileSync(join(root, 'big.bin'), randomBytes(32 * 1024 * 1024))
    let ticks = 0
    const timer = setInterval(() => ticks++, 5)
    const started = Date.now()
    try {
      expect((await ws.call('delete_file', { path: 'big.bin' })).status).toBe('ok')
    } finally {
      clearInterval(timer)
    }
    const elapsed = Date.now() - started
    expect(elapsed).toBeGreaterThan(50)
    expect(ticks).toBeGreaterThanOrEqual(Math.floor(elapsed / 50))
  })
})

describe('faults: the archive cannot be written', () => {
  /**
   * Makes the bucket impossible to create: chmod 0555 on the data dir, or — as root, where chmod
   * does not stop writes, and on Windows, where it cannot — a regular file where the `trash`
   * directory should be.
   */
  function breakDataDir(dataDir: string): void {
    if (process.platform === 'win32' || process.getuid?.() === 0) {
      writeFileSync(join(dataDir, 'trash'), 'not a directory')
    } else {
      chmodSync(dataDir, 0o555)
    }
  }

  it('delete_file: error, the original untouched', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL, audit: false })
    writeTree(root, { 'a.txt': 'precious' })
    breakDataDir(dataDir)
    try {
      const before = snapshot(join(root, 'a.txt'))
      const result = await ws.call('delete_file', { path: 'a.txt' })
      expect(result.status).toBe('error')
      expect(result.code).toBeDefined()
      expect(result.output).toContain(join(root, 'a.txt'))
      expect(snapshot(join(root, 'a.txt'))).toEqual(before)
    } finally {
      chmodSync(dataDir, 0o755)
    }
  })

  it('remove_dir recursive: error, the tree untouched', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL, confirm: () => true, audit: false })
    writeTree(root, { 'd/a.txt': 'a', 'd/s/b.txt': 'b' })
    breakDataDir(dataDir)
    try {
      const before = snapshot(join(root, 'd'))
      const result = await ws.call('remove_dir', { path: 'd', recursive: true })
      expect(result.status).toBe('error')
      expect(snapshot(join(root, 'd'))).toEqual(before)
    } finally {
      chmodSync(dataDir, 0o755)
    }
  })

  it('write_file overwrite and move_file overwrite: error, both files untouched', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL, audit: false })
    writeTree(root, { 'a.txt': 'a', 'b.txt': 'b' })
    await ws.call('read_file', { path: 'a.txt' })
    breakDataDir(dataDir)
    try {
      const w = await ws.call('write_file', { path: 'a.txt', content: 'changed' })
      expect(w.status).toBe('error')
      expect(w.code).not.toBe('STALE')
      expect(read(join(root, 'a.txt'))).toBe('a')
      const m = await ws.call('move_file', { source: 'a.txt', destination: 'b.txt', overwrite: true })
      expect(m.status).toBe('error')
      expect(read(join(root, 'a.txt'))).toBe('a')
      expect(read(join(root, 'b.txt'))).toBe('b')
    } finally {
      chmodSync(dataDir, 0o755)
    }
  })

  it('permanent deletes do not need the trash', async () => {
    const { ws, root, dataDir } = tempWorkspace({ confirm: () => true, audit: false })
    writeTree(root, { 'a.txt': 'a' })
    breakDataDir(dataDir)
    try {
      expect((await ws.call('delete_file', { path: 'a.txt', permanent: true })).status).toBe('ok')
      expect(existsSync(join(root, 'a.txt'))).toBe(false)
    } finally {
      chmodSync(dataDir, 0o755)
    }
  })
})

describe('audit log of the destructive tools (../docs/trash.md#the-audit-log)', () => {
  it('each mutating call appends one line, with trashedTo and sha256Before where applicable', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL, trash: ids, confirm: () => true })
    writeTree(root, { 'a.txt': 'alpha\n', 'b.txt': 'bravo\n', 'c.txt': 'charlie\n', 'd/x.txt': 'x', 'e/.keep': '' })
    rmSync(join(root, 'e/.keep'))

    const del = await ws.call('delete_file', { path: 'a.txt' })
    let lines = auditLines(dataDir, root)
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({
      tool: 'delete_file',
      path: join(root, 'a.txt'),
      status: 'ok',
      trashedTo: del.data!.trashedTo,
      sha256Before: sha256('alpha\n'),
      ...ids,
    })
    expect(Number.isNaN(Date.parse(lines[0]!.time as string))).toBe(false)

    const rmr = await ws.call('remove_dir', { path: 'd', recursive: true })
    const rme = await ws.call('remove_dir', { path: 'e' })
    const mv = await ws.call('move_file', { source: 'b.txt', destination: 'c.txt', overwrite: true })
    const rs = await ws.call('restore_file', { trashedPath: del.data!.trashedTo as string })
    const perm = await ws.call('delete_file', { path: 'a.txt', permanent: true })
    for (const r of [rmr, rme, mv, rs, perm]) expect(r.status).toBe('ok')

    lines = auditLines(dataDir, root)
    expect(lines.map((l) => [l.tool, l.status])).toEqual([
      ['delete_file', 'ok'],
      ['remove_dir', 'ok'],
      ['remove_dir', 'ok'],
      ['move_file', 'ok'],
      ['restore_file', 'ok'],
      ['delete_file', 'ok'],
    ])
    expect(lines[1]).toMatchObject({ path: join(root, 'd'), trashedTo: rmr.data!.trashedTo })
    expect(lines[1]!.sha256Before).toMatch(/^[0-9a-f]{64}$/)
    expect(lines[2]).toMatchObject({ path: join(root, 'e') })
    expect(lines[2]!.trashedTo).toBeUndefined()
    expect(lines[3]).toMatchObject({ trashedTo: mv.data!.trashedTo })
    expect(lines[3]!.path).toBe(join(root, 'b.txt'))
    expect(lines[4]).toMatchObject({ path: join(root, 'a.txt'), sha256After: sha256('alpha\n') })
    expect(lines[5]).toMatchObject({ path: join(root, 'a.txt') })
    expect(lines[5]!.trashedTo).toBeUndefined()
    for (const line of lines) expect(line).toMatchObject(ids)
  })

  it('a write_file overwrite logs where the old bytes went', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL, trash: ids })
    writeTree(root, { 'f.txt': 'old' })
    await ws.call('read_file', { path: 'f.txt' })
    const result = await ws.call('write_file', { path: 'f.txt', content: 'new' })
    expect(auditLines(dataDir, root)[0]).toMatchObject({
      tool: 'write_file',
      status: 'ok',
      trashedTo: result.data!.trashedTo,
      sha256Before: sha256('old'),
      sha256After: sha256('new'),
    })
  })

  it('denied and failed calls are logged too', async () => {
    const { ws, root, dataDir } = tempWorkspace({ trash: ids, confirm: () => false })
    writeTree(root, { 'a.txt': 'a', 'b.txt': 'b' })
    await ws.call('delete_file', { path: 'a.txt' })
    await ws.call('delete_file', { path: 'missing.txt' })
    await ws.call('remove_dir', { path: '.', recursive: true })
    await ws.call('move_file', { source: 'a.txt', destination: 'b.txt' })
    await ws.call('restore_file', { trashedPath: '/tmp/nowhere.tar.gz' })
    const lines = auditLines(dataDir, root)
    expect(lines.map((l) => [l.tool, l.status, l.code])).toEqual([
      ['delete_file', 'denied', undefined],
      ['delete_file', 'error', 'NOT_FOUND'],
      ['remove_dir', 'error', 'DANGEROUS_PATH'],
      ['move_file', 'error', 'ALREADY_EXISTS'],
      ['restore_file', 'error', 'PATH_NOT_ALLOWED'],
    ])
    for (const line of lines) expect(line.trashedTo).toBeUndefined()
  })

  it('a renamed delete tool is logged under its exposed name', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL, tools: { delete_file: { name: 'remove_file' } } })
    writeTree(root, { 'a.txt': 'a' })
    await ws.call('remove_file', { path: 'a.txt' })
    expect(auditLines(dataDir, root)[0]).toMatchObject({ tool: 'remove_file', status: 'ok' })
  })
})
