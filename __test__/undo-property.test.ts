/**
 * Property test for undo (../docs/history-and-undo.md, issue 20): a random sequence of changes from every tool that
 * changes something, on a small tree with modes, links, a sparse file and CRLF/BOM text, then
 *
 * (a) `ws.undo()` step by step gives back the starting tree byte for byte;
 * (b) on a second workspace that ran the same sequence, `ws.undo({ sessionId })` does too, in one
 *     step; undoing that undo (a redo) gives back the tree as the sequence left it (and, with
 *     FULL, undoing the session again gives back the starting tree).
 *
 * The sequence comes from a seeded PRNG and is chosen from what is on disk at each step, so the
 * same seed makes the same calls on both workspaces. A failure names the seed and the calls
 * (`UNDO_SEEDS=1234` replays one seed, `UNDO_RUNS` sets how many are tried).
 */
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { Workspace, type ToolResult } from 'agent-fs-tools'
import { tempWorkspace } from './helpers/temp.js'
import { ALL, snapshot, type Node } from './helpers/trash.js'
import { prng } from './helpers/random.js'
import { scaled } from './helpers/time.js'
import { symlinkOrSkip } from './helpers/links.js'

type Tree = Record<string, Omit<Node, 'mtimeNs'>>

/** A tree as undo must give it back: kind, mode, content, link target (times are not compared). */
function tree(root: string): Tree {
  const out: Tree = {}
  for (const [path, { mtimeNs: _, ...rest }] of Object.entries(snapshot(root))) out[path] = rest
  return out
}


/** The starting tree: text with unique `<tN>` tokens (LF, CRLF with a BOM), modes, links, a sparse file. */
function buildStart(root: string): void {
  const w = (rel: string, text: string | Buffer, mode?: number): void => {
    writeFileSync(join(root, rel), text)
    if (mode !== undefined) chmodSync(join(root, rel), mode)
  }
  mkdirSync(join(root, 'src/lib'), { recursive: true })
  mkdirSync(join(root, 'docs'))
  mkdirSync(join(root, 'empty'))
  w('a.txt', '<t1> alpha\n<t2> beta\n<t3> gamma\n')
  w('run.sh', '#!/bin/sh\n<t4> echo hi\n', 0o750)
  w('crlf.txt', '\ufeff<t5> one\r\n<t6> two\r\n<t7> three\r\n')
  w('src/main.ts', '<t8> import x\n<t9> main()\n')
  w('src/lib/util.ts', '<t10> export {}\n<t11> // util', 0o640)
  w('docs/readme.md', '<t12> # Docs\r\n<t13> text\r\n')
  w('src/lib/data.bin', Buffer.from([0, 1, 2, 3, 255, 254, 0, 7]), 0o600)
  writeFileSync(join(root, 'docs/sparse.img'), '')
  truncateSync(join(root, 'docs/sparse.img'), 1 << 20)
  symlinkOrSkip('main.ts', join(root, 'src/to-main'))
  symlinkOrSkip('nowhere/at/all', join(root, 'dangling'))
  chmodSync(join(root, 'src/lib'), 0o750)
  chmodSync(join(root, 'empty'), 0o705)
}

/**
 * Trashes a file and a tree made for it, by another session (before the sequence): archives the
 * sequence may restore with restore_file.
 */
async function trashedBefore(root: string, dataDir: string): Promise<State['archives']> {
  mkdirSync(join(root, 'old/deep'), { recursive: true })
  writeFileSync(join(root, 'old/deep/kept.txt'), '<t90> kept\n')
  symlinkOrSkip('deep/kept.txt', join(root, 'old/link'))
  writeFileSync(join(root, 'old.txt'), '<t91> old\n')
  chmodSync(join(root, 'old.txt'), 0o604)
  const ws = new Workspace({ root, permissions: ALL, confirm: () => true, trash: { dataDir, sessionId: 'before' } })
  const archives: State['archives'] = []
  for (const [tool, path, kind] of [['delete_file', 'old.txt', 'file'], ['remove_dir', 'old', 'dir']] as const) {
    const r = await ws.call(tool, tool === 'remove_dir' ? { path, recursive: true } : { path })
    if (r.status !== 'ok') throw new Error(r.output)
    archives.push({ archive: r.data?.trashedTo as string, original: path, kind })
  }
  return archives
}

