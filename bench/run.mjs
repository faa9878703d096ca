#!/usr/bin/env node
/**
 * The benchmark: each tool side by side with what a host would use instead, in one run.
 *
 *   npm run bench                  release build of the addon + TypeScript build, then the full run
 *   node bench/run.mjs             the full run against whatever addon is built
 *   node bench/run.mjs --smoke     tiny sizes, a few seconds (CI runs it; it asserts no timing)
 *
 * Options: `--build` (release addon + dist first; `npm run bench` passes it; ignored with
 * `--smoke`), `--out FILE` (default `bench/results.json`, which only a full run replaces; with `--smoke`
 * or `--only`, a temp file),
 * `--only PREFIX[,PREFIX…]` (run only the jobs whose id starts with one of the prefixes, e.g.
 * `tree/` or `grep/ours,grep/rg`), `--keep` (keep
 * the data sets; their directory is printed), `--data DIR` (reuse the data sets kept by an earlier
 * run of the same mode). `NAPI_RS_NATIVE_LIBRARY_PATH=…/x.node` benchmarks another build of the
 * addon (the napi-rs loader honours it).
 *
 * Data sets are generated deterministically into a temp directory (see `data.mjs`) and removed
 * afterwards. Every (case, implementation) runs in its own `node` process (`worker.mjs`) so that
 * peak RSS and event-loop lag of one cannot pollute another. The table of medians and ratios is
 * printed as Markdown and written, with every measurement, to the JSON results file.
 */
import { execFileSync, spawn } from 'node:child_process'
import { cpus, tmpdir, totalmem } from 'node:os'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { SIZES, chunkDataSet, editDataSet, listDataSet, logFile, parallelReadDataSet, patchDataSet, rewriteDataSet, searchDataSet, smallFile, treeDataSet } from './data.mjs'
import { available, expectedCounts } from './baselines/search-cli.mjs'
import { measurementsTable, targetsTable } from './report.mjs'
import { hostPlatform } from '../scripts/stale.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const repo = join(here, '..')

// ── options ──────────────────────────────────────────────────────────────────────────────────────
const argv = process.argv.slice(2)
const flag = (name) => argv.includes(name)
const option = (name) => {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : undefined
}
const smoke = flag('--smoke')
const keep = flag('--keep')
const only = option('--only')?.split(',').filter(Boolean)
const out = option('--out') ?? (smoke || only ? join(tmpdir(), `agent-fs-tools-bench-${smoke ? 'smoke' : 'part'}-${process.pid}.json`) : join(here, 'results.json'))
const sizes = SIZES[smoke ? 'smoke' : 'full']
/** The worst-case diff baseline is stopped after this long (the issue's cap). */
const DIFF_CAP_MS = smoke ? 20_000 : 60_000
const DIFF_TIMEOUT_MS = 1000 // the default `diffTimeoutMs`

const ITERATIONS = smoke
  ? {
      edit: { warmup: 0, min: 2, max: 2 },
      rewrite: { warmup: 0, min: 1, max: 2 },
      tree: { min: 2, max: 2 },
      treeTurns: { min: 4, max: 4 },
      readLog: { warmup: 1, min: 3, max: 3 },
      list: { warmup: 1, min: 3, max: 3 },
      small: { warmup: 5, min: 20, max: 20, light: true },
      parallel: { warmup: 1, min: 3, max: 3 },
      search: { warmup: 0, min: 2, max: 2 },
      history: { warmup: 1, min: 3, max: 3 },
      patch: { warmup: 0, min: 2, max: 2 },
      chunks: { warmup: 0, min: 2, max: 2 },
    }
  : {
      edit: { warmup: 1, min: 3, max: 15, budgetMs: 10_000 },
      rewrite: { warmup: 1, min: 3, max: 7, budgetMs: 10_000 },
      tree: { min: 3, max: 3 },
      // Removals in the undo job, each followed in turn by ws.undo() or restore_file: five of
      // each (three were too few to tell 1.1x from noise on a loaded machine).
      treeTurns: { min: 10, max: 10 },
      readLog: { warmup: 3, min: 15, max: 60, budgetMs: 5_000 },
      list: { warmup: 2, min: 10, max: 40, budgetMs: 10_000 },
      small: { warmup: 300, min: 3000, max: 3000, light: true },
      parallel: { warmup: 3, min: 20, max: 100, budgetMs: 10_000 },
      search: { warmup: 1, min: 5, max: 15, budgetMs: 10_000 },
      history: { warmup: 2, min: 10, max: 30, budgetMs: 10_000 },
      patch: { warmup: 1, min: 5, max: 20, budgetMs: 10_000 },
      chunks: { warmup: 1, min: 3, max: 10, budgetMs: 15_000 },
    }

