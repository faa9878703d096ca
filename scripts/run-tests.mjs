#!/usr/bin/env node
/**
 * Runs the test suites and ends with one plain line, `N passed, N failed`, that CI's log reader
 * understands (it does not read vitest's own summary).
 *
 *   1. `cargo test --locked --target <host triple>` (skipped with `--no-cargo`): the Rust unit
 *      tests, reusing the dependencies `napi build --platform` compiled for the same target.
 *   2. The same tests again with `AGENT_FS_TOOLS_PORTABLE=1`: the portable ways macOS takes
 *      instead of Linux's fast paths (`src/paths/platform/`). Nothing is rebuilt: the switch is
 *      read at run time.
 *   2b. The library's tests of the change engine, its journal, undo and the tools once more with
 *      `AGENT_FS_TOOLS_PUT_BY_RENAMES=1`: how Windows, which cannot exchange two names, puts a
 *      changed file in place (three renames; read at run time by debug builds).
 *   3. `npm run check:targets -- aarch64-apple-darwin` (skipped with `--no-cargo` or
 *      `--no-targets`): the crate must keep compiling for macOS. One passed or failed test. It
 *      runs beside the other suites, at a low priority, its output printed when it is done.
 *   4. vitest, with its default reporter for people and its JSON reporter for the counts.
 *   5. vitest again with `AGENT_FS_TOOLS_PORTABLE=1`, for the test files that reach the file
 *      system layer (all but `NOT_THROUGH_THE_FILE_SYSTEM`), the crash harness with 20 random kills
 *      a case instead of 50 (every aimed kill as in the main pass).
 *   6. On Linux, `mounts.test.ts` three times more, the mount ids taken (by the debug build) first
 *      from `name_to_handle_at`, then only from `/proc/self/fdinfo`, instead of `statx`, then from
 *      no source (`AGENT_FS_TOOLS_MOUNT_ID_FROM`): how an older kernel or qemu-user tells a bind
 *      mount, and what happens where nothing tells it.
 *   7. vitest with `vitest.hosts.config.mts` (skipped with `--no-hosts`): the package inside real
 *      hosts (Tomo's TUI and single executable, opencode, the AI SDK with a provider, an MCP
 *      client launching `npx`), against a scripted model. Runtimes are fetched once into
 *      `~/.cache/agent-fs-tools/`.
 *   8. The runtime matrix (`scripts/test-runtimes.mjs`; skipped with `--no-runtimes`): a session
 *      of every tool and the lifecycle checks on Node 20, 22, 24, 25, 26, Bun (current and
 *      opencode's) and Deno, and part of the vitest suite on each other Node line. Runtimes are
 *      fetched from the npm registry once and cached (`scripts/lib/runtimes.mjs`).
 *
 * `--no-portable` skips 2 and 5. Exits non-zero when a suite fails or cannot run, or when no
 * test ran at all.
 */