interface Entry {
  rel: string
  kind: 'file' | 'dir' | 'symlink'
}

/** Every entry under `root` (not `root` itself), sorted, never following links. */
function entries(root: string): Entry[] {
  const out: Entry[] = []
  const walk = (rel: string): void => {
    for (const name of readdirSync(join(root, rel)).sort()) {
      const child = rel === '' ? name : `${rel}/${name}`
      const st = lstatSync(join(root, child))
      if (st.isSymbolicLink()) out.push({ rel: child, kind: 'symlink' })
      else if (st.isDirectory()) {
        out.push({ rel: child, kind: 'dir' })
        walk(child)
      } else out.push({ rel: child, kind: 'file' })
    }
  }
  walk('')
  return out
}

type Call = [tool: string, args: Record<string, unknown>]

/** What the generator remembers between steps: archives it may restore, the next token. */
interface State {
  token: number
  archives: { archive: string; original: string; kind: 'file' | 'dir' | 'symlink' }[]
  /** Paths earlier steps touched; `structural` unless only their content changed. */
  touched: { rel: string; structural: boolean }[]
  /** Whether copy_file is among the changes drawn (see {@link KEPT_SEQUENCES}). */
  copies: boolean
  /** Whether the steps build on each other freely (see {@link FULL}). */
  full: boolean
}

/**
 * Seeds whose sequences are kept as they were before copy_file joined the generator: under FULL
 * they reproduced undo defects (seed 64352: a restore into a directory moved away; 16838 and
 * 230651: a session undo after a redo, facts keyed by a moved parent's path), which their fixes
 * are checked against ({@link FULL_SEEDS}). They draw no copy_file.
 */
const KEPT_SEQUENCES = [16838, 64352, 230651]

/**
 * FULL (`UNDO_PROPERTY_FULL=1`) lets the steps build on each other freely: changes beneath a
 * directory a later step moves or removes, several directories made at once, a restore of an
 * archive the same sequence made. One by one, those undo exactly (but for rare seeds, see the
 * session note of issue 20); a session undo refuses (CONFLICT, nothing changed) where an entry
 * would come out of a tree in the trash that does not come back. By default each step keeps to paths no earlier step
 * changed the structure of (content changes of one file may follow each other), and makes at
 * most one new level, so that every seed must pass every check.
 */
const FULL = process.env.UNDO_PROPERTY_FULL === '1'

/**
 * Seeds run with FULL's generator in every run, beside the default seeds: each reproduced an
 * undo defect under FULL that is fixed (191056 and 230651: a session undo after a redo, the
 * facts the redo recorded keyed by a moved parent's path; 16838: the same, for a restored file
 * moved into new directories, trashed with them by the session undo; 103947: directories a
 * change made inside a directory the session moved, left behind by the session undo; 119785:
 * a directory a change made, removed since, made again by the session undo and left; 1000:
 * a directory moved into a tree restored from the trash, its file given back beneath it, the
 * redo moving the directory out before it checked the file; 64352: a restore into directories
 * it made again where one was moved away, the session undo moving the directory back in their
 * place; 175218: the same for a directory removed since, the restored link moved into the tree
 * that comes back from the trash; 198975: a file moved over another in a directory removed
 * since, moved out of the tree that comes back while the file it replaced comes back in its
 * place; 610763: a file moved into a directory made in a directory removed since, moved out
 * of the tree that comes back, which the made directory does not come back in). Their session
 * undo must not refuse.
 */
const FULL_SEEDS = [1000, 16838, 64352, 103947, 119785, 175218, 191056, 198975, 230651, 610763]

