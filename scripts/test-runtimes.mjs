#!/usr/bin/env node
/**
 * The runtime matrix (../docs/platforms.md): the built package run by every Node line, Bun (the current one
 * and the one opencode embeds) and Deno, each fetched from the npm registry at the version
 * `scripts/lib/runtimes.mjs` pins and cached there.
 *
 * On every runtime, from a host project whose `node_modules/agent-fs-tools` holds the package as
 * npm installs it: `__test__/runtimes/session.mjs` (a session of every tool) and each mode of
 * `__test__/runtimes/lifecycle.mjs` (how the process starts and ends with the addon: pending calls,
 * exits inside a prompt and while busy, ending by itself). Each process is one test: it passes when
 * it exits by itself with status 0, prints its closing line and nothing on stderr.
 *
 * On Node lines other than the one running the main suite, also part of the vitest suite
 * ({@link VITEST_ON_EVERY_NODE}) run by that Node; with `--full`, the whole vitest suite on each.
 *
 *   node scripts/test-runtimes.mjs [--full] [--only=node26,deno,…]
 *
 * The default is the stage `npm test` runs; `npm run test:runtimes` is `--full`. The last line is
 * `runtimes: N passed, M failed`. Outside Linux x64 (where the registry has every runtime) it
 * says so and runs nothing.
 */
import { spawn } from 'node:child_process'
import { chmodSync, copyFileSync, cpSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { pinnedVersion, runtimeAvailable, runtimePath } from './lib/runtimes.mjs'
import { filesFailedOutsideTests } from './lib/vitest-report.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const full = process.argv.includes('--full')
const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length).split(',')

/**
 * The vitest files every other Node line runs in the default stage: the JS layer over the addon
 * (calls, prompts and their locks, aborts, parallel calls, loading, the typed surface) and the
 * heaviest users of it (patches, undo, the sandbox), chosen to fit CI's budget.
 */
export const VITEST_ON_EVERY_NODE = [
  'workspace-js',
  'locks-prompts',
  'locks-nesting',
  'concurrency',
  'permissions',
  'load',
  'loader',
  'typed-calls',
  'apply-patch',
  'undo',
  'sandbox-security',
]

/** The modes of `lifecycle.mjs`, with the line each prints last. */
const LIFECYCLE = [
  { mode: 'pending', last: 'pending: done' },
  { mode: 'top-level-await', last: 'top-level-await: done' },
  { mode: 'exit-in-prompt', last: 'exit-in-prompt: exiting' },
  { mode: 'exit-while-busy', last: 'exit-while-busy: exiting' },
  { mode: 'ends-by-itself', last: 'ends-by-itself: done' },
]

/** How long a process may take before it counts as hung (it should end by itself much sooner). */
const HANG_MS = 180_000

/**
 * The runtimes of the matrix. `command` resolves to `[executable, ...arguments before the
 * script]`; `node` marks a Node line (which also runs vitest).
 */
function cells() {
  const node = (major) => ({
    id: `node${major}`,
    label: `Node ${pinnedVersion('node', major)}`,
    node: true,
    command: async () => [await runtimePath('node', major)],
  })
  return [
    { id: 'node20', label: `Node ${process.versions.node} (this one)`, command: async () => [process.execPath] },
    node('22'),
    node('24'),
    node('25'),
    node('26'),
    { id: 'bun', label: `Bun ${pinnedVersion('bun')}`, command: async () => [await runtimePath('bun')] },
    {
      id: 'bun-opencode',
      label: `Bun 1.3 (embedded in opencode ${pinnedVersion('opencode')})`,
      env: { BUN_BE_BUN: '1' },
      command: async () => [await runtimePath('opencode')],
    },
    {
      id: 'deno',
      label: `Deno ${pinnedVersion('deno')}`,
      // What docs/platforms.md tells Deno users to grant.
      command: async () => [await runtimePath('deno'), 'run', '--allow-ffi', '--allow-read', '--allow-write', '--allow-env'],
    },
  ].filter((cell) => !only || only.includes(cell.id))
}

/**
 * A host project in `dir` with the package of the checkout `from` installed as npm would (its
 * `files`, copied; the addon hard-linked when it can be) and the scripts beside.
 */
