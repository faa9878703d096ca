/**
 * Concurrency and load (issue "Hardening"): 1,000 concurrent `ws.call`s over 50 files, and
 * concurrent trashing with `ws.trashClear()`.
 *
 * The operations are designed so that "the final contents equal a serial application in some
 * order" can be checked exactly:
 *
 * - 40 "log" files start as `head\nSLOT\n`. `append_file` adds a unique `A <file> <k>` line at
 *   the end; `edit_file` replaces the unique `SLOT\n` with `SLOT\nE <file> <k>\n` (a unique line
 *   right after SLOT). Any serial order of these gives `head`, `SLOT`, every E line once (newest
 *   first), every A line once (oldest first) — and nothing else. A lost update drops a marker;
 *   a torn write breaks the shape.
 * - 10 "whole" files get only `write_file` of unique complete contents (and reads): the final
 *   content is exactly one of the written contents.
 * - Reads run throughout; every read must see one consistent state of that shape.
 */
import { readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { ToolResult } from 'agent-fs-tools'
import { tempWorkspace } from './helpers/temp.js'
import { ALL, bucketDir } from './helpers/trash.js'
import { scaled } from './helpers/time.js'

const LOGS = 40
const WHOLES = 10
const APPENDS_PER_LOG = 8
const EDITS_PER_LOG = 8
const READS_PER_LOG = 4
const WRITES_PER_WHOLE = 10
const READS_PER_WHOLE = 10

const unhandled: unknown[] = []
const onUnhandled = (reason: unknown): void => {
  unhandled.push(reason)
}
beforeEach(() => {
  unhandled.length = 0
  process.on('unhandledRejection', onUnhandled)
})
afterEach(() => {
  process.off('unhandledRejection', onUnhandled)
})

/** Rejects if `promise` takes longer than `ms` (a deadlock shows up as this, not as a hang). */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not done after ${ms} ms (deadlock?)`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/** Deterministic shuffle (so a failure can be replayed). */
function shuffle<T>(items: T[], seed: number): T[] {
  let s = seed
  const random = (): number => {
    s = (s * 1103515245 + 12345) % 2 ** 31
    return s / 2 ** 31
  }
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[items[i], items[j]] = [items[j]!, items[i]!]
  }
  return items
}

/** The text of a read_file result without the line-number prefixes. */
function readText(result: ToolResult): string[] {
  return result.output
    .split('\n')
    .filter((l) => /^ *\d+ \| /.test(l))
    .map((l) => l.replace(/^ *\d+ \| /, ''))
}

/**
 * Checks that `lines` (a log file's lines) are a state some serial order produces: `head`,
 * `SLOT`, then E lines, then A lines, each marker of this file at most once. Returns the markers.
 */
function logShape(file: number, lines: string[]): { edits: string[]; appends: string[] } {
  expect(lines.slice(0, 2), `log ${file}`).toEqual(['head', 'SLOT'])
  const rest = lines.slice(2)
  const edits = rest.filter((l) => l.startsWith('E '))
  const appends = rest.filter((l) => l.startsWith('A '))
  expect(rest, `log ${file}: E lines come before A lines, nothing else`).toEqual([...edits, ...appends])
  for (const l of [...edits, ...appends]) expect(l, `log ${file}`).toMatch(new RegExp(`^[EA] ${file} \\d+$`))
  expect(new Set(edits).size, `log ${file}: an edit applied twice`).toBe(edits.length)
  expect(new Set(appends).size, `log ${file}: an append applied twice`).toBe(appends.length)
  return { edits, appends }
}

function wholeContent(file: number, k: number): string {
  return Array.from({ length: 50 }, (_, i) => `W ${file} ${k} line ${i}`).join('\n') + '\n'
}

describe('load', () => {
  it('1,000 concurrent calls over 50 files: every update applied once, a serial order, no deadlock', { timeout: scaled(120_000) }, async () => {
    const { ws, root } = tempWorkspace({ permissions: ALL })
    for (let f = 0; f < LOGS; f++) writeFileSync(join(root, `log-${f}.txt`), 'head\nSLOT\n')
    for (let f = 0; f < WHOLES; f++) writeFileSync(join(root, `whole-${f}.txt`), wholeContent(f, -1))
    // Read before they are rewritten (../docs/tools.md#stale-views); from then on only the calls below touch them, so
    // no write may be refused as stale however the reads and writes interleave.
    for (let f = 0; f < WHOLES; f++) expect((await ws.call('read_file', { path: `whole-${f}.txt` })).status).toBe('ok')

    type Op = { kind: 'append' | 'edit' | 'readLog' | 'write' | 'readWhole'; file: number; k: number }
    const ops: Op[] = []
    for (let f = 0; f < LOGS; f++) {
      for (let k = 0; k < APPENDS_PER_LOG; k++) ops.push({ kind: 'append', file: f, k })
      for (let k = 0; k < EDITS_PER_LOG; k++) ops.push({ kind: 'edit', file: f, k })
      for (let k = 0; k < READS_PER_LOG; k++) ops.push({ kind: 'readLog', file: f, k })
    }
    for (let f = 0; f < WHOLES; f++) {
      for (let k = 0; k < WRITES_PER_WHOLE; k++) ops.push({ kind: 'write', file: f, k })
      for (let k = 0; k < READS_PER_WHOLE; k++) ops.push({ kind: 'readWhole', file: f, k })
    }
    expect(ops).toHaveLength(1000)
    shuffle(ops, 42)

    const call = (op: Op): Promise<ToolResult> => {
      switch (op.kind) {
        case 'append':
          return ws.call('append_file', { path: `log-${op.file}.txt`, content: `A ${op.file} ${op.k}\n` })
        case 'edit':
          return ws.call('edit_file', {
            path: `log-${op.file}.txt`,
            edits: [{ oldString: 'SLOT\n', newString: `SLOT\nE ${op.file} ${op.k}\n` }],
          })
        case 'readLog':
          return ws.call('read_file', { path: `log-${op.file}.txt` })
        case 'write':
          return ws.call('write_file', { path: `whole-${op.file}.txt`, content: wholeContent(op.file, op.k) })
        case 'readWhole':
          return ws.call('read_file', { path: `whole-${op.file}.txt` })
      }
    }
    const started = Date.now()
    const results = await within(Promise.all(ops.map(call)), 100_000, '1,000 concurrent calls')
    const elapsed = Date.now() - started

    results.forEach((r, i) => expect(r.status, `${JSON.stringify(ops[i])}: ${r.output.slice(0, 300)}`).toBe('ok'))

    // Reads saw consistent states.
    results.forEach((r, i) => {
      const op = ops[i]!
      if (op.kind === 'readLog') logShape(op.file, readText(r))
      if (op.kind === 'readWhole') {
        const text = readText(r).join('\n') + '\n'
        const k = Number(/^W \d+ (-?\d+) /.exec(text)?.[1])
        expect(text, `whole ${op.file}: a read saw a torn write`).toBe(wholeContent(op.file, k))
      }
    })

    // Final contents: every update applied exactly once, in a serial order.
    for (let f = 0; f < LOGS; f++) {
      const lines = readFileSync(join(root, `log-${f}.txt`), 'utf8').split('\n')
      expect(lines.pop(), `log ${f} ends with a newline`).toBe('')
      const { edits, appends } = logShape(f, lines)
      expect([...edits].sort()).toEqual(Array.from({ length: EDITS_PER_LOG }, (_, k) => `E ${f} ${k}`).sort())
      expect([...appends].sort()).toEqual(Array.from({ length: APPENDS_PER_LOG }, (_, k) => `A ${f} ${k}`).sort())
    }
    for (let f = 0; f < WHOLES; f++) {
      const text = readFileSync(join(root, `whole-${f}.txt`), 'utf8')
      const k = Number(/^W \d+ (\d+) /.exec(text)?.[1])
      expect(k, `whole ${f}: a write_file content survived`).toBeGreaterThanOrEqual(0)
      expect(text, `whole ${f}`).toBe(wholeContent(f, k))
    }
    // No temp file left by the atomic writes.
    expect(readdirSync(root).filter((n) => n.includes('.agent-fs-tools.tmp'))).toEqual([])
    // Each overwrite kept the previous content in the trash: 10 per whole file.
    expect((await ws.trashList()).length).toBe(WHOLES * WRITES_PER_WHOLE)
    await new Promise((r) => setImmediate(r))
    expect(unhandled).toEqual([])
    console.log(`1,000 concurrent calls in ${elapsed} ms`)
  })

  it('trashing during trashClear never loses an archive written after the clear began', { timeout: scaled(120_000) }, async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL })
    const bucket = bucketDir(dataDir, root)
    let made = 0
    /** Creates and deletes `n` files; returns the archives. */
    const trashMany = async (n: number, tag: string): Promise<string[]> => {
      mkdirSync(join(root, tag), { recursive: true })
      for (let i = 0; i < n; i++) writeFileSync(join(root, tag, `f${i}.txt`), `${tag} ${i}\n`)
      const results = await Promise.all(
        Array.from({ length: n }, (_, i) => ws.call('delete_file', { path: `${tag}/f${i}.txt` })),
      )
      made += n
      return results.map((r) => {
        expect(r.status, r.output).toBe('ok')
        return r.data?.trashedTo as string
      })
    }
    const archiveNames = (): Set<string> =>
      new Set(readdirSync(bucket).filter((n) => n.endsWith('.tar.gz') && !n.startsWith('.')).map((n) => join(bucket, n)))

    let clearedTotal = 0
    let protectedChecked = 0
    for (let round = 0; round < 4; round++) {
      // Enough archives that the clear takes a while (it reads each one's metadata).
      const before = await trashMany(150, `before-${round}`)
      // The clear compares ctimes with its start on the filesystem's own (coarse, ~4 ms on ext4)
      // clock, and keeps an archive committed in the same tick as its start: let a tick pass so
      // that `before` provably predates it.
      await new Promise((r) => setTimeout(r, 30))
      let clearDone = false
      const clearing = ws.trashClear().then((r) => {
        clearDone = true
        return r
      })
      // Trashes racing the clear's start: may or may not be cleared, but must be accounted for.
      const racing = trashMany(20, `racing-${round}`)
      // Wait until the clear has provably begun: its probe file is in the bucket.
      let begun = false
      while (!clearDone) {
        if (readdirSync(bucket).some((n) => n.startsWith('.clear-') && n.endsWith('.partial'))) {
          begun = true
          break
        }
        await new Promise((r) => setImmediate(r))
      }
      // Everything trashed from now on is written after the clear began: it must survive.
      const afterStart = begun ? trashMany(30, `after-${round}`) : Promise.resolve([] as string[])
      const [cleared, racingArchives, afterArchives] = await within(
        Promise.all([clearing, racing, afterStart]),
        100_000,
        'trash + trashClear',
      )
      clearedTotal += cleared.cleared
      const present = archiveNames()
      for (const a of afterArchives) {
        expect(present.has(a), `round ${round}: ${a} was written after the clear began, and is gone`).toBe(true)
        protectedChecked++
      }
      // What existed before the clear was called is gone.
      for (const a of before) expect(present.has(a), `round ${round}: ${a} predates the clear`).toBe(false)
      void racingArchives
      // Accounting: every archive ever made is either still there or was counted as cleared.
      expect(present.size + clearedTotal, `round ${round}: an archive vanished uncounted`).toBe(made)
      expect((await ws.trashList()).length).toBe(present.size)
    }
    // The probe was seen at least once, so the "after the clear began" property was exercised.
    expect(protectedChecked).toBeGreaterThan(0)
    // No temp files left.
    expect(readdirSync(bucket).filter((n) => n.endsWith('.partial'))).toEqual([])
    await new Promise((r) => setImmediate(r))
    expect(unhandled).toEqual([])
  })
})
