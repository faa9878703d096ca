/**
 * Baseline for `ws.history()`: what a host keeping its own change log would do — one JSON line
 * per change in a file, read back with `fs.readFileSync`, split and `JSON.parse`d line by line,
 * newest first. No state is folded (undone, undoable): the baseline only reads.
 */
import { readFileSync, writeFileSync } from 'node:fs'

/** Writes `n` change records shaped like ours to `path` (unmeasured set-up). */
export function writeLog(path, n) {
  const lines = []
  for (let i = 0; i < n; i++) {
    const file = `/work/root/d${Math.floor(i / 1000)}/f${i >> 1}.txt`
    lines.push(
      JSON.stringify({
        id: `c${(1700000000000000 + i).toString(16)}-1-${i.toString(16)}`,
        time: new Date(1700000000000 + i).toISOString(),
        tool: i % 2 === 0 ? 'write_file' : 'edit_file',
        summary: file,
        files: [{ path: file, action: i % 2 === 0 ? 'added' : 'modified', sha256After: 'a'.repeat(64), ...(i % 2 ? { delta: `c${i}-0.delta`, sha256Before: 'b'.repeat(64) } : {}) }],
        sessionId: 'bench',
        runId: 'run',
        agentName: 'agent',
      }),
    )
  }
  writeFileSync(path, lines.join('\n') + '\n')
}

/** Every record, newest first. */
export function readLog(path) {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line))
    .reverse()
}