export function hostProject(dir, from = root) {
  const pkg = join(dir, 'node_modules', 'agent-fs-tools')
  mkdirSync(pkg, { recursive: true })
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'runtime-host', private: true, type: 'module' }))
  for (const file of ['package.json', 'index.js', 'index.d.ts']) copyFileSync(join(from, file), join(pkg, file))
  cpSync(join(from, 'dist'), join(pkg, 'dist'), { recursive: true })
  const addons = readdirSync(from).filter((f) => /^agent-fs-tools\.[\w-]+\.node$/.test(f))
  if (addons.length === 0) throw new Error(`no built addon in ${from}: run \`npm run build\` first`)
  for (const addon of addons) {
    try {
      linkSync(join(from, addon), join(pkg, addon))
    } catch {
      copyFileSync(join(from, addon), join(pkg, addon))
    }
  }
  for (const script of ['session.mjs', 'lifecycle.mjs']) copyFileSync(join(from, '__test__', 'runtimes', script), join(dir, script))
}

/**
 * Runs `command` in `cwd` with `env` added and a private TMPDIR; resolves to its status, signal,
 * output and whether it had to be killed.
 */
export function runProcess([executable, ...args], { cwd, env = {}, echo = false, timeoutMs = HANG_MS }) {
  const scratch = mkdtempSync(join(tmpdir(), 'afs-runtime-tmp-'))
  // As /tmp is: tests run some calls as `nobody` in directories made below it.
  chmodSync(scratch, 0o1777)
  return new Promise((resolve) => {
    const child = spawn(executable, args, {
      cwd,
      env: { ...process.env, TMPDIR: scratch, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => {
      stdout += chunk
      if (echo) process.stdout.write(chunk)
    })
    child.stderr.on('data', (chunk) => {
      stderr += chunk
      if (echo) process.stderr.write(chunk)
    })
    let hung = false
    const timer = setTimeout(() => {
      hung = true
      child.kill('SIGKILL')
    }, timeoutMs)
    const done = (status, signal, error) => {
      clearTimeout(timer)
      rmSync(scratch, { recursive: true, force: true })
      resolve({ status, signal, stdout, stderr: error ? `${stderr}${error.message}` : stderr, hung })
    }
    child.on('error', (error) => done(null, null, error))
    child.on('close', (status, signal) => done(status, signal))
  })
}

/** Why a script run failed, or undefined when it passed. */
function scriptFailure({ status, signal, stdout, stderr, hung }, last, timeoutMs) {
  if (hung) return `did not end by itself within ${timeoutMs / 1000} s (something keeps its event loop alive)`
  if (signal) return `killed by ${signal}`
  if (status !== 0) return `exit status ${status}`
  if (stderr.trim() !== '') return `wrote to stderr`
  const lines = stdout.trim().split('\n')
  if (!last(lines[lines.length - 1] ?? '')) return `its last line is not the expected one`
  return undefined
}

/**
 * vitest over `files` (all when empty) in the checkout `cwd`, run by `node` with `extraArgs` and
 * `reporter` for people; resolves to its counts. `run(args)`, when given, runs the command line
 * instead of `runProcess` (Wine's `node.exe`, whose output must go to files) and resolves to
 * `{ status }`; `report` is the JSON report's path as that Node names it.
 */
export async function vitest(node, files, label, { cwd = root, env = {}, extraArgs = [], timeoutMs = 60 * 60_000, reporter = 'dot', run, reportName = (path) => path } = {}) {
  const report = join(mkdtempSync(join(tmpdir(), 'afs-runtime-vitest-')), 'report.json')
  // The checkout's own vitest (and so its own native packages), relative to it: Wine's Node names paths its own way.
  const vitestBin = relative(cwd, join(dirname(createRequire(join(cwd, 'package.json')).resolve('vitest/package.json')), 'vitest.mjs'))
  const args = [vitestBin, 'run', `--reporter=${reporter}`, '--reporter=json', `--outputFile.json=${reportName(report)}`, ...extraArgs, ...files.map((f) => `__test__/${f}.test.ts`)]
  const result = run ? await run(args) : await runProcess([node, ...args], { cwd, env, echo: true, timeoutMs })
  try {
    const json = JSON.parse(readFileSync(report, 'utf8'))
    // A file that failed with no failed test (it did not load, or a hook of it failed, so its
    // tests were skipped) counts once; so does a file that never ran (its worker did not start).
    const suiteFailures = filesFailedOutsideTests(json)
    const expected = files.length > 0 ? files.length : readdirSync(join(cwd, '__test__')).filter((name) => /\.test\.tsx?$/.test(name)).length
    const notRun = Math.max(0, expected - json.testResults.length)
    if (suiteFailures + notRun > 0) console.log(`${label}: ${suiteFailures} test files failed outside their tests, ${notRun} never ran`)
    const failed = json.numFailedTests + suiteFailures + notRun
    return { passed: json.numPassedTests, failed: failed === 0 && result.status !== 0 ? 1 : failed, report: json }
  } catch (error) {
    console.log(`${label}: could not read vitest's report (${error.message}); exit status ${result.status}`)
    return { passed: 0, failed: 1 }
  } finally {
    rmSync(dirname(report), { recursive: true, force: true })
  }
}

/**
 * Runs the session and every lifecycle mode with `command` (`[executable, ...arguments before the
 * script]`) in the host project `host`, two at a time; resolves to how many passed and failed,
 * printing each failure with its output.
 */
export async function runScripts(command, { host, env, label, timeoutMs = HANG_MS }) {
  const scripts = [
    { name: 'session', args: ['session.mjs'], last: (line) => /^session on .*: \d+ passed, 0 failed$/.test(line) },
    ...LIFECYCLE.map(({ mode, last }) => ({ name: mode, args: ['lifecycle.mjs', mode], last: (line) => line === last })),
  ]
  const results = await Promise.all(
    [0, 1].map(async (lane) => {
      const out = []
      for (let i = lane; i < scripts.length; i += 2) {
        const script = scripts[i]
        out.push({ script, result: await runProcess([...command, ...script.args], { cwd: host, env, timeoutMs }) })
      }
      return out
    }),
  )
  let passed = 0
  let failed = 0
  for (const { script, result } of results.flat()) {
    const why = scriptFailure(result, script.last, timeoutMs)
    if (why === undefined) {
      passed += 1
    } else {
      failed += 1
      console.log(`FAILED ${label} ${script.name}: ${why}\n--- stdout\n${result.stdout}--- stderr\n${result.stderr}---`)
    }
  }
  return { passed, failed, total: scripts.length }
}

/** Runs the matrix; resolves to `{ passed, failed }` (one test per process, vitest's own counts). */
export async function runRuntimeMatrix() {
  let passed = 0
  let failed = 0
  const lines = []
  const host = mkdtempSync(join(tmpdir(), 'afs-runtime-host-'))
  try {
    hostProject(host)
    for (const cell of cells()) {
      const started = Date.now()
      let command
      try {
        command = await cell.command()
      } catch (error) {
        console.log(`${cell.label}: could not get it: ${error.message}`)
        failed += 1
        lines.push(`${cell.label}: could not get it`)
        continue
      }
      const scripts = await runScripts(command, { host, env: cell.env, label: cell.label })
      let cellPassed = scripts.passed
      let cellFailed = scripts.failed
      let vitestNote = ''
      if (cell.node) {
        const files = full ? [] : VITEST_ON_EVERY_NODE
        console.log(`\n${cell.label}: vitest (${full ? 'the whole suite' : files.join(', ')})`)
        const counts = await vitest(command[0], files, cell.label)
        cellPassed += counts.passed
        cellFailed += counts.failed
        vitestNote = `, vitest ${counts.passed} passed, ${counts.failed} failed`
      }
      passed += cellPassed
      failed += cellFailed
      const seconds = Math.round((Date.now() - started) / 1000)
      lines.push(`${cell.label}: session and lifecycle ${scripts.passed} of ${scripts.total} passed${vitestNote} (${seconds} s)`)
    }
  } finally {
    rmSync(host, { recursive: true, force: true })
  }
  console.log('')
  for (const line of lines) console.log(line)
  return { passed, failed }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = Date.now()
  if (!['node', 'bun', 'deno', 'opencode'].every((name) => runtimeAvailable(name))) {
    console.log(`runtimes: skipped on ${process.platform}-${process.arch} (the pinned runtimes are Linux x64 packages)`)
  } else {
    const { passed, failed } = await runRuntimeMatrix()
    console.log(`runtimes took ${Math.round((Date.now() - started) / 1000)} s`)
    console.log(`runtimes: ${passed} passed, ${failed} failed`)
    process.exitCode = failed > 0 || passed === 0 ? 1 : 0
  }
}
