/**
 * Crash harness (issue "Hardening"): tool calls run in a child Node process
 * (`helpers/crash-child.mjs`) that is SIGKILLed at a random moment, at least 50 times per
 * operation, on content large enough (MBs, many files) to be caught mid-way. After each kill:
 *
 * - write_file / edit_file: the file is exactly one of the contents it had or was given —
 *   never partial;
 * - append_file: right after the kill the file is its old bytes followed by a prefix of the
 *   appended bytes, in order (an in-place append can be caught mid-write); once the next
 *   Workspace on the same root and data dir has replayed the append journal
 *   (`<dataDir>/journal/<sha256(root)>`), it is exactly the bytes before or after each append —
 *   never partial — and the journal is empty. Kills that left a partial append before recovery
 *   are counted and printed. When something else appends to the file after the kill and before
 *   the next Workspace, no byte of the later write is lost: an append of ours cut short is
 *   only rolled back when nothing follows it, and a whole one killed before its commit point is
 *   cut out from before the later bytes (ours never stand without their record);
 * - delete_file / recursive remove_dir: every original that is gone (even partly) has a complete
 *   archive, and restoring it gives back exactly what was there (content, modes, mtimes);
 * - restore_file: the target is absent or complete, and while it is absent the archive is still
 *   there, byte for byte;
 * - move_file across file systems (a source in `/dev/shm`): the destination is absent and the
 *   source whole, or the destination is complete and what is left of the source is unchanged;
 * - apply_patch (six files): all files as before or all as the patch says; the history agrees
 *   with the tree: one record of the patch exactly when it landed, none when it did not; the
 *   directories it made for new files exist exactly when it landed;
 * - create_directory (`a/b/c`), killed at each named phase of its commit (a debug build dies at
 *   `AGENT_FS_TOOLS_CRASH_AT=<point>`: staged, recorded, made, applied, cleaned, sequel — a
 *   window random kills cannot hit): none of its directories before the commit point, all of
 *   them after it, and its history record exactly when they stand;
 * - delete_file, killed at each of those phases: the file stays and is not recorded before the
 *   commit point; after it, it is gone, recorded, and one undo of that record brings it back
 *   byte for byte;
 * - copy_file of a tree (2 MiB and 96 small files) into a parent it makes: the copy is absent
 *   (with no parent left) or complete, entry for entry with modes and times, and recorded exactly
 *   when complete; a partial copy under its temp name is gone once the next Workspace ran;
 * - copy_file of a tree (into parents it makes, and over an existing tree), killed at each of
 *   those phases: before the commit point nothing of the copy is left (no temp name, no parent it
 *   made; a replaced tree as it was) and nothing is recorded; after it, the copy is whole and
 *   recorded, and one undo of that record takes it back and puts back what it replaced;
 * - write_file (an overwrite, and a new file in new directories), killed at each of those
 *   phases: the old file (no new directory left) and no record before the commit point; after
 *   it, the new file with its record, and one undo of that record takes it back;
 * - edit_file, killed at each of those phases: the old file and no record before the commit
 *   point; the edited file with its record after it, and one undo (by its delta) takes it back;
 * - apply_patch of two files put by renames, as on Windows (`AGENT_FS_TOOLS_PUT_BY_RENAMES=1`),
 *   killed between the renames (`put-held`, `put-aside`) and at each of those phases: both old
 *   files and no record before the commit point, no temp or held name left; both patched with
 *   the record after it, and one undo takes them back;
 * - append_file (in place, and a new file in new directories), killed at each of those phases:
 *   the old bytes (no new directory left) and no record before the commit point — an append
 *   already made in place is taken back by recovery —; after it, the appended bytes with their
 *   record, and one undo of that record takes the file back byte for byte; killed at `made` and
 *   then appended to by someone else, the next Workspace leaves their bytes and cuts ours out
 *   from before them, also when that recovery is itself killed mid-splice (`splice`);
 * - remove_dir (a tree, an empty directory), restore_file (a tree into missing parents, a file
 *   over another) and move_file (a directory into missing parents, a file over another), killed
 *   at each of those phases: as it was before the commit point (the restore's archive whole),
 *   the change with its record after it, and one undo of that record takes it back;
 * - move_file across file systems (a tree to `/dev/shm` into missing parents, a file from there
 *   over one in the root), killed at each of those phases: the source as it was (no parent, no
 *   temp name left on either side) and no record before the commit point; after it the move
 *   with its record, and one undo of that record brings the source back byte for byte;
 * - a permanent recursive remove_dir, killed at each of those phases: the tree whole and no
 *   record before the commit point; after it the tree gone, nothing in the trash, and its
 *   record (permanent: not undoable);
 * - leftovers are recognisable: `.<name>.<pid>.<n>.agent-fs-tools.tmp` (atomic writes),
 *   `.restore-<unique>.partial` beside a restore target, `.<what>-<unique>.partial` in the bucket;
 * - the next Workspace on the same root and data dir works: `trash_list`, `trashList()` and a
 *   recursive `list_directory` succeed; stale bucket partials (an hour old) are swept when it is
 *   created, fresh ones are kept;
 * - temp files of atomic writes, copies of moves and temp roots of restores are journaled: once the next
 *   Workspace exists, no `*.agent-fs-tools.tmp` and no `.restore-*.partial` is left anywhere
 *   under the root and the journal is empty. Kills aimed at the moment a temp file exists
 *   (write_file, append_file creating a file) make sure there was one to clean up; for restores,
 *   the kills that left one are counted.
 *
 * The random kills of `ws.undo({ sessionId })` are in `crash-undo.test.ts` (they take about as
 * long as all of this file; the kills aimed at each phase of its commit are here), so that vitest's
 * two workers run the two files in parallel. Both use the helpers in `helpers/crash.ts`.
 */
