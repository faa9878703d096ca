#!/usr/bin/env node
/**
 * Guards what goes into the main package's tarball (`prepack` and `prepublishOnly`).
 * Usage: `node scripts/check-package.mjs [--publish] [package dir]`.
 *
 *   prepack (`npm pack`, and `npm publish` after the check below): `dist/` is built, and the only
 *     `.node` at the package root is this machine's, so a tarball packed here runs here (../docs/platforms.md#installing-and-loading)
 *     and carries no other platform's binary.
 *   prepublishOnly (`npm publish`): no `.node` at the root at all. The published binaries live in
 *     the per-platform packages under `npm/` (napi-rs: `napi artifacts`, `napi pre-publish`), so
 *     the main package carries neither another platform's binary nor a debug build.
 */
import { existsSync, readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { hostPlatform } from './stale.mjs'

const args = process.argv.slice(2)
const publishing = process.env.npm_lifecycle_event === 'prepublishOnly' || args.includes('--publish')
/** The package to check: this one, or the directory given (for tests). */
const root = args.find((arg) => !arg.startsWith('--')) ?? join(dirname(fileURLToPath(import.meta.url)), '..')

const problems = []
const binaries = readdirSync(root).filter((name) => name.endsWith('.node'))
if (publishing) {
  for (const name of binaries) {
    problems.push(`${name} is at the package root: binaries are published in the per-platform packages (npm/<platform>/, see CONTRIBUTING.md, "Publishing"); remove it before publishing`)
  }
} else {
  const own = `agent-fs-tools.${hostPlatform()}.node`
  for (const name of binaries) {
    if (name !== own) problems.push(`${name} is not this machine's binary (${own}): it belongs in its npm/<platform>/ package; remove it from the root`)
  }
  for (const built of ['dist/esm/index.js', 'dist/cjs/index.js']) {
    if (!existsSync(join(root, built))) problems.push(`${built} is missing: run \`npm run build\` first`)
  }
}
if (problems.length > 0) {
  for (const problem of problems) console.error(`agent-fs-tools: ${problem}`)
  process.exit(1)
}
