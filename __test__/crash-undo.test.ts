/**
 * Crash harness, the undo of a session (issue "Hardening"): `ws.undo({ sessionId })` runs in a
 * child Node process (`helpers/crash-child.mjs`) that is SIGKILLed at a random moment, at least 50
 * times for each of three sessions (MBs, many files), and at moments aimed at its commit. After
 * each kill:
 *
 * - ws.undo({ sessionId }) of six changes (files, a tree restored from the trash, a directory moved
 *   back), and of ten where four changed files inside the tree before it was removed (taken back
 *   inside the tree staged from its archive), and of eight where two files were moved into the tree
 *   before it was removed (one over a file there: set aside in the staged tree, moved out once it
 *   is placed): once the next Workspace recovered, the tree is exactly as before the undo or exactly as
 *   after it, never a mix; every archive the session made is still in the trash, byte for byte;
 *   what the undo replaced is in the trash; the history agrees with the tree (undone: one undo
 *   record, every change of the session `undoneBy` it; not undone: no undo record, and the
 *   session can still be undone).
 *
 * The rest of the harness, with the kills of this undo aimed at each phase of its commit, is in
 * `crash.test.ts`. These kills take about as long as all of that file, so they have a file of
 * their own, which vitest's two workers run in parallel with it. Both files use the helpers in
 * `helpers/crash.ts`.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { describe, expect, it } from 'vitest'
import { Workspace } from 'agent-fs-tools'
import { tempWorkspaceDirs } from './helpers/temp.js'
import { ALL, bucketDir } from './helpers/trash.js'
import { scaled } from './helpers/time.js'
import {
  bigText,
  delays,
  differsAt,
  KILLS,
  leftovers,
  nextWorkspace,
  report,
  runChild,
  runChildUntil,
  sha,
  treeOf,
  type Call,
  type Tally,
  type Tree,
} from './helpers/crash.js'

describe('crash harness (SIGKILL mid-operation)', { timeout: scaled(240_000) }, () => {
  // The second variant also changes files inside the tree before removing it: the undo stages
  // that tree from its archive and takes those changes back inside it, in the same commit. The
  // third moves files into the tree before removing it (one over a file there, one into a
  // directory the move makes): the undo sets them aside in the staged tree and moves them out
  // once it is placed, the replaced file back at its place (property seeds 198975 and 610763).
  for (const variant of ['plain', 'inside', 'aside'] as const) {
    const inside = variant === 'inside'
    const aside = variant === 'aside'
    const described = { plain: '', inside: ' with changes inside the tree it removed', aside: ' with files moved into the tree it removed' }[variant]
    it(`undo of a session${described}: the tree is exactly as before the undo or exactly as after it; no archive is lost`, { timeout: scaled(900_000) }, async () => {
      // A session that changes files (an overwrite, an edit, a new file, a delete), removes a tree
      // (restored from its archive by the undo) and moves a directory (moved back): the undo is one
      // journaled commit, killed at random moments. Each round starts afresh (the history knows
      // directories by inode, so a copied tree would not do).
      const session = 'crash-undo'
      const stamp = (dir: string): void => {
        for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) stamp(join(dir, e.name))
        for (const e of readdirSync(dir)) utimesSync(join(dir, e), 1_700_000_000, 1_700_000_000)
      }
      const texts = {
        over: bigText('over', 1 << 20),
        overNew: bigText('over-new', 1 << 20),
        edit: `${bigText('edit-a', 1 << 20)}MARK-OLD\n${bigText('edit-b', 1 << 20)}`,
        added: bigText('added', 512 << 10),
        gone: bigText('gone', 1 << 20),
      }
      const setup = async (): Promise<{ dirs: { root: string; dataDir: string }; start: Tree; after: Tree; archives: Map<string, string> }> => {
        const dirs = tempWorkspaceDirs()
        const { root } = dirs
        writeFileSync(join(root, 'over.txt'), texts.over)
        writeFileSync(join(root, 'edit.txt'), texts.edit)
        writeFileSync(join(root, 'gone.txt'), texts.gone)
        if (aside) {
          writeFileSync(join(root, 'loose.txt'), bigText('loose', 256 << 10))
          writeFileSync(join(root, 'stray.txt'), bigText('stray', 256 << 10))
        }
        for (let d = 0; d < 6; d++) {
          mkdirSync(join(root, 'tree', `d${d}`), { recursive: true })
          for (let f = 0; f < 10; f++) writeFileSync(join(root, 'tree', `d${d}`, `f${f}.txt`), bigText(`t${d}/${f}`, 12 << 10))
        }
        writeFileSync(join(root, 'tree', 'big.bin'), bigText('tree-big', 1 << 20))
        mkdirSync(join(root, 'pkg', 'inner'), { recursive: true })
        for (let f = 0; f < 8; f++) writeFileSync(join(root, 'pkg', 'inner', `m${f}.txt`), bigText(`m${f}`, 16 << 10))
        stamp(root)
        const start = treeOf(root)
        const limits = { writeMaxBytes: 64 << 20, editMaxFileBytes: 64 << 20 }
        // The session rewrites files it has not read: this tests undo under kills, not stale views (../docs/tools.md#stale-views).
        const ws = new Workspace({ root, trash: { dataDir: dirs.dataDir, sessionId: session }, permissions: ALL, limits, confirm: () => true, staleWrites: 'allow' })
        const calls: Call[] = [
          ['write_file', { path: 'over.txt', content: texts.overNew }],
          ['edit_file', { path: 'edit.txt', edits: [{ oldString: 'MARK-OLD', newString: 'MARK-NEW' }] }],
          ['write_file', { path: 'added.txt', content: texts.added }],
          ['delete_file', { path: 'gone.txt' }],
          ...(inside
            ? ([
                ['write_file', { path: 'tree/d0/f0.txt', content: texts.added }],
                ['edit_file', { path: 'tree/big.bin', edits: [{ oldString: 'tree-big 0 ', newString: 'TREE-BIG 0 ' }] }],
                ['write_file', { path: 'tree/new/inner.txt', content: texts.overNew }],
                ['delete_file', { path: 'tree/d1/f1.txt' }],
              ] as Call[])
            : []),
          ...(aside
            ? ([
                ['move_file', { source: 'loose.txt', destination: 'tree/d2/f2.txt', overwrite: true }],
                ['move_file', { source: 'stray.txt', destination: 'tree/made/here/stray.txt' }],
              ] as Call[])
            : []),
          ['remove_dir', { path: 'tree', recursive: true }],
          ['move_file', { source: 'pkg', destination: 'moved-pkg' }],
        ]
        for (const [tool, args] of calls) {
          const r = await ws.call(tool, args)
          expect(r.status, r.output).toBe('ok')
        }
        const bucket = bucketDir(dirs.dataDir, root)
        const archives = new Map(readdirSync(bucket).filter((n) => n.endsWith('.tar.gz')).map((n) => [n, sha(readFileSync(join(bucket, n)))]))
        return { dirs, start, after: treeOf(root), archives }
      }
      const undo: Call[] = [['ws.undo', { sessionId: session }]]
      const drop = (dirs: { root: string }): void => rmSync(dirname(dirs.root), { recursive: true, force: true })

      let window = Infinity
      for (let i = 0; i < 3; i++) {
        const { dirs, start } = await setup()
        const run = await runChild(dirs, undo, null)
        expect(run.killed).toBe(false)
        expect(treeOf(dirs.root)).toEqual(start)
        window = Math.min(window, Math.max(run.ms ?? 0, 5))
        drop(dirs)
      }
      let undone = 0
      /** After a kill: all or nothing, no archive lost; returns whether the session ended undone. */
      const check = async (dirs: { root: string; dataDir: string }, start: Tree, after: Tree, archives: Map<string, string>, what: string): Promise<boolean> => {
        const { ws, trash } = await nextWorkspace(dirs)
        const now = treeOf(dirs.root)
        const isUndone = isDeepStrictEqual(now, start)
        const mixed = !isUndone && !isDeepStrictEqual(now, after)
        // Where it differs from each, so that a mix seen once (under Wine, seed 34856) can be read.
        const where = mixed ? `: unlike before at ${differsAt(now, start).join(', ')}; unlike after at ${differsAt(now, after).join(', ')}` : ''
        expect(mixed, `a mix of before and after the undo (${what})${where}`).toBe(false)
        // Every archive the session made is still there, byte for byte.
        const bucket = bucketDir(dirs.dataDir, dirs.root)
        for (const [name, digest] of archives) {
          expect(existsSync(join(bucket, name)), `${name} left the trash (${what})`).toBe(true)
          expect(sha(readFileSync(join(bucket, name))), `${name} changed (${what})`).toBe(digest)
        }
        if (isUndone) {
          undone++
          // What the undo replaced is in the trash (the edit's bytes are kept as a delta, in the
          // undo's own record).
          for (const name of ['over.txt', 'added.txt']) {
            expect(trash.some((e) => e.originalPath === join(dirs.root, name)), `${name} as the session left it is not in the trash (${what})`).toBe(true)
          }
          // The history agrees with the tree: the undo is recorded, once, and every change of the
          // session is undone by it (so it can be redone).
          const history = await ws.history()
          const undos = history.filter((c) => c.tool === 'undo')
          expect(undos.length, `the undo is not in the history once (${what})`).toBe(1)
          const taken = history.filter((c) => c.sessionId === session && c.tool !== 'undo')
          expect(taken.length).toBe(inside ? 10 : aside ? 8 : 6)
          for (const change of taken) expect(change.undoneBy, `${change.tool} not undone in the history (${what})`).toBe(undos[0]!.id)
        } else {
          // Nothing was undone: the history says so, and the next Workspace can undo the session,
          // exactly.
          const history = await ws.history()
          expect(history.filter((c) => c.tool === 'undo'), `an undo recorded that did not happen (${what})`).toEqual([])
          const again = await ws.undo({ sessionId: session })
          expect(again.status, `${what}: ${again.output}`).toBe('ok')
          expect(treeOf(dirs.root)).toEqual(start)
        }
        drop(dirs)
        return isUndone
      }
      const seed = Date.now() % 100_000
      const t: Tally = { kills: 0, midway: 0, leftovers: 0 }
      // The commit is the end of the call, and a loaded machine runs slower than the fastest
      // calibration run: the kills are spread over 1.5 × the window (those too late do not count).
      for (const delay of delays(window * 1.5, seed, t)) {
        const { dirs, start, after, archives } = await setup()
        const run = await runChild(dirs, undo, delay)
        t.kills += run.killed ? 1 : 0
        const left = leftovers(dirs.root).length
        t.leftovers += left
        if (run.killed && left > 0) t.midway++
        await check(dirs, start, after, archives, `kill at ${delay} ms, seed ${seed}`)
      }
      // Kills aimed at the commit: while a restored tree is staged beside its place, and once the
      // moved directory is back (the commit's renames are under way).
      const aims: [string, (root: string) => boolean][] = [
        ['a tree staged', (root) => leftovers(root).length > 0],
        ['pkg moved back', (root) => existsSync(join(root, 'pkg'))],
        ...(aside ? ([['a file moved out of the placed tree', (root) => existsSync(join(root, 'loose.txt'))]] as [string, (root: string) => boolean][]) : []),
      ]
      let aimedUndone = 0
      for (const [what, when] of aims) {
        for (let round = 0; round < 4; round++) {
          const { dirs, start, after, archives } = await setup()
          const { killed } = await runChildUntil(dirs, undo, () => when(dirs.root))
          if (killed) t.kills++
          if (await check(dirs, start, after, archives, `kill aimed at: ${what}, round ${round}`)) aimedUndone++
        }
      }
      expect(t.kills).toBeGreaterThanOrEqual(KILLS)
      report(
        `undo of a session (${{ plain: '6 changes', inside: '10 changes, 4 inside the removed tree', aside: '8 changes, 2 moves into the removed tree' }[variant]})`,
        seed,
        window,
        t,
        ` + ${aims.length * 4} aimed at the commit (${aimedUndone} of them left it undone); ${undone} kills left the session undone (each with the undo in the history), the rest left it as it was`,
      )
    })
  }
})
