#!/usr/bin/env node
/**
 * Runs the test suites and ends with one plain line, `N passed, N failed`, that CI's log reader
 * understands (it does not read vitest's own summary).
 *
 *   1. `cargo test --locked --target <host triple>` (skipped with `--no-cargo`): the Rust unit
 *      tests, reusing the dependencies `napi build --platform` compiled for the same target.
 *   2. vitest, with its default reporter for people and its JSON reporter for the counts.
 *
 * Exits non-zero when a suite fails or cannot run, or when no test ran at all.
 */
import { spawn, execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const skipCargo = process.argv.includes('--no-cargo')

/** Runs a command with inherited stdin, echoing its output, and returns its exit code and stdout. */
function run(command, args) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, stdio: ['inherit', 'pipe', 'inherit'] })
    let stdout = ''
    child.stdout.on('data', (chunk) => {
      stdout += chunk
      process.stdout.write(chunk)
    })
    child.on('error', (error) => {
      console.error(`could not run ${command}: ${error.message}`)
      resolve({ code: 1, stdout })
    })
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), stdout }))
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
async function cargoTests() {
  const { code, stdout } = await run('cargo', ['test', '--locked', '--target', hostTriple()])
  let passed = 0
  let failed = 0
  for (const match of stdout.matchAll(/^test result: \w+\. (\d+) passed; (\d+) failed;/gm)) {
    passed += Number(match[1])
    failed += Number(match[2])
  }
  // A build failure or a crashed test binary reports no (or too few) failures: count one.
  if (code !== 0 && failed === 0) failed = 1
  return { name: 'cargo test', code, passed, failed }
}

async function vitestTests() {
  const dir = mkdtempSync(join(tmpdir(), 'afs-vitest-'))
  const report = join(dir, 'report.json')
  try {
    const vitest = join(dirname(createRequire(import.meta.url).resolve('vitest/package.json')), 'vitest.mjs')
    const { code } = await run(process.execPath, [
      vitest,
      'run',
      '--reporter=default',
      '--reporter=json',
      `--outputFile.json=${report}`,
    ])
    let passed = 0
    let failed = 0
    try {
      const json = JSON.parse(readFileSync(report, 'utf8'))
      passed = json.numPassedTests
      failed = json.numFailedTests
      // A test file that fails to load has no test results of its own.
      failed += json.testResults.filter((file) => file.status === 'failed' && file.assertionResults.length === 0).length
    } catch (error) {
      console.error(`could not read vitest's JSON report: ${error.message}`)
    }
    if (code !== 0 && failed === 0) failed = 1
    return { name: 'vitest', code, passed, failed, empty: passed + failed === 0 }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const results = []
if (!skipCargo) results.push(await cargoTests())
results.push(await vitestTests())

console.log('')
for (const { name, passed, failed } of results) console.log(`${name}: ${passed} passed, ${failed} failed`)
const passed = results.reduce((sum, r) => sum + r.passed, 0)
const failed = results.reduce((sum, r) => sum + r.failed, 0)
const noTests = results.some((r) => r.empty) || passed + failed === 0
if (noTests) console.log('no tests ran')
console.log(`${passed} passed, ${failed} failed`)
process.exitCode = failed > 0 || noTests || results.some((r) => r.code !== 0) ? 1 : 0
