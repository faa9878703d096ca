/**
 * Deterministic data sets for the benchmark, generated into a temp directory (never committed).
 *
 * Every byte comes from a seeded PRNG (text) or an AES-CTR keystream with a fixed key (binary
 * data), so two runs on two machines measure the same bytes.
 */
import { createCipheriv } from 'node:crypto'
import { closeSync, mkdirSync, openSync, utimesSync, writeFileSync, writeSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'

/** Full sizes (the issue's) and smoke sizes (tiny, for CI). */
export const SIZES = {
  full: {
    editBytes: 2 * 1024 * 1024,
    uniqueEdits: 50,
    identifierOccurrences: 2000,
    // Just under the default writeMaxBytes (1 MiB), so write_file takes it.
    rewriteBytes: 1024 * 1024 - 8 * 1024,
    treeTextFiles: 2000,
    treeTextBytes: 100 * 1024 * 1024,
    treeBinaries: 4,
    treeBinaryBytes: 25 * 1024 * 1024,
    logBytes: 1024 * 1024 * 1024,
    smallLogBytes: 1024 * 1024,
    readLines: 500,
    listEntries: 100_000,
    listIgnoredShare: 0.95,
    parallelReads: 1000,
    historyChanges: 10_000,
    patchFiles: 50,
    patchFileLines: 2000,
    patchHunksPerFile: 10,
    chunkLines: 100_000,
    chunkCount: 10_000,
  },
  smoke: {
    editBytes: 24 * 1024,
    uniqueEdits: 5,
    identifierOccurrences: 20,
    rewriteBytes: 8 * 1024,
    treeTextFiles: 20,
    treeTextBytes: 200 * 1024,
    treeBinaries: 1,
    treeBinaryBytes: 64 * 1024,
    logBytes: 2 * 1024 * 1024,
    smallLogBytes: 16 * 1024,
    readLines: 50,
    listEntries: 400,
    listIgnoredShare: 0.95,
    parallelReads: 20,
    historyChanges: 200,
    patchFiles: 4,
    patchFileLines: 200,
    patchHunksPerFile: 3,
    chunkLines: 2000,
    chunkCount: 200,
  },
}

/** mulberry32: a small, fast, seeded PRNG (uniform in [0, 1)). */
export function prng(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** `n` pseudo-random bytes from a fixed-key AES-128-CTR keystream (incompressible, like media). */
function randomBytes(n, seed) {
  const key = Buffer.alloc(16, seed & 0xff)
  const iv = Buffer.alloc(16, (seed >>> 8) & 0xff)
  return createCipheriv('aes-128-ctr', key, iv).update(Buffer.alloc(n))
}

const WORDS = (
  'const let function return if else for while await async import export from class extends new this ' +
  'value result error options config handler request response buffer stream path file name index count ' +
  'length items entry state props context user session token cache map set list key data payload ' +
  'string number boolean undefined null true false Promise Array Object JSON parse stringify push ' +
  'filter reduce forEach then catch finally throw try switch case default break continue typeof'
).split(' ')

/** One line of source-like text (no trailing newline), `words` words long, indented. */
function codeLine(rand, words) {
  const indent = '  '.repeat(Math.floor(rand() * 4))
  const parts = []
  for (let i = 0; i < words; i++) parts.push(WORDS[Math.floor(rand() * WORDS.length)])
  const end = rand() < 0.7 ? ';' : rand() < 0.5 ? ' {' : ''
  return indent + parts.join(' ') + end
}

/** About `bytes` bytes of source-like text, whole lines. */
function codeText(rand, bytes) {
  const lines = []
  let size = 0
  while (size < bytes) {
    const line = codeLine(rand, 3 + Math.floor(rand() * 8))
    lines.push(line)
    size += line.length + 1
  }
  return lines.join('\n') + '\n'
}

/**
 * edit_file: a source file of `editBytes` with `identifierOccurrences` lines using
 * `legacyHandler` and `uniqueEdits` unique marker lines; the edits (50 unique + 1 replaceAll)
 * and the expected result.
 */
export function editDataSet(dir, sizes) {
  const rand = prng(1)
  const lines = []
  let size = 0
  while (size < sizes.editBytes) {
    const line = codeLine(rand, 3 + Math.floor(rand() * 8))
    lines.push(line)
    size += line.length + 1
  }
  const spread = (count, offset) => Array.from({ length: count }, (_, i) => Math.floor(((i + offset) * lines.length) / count))
  for (const at of spread(sizes.identifierOccurrences, 0.5)) lines[at] = `  result = legacyHandler(request, ${at});`
  const edits = []
  for (let [i, at] of spread(sizes.uniqueEdits, 0.25).entries()) {
    while (lines[at].includes('legacyHandler')) at++
    const id = String(i).padStart(4, '0')
    lines[at] = `  const marker_${id} = computeValue(${at}, 'alpha');`
    edits.push({ oldString: `const marker_${id} = computeValue(${at}, 'alpha');`, newString: `const marker_${id} = computeValue(${at}, 'beta', options);` })
  }
  edits.push({ oldString: 'legacyHandler', newString: 'modernHandler', replaceAll: true })
  const original = lines.join('\n') + '\n'
  let expected = original
  for (const e of edits) expected = e.replaceAll ? expected.split(e.oldString).join(e.newString) : expected.replace(e.oldString, () => e.newString)
  mkdirSync(dir, { recursive: true })
  const file = join(dir, 'server.ts')
  writeFileSync(file, original)
  return { file, original, edits, expected }
}

/**
 * Worst-case diffs, just under `rewriteBytes`, every line changed:
 * - `disjoint`: each line rewritten (upper-cased), no line of the new text in the old one;
 * - `repetitive`: lines drawn from 64 distinct statements, each replaced by a different one, so
 *   the two texts share most lines but at no aligned position — the expensive case for Myers.
 */
export function rewriteDataSet(dir, sizes) {
  const rand = prng(2)
  const variants = {}
  {
    const oldLines = []
    const newLines = []
    let size = 0
    for (let i = 0; ; i++) {
      const line = `${codeLine(rand, 4 + Math.floor(rand() * 6))} // ${i}`
      if (size + line.length + 1 > sizes.rewriteBytes) break
      oldLines.push(line)
      newLines.push(line.toUpperCase())
      size += line.length + 1
    }
    variants.disjoint = [oldLines, newLines]
  }
  {
    const vocabulary = Array.from({ length: 64 }, (_, i) => `  statement${i}(value, options, ${i});`)
    const oldLines = []
    const newLines = []
    let size = 0
    for (;;) {
      const a = Math.floor(rand() * 64)
      const b = (a + 1 + Math.floor(rand() * 63)) % 64
      if (size + vocabulary[a].length + 1 > sizes.rewriteBytes || size + vocabulary[b].length + 1 > sizes.rewriteBytes) break
      oldLines.push(vocabulary[a])
      newLines.push(vocabulary[b])
      size += Math.max(vocabulary[a].length, vocabulary[b].length) + 1
    }
    variants.repetitive = [oldLines, newLines]
  }
  mkdirSync(dir, { recursive: true })
  const out = {}
  for (const [name, [oldLines, newLines]] of Object.entries(variants)) {
    const file = join(dir, `${name}.ts`)
    const original = oldLines.join('\n') + '\n'
    writeFileSync(file, original)
    out[name] = { file, original, rewritten: newLines.join('\n') + '\n' }
  }
  return out
}

/**
 * A tree of `treeTextFiles` source-like files (sizes 1 KB … ~4× the mean, in nested directories)
 * plus `treeBinaries` large binaries (half incompressible, half semi-structured).
 */
export function treeDataSet(dir, sizes) {
  const rand = prng(3)
  const mean = sizes.treeTextBytes / sizes.treeTextFiles
  let textBytes = 0
  for (let i = 0; i < sizes.treeTextFiles; i++) {
    const a = `pkg${String(i % 10).padStart(2, '0')}`
    const b = `mod${String(Math.floor(i / 10) % 20).padStart(2, '0')}`
    const file = join(dir, 'src', a, b, `file${String(i).padStart(5, '0')}.ts`)
    // Exponential-ish sizes with the requested mean.
    const bytes = Math.max(256, Math.round(-Math.log(1 - rand() * 0.98) * mean * 0.97))
    mkdirSync(dirname(file), { recursive: true })
    const text = codeText(rand, bytes)
    writeFileSync(file, text)
    textBytes += text.length
  }
  let binaryBytes = 0
  for (let i = 0; i < sizes.treeBinaries; i++) {
    const file = join(dir, 'assets', `blob${i}.bin`)
    mkdirSync(dirname(file), { recursive: true })
    const fd = openSync(file, 'w')
    const chunk = 1024 * 1024
    for (let done = 0, k = 0; done < sizes.treeBinaryBytes; done += chunk, k++) {
      const n = Math.min(chunk, sizes.treeBinaryBytes - done)
      let bytes = randomBytes(n, 100 + i * 1000 + k)
      if (i % 2 === 1) {
        // Semi-structured (like an executable or a database page file): every other 4 KiB block is
        // repetitive text, the rest noise.
        const pattern = Buffer.from(codeText(prng(i * 1000 + k), 4096).slice(0, 4096))
        for (let off = 0; off + 4096 <= n; off += 8192) pattern.copy(bytes, off)
      }
      writeSync(fd, bytes)
    }
    closeSync(fd)
    binaryBytes += sizes.treeBinaryBytes
  }
  writeFileSync(join(dir, 'README.md'), '# a project\n')
  // Fixed mtimes, so archives of two runs hold the same bytes.
  utimesSync(join(dir, 'README.md'), 1_700_000_000, 1_700_000_000)
  return { dir, files: sizes.treeTextFiles + sizes.treeBinaries + 1, bytes: textBytes + binaryBytes + 12 }
}

/** A log file of at least `bytes` bytes: a 4 MiB (or smaller) block of log lines, repeated. */
export function logFile(file, bytes, seed = 4) {
  const rand = prng(seed)
  const levels = ['INFO', 'INFO', 'INFO', 'DEBUG', 'WARN', 'ERROR']
  const paths = ['/api/users', '/api/orders', '/health', '/api/search', '/static/app.js', '/api/login']
  const lines = []
  let size = 0
  const blockBytes = Math.min(bytes, 4 * 1024 * 1024)
  for (let i = 0; size < blockBytes; i++) {
    const ms = 1_700_000_000_000 + i * 137
    const line =
      `${new Date(ms).toISOString()} ${levels[Math.floor(rand() * levels.length)]} [worker-${Math.floor(rand() * 8)}] ` +
      `request id=${Math.floor(rand() * 1e9).toString(16)} path=${paths[Math.floor(rand() * paths.length)]} ` +
      `status=${rand() < 0.95 ? 200 : 500} dur=${Math.floor(rand() * 900)}ms`
    lines.push(line)
    size += line.length + 1
  }
  const block = Buffer.from(lines.join('\n') + '\n')
  mkdirSync(dirname(file), { recursive: true })
  const fd = openSync(file, 'w')
  let written = 0
  while (written < bytes) written += writeSync(fd, block)
  closeSync(fd)
  return { file, bytes: written }
}

/**
 * A project tree of `entries` entries (files and directories), `ignoredShare` of them under a
 * gitignored `node_modules/`; and beside it the same project without `node_modules` (to show that
 * the cost follows the listed entries, not the ignored ones). Returns both directories and the
 * number of entries a gitignore-aware listing shows.
 */
export function listDataSet(dir, sizes) {
  const ignored = Math.round(sizes.listEntries * sizes.listIgnoredShare)
  const listed = sizes.listEntries - ignored
  const project = (root, withModules) => {
    mkdirSync(root, { recursive: true })
    writeFileSync(join(root, '.gitignore'), 'node_modules/\n*.log\n')
    let count = 1 // .gitignore
    // Listed part: directories of 19 files each.
    for (let d = 0; count < listed; d++) {
      const sub = join(root, 'src', `area${String(d).padStart(4, '0')}`)
      mkdirSync(sub, { recursive: true })
      count += d === 0 ? 2 : 1 // src/ once, then area/
      for (let f = 0; f < 19 && count < listed; f++, count++) writeFileSync(join(sub, `module${f}.ts`), 'export {}\n')
    }
    if (!withModules) return count
    // Ignored part: packages of a directory, a package.json, a lib/ with files.
    let extra = 1 // node_modules/
    mkdirSync(join(root, 'node_modules'))
    for (let p = 0; extra < ignored; p++) {
      const pkg = join(root, 'node_modules', `package-${p}`)
      mkdirSync(join(pkg, 'lib'), { recursive: true })
      writeFileSync(join(pkg, 'package.json'), '{}\n')
      extra += 3
      for (let f = 0; f < 45 && extra < ignored; f++, extra++) writeFileSync(join(pkg, 'lib', `f${f}.js`), '\n')
    }
    return count
  }
  const big = join(dir, 'with-node-modules')
  const small = join(dir, 'without-node-modules')
  const listedEntries = project(big, true)
  project(small, false)
  return { big, small, listedEntries, totalEntries: sizes.listEntries }
}

/** A 1 KiB text file of numbered source lines. */
export function smallFile(file) {
  const rand = prng(5)
  let text = ''
  while (text.length < 1024) text += codeLine(rand, 5) + '\n'
  text = text.slice(0, 1023) + '\n'
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, text)
  return { file, bytes: text.length }
}

/** `files` distinct 1 KiB text files in `dir`, for reading them all at once. */
export function parallelReadDataSet(dir, files) {
  mkdirSync(dir, { recursive: true })
  const paths = []
  for (let i = 0; i < files; i++) {
    const rand = prng(1000 + i)
    let text = ''
    while (text.length < 1024) text += codeLine(rand, 5) + '\n'
    const file = join(dir, `file${String(i).padStart(4, '0')}.txt`)
    writeFileSync(file, text.slice(0, 1023) + '\n')
    paths.push(file)
  }
  return { dir, files: paths }
}

/**
 * glob/grep: a tree of `files` small source files (every 10th a `.test.ts`, every 100th holding
 * `TODO(bench)`), tracked in a fresh git repository (for `git grep` / `git ls-files`).
 */
export function searchDataSet(dir, files) {
  const rand = prng(6)
  for (let i = 0; i < files; i++) {
    const sub = join(dir, `dir${String(Math.floor(i / 1000)).padStart(3, '0')}`, `sub${String(Math.floor(i / 50) % 20).padStart(2, '0')}`)
    if (i % 50 === 0) mkdirSync(sub, { recursive: true })
    let text = codeText(rand, 600 + Math.floor(rand() * 800))
    if (i % 100 === 7) text += '// TODO(bench): remove this handler\n'
    writeFileSync(join(sub, `file${i}${i % 10 === 3 ? '.test.ts' : '.ts'}`), text)
  }
  writeFileSync(join(dir, '.gitignore'), 'node_modules/\n')
  return { dir, files, glob: '**/*.test.ts', regex: 'TODO\\(bench\\)' }
}

/**
 * One file of `lines` source lines with `changes` one-line changes spread evenly (each a unique
 * marker line, at least two lines from the next), as the text before and after and as patch
 * chunks in both formats: Codex's (`@@` + one context line either side) and unified (`@@ -l,3
 * +l,3 @@`, the same lines).
 */
function patchedFile(rand, lines, changes, tag) {
  const text = Array.from({ length: lines }, () => codeLine(rand, 3 + Math.floor(rand() * 8)))
  const after = [...text]
  const codex = []
  const unified = []
  for (let i = 0; i < changes; i++) {
    const at = Math.floor(((i + 0.5) * lines) / changes)
    const id = `${tag}_${String(i).padStart(5, '0')}`
    text[at] = after[at] = `  const ${id} = compute(${at}, 'alpha');`
    after[at] = `  const ${id} = compute(${at}, 'beta', options);`
    codex.push(`@@\n ${text[at - 1]}\n-${text[at]}\n+${after[at]}\n ${text[at + 1]}\n`)
    unified.push(`@@ -${at},3 +${at},3 @@\n ${text[at - 1]}\n-${text[at]}\n+${after[at]}\n ${text[at + 1]}\n`)
  }
  return { original: text.join('\n') + '\n', expected: after.join('\n') + '\n', codex: codex.join(''), unified: unified.join('') }
}

/**
 * apply_patch over many files: `patchFiles` files of `patchFileLines` lines under `dir` (named by
 * their path from `root`), `patchHunksPerFile` hunks each, as one unified diff (git's `a/` `b/`).
 */
export function patchDataSet(dir, root, sizes) {
  const rand = prng(7)
  mkdirSync(dir, { recursive: true })
  const files = []
  let patch = ''
  for (let i = 0; i < sizes.patchFiles; i++) {
    const f = patchedFile(rand, sizes.patchFileLines, sizes.patchHunksPerFile, `p${i}`)
    const file = join(dir, `module${String(i).padStart(3, '0')}.ts`)
    const rel = relative(root, file)
    writeFileSync(file, f.original)
    files.push({ file, original: f.original, expected: f.expected })
    patch += `diff --git a/${rel} b/${rel}\n--- a/${rel}\n+++ b/${rel}\n${f.unified}`
  }
  return { files, patch }
}

/**
 * Chunk placement at scale: one file of `lines` lines and `chunks` one-line changes, as a Codex
 * patch and as the same change in a unified diff.
 */
export function chunkDataSet(file, root, lines, chunks) {
  const f = patchedFile(prng(8), lines, chunks, 'c')
  const rel = relative(root, file)
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, f.original)
  return {
    file,
    original: f.original,
    expected: f.expected,
    codex: `*** Begin Patch\n*** Update File: ${rel}\n${f.codex}*** End Patch\n`,
    unified: `--- a/${rel}\n+++ b/${rel}\n${f.unified}`,
  }
}