import { spawn, execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { setPriority, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { filesFailedOutsideTests } from './lib/vitest-report.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const skipCargo = process.argv.includes('--no-cargo')
const skipTargets = skipCargo || process.argv.includes('--no-targets')
const skipPortable = process.argv.includes('--no-portable')
const skipHosts = process.argv.includes('--no-hosts')
const skipRuntimes = process.argv.includes('--no-runtimes')

/** Switches the addon and the Rust tests to the portable ways (see `src/paths/platform/`). */
const PORTABLE = { AGENT_FS_TOOLS_PORTABLE: '1' }
/**
 * Random kills per case of the crash harness (`__test__/crash.test.ts`, `crash-undo.test.ts`) in
 * the portable pass, where the aimed kills (at each phase of every commit) run in full: the main
 * pass makes 50, and three passes of 50 did not fit CI's budget.
 */
const PORTABLE_CRASH_KILLS = { CRASH_KILLS: '20' }
/** Windows' way of putting a changed file in place (no exchange of names), taken by a debug build on Linux. */
const PUT_BY_RENAMES = { AGENT_FS_TOOLS_PUT_BY_RENAMES: '1' }
/** The library's tests of what puts changed files in place: the change engine, its journal, undo and the tools that edit. */
const PUT_BY_RENAMES_TESTS = ['--lib', '--', 'journal::', 'call::', 'undo::', 'tools::', 'paths::fsops::']

/** The first source of Linux's mount ids in place of `statx` (`src/paths/platform/linux_mount_id.rs`), one run each; `none`: no source answers. */
const MOUNT_ID_FALLBACKS = ['handle', 'fdinfo', 'none']

/** The macOS target CI type-checks (Apple silicon; x86-64 differs only in widths already covered). */
const CHECKED_TARGET = 'aarch64-apple-darwin'

/**
 * Test files that never reach the Rust file system layer (packaging, bundling, typings, schemas,
 * the demo): not run a second time in the portable mode. A new test file runs in both modes.
 */
const NOT_THROUGH_THE_FILE_SYSTEM = [
  'bench-smoke',
  'demo-cli',
  'demo',
  'docs',
  'hunks',
  'json',
  'loader',
  'native-contract',
  'packaging',
  'scripted-model',
  'sea',
  'tool-args-drift',
  'tool-config',
  'typecheck',
  'workflows',
  'zod',
]

/**
 * Runs a command with inherited stdin, echoing its output, and returns its exit code and stdout;
 * `env` is added to this process's environment. `aside`: run at a low priority, its output (both
 * streams) held and printed once it is done, so that it can run beside another suite.
 */
function run(command, args, env = {}, { aside = false } = {}) {
  return new Promise((resolve) => {
    const stdio = ['inherit', 'pipe', aside ? 'pipe' : 'inherit']
    const child = spawn(command, args, { cwd: root, stdio, env: { ...process.env, ...env } })
    if (aside && child.pid !== undefined) {
      try {
        // Inherited by what it starts (cargo, rustc): it takes the cores the other suite leaves.
        setPriority(child.pid, 10)
      } catch {
        // Not allowed here: it runs at the normal priority.
      }
    }
    let stdout = ''
    let held = ''
    child.stdout.on('data', (chunk) => {
      stdout += chunk
      if (aside) held += chunk
      else process.stdout.write(chunk)
    })
    child.stderr?.on('data', (chunk) => {
      held += chunk
    })
    // 'error' may be followed by 'close': what was held is printed once.
    const done = (code) => {
      process.stdout.write(held)
      held = ''
      resolve({ code, stdout })
    }
    child.on('error', (error) => {
      console.error(`could not run ${command}: ${error.message}`)
      done(1)
    })
    child.on('close', (code, signal) => done(code ?? (signal ? 1 : 0)))
  })
}

/** The host target triple, as `napi build --platform` uses it. */
function hostTriple() {
  const info = execFileSync('rustc', ['-vV'], { encoding: 'utf8' })
  const host = /^host: (\S+)$/m.exec(info)
  if (!host) throw new Error('cannot read the host triple from `rustc -vV`')
  return host[1]
}

/** Sums cargo's `test result: … N passed; M failed; …` lines (one per test binary and doc tests). */
async function cargoTests(name = 'cargo test', env = {}, args = []) {
  const { code, stdout } = await run('cargo', ['test', '--locked', '--target', hostTriple(), ...args], env)
  let passed = 0
  let failed = 0
  for (const match of stdout.matchAll(/^test result: \w+\. (\d+) passed; (\d+) failed;/gm)) {
    passed += Number(match[1])
    failed += Number(match[2])
  }
  // A build failure or a crashed test binary reports no (or too few) failures: count one.
  if (code !== 0 && failed === 0) failed = 1
  return { name, code, passed, failed }
}

/**
 * `check:targets` for the macOS target: one test, failed when the crate does not compile. It runs
 * beside the other suites, at a low priority so that it takes only what they leave of the cores
 * (the Rust tests leave about a third of two idle, waiting for the disk); its output comes when
 * it is done.
 */
async function targetCheck() {
  const { code } = await run(process.execPath, [join(root, 'scripts', 'check-targets.mjs'), CHECKED_TARGET], {}, { aside: true })
  return { name: `check:targets ${CHECKED_TARGET}`, code, passed: code === 0 ? 1 : 0, failed: code === 0 ? 0 : 1 }
}

/** vitest over `files` (all when none), named `name`, with `env` added; `config`: another configuration file. */
async function vitestTests(name = 'vitest', files = [], env = {}, config = undefined) {
  const dir = mkdtempSync(join(tmpdir(), 'afs-vitest-'))
  const report = join(dir, 'report.json')
  try {
    const vitest = join(dirname(createRequire(import.meta.url).resolve('vitest/package.json')), 'vitest.mjs')
    const { code } = await run(
      process.execPath,
      [vitest, 'run', ...(config === undefined ? [] : ['--config', config]), '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...files],
      env,
    )
    let passed = 0
    let failed = 0
    try {
      const json = JSON.parse(readFileSync(report, 'utf8'))
      passed = json.numPassedTests
      failed = json.numFailedTests
      // A test file that fails to load, or whose hook fails, has no failed test of its own.
      failed += filesFailedOutsideTests(json)
    } catch (error) {
      console.error(`could not read vitest's JSON report: ${error.message}`)
    }
    if (code !== 0 && failed === 0) failed = 1
    return { name, code, passed, failed, empty: passed + failed === 0 }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * The runtime matrix, counted from its closing `runtimes: N passed, M failed` line; undefined
 * when it skipped itself (no pinned runtimes for this platform).
 */
async function runtimeMatrix() {
  const { code, stdout } = await run(process.execPath, [join(root, 'scripts', 'test-runtimes.mjs')])
  if (/^runtimes: skipped/m.test(stdout)) return undefined
  const counts = /^runtimes: (\d+) passed, (\d+) failed$/m.exec(stdout)
  const passed = counts ? Number(counts[1]) : 0
  let failed = counts ? Number(counts[2]) : 0
  if (code !== 0 && failed === 0) failed = 1
  return { name: 'runtimes', code, passed, failed, empty: passed + failed === 0 }
}

/** The test files that reach the file system layer, as paths vitest accepts. */
function fileSystemTestFiles() {
  return readdirSync(join(root, '__test__'))
    .filter((file) => /\.test\.tsx?$/.test(file))
    .filter((file) => !NOT_THROUGH_THE_FILE_SYSTEM.includes(file.replace(/\.test\.tsx?$/, '')))
    .map((file) => `__test__/${file}`)
}

const results = []
/** Runs a suite and notes how long it took. */
async function timed(suite) {
  const started = Date.now()
  const result = await suite()
  if (result !== undefined) results.push({ ...result, seconds: Math.round((Date.now() - started) / 1000) })
}
const targets = skipTargets ? undefined : timed(targetCheck)
if (!skipCargo) {
  await timed(() => cargoTests())
  if (!skipPortable) await timed(() => cargoTests('cargo test (portable)', PORTABLE))
  await timed(() => cargoTests('cargo test (put by renames)', PUT_BY_RENAMES, PUT_BY_RENAMES_TESTS))
}
await timed(() => vitestTests())
if (!skipPortable) await timed(() => vitestTests('vitest (portable)', fileSystemTestFiles(), { ...PORTABLE, ...PORTABLE_CRASH_KILLS }))
for (const from of process.platform === 'linux' ? MOUNT_ID_FALLBACKS : []) {
  await timed(() => vitestTests(`vitest (mount ids from ${from})`, ['__test__/mounts.test.ts'], { AGENT_FS_TOOLS_MOUNT_ID_FROM: from }))
}
if (!skipHosts) await timed(() => vitestTests('vitest (hosts)', [], {}, 'vitest.hosts.config.mts'))
if (!skipRuntimes) await timed(runtimeMatrix)
await targets

console.log('')
for (const { name, seconds } of results) console.log(`${name} took ${seconds} s`)
for (const { name, passed, failed } of results) console.log(`${name}: ${passed} passed, ${failed} failed`)
const passed = results.reduce((sum, r) => sum + r.passed, 0)
const failed = results.reduce((sum, r) => sum + r.failed, 0)
const noTests = results.some((r) => r.empty) || passed + failed === 0
if (noTests) console.log('no tests ran')
console.log(`${passed} passed, ${failed} failed`)
process.exitCode = failed > 0 || noTests || results.some((r) => r.code !== 0) ? 1 : 0