// ── build ────────────────────────────────────────────────────────────────────────────────────────
const addon = join(repo, `agent-fs-tools.${hostPlatform()}.node`)
let build = 'as found'
if (flag('--build') && !smoke) {
  const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx'
  console.log('building the addon (release, LTO; takes minutes on 2 cores) and dist/ …')
  execFileSync(npx, ['napi', 'build', '--platform', '--no-js', '--release', '--', '--locked'], { cwd: repo, stdio: 'inherit' })
  execFileSync(process.execPath, [join(repo, 'scripts/build-ts.mjs')], { cwd: repo, stdio: 'inherit' })
  build = 'release'
}
if (!existsSync(join(repo, 'dist/esm/index.js')) || !existsSync(addon)) {
  console.error('No built package: run `npm run build` (debug) or `npm run bench` (release build) first.')
  process.exit(1)
}
// A debug build of this crate carries its debug info (~100 MB); a release build is a few MB.
// `NAPI_RS_NATIVE_LIBRARY_PATH` (read by the napi-rs loader) points the package at another build.
const loaded = process.env.NAPI_RS_NATIVE_LIBRARY_PATH || addon
const addonKind = build === 'release' ? 'release' : statSync(loaded).size > 40e6 ? 'debug' : 'release'

// ── data sets ────────────────────────────────────────────────────────────────────────────────────
const reuse = option('--data')
const base = reuse ? realpathSync(reuse) : realpathSync(mkdtempSync(join(tmpdir(), 'afs-bench-')))
const root = join(base, 'root')
const dataDir = join(base, 'data')
const scratch = join(base, 'scratch')
const manifestPath = join(scratch, 'manifest.json')

const { Workspace } = await import(pathToFileURL(join(repo, 'dist/esm/index.js')).href)
const probe = join(tmpdir(), `afs-bench-probe-${process.pid}`)
mkdirSync(probe, { recursive: true })
const toolNames = new Set(new Workspace({ root: probe, trash: { dataDir: join(probe, 'data') } }).definitions().map((d) => d.name))
rmSync(probe, { recursive: true, force: true })
const haveSearch = toolNames.has('glob') && toolNames.has('grep')
const haveRg = (await available('rg')) || (!smoke && (await installRipgrep()))
const RG_MISSING = 'ripgrep (rg) is not installed, so the glob and grep rows against it are missing: install it (apt-get install ripgrep, brew install ripgrep) and run again'
if (!haveRg) console.warn(`\n*** ${RG_MISSING} ***\n`)

/**
 * ripgrep is the baseline users would pick for glob and grep: on a Debian-like machine where we
 * are root (CI, a container), the full run installs Debian's package rather than lose the rows.
 */
async function installRipgrep() {
  if (process.platform !== 'linux' || process.getuid?.() !== 0 || !(await available('apt-get'))) return false
  console.log('ripgrep (rg) is missing: installing Debian\'s package for the glob and grep baselines …')
  try {
    execFileSync('apt-get', ['install', '-y', '-q', 'ripgrep'], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } })
  } catch {
    return false
  }
  return available('rg')
}

function timed(label, fn) {
  const t0 = performance.now()
  const result = fn()
  console.log(`  ${label}: ${((performance.now() - t0) / 1000).toFixed(1)} s`)
  return result
}

