/**
 * Real data: a repository's history replayed through `apply_patch`, one patch per commit, and
 * the tree compared byte for byte with the commit after every patch.
 *
 * - Four ways: the `git diff -M` of each commit as a unified diff, and the same change written in
 *   Codex's format; each on an LF checkout and on a CRLF copy (every text file's `\n` made `\r\n`,
 *   the patch left as git printed it: the LF patch a model writes for a CRLF file). On the CRLF
 *   copy an updated file keeps CRLF; a file the patches add is written as the patch has it (LF:
 *   there is no file whose endings it could take), and keeps LF through later updates and moves.
 * - The repository is `AFS_REPLAY_REPO` (a clone of a public project; `AFS_REPLAY_COMMITS` caps
 *   the commits, default 60), else this repository's own history, which every clone has.
 * - Commits that touch binary files or files over the edit limit are replayed for those files by
 *   writing them directly (counted); a Codex patch cannot say "no newline at end of file", so such
 *   files go the same way in the Codex runs. Everything else goes through the tool.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { isUtf8 } from 'node:buffer'
import { describe, expect, it } from 'vitest'
import { Workspace } from 'agent-fs-tools'
import { tempWorkspaceDirs } from './helpers/temp.js'
import { ALL } from './helpers/trash.js'
import { scaled } from './helpers/time.js'

const REPO = process.env.AFS_REPLAY_REPO ?? resolve(__dirname, '..')
const MAX_COMMITS = Number(process.env.AFS_REPLAY_COMMITS ?? 60)
/** The largest file the replay patches (the default editMaxFileBytes). */
const EDIT_LIMIT = 10 * 1024 * 1024

const git = (args: string[]): string => execFileSync('git', ['-C', REPO, '-c', 'core.quotePath=false', ...args], { encoding: 'utf8', maxBuffer: 1 << 30 })

/** The commits to replay: the first-parent line, oldest first, the newest `MAX_COMMITS + 1`. */
function commits(): string[] {
  const all = git(['rev-list', '--first-parent', '--reverse', 'HEAD']).split('\n').filter(Boolean)
  return all.slice(Math.max(0, all.length - MAX_COMMITS - 1))
}

const blobs = new Map<string, Buffer>()
const trees = new Map<string, Map<string, Buffer>>()

/** The blobs named by `shas` that are not cached yet, read with one `git cat-file --batch`. */
function loadBlobs(shas: string[]): void {
  const missing = [...new Set(shas)].filter((sha) => !blobs.has(sha))
  if (missing.length === 0) return
  const out = execFileSync('git', ['-C', REPO, 'cat-file', '--batch'], { input: missing.join('\n') + '\n', maxBuffer: 1 << 30 })
  let at = 0
  for (const sha of missing) {
    const headerEnd = out.indexOf(10, at)
    const size = Number(out.subarray(at, headerEnd).toString().split(' ')[2])
    blobs.set(sha, out.subarray(headerEnd + 1, headerEnd + 1 + size))
    at = headerEnd + 1 + size + 1
  }
}

/** Every file of `commit`: path → bytes (symlinks and submodules left out). */
function treeOf(commit: string): Map<string, Buffer> {
  const cached = trees.get(commit)
  if (cached !== undefined) return cached
  const entries: Array<[string, string]> = []
  for (const line of git(['ls-tree', '-r', '-z', commit]).split('\0').filter(Boolean)) {
    const [meta, path] = line.split('\t') as [string, string]
    const [mode, type, sha] = meta.split(' ') as [string, string, string]
    if (type !== 'blob' || mode === '120000') continue
    entries.push([path, sha])
  }
  loadBlobs(entries.map(([, sha]) => sha))
  const files = new Map(entries.map(([path, sha]) => [path, blobs.get(sha)!]))
  trees.set(commit, files)
  return files
}

/** Not UTF-8 text (a NUL near the start, or bytes that do not decode): not for the tool. */
const isBinary = (bytes: Buffer): boolean => bytes.subarray(0, 8192).includes(0) || !isUtf8(bytes)

/** The CRLF copy of a text file (binary files stay as they are). */
function crlf(bytes: Buffer): Buffer {
  if (isBinary(bytes)) return bytes
  return Buffer.from(bytes.toString('latin1').replace(/\r?\n/g, '\r\n'), 'latin1')
}

function writeTree(root: string, files: Map<string, Buffer>): void {
  for (const [path, bytes] of files) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), bytes)
  }
}

/** Every file under `root` (relative paths), skipping the data directory. */
function listFiles(root: string, dir = ''): string[] {
  const out: string[] = []
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const rel = dir === '' ? entry.name : `${dir}/${entry.name}`
    if (entry.isDirectory()) out.push(...listFiles(root, rel))
    else out.push(rel)
  }
  return out.sort()
}

/** Every file under `root` (or those named): path → bytes. */
function readTree(root: string, paths: string[] = listFiles(root)): Map<string, Buffer> {
  return new Map(paths.map((p) => [p, readFileSync(join(root, p))]))
}

