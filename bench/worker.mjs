/**
 * Runs one benchmark job (one case, one implementation) in its own process, so peak RSS and the
 * event loop of one job are not polluted by another. Started by `run.mjs` as
 * `node --expose-gc worker.mjs <manifest.json> <job id>`; prints one line
 * `BENCH_RESULT <json>` with a summary per metric (see `measure.mjs`).
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { mergeSeries, series, turns } from './measure.mjs'
import { editFile, diffTexts } from './baselines/edit-jsdiff.mjs'
import * as tarCli from './baselines/trash-tar.mjs'
import * as tarStream from './baselines/trash-tar-stream.mjs'
import { readLines } from './baselines/read-split.mjs'
import { listEntries, listPaths } from './baselines/list-fdir.mjs'
import { readLog, writeLog } from './baselines/history-jsonl.mjs'
import { readNumbered } from './baselines/read-small.mjs'
import * as search from './baselines/search-cli.mjs'
import { applyUnified } from './baselines/patch-jsdiff.mjs'

const repo = join(dirname(fileURLToPath(import.meta.url)), '..')
const [manifestPath, jobId] = process.argv.slice(2)
const m = JSON.parse(readFileSync(manifestPath, 'utf8'))
const it = m.iterations
m.edit.original = readFileSync(m.edit.originalFile, 'utf8')
m.edit.expected = readFileSync(m.edit.expectedFile, 'utf8')
for (const variant of Object.values(m.rewrite)) {
  variant.original = readFileSync(variant.originalFile, 'utf8')
  variant.rewritten = readFileSync(variant.rewrittenFile, 'utf8')
}

/** The package as a host imports it (the built `dist/`, loading the `.node` at the root). */
/**
 * Limits under which a listing, a glob or a grep gives its whole result (no entry cap, no
 * output-bytes bound), so ours does the same work as the baselines, which print everything.
 */
const WHOLE_OUTPUT = { listMaxEntries: 10_000_000, readMaxBytes: 64 << 20 }

async function workspace(extra = {}) {
  const { Workspace } = await import(pathToFileURL(join(repo, 'dist/esm/index.js')).href)
  return new Workspace({
    root: m.root,
    permissions: { cwdWriteFile: true, cwdRemoveFile: true, cwdRemoveDir: true },
    trash: { dataDir: m.dataDir },
    confirm: () => true,
    ...extra,
  })
}

/** `ws.call` that throws on anything but `ok`, so a failing call never passes for a fast one. */
async function call(ws, name, args) {
  const result = await ws.call(name, args)
  if (result.status !== 'ok') throw new Error(`${name}: ${result.status} ${result.code ?? ''}: ${result.output.slice(0, 300)}`)
  return result
}

function check(condition, message) {
  if (!condition) throw new Error(`result check failed: ${message}`)
}

/** Our grep of the search tree, every match shown. */
const grepAll = (ws) => call(ws, 'grep', { pattern: m.search.regex, path: m.search.dir, maxMatches: 1_000_000 })

/** A grep result must hold every matching line the baseline counted in the set-up. */
function checkGrep(r) {
  const want = m.search.expected.grepLines
  check(r.data.matches === want && !r.data.truncated, `found ${r.data.matches} matching lines (truncated: ${r.data.truncated}), ${m.search.expected.countedBy} found ${want}`)
}

const resetEditFile = () => writeFileSync(m.edit.file, m.edit.original)
const checkEdited = () => check(readFileSync(m.edit.file, 'utf8') === m.edit.expected, 'edited file differs from the expected result')

/** A fresh copy of the pristine tree at `m.tree.work` (unmeasured). */
function freshTree() {
  rmSync(m.tree.work, { recursive: true, force: true })
  execFileSync('cp', ['-a', m.tree.pristine, m.tree.work])
}

/**
 * Delete-then-restore pairs on a fresh copy of the tree: `trash()` is measured as one series;
 * each archive it returns is then restored by `restore(archive)`, measured on its own (or, without
 * `restore`, thrown away by `discard(archive)`, unmeasured).
 */
