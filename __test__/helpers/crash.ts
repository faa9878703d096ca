/**
 * Helpers of the crash harness (`../crash.test.ts`, `../crash-undo.test.ts`): running tool calls in
 * the child (`crash-child.mjs`) killed at a random moment, when a condition holds, or at a crash
 * point of a debug build; what the next Workspace must manage; the leftovers a kill may leave; the
 * kill delays and their tally.
 */
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isDeepStrictEqual } from 'node:util'
import { expect } from 'vitest'
import { Workspace, type TrashEntry } from 'agent-fs-tools'
import { ALL, bucketDir, snapshot, type Node } from './trash.js'
import { prng } from './random.js'

export const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'crash-child.mjs')
/** Random kills per case (`CRASH_KILLS`, 50 unless set). */
export const KILLS = Number(process.env.CRASH_KILLS ?? 50)

export const ATOMIC_TEMP = /^\..*\.\d+\.\d+\.agent-fs-tools\.tmp$/
export const TEMP_SUFFIX = '.agent-fs-tools.tmp'
export const RESTORE_TEMP = /^\.restore-[0-9a-f]+\.partial$/
export const BUCKET_TEMP = /^\.[a-z]+-[0-9a-f]+\.partial$/

export type Call = [string, Record<string, unknown>]

/** Text of about `bytes` bytes, distinct for each `tag` (not compressible to nothing). */
export function bigText(tag: string, bytes: number): string {
  const lines: string[] = []
  let size = 0
  for (let i = 0; size < bytes; i++) {
    const line = `${tag} ${i} ${createHash('sha1').update(`${tag}/${i}`).digest('hex')}`
    lines.push(line)
    size += line.length + 1
  }
  return lines.join('\n') + '\n'
}

export interface ChildRun {
  killed: boolean
  lines: string[]
  ms?: number
}

/** Numbers the config files of every child this module starts (one counter for all three ways). */
let configCount = 0

/** Runs the child on `calls`; SIGKILLs it `killAfterMs` after it is ready (never, if null). */
export function runChild(dirs: { root: string; dataDir: string }, calls: Call[], killAfterMs: number | null): Promise<ChildRun> {
  const configFile = join(dirs.dataDir, `..`, `crash-config-${process.pid}-${configCount++}.json`)
  writeFileSync(configFile, JSON.stringify({ root: dirs.root, dataDir: dirs.dataDir, calls }))
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, configFile], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    let timer: NodeJS.Timeout | undefined
    child.stdout.on('data', (chunk: Buffer) => {
      const before = out
      out += chunk.toString()
      if (killAfterMs !== null && !before.includes('ready\n') && out.includes('ready\n')) {
        timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs)
      }
    })
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString()
    })
    child.on('error', reject)
    child.on('exit', (code, signal) => {
      clearTimeout(timer)
      rmSync(configFile, { force: true })
      const lines = out.split('\n').filter(Boolean)
      if (signal === 'SIGKILL') return resolve({ killed: true, lines })
      if (code !== 0) return reject(new Error(`child exited with ${code}: ${out}\n${err}`))
      const finished = lines.find((l) => l.startsWith('finished '))
      resolve({ killed: false, lines, ms: Number(finished?.slice('finished '.length)) })
    })
  })
}

/** Runs the child on `calls` and SIGKILLs it as soon as `when()` is true (polled). */
export function runChildUntil(
  dirs: { root: string; dataDir: string },
  calls: Call[],
  when: () => boolean,
): Promise<{ killed: boolean }> {
  const configFile = join(dirs.dataDir, `..`, `crash-config-${process.pid}-${configCount++}.json`)
  writeFileSync(configFile, JSON.stringify({ root: dirs.root, dataDir: dirs.dataDir, calls }))
  const child = spawn(process.execPath, [CHILD, configFile], { stdio: 'ignore' })
  let exited = false
  const exit = new Promise<{ killed: boolean }>((resolve) =>
    child.on('exit', (_code, signal) => {
      exited = true
      rmSync(configFile, { force: true })
      resolve({ killed: signal === 'SIGKILL' })
    }),
  )
  const deadline = Date.now() + 30_000
  const poll = (): void => {
    if (exited) return
    if (when() || Date.now() > deadline) child.kill('SIGKILL')
    else setImmediate(poll)
  }
  poll()
  return exit
}

/**
 * How a debug build ends itself at a crash point on Windows (`paths::process::crash_point`:
 * `TerminateProcess` with this code), where no signal exists; elsewhere it is a SIGKILL.
 */
const CRASH_POINT_EXIT_CODE_ON_WINDOWS = 137