/** The files under `root` are exactly `expected`, byte for byte. */
function expectTree(root: string, expected: Map<string, Buffer>, what: string): void {
  expect(listFiles(root), `${what}: the files`).toEqual([...expected.keys()].sort())
  for (const [path, bytes] of expected) {
    if (!readFileSync(join(root, path)).equals(bytes)) throw new Error(`${what}: ${path} differs`)
  }
}

/** One file's section of a `git diff`. */
interface FileDiff {
  from: string | null
  to: string | null
  text: string
  noNewline: boolean
}

/** Splits a `git diff -M` into its files' sections. */
function sections(diff: string): FileDiff[] {
  const parts = diff.split(/^(?=diff --git )/m).filter((p) => p.startsWith('diff --git '))
  return parts.map((text) => {
    const from = /^--- (?:a\/(.*)|\/dev\/null)$/m.exec(text)
    const to = /^\+\+\+ (?:b\/(.*)|\/dev\/null)$/m.exec(text)
    const renameFrom = /^rename from (.*)$/m.exec(text)?.[1]
    const renameTo = /^rename to (.*)$/m.exec(text)?.[1]
    const header = /^diff --git a\/(.*) b\/(.*)$/m.exec(text)!
    const deleted = /^deleted file mode/m.test(text)
    const added = /^new file mode/m.test(text)
    return {
      from: added ? null : (renameFrom ?? from?.[1] ?? header[1]!),
      to: deleted ? null : (renameTo ?? to?.[1] ?? header[2]!),
      text,
      noNewline: text.includes('\n\\ No newline at end of file'),
    }
  })
}

/**
 * The same change in Codex's format: hunks as chunks, git's line numbers dropped; with `anchors`,
 * each chunk's `@@` names what git prints as the hunk's enclosing function.
 */
function toCodex(files: FileDiff[], anchors = false): string {
  let out = '*** Begin Patch\n'
  for (const file of files) {
    const body = file.text.split('\n')
    const hunks = body.slice(body.findIndex((l) => l.startsWith('@@')))
    const lines = hunks.filter((l) => l.length > 0 || false)
    if (file.from === null) {
      out += `*** Add File: ${file.to}\n`
      for (const l of lines) if (l.startsWith('+')) out += `${l}\n`
      continue
    }
    if (file.to === null) {
      out += `*** Delete File: ${file.from}\n`
      continue
    }
    out += `*** Update File: ${file.from}\n`
    if (file.to !== file.from) out += `*** Move to: ${file.to}\n`
    if (!file.text.includes('\n@@')) continue
    for (const l of lines) {
      // git's hunk header names the enclosing function or class: the chunk's `@@` anchor.
      if (l.startsWith('@@')) out += (anchors ? `@@ ${/^@@ [^@]* @@ ?(.*)$/.exec(l)?.[1] ?? ''}`.trimEnd() : '@@') + '\n'
      else if (/^[ +-]/.test(l)) out += `${l}\n`
    }
  }
  return `${out}*** End Patch\n`
}

interface Tally {
  commits: number
  patched: number
  direct: number
  /** Codex patches sent again with more context after MULTIPLE_MATCHES. */
  retries: number
  /** Patches undone (tree byte-exact as before the patch) and redone (as after it). */
  undone: number
}