console.log(`${smoke ? 'smoke' : 'full'} run (${addonKind} addon); data sets in ${base}`)
let manifest
if (reuse && existsSync(manifestPath)) {
  // `--data DIR` of an earlier `--keep` run of the same mode: reuse its data sets.
  manifest = JSON.parse(readFileSync(manifestPath, 'utf8'))
  if (manifest.mode !== (smoke ? 'smoke' : 'full')) throw new Error(`${base} holds ${manifest.mode} data sets`)
  manifest.iterations = ITERATIONS
  writeFileSync(manifestPath, JSON.stringify(manifest))
} else {
  for (const dir of [root, dataDir, scratch]) mkdirSync(dir, { recursive: true })
  const edit = timed('edit_file source', () => editDataSet(join(root, 'edit'), sizes))
  const rewrite = timed('rewrite sources', () => rewriteDataSet(join(root, 'rewrite'), sizes))
  const tree = timed('tree', () => treeDataSet(join(base, 'pristine-tree', 'project'), sizes))
  const bigLog = timed('big log', () => logFile(join(root, 'log', 'big.log'), sizes.logBytes))
  const smallLog = timed('small log', () => logFile(join(root, 'log', 'small.log'), sizes.smallLogBytes))
  const list = timed('listing trees', () => listDataSet(join(root, 'list'), sizes))
  const small = smallFile(join(root, 'small', 'one-kb.txt'))
  const parallel = parallelReadDataSet(join(root, 'parallel'), sizes.parallelReads)
  let searchSet
  if (haveSearch) {
    searchSet = timed('search tree', () => {
      const set = searchDataSet(join(root, 'search'), smoke ? 200 : sizes.listEntries)
      const git = (...args) => execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', ...args], { cwd: set.dir, stdio: 'ignore' })
      git('init', '-q')
      git('add', '-A')
      return set
    })
  }
  const write = (name, text) => {
    const file = join(scratch, name)
    writeFileSync(file, text)
    return file
  }
  const patch = timed('patch files', () => patchDataSet(join(root, 'patch'), root, sizes))
  const chunks = (name, lines, count) => {
    const c = chunkDataSet(join(root, 'chunks', `${name}.ts`), root, lines, count)
    return write(`chunks-${name}.json`, JSON.stringify({ files: [{ file: c.file, original: c.original, expected: c.expected }], codex: c.codex, unified: c.unified }))
  }
  manifest = {
    mode: smoke ? 'smoke' : 'full',
    root,
    dataDir,
    scratch,
    iterations: ITERATIONS,
    edit: { file: edit.file, edits: edit.edits, originalFile: write('edit-original.ts', edit.original), expectedFile: write('edit-expected.ts', edit.expected) },
    rewrite: Object.fromEntries(
      Object.entries(rewrite).map(([name, v]) => [
        name,
        { file: v.file, bytes: Buffer.byteLength(v.original), lines: v.original.split('\n').length - 1, originalFile: write(`rewrite-${name}-old.ts`, v.original), rewrittenFile: write(`rewrite-${name}-new.ts`, v.rewritten) },
      ]),
    ),
    tree: { pristine: tree.dir, work: join(root, 'tree', 'project'), bytes: tree.bytes },
    log: { big: bigLog.file, small: smallLog.file, lines: sizes.readLines, bigBytes: bigLog.bytes, smallBytes: smallLog.bytes },
    list: { big: list.big, small: list.small, listedEntries: list.listedEntries, totalEntries: list.totalEntries },
    small: { file: small.file },
    parallel: { files: parallel.files },
    history: { changes: sizes.historyChanges, root: join(base, 'history-root'), dataDir: join(base, 'history-data') },
    patch: write('patch.json', JSON.stringify({ files: patch.files, unified: patch.patch })),
    chunks: { full: chunks('full', sizes.chunkLines, sizes.chunkCount), tenth: chunks('tenth', sizes.chunkLines / 10, sizes.chunkCount / 10) },
    search: searchSet && { dir: searchSet.dir, glob: searchSet.glob, regex: searchSet.regex, files: searchSet.files },
  }
  mkdirSync(join(root, 'tree'))
  writeFileSync(manifestPath, JSON.stringify(manifest))
}
if (!manifest.patch) throw new Error('the reused data sets have no patch files: generate them afresh')
if (!manifest.parallel) throw new Error('the reused data sets have no files for parallel reads: generate them afresh')
const searchSet = haveSearch ? manifest.search : undefined
if (haveSearch && !searchSet) throw new Error('the reused data sets have no search tree')
if (searchSet && !searchSet.expected) {
  // What glob and grep must find, counted once by the baseline: ours is checked against it, so
  // a truncated or wrong result fails its job instead of looking fast.
  searchSet.expected = await expectedCounts(searchSet.dir, searchSet.glob, searchSet.regex, haveRg)
  writeFileSync(manifestPath, JSON.stringify(manifest))
}

