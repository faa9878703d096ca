/**
 * Tomo (github.com/LeeCheneler/tomo, MIT), the first host, from the source snapshot at
 * `../shared/hosts/` (relative to the repository root): its dependencies installed once and
 * cached, our package installed into a fresh copy from the packed tarball, the integration of
 * `examples/tomo/` applied as a Tomo maintainer would (the files copied to `src/agent-fs-tools/`,
 * `app.tsx.patch` applied), then built with its own `tsup` and its own configuration, and, for the
 * single executable it ships as, `node --build-sea` with the addon as a SEA asset.
 */
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { delimiter, dirname, join, resolve } from 'node:path'
import { cachedTree } from './runtimes.js'

const repo = resolve(__dirname, '..', '..')

/** The snapshot's commit. */
export const TOMO_COMMIT = '5d5693c'
/** The Tomo source snapshot. */
export const TOMO_SNAPSHOT = join(repo, '..', 'shared', 'hosts', `tomo-${TOMO_COMMIT}.tar.gz`)
/** Tomo needs Node 22 or later (its `.nvmrc` says 25). */
export const TOMO_NODE = '22.23.3'
/** Tomo builds its single executable with `node --build-sea` (Node 25.5 and later). */
export const SEA_NODE = '26.10.0'
/** The files of `examples/tomo/` that go into Tomo's `src/agent-fs-tools/`. */
export const INTEGRATION_FILES = ['register-tools.ts', 'undo-command.ts', 'sea-setup.ts', 'tomo-types.ts']

/** Why the Tomo tests cannot run here, or `undefined`. */
export function tomoMissing(): string | undefined {
  return existsSync(TOMO_SNAPSHOT)
    ? undefined
    : `the Tomo source snapshot is not at ${TOMO_SNAPSHOT} (get it with: git clone https://github.com/LeeCheneler/tomo && git -C tomo archive --format=tar.gz -o tomo-${TOMO_COMMIT}.tar.gz ${TOMO_COMMIT})`
}

/** `PATH` with `node`'s directory first, so `#!/usr/bin/env node` scripts run on that Node. */
export function pathWith(node: string): string {
  return [dirname(node), process.env.PATH ?? ''].join(delimiter)
}

/** Tomo's source with its dependencies installed (`npm install --ignore-scripts`), cached by the snapshot's hash. */
function installedTomo(node: string): string {
  const hash = createHash('sha256').update(readFileSync(TOMO_SNAPSHOT)).digest('hex').slice(0, 16)
  return cachedTree(`hosts/tomo-${TOMO_COMMIT}-${hash}`, (dir) => {
    execFileSync('tar', ['xzf', TOMO_SNAPSHOT, '-C', dir])
    execFileSync('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, PATH: pathWith(node) },
    })
  })
}

/**
 * A Tomo checkout in `dir` (made here) with the packed package installed and our integration
 * applied; returns its path. `node_modules` is a hard-linked copy of the cached install, which
 * nothing here writes to.
 */
export function prepareTomo(dir: string, tarball: string, node: string): string {
  const installed = installedTomo(node)
  const tomo = join(dir, 'tomo')
  mkdirSync(tomo, { recursive: true })
  execFileSync('tar', ['xzf', TOMO_SNAPSHOT, '-C', tomo])
  execFileSync('cp', ['-al', join(installed, 'node_modules'), join(tomo, 'node_modules')])
  // `npm install agent-fs-tools`: the package has no dependencies, so installing it is unpacking it.
  const self = join(tomo, 'node_modules', 'agent-fs-tools')
  mkdirSync(self)
  execFileSync('tar', ['xzf', tarball, '--strip-components=1', '-C', self])
  const integration = join(tomo, 'src', 'agent-fs-tools')
  mkdirSync(integration)
  for (const file of INTEGRATION_FILES) copyFileSync(join(repo, 'examples', 'tomo', file), join(integration, file))
  execFileSync('git', ['apply', join(repo, 'examples', 'tomo', 'app.tsx.patch')], { cwd: tomo })
  return tomo
}

/** Runs Tomo's own build (`tsup`, its configuration unchanged) on `node`: `dist/tomo.js`. */
export function buildTomo(tomo: string, node: string): string {
  execFileSync(node, [join(tomo, 'node_modules', 'tsup', 'dist', 'cli-default.js')], {
    cwd: tomo,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PATH: pathWith(node) },
  })
  return join(tomo, 'dist', 'tomo.js')
}

/**
 * Tomo's single executable, as its `scripts/build-sea.sh` makes it (`node --build-sea` with
 * `mainFormat: "module"`), with our addon added as the SEA asset `agent-fs-tools.node`;
 * `seaNode` is both the builder and the executable copied.
 */
export function buildTomoSea(tomo: string, seaNode: string): string {
  const self = join(tomo, 'node_modules', 'agent-fs-tools')
  const addon = readdirSync(self).find((name) => /^agent-fs-tools\.[\w-]+\.node$/.test(name))
  if (addon === undefined) throw new Error(`no addon in ${self}`)
  const config = join(tomo, 'sea-config.json')
  writeFileSync(
    config,
    JSON.stringify({
      main: 'dist/tomo.js',
      mainFormat: 'module',
      executable: seaNode,
      output: 'tomo',
      disableExperimentalSEAWarning: true,
      assets: { 'agent-fs-tools.node': join(self, addon) },
    }),
  )
  execFileSync(seaNode, ['--build-sea', config], { cwd: tomo, stdio: ['ignore', 'pipe', 'pipe'] })
  return join(tomo, 'tomo')
}
