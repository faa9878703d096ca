/**
 * Helpers for the trash tests (../../docs/trash.md): the bucket, archive names, tree snapshots, reading
 * archives with the system `tar`, and building (tampered) archives by hand.
 */
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import type { ConfirmHandler, ConfirmRequest, Permissions } from 'agent-fs-tools'
import { skipOnWindows } from './skip.js'

export function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex')
}

/** Every permission granted. */
export const ALL: Required<Permissions> = {
  cwdReadFile: true,
  globalReadFile: true,
  cwdWriteFile: true,
  globalWriteFile: true,
  cwdRemoveFile: true,
  globalRemoveFile: true,
  cwdRemoveDir: true,
  globalRemoveDir: true,
}

/** `<dataDir>/trash/<sha256(root)>` (../../docs/trash.md#where). */
export function bucketDir(dataDir: string, root: string): string {
  return join(dataDir, 'trash', sha256(root))
}

/** Names of the finished archives in the bucket, sorted. */
export function archiveNames(dataDir: string, root: string): string[] {
  const dir = bucketDir(dataDir, root)
  if (!existsSync(dir)) return []
  return readdirSync(dir)
    .filter((n) => n.endsWith('.tar.gz') && !n.startsWith('.'))
    .sort()
}

/** Everything in the bucket (archives, temp files, foreign files), sorted. */
export function bucketNames(dataDir: string, root: string): string[] {
  const dir = bucketDir(dataDir, root)
  return existsSync(dir) ? readdirSync(dir).sort() : []
}

/**
 * The sizes of the deltas the newest change in the history keeps, one per file that has one
 * (../../docs/history-and-undo.md): a change's deltas are one file in the history's `deltas/`,
 * each file's record placing its own in it (`deltaRange`) when there are several. Checks that the
 * change has one delta file and that the ranges cover it exactly, one after the other.
 */
export function newestDeltaSizes(dataDir: string, root: string): number[] {
  const history = join(dataDir, 'history', sha256(root))
  const newest = readFileSync(join(history, 'changes.jsonl'), 'utf8').trim().split('\n').pop() ?? '{}'
  const files: Array<{ delta?: string; deltaRange?: [number, number] }> = JSON.parse(newest).files
  const kept = files.filter((f) => f.delta !== undefined)
  const [name, ...others] = new Set(kept.map((f) => f.delta))
  if (name === undefined || others.length > 0) throw new Error(`one delta file expected for the change, found ${[name, ...others]}`)
  const size = lstatSync(join(history, 'deltas', name)).size
  if (kept.length === 1 && kept[0]?.deltaRange === undefined) return [size]
  let offset = 0
  return kept.map(({ deltaRange }) => {
    if (deltaRange === undefined || deltaRange[0] !== offset) throw new Error(`delta ranges not one after the other: ${JSON.stringify(kept)}`)
    offset += deltaRange[1]
    if (offset > size) throw new Error(`a delta range past the end of the ${size}-byte delta file`)
    return deltaRange[1]
  })
}

/** A confirm handler recording its requests and answering `answer`. */
export function recorder(answer = true): { confirm: ConfirmHandler; requests: ConfirmRequest[] } {
  const requests: ConfirmRequest[] = []
  return {
    requests,
    confirm: (req) => {
      requests.push(req)
      return answer
    },
  }
}

export interface Node {
  type: 'file' | 'dir' | 'symlink' | 'other'
  mode: number
  mtimeNs: bigint
  sha?: string
  link?: string
}

/**
 * A recursive snapshot of `path` (lstat, never following links): relative path → type, mode,
 * mtime (ns), content digest, link target. `''` is `path` itself.
 */
