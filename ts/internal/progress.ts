/**
 * A {@link ToolProgress} in words, for a host that shows text (Tomo's `onProgress`, an MCP progress
 * message, the playground): `1.5 MiB of 4.0 MiB (37%)`, `12 of 40 files (30%)`, `120 files`.
 *
 * @internal
 */
import type { ToolProgress } from '../types.js'

/** A byte count for a person: `512 bytes`, `1.5 KiB`, `48.2 MiB` (as the core's prompts say it). */
export function humanBytes(n: number): string {
  if (n < 1024) return n === 1 ? '1 byte' : `${n} bytes`
  const units = ['KiB', 'MiB', 'GiB', 'TiB']
  let value = n / 1024
  let unit = 0
  while (value >= 1024 && unit + 1 < units.length) {
    value /= 1024
    unit += 1
  }
  return `${value.toFixed(1)} ${units[unit]}`
}

/** `done` (of `total`) in the update's unit, with the percentage when the total is known. */
export function describeProgress({ done, total, unit }: ToolProgress): string {
  const percent = total !== undefined && total > 0 ? ` (${Math.floor((Math.min(done, total) / total) * 100)}%)` : ''
  if (unit === 'bytes') {
    return total === undefined ? humanBytes(done) : `${humanBytes(done)} of ${humanBytes(total)}${percent}`
  }
  const noun = (n: number): string => (unit === 'files' ? (n === 1 ? 'file' : 'files') : n === 1 ? 'entry' : 'entries')
  return total === undefined ? `${done} ${noun(done)}` : `${done} of ${total} ${noun(total)}${percent}`
}