/**
 * Seeds run with FULL's generator in every run whose session undo must refuse, changing nothing
 * (../docs/history-and-undo.md#limits): 301922, a file moved into a tree the session copied over
 * a file, removed since (the copy does not come back, so the file cannot come out of it).
 */
const REFUSED_SEEDS = [301922]

/** The paths `call` touches (relative), and whether each changes structure (not only content). */
function touches([tool, args]: Call): { rel: string; structural: boolean }[] {
  const p = (key: string) => String(args[key])
  switch (tool) {
    case 'write_file':
    case 'edit_file':
    case 'append_file':
      return [{ rel: p('path'), structural: false }]
    case 'move_file':
    case 'copy_file':
      return [p('source'), p('destination')].map((rel) => ({ rel, structural: true }))
    case 'restore_file':
      return [{ rel: String(args.targetPath ?? args.original), structural: true }]
    case 'apply_patch': {
      const out: { rel: string; structural: boolean }[] = []
      let section = ''
      for (const line of p('input').split('\n')) {
        const head = /^\*\*\* (Add File|Update File|Delete File|Move to): (.*)$/.exec(line)
        if (!head) continue
        if (head[1] === 'Move to') {
          out[out.length - 1]!.structural = true
          out.push({ rel: head[2]!, structural: true })
        } else out.push({ rel: head[2]!, structural: head[1] === 'Delete File' })
        section = head[1]!
      }
      void section
      return out
    }
    default:
      return [{ rel: p('path'), structural: true }]
  }
}

