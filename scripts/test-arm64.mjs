#!/usr/bin/env node
/**
 * `npm run test:arm64`: Linux arm64 (glibc) run for real on this x64 machine (../docs/platforms.md).
 *
 *   1. Debian's cross toolchain (`gcc-aarch64-linux-gnu`, `libc6-dev-arm64-cross`), std built from
 *      source (`rustc-web`, `cargo-web`, `rust-web-src`, `-Zbuild-std`, as `check:targets` does),
 *      `qemu-user-static`, and arm64's C runtime as Debian multiarch packages (`libc6:arm64`,
 *      `libstdc++6:arm64`, `libatomic1:arm64`: the arm64 loader at `/lib/ld-linux-aarch64.so.1`,
 *      so arm64 executables run unmodified): installed with apt-get when missing (as root).
 *   2. The addon built for `aarch64-unknown-linux-gnu` (debug) into `target/cross/`: a real
 *      cross-linked `.node`. The first build takes ~30 minutes on two loaded cores; later ones
 *      are incremental.
 *   3. A copy of the checkout in `target/arm64/checkout/`, a git repository of its own (its files
 *      as they are now, `dist/`, `node_modules` hard-linked with the arm64 twins of its native
 *      packages: esbuild, vitest's bundler) with the arm64 addon as
 *      `agent-fs-tools.linux-arm64-gnu.node`, so the package's own loader picks it; the checkout
 *      itself never holds a foreign binary.
 *   4. Node (the pinned 20 line for arm64, from the npm registry, cached), run under qemu-user
 *      through binfmt_misc (registered for aarch64, so that the processes it starts, vitest's
 *      workers, run too), never with `qemu -L`/`QEMU_LD_PREFIX` (they redirect
 *      `openat(AT_FDCWD, "/")` into the sysroot, so the sandbox's component walk would see another
 *      tree). Unmodified: a binary patched with `patchelf` breaks once `postject` writes a single
 *      executable into it. A copy in `target/arm64/` runs it, since tests start `process.execPath`
 *      as `nobody` and the download cache is under the (private) home directory.
 *   5. The session and lifecycle scripts of the runtime matrix, then the whole vitest suite (with
 *      longer timeouts: emulation is 5–10× slower; the crash harness with 10 random kills a case,
 *      `CRASH_KILLS` to change it), run by that Node.
 *
 *   node scripts/test-arm64.mjs [--no-vitest] [--files=a,b]   (`npm run test:arm64` builds the JS first)
 *
 * Ends with `arm64: N passed, M failed`. Not part of `npm test` (over two hours on two cores:
 * the build ~25 min, the emulated suite the rest).
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { foreignCheckout } from './lib/checkout.mjs'
import { pinnedVersion, runtimePath } from './lib/runtimes.mjs'
import { hostProject, runProcess, runScripts, vitest } from './test-runtimes.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const TARGET = 'aarch64-unknown-linux-gnu'
const PACKAGES = ['gcc-aarch64-linux-gnu', 'libc6-dev-arm64-cross', 'qemu-user-static', 'rustc-web', 'cargo-web', 'rust-web-src']
/** What an arm64 Node (20 and 26, the single-executable tests') loads, from Debian's arm64 archive. */
const ARM64_PACKAGES = ['libc6:arm64', 'libstdc++6:arm64', 'libatomic1:arm64']
const NODE_LINE = '20'
const withVitest = !process.argv.includes('--no-vitest')
const files = process.argv.find((a) => a.startsWith('--files='))?.slice('--files='.length).split(',') ?? []
/** Under emulation everything is slower: vitest's per-test limits, and how long a script may run. */
const EMULATED_TEST_TIMEOUT_MS = 240_000
/** …and the limits tests set themselves (`__test__/helpers/time.ts`). */
const EMULATION_SLOWDOWN = 8
const EMULATED_SCRIPT_TIMEOUT_MS = 900_000
/**
 * Random kills per case of the crash harness under emulation (every aimed kill, at each phase of
 * every commit, runs in full): each is an emulated Node starting with the addon, and 50 a case
 * would take hours. `CRASH_KILLS` set in the environment wins.
 */
const EMULATED_CRASH_KILLS = process.env.CRASH_KILLS ?? '10'

/** Runs a command with inherited output; throws when it fails. */
function sh(command, args, options = {}) {
  const { status, signal } = spawnSync(command, args, { stdio: 'inherit', ...options })
  if (status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${signal ?? `exit ${status}`})`)
}

/** The Debian packages not installed yet. */
function missingPackages() {
  return [...PACKAGES, ...ARM64_PACKAGES].filter((name) => {
    const { stdout } = spawnSync('dpkg-query', ['-W', '-f=${Status}', name], { encoding: 'utf8' })
    return !stdout?.includes('install ok installed')
  })
}

function ensurePackages() {
  const missing = missingPackages()
  if (missing.length === 0) return
  if (process.getuid?.() !== 0) throw new Error(`test:arm64 needs the Debian packages ${missing.join(', ')}: run as root, or \`sudo apt-get install ${missing.join(' ')}\` first.`)
  console.log(`installing ${missing.join(', ')} with apt-get …`)
  const foreign = execFileSync('dpkg', ['--print-foreign-architectures'], { encoding: 'utf8' }).split('\n')
  if (!foreign.includes('arm64')) sh('dpkg', ['--add-architecture', 'arm64'])
  sh('apt-get', ['update', '-q'])
  sh('apt-get', ['install', '-y', '-q', ...missing], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } })
}