// ── cases ────────────────────────────────────────────────────────────────────────────────────────
const human = (bytes) =>
  bytes >= 1024 ** 3 ? `${+(bytes / 1024 ** 3).toFixed(1)} GiB` : bytes >= 1024 ** 2 ? `${Math.round(bytes / 1024 ** 2)} MiB` : `${Math.round(bytes / 1024)} KiB`
const n = (x) => x.toLocaleString('en-US')

/** Each case: rows (job + metric), the reference row for ratios, and its targets. */
const CASES = [
  {
    id: 'edit',
    title: `edit_file: ${human(sizes.editBytes)} file, ${sizes.uniqueEdits} unique edits + 1 replaceAll (${n(sizes.identifierOccurrences)} occurrences), diff + write`,
    rows: [
      { job: 'edit/ours', label: "ours: ws.call('edit_file')", ref: true },
      { job: 'edit/jsdiff', label: 'fs + string replace + jsdiff createPatch' },
    ],
    targets: [{ text: '≥ 5× faster than jsdiff', value: (r) => r['edit/jsdiff'] / r['edit/ours'], ok: (v) => v >= 5, fmt: (v) => `${v.toFixed(1)}×` }],
  },
  ...[
    ['disjoint', 'each line rewritten (no line kept)'],
    ['repetitive', 'every line replaced by another of 64 distinct lines'],
  ].map(([variant, how]) => ({
    id: `rewrite-${variant}`,
    title: `worst-case diff: ${n(manifest.rewrite[variant].bytes)}-byte file (${n(manifest.rewrite[variant].lines)} lines), ${how}`,
    rows: [
      { job: `rewrite-${variant}/ours-write`, label: 'ours: write_file (diff + atomic write + old copy to trash)', ref: true },
      { job: `rewrite-${variant}/ours-edit`, label: 'ours: edit_file (one edit replacing the whole text)' },
      { job: `rewrite-${variant}/jsdiff`, label: `jsdiff createPatch (stopped at ${DIFF_CAP_MS / 1000} s)`, cap: DIFF_CAP_MS },
    ],
    targets: [
      { text: `write_file within diffTimeoutMs + 0.5 s (${(DIFF_TIMEOUT_MS + 500) / 1000} s)`, value: (r) => r[`rewrite-${variant}/ours-write`], ok: (v) => v <= DIFF_TIMEOUT_MS + 500, fmt: (v) => `${(v / 1000).toFixed(2)} s` },
      { text: `edit_file within diffTimeoutMs + 0.5 s (${(DIFF_TIMEOUT_MS + 500) / 1000} s)`, value: (r) => r[`rewrite-${variant}/ours-edit`], ok: (v) => v <= DIFF_TIMEOUT_MS + 500, fmt: (v) => `${(v / 1000).toFixed(2)} s` },
    ],
  })),
  {
    id: 'tree-delete',
    title: `recoverable delete of a ${human(manifest.tree.bytes)} tree (${n(sizes.treeTextFiles)} text files + ${sizes.treeBinaries} binar${sizes.treeBinaries === 1 ? 'y' : 'ies'} of ${human(sizes.treeBinaryBytes)})`,
    rows: [
      { job: 'tree/ours', metric: 'trash', label: 'ours: remove_dir recursive (level 2, default)', ref: true },
      { job: 'tree/ours-level6', metric: 'trash', label: 'ours: remove_dir recursive (compressionLevel 6)', fullOnly: true },
      { job: 'tree/tar', metric: 'trash', label: 'tar -czf + rm -rf', child: true },
      { job: 'tree/tar-plain', metric: 'trash', label: 'tar -cf + rm -rf (no compression: the copy limit)', child: true },
      { job: 'tree/tar-plain-durable', metric: 'trash', label: 'tar -cf + fsync of the archive + rm -rf (the copy limit, on disk before the tree goes, as ours is)', child: true },
      { job: 'tree/tar-stream', metric: 'trash', label: 'tar-stream + zlib.gzipSync per file + fs.rm' },
    ],
    targets: [
      { text: '≥ 1.5× faster than tar -czf', value: (r) => r['tree/tar'] / r['tree/ours'], ok: (v) => v >= 1.5, fmt: (v) => `${v.toFixed(2)}×` },
      { text: '≤ 1.2× tar -cf + rm -rf (the copy limit)', value: (r) => r['tree/ours'] / r['tree/tar-plain'], ok: (v) => v <= 1.2, fmt: (v) => `${v.toFixed(2)}×` },
      { text: 'peak RSS growth < 64 MB', value: (r, s) => s['tree/ours'].rssGrowthBytes / 1024 / 1024, ok: (v) => v < 64, fmt: (v) => `${v.toFixed(1)} MB` },
      { text: 'event-loop lag p99 < 20 ms', value: (r, s) => s['tree/ours'].lagP99Ms, ok: (v) => v < 20, fmt: (v) => `${v.toFixed(1)} ms` },
    ],
  },
  {
    id: 'tree-restore',
    title: 'restore of that tree',
    rows: [
      { job: 'tree/ours', metric: 'restore', label: 'ours: restore_file', ref: true },
      { job: 'tree/ours-undo', metric: 'restore', label: 'ours: ws.undo() of the remove_dir (restores the same archive)' },
      { job: 'tree/ours-undo', metric: 'restore-file', key: 'tree/ours-undo:restore-file', label: 'ours: restore_file, taking turns with that undo in one series' },
      { job: 'tree/tar', metric: 'restore', label: 'tar -xzf', child: true },
    ],
    targets: [
      { text: '≥ 1× tar -xzf', value: (r) => r['tree/tar'] / r['tree/ours'], ok: (v) => v >= 1, fmt: (v) => `${v.toFixed(2)}×` },
      // Against the restore_file runs interleaved with the undo's (same series, same load).
      { text: 'undo within 1.1× of restore_file', value: (r) => r['tree/ours-undo'] / r['tree/ours-undo:restore-file'], ok: (v) => v <= 1.1, fmt: (v) => `${v.toFixed(2)}×` },
    ],
  },
  {
    id: 'history',
    title: `ws.history() over ${n(sizes.historyChanges)} changes (half new files, half edits kept as deltas)`,
    rows: [
      { job: 'history/ours', label: 'ours: ws.history() (every change)', ref: true },
      { job: 'history/jsonl', label: 'fs.readFileSync + JSON.parse per line (reading only, no state folded)' },
    ],
    targets: [{ text: 'ws.history() < 50 ms', value: (r) => r['history/ours'], ok: (v) => v < 50, fmt: (v) => `${v.toFixed(1)} ms` }],
  },
  {
    id: 'patch-many',
    title: `apply_patch: ${sizes.patchFiles} files × ${n(sizes.patchFileLines)} lines, ${sizes.patchHunksPerFile} hunks each, one unified diff`,
    rows: [
      { job: 'patch/ours', label: "ours: apply_patch (plans every file, one journaled commit, history with the deltas that take it back)", ref: true },
      { job: 'patch/jsdiff', label: 'jsdiff parsePatch + applyPatch + writeFileSync per file (keeps nothing, not atomic)' },
      { job: 'patch/jsdiff-durable', label: 'the same, each file written as write-file-atomic does: temp file, fsync, rename (durable; the change still not atomic)' },
    ],
    targets: [{ text: '≥ 1× the jsdiff path (safety for free)', value: (r) => r['patch/jsdiff'] / r['patch/ours'], ok: (v) => v >= 1, fmt: (v) => `${v.toFixed(2)}×` }],
  },
  {
    id: 'chunks',
    title: `chunk placement: ${n(sizes.chunkCount)} chunks on a ${n(sizes.chunkLines)}-line file, one apply_patch`,
    rows: [
      { job: 'chunks/ours', label: "ours: apply_patch, Codex format", ref: true },
      { job: 'chunks/ours-tenth', label: `ours: a tenth of it (${n(sizes.chunkCount / 10)} chunks on ${n(sizes.chunkLines / 10)} lines)` },
      { job: 'chunks/jsdiff', label: 'jsdiff applyPatch, the same change as a unified diff' },
      { job: 'chunks/jsdiff-durable', label: 'the same, the file written as write-file-atomic does: temp file, fsync, rename (durable)' },
    ],
    targets: [
      { text: 'near-linear: 10× the chunks and lines in ≤ 12× the time', value: (r) => r['chunks/ours'] / r['chunks/ours-tenth'], ok: (v) => v <= 12, fmt: (v) => `${v.toFixed(1)}×` },
      { text: '≥ 1× jsdiff applyPatch', value: (r) => r['chunks/jsdiff'] / r['chunks/ours'], ok: (v) => v >= 1, fmt: (v) => `${v.toFixed(2)}×` },
    ],
  },
  {
    id: 'read-log',
    title: `read lines 1–${sizes.readLines} of a ${human(manifest.log.bigBytes)} log (vs a ${human(manifest.log.smallBytes)} one)`,
    rows: [
      { job: 'read-log/ours-small', label: `ours: read_file, ${human(manifest.log.smallBytes)} file`, ref: true },
      { job: 'read-log/ours-big', label: `ours: read_file, ${human(manifest.log.bigBytes)} file` },
      { job: 'read-log/split-small', label: `fs.readFile + split, ${human(manifest.log.smallBytes)} file` },
      { job: 'read-log/split-big', label: `fs.readFile + split, ${human(manifest.log.bigBytes)} file` },
    ],
    targets: [
      { text: `ours on ${human(manifest.log.bigBytes)} within 2× of ours on ${human(manifest.log.smallBytes)}`, value: (r) => r['read-log/ours-big'] / r['read-log/ours-small'], ok: (v) => v <= 2, fmt: (v) => `${v.toFixed(2)}×` },
    ],
  },
  {
    id: 'list',
    title: `recursive list of a ${n(manifest.list.totalEntries)}-entry tree, ${Math.round(sizes.listIgnoredShare * 100)} % gitignored (node_modules); ${n(manifest.list.listedEntries)} entries listed`,
    rows: [
      { job: 'list/ours-big', label: "ours: list_directory recursive", ref: true },
      { job: 'list/ours-small', label: 'ours: the same tree without node_modules' },
      { job: 'list/fdir-paths-big', label: 'fdir + ignore (paths only)' },
      { job: 'list/fdir-stat-big', label: 'fdir + ignore + lstat (same lines as ours)' },
    ],
    targets: [
      { text: '≥ 2× faster than fdir + ignore + lstat (same output)', value: (r) => r['list/fdir-stat-big'] / r['list/ours-big'], ok: (v) => v >= 2, fmt: (v) => `${v.toFixed(2)}×` },
      { text: 'cost follows listed entries: ≤ 1.5× the tree without node_modules', value: (r) => r['list/ours-big'] / r['list/ours-small'], ok: (v) => v <= 1.5, fmt: (v) => `${v.toFixed(2)}×` },
    ],
  },
  {
    id: 'small-read',
    title: 'call overhead: read a 1 KB file',
    rows: [
      { job: 'small-read/ours', label: "ours: ws.call('read_file')", ref: true },
      { job: 'small-read/fs', label: 'fs.promises.readFile + line numbering' },
    ],
    targets: [{ text: '≤ 2× the baseline latency', value: (r) => r['small-read/ours'] / r['small-read/fs'], ok: (v) => v <= 2, fmt: (v) => `${v.toFixed(2)}×` }],
  },
  {
    id: 'parallel-read',
    title: `${n(manifest.parallel.files.length)} concurrent reads of distinct 1 KB files (Promise.all; time for the whole batch)`,
    rows: [
      { job: 'parallel-read/ours', label: "ours: ws.call('read_file') × " + n(manifest.parallel.files.length), ref: true },
      { job: 'parallel-read/fs', label: 'fs.promises.readFile + line numbering × ' + n(manifest.parallel.files.length) },
    ],
    targets: [
      { text: 'per call at least as fast as the baseline', value: (r) => r['parallel-read/ours'] / r['parallel-read/fs'], ok: (v) => v <= 1, fmt: (v) => `${v.toFixed(2)}× the baseline's time` },
    ],
  },
]
if (haveSearch) {
  const searchTitle = (what) => `${what} over a ${n(searchSet.files)}-file tree`
  CASES.push(
    {
      id: 'glob',
      title: searchTitle(`glob \`${searchSet.glob}\``),
      rows: [
        { job: 'glob/ours', label: 'ours: glob', ref: true },
        { job: 'glob/rg', label: 'rg --files --glob', child: true, needs: 'rg' },
        { job: 'glob/git', label: 'git ls-files (reads the index, no walk)', child: true },
      ],
      targets: [
        { text: 'within 1.5× of rg', value: (r) => r['glob/ours'] / r['glob/rg'], ok: (v) => v <= 1.5, fmt: (v) => `${v.toFixed(2)}×` },
      ],
    },
    {
      id: 'grep',
      title: searchTitle(`grep \`${searchSet.regex}\``),
      rows: [
        { job: 'grep/ours', label: 'ours: grep', ref: true },
        { job: 'grep/rg', label: 'rg -n', child: true, needs: 'rg' },
        { job: 'grep/turns', metric: 'ours', key: 'grep/turns:ours', label: 'ours: grep, taking turns with rg in one series', needs: 'rg' },
        { job: 'grep/turns', metric: 'rg', key: 'grep/turns:rg', label: 'rg -n, taking turns with ours in one series', child: true, needs: 'rg' },
        { job: 'grep/git-grep', label: 'git grep -n', child: true },
        { job: 'grep/grep-rn', label: 'grep -rn', child: true },
      ],
      targets: [
        { text: '≥ git grep (time ≤ git grep)', value: (r) => r['grep/ours'] / r['grep/git-grep'], ok: (v) => v <= 1, fmt: (v) => `${v.toFixed(2)}× git grep's time` },
        { text: '≥ 1.3× the speed of rg, taking turns (issue 33)', value: (r) => r['grep/turns:rg'] / r['grep/turns:ours'], ok: (v) => v >= 1.3, fmt: (v) => `${v.toFixed(2)}×` },
      ],
    },
  )
}
for (const c of CASES) c.rows = c.rows.filter((row) => !(smoke && row.fullOnly))

