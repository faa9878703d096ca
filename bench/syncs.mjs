#!/usr/bin/env node
/**
 * How many syncs one tool call makes (issue 33): each case runs one call in a child `node`
 * under `strace -f`, after an unmeasured warm-up call (the data directory, its key, the journal
 * and the history exist by then), and counts the fsync-family calls between two markers.
 *
 *   node bench/syncs.mjs            every case, against the built package (dist/ + the .node)
 *   node bench/syncs.mjs --trace    also print each sync and rename of the measured call
 *
 * Linux only; needs `strace`. `NAPI_RS_NATIVE_LIBRARY_PATH=…/x.node` counts another build.
 */
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const repo = join(dirname(fileURLToPath(import.meta.url)), '..')
const SYNCS = ['fsync', 'fdatasync', 'syncfs', 'sync_file_range']
const lines = Array.from({ length: 1000 }, (_, i) => `line ${i}\n`).join('')
const CASES = {
  'write_file (new, 4 KiB)': ['write_file', { path: 'new.txt', content: 'x'.repeat(4096) }],
  'write_file (overwrite, 4 KiB)': ['write_file', { path: 'old.txt', content: 'y'.repeat(4096) }],
  'edit_file (one edit)': ['edit_file', { path: 'a.txt', edits: [{ oldString: 'line 500\n', newString: 'L\n' }] }],
  'delete_file': ['delete_file', { path: 'b.txt' }],
  'apply_patch (2 files)': ['apply_patch', { input: '*** Begin Patch\n*** Update File: a.txt\n@@\n-line 7\n+A\n line 8\n*** Update File: b.txt\n@@\n-line 7\n+B\n line 8\n*** End Patch\n' }],
}

if (process.argv[2] === '--child') {
  // The measured child: node syncs.mjs --child <dir> <case>
  const [dir, name] = process.argv.slice(3)
  const { Workspace } = await import(pathToFileURL(join(repo, 'dist/esm/index.js')).href)
  const root = join(dir, 'root')
  mkdirSync(root, { recursive: true })
  for (const f of ['a.txt', 'b.txt', 'old.txt']) writeFileSync(join(root, f), lines)
  const ws = new Workspace({ root, trash: { dataDir: join(dir, 'data') }, confirm: () => true, staleWrites: 'allow' })
  await ws.call('write_file', { path: 'warm.txt', content: 'x' })
  const mark = (m) => { try { readFileSync(`/@@@syncs-${m}`) } catch {} }
  mark('begin')
  const [tool, args] = CASES[name]
  const r = await ws.call(tool, args)
  mark('end')
  if (r.status !== 'ok') throw new Error(`${tool}: ${r.code}: ${r.output}`)
  process.exit(0)
}

const trace = process.argv.includes('--trace')
console.log('| call | fsync | fdatasync | syncfs | total |\n|---|---:|---:|---:|---:|')
for (const name of Object.keys(CASES)) {
  const dir = mkdtempSync(join(tmpdir(), 'afs-syncs-'))
  const log = join(dir, 'strace.txt')
  const run = spawnSync('strace', ['-f', '-qq', '-y', '-e', `trace=${SYNCS.join(',')},rename,renameat,renameat2,openat`, '-o', log, process.execPath, fileURLToPath(import.meta.url), '--child', dir, name], { stdio: 'inherit' })
  if (run.status !== 0) throw new Error(`${name}: the child failed (is strace installed?)`)
  const all = readFileSync(log, 'utf8').split('\n')
  const from = all.findIndex((l) => l.includes('@@@syncs-begin'))
  const to = all.findIndex((l) => l.includes('@@@syncs-end'))
  const call = all.slice(from + 1, to)
  const count = (s) => call.filter((l) => new RegExp(`\\b${s}\\(`).test(l)).length
  const [f, fd, sf] = ['fsync', 'fdatasync', 'syncfs'].map(count)
  console.log(`| ${name} | ${f} | ${fd} | ${sf} | ${f + fd + sf + count('sync_file_range')} |`)
  if (trace) for (const l of call.map((l) => l.replace(/^\d+ +/, ''))) if (/^(fsync|fdatasync|syncfs|sync_file_range|rename)/.test(l)) console.log(`    ${l.replaceAll(dir, '')}`)
  rmSync(dir, { recursive: true, force: true })
}