/** Replays the history on one copy (LF or CRLF) in one format; returns what went through the tool. */
async function replay(format: 'unified' | 'codex', lineEndings: 'lf' | 'crlf'): Promise<Tally> {
  const history = commits()
  const { root, dataDir } = tempWorkspaceDirs()
  // Overwrites not kept (the replay is long); such changes always ask, so the handler says yes.
  const ws = new Workspace({ root, permissions: ALL, trash: { dataDir, keepOverwrites: false }, audit: false, confirm: () => true })
  // Files that came with the first checkout, in the copy's line endings; those the patches add
  // are LF (see the module docs).
  const born = new Set<string>()
  const convert = (path: string, bytes: Buffer): Buffer => (lineEndings === 'crlf' && born.has(path) ? crlf(bytes) : bytes)
  let tree = treeOf(history[0]!)
  for (const path of tree.keys()) born.add(path)
  writeTree(root, new Map([...tree].map(([p, b]) => [p, convert(p, b)])))
  const tally: Tally = { commits: 0, patched: 0, direct: 0, retries: 0, undone: 0 }
  for (let i = 1; i < history.length; i++) {
    const [before, after] = [history[i - 1]!, history[i]!]
    const next = treeOf(after)
    const diffOf = (context: number): FileDiff[] =>
      sections(git(['diff', '-M', `-U${context}`, '--no-color', '--no-ext-diff', before, after]))
    let files = diffOf(3)
    // Files the tool is not for: written directly, the rest goes in the patch.
    const direct = (f: FileDiff): boolean => {
      const bytes = f.to === null ? tree.get(f.from!) : next.get(f.to)
      const old = f.from === null ? undefined : tree.get(f.from)
      return (
        /^Binary files |^GIT binary patch/m.test(f.text) ||
        [bytes, old].some((b) => b !== undefined && (isBinary(b) || b.length > EDIT_LIMIT)) ||
        (f.from !== null && !tree.has(f.from)) ||
        (f.to !== null && !next.has(f.to)) ||
        (format === 'codex' && (f.noNewline || (f.from === null && (next.get(f.to!)?.length ?? 0) === 0))) ||
        (f.from === null && (next.get(f.to!)?.length ?? 0) === 0) ||
        (!f.text.includes('\n@@') && f.from !== null && f.to !== null && f.from === f.to)
      )
    }
    const patched = files.filter((f) => !direct(f))
    // A moved file keeps its line endings at its new path.
    for (const f of files) {
      if (f.from !== null && f.to !== null && f.from !== f.to && born.has(f.from)) born.add(f.to)
      if (f.from === null && f.to !== null) born.delete(f.to)
    }
    for (const f of files.filter(direct)) {
      if (f.from !== null && f.from !== f.to) rmSync(join(root, f.from), { force: true })
      if (f.to !== null && next.has(f.to)) {
        mkdirSync(dirname(join(root, f.to)), { recursive: true })
        writeFileSync(join(root, f.to), convert(f.to, next.get(f.to)!))
      }
      tally.direct++
    }
    // The tree as the patch finds it, to check its undo against.
    const beforePatch = patched.length > 0 ? readTree(root) : undefined
    if (patched.length > 0) {
      const paths = new Set(patched.map((f) => `${f.from}\0${f.to}`))
      let result = await ws.call('apply_patch', { input: format === 'unified' ? patched.map((f) => f.text).join('') : toCodex(patched) })
      // Without line numbers, three lines of context can be ambiguous: as a model told so would,
      // send the patch again naming the enclosing functions, then with more context.
      for (const [context, anchors] of [[3, true], [8, true], [20, false], [60, false]] as const) {
        const ambiguous = result.code === 'MULTIPLE_MATCHES' || (tally.retries > 0 && result.code === 'NO_MATCH')
        if (!ambiguous || format !== 'codex') break
        tally.retries++
        files = diffOf(context)
        const wider = files.filter((f) => paths.has(`${f.from}\0${f.to}`))
        result = await ws.call('apply_patch', { input: toCodex(wider, anchors) })
      }
      expect(result.status, `${format}/${lineEndings} ${after}: ${result.output.slice(0, 2000)}`).toBe('ok')
      tally.patched += patched.length
    }
    // Empty directories git does not know about may stay behind; files must match exactly.
    const found = listFiles(root)
    const wanted = [...next.keys()].sort()
    expect(found, `${format}/${lineEndings} ${after}: the files`).toEqual(wanted)
    for (const path of wanted) {
      const bytes = readFileSync(join(root, path))
      if (!bytes.equals(convert(path, next.get(path)!))) {
        throw new Error(`${format}/${lineEndings} after ${after}: ${path} differs from the commit`)
      }
    }
    // Undo the patch (byte-exact as before it), then redo it (byte-exact as the commit), unless
    // it replaced a file without keeping it (keepOverwrites is off here).
    if (beforePatch !== undefined) {
      const [change] = await ws.history({ limit: 1 })
      if (change!.undoable) {
        const undone = await ws.undo()
        expect(undone.status, `${format}/${lineEndings} undo of ${after}: ${undone.output.slice(0, 2000)}`).toBe('ok')
        expectTree(root, beforePatch, `${format}/${lineEndings} after undoing ${after}`)
        const redone = await ws.undo({ id: undone.data!.changeId as string })
        expect(redone.status, `${format}/${lineEndings} redo of ${after}: ${redone.output.slice(0, 2000)}`).toBe('ok')
        expectTree(root, readTree(root, wanted), `${format}/${lineEndings} after redoing ${after}`)
        for (const path of wanted) {
          if (!readFileSync(join(root, path)).equals(convert(path, next.get(path)!))) {
            throw new Error(`${format}/${lineEndings} after redoing ${after}: ${path} differs from the commit`)
          }
        }
        tally.undone++
      }
    }
    tree = next
    tally.commits++
  }
  return tally
}

const enough = existsSync(join(REPO, '.git')) || existsSync(join(REPO, 'HEAD'))
const history = enough ? commits() : []

describe.skipIf(history.length < 10)(`replaying ${REPO}'s history through apply_patch`, { timeout: scaled(600_000) }, () => {
  for (const format of ['unified', 'codex'] as const) {
    for (const lineEndings of ['lf', 'crlf'] as const) {
      it(`${format} patches on the ${lineEndings.toUpperCase()} copy: byte-exact after every commit`, async () => {
        const tally = await replay(format, lineEndings)
        console.log(
          `replay ${format}/${lineEndings}: ${tally.commits} commits, ${tally.patched} file changes through apply_patch, ${tally.direct} written directly, ${tally.retries} Codex patches resent with more context, ${tally.undone} patches undone and redone`,
        )
        expect(tally.undone).toBeGreaterThan(0)
        expect(tally.commits).toBe(history.length - 1)
        expect(tally.patched).toBeGreaterThan(tally.direct)
      })
    }
  }
})