// ── run the jobs ─────────────────────────────────────────────────────────────────────────────────
/** Runs one job in its own process; resolves to its metrics, or to `{ error }`. */
function runJob(job, capMs) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--expose-gc', join(here, 'worker.mjs'), manifestPath, job], {
      cwd: repo,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    let capped = false
    let timer
    const began = performance.now()
    child.stdout.on('data', (chunk) => {
      stdout += chunk
      if (capMs && !timer && stdout.includes('BENCH_START')) {
        timer = setTimeout(() => {
          capped = true
          child.kill('SIGKILL')
        }, capMs)
      }
    })
    child.stderr.on('data', (chunk) => (stderr += chunk))
    const limit = setTimeout(() => child.kill('SIGKILL'), smoke ? 120_000 : 600_000)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      clearTimeout(limit)
      const line = stdout.split('\n').find((l) => l.startsWith('BENCH_RESULT '))
      if (line) return resolve(JSON.parse(line.slice('BENCH_RESULT '.length)))
      if (capped) return resolve({ main: { ok: false, capped: true, error: `stopped after ${capMs / 1000} s`, medianMs: capMs, iterations: 0 } })
      const why = signal ? `killed by ${signal}` : `exit code ${code}`
      resolve({ error: `${why} after ${((performance.now() - began) / 1000).toFixed(1)} s: ${stderr.trim().split('\n').slice(-3).join(' | ')}` })
    })
  })
}

