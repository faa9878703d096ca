#!/usr/bin/env node
/**
 * `npm run demo [-- options]`: starts the playground at once, building only what is out of date
 * (see `stale.mjs`) and saying so. An addon that is newer than the sources (a release build, say)
 * is used as it is. Options go to `agent-fs-tools demo`.
 */
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { staleParts } from './stale.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'

/** Runs `command`, inheriting the terminal; exits with its code if it fails. */
function run(command, args) {
  const { status, signal } = spawnSync(command, args, { cwd: root, stdio: 'inherit' })
  if (status !== 0) process.exit(status ?? (signal ? 1 : 0))
}

const { native, js } = staleParts(root)
if (native !== undefined) {
  process.stderr.write(`Building the native addon (debug), because ${native}…\n`)
  run(npm, ['run', '--silent', 'build:native', '--', '--', '--locked'])
}
if (js !== undefined || native !== undefined) {
  // The addon build rewrites index.d.ts, which the JS build reads.
  process.stderr.write(`Building the JS (dist/), because ${js ?? 'the native addon was rebuilt'}…\n`)
  run(npm, ['run', '--silent', 'build:ts'])
}
run(process.execPath, [join(root, 'dist/esm/cli/main.js'), 'demo', ...process.argv.slice(2)])