async function trashAndRestore(trash, restore, discard, iterations = it.tree) {
  const { trash: summary, restores } = await trashAndRestoreEach(trash, restore ? { restore: [restore, discard] } : {}, discard, iterations)
  return restore ? { trash: summary, restore: restores.restore } : { trash: summary }
}

/**
 * `trashAndRestore` with several ways to restore (`{ metric: [restore, discard?] }`) taking turns
 * after successive trashes, each measured into its own metric: interleaved, so that the load of a
 * shared machine and the writeback of earlier runs weigh on each alike and their ratio means
 * something. Without any, each archive is dropped by `discard`.
 */
async function trashAndRestoreEach(trash, ways, discard, iterations) {
  freshTree()
  const names = Object.keys(ways)
  const runs = Object.fromEntries(names.map((name) => [name, []]))
  let archive
  let turn = 0
  const trashSummary = await series(
    async () => {
      archive = await trash()
    },
    {
      ...iterations,
      teardown: async () => {
        if (names.length) {
          const name = names[turn++ % names.length]
          const [restore, dropped] = ways[name]
          const one = await series(() => restore(archive), { min: 1, max: 1 })
          runs[name].push(one)
          if (!one.ok) throw new Error(one.error)
          dropped?.(archive)
        } else {
          discard?.(archive)
        }
        freshTree()
      },
    },
  )
  return { trash: trashSummary, restores: Object.fromEntries(names.map((name) => [name, mergeSeries(runs[name])])) }
}

/** The files a patch case changes, put back as they were before each run (unmeasured). */
function patchCase(jsonFile) {
  const c = JSON.parse(readFileSync(jsonFile, 'utf8'))
  return {
    ...c,
    reset: () => c.files.forEach((f) => writeFileSync(f.file, f.original)),
    checkPatched: () => check(c.files.every((f) => readFileSync(f.file, 'utf8') === f.expected), 'a patched file differs from the expected result'),
  }
}

/** apply_patch of `input` through the package, checked against the expected files. */
async function patchOurs(jsonFile, format, iterations) {
  const c = patchCase(jsonFile)
  const ws = await workspace()
  const args = { input: c[format] }
  return { main: await series(() => call(ws, 'apply_patch', args), { ...iterations, setup: c.reset, teardown: c.checkPatched }) }
}

/** The same change as a unified diff, applied with jsdiff file by file (`durable`: see `applyUnified`). */
async function patchJsdiff(jsonFile, iterations, options = {}) {
  const c = patchCase(jsonFile)
  return { main: await series(() => applyUnified(m.root, c.unified, options), { ...iterations, setup: c.reset, teardown: c.checkPatched }) }
}

/** A file name in the scratch directory (outside the workspace root). */
const scratch = (name) => join(m.scratch, name)

/** `tar -cf` + `rm -rf` of the tree, the copy limit (`durable`: see `trashTreeUncompressed`). */
function tarPlain(options) {
  const archive = scratch('tree.tar')
  return trashAndRestore(
    async () => {
      await tarCli.trashTreeUncompressed(m.tree.work, archive, options)
      return archive
    },
    undefined,
    (a) => rmSync(a, { force: true }),
  )
}