const jobs = [...new Map(CASES.flatMap((c) => c.rows.map((r) => [r.job, r]))).entries()].filter(([job]) => !only || only.some((prefix) => job.startsWith(prefix)))
const results = {}
const t0 = performance.now()
for (const [job, { cap, needs }] of jobs) {
  const began = performance.now()
  process.stdout.write(`  ${job} … `)
  results[job] = needs === 'rg' && !haveRg ? { error: 'rg is not installed' } : await runJob(job, cap)
  const secs = ((performance.now() - began) / 1000).toFixed(1)
  const errors = Object.values(results[job]).filter((m) => m && typeof m === 'object' && m.error).map((m) => m.error)
  console.log(`${secs} s${results[job].error ? ` FAILED: ${results[job].error}` : errors.length ? ` (${errors.join('; ')})` : ''}`)
}
const totalSeconds = (performance.now() - t0) / 1000

// ── report ───────────────────────────────────────────────────────────────────────────────────────
const report = { meta: {}, cases: [], targets: [] }
for (const c of CASES) {
  const summaries = {}
  const medians = {}
  const rows = []
  for (const row of c.rows) {
    const job = results[row.job]
    if (!job) continue
    const s = job.error ? { ok: false, error: job.error, medianMs: null, iterations: 0 } : job[row.metric ?? 'main']
    // A second metric of a job is known by its row's `key`.
    const key = row.key ?? row.job
    summaries[key] = s
    if (s?.medianMs != null && s.ok) medians[key] = s.medianMs
    rows.push({ row, s })
  }
  const ref = c.rows.find((r) => r.ref)
  const refMs = ref && medians[ref.job]
  report.cases.push({
    id: c.id,
    title: c.title,
    rows: rows.map(({ row, s }) => ({
      job: row.job,
      metric: row.metric ?? 'main',
      label: row.label,
      reference: !!row.ref,
      childProcess: !!row.child,
      // A tool the row needs beyond Node (`rg`): without it, the row says so instead of numbers.
      needs: row.needs ?? null,
      ratioToReference: s?.medianMs != null && refMs ? s.medianMs / refMs : null,
      ...s,
    })),
  })
  for (const t of c.targets) {
    let value = null
    try {
      value = t.value(medians, summaries)
    } catch {}
    const valid = typeof value === 'number' && Number.isFinite(value)
    if (only && !valid) continue
    const measured = valid ? t.fmt(value) : t.text.includes('rg') && !haveRg ? 'not measured: rg missing' : 'not measured'
    report.targets.push({ case: c.id, target: t.text, value: valid ? value : null, measured, met: valid ? t.ok(value) : false })
  }
}