/** Whether `call` keeps out of what earlier steps changed the structure of (see FULL). */
function keepsApart(call: Call, state: State): boolean {
  const overlaps = (a: string, b: string) => a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`)
  return touches(call).every(({ rel, structural }) =>
    state.touched.every((t) => !overlaps(rel, t.rel) || (!structural && !t.structural && rel === t.rel)),
  )
}

/** Picks the next call from what is on disk, or null when the chosen kind of change has no candidate. */
function nextCall(root: string, random: () => number, state: State): Call | null {
  const call = anyCall(root, random, state)
  if (!call || state.full || keepsApart(call, state)) return call
  return null
}

function anyCall(root: string, random: () => number, state: State): Call | null {
  const all = entries(root)
  const pick = <T>(xs: T[]): T | undefined => (xs.length === 0 ? undefined : xs[Math.floor(random() * xs.length)])
  const files = all.filter((e) => e.kind === 'file')
  const dirs = all.filter((e) => e.kind === 'dir')
  const text = (rel: string): string => readFileSync(join(root, rel), 'latin1')
  const tokenFiles = files.filter((f) => /<t\d+>/.test(text(f.rel)) && !text(f.rel).includes('\0'))
  const lfFiles = tokenFiles.filter((f) => !text(f.rel).includes('\r') && !text(f.rel).startsWith('\xef\xbb\xbf'))
  const fresh = (): string => `<t${state.token++}>`
  const content = (): string => {
    const lines = Array.from({ length: 1 + Math.floor(random() * 4) }, () => `${fresh()} line ${Math.floor(random() * 1000)}`)
    return lines.join('\n') + '\n'
  }
  const freshName = (ext = '.txt'): string => `n${state.token++}${ext}`
  const parentFor = (): string => {
    const d = pick([{ rel: '' } as Entry, ...dirs])!.rel
    return d === '' ? '' : `${d}/`
  }
  const exists = (rel: string): boolean => all.some((e) => e.rel === rel)
  const inside = (rel: string, dir: string): boolean => rel === dir || rel.startsWith(`${dir}/`)
  const tokenOf = (rel: string): string => pick(text(rel).match(/<t\d+>/g)!)!
  const lineOf = (rel: string): string | undefined =>
    pick(
      text(rel)
        .split('\n')
        .filter((l) => /<t\d+>/.test(l)),
    )

  switch (Math.floor(random() * (state.copies ? 16 : 15))) {
    case 0: {
      // write_file of a new file, sometimes in new directories (write_file creates parents).
      const deeper = state.full && random() < 0.3 ? `d${state.token++}/e${state.token++}/` : ''
      return ['write_file', { path: `${parentFor()}${deeper}${freshName()}`, content: content() }]
    }
    case 1: {
      const f = pick(files)
      return f ? ['write_file', { path: f.rel, content: content() }] : null
    }
    case 2:
    case 3: {
      const f = pick(tokenFiles)
      if (!f) return null
      const edits = [{ oldString: tokenOf(f.rel), newString: `${fresh()}${random() < 0.5 ? '\nadded line' : ''}` }]
      return ['edit_file', { path: f.rel, edits }]
    }
    case 4: {
      const f = random() < 0.7 ? pick(files) : undefined
      return ['append_file', { path: f ? f.rel : `${parentFor()}${freshName('.log')}`, content: content() }]
    }
    case 5: {
      const f = pick(all.filter((e) => e.kind !== 'dir'))
      return f ? ['delete_file', { path: f.rel }] : null
    }
    case 6: {
      const d = pick(dirs)
      return d ? ['remove_dir', { path: d.rel, recursive: true }] : null
    }
    case 7: {
      const d = pick(dirs.filter((d) => !all.some((e) => e.rel.startsWith(`${d.rel}/`))))
      return d ? ['remove_dir', { path: d.rel }] : null
    }
    case 8: {
      // A file or a link to a new name, maybe in a new directory, or over an existing file.
      const f = pick(all.filter((e) => e.kind !== 'dir'))
      if (!f) return null
      const over = pick(files.filter((g) => g.rel !== f.rel))
      if (over && random() < 0.4) return ['move_file', { source: f.rel, destination: over.rel, overwrite: true }]
      const deeper = state.full && random() < 0.2 ? `m${state.token++}/` : ''
      return ['move_file', { source: f.rel, destination: `${parentFor()}${deeper}${freshName()}` }]
    }
    case 9: {
      // A directory to a new name (not inside itself), or over an existing file.
      const d = pick(dirs)
      if (!d) return null
      const over = pick(files.filter((g) => !inside(g.rel, d.rel)))
      if (over && random() < 0.3) return ['move_file', { source: d.rel, destination: over.rel, overwrite: true }]
      const parents = [{ rel: '' } as Entry, ...dirs].filter((p) => !inside(p.rel, d.rel))
      const parent = pick(parents)!.rel
      return ['move_file', { source: d.rel, destination: `${parent === '' ? '' : `${parent}/`}${freshName('')}` }]
    }
    case 10: {
      const deeper = state.full && random() < 0.4 ? `/k${state.token++}` : ''
      return ['create_directory', { path: `${parentFor()}c${state.token++}${deeper}` }]
    }
    case 11: {
      // Restore an archive this sequence made, to its place if that is free, else beside it.
      const a = pick(state.archives)
      if (!a) return null
      const targetPath = exists(a.original) ? `${a.original}.back${state.token++}` : undefined
      if (!state.full && (targetPath || !a.original.split('/').slice(0, -1).every((_, i, parts) => exists(parts.slice(0, i + 1).join('/'))))) return null
      return ['restore_file', { trashedPath: a.archive, ...(targetPath ? { targetPath } : {}), original: a.original }]
    }
    case 15: {
      // A file, link or directory copied to a new name, maybe in a new directory, or over an
      // existing file (never into itself).
      const e = pick(all)
      if (!e) return null
      const over = pick(files.filter((g) => !inside(g.rel, e.rel)))
      if (over && random() < 0.3) return ['copy_file', { source: e.rel, destination: over.rel, overwrite: true }]
      const parents = [{ rel: '' } as Entry, ...dirs].filter((p) => !inside(p.rel, e.rel))
      const parent = pick(parents)!.rel
      const deeper = state.full && random() < 0.2 ? `k${state.token++}/` : ''
      return ['copy_file', { source: e.rel, destination: `${parent === '' ? '' : `${parent}/`}${deeper}${freshName(e.kind === 'dir' ? '' : '.txt')}` }]
    }
    default: {
      // apply_patch: some of add, update, delete, update-and-move, on distinct files.
      const used = new Set<string>()
      const sections: string[] = []
      const plus = (t: string): string =>
        t
          .split('\n')
          .slice(0, -1)
          .map((l) => `+${l}`)
          .join('\n')
      if (random() < 0.7) sections.push(`*** Add File: ${parentFor()}${freshName()}\n${plus(content())}`)
      const upd = pick(lfFiles)
      const updLine = upd && lineOf(upd.rel)
      if (upd && updLine && random() < 0.7) {
        used.add(upd.rel)
        sections.push(`*** Update File: ${upd.rel}\n@@\n-${updLine}\n+${fresh()} patched`)
      }
      const del = pick(files.filter((f) => !used.has(f.rel)))
      if (del && random() < 0.5) {
        used.add(del.rel)
        sections.push(`*** Delete File: ${del.rel}`)
      }
      const mv = pick(lfFiles.filter((f) => !used.has(f.rel)))
      const mvLine = mv && lineOf(mv.rel)
      if (mv && mvLine && random() < 0.5) {
        sections.push(`*** Update File: ${mv.rel}\n*** Move to: ${parentFor()}${freshName()}\n@@\n-${mvLine}\n+${fresh()} moved`)
      }
      if (sections.length === 0) return null
      return ['apply_patch', { input: ['*** Begin Patch', ...sections, '*** End Patch'].join('\n') }]
    }
  }
}

/**
 * Runs `steps` successful changes chosen by `seed` on `ws`. A call the tools refuse (a refusal a
 * careful caller could hit, e.g. a patch whose context line repeats) is skipped if it changed
 * nothing; the calls made are returned.
 */
async function runSequence(ws: Workspace, root: string, seed: number, full: boolean, steps: number, archives: State['archives']): Promise<Call[]> {
  const random = prng(seed)
  const state: State = { token: 100, archives: [...archives], touched: [], copies: !KEPT_SEQUENCES.includes(seed), full }
  const made: Call[] = []
  for (let attempts = 0; made.length < steps && attempts < steps * 10; attempts++) {
    const call = nextCall(root, random, state)
    if (!call) continue
    const before = tree(root)
    const { original: _, ...args } = call[1]
    const result = await ws.call(call[0], args)
    if (result.status !== 'ok') {
      const context = `seed ${seed}: ${JSON.stringify(call)} after ${JSON.stringify(made)}`
      expect(tree(root), `${context} failed (${result.output}) and changed the tree`).toEqual(before)
      expect(REFUSALS, `${context} failed: ${result.code} ${result.output}`).toContain(result.code)
      continue
    }
    made.push(call)
    state.touched.push(...touches(call))
    const trashed = result.data?.trashedTo
    if ((call[0] === 'delete_file' || call[0] === 'remove_dir') && typeof trashed === 'string') {
      state.archives.push({ archive: trashed, original: String(call[1].path), kind: call[0] === 'remove_dir' ? 'dir' : 'file' })
    }
    if (call[0] === 'restore_file') state.archives = state.archives.filter((a) => a.archive !== call[1].trashedPath)
  }
  return made
}

/** Refusals a random caller can hit (a restore into a path that is now a file, a binary append…). */
const REFUSALS = ['ALREADY_EXISTS', 'NOT_A_DIRECTORY', 'BINARY_FILE', 'NOT_FOUND', 'INVALID_ARGUMENTS']

function ok(result: ToolResult, context: string): ToolResult {
  if (result.status !== 'ok') throw new Error(`${context}: ${result.code} ${result.output}`)
  return result
}

const SEEDS: { seed: number; full: boolean }[] = process.env.UNDO_SEEDS
  ? process.env.UNDO_SEEDS.split(',').map((seed) => ({ seed: Number(seed), full: FULL }))
  : [
      ...Array.from({ length: Number(process.env.UNDO_RUNS ?? 30) }, (_, i) => ({ seed: 1000 + i * 7919, full: FULL })),
      ...(FULL ? [] : [...FULL_SEEDS, ...REFUSED_SEEDS].map((seed) => ({ seed, full: true }))),
    ]

describe('undo regressions found by the property', () => {
  it('a directory made beneath a directory the session made goes with it (seed 745386)', async () => {
    const { ws, root } = tempWorkspace({ permissions: ALL, confirm: () => true, trash: { sessionId: 'MD' } })
    const start = tree(root)
    ok(await ws.call('create_directory', { path: 'src/c/k' }), 'mkdir')
    // `c2` is made as a parent of `k2`: the later change made it, inside what the first made.
    ok(await ws.call('create_directory', { path: 'src/c/k/c2/k2' }), 'mkdir beneath')
    const undone = ok(await ws.undo({ sessionId: 'MD' }), 'session undo')
    expect(undone.data?.undoes).toHaveLength(2)
    expect(tree(root)).toEqual(start)
  })

  it('a redo of a session undo that moved a link back over a restored file (seed 1000)', async () => {
    const { ws, root } = tempWorkspace({ permissions: ALL, confirm: () => true, trash: { sessionId: 'R' } })
    writeFileSync(join(root, 'run.sh'), '#!/bin/sh\n')
    chmodSync(join(root, 'run.sh'), 0o750)
    symlinkOrSkip('main.ts', join(root, 'to-main'))
    const start = tree(root)
    ok(await ws.call('move_file', { source: 'to-main', destination: 'run.sh', overwrite: true }), 'move')
    const after = tree(root)
    const undo = ok(await ws.undo({ sessionId: 'R' }), 'session undo')
    expect(tree(root)).toEqual(start)
    // The undo moved the link away from run.sh, then put the file back there: a redo must take
    // the file away before it checks that run.sh is free for the link.
    ok(await ws.undo({ id: undo.data?.changeId as string }), 'redo')
    expect(tree(root)).toEqual(after)
  })
})

describe('undo regressions found by the property: an entry out of a tree that comes back', () => {
  /** Runs `calls` in the session `O`, then undoes it, redoes it and undoes it again, exactly. */
  async function undoRedoUndo(setup: (root: string) => void, calls: Call[]): Promise<void> {
    const { ws, root } = tempWorkspace({ permissions: ALL, confirm: () => true, trash: { sessionId: 'O' } })
    setup(root)
    const start = tree(root)
    for (const [tool, args] of calls) ok(await ws.call(tool, args), tool)
    const after = tree(root)
    const undo = ok(await ws.undo({ sessionId: 'O' }), 'session undo')
    expect(tree(root)).toEqual(start)
    ok(await ws.undo({ id: undo.data?.changeId as string }), 'redo')
    expect(tree(root)).toEqual(after)
    ok(await ws.undo({ sessionId: 'O' }), 'session undo after the redo')
    expect(tree(root)).toEqual(start)
  }

  it('a file moved over another in a directory removed since: the other comes back at its place (seed 198975)', async () => {
    await undoRedoUndo(
      (root) => {
        mkdirSync(join(root, 'lib'))
        writeFileSync(join(root, 'lib/util.ts'), 'util\n')
        writeFileSync(join(root, 'crlf.txt'), 'one\r\n')
      },
      [
        ['move_file', { source: 'crlf.txt', destination: 'lib/util.ts', overwrite: true }],
        ['remove_dir', { path: 'lib', recursive: true }],
      ],
    )
  })

  it('a file moved into a directory made in a directory removed since (seed 610763)', async () => {
    await undoRedoUndo(
      (root) => {
        mkdirSync(join(root, 'empty'))
        writeFileSync(join(root, 'readme.md'), 'docs\n')
      },
      [
        ['move_file', { source: 'readme.md', destination: 'empty/m104/n105.txt' }],
        ['remove_dir', { path: 'empty', recursive: true }],
      ],
    )
  })
})

describe('undo property: any sequence of changes can be taken back exactly', { timeout: scaled(120_000) }, () => {
  for (const { seed, full } of SEEDS) {
    it(`seed ${seed}${full && !FULL ? ' (full)' : ''}`, async () => {
      const steps = 5 + (seed % 11)
      // The sequences write over files they have not read: they test undo, not stale views (../docs/tools.md#stale-views).
      const a = tempWorkspace({ permissions: ALL, confirm: () => true, staleWrites: 'allow', trash: { sessionId: `S${seed}` } })
      buildStart(a.root)
      const start = tree(a.root)
      const calls = await runSequence(a.ws, a.root, seed, full, steps, await trashedBefore(a.root, a.dataDir))
      const replay = `${full ? 'UNDO_PROPERTY_FULL=1 ' : ''}UNDO_SEEDS=${seed}`
      const where = `seed ${seed} (${replay}), calls:\n${JSON.stringify(calls, null, 1)}`

      // (a) one by one.
      for (let i = 0; i < calls.length; i++) ok(await a.ws.undo(), `${where}\nundo ${i + 1} of ${calls.length}`)
      expect(tree(a.root), `one-by-one undo: ${where}`).toEqual(start)
      const left = (await a.ws.history({ sessionId: `S${seed}` })).filter((c) => c.tool !== 'undo' && !c.undoneBy)
      expect(left, `changes left standing: ${where}`).toEqual([])

      // (b) the same sequence on a fresh workspace, then the session in one step, a redo, and again.
      const b = tempWorkspace({ permissions: ALL, confirm: () => true, staleWrites: 'allow', trash: { sessionId: `S${seed}` } })
      buildStart(b.root)
      const archivesB = await trashedBefore(b.root, b.dataDir)
      expect(tree(b.root)).toEqual(start)
      const again = await runSequence(b.ws, b.root, seed, full, steps, archivesB)
      expect(again.map(withoutArchive), `the sequence is not deterministic: ${where}`).toEqual(calls.map(withoutArchive))
      const after = tree(b.root)
      const attempt = await b.ws.undo({ sessionId: `S${seed}` })
      // Not followed (FULL only): an entry that would come out of a tree in the trash that
      // does not come back (one the sequence made), or into a tree inside the one it comes
      // from; the session undo says so and changes nothing (FULL_SEEDS must not refuse,
      // REFUSED_SEEDS must). Files, links and directories moved into or within a tree the
      // session removed (also from another tree it removed, also where another entry comes back
      // at their place in it or a directory the session made there goes), and other changes
      // inside it, are taken back in the one step.
      const refused = full && attempt.code === 'CONFLICT' && attempt.output.includes('one at a time')
      if (full && REFUSED_SEEDS.includes(seed)) expect(refused, `the session undo must refuse: ${where}\n${attempt.output}`).toBe(true)
      if (refused && !FULL_SEEDS.includes(seed)) {
        expect(tree(b.root), `a refused session undo changes nothing: ${where}`).toEqual(after)
        return
      }
      const undo = ok(attempt, `${where}\nsession undo`)
      expect(undo.data?.undoes, where).toHaveLength(calls.length)
      expect(tree(b.root), `session undo: ${where}`).toEqual(start)
      ok(await b.ws.undo({ id: undo.data?.changeId as string }), `${where}\nredo of the session undo`)
      expect(tree(b.root), `redo of the session undo: ${where}`).toEqual(after)
      // The redo recreated entries under new inodes: the changes, standing again, are known by
      // what the redo recorded.
      ok(await b.ws.undo({ sessionId: `S${seed}` }), `${where}\nsession undo after the redo`)
      expect(tree(b.root), `session undo after the redo: ${where}`).toEqual(start)
    })
  }
})

/** A call without the archive path (it differs between the two workspaces' trash). */
function withoutArchive([tool, { trashedPath: _, ...args }]: Call): Call {
  return [tool, args]
}
