#!/usr/bin/env node
/**
 * Builds the TypeScript sources twice: `dist/esm` (ES modules) and `dist/cjs` (CommonJS), each
 * with a `package.json` giving its module type, so Node and TypeScript read the `.js` and `.d.ts`
 * files of each tree in the right format (no "masquerading" types).
 *
 * `ts/native.ts` imports the addon loader as `../index.js` (relative to `ts/`); in `dist/<format>/`
 * the loader is one level further up, so that one specifier is rewritten after compiling.
 *
 * The trees are built in a staging directory and swapped in with renames, so a test or `npm pack`
 * running meanwhile never sees a half-built `dist/`.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')

const builds = [
  { dir: 'esm', tsconfig: 'tsconfig.esm.json', type: 'module' },
  { dir: 'cjs', tsconfig: 'tsconfig.cjs.json', type: 'commonjs' },
]
const dist = join(root, 'dist')
const staging = join(root, `.dist-staging-${process.pid}`)
const retired = join(root, `.dist-retired-${process.pid}`)

/** Rewrites the loader specifier in one emitted file, which must hold `min`…1 occurrences of it. */
function relocateLoader(file, min) {
  const text = readFileSync(file, 'utf8')
  const pattern = /(["'])\.\.\/index\.js\1/g
  const count = text.match(pattern)?.length ?? 0
  if (count < min || count > 1) throw new Error(`${file}: expected one '../index.js' specifier, found ${count}`)
  writeFileSync(file, text.replace(pattern, '$1../../index.js$1'))
}

try {
  for (const { dir, tsconfig, type } of builds) {
    const out = join(staging, dir)
    execFileSync(process.execPath, [tsc, '-p', join(root, tsconfig), '--outDir', out], { cwd: root, stdio: 'inherit' })
    writeFileSync(join(out, 'package.json'), `${JSON.stringify({ type }, null, 2)}\n`)
    relocateLoader(join(out, 'native.js'), 1)
    relocateLoader(join(out, 'native.d.ts'), 0)
  }
  if (existsSync(dist)) renameSync(dist, retired)
  renameSync(staging, dist)
} finally {
  rmSync(staging, { recursive: true, force: true })
  rmSync(retired, { recursive: true, force: true })
}
console.log('built dist/esm and dist/cjs')
