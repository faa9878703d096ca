/**
 * Measuring one operation, repeatedly: wall time, event-loop lag during the operation
 * (`perf_hooks.monitorEventLoopDelay`) and peak RSS growth (the kernel's high-water mark `VmHWM`,
 * reset before each run through `/proc/self/clear_refs`; where that is not possible, `rss`
 * sampled every millisecond the event loop allows).
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { monitorEventLoopDelay } from 'node:perf_hooks'

/** Timer resolution of the event-loop delay histogram, in ms. A sample is the time between two
 *  ticks of a timer of this period, so the lag is a sample minus this period. */
const LAG_RESOLUTION_MS = 1

function procStatusKb(field) {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync('/proc/self/status', 'utf8'))
    return match ? Number(match[1]) * 1024 : undefined
  } catch {
    return undefined
  }
}

/** Resets the peak-RSS high-water mark to the current RSS; `false` where the kernel refuses. */
function resetPeak() {
  try {
    writeFileSync('/proc/self/clear_refs', '5')
    return true
  } catch {
    return false
  }
}

/** Starts watching memory and event-loop lag; `stop()` returns what was seen. */
export function watch() {
  globalThis.gc?.()
  const exactPeak = resetPeak() && procStatusKb('VmHWM') !== undefined
  const rssBefore = process.memoryUsage.rss()
  let sampledPeak = rssBefore
  const sampler = exactPeak ? undefined : setInterval(() => (sampledPeak = Math.max(sampledPeak, process.memoryUsage.rss())), 1)
  const histogram = monitorEventLoopDelay({ resolution: LAG_RESOLUTION_MS })
  histogram.enable()
  return {
    stop() {
      histogram.disable()
      if (sampler) clearInterval(sampler)
      const peak = exactPeak ? procStatusKb('VmHWM') : Math.max(sampledPeak, process.memoryUsage.rss())
      const lag = (ns) => Math.max(0, ns / 1e6 - LAG_RESOLUTION_MS)
      const count = histogram.count
      return {
        rssGrowthBytes: Math.max(0, peak - rssBefore),
        // With fewer ticks than needed for a p99, the worst tick is the p99.
        lagP99Ms: count > 0 ? lag(histogram.percentile(99)) : 0,
        lagMaxMs: count > 0 ? lag(histogram.max) : 0,
        lagSamples: count,
        peakSource: exactPeak ? 'VmHWM' : 'sampled',
      }
    },
  }
}

export function median(values) {
  if (values.length === 0) return null
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/**
 * Runs `op` `warmup` times unmeasured, then at least `min` and at most `max` times, stopping
 * once `budgetMs` has been spent. `setup` runs before each call (unmeasured) and its result is
 * passed to `op` and `teardown`. `light` measures time only (for sub-millisecond calls).
 * Returns the summary of the measured runs; an error stops the series and is reported.
 */
export async function series(op, { setup, teardown, warmup = 0, min = 3, max = 10, budgetMs = 20_000, light = false } = {}) {
  const runs = []
  let error
  try {
    for (let i = 0; i < warmup; i++) {
      const ctx = await setup?.()
      const result = await op(ctx)
      await teardown?.(ctx, result)
    }
    const began = performance.now()
    for (let i = 0; i < max && (i < min || performance.now() - began < budgetMs); i++) {
      const ctx = await setup?.()
      const watcher = light ? undefined : watch()
      const t0 = performance.now()
      let result
      try {
        result = await op(ctx)
      } catch (e) {
        const ms = performance.now() - t0
        const seen = watcher?.stop()
        runs.push({ ms, ...seen, failed: true })
        throw e
      }
      const ms = performance.now() - t0
      runs.push({ ms, ...watcher?.stop() })
      await teardown?.(ctx, result)
    }
  } catch (e) {
    error = e instanceof Error ? `${e.code ? `${e.code}: ` : ''}${e.message}` : String(e)
  }
  return summarize(runs, error)
}

export function summarize(runs, error) {
  const ok = runs.filter((r) => !r.failed)
  const pick = (key) => runs.map((r) => r[key]).filter((v) => typeof v === 'number')
  const maxOf = (key) => (pick(key).length ? Math.max(...pick(key)) : null)
  return {
    ok: !error,
    error,
    iterations: ok.length,
    medianMs: median(ok.map((r) => r.ms)) ?? (runs.length ? median(runs.map((r) => r.ms)) : null),
    minMs: ok.length ? Math.min(...ok.map((r) => r.ms)) : null,
    maxMs: ok.length ? Math.max(...ok.map((r) => r.ms)) : null,
    // Worst over the runs: a target on lag or memory must hold on every run.
    lagP99Ms: maxOf('lagP99Ms'),
    lagMaxMs: maxOf('lagMaxMs'),
    rssGrowthBytes: maxOf('rssGrowthBytes'),
    peakSource: runs.find((r) => r.peakSource)?.peakSource,
  }
}

/** One summary out of several single-run summaries. */
export function mergeSeries(list) {
  const ok = list.filter((s) => s.ok)
  const values = (key) => ok.map((s) => s[key]).filter((v) => typeof v === 'number')
  const maxOf = (key) => (values(key).length ? Math.max(...values(key)) : null)
  const times = values('medianMs')
  return {
    ok: ok.length === list.length,
    error: list.find((s) => !s.ok)?.error,
    iterations: ok.length,
    medianMs: median(times),
    minMs: times.length ? Math.min(...times) : null,
    maxMs: maxOf('medianMs'),
    lagP99Ms: maxOf('lagP99Ms'),
    lagMaxMs: maxOf('lagMaxMs'),
    rssGrowthBytes: maxOf('rssGrowthBytes'),
    peakSource: ok[0]?.peakSource,
  }
}

/**
 * Several operations taking turns, one run of each per round, each measured into its own
 * summary (`{ name: op }` → `{ name: summary }`): interleaved, so that the load of a shared
 * machine weighs on each alike and their ratio means something. The options are `series`'s,
 * counted in rounds; the budget is for all of them. A failed run ends the rounds.
 */
export async function turns(ops, { warmup = 0, min = 3, max = 10, budgetMs = 20_000 } = {}) {
  const names = Object.keys(ops)
  const runs = Object.fromEntries(names.map((name) => [name, []]))
  const began = performance.now()
  rounds: for (let i = 0; i < max && (i < min || performance.now() - began < budgetMs); i++) {
    for (const name of names) {
      const one = await series(ops[name], { warmup: i === 0 ? warmup : 0, min: 1, max: 1 })
      runs[name].push(one)
      if (!one.ok) break rounds
    }
  }
  return Object.fromEntries(names.map((name) => [name, mergeSeries(runs[name])]))
}