/** Builds the addon for arm64; returns the path of the `.so`. */
function buildAddon() {
  const targetDir = join(root, 'target', 'cross')
  console.log(`building the addon for ${TARGET} (debug) in target/cross …`)
  sh('/usr/bin/cargo', ['build', '-Zbuild-std=std,panic_abort', '--target', TARGET, '--lib', '--locked'], {
    cwd: root,
    env: {
      ...process.env,
      RUSTC: '/usr/bin/rustc',
      RUSTC_BOOTSTRAP: '1',
      CARGO_TARGET_DIR: targetDir,
      CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER: 'aarch64-linux-gnu-gcc',
    },
  })
  return join(targetDir, TARGET, 'debug', 'libagent_fs_tools.so')
}

/**
 * The pinned arm64 Node as a copy in `target/arm64/`, not in the download cache under the home
 * directory (often mode 0700): tests run `process.execPath` as `nobody`. Returns its path.
 */
async function arm64Node() {
  const node = await runtimePath('node', NODE_LINE, { arch: 'arm64' })
  const copy = join(root, 'target', 'arm64', `node-v${pinnedVersion('node', NODE_LINE)}`, 'bin', 'node')
  if (!existsSync(copy)) {
    const partial = `${copy}.${process.pid}.partial`
    mkdirSync(dirname(copy), { recursive: true })
    copyFileSync(node, partial)
    chmodSync(partial, 0o755)
    renameSync(partial, copy)
  }
  return copy
}

/** Registers qemu for aarch64 executables with binfmt_misc (the kernel runs them through qemu). */
function ensureBinfmt() {
  const dir = '/proc/sys/fs/binfmt_misc'
  if (existsSync(join(dir, 'qemu-aarch64'))) return
  if (process.getuid?.() !== 0) throw new Error('test:arm64 needs qemu registered for aarch64 with binfmt_misc: run as root (or `sudo update-binfmts --enable qemu-aarch64`).')
  if (!existsSync(join(dir, 'register'))) sh('mount', ['-t', 'binfmt_misc', 'binfmt_misc', dir])
  // Debian's own registration line (flags OPF: the interpreter is opened now, so it works in any namespace).
  const line = readFileSync('/usr/lib/binfmt.d/qemu-aarch64.conf', 'utf8').split('\n').find((l) => l.startsWith(':qemu-aarch64:'))
  if (!line) throw new Error('/usr/lib/binfmt.d/qemu-aarch64.conf has no qemu-aarch64 line (is qemu-user-static installed?)')
  writeFileSync(join(dir, 'register'), line)
}

const started = Date.now()
let passed = 0
let failed = 0
const lines = []
try {
  ensurePackages()
  const buildStarted = Date.now()
  const addon = buildAddon()
  lines.push(`build: ${Math.round((Date.now() - buildStarted) / 1000)} s`)
  const node = await arm64Node()
  ensureBinfmt()
  const checkout = await foreignCheckout({
    dir: join(root, 'target', 'arm64', 'checkout'),
    addon,
    platform: 'linux-arm64-gnu',
    twinOf: (name) => name.replace('x64', 'arm64'),
  })

  const probe = await runProcess([node, '-p', 'process.arch + " " + process.version'], { cwd: checkout, timeoutMs: EMULATED_SCRIPT_TIMEOUT_MS })
  if (probe.stdout.trim() !== `arm64 v${pinnedVersion('node', NODE_LINE)}`) throw new Error(`the arm64 Node does not run: ${probe.stdout}${probe.stderr}`)
  console.log(`running on ${probe.stdout.trim()} under qemu-user`)

  const host = mkdtempSync(join(tmpdir(), 'afs-arm64-host-'))
  try {
    hostProject(host, checkout)
    const scriptsStarted = Date.now()
    const scripts = await runScripts([node], { host, label: 'arm64', timeoutMs: EMULATED_SCRIPT_TIMEOUT_MS })
    passed += scripts.passed
    failed += scripts.failed
    lines.push(`session and lifecycle: ${scripts.passed} of ${scripts.total} passed (${Math.round((Date.now() - scriptsStarted) / 1000)} s)`)
  } finally {
    rmSync(host, { recursive: true, force: true })
  }

  if (withVitest) {
    const vitestStarted = Date.now()
    const counts = await vitest(node, files, 'arm64', {
      cwd: checkout,
      env: {
        AGENT_FS_TOOLS_TEST_TIME_SCALE: String(EMULATION_SLOWDOWN),
        CRASH_KILLS: EMULATED_CRASH_KILLS,
        AFS_REPLAY_REPO: root,
        // What the tests start by name (`npm pack` and its prepack script) runs on the arm64 Node too.
        PATH: `${dirname(node)}:${process.env.PATH}`,
      },
      extraArgs: [`--testTimeout=${EMULATED_TEST_TIMEOUT_MS}`, `--hookTimeout=${EMULATED_TEST_TIMEOUT_MS}`],
      timeoutMs: 4 * 60 * 60_000,
      reporter: 'default', // a line per test file as it ends: progress over a long run
    })
    passed += counts.passed
    failed += counts.failed
    lines.push(`vitest${files.length > 0 ? ` (${files.join(', ')})` : ''}: ${counts.passed} passed, ${counts.failed} failed (${Math.round((Date.now() - vitestStarted) / 1000)} s)`)
  }
} catch (error) {
  console.error(`test:arm64: ${error.message}`)
  failed += 1
}
console.log('')
for (const line of lines) console.log(`arm64 ${line}`)
console.log(`arm64 took ${Math.round((Date.now() - started) / 1000)} s`)
console.log(`arm64: ${passed} passed, ${failed} failed`)
process.exitCode = failed > 0 || passed === 0 ? 1 : 0