import {
  appendFileSync,
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { describe, expect, it } from 'vitest'
import { Workspace } from 'agent-fs-tools'
import { tempWorkspaceDirs } from './helpers/temp.js'
import { ALL, snapshot, type Node } from './helpers/trash.js'
import { scaled } from './helpers/time.js'
import {
  ATOMIC_TEMP,
  atomicTemps,
  bigText,
  calibrate,
  checkSweep,
  COMMIT_PHASES,
  delays,
  emptyBucket,
  KILLS,
  killOnce,
  nextWorkspace,
  partials,
  report,
  RESTORE_TEMP,
  runChild,
  runChildCrashingAt,
  runChildUntil,
  sha,
  TEMP_SUFFIX,
  treeOf,
  type Call,
  type Tally,
} from './helpers/crash.js'
import { symlinkOrSkip } from './helpers/links.js'

describe('crash harness (SIGKILL mid-operation)', { timeout: scaled(240_000) }, () => {
  it('write_file: the file is always one whole version; overwritten versions are in the trash', async () => {
    const dirs = tempWorkspaceDirs()
    // Versions that differ in one line: planning (read + diff) is quick, so the kills land in
    // the commit (archiving the old version, writing, fsync, rename).
    const base = bigText('write', 1 << 20)
    const versions = ['v0', 'v1', 'v2'].map((tag) => `${base}${tag}\n${base}`)
    const files = versions.map((v, i) => {
      const f = join(dirs.dataDir, '..', `content-${i}.txt`)
      writeFileSync(f, v)
      return f
    })
    const calls: Call[] = [1, 2].map((i) => ['write_file', { path: 'big.txt', contentFile: files[i] }])
    const reset = (): void => writeFileSync(join(dirs.root, 'big.txt'), versions[0]!)
    const window = await calibrate(dirs, calls, reset)
    const seed = Date.now() % 100_000
    const t: Tally = { kills: 0, midway: 0, leftovers: 0 }
    const digests = versions.map(sha)
    for (const delay of delays(window, seed, t)) {
      reset()
      emptyBucket(dirs)
      const partialsBefore = partials(dirs)
      const run = await runChild(dirs, calls, delay)
      t.kills += run.killed ? 1 : 0
      const now = sha(readFileSync(join(dirs.root, 'big.txt')))
      expect(digests, `big.txt is not a whole version after a kill at ${delay} ms`).toContain(now)
      const temps = atomicTemps(dirs.root).length
      if (run.killed && (temps > 0 || partials(dirs) > partialsBefore)) t.midway++
      t.leftovers += temps
      const { ws, trash } = await nextWorkspace(dirs)
      // The newest kept version restores to a whole version.
      if (trash.length > 0) {
        const r = await ws.call('restore_file', { trashedPath: trash[0]!.archivePath, targetPath: 'check.txt' })
        expect(r.status, r.output).toBe('ok')
        expect(digests).toContain(sha(readFileSync(join(dirs.root, 'check.txt'))))
        rmSync(join(dirs.root, 'check.txt'))
      }
    }
    expect(t.kills).toBe(KILLS)
    report('write_file', seed, window, t, `, ${await checkSweep(dirs)} stale bucket partials swept`)
  })

  it('edit_file: the file is always the old or the new version', async () => {
    const dirs = tempWorkspaceDirs()
    const base = bigText('edit', 3 << 20)
    const a = `${base}MARK-A\n${base}`
    const b = `${base}MARK-B\n${base}`
    const calls: Call[] = [
      ['edit_file', { path: 'edit.txt', edits: [{ oldString: 'MARK-A', newString: 'MARK-B' }] }],
      ['edit_file', { path: 'edit.txt', edits: [{ oldString: 'MARK-B', newString: 'MARK-A' }] }],
      ['edit_file', { path: 'edit.txt', edits: [{ oldString: 'MARK-A', newString: 'MARK-B' }] }],
    ]
    const reset = (): void => writeFileSync(join(dirs.root, 'edit.txt'), a)
    const window = await calibrate(dirs, calls, reset)
    const seed = Date.now() % 100_000
    const t: Tally = { kills: 0, midway: 0, leftovers: 0 }
    const digests = [sha(a), sha(b)]
    for (const delay of delays(window, seed, t)) {
      reset()
      const run = await runChild(dirs, calls, delay)
      t.kills += run.killed ? 1 : 0
      expect(digests, `edit.txt is torn after a kill at ${delay} ms`).toContain(sha(readFileSync(join(dirs.root, 'edit.txt'))))
      const left = atomicTemps(dirs.root).length
      t.leftovers += left
      if (left > 0) t.midway++
      await nextWorkspace(dirs)
    }
    expect(t.kills).toBe(KILLS)
    report('edit_file', seed, window, t)
  })

  it('append_file: old bytes or new bytes once the next Workspace replayed the journal', async () => {
    const dirs = tempWorkspaceDirs()
    const start = 'start\n'
    const chunks = Array.from({ length: 6 }, (_, i) => bigText(`chunk${i}`, 1 << 20))
    const files = chunks.map((c, i) => {
      const f = join(dirs.dataDir, '..', `chunk-${i}.txt`)
      writeFileSync(f, c)
      return f
    })
    const calls: Call[] = files.map((f) => ['append_file', { path: 'log.txt', contentFile: f }])
    const reset = (): void => writeFileSync(join(dirs.root, 'log.txt'), start)
    const window = await calibrate(dirs, calls, reset)
    const full = start + chunks.join('')
    const boundaries = new Set(chunks.map((_, i) => start.length + chunks.slice(0, i).join('').length))
    boundaries.add(full.length)
    const seed = Date.now() % 100_000
    const t: Tally = { kills: 0, midway: 0, leftovers: 0 }
    let partial = 0
    // The history agrees with the file: one record per append that stands after recovery.
    const records = async (ws: Workspace) => (await ws.history()).filter((c) => c.tool === 'append_file').length
    let recorded = await records(new Workspace({ root: dirs.root, trash: { dataDir: dirs.dataDir } }))
    for (const delay of delays(window, seed, t)) {
      reset()
      const run = await runChild(dirs, calls, delay)
      t.kills += run.killed ? 1 : 0
      const now = readFileSync(join(dirs.root, 'log.txt'), 'utf8')
      expect(now.length).toBeGreaterThanOrEqual(start.length)
      expect(full.startsWith(now), `log.txt is not old bytes + a prefix of the appends (kill at ${delay} ms)`).toBe(true)
      // Every append the child reported done is complete.
      const done = run.lines.filter((l) => l.startsWith('done ')).length
      expect(now.length).toBeGreaterThanOrEqual(start.length + chunks.slice(0, done).join('').length)
      if (!boundaries.has(now.length)) partial++
      const { ws } = await nextWorkspace(dirs)
      const after = readFileSync(join(dirs.root, 'log.txt'), 'utf8')
      expect(boundaries.has(after.length) && full.startsWith(after), `log.txt is a partial append after recovery (kill at ${delay} ms)`).toBe(true)
      const standing = chunks.findIndex((_, i) => start.length + chunks.slice(0, i + 1).join('').length > after.length)
      const recordedNow = await records(ws)
      expect(recordedNow - recorded, `appends recorded exactly when they stand (kill at ${delay} ms)`).toBe(standing === -1 ? chunks.length : standing)
      recorded = recordedNow
      expect(after.length).toBeGreaterThanOrEqual(start.length + chunks.slice(0, done).join('').length)
      expect(after.length).toBeLessThanOrEqual(now.length)
    }
    t.midway = partial
    expect(t.kills).toBe(KILLS)
    // Most of an append's time is planning (read, diff); aim some kills at the write itself: a
    // big append, killed as soon as the file starts growing.
    const big = bigText('huge', 16 << 20)
    const bigFile = join(dirs.dataDir, '..', 'chunk-big.txt')
    writeFileSync(bigFile, big)
    let aimedPartial = 0
    for (let round = 0; round < 5; round++) {
      reset()
      const log = join(dirs.root, 'log.txt')
      const run = runChildUntil(dirs, [['append_file', { path: 'log.txt', contentFile: bigFile }]], () => statSync(log).size > start.length)
      const { killed } = await run
      const now = readFileSync(log, 'utf8')
      expect((start + big).startsWith(now), 'log.txt is not old bytes + a prefix of the append').toBe(true)
      if (killed && now.length !== start.length && now.length !== start.length + big.length) aimedPartial++
      await nextWorkspace(dirs)
      const after = readFileSync(log, 'utf8')
      expect([start, start + big].includes(after), 'log.txt is a partial append after recovery').toBe(true)
    }
    report('append_file', seed, window, t, ` (${partial} random kills and ${aimedPartial}/5 kills aimed at the write left a partial append before recovery; none after)`)
  })

  it('append_file: bytes appended by someone else after a kill mid-append survive the next Workspace', async () => {
    const dirs = tempWorkspaceDirs()
    const start = 'start\n'
    const big = bigText('cut', 16 << 20)
    const bigFile = join(dirs.dataDir, '..', 'chunk-cut.txt')
    writeFileSync(bigFile, big)
    const log = join(dirs.root, 'log.txt')
    let cutShort = 0
    let recorded = 0
    for (let round = 0; round < 6; round++) {
      writeFileSync(log, start)
      const { killed } = await runChildUntil(dirs, [['append_file', { path: 'log.txt', contentFile: bigFile }]], () => statSync(log).size > start.length)
      const now = readFileSync(log, 'utf8')
      expect((start + big).startsWith(now), 'log.txt is not old bytes + a prefix of the append').toBe(true)
      if (killed && now.length > start.length && now.length < start.length + big.length) cutShort++
      // The user (or a logger) appends after the crash, before the next Workspace: a line, or
      // as many bytes again as went through (still shorter than the append, as in the report).
      const later = round % 2 === 0 ? `later ${round}\n` : 'x'.repeat(Math.min(now.length - start.length, 1 << 20))
      appendFileSync(log, later)
      const { ws } = await nextWorkspace(dirs)
      const after = readFileSync(log, 'utf8')
      // A whole append killed before its commit point (no record of it) is cut out from before
      // the later bytes; anything else is left exactly as it was found.
      const nowRecorded = (await ws.history()).filter((c) => c.tool === 'append_file').length
      const standing = nowRecorded > recorded
      recorded = nowRecorded
      const expected = now === start + big && !standing ? start + later : now + later
      expect(after.length, `recovery changed log.txt after a later append (round ${round})`).toBe(expected.length)
      expect(after === expected, `recovery changed log.txt after a later append (round ${round})`).toBe(true)
    }
    expect(cutShort, 'no kill caught the append mid-write').toBeGreaterThan(0)
    console.log(`crash append_file + later append: ${cutShort}/6 aimed kills cut the append short; every later byte kept`)
  })

  it('temp files of atomic writes: a kill while one exists leaves none once the next Workspace ran', async () => {
    const dirs = tempWorkspaceDirs()
    const content = bigText('temp', 16 << 20)
    const contentFile = join(dirs.dataDir, '..', 'temp-content.txt')
    writeFileSync(contentFile, content)
    // A new file each: write_file goes through write_atomic, append_file through its create path.
    const cases: [string, Call][] = [
      ['write_file', ['write_file', { path: 'nested/dir/fresh.txt', contentFile }]],
      ['append_file', ['append_file', { path: 'nested/new-log.txt', contentFile }]],
    ]
    for (const [op, call] of cases) {
      let caught = 0
      for (let round = 0; round < 5; round++) {
        rmSync(join(dirs.root, 'nested'), { recursive: true, force: true })
        const { killed } = await runChildUntil(dirs, [call], () => atomicTemps(dirs.root).length > 0)
        const temps = atomicTemps(dirs.root)
        for (const p of temps) expect(ATOMIC_TEMP.test(p.split('/').pop()!), p).toBe(true)
        if (killed && temps.length > 0) caught++
        // nextWorkspace fails if a temp file (or a journal record) is still there.
        await nextWorkspace(dirs)
        const target = join(dirs.root, call[1].path as string)
        if (existsSync(target)) expect(readFileSync(target, 'utf8') === content, `${op}: a partial ${target}`).toBe(true)
      }
      expect(caught, `${op}: no kill caught a temp file`).toBeGreaterThan(0)
      console.log(`crash ${op} temp files: ${caught}/5 aimed kills left one; none after the next Workspace`)
    }
  })

  it('delete_file: every removed file has a complete, restorable archive', async () => {
    const dirs = tempWorkspaceDirs()
    const names = Array.from({ length: 12 }, (_, i) => `f${String(i).padStart(2, '0')}.txt`)
    const contents = names.map((n, i) => bigText(n, i % 6 === 5 ? 2 << 20 : 200 << 10))
    const reset = (): void => {
      rmSync(join(dirs.root, 'del'), { recursive: true, force: true })
      mkdirSync(join(dirs.root, 'del'))
      names.forEach((n, i) => writeFileSync(join(dirs.root, 'del', n), contents[i]!))
      emptyBucket(dirs)
    }
    const calls: Call[] = names.map((n) => ['delete_file', { path: `del/${n}` }])
    const window = await calibrate(dirs, calls, reset)
    const seed = Date.now() % 100_000
    const t: Tally = { kills: 0, midway: 0, leftovers: 0 }
    let restored = 0
    for (const delay of delays(window, seed, t)) {
      reset()
      const partialsBefore = partials(dirs)
      const run = await runChild(dirs, calls, delay)
      t.kills += run.killed ? 1 : 0
      if (run.killed && partials(dirs) > partialsBefore) t.midway++
      const { ws, trash } = await nextWorkspace(dirs)
      const byOriginal = new Map(trash.map((e) => [e.originalPath, e]))
      for (const [i, name] of names.entries()) {
        const abs = join(dirs.root, 'del', name)
        if (existsSync(abs)) {
          expect(readFileSync(abs, 'utf8'), `${name} changed`).toBe(contents[i])
          continue
        }
        const entry = byOriginal.get(abs)
        expect(entry, `${name} is gone without an archive (kill at ${delay} ms)`).toBeDefined()
        const r = await ws.call('restore_file', { trashedPath: entry!.archivePath })
        expect(r.status, r.output).toBe('ok')
        expect(readFileSync(abs, 'utf8')).toBe(contents[i])
        restored++
      }
    }
    expect(t.kills).toBe(KILLS)
    report('delete_file', seed, window, t, `, ${restored} removed files restored, ${await checkSweep(dirs)} stale bucket partials swept`)
  })

  it('recursive remove_dir: a tree that is gone, even partly, comes back whole from its archive', async () => {
    const dirs = tempWorkspaceDirs()
    const tree = join(dirs.root, 'tree')
    const build = (): void => {
      rmSync(tree, { recursive: true, force: true })
      for (let d = 0; d < 10; d++) {
        mkdirSync(join(tree, `d${d}`, 'deeper'), { recursive: true })
        for (let f = 0; f < 15; f++) {
          writeFileSync(join(tree, `d${d}`, f % 3 === 0 ? 'deeper' : '', `f${f}.txt`), bigText(`${d}/${f}`, 12 << 10))
        }
      }
      writeFileSync(join(tree, 'big1.bin'), bigText('big1', 1 << 20))
      writeFileSync(join(tree, 'big2.bin'), bigText('big2', 1 << 20))
      // Fixed mtimes everywhere, so the expected snapshot is the same for every rebuild.
      const stamp = (p: string): void => {
        for (const e of readdirSync(p, { withFileTypes: true })) if (e.isDirectory()) stamp(join(p, e.name))
        for (const e of readdirSync(p)) utimesSync(join(p, e), 1_700_000_000, 1_700_000_000)
      }
      stamp(tree)
      utimesSync(tree, 1_700_000_000, 1_700_000_000)
    }
    build()
    const expected = snapshot(tree)
    const reset = (): void => {
      build()
      emptyBucket(dirs)
      rmSync(join(dirs.root, 'restored'), { recursive: true, force: true })
    }
    const calls: Call[] = [['remove_dir', { path: 'tree', recursive: true }]]
    const window = await calibrate(dirs, calls, reset)
    const seed = Date.now() % 100_000
    const t: Tally = { kills: 0, midway: 0, leftovers: 0 }
    let partlyRemoved = 0
    for (const delay of delays(window, seed, t)) {
      reset()
      const partialsBefore = partials(dirs)
      const run = await runChild(dirs, calls, delay)
      t.kills += run.killed ? 1 : 0
      if (run.killed && partials(dirs) > partialsBefore) t.midway++
      const { ws, trash } = await nextWorkspace(dirs)
      const intact = existsSync(tree) && isDeepStrictEqual(snapshot(tree), expected)
      if (!intact) {
        if (existsSync(tree)) partlyRemoved++
        const entry = trash.find((e) => e.originalPath === tree)
        expect(entry, `tree is (partly) gone without an archive (kill at ${delay} ms)`).toBeDefined()
        const r = await ws.call('restore_file', { trashedPath: entry!.archivePath, targetPath: 'restored' })
        expect(r.status, r.output).toBe('ok')
        expect(snapshot(join(dirs.root, 'restored'))).toEqual(expected)
      }
    }
    expect(t.kills).toBe(KILLS)
    report('remove_dir', seed, window, t, `, ${partlyRemoved} kills during the removal itself, ${await checkSweep(dirs)} stale bucket partials swept`)
  })

  it('restore_file: the target is absent (archive intact) or complete', async () => {
    const dirs = tempWorkspaceDirs()
    const tree = join(dirs.root, 'rtree')
    for (let d = 0; d < 8; d++) {
      mkdirSync(join(tree, `d${d}`), { recursive: true })
      for (let f = 0; f < 12; f++) writeFileSync(join(tree, `d${d}`, `f${f}.txt`), bigText(`r${d}/${f}`, 16 << 10))
    }
    writeFileSync(join(tree, 'big.bin'), bigText('rbig', 2 << 20))
    const expected = snapshot(tree)
    const ws0 = new Workspace({ root: dirs.root, trash: { dataDir: dirs.dataDir }, permissions: ALL, confirm: () => true })
    const trashed = await ws0.call('remove_dir', { path: 'rtree', recursive: true })
    expect(trashed.status, trashed.output).toBe('ok')
    const archive = trashed.data?.trashedTo as string
    const backup = join(tmpdir(), `afs-crash-backup-${process.pid}.tar.gz`)
    copyFileSync(archive, backup)
    const archiveSha = sha(readFileSync(backup))
    const reset = (): void => {
      rmSync(tree, { recursive: true, force: true })
      if (!existsSync(archive)) copyFileSync(backup, archive)
    }
    const calls: Call[] = [['restore_file', { trashedPath: archive }]]
    try {
      const window = await calibrate(dirs, calls, reset)
      const seed = Date.now() % 100_000
      const t: Tally = { kills: 0, midway: 0, leftovers: 0 }
      let complete = 0
      for (const delay of delays(window, seed, t)) {
        reset()
        await killOnce(dirs, calls, delay, t, RESTORE_TEMP)
        if (existsSync(tree)) {
          expect(snapshot(tree), `rtree restored partly (kill at ${delay} ms)`).toEqual(expected)
          complete++
        } else {
          expect(existsSync(archive), `rtree is absent and its archive is gone (kill at ${delay} ms)`).toBe(true)
          expect(sha(readFileSync(archive))).toBe(archiveSha)
        }
        expect(statSync(dirs.root).isDirectory()).toBe(true)
      }
      expect(t.kills).toBe(KILLS)
      report('restore_file', seed, window, t, `, ${complete} complete restores`)
    } finally {
      rmSync(backup, { force: true })
    }
  })

  it('copy_file: the copy is absent or complete, recorded exactly when complete; no partial copy survives', async () => {
    const dirs = tempWorkspaceDirs()
    const source = join(dirs.root, 'ctree')
    for (let d = 0; d < 8; d++) {
      mkdirSync(join(source, `d${d}`), { recursive: true })
      for (let f = 0; f < 12; f++) writeFileSync(join(source, `d${d}`, `f${f}.txt`), bigText(`c${d}/${f}`, 16 << 10))
    }
    writeFileSync(join(source, 'big.bin'), bigText('cbig', 2 << 20))
    const expected = snapshot(source)
    const copy = join(dirs.root, 'copies/ctree')
    const reset = (): void => rmSync(join(dirs.root, 'copies'), { recursive: true, force: true })
    const calls: Call[] = [['copy_file', { source: 'ctree', destination: 'copies/ctree' }]]
    const window = await calibrate(dirs, calls, reset)
    const seed = Date.now() % 100_000
    const t: Tally = { kills: 0, midway: 0, leftovers: 0 }
    let complete = 0
    let recorded = (await new Workspace({ root: dirs.root, trash: { dataDir: dirs.dataDir } }).history()).length
    for (const delay of delays(window, seed, t)) {
      reset()
      // The next Workspace (in killOnce) removes a partial copy under its temp name.
      await killOnce(dirs, calls, delay, t, ATOMIC_TEMP)
      const records = (await new Workspace({ root: dirs.root, trash: { dataDir: dirs.dataDir } }).history()).length
      if (existsSync(copy)) {
        expect(snapshot(copy), `the copy is partial (kill at ${delay} ms)`).toEqual(expected)
        complete++
      } else {
        expect(existsSync(join(dirs.root, 'copies')), `a parent made for the copy is left (kill at ${delay} ms)`).toBe(false)
      }
      expect(records, `recorded exactly when complete (kill at ${delay} ms)`).toBe(recorded + (existsSync(copy) ? 1 : 0))
      recorded = records
      expect(snapshot(source)).toEqual(expected)
    }
    expect(t.kills).toBe(KILLS)
    report('copy_file', seed, window, t, `, ${complete} complete copies`)
  })

  it('apply_patch: all files as before or all as the patch says, never a mix', async () => {
    const dirs = tempWorkspaceDirs()
    // Large files, a line changed in each: planning is quick, the commit (archiving, staging,
    // exchanging six files) is where the kills land.
    const big = (tag: string): string => bigText(tag, 1 << 20)
    const before: Record<string, string | null> = {
      'u1.txt': `${big('u1')}OLD-1\n`,
      'u2.txt': `${big('u2')}OLD-2\n`,
      'gone.txt': big('gone'),
      'm1.txt': `${big('m1')}OLD-M\n`,
      'taken.txt': big('taken'),
      'added/new.txt': null,
      'moved/m1.txt': null,
    }
    const addedText = bigText('added', 256 << 10)
    const takenText = 'replaced by the patch\n'
    const after: Record<string, string | null> = {
      'u1.txt': `${big('u1')}NEW-1\n`,
      'u2.txt': `${big('u2')}NEW-2\n`,
      'gone.txt': null,
      'm1.txt': null,
      'taken.txt': takenText,
      'added/new.txt': addedText,
      'moved/m1.txt': `${big('m1')}NEW-M\n`,
    }
    const plus = (text: string): string => text.split('\n').slice(0, -1).map((l) => `+${l}\n`).join('')
    const input = [
      '*** Begin Patch\n',
      '*** Update File: u1.txt\n@@\n-OLD-1\n+NEW-1\n',
      '*** Update File: u2.txt\n@@\n-OLD-2\n+NEW-2\n',
      `*** Add File: added/new.txt\n${plus(addedText)}`,
      '*** Delete File: gone.txt\n',
      '*** Update File: m1.txt\n*** Move to: moved/m1.txt\n@@\n-OLD-M\n+NEW-M\n',
      `*** Add File: taken.txt\n${plus(takenText)}`,
      '*** End Patch\n',
    ].join('')
    const inputFile = join(dirs.dataDir, '..', 'patch.txt')
    writeFileSync(inputFile, input)
    const calls: Call[] = [['apply_patch', { inputFile }]]
    const reset = (): void => {
      for (const dir of ['added', 'moved']) rmSync(join(dirs.root, dir), { recursive: true, force: true })
      for (const [name, text] of Object.entries(before)) {
        if (text === null) rmSync(join(dirs.root, name), { force: true })
        else writeFileSync(join(dirs.root, name), text)
      }
    }
    const state = (): Record<string, string | null> =>
      Object.fromEntries(
        Object.keys(before).map((name) => {
          const path = join(dirs.root, name)
          return [name, existsSync(path) ? sha(readFileSync(path)) : null]
        }),
      )
    const digests = (files: Record<string, string | null>): Record<string, string | null> =>
      Object.fromEntries(Object.entries(files).map(([n, t]) => [n, t === null ? null : sha(t)]))
    const [whenBefore, whenAfter] = [digests(before), digests(after)]
    const window = await calibrate(dirs, calls, reset)
    const seed = Date.now() % 100_000
    const t: Tally = { kills: 0, midway: 0, leftovers: 0 }
    let applied = 0
    /** The patch's records in the history (every round applies the same patch afresh). */
    const patches = async (): Promise<string[]> => {
      const ws = new Workspace({ root: dirs.root, trash: { dataDir: dirs.dataDir } })
      return (await ws.history()).filter((c) => c.tool === 'apply_patch').map((c) => c.id)
    }
    for (const delay of delays(window, seed, t)) {
      reset()
      emptyBucket(dirs)
      const recorded = await patches()
      await killOnce(dirs, calls, delay, t, ATOMIC_TEMP)
      const found = state()
      const whole = isDeepStrictEqual(found, whenBefore) || isDeepStrictEqual(found, whenAfter)
      expect(whole, `a mix of before and after (kill at ${delay} ms): ${JSON.stringify(found)}`).toBe(true)
      const landed = isDeepStrictEqual(found, whenAfter)
      if (landed) applied++
      // A patch that did not land leaves none of the directories it made for its files (the
      // staged files' temp records and the commit record name them).
      for (const dir of ['added', 'moved']) {
        expect(existsSync(join(dirs.root, dir)), `${dir}/ left by a patch that did not land (kill at ${delay} ms, seed ${seed})`).toBe(landed)
      }
      // The history agrees with the tree: the patch is recorded once exactly when it landed.
      const now = await patches()
      expect(now.length, `history vs tree after a kill at ${delay} ms (seed ${seed}): the patch ${landed ? 'landed' : 'did not land'}`).toBe(recorded.length + (landed ? 1 : 0))
    }
    expect(t.kills).toBe(KILLS)
    report('apply_patch (6 files)', seed, window, t, `, ${applied} left the patch applied, ${t.kills - applied} left it undone`)
  })

  it('move_file across file systems: the source whole or the destination complete; never a partial copy', async (ctx) => {
    const dirs = tempWorkspaceDirs()
    let other: string
    try {
      other = resolve(mkdtempSync('/dev/shm/afs-crash-move-')) // on Windows, on the current drive
    } catch {
      return ctx.skip()
    }
    try {
      if (statSync(other).dev === statSync(dirs.root).dev) return ctx.skip()
      const pristine = join(other, 'pristine')
      for (let d = 0; d < 8; d++) {
        mkdirSync(join(pristine, `d${d}`), { recursive: true })
        for (let f = 0; f < 12; f++) writeFileSync(join(pristine, `d${d}`, `f${f}.txt`), bigText(`m${d}/${f}`, 16 << 10))
      }
      writeFileSync(join(pristine, 'big.bin'), bigText('mbig', 2 << 20))
      const source = join(other, 'mtree')
      const target = join(dirs.root, 'mtree')
      let expected = snapshot(pristine)
      const reset = (): void => {
        rmSync(source, { recursive: true, force: true })
        rmSync(target, { recursive: true, force: true })
        cpSync(pristine, source, { recursive: true })
        expected = snapshot(source)
      }
      const calls: Call[] = [['move_file', { source, destination: 'mtree' }]]
      const window = await calibrate(dirs, calls, reset)
      const seed = Date.now() % 100_000
      const t: Tally = { kills: 0, midway: 0, leftovers: 0 }
      let moved = 0
      let sourcePartlyRemoved = 0
      for (const delay of delays(window, seed, t)) {
        reset()
        await killOnce(dirs, calls, delay, t, ATOMIC_TEMP)
        if (!existsSync(target)) {
          expect(snapshot(source), `the source changed before the copy was in place (kill at ${delay} ms)`).toEqual(expected)
          continue
        }
        moved++
        expect(snapshot(target), `a partial destination (kill at ${delay} ms)`).toEqual(expected)
        if (!existsSync(source)) continue
        sourcePartlyRemoved++
        for (const [rel, node] of Object.entries(snapshot(source))) {
          if (node.type === 'file') expect(node.sha, `${rel} left in the source changed`).toBe(expected[rel]?.sha)
        }
      }
      expect(t.kills).toBe(KILLS)
      report('move_file (across file systems)', seed, window, t, `, ${moved} destinations complete, ${sourcePartlyRemoved} sources partly removed`)
    } finally {
      rmSync(other, { recursive: true, force: true })
    }
  })

  it('create_directory, killed at each phase of its commit: all its directories with their record, or none', async () => {
    const dirs = tempWorkspaceDirs()
    const calls: Call[] = [['create_directory', { path: 'a/b/c' }]]
    // Before the commit point the change is undone; after it, it stands and its record is
    // appended (by the next Workspace's recovery, when the kill came first).
    for (const [point, stands] of COMMIT_PHASES) {
      rmSync(join(dirs.root, 'a'), { recursive: true, force: true })
      const recorded = async (ws: Workspace): Promise<number> =>
        (await ws.history()).filter((c) => c.tool === 'create_directory').length
      const before = await recorded(new Workspace({ root: dirs.root, trash: { dataDir: dirs.dataDir } }))
      const killed = await runChildCrashingAt(dirs, calls, point)
      expect(killed, `the child reached ${point}`).toBe(true)
      const { ws } = await nextWorkspace(dirs)
      expect(existsSync(join(dirs.root, 'a/b/c')), `killed at ${point}`).toBe(stands)
      if (!stands) expect(existsSync(join(dirs.root, 'a')), `killed at ${point}: no parent left`).toBe(false)
      expect(await recorded(ws), `killed at ${point}: recorded exactly when it stands`).toBe(before + (stands ? 1 : 0))
    }
  })

  it('apply_patch, killed once what it replaces is archived or while it makes a directory: nothing of it, not even a directory', async () => {
    // `archived`: before any directory is made; `dir-made-aside`: the first new directory made
    // under its temp name; `dir-made`: renamed to its name, before anything is staged in it.
    for (const point of ['archived', 'dir-made-aside', 'dir-made']) {
      const dirs = tempWorkspaceDirs()
      const gone = join(dirs.root, 'gone.txt')
      const input = '*** Begin Patch\n*** Add File: added/deep/new.txt\n+new\n*** Delete File: gone.txt\n*** End Patch\n'
      writeFileSync(gone, 'to be deleted\n')
      const records = async (ws: Workspace) => (await ws.history()).filter((c) => c.tool === 'apply_patch')
      const killed = await runChildCrashingAt(dirs, [['apply_patch', { input }]], point)
      expect(killed, `the child reached ${point}`).toBe(true)
      const { ws } = await nextWorkspace(dirs)
      expect(readdirSync(dirs.root).sort(), `killed at ${point}: added/ or a temp name left`).toEqual(['gone.txt'])
      expect(readFileSync(gone, 'utf8')).toBe('to be deleted\n')
      expect(await records(ws)).toHaveLength(0)
    }
  })

  it('delete_file, killed at each phase of its commit: the file, or its archive with its record', async () => {
    const dirs = tempWorkspaceDirs()
    const file = join(dirs.root, 'f.txt')
    const content = 'to be deleted\n'.repeat(100)
    const calls: Call[] = [['delete_file', { path: 'f.txt' }]]
    // Before the commit point the file stays and nothing is recorded; after it, the file is gone,
    // recorded with its archive, and one undo (by the record) brings it back byte for byte.
    for (const [point, stands] of COMMIT_PHASES) {
      writeFileSync(file, content)
      const records = async (ws: Workspace) => (await ws.history()).filter((c) => c.tool === 'delete_file' && !c.undoneBy)
      const before = (await records(new Workspace({ root: dirs.root, trash: { dataDir: dirs.dataDir } }))).length
      const killed = await runChildCrashingAt(dirs, calls, point)
      expect(killed, `the child reached ${point}`).toBe(true)
      const { ws } = await nextWorkspace(dirs)
      expect(existsSync(file), `killed at ${point}`).toBe(!stands)
      const after = await records(ws)
      expect(after.length, `killed at ${point}: recorded exactly when it stands`).toBe(before + (stands ? 1 : 0))
      if (stands) {
        const undone = await ws.undo({ id: after[0]!.id })
        expect(undone.status, `killed at ${point}: ${undone.output}`).toBe('ok')
      }
      expect(readFileSync(file, 'utf8'), `killed at ${point}`).toBe(content)
    }
  })

  it('copy_file, killed at each phase of its commit: the whole copy with its record, or nothing of it', async () => {
    const dirs = tempWorkspaceDirs()
    const source = join(dirs.root, 'src')
    mkdirSync(join(source, 'deep/er'), { recursive: true })
    for (let i = 0; i < 20; i++) writeFileSync(join(source, i % 2 ? 'deep' : 'deep/er', `f${i}.txt`), bigText(`copy ${i}`, 4096))
    const copied = treeOf(source)
    // A copy into parents it makes, and one over an existing tree (which goes to the trash first).
    const scenarios: Array<{ calls: Call[]; destination: string; made: string | null }> = [
      { calls: [['copy_file', { source: 'src', destination: 'new/copy' }]], destination: join(dirs.root, 'new/copy'), made: join(dirs.root, 'new') },
      { calls: [['copy_file', { source: 'src', destination: 'old', overwrite: true }]], destination: join(dirs.root, 'old'), made: null },
    ]
    for (const { calls, destination, made } of scenarios) {
      for (const [point, stands] of COMMIT_PHASES) {
        rmSync(made ?? destination, { recursive: true, force: true })
        if (made === null) {
          mkdirSync(join(destination, 'kept'), { recursive: true })
          writeFileSync(join(destination, 'kept/old.txt'), 'the tree the copy replaces\n')
        }
        const previous = made === null ? treeOf(destination) : null
        const records = async (ws: Workspace) => (await ws.history()).filter((c) => c.tool === 'copy_file' && !c.undoneBy)
        const before = (await records(new Workspace({ root: dirs.root, trash: { dataDir: dirs.dataDir } }))).length
        const killed = await runChildCrashingAt(dirs, calls, point)
        expect(killed, `the child reached ${point}`).toBe(true)
        // The next Workspace also checks that no temp name and no journal record is left.
        const { ws } = await nextWorkspace(dirs)
        const what = `${calls[0]![1].destination as string}, killed at ${point}`
        expect(treeOf(source), `${what}: the source`).toEqual(copied)
        if (stands) expect(treeOf(destination), what).toEqual(copied)
        else if (made === null) expect(treeOf(destination), what).toEqual(previous)
        else expect(existsSync(made), `${what}: no parent left`).toBe(false)
        const after = await records(ws)
        expect(after.length, `${what}: recorded exactly when it stands`).toBe(before + (stands ? 1 : 0))
        if (stands) {
          // The record is the copy's: one undo takes the copy back and puts back what it replaced.
          const undone = await ws.undo({ id: after[0]!.id })
          expect(undone.status, `${what}: ${undone.output}`).toBe('ok')
          if (made === null) expect(treeOf(destination), what).toEqual(previous)
          else expect(existsSync(made), `${what}: undone, no parent left`).toBe(false)
        }
      }
    }
  })

  it('write_file, killed at each phase of its commit: the old file, or the new one with its record', async () => {
    const dirs = tempWorkspaceDirs()
    const file = join(dirs.root, 'w.txt')
    const made = join(dirs.root, 'new', 'dir', 'w.txt')
    const [before, after] = ['old content\n'.repeat(100), 'new content\n'.repeat(100)]
    // An overwrite (the old content kept in the trash) and a new file in two new directories.
    const calls: Call[] = [
      ['write_file', { path: 'w.txt', content: after }],
      ['write_file', { path: 'new/dir/w.txt', content: after }],
    ]
    const records = async (ws: Workspace) => (await ws.history()).filter((c) => c.tool === 'write_file' && !c.undoneBy)
    for (const [point, stands] of COMMIT_PHASES) {
      for (const call of calls) {
        writeFileSync(file, before)
        rmSync(join(dirs.root, 'new'), { recursive: true, force: true })
        const overwrite = call[1].path === 'w.txt'
        const recorded = (await records(new Workspace({ root: dirs.root, trash: { dataDir: dirs.dataDir } }))).length
        const killed = await runChildCrashingAt(dirs, [call], point)
        expect(killed, `the child reached ${point}`).toBe(true)
        // (nextWorkspace: no temp name left, the journal empty.)
        const { ws } = await nextWorkspace(dirs)
        const now = await records(ws)
        expect(now.length, `killed at ${point}: recorded exactly when it stands`).toBe(recorded + (stands ? 1 : 0))
        if (overwrite) {
          expect(readFileSync(file, 'utf8'), `killed at ${point}`).toBe(stands ? after : before)
        } else {
          expect(existsSync(made), `killed at ${point}`).toBe(stands)
          if (!stands) expect(existsSync(join(dirs.root, 'new')), `killed at ${point}: no parent left`).toBe(false)
          else expect(readFileSync(made, 'utf8')).toBe(after)
        }
        if (stands) {
          // The record is the change's: one undo by it takes the change back.
          const undone = await ws.undo({ id: now[0]!.id })
          expect(undone.status, `killed at ${point}: ${undone.output}`).toBe('ok')
          if (overwrite) expect(readFileSync(file, 'utf8'), `killed at ${point}`).toBe(before)
          else expect(existsSync(join(dirs.root, 'new')), `killed at ${point}: undone with its directories`).toBe(false)
        }
      }
    }
  })

  it('edit_file, killed at each phase of its commit: the old file, or the edited one with its record', async () => {
    const dirs = tempWorkspaceDirs()
    const file = join(dirs.root, 'e.txt')
    const [before, after] = ['line\n'.repeat(50) + 'MARK-A\n', 'line\n'.repeat(50) + 'MARK-B\n']
    const calls: Call[] = [['edit_file', { path: 'e.txt', edits: [{ oldString: 'MARK-A', newString: 'MARK-B' }] }]]
    const records = async (ws: Workspace) => (await ws.history()).filter((c) => c.tool === 'edit_file' && !c.undoneBy)
    for (const [point, stands] of COMMIT_PHASES) {
      writeFileSync(file, before)
      const recorded = (await records(new Workspace({ root: dirs.root, trash: { dataDir: dirs.dataDir } }))).length
      const killed = await runChildCrashingAt(dirs, calls, point)
      expect(killed, `the child reached ${point}`).toBe(true)
      const { ws } = await nextWorkspace(dirs)
      const now = await records(ws)
      expect(now.length, `killed at ${point}: recorded exactly when it stands`).toBe(recorded + (stands ? 1 : 0))
      expect(readFileSync(file, 'utf8'), `killed at ${point}`).toBe(stands ? after : before)
      if (stands) {
        // The record carries the delta that takes the edit back.
        const undone = await ws.undo({ id: now[0]!.id })
        expect(undone.status, `killed at ${point}: ${undone.output}`).toBe('ok')
        expect(readFileSync(file, 'utf8'), `killed at ${point}`).toBe(before)
      }
    }
  })

  // Windows cannot exchange two names: there a file replaced is put in place by three renames
  // through a hold name the record names (`put-held`: ours moved to it; `put-aside`: the old file
  // moved to the temp name, the name free). A debug build takes that way here when told to.
  it('apply_patch put by renames (as on Windows), killed between the renames and at each phase: as before, or patched with its record', async () => {
    const byRenames = { AGENT_FS_TOOLS_PUT_BY_RENAMES: '1' }
    const phases: [string, boolean][] = [['put-held', false], ['put-aside', false], ...COMMIT_PHASES]
    const dirs = tempWorkspaceDirs()
    const text = (tag: string): string => 'line\n'.repeat(50) + `${tag}\n`
    const input = '*** Begin Patch\n*** Update File: a.txt\n@@\n-OLD-A\n+NEW-A\n*** Update File: b.txt\n@@\n-OLD-B\n+NEW-B\n*** End Patch\n'
    const files = (): string[] => ['a.txt', 'b.txt'].map((name) => readFileSync(join(dirs.root, name), 'utf8'))
    const records = async (ws: Workspace) => (await ws.history()).filter((c) => c.tool === 'apply_patch' && !c.undoneBy)
    for (const [point, stands] of phases) {
      writeFileSync(join(dirs.root, 'a.txt'), text('OLD-A'))
      writeFileSync(join(dirs.root, 'b.txt'), text('OLD-B'))
      const recorded = (await records(new Workspace({ root: dirs.root, trash: { dataDir: dirs.dataDir } }))).length
      const killed = await runChildCrashingAt(dirs, [['apply_patch', { input }]], point, byRenames)
      expect(killed, `the child reached ${point}`).toBe(true)
      const { ws } = await nextWorkspace(dirs)
      expect(readdirSync(dirs.root).sort(), `killed at ${point}: a temp or held name left`).toEqual(['a.txt', 'b.txt'])
      expect(files(), `killed at ${point}`).toEqual(stands ? [text('NEW-A'), text('NEW-B')] : [text('OLD-A'), text('OLD-B')])
      const now = await records(ws)
      expect(now.length, `killed at ${point}: recorded exactly when it stands`).toBe(recorded + (stands ? 1 : 0))
      if (stands) {
        const undone = await ws.undo({ id: now[0]!.id })
        expect(undone.status, `killed at ${point}: ${undone.output}`).toBe('ok')
        expect(files(), `killed at ${point}: undone`).toEqual([text('OLD-A'), text('OLD-B')])
      }
    }
  })

  it('append_file, killed at each phase of its commit: the old bytes, or the appended ones with their record', async () => {
    const dirs = tempWorkspaceDirs()
    const file = join(dirs.root, 'log.txt')
    const made = join(dirs.root, 'new', 'dir', 'log.txt')
    const [before, appended] = ['old line\n'.repeat(100), 'appended line\n'.repeat(100)]
    // In place (the bytes land before the commit point: recovery takes them back), and a new
    // file in two new directories.
    const calls: Call[] = [
      ['append_file', { path: 'log.txt', content: appended }],
      ['append_file', { path: 'new/dir/log.txt', content: appended }],
    ]
    const records = async (ws: Workspace) => (await ws.history()).filter((c) => c.tool === 'append_file' && !c.undoneBy)
    for (const [point, stands] of COMMIT_PHASES) {
      for (const call of calls) {
        writeFileSync(file, before)
        rmSync(join(dirs.root, 'new'), { recursive: true, force: true })
        const inPlace = call[1].path === 'log.txt'
        const what = `${inPlace ? 'in place' : 'a new file'}, killed at ${point}`
        const recorded = (await records(new Workspace({ root: dirs.root, trash: { dataDir: dirs.dataDir } }))).length
        const killed = await runChildCrashingAt(dirs, [call], point)
        expect(killed, `the child reached ${point}`).toBe(true)
        // (nextWorkspace: no temp name left, the journal empty.)
        const { ws } = await nextWorkspace(dirs)
        const now = await records(ws)
        expect(now.length, `${what}: recorded exactly when it stands`).toBe(recorded + (stands ? 1 : 0))
        if (inPlace) {
          expect(readFileSync(file, 'utf8'), what).toBe(stands ? before + appended : before)
        } else {
          expect(existsSync(made), what).toBe(stands)
          if (!stands) expect(existsSync(join(dirs.root, 'new')), `${what}: no parent left`).toBe(false)
          else expect(readFileSync(made, 'utf8'), what).toBe(appended)
        }
        if (stands) {
          // The record is the append's: one undo by it takes the file back byte for byte.
          const undone = await ws.undo({ id: now[0]!.id })
          expect(undone.status, `${what}: ${undone.output}`).toBe('ok')
          if (inPlace) expect(readFileSync(file, 'utf8'), what).toBe(before)
          else expect(existsSync(join(dirs.root, 'new')), `${what}: undone with its directories`).toBe(false)
        }
      }
    }
  })

  it('append_file, killed before its commit point, then someone appends: theirs stays, ours goes, byte-exact', async () => {
    const dirs = tempWorkspaceDirs()
    const file = join(dirs.root, 'log.txt')
    writeFileSync(join(dirs.root, 'other.txt'), 'other\n')
    const [before, appended, theirs] = ['old line\n'.repeat(100), 'appended line\n'.repeat(100), 'their line\n'.repeat(300)]
    const records = async (ws: Workspace) => (await ws.history()).filter((c) => c.tool === 'append_file' && !c.undoneBy)
    // Killed at `made` (every step made, the record still `applying`); then the recovery that
    // takes ours out is itself killed where it has kept a copy of theirs and moved nothing yet.
    for (const recoveryKilled of [false, true]) {
      const what = recoveryKilled ? 'recovery killed mid-splice' : 'recovery whole'
      writeFileSync(file, before)
      const recorded = (await records(new Workspace({ root: dirs.root, trash: { dataDir: dirs.dataDir } }))).length
      expect(await runChildCrashingAt(dirs, [['append_file', { path: 'log.txt', content: appended }]], 'made'), 'the child reached made').toBe(true)
      expect(readFileSync(file, 'utf8'), what).toBe(before + appended)
      appendFileSync(file, theirs)
      if (recoveryKilled) {
        const killed = await runChildCrashingAt(dirs, [['read_file', { path: 'other.txt' }]], 'splice')
        expect(killed, `${what}: the recovery reached the splice`).toBe(true)
        expect(readFileSync(file, 'utf8'), `${what}: nothing moved yet`).toBe(before + appended + theirs)
      }
      // (nextWorkspace: no temp name left, the journal empty.)
      const { ws } = await nextWorkspace(dirs)
      expect(readFileSync(file, 'utf8'), what).toBe(before + theirs)
      expect((await records(ws)).length, `${what}: no record of an append that does not stand`).toBe(recorded)
    }
  })

  it('remove_dir, killed at each phase of its commit: the directory, or its removal with its record', async () => {
    const dirs = tempWorkspaceDirs()
    const tree = join(dirs.root, 'tree')
    const empty = join(dirs.root, 'empty')
    const build = (): void => {
      rmSync(tree, { recursive: true, force: true })
      mkdirSync(join(tree, 'sub/deeper'), { recursive: true })
      writeFileSync(join(tree, 'a.txt'), 'a\n'.repeat(1000))
      writeFileSync(join(tree, 'sub/b.txt'), 'b\n')
      writeFileSync(join(tree, 'sub/deeper/c.txt'), 'c\n')
      mkdirSync(empty, { recursive: true })
    }
    const cases: [Call, string][] = [
      [['remove_dir', { path: 'tree', recursive: true }], tree],
      [['remove_dir', { path: 'empty' }], empty],
    ]
    // Before the commit point the directory stays and nothing is recorded; after it, it is gone
    // and recorded (a tree with its archive), and one undo (by the record) brings it back.
    for (const [call, target] of cases) {
      for (const [point, stands] of COMMIT_PHASES) {
        build()
        const expected = snapshot(target)
        const records = async (ws: Workspace) => (await ws.history()).filter((c) => c.tool === 'remove_dir' && !c.undoneBy)
        const before = (await records(new Workspace({ root: dirs.root, trash: { dataDir: dirs.dataDir } }))).length
        const killed = await runChildCrashingAt(dirs, [call], point)
        expect(killed, `the child reached ${point}`).toBe(true)
        const { ws } = await nextWorkspace(dirs)
        const what = `${call[1].path} killed at ${point}`
        expect(existsSync(target), what).toBe(!stands)
        expect(readdirSync(dirs.root).sort(), `${what}: no temp name left`).toEqual(stands ? [target === tree ? 'empty' : 'tree'] : ['empty', 'tree'])
        const after = await records(ws)
        expect(after.length, `${what}: recorded exactly when it stands`).toBe(before + (stands ? 1 : 0))
        if (stands) {
          const undone = await ws.undo({ id: after[0]!.id })
          expect(undone.status, `${what}: ${undone.output}`).toBe('ok')
        }
        // Undo makes an empty directory again (its mode kept, its times new); a tree comes
        // back from its archive as it was.
        const strip = (tree: Record<string, Node>) => (target === empty ? { ...tree[''], mtimeNs: 0n } : tree)
        expect(strip(snapshot(target)), what).toEqual(strip(expected))
      }
    }
  })

  it('restore_file, killed at each phase of its commit: the target as it was and the archive, or the restore with its record', async () => {
    const dirs = tempWorkspaceDirs()
    const tree = join(dirs.root, 'tree')
    const over = join(dirs.root, 'over.txt')
    const ws0 = new Workspace({ root: dirs.root, trash: { dataDir: dirs.dataDir }, permissions: ALL, confirm: () => true })
    // A tree restored where it was, and a file restored over another (which goes to the trash).
    for (const overwrite of [false, true]) {
      for (const [point, stands] of COMMIT_PHASES) {
        rmSync(tree, { recursive: true, force: true })
        mkdirSync(join(tree, 'sub'), { recursive: true })
        writeFileSync(join(tree, 'a.txt'), 'a\n'.repeat(1000))
        writeFileSync(join(tree, 'sub/b.txt'), 'b\n')
        writeFileSync(over, 'restored\n')
        const source = overwrite ? over : tree
        const expected = snapshot(source)
        const trashed = await ws0.call(overwrite ? 'delete_file' : 'remove_dir', { path: source, recursive: overwrite ? undefined : true })
        expect(trashed.status, trashed.output).toBe('ok')
        const archive = trashed.data!.trashedTo as string
        const archiveSha = sha(readFileSync(archive))
        if (overwrite) writeFileSync(over, 'in the way\n')
        const records = async (ws: Workspace) => (await ws.history()).filter((c) => c.tool === 'restore_file' && !c.undoneBy)
        const before = (await records(ws0)).length
        // The tree to a path whose parents are missing (made with the change, or not at all).
        const at = overwrite ? over : join(dirs.root, 'back/deep/tree')
        rmSync(join(dirs.root, 'back'), { recursive: true, force: true })
        const call: Call = ['restore_file', { trashedPath: archive, ...(overwrite ? { overwrite: true } : { targetPath: 'back/deep/tree' }) }]
        const killed = await runChildCrashingAt(dirs, [call], point)
        const what = `${overwrite ? 'overwrite' : 'tree'} killed at ${point}`
        expect(killed, `the child reached ${point}`).toBe(true)
        const { ws, trash } = await nextWorkspace(dirs)
        const after = await records(ws)
        expect(after.length, `${what}: recorded exactly when it stands`).toBe(before + (stands ? 1 : 0))
        if (stands) {
          expect(snapshot(at), what).toEqual(expected)
          expect(existsSync(archive), `${what}: the archive is used up`).toBe(false)
          if (overwrite) {
            const kept = trash.find((e) => e.originalPath === over)
            expect(kept, `${what}: what was in the way is in the trash`).toBeDefined()
          }
        } else {
          expect(existsSync(archive), `${what}: the archive stays`).toBe(true)
          expect(sha(readFileSync(archive)), `${what}: the archive stays whole`).toBe(archiveSha)
          if (overwrite) expect(readFileSync(over, 'utf8'), what).toBe('in the way\n')
          else expect(existsSync(join(dirs.root, 'back')), `${what}: no parent left`).toBe(false)
        }
        emptyBucket(dirs)
      }
    }
  })

  it('move_file, killed at each phase of its commit: the source where it was, or the move with its record', async () => {
    const dirs = tempWorkspaceDirs()
    const tree = join(dirs.root, 'tree')
    const moved = join(dirs.root, 'new/place/tree')
    const file = join(dirs.root, 'f.txt')
    const target = join(dirs.root, 'g.txt')
    // A directory to a path whose parents are missing, and a file over another (which goes to the trash).
    const cases: [Call, string, string][] = [
      [['move_file', { source: 'tree', destination: 'new/place/tree' }], tree, moved],
      [['move_file', { source: 'f.txt', destination: 'g.txt', overwrite: true }], file, target],
    ]
    for (const [call, source, destination] of cases) {
      for (const [point, stands] of COMMIT_PHASES) {
        rmSync(tree, { recursive: true, force: true })
        rmSync(join(dirs.root, 'new'), { recursive: true, force: true })
        mkdirSync(join(tree, 'sub'), { recursive: true })
        writeFileSync(join(tree, 'a.txt'), 'a\n'.repeat(1000))
        writeFileSync(join(tree, 'sub/b.txt'), 'b\n')
        writeFileSync(file, 'moved\n')
        writeFileSync(target, 'in the way\n')
        const expected = snapshot(source)
        const records = async (ws: Workspace) => (await ws.history()).filter((c) => c.tool === 'move_file' && !c.undoneBy)
        const before = (await records(new Workspace({ root: dirs.root, trash: { dataDir: dirs.dataDir } }))).length
        const killed = await runChildCrashingAt(dirs, [call], point)
        const what = `${call[1].source} killed at ${point}`
        expect(killed, `the child reached ${point}`).toBe(true)
        const { ws, trash } = await nextWorkspace(dirs)
        const after = await records(ws)
        expect(after.length, `${what}: recorded exactly when it stands`).toBe(before + (stands ? 1 : 0))
        expect(existsSync(source), what).toBe(!stands)
        if (stands) {
          expect(snapshot(destination), what).toEqual(expected)
          if (source === file) expect(trash.some((e) => e.originalPath === target), `${what}: what was in the way is in the trash`).toBe(true)
          const undone = await ws.undo({ id: after[0]!.id })
          expect(undone.status, `${what}: ${undone.output}`).toBe('ok')
        } else {
          if (source === tree) expect(existsSync(join(dirs.root, 'new')), `${what}: no parent left`).toBe(false)
          else expect(readFileSync(target, 'utf8'), what).toBe('in the way\n')
        }
        // Moved back by the undo, or never moved.
        expect(snapshot(source), what).toEqual(expected)
        emptyBucket(dirs)
      }
    }
  })

  it('move_file across file systems, killed at each phase of its commit: the source where it was, or the move with its record', async (ctx) => {
    const dirs = tempWorkspaceDirs()
    let other: string
    try {
      other = resolve(mkdtempSync('/dev/shm/afs-crash-across-')) // on Windows, on the current drive
    } catch {
      return ctx.skip()
    }
    try {
      if (statSync(other).dev === statSync(dirs.root).dev) return ctx.skip()
      const tree = join(dirs.root, 'tree')
      const far = join(other, 'far.txt')
      const over = join(dirs.root, 'over.txt')
      // A tree to the other file system into parents it makes, and a file from there over one
      // here (which goes to the trash): copied, placed, the source removed, in one commit.
      const cases: [Call, string, string, string | null][] = [
        [['move_file', { source: 'tree', destination: join(other, 'new/place/tree') }], tree, join(other, 'new/place/tree'), join(other, 'new')],
        [['move_file', { source: far, destination: 'over.txt', overwrite: true }], far, over, null],
      ]
      const temps = (dir: string): string[] => readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((n) => n.endsWith(TEMP_SUFFIX))
      for (const [call, source, destination, made] of cases) {
        for (const [point, stands] of COMMIT_PHASES) {
          rmSync(tree, { recursive: true, force: true })
          rmSync(join(other, 'new'), { recursive: true, force: true })
          mkdirSync(join(tree, 'sub'), { recursive: true })
          writeFileSync(join(tree, 'a.txt'), bigText('across', 64 << 10))
          writeFileSync(join(tree, 'sub/b.txt'), 'b\n')
          writeFileSync(far, 'moved across\n')
          writeFileSync(over, 'in the way\n')
          const expected = snapshot(source)
          const records = async (ws: Workspace) => (await ws.history()).filter((c) => c.tool === 'move_file' && !c.undoneBy)
          const before = (await records(new Workspace({ root: dirs.root, trash: { dataDir: dirs.dataDir } }))).length
          const killed = await runChildCrashingAt(dirs, [call], point)
          const what = `${source} killed at ${point}`
          expect(killed, `the child reached ${point}`).toBe(true)
          // (nextWorkspace: no temp name left under the root, the journal empty.)
          const { ws, trash } = await nextWorkspace(dirs)
          expect(temps(other), `${what}: no temp name left on the other file system`).toEqual([])
          const after = await records(ws)
          expect(after.length, `${what}: recorded exactly when it stands`).toBe(before + (stands ? 1 : 0))
          expect(existsSync(source), what).toBe(!stands)
          if (stands) {
            expect(snapshot(destination), what).toEqual(expected)
            if (made === null) expect(trash.some((e) => e.originalPath === over), `${what}: what was in the way is in the trash`).toBe(true)
            // The record is the move's: one undo by it brings the source back byte for byte.
            const undone = await ws.undo({ id: after[0]!.id })
            expect(undone.status, `${what}: ${undone.output}`).toBe('ok')
            if (made === null) expect(readFileSync(over, 'utf8'), `${what}: undone`).toBe('in the way\n')
          } else {
            if (made !== null) expect(existsSync(made), `${what}: no parent left`).toBe(false)
            else expect(readFileSync(over, 'utf8'), what).toBe('in the way\n')
          }
          // Moved back by the undo, or never moved.
          expect(snapshot(source), what).toEqual(expected)
          emptyBucket(dirs)
        }
      }
    } finally {
      rmSync(other, { recursive: true, force: true })
    }
  })

  it('remove_dir permanent, killed at each phase of its commit: the tree as it was, or gone with its record', async () => {
    const dirs = tempWorkspaceDirs()
    const tree = join(dirs.root, 'tree')
    const call: Call = ['remove_dir', { path: 'tree', recursive: true, permanent: true }]
    // Before the commit point the tree stays whole and nothing is recorded; after it, it is gone
    // (nothing kept in the trash) and recorded as a permanent removal, which no undo takes back.
    for (const [point, stands] of COMMIT_PHASES) {
      rmSync(tree, { recursive: true, force: true })
      mkdirSync(join(tree, 'sub/deeper'), { recursive: true })
      writeFileSync(join(tree, 'a.txt'), 'a\n'.repeat(1000))
      writeFileSync(join(tree, 'sub/b.txt'), 'b\n')
      writeFileSync(join(tree, 'sub/deeper/c.txt'), 'c\n')
      const expected = snapshot(tree)
      const records = async (ws: Workspace) => (await ws.history()).filter((c) => c.tool === 'remove_dir')
      const before = (await records(new Workspace({ root: dirs.root, trash: { dataDir: dirs.dataDir } }))).length
      const killed = await runChildCrashingAt(dirs, [call], point)
      const what = `killed at ${point}`
      expect(killed, `the child reached ${point}`).toBe(true)
      const { ws, trash } = await nextWorkspace(dirs)
      expect(readdirSync(dirs.root), `${what}: no temp name left`).toEqual(stands ? [] : ['tree'])
      if (!stands) expect(snapshot(tree), what).toEqual(expected)
      expect(trash, `${what}: nothing kept`).toEqual([])
      const after = await records(ws)
      expect(after.length, `${what}: recorded exactly when it stands`).toBe(before + (stands ? 1 : 0))
      if (stands) {
        expect(after[0]!.files, what).toEqual([{ path: tree, action: 'removed' }])
        expect(after[0]!.undoable, `${what}: nothing kept to undo it with`).toBe(false)
      }
    }
  })

  // The undo's steps are the executor's (`staged` is a point only the executor reaches): killed at
  // each of them, the tree is exactly as before the undo with no undo record (and the session can
  // still be undone), or exactly as undone with its record (and undoing that record, a redo,
  // gives the session's changes back byte for byte). With changes inside, a file and a directory
  // moved into the tree before its removal come out of the tree the undo rebuilds, a directory
  // moved within it goes back to its place there, and a file and a directory moved into it from
  // a tree the session removed too go back into that one as it comes back.
  for (const inside of [false, true]) {
    it(`undo of a session${inside ? ' with changes inside the tree it removed' : ''}, killed at each phase of its commit: as before the undo, or undone with its record`, async () => {
      const session = 'crash-undo-aimed'
      for (const [point, stands] of COMMIT_PHASES) {
        const dirs = tempWorkspaceDirs()
        const { root } = dirs
        writeFileSync(join(root, 'over.txt'), 'over\n'.repeat(500))
        writeFileSync(join(root, 'edit.txt'), 'a\nMARK-OLD\nb\n'.repeat(100))
        writeFileSync(join(root, 'gone.txt'), 'gone\n'.repeat(300))
        chmodSync(join(root, 'gone.txt'), 0o600)
        mkdirSync(join(root, 'tree/sub/deeper'), { recursive: true })
        writeFileSync(join(root, 'tree/a.txt'), 'a\n'.repeat(1000))
        chmodSync(join(root, 'tree/a.txt'), 0o640)
        writeFileSync(join(root, 'tree/sub/b.txt'), 'b\n')
        writeFileSync(join(root, 'tree/sub/deeper/c.txt'), 'c\n')
        symlinkOrSkip('a.txt', join(root, 'tree/link'))
        mkdirSync(join(root, 'pkg/inner'), { recursive: true })
        writeFileSync(join(root, 'pkg/inner/m.txt'), 'm\n')
        writeFileSync(join(root, 'into.txt'), 'into\n'.repeat(50))
        mkdirSync(join(root, 'dir-in/deep'), { recursive: true })
        writeFileSync(join(root, 'dir-in/deep/d.txt'), 'd\n'.repeat(200))
        symlinkOrSkip('deep/d.txt', join(root, 'dir-in/link'))
        chmodSync(join(root, 'dir-in/deep'), 0o700)
        mkdirSync(join(root, 'from-tree/box'), { recursive: true })
        writeFileSync(join(root, 'from-tree/o.txt'), 'o\n'.repeat(100))
        writeFileSync(join(root, 'from-tree/box/p.txt'), 'p\n')
        const start = treeOf(root)
        const ws = new Workspace({ root, trash: { dataDir: dirs.dataDir, sessionId: session }, permissions: ALL, confirm: () => true, staleWrites: 'allow' })
        const calls: Call[] = [
          ['write_file', { path: 'over.txt', content: 'new over\n' }],
          ['edit_file', { path: 'edit.txt', edits: [{ oldString: 'MARK-OLD', newString: 'MARK-NEW', replaceAll: true }] }],
          ['write_file', { path: 'added/deep/new.txt', content: 'added\n' }],
          ['delete_file', { path: 'gone.txt' }],
          ['create_directory', { path: 'made/empty' }],
          ...(inside
            ? ([
                ['write_file', { path: 'tree/a.txt', content: 'rewritten\n' }],
                ['write_file', { path: 'tree/sub/new.txt', content: 'new inside\n' }],
                ['delete_file', { path: 'tree/sub/b.txt' }],
                ['create_directory', { path: 'tree/sub/deeper/made' }],
                // Moved into the tree, so the undo moves it out of the tree it brings back.
                ['move_file', { source: 'into.txt', destination: 'tree/sub/into.txt' }],
                // A directory moved into the tree and changed there, and one moved within it:
                // the undo moves them back as it stages the tree, and the first out of it.
                ['move_file', { source: 'dir-in', destination: 'tree/sub/dir-in' }],
                ['write_file', { path: 'tree/sub/dir-in/deep/d.txt', content: 'rewritten d\n' }],
                ['move_file', { source: 'tree/sub/deeper', destination: 'tree/deeper-moved' }],
                // Moved into the tree from one removed after it: the undo moves them from the
                // one it brings back into the other.
                ['move_file', { source: 'from-tree/o.txt', destination: 'tree/o.txt' }],
                ['move_file', { source: 'from-tree/box', destination: 'tree/box' }],
                // Moved out of the tree: the undo moves it back into the top of the tree it
                // stages (a journal record naming that directory by a plain path).
                ['move_file', { source: 'tree/link', destination: 'link-out' }],
              ] as Call[])
            : []),
          ['remove_dir', { path: 'tree', recursive: true }],
          ...(inside ? ([['remove_dir', { path: 'from-tree', recursive: true }]] as Call[]) : []),
          ['move_file', { source: 'pkg', destination: 'moved/pkg' }],
        ]
        for (const [tool, args] of calls) {
          const r = await ws.call(tool, args)
          expect(r.status, `${tool}: ${r.output}`).toBe('ok')
        }
        const changed = treeOf(root)
        const what = `killed at ${point}`
        expect(await runChildCrashingAt(dirs, [['ws.undo', { sessionId: session }]], point), `the child reached ${point}`).toBe(true)
        const { ws: next } = await nextWorkspace(dirs)
        expect(treeOf(root), what).toEqual(stands ? start : changed)
        const history = await next.history()
        const undos = history.filter((c) => c.tool === 'undo')
        expect(undos.length, `${what}: the undo recorded exactly when it stands`).toBe(stands ? 1 : 0)
        const taken = history.filter((c) => c.sessionId === session && c.tool !== 'undo')
        expect(taken.length, what).toBe(calls.length)
        for (const change of taken) expect(change.undoneBy, `${what}: ${change.tool}`).toBe(stands ? undos[0]!.id : undefined)
        if (stands) {
          const redo = await next.undo({ id: undos[0]!.id })
          expect(redo.status, `${what}: ${redo.output}`).toBe('ok')
          expect(treeOf(root), `${what}: redone`).toEqual(changed)
        } else {
          const again = await next.undo({ sessionId: session })
          expect(again.status, `${what}: ${again.output}`).toBe('ok')
          expect(treeOf(root), `${what}: undone after all`).toEqual(start)
        }
        rmSync(dirname(dirs.root), { recursive: true, force: true })
      }
    })
  }
})
