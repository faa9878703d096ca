/**
 * The GitHub workflows (`.github/workflows/`), which this machine cannot run: linted with
 * actionlint (a build from PyPI, pinned and cached by `scripts/lib/runtimes.mjs`), and CI's matrix
 * checked against what ../docs/platforms.md promises (the suite on Linux x64 and arm64 and macOS arm64 and
 * x64, on every push and pull request).
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runtimeAvailable, runtimePath } from '../scripts/lib/runtimes.mjs'
import { scaled } from './helpers/time.js'

const root = resolve(__dirname, '..')
const workflows = join(root, '.github', 'workflows')

describe.skipIf(!runtimeAvailable('actionlint'))('GitHub workflows', () => {
  let actionlint: string
  let scratch: string

  beforeAll(async () => {
    actionlint = await runtimePath('actionlint')
    scratch = mkdtempSync(join(tmpdir(), 'afs-actionlint-'))
  }, scaled(120_000))

  afterAll(() => {
    rmSync(scratch, { recursive: true, force: true })
  })

  /** actionlint over `files`, run in `cwd`. */
  function lint(files: string[], cwd = root) {
    return spawnSync(actionlint, ['-no-color', ...files], { cwd, encoding: 'utf8' })
  }

  it('pass actionlint', () => {
    const files = readdirSync(workflows).map((name) => join('.github', 'workflows', name))
    expect(files).toContain(join('.github', 'workflows', 'ci.yml'))
    const result = lint(files)
    expect(result.stdout + result.stderr).toBe('')
    expect(result.status).toBe(0)
  })

  it('the linter finds what is wrong (an unknown runner, a bad expression)', () => {
    const broken = join(scratch, 'broken.yml')
    writeFileSync(
      broken,
      ['on: push', 'jobs:', '  test:', '    runs-on: macos-9', '    steps:', '      - run: echo ${{ matrix.nothing.here }}', ''].join('\n'),
    )
    const result = lint([broken], scratch)
    expect(result.status).not.toBe(0)
    expect(result.stdout).toContain('label "macos-9" is unknown')
  })

  it('CI runs npm test on Linux x64 and arm64, macOS arm64 and x64 and Windows x64, on every push and pull request', () => {
    const ci = readFileSync(join(workflows, 'ci.yml'), 'utf8')
    expect(ci).toMatch(/^on:\n {2}push:\n {2}pull_request:\n/m)
    expect(ci).toContain('os: [ubuntu-latest, ubuntu-24.04-arm, macos-latest, macos-15-intel, windows-latest]')
    expect(ci).toMatch(/^ {6}- run: npm test\b/m)
    // Only Windows may fail without failing the workflow (its first runs, docs/windows.md).
    expect([...ci.matchAll(/continue-on-error: (.*)$/gm)].map((m) => m[1])).toEqual(["${{ matrix.os == 'windows-latest' }}"])
    // Checked out byte for byte on Windows too (the fixtures' line endings are what they test).
    expect(ci.indexOf('git config --global core.autocrlf false')).toBeLessThan(ci.indexOf('actions/checkout'))
  })
})