/** Whether a child that exited with `code` or `signal` was killed (by us, or at a crash point). */
export function wasKilled(code: number | null, signal: NodeJS.Signals | null): boolean {
  return signal === 'SIGKILL' || (process.platform === 'win32' && code === CRASH_POINT_EXIT_CODE_ON_WINDOWS)
}

/** Runs the child on `calls` in a debug build told to kill itself at the crash point `point` (with `extraEnv`). */
export function runChildCrashingAt(dirs: { root: string; dataDir: string }, calls: Call[], point: string, extraEnv: NodeJS.ProcessEnv = {}): Promise<boolean> {
  const configFile = join(dirs.dataDir, `..`, `crash-config-${process.pid}-${configCount++}.json`)
  writeFileSync(configFile, JSON.stringify({ root: dirs.root, dataDir: dirs.dataDir, calls }))
  const env = { ...process.env, ...extraEnv, AGENT_FS_TOOLS_CRASH_AT: point }
  const child = spawn(process.execPath, [CHILD, configFile], { stdio: 'ignore', env })
  return new Promise((resolve) =>
    child.on('exit', (code, signal) => {
      rmSync(configFile, { force: true })
      resolve(wasKilled(code, signal))
    }),
  )
}

/**
 * How long the calls take without a kill (the window the kills are spread over): the fastest of
 * three runs, since a first, cold run can take twice as long, and kills timed past the end of the
 * later runs would not count.
 */
export async function calibrate(dirs: { root: string; dataDir: string }, calls: Call[], reset: () => void): Promise<number> {
  let fastest = Infinity
  for (let i = 0; i < 3; i++) {
    reset()
    const run = await runChild(dirs, calls, null)
    expect(run.killed).toBe(false)
    fastest = Math.min(fastest, run.ms ?? 0)
  }
  return Math.max(fastest, 5)
}

/**
 * What the next Workspace on the same root and data dir must manage: list, list the trash, and
 * only recognisable leftovers. Returns it (for restores) and the trash entries.
 */
export async function nextWorkspace(dirs: { root: string; dataDir: string }): Promise<{ ws: Workspace; trash: TrashEntry[] }> {
  const ws = new Workspace({ root: dirs.root, trash: { dataDir: dirs.dataDir }, permissions: ALL, confirm: () => true })
  // Recovery runs in the background; the first call (here trashList) waits for it.
  const trash = await ws.trashList()
  expect(leftovers(dirs.root), 'temp files of atomic writes or restores left after the next Workspace').toEqual([])
  expect(journalRecords(dirs), 'journal records left after recovery').toEqual([])
  const listing = await ws.call('list_directory', { path: '.', recursive: true, includeIgnored: true })
  expect(listing.status, listing.output).toBe('ok')
  const trashTool = await ws.call('trash_list', {})
  expect(trashTool.status, trashTool.output).toBe('ok')
  const bucket = bucketDir(dirs.dataDir, dirs.root)
  if (existsSync(bucket)) {
    for (const name of readdirSync(bucket)) {
      const recognised = (name.endsWith('.tar.gz') && !name.startsWith('.')) || BUCKET_TEMP.test(name)
      expect(recognised, `unrecognisable file in the bucket: ${name}`).toBe(true)
    }
    // Every finished archive is listed (a torn archive would be skipped: none may exist).
    const archives = readdirSync(bucket).filter((n) => n.endsWith('.tar.gz') && !n.startsWith('.'))
    expect(trash.length, 'an archive in the bucket cannot be read').toBe(archives.length)
  }
  return { ws, trash }
}

/** Append-journal records left in the data dir (any workspace). */
export function journalRecords(dirs: { dataDir: string }): string[] {
  const journal = join(dirs.dataDir, 'journal')
  if (!existsSync(journal)) return []
  // (`key` beside the journals is the key records are sealed with.)
  return readdirSync(journal, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) => readdirSync(join(journal, d.name)).map((n) => join(d.name, n)))
}

/** Names in `dir` (recursively) that are leftovers of an interrupted write or restore. */
export function leftovers(dir: string): string[] {
  const out: string[] = []
  const walk = (d: string): void => {
    for (const name of readdirSync(d, { withFileTypes: true })) {
      if (ATOMIC_TEMP.test(name.name) || RESTORE_TEMP.test(name.name)) out.push(join(d, name.name))
      else if (name.isDirectory()) walk(join(d, name.name))
    }
  }
  walk(dir)
  return out
}

