/**
 * The benchmark harness cannot rot: `node bench/run.mjs --smoke` (tiny data sets, the addon as
 * built) runs every case for ours and every baseline, and each produces numbers. No timing is
 * asserted — this machine is shared and CI runs a debug build.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { scaled } from './helpers/time'
import { skipOnWindows } from './helpers/skip.js'

const root = resolve(__dirname, '..')
const dir = mkdtempSync(join(tmpdir(), 'afs-bench-smoke-'))
/** Whether ripgrep, the glob and grep baseline, is installed here (the smoke run does not install it). */
const haveRg = spawnSync('rg', ['--version']).status === 0
afterAll(() => rmSync(dir, { recursive: true, force: true }))

interface Row {
  job: string
  needs: string | null
  label: string
  ok: boolean
  error?: string
  medianMs: number | null
  iterations: number
}
interface Report {
  meta: { mode: string; totalSeconds: number }
  cases: { id: string; rows: Row[] }[]
  targets: { case: string; target: string; value: number | null; met: boolean }[]
  table: string
}

it('bench/run.mjs --smoke runs every case and baseline and reports numbers', () => {
  skipOnWindows('the bench runs on Linux and macOS: its baselines are Unix tools (`tar`, `rm`, `cp`, `git`)')
  const out = join(dir, 'results.json')
  const run = spawnSync(process.execPath, [join(root, 'bench/run.mjs'), '--smoke', '--out', out], {
    cwd: root,
    encoding: 'utf8',
    timeout: scaled(170_000),
  })
  expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0)
  const report = JSON.parse(readFileSync(out, 'utf8')) as Report
  expect(report.meta.mode).toBe('smoke')

  const ids = report.cases.map((c) => c.id)
  for (const id of ['edit', 'rewrite-disjoint', 'rewrite-repetitive', 'tree-delete', 'tree-restore', 'read-log', 'list', 'small-read', 'parallel-read', 'patch-many', 'chunks']) {
    expect(ids).toContain(id)
  }
  for (const c of report.cases) {
    expect(c.rows.length, c.id).toBeGreaterThanOrEqual(2)
    for (const row of c.rows) {
      if (!haveRg && row.needs === 'rg') {
        // Without ripgrep its rows stay in the table and say why they have no numbers.
        expect({ job: row.job, ok: row.ok, error: row.error }).toEqual({ job: row.job, ok: false, error: 'rg is not installed' })
        continue
      }
      expect({ job: row.job, ok: row.ok, error: row.error }).toEqual({ job: row.job, ok: true, error: undefined })
      expect(row.iterations, row.job).toBeGreaterThanOrEqual(1)
      expect(Number.isFinite(row.medianMs), row.job).toBe(true)
    }
  }
  // Every target was evaluated (met or not: timing is not asserted here).
  for (const t of report.targets) {
    const againstRg = t.target.includes('of rg')
    expect(Number.isFinite(t.value), `${t.case}: ${t.target}`).toBe(haveRg || !againstRg)
  }
  expect(report.targets.filter((t) => t.target.includes('of rg')).map((t) => t.case)).toEqual(['glob', 'grep'])
  expect(report.table).toContain('| case |')
}, scaled(180_000))
