/**
 * Global setup of the host tests (`vitest.hosts.config.mts`): packs the built package once with
 * `npm pack`, as a host project installs it (`inject('packedPackage')`), and makes sure tmux is
 * there for Tomo's TUI (CI is a fresh Debian machine, run as root: Debian's `tmux` is installed;
 * `inject('tmux')` is `null`, with the reason in `inject('tmuxMissing')`, where that fails).
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The `npm pack` tarball of the built checkout. */
    packedPackage: string
    /** The tmux executable, or `null`. */
    tmux: string | null
    /** Why there is no tmux. */
    tmuxMissing: string
  }
}

const root = resolve(__dirname, '..', '..')

/** `tmux` on the PATH, installed from Debian's archive when missing and this is root. */
function ensureTmux(): { tmux: string | null; reason: string } {
  const found = () => spawnSync('sh', ['-c', 'command -v tmux'], { encoding: 'utf8' }).stdout.trim()
  if (found() !== '') return { tmux: found(), reason: '' }
  if (process.getuid?.() !== 0 || spawnSync('sh', ['-c', 'command -v apt-get']).status !== 0) {
    return { tmux: null, reason: 'tmux is not installed (and this is not a Debian root shell that could install it): apt-get install tmux' }
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  let install = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'tmux'], { encoding: 'utf8', env })
  if (install.status !== 0) {
    spawnSync('apt-get', ['update'], { encoding: 'utf8', env })
    install = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'tmux'], { encoding: 'utf8', env })
  }
  if (found() !== '') return { tmux: found(), reason: '' }
  return { tmux: null, reason: `tmux could not be installed: ${install.stderr.trim().split('\n').pop() ?? ''}` }
}

export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'afs-hosts-pack-'))
  const [info] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', dir], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }),
  ) as Array<{ filename: string }>
  project.provide('packedPackage', join(dir, info!.filename))
  const { tmux, reason } = ensureTmux()
  project.provide('tmux', tmux)
  project.provide('tmuxMissing', reason)
  return () => rmSync(dir, { recursive: true, force: true })
}
