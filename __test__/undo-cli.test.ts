/**
 * `agent-fs-tools history` and `agent-fs-tools undo`: the user's way to see and take back what an
 * agent did through any host (an MCP client has no undo of its own), run as the built CLI.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { tempWorkspace } from './helpers/temp.js'
import { ALL } from './helpers/trash.js'

const bin = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist/esm/cli/main.js')

function cli(...args: string[]) {
  return spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
}

describe('agent-fs-tools history / undo', () => {
  it('lists the changes and takes back the latest with --yes; a second undo walks further back', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL })
    writeFileSync(join(root, 'a.txt'), 'one\n')
    await ws.call('read_file', { path: 'a.txt' })
    const write = await ws.call('write_file', { path: 'a.txt', content: 'two\n' })
    await ws.call('delete_file', { path: 'a.txt' })
    const where = ['--root', root, '--data-dir', dataDir]

    const history = cli('history', ...where)
    expect(history.status, history.stderr).toBe(0)
    expect(history.stdout).toMatch(/delete_file\s+a\.txt[\s\S]*write_file/)
    const json = JSON.parse(cli('history', ...where, '--json').stdout) as Array<{ id: string; tool: string }>
    expect(json.map((c) => c.tool)).toEqual(['delete_file', 'write_file'])

    const dry = cli('undo', ...where, '--dry-run')
    expect(dry.status).toBe(0)
    expect(dry.stdout).toContain('Would undo')
    expect(existsSync(join(root, 'a.txt'))).toBe(false)

    const undo = cli('undo', ...where, '--yes')
    expect(undo.status, undo.stderr).toBe(0)
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('two\n')
    const byId = cli('undo', ...where, '--id', write.data?.changeId as string, '--yes')
    expect(byId.status, byId.stderr).toBe(0)
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('one\n')
  })

  it('without a terminal and without --yes it refuses (exit 2) and changes nothing; a conflict exits 1', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: ALL })
    await ws.call('write_file', { path: 'a.txt', content: 'agent\n' })
    const where = ['--root', root, '--data-dir', dataDir]
    const refused = cli('undo', ...where)
    expect(refused.status).toBe(2)
    expect(refused.stderr).toContain('--yes')
    expect(existsSync(join(root, 'a.txt'))).toBe(true)
    writeFileSync(join(root, 'a.txt'), 'user\n')
    const conflict = cli('undo', ...where, '--yes')
    expect(conflict.status).toBe(1)
    expect(conflict.stderr).toMatch(/^CONFLICT: /)
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('user\n')
    expect(cli('undo', '--yes').status).toBe(2)
  })
})
