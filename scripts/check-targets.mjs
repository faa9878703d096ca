#!/usr/bin/env node
/**
 * `npm run check:targets [-- <triple>...]`: type-checks the crate (lib and tests, nothing linked)
 * for the targets this machine cannot build for: by default `aarch64-apple-darwin`,
 * `x86_64-apple-darwin`, `aarch64-unknown-linux-gnu` and `x86_64-unknown-linux-musl`.
 *
 * The rustup toolchain here has only the host's std. Debian's `rustc-web`, `cargo-web` and
 * `rust-web-src` build std from source for any target (`-Zbuild-std`, enabled on a stable
 * compiler by `RUSTC_BOOTSTRAP=1`); they are installed with `apt-get` when missing (as root, as in
 * CI). The check uses its own target directory, `target/check-targets`, so it never disturbs the
 * napi build. The first run per target builds std (minutes); later runs are incremental.
 *
 * For a `*-windows-gnu` target `napi-build` wants a file named `libnode.dll` on `LIBNODE_PATH`
 * (it links nothing with it: napi's `dyn-symbols` finds the N-API functions in `node.exe` at load
 * time), so an empty one is made in the target directory and named there unless the caller set
 * `LIBNODE_PATH` already.
 *
 * Prints each target's errors and this crate's warnings (each once, though the lib and its test
 * build both report it) and a count per target; exits non-zero when any target has one.
 */
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const DEFAULT_TARGETS = ['aarch64-apple-darwin', 'x86_64-apple-darwin', 'aarch64-unknown-linux-gnu', 'x86_64-unknown-linux-musl']
const PACKAGES = ['rustc-web', 'cargo-web', 'rust-web-src']
const RUSTC = '/usr/bin/rustc'
const CARGO = '/usr/bin/cargo'
const targetDir = join(root, 'target', 'check-targets')

/** The Debian packages not installed yet. */
function missingPackages() {
  return PACKAGES.filter((name) => {
    try {
      return !execFileSync('dpkg-query', ['-W', '-f=${Status}', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).includes('install ok installed')
    } catch {
      return true
    }
  })
}

function ensureToolchain() {
  const missing = missingPackages()
  if (missing.length === 0) return
  if (process.getuid?.() !== 0) {
    throw new Error(`check:targets needs the Debian packages ${missing.join(', ')}: run as root, or \`sudo apt-get install ${missing.join(' ')}\` first.`)
  }
  console.log(`installing ${missing.join(', ')} with apt-get …`)
  execFileSync('apt-get', ['update', '-q'], { stdio: 'inherit' })
  execFileSync('apt-get', ['install', '-y', '-q', ...missing], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } })
}

/**
 * The directory of an empty `libnode.dll`, made once in the target directory: what `napi-build`
 * needs on `LIBNODE_PATH` for a `*-windows-gnu` target (the name only; nothing is linked from it).
 */
function emptyLibnodeDir() {
  const dir = join(targetDir, 'libnode')
  if (!existsSync(join(dir, 'libnode.dll'))) {
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, 'libnode.dll'), '')
  }
  return dir
}

/** Runs `cargo check` for one target; resolves to its distinct problems: `{ level, rendered }`. */
function check(target) {
  const args = ['check', '-Zbuild-std=std,panic_abort', '--target', target, '--lib', '--tests', '--locked', '--message-format=json']
  const env = { ...process.env, RUSTC, RUSTC_BOOTSTRAP: '1', CARGO_TARGET_DIR: targetDir }
  if (target.endsWith('-windows-gnu') && !env.LIBNODE_PATH) env.LIBNODE_PATH = emptyLibnodeDir()
  return new Promise((resolve, reject) => {
    const child = spawn(CARGO, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] })
    const problems = new Map()
    let buffered = ''
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (chunk) => {
      buffered += chunk
      const lines = buffered.split('\n')
      buffered = lines.pop()
      for (const line of lines) {
        if (!line.startsWith('{')) continue
        const event = JSON.parse(line)
        const message = event.reason === 'compiler-message' ? event.message : undefined
        if (!message || /^aborting due to|generated \d+ warning/.test(message.message)) continue
        const span = message.spans?.find((s) => s.is_primary)
        // Our own warnings count too (as `clippy -D warnings` does on the host): code only one
        // platform compiles must not rot unseen.
        const ours = span?.file_name.startsWith('src/') || span?.file_name.startsWith('tests/')
        if (message.level !== 'error' && !(message.level === 'warning' && ours)) continue
        const at = `${span?.file_name}:${span?.line_start}:${span?.column_start}: ${message.message}`
        problems.set(at, { level: message.level, rendered: message.rendered })
      }
    })
    child.on('error', reject)
    child.on('close', (code) => {
      if (code !== 0 && problems.size === 0) reject(new Error(`cargo check --target ${target} failed (exit ${code}) without a compiler error`))
      else resolve([...problems.values()])
    })
  })
}

const targets = process.argv.slice(2).filter((arg) => !arg.startsWith('-'))
ensureToolchain()
console.log(execFileSync(RUSTC, ['--version'], { encoding: 'utf8' }).trim())
/** `3 errors`, `1 warning`, or nothing for none. */
const count = (n, what) => (n === 0 ? [] : [`${n} ${what}${n === 1 ? '' : 's'}`])

const counts = []
let failed = false
for (const target of targets.length > 0 ? targets : DEFAULT_TARGETS) {
  const started = Date.now()
  console.log(`\n── ${target} ──`)
  const problems = await check(target)
  for (const { rendered } of problems) process.stdout.write(rendered)
  const errors = problems.filter((p) => p.level === 'error').length
  const found = [...count(errors, 'error'), ...count(problems.length - errors, 'warning')]
  failed ||= found.length > 0
  counts.push(`${target}: ${found.length === 0 ? 'ok' : found.join(', ')} (${((Date.now() - started) / 1000).toFixed(0)} s)`)
}
console.log(`\ncheck:targets\n${counts.map((line) => `  ${line}`).join('\n')}`)
process.exitCode = failed ? 1 : 0