export function snapshot(path: string): Record<string, Node> {
  const out: Record<string, Node> = {}
  const walk = (abs: string, rel: string): void => {
    const st = lstatSync(abs, { bigint: true })
    const mode = Number(st.mode & 0o7777n)
    if (st.isSymbolicLink()) {
      out[rel] = { type: 'symlink', mode: 0, mtimeNs: st.mtimeNs, link: readlinkSync(abs) }
    } else if (st.isFile()) {
      out[rel] = { type: 'file', mode, mtimeNs: st.mtimeNs, sha: sha256(readFileSync(abs)) }
    } else if (st.isDirectory()) {
      out[rel] = { type: 'dir', mode, mtimeNs: st.mtimeNs }
      for (const name of readdirSync(abs).sort()) walk(join(abs, name), rel === '' ? name : `${rel}/${name}`)
    } else {
      out[rel] = { type: 'other', mode, mtimeNs: st.mtimeNs }
    }
  }
  walk(path, '')
  return out
}

/**
 * The system's `tar` run with `args` (its output as text): archives read and made by a tar that is
 * not ours. Windows 10 and later ship one; Wine has none, and there the test is skipped.
 */
export function systemTar(args: string[]): string {
  try {
    return execFileSync('tar', args, { encoding: 'utf8' })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') skipOnWindows('no tar on PATH (Windows 10 and later have one; Wine has none)')
    throw error
  }
}

/** `tar -tzf`: the entry names, in archive order. */
export function tarList(archive: string): string[] {
  return systemTar(['-tzf', archive])
    .split('\n')
    .filter((l) => l.length > 0)
}

/** `metadata.json` of an archive, read with the system tar. */
export function tarMetadata(archive: string): Record<string, unknown> {
  return JSON.parse(systemTar(['-xzOf', archive, 'metadata.json'])) as Record<string, unknown>
}

/** `tar -xzf archive -C dir` (keeping modes). */
export function tarExtract(archive: string, dir: string): void {
  systemTar(['-xpzf', archive, '-C', dir])
}

export interface TarEntry {
  name: string
  type?: 'file' | 'dir' | 'symlink' | 'hardlink'
  content?: string | Buffer
  mode?: number
  mtime?: number
  linkname?: string
}

function field(buf: Buffer, offset: number, length: number, value: string): void {
  const bytes = Buffer.from(value, 'utf8')
  if (bytes.length > length) throw new Error(`tar field too long: ${value}`)
  bytes.copy(buf, offset)
}

function octal(buf: Buffer, offset: number, length: number, value: number): void {
  field(buf, offset, length, value.toString(8).padStart(length - 1, '0') + '\0')
}

/** A hand-written ustar stream (no validation of names: that is the point), gzip'd. */
export function buildTarGz(entries: TarEntry[]): Buffer {
  const blocks: Buffer[] = []
  for (const entry of entries) {
    const type = entry.type ?? 'file'
    const content = type === 'file' ? Buffer.from(entry.content ?? '') : Buffer.alloc(0)
    const header = Buffer.alloc(512)
    field(header, 0, 100, entry.name)
    octal(header, 100, 8, entry.mode ?? (type === 'dir' ? 0o755 : type === 'symlink' ? 0o777 : 0o644))
    octal(header, 108, 8, 0)
    octal(header, 116, 8, 0)
    octal(header, 124, 12, content.length)
    octal(header, 136, 12, entry.mtime ?? 1_700_000_000)
    header.fill(0x20, 148, 156)
    header[156] = { file: 0x30, hardlink: 0x31, symlink: 0x32, dir: 0x35 }[type]
    if (entry.linkname !== undefined) field(header, 157, 100, entry.linkname)
    field(header, 257, 6, 'ustar\0')
    field(header, 263, 2, '00')
    let sum = 0
    for (const b of header) sum += b
    field(header, 148, 8, sum.toString(8).padStart(6, '0') + '\0 ')
    blocks.push(header, content)
    const pad = (512 - (content.length % 512)) % 512
    if (pad > 0) blocks.push(Buffer.alloc(pad))
  }
  blocks.push(Buffer.alloc(1024))
  return gzipSync(Buffer.concat(blocks))
}

/** A metadata.json for a hand-built archive. */
export function metadataEntry(meta: Record<string, unknown>): TarEntry {
  return { name: 'metadata.json', content: JSON.stringify(meta) }
}

/** A name that the bucket accepts as a finished archive. */
export function archiveName(basename: string, unique = '0123456789ab'): string {
  return `20260101T000000000Z-session-run-${unique}-${basename}.tar.gz`
}