const jobs = {
  // ── edit_file ────────────────────────────────────────────────────────────────────────────────
  'edit/ours': async () => {
    const ws = await workspace()
    const args = { path: m.edit.file, edits: m.edit.edits }
    const s = await series(() => call(ws, 'edit_file', args), { ...it.edit, setup: resetEditFile, teardown: checkEdited })
    return { main: s }
  },
  'edit/jsdiff': async () => {
    const s = await series(() => editFile(m.edit.file, m.edit.edits), { ...it.edit, setup: resetEditFile, teardown: checkEdited })
    return { main: s }
  },

  // ── worst-case diff ──────────────────────────────────────────────────────────────────────────
  ...Object.fromEntries(
    ['disjoint', 'repetitive'].flatMap((variant) => {
      const v = () => m.rewrite[variant]
      const reset = () => writeFileSync(v().file, v().original)
      return [
        [
          `rewrite-${variant}/ours-write`,
          async () => {
            const ws = await workspace()
            const args = { path: v().file, content: v().rewritten }
            // The model reads a file before it rewrites it (SPEC §5.1): unmeasured, in the setup.
            const setup = async () => {
              reset()
              await call(ws, 'read_file', { path: v().file, endLine: 1 })
            }
            return { main: await series(() => call(ws, 'write_file', args), { ...it.rewrite, setup }) }
          },
        ],
        [
          `rewrite-${variant}/ours-edit`,
          async () => {
            const ws = await workspace()
            const args = { path: v().file, edits: [{ oldString: v().original, newString: v().rewritten }] }
            return { main: await series(() => call(ws, 'edit_file', args), { ...it.rewrite, setup: reset }) }
          },
        ],
        [
          `rewrite-${variant}/jsdiff`,
          async () => {
            const name = basename(v().file)
            // The parent stops this process once the cap has passed after this line.
            console.log('BENCH_START')
            return { main: await series(() => diffTexts(name, v().original, v().rewritten), { min: 1, max: 1 }) }
          },
        ],
      ]
    }),
  ),

  // ── recoverable delete and restore of a tree ─────────────────────────────────────────────────
  'tree/ours': async () => {
    const ws = await workspace()
    return trashAndRestore(
      async () => (await call(ws, 'remove_dir', { path: m.tree.work, recursive: true })).data.trashedTo,
      async (archive) => {
        await call(ws, 'restore_file', { trashedPath: archive })
      },
    )
  },
  // The undo, and restore_file of the same kind of archive, taking turns in one series: their
  // ratio is the target, and runs minutes apart on a shared machine differ by more than it.
  'tree/ours-undo': async () => {
    const ws = await workspace()
    const undo = async () => {
      const r = await ws.undo()
      if (r.status !== 'ok') throw new Error(`undo: ${r.code}: ${r.output.slice(0, 300)}`)
      check(r.output.includes(`restore the directory ${m.tree.work} from the trash`) && existsSync(m.tree.work), 'the undo did not restore the tree')
    }
    const restoreFile = async (archive) => {
      await call(ws, 'restore_file', { trashedPath: archive })
    }
    const { trash, restores } = await trashAndRestoreEach(
      async () => (await call(ws, 'remove_dir', { path: m.tree.work, recursive: true })).data.trashedTo,
      {
        // The undo leaves the archive in the trash (a redo may need it): dropped, unmeasured.
        restore: [undo, (archive) => rmSync(archive, { force: true })],
        'restore-file': [restoreFile],
      },
      undefined,
      it.treeTurns,
    )
    return { trash, restore: restores.restore, 'restore-file': restores['restore-file'] }
  },
  'tree/ours-level6': async () => {
    const ws = await workspace({ trash: { dataDir: m.dataDir, compressionLevel: 6 } })
    return trashAndRestore(
      async () => (await call(ws, 'remove_dir', { path: m.tree.work, recursive: true })).data.trashedTo,
      undefined,
      (archive) => rmSync(archive, { force: true }),
    )
  },
  'tree/tar': async () => {
    const archive = scratch('tree.tar.gz')
    return trashAndRestore(
      async () => {
        await tarCli.trashTree(m.tree.work, archive)
        return archive
      },
      async (a) => {
        await tarCli.restoreTree(a, dirname(m.tree.work))
        rmSync(a, { force: true })
      },
    )
  },
  'tree/tar-plain': () => tarPlain({ durable: false }),
  'tree/tar-plain-durable': () => tarPlain({ durable: true }),
  'tree/tar-stream': async () => {
    const archive = scratch('tree-stream.tar')
    return trashAndRestore(
      async () => {
        await tarStream.trashTree(m.tree.work, archive)
        return archive
      },
      undefined,
      (a) => rmSync(a, { force: true }),
    )
  },

  // ── apply_patch over many files, and chunk placement at scale ────────────────────────────────
  'patch/ours': () => patchOurs(m.patch, 'unified', it.patch),
  'patch/jsdiff': () => patchJsdiff(m.patch, it.patch),
  'patch/jsdiff-durable': () => patchJsdiff(m.patch, it.patch, { durable: true }),
  'chunks/ours': () => patchOurs(m.chunks.full, 'codex', it.chunks),
  'chunks/ours-tenth': () => patchOurs(m.chunks.tenth, 'codex', it.chunks),
  'chunks/jsdiff': () => patchJsdiff(m.chunks.full, it.chunks),
  'chunks/jsdiff-durable': () => patchJsdiff(m.chunks.full, it.chunks, { durable: true }),

  // ── read lines 1–N of a huge file ────────────────────────────────────────────────────────────
  ...Object.fromEntries(
    ['big', 'small'].flatMap((size) => [
      [
        `read-log/ours-${size}`,
        async () => {
          const ws = await workspace()
          const args = { path: m.log[size], startLine: 1, endLine: m.log.lines }
          const op = async () => {
            const r = await call(ws, 'read_file', args)
            check(r.data.endLine === m.log.lines, `read_file showed lines up to ${r.data.endLine}`)
          }
          return { main: await series(op, it.readLog) }
        },
      ],
      [
        `read-log/split-${size}`,
        async () => {
          const op = async () => {
            const text = await readLines(m.log[size], 1, m.log.lines)
            check(text.split('\n').length === m.log.lines, 'wrong number of lines')
          }
          return { main: await series(op, size === 'big' ? { min: 1, max: 1 } : it.readLog) }
        },
      ],
    ]),
  ),

  // ── recursive listing, mostly gitignored ─────────────────────────────────────────────────────
  ...Object.fromEntries(
    ['big', 'small'].flatMap((size) => [
      [
        `list/ours-${size}`,
        async () => {
          const ws = await workspace({ limits: WHOLE_OUTPUT })
          const op = async () => {
            const r = await call(ws, 'list_directory', { path: m.list[size], recursive: true })
            check(r.data.entries === m.list.listedEntries, `listed ${r.data.entries} entries, expected ${m.list.listedEntries}`)
          }
          return { main: await series(op, it.list) }
        },
      ],
      [
        `list/fdir-paths-${size}`,
        async () => {
          const op = async () => {
            const paths = await listPaths(m.list[size])
            check(paths.length === m.list.listedEntries, `listed ${paths.length} entries, expected ${m.list.listedEntries}`)
          }
          return { main: await series(op, it.list) }
        },
      ],
      [
        `list/fdir-stat-${size}`,
        async () => {
          const op = async () => {
            const lines = await listEntries(m.list[size])
            check(lines.length === m.list.listedEntries, `listed ${lines.length} entries, expected ${m.list.listedEntries}`)
          }
          return { main: await series(op, it.list) }
        },
      ],
    ]),
  ),

  // ── call overhead ────────────────────────────────────────────────────────────────────────────
  'small-read/ours': async () => {
    const ws = await workspace()
    const args = { path: m.small.file }
    return { main: await series(() => call(ws, 'read_file', args), it.small) }
  },
  'small-read/fs': async () => {
    return { main: await series(() => readNumbered(m.small.file), it.small) }
  },

  // ── many calls in flight ───────────────────────────────────────────────────────────────────────
  'parallel-read/ours': async () => {
    const ws = await workspace()
    const op = async () => {
      const results = await Promise.all(m.parallel.files.map((path) => call(ws, 'read_file', { path })))
      check(results.every((r) => r.data.endLine > 1), 'a file was read short')
    }
    return { main: await series(op, it.parallel) }
  },
  'parallel-read/fs': async () => {
    const op = async () => {
      const texts = await Promise.all(m.parallel.files.map((path) => readNumbered(path)))
      check(texts.every((t) => t.includes('\n')), 'a file was read short')
    }
    return { main: await series(op, it.parallel) }
  },

  // ── the history ────────────────────────────────────────────────────────────────────────────
  'history/ours': async () => {
    const { Workspace } = await import(pathToFileURL(join(repo, 'dist/esm/index.js')).href)
    const h = m.history
    rmSync(h.root, { recursive: true, force: true })
    rmSync(h.dataDir, { recursive: true, force: true })
    mkdirSync(h.root, { recursive: true })
    const ws = new Workspace({ root: h.root, permissions: { cwdWriteFile: true }, trash: { dataDir: h.dataDir }, audit: false })
    // Real changes, made once (unmeasured): a new file, then an edit of it (kept as a delta).
    for (let i = 0; i < h.changes; i++) {
      const path = `d${Math.floor(i / 1000)}/f${i >> 1}.txt`
      if (i % 2 === 0) await call(ws, 'write_file', { path, content: `line one ${i}\nline two\n` })
      else await call(ws, 'edit_file', { path, edits: [{ oldString: 'two', newString: `two, edited ${i}` }] })
    }
    const all = async () => check((await ws.history()).length === h.changes, 'history() missed changes')
    return { main: await series(all, it.history) }
  },

  'history/jsonl': async () => {
    const h = m.history
    mkdirSync(h.dataDir, { recursive: true })
    const log = join(h.dataDir, 'baseline.jsonl')
    writeLog(log, h.changes)
    const all = async () => check(readLog(log).length === h.changes, 'the log missed changes')
    return { main: await series(all, it.history) }
  },

  // ── glob and grep (when the tools exist) ─────────────────────────────────────────────────────
  // Checked against the counts the baseline found in the data set-up (`search.expected`).
  'glob/ours': async () => {
    const ws = await workspace({ limits: WHOLE_OUTPUT })
    const want = m.search.expected.globFiles
    const op = () => call(ws, 'glob', { pattern: m.search.glob, path: m.search.dir })
    const checked = (_, r) =>
      check(r.data.files === want && !r.data.truncated, `found ${r.data.files} files (truncated: ${r.data.truncated}), ${m.search.expected.countedBy} found ${want}`)
    return { main: await series(op, { ...it.search, teardown: checked }) }
  },
  'glob/rg': async () => ({ main: await series(() => search.rgFiles(m.search.dir, m.search.glob), it.search) }),
  'glob/git': async () => ({ main: await series(() => search.gitLsFiles(m.search.dir, m.search.glob), it.search) }),
  'grep/ours': async () => {
    const ws = await workspace({ limits: WHOLE_OUTPUT })
    return { main: await series(() => grepAll(ws), { ...it.search, teardown: (_, r) => checkGrep(r) }) }
  },
  'grep/rg': async () => ({ main: await series(() => search.rg(m.search.dir, m.search.regex), it.search) }),
  // Ours and rg taking turns in one series: their ratio is a target, and runs a minute apart on
  // a shared machine differ by more than its margin.
  'grep/turns': async () => {
    const ws = await workspace({ limits: WHOLE_OUTPUT })
    const ours = async () => checkGrep(await grepAll(ws))
    const rg = () => search.rg(m.search.dir, m.search.regex)
    return turns({ ours, rg }, { ...it.search, budgetMs: 2 * (it.search.budgetMs ?? 10_000) })
  },
  'grep/git-grep': async () => ({ main: await series(() => search.gitGrep(m.search.dir, m.search.regex), it.search) }),
  'grep/grep-rn': async () => ({ main: await series(() => search.grepRn(m.search.dir, m.search.regex), it.search) }),
}

const job = jobs[jobId]
if (!job) {
  console.error(`unknown job ${jobId}; known: ${Object.keys(jobs).join(', ')}`)
  process.exit(2)
}
const metrics = await job()
console.log(`BENCH_RESULT ${JSON.stringify(metrics)}`)
