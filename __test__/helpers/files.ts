/** Small filesystem helpers for the tool tests: fixtures on real temp directories, no mocks. */
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { skipOnWindows } from './skip.js'

/** Writes `files` (relative path → content) under `base`, creating parent directories. */
export function writeTree(base: string, files: Record<string, string | Buffer>): void {
  for (const [rel, content] of Object.entries(files)) {
    const path = join(base, rel)
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, content)
  }
}

/** A directory beside the workspace root (inside the same temp base, so it is cleaned up). */
export function siblingDir(root: string, name = 'outside'): string {
  const dir = join(dirname(root), name)
  mkdirSync(dir, { recursive: true })
  return dir
}

/** `mkfifo path` (Node has no API for it); on Windows, which has none, the test is skipped. */
export function mkfifo(path: string): void {
  skipOnWindows('Windows has no FIFOs (SPEC §3.5: none can be in a directory)')
  execFileSync('mkfifo', [path])
}

/**
 * The mode a file given `mode` reads back as: `mode` itself, but on Windows, which keeps only a
 * read-only bit, 0o666 or (without the owner's write bit) 0o444.
 */
export function modeAsKept(mode: number): number {
  if (process.platform !== 'win32') return mode
  return mode & 0o200 ? 0o666 : 0o444
}

export function read(path: string): string {
  return readFileSync(path, 'utf8')
}

export function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex')
}

/** Names in `dir`, sorted. */
export function names(dir: string): string[] {
  return readdirSync(dir).sort()
}

/** The audit log lines of the workspace over `root` whose data directory is `dataDir` (../../docs/trash.md#the-audit-log). */
export function auditLines(dataDir: string, root: string): Array<Record<string, unknown>> {
  const file = join(dataDir, 'audit', `${sha256(root)}.jsonl`)
  if (!existsSync(file)) return []
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as Record<string, unknown>)
}

/** The numbered line of `read_file`: `String(n).padStart(4) + " | " + line`. */
export function numbered(n: number, line: string): string {
  return `${String(n).padStart(4)} | ${line}`
}

/** A promise and its resolver, for holding a confirmation open. */
export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => {
    resolve = r
  })
  return { promise, resolve }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))