report.meta = {
  date: new Date().toISOString(),
  mode: smoke ? 'smoke' : 'full',
  addon: addonKind,
  node: process.version,
  platform: `${process.platform}-${process.arch}`,
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model,
  memoryGiB: +(totalmem() / 1024 ** 3).toFixed(1),
  totalSeconds: +totalSeconds.toFixed(1),
  tools: [...toolNames],
  rg: haveRg,
  sizes,
  iterations: ITERATIONS,
  notes: [
    'Medians of repeated runs on a warm page cache; "÷ ref" is this row\'s median divided by the reference row\'s.',
    'Event-loop lag p99 and peak RSS growth are the worst over the runs (peak RSS from VmHWM, reset before each run).',
    'Child-process baselines (tar, rg, git, grep) use memory in another process; their RSS is not shown.',
  ],
}
report.table = measurementsTable(report)
report.targetsTable = targetsTable(report)

console.log('')
console.log(report.table)
console.log('')
console.log(report.targetsTable)
console.log('')
console.log(`${jobs.length} jobs in ${totalSeconds.toFixed(0)} s on ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, ${addonKind} addon`)
mkdirSync(dirname(out), { recursive: true })
writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`)
console.log(`results: ${relative(process.cwd(), out) || out}`)
if (!haveRg) console.warn(`\n*** ${RG_MISSING} ***`)

if (keep || reuse) console.log(`data sets kept in ${base} (reuse them with --data ${base})`)
else rmSync(base, { recursive: true, force: true })
