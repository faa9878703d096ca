#!/usr/bin/env node
/**
 * Renders a results file of `run.mjs` as the two Markdown tables it prints (measurements, then
 * targets): `node bench/report.mjs [bench/results.json]`.
 */
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const fmtMs = (ms) =>
  ms == null ? '—' : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : ms >= 10 ? `${ms.toFixed(0)} ms` : ms >= 1 ? `${ms.toFixed(2)} ms` : `${(ms * 1000).toFixed(0)} µs`
const fmtMb = (bytes) => (bytes == null ? '—' : `${(bytes / 1024 / 1024).toFixed(1)} MB`)

/** The measurements table: one row per implementation, medians and ratios to the case's reference. */
export function measurementsTable(report) {
  const lines = [
    '| case | implementation | median | ÷ ref | event-loop lag p99 / max | peak RSS growth | runs |',
    '|---|---|---:|---:|---:|---:|---:|',
  ]
  for (const c of report.cases) {
    c.rows.forEach((row, i) => {
      const failed = !row.ok
      const median = !failed
        ? fmtMs(row.medianMs)
        : row.capped
          ? `> ${fmtMs(row.medianMs)}`
          : `failed${row.medianMs != null ? ` after ${fmtMs(row.medianMs)}` : ''}`
      const ratio = row.ratioToReference
      // A failed run's time is no speed; a capped one is a lower bound.
      const ratioText = row.reference
        ? 'ref'
        : ratio == null || (failed && !row.capped)
          ? '—'
          : `${row.capped ? '> ' : ''}${ratio >= 10 ? ratio.toFixed(0) : ratio.toFixed(2)}×`
      const lag = row.lagP99Ms == null ? '—' : `${row.lagP99Ms.toFixed(1)} / ${row.lagMaxMs.toFixed(0)} ms`
      const rss = row.childProcess ? 'n/a (child process)' : fmtMb(row.rssGrowthBytes)
      const why = failed && row.error && !row.capped ? ` (${row.error.slice(0, 80)})` : ''
      lines.push(`| ${i === 0 ? c.title : ''} | ${row.label}${why} | ${median} | ${ratioText} | ${lag} | ${rss} | ${row.iterations ?? 0} |`)
    })
  }
  return lines.join('\n')
}

/** The targets table: the issue's targets, measured, met or not. */
export function targetsTable(report) {
  const lines = ['| case | target | measured | met |', '|---|---|---:|:---:|']
  for (const t of report.targets) lines.push(`| ${t.case} | ${t.target} | ${t.measured} | ${t.met ? 'yes' : '**no**'} |`)
  return lines.join('\n')
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), 'results.json')
  const report = JSON.parse(readFileSync(file, 'utf8'))
  console.log(measurementsTable(report))
  console.log('')
  console.log(targetsTable(report))
}