/** Every `*.agent-fs-tools.tmp` file under `dir`, at any depth (symlinks are not followed). */
export function atomicTemps(dir: string): string[] {
  const out: string[] = []
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      if (entry.name.endsWith(TEMP_SUFFIX)) out.push(join(d, entry.name))
      else if (entry.isDirectory()) walk(join(d, entry.name))
    }
  }
  walk(dir)
  return out
}

/** Removes finished archives (kept: temp files, for the sweep check). */
export function emptyBucket(dirs: { root: string; dataDir: string }): void {
  const bucket = bucketDir(dirs.dataDir, dirs.root)
  if (!existsSync(bucket)) return
  for (const name of readdirSync(bucket)) if (!name.startsWith('.')) rmSync(join(bucket, name))
}

/** Stale partials (an hour old) are swept by the next Workspace; fresh ones are kept. */
export async function checkSweep(dirs: { root: string; dataDir: string }): Promise<number> {
  const bucket = bucketDir(dirs.dataDir, dirs.root)
  mkdirSync(bucket, { recursive: true })
  const fresh = join(bucket, '.content-0123456789ab.partial')
  writeFileSync(fresh, 'in flight')
  const stale = readdirSync(bucket).filter((n) => BUCKET_TEMP.test(n) && join(bucket, n) !== fresh)
  const hourAgo = Date.now() / 1000 - 3700
  for (const name of stale) utimesSync(join(bucket, name), hourAgo, hourAgo)
  await new Workspace({ root: dirs.root, trash: { dataDir: dirs.dataDir } }).trashList()
  const left = readdirSync(bucket).filter((n) => BUCKET_TEMP.test(n))
  expect(left, 'stale partials are swept, fresh ones kept').toEqual(['.content-0123456789ab.partial'])
  rmSync(fresh)
  return stale.length
}

/** How many temp files are in the bucket (to tell whether a kill interrupted a trash). */
export function partials(dirs: { root: string; dataDir: string }): number {
  const bucket = bucketDir(dirs.dataDir, dirs.root)
  return existsSync(bucket) ? readdirSync(bucket).filter((n) => BUCKET_TEMP.test(n)).length : 0
}

export type Tree = Record<string, Omit<Node, 'mtimeNs'>>

/** A tree as undo must give it back: kind, mode, content, link target (times are not compared). */
export function treeOf(root: string): Tree {
  const out: Tree = {}
  for (const [path, { mtimeNs: _, ...rest }] of Object.entries(snapshot(root))) out[path] = rest
  return out
}

/** The paths where `a` and `b` differ (an entry in one only, or not alike), sorted: what a message shows. */
export function differsAt(a: Tree, b: Tree): string[] {
  const paths = new Set([...Object.keys(a), ...Object.keys(b)])
  return [...paths].filter((path) => !isDeepStrictEqual(a[path], b[path])).sort()
}

export function sha(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex')
}

/**
 * Kill delays, uniform over the calibrated window, until `t.kills` reaches `KILLS` (a run that
 * finished before its kill does not count; at most 3 × `KILLS` runs).
 */
export function* delays(window: number, seed: number, t: Tally): Generator<number> {
  const random = prng(seed)
  for (let i = 0; t.kills < KILLS && i < KILLS * 3; i++) yield Math.floor(random() * window * 0.95)
}

export interface Tally {
  kills: number
  midway: number
  leftovers: number
}

/**
 * One kill: runs `calls`, SIGKILLed `delay` ms after it is ready; checks that what it left under
 * the root are temps named like `temp`, tallies them, and opens the next Workspace.
 */
export async function killOnce(dirs: { root: string; dataDir: string }, calls: Call[], delay: number, t: Tally, temp: RegExp): Promise<void> {
  const run = await runChild(dirs, calls, delay)
  t.kills += run.killed ? 1 : 0
  const left = leftovers(dirs.root)
  for (const p of left) expect(temp.test(p.split('/').pop()!), p).toBe(true)
  if (left.length > 0) t.midway++
  t.leftovers += left.length
  await nextWorkspace(dirs)
}

export function report(op: string, seed: number, window: number, t: Tally, extra = ''): void {
  console.log(
    `crash ${op}: ${t.kills} kills (seed ${seed}) over ${window} ms, ${t.midway} caught mid-way, ${t.leftovers} temp files left by the kills${extra}`,
  )
}

/**
 * The crash points of a journaled commit (`AGENT_FS_TOOLS_CRASH_AT`), each with whether the
 * change stands after a kill there: before the commit point it is undone, after it it stands.
 */
export const COMMIT_PHASES: [string, boolean][] = [
  ['staged', false],
  ['recorded', false],
  ['made', false],
  ['applied', true],
  ['cleaned', true],
  ['sequel', true],
]
