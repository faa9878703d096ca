/** Parallel calls (../docs/hosts.md#the-workspace-api): same-path calls serialised, nothing lost; different paths in parallel. */
import { spawnSync } from 'node:child_process'
import { readdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it, vi } from 'vitest'
import type { ConfirmHandler, ToolResult } from 'agent-fs-tools'
import { tempWorkspace } from './helpers/temp.js'
import { deferred, read, sleep, writeTree } from './helpers/files.js'
import { scaled } from './helpers/time.js'
import { NO_UNIX_RESOURCE_LIMITS, skipOnWindows } from './helpers/skip.js'

const writable = { permissions: { cwdWriteFile: true } } as const

describe('concurrency', () => {
  it('parallel append_file calls on one file lose nothing', async () => {
    const { ws, root } = tempWorkspace(writable)
    writeTree(root, { 'log.txt': 'start\n' })
    const n = 60
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) => ws.call('append_file', { path: 'log.txt', content: `entry ${i}\n` })),
    )
    for (const result of results) expect(result.status).toBe('ok')
    const lines = read(join(root, 'log.txt')).split('\n').filter(Boolean)
    expect(lines[0]).toBe('start')
    expect(lines.slice(1).sort()).toEqual(Array.from({ length: n }, (_, i) => `entry ${i}`).sort())
  })

  it('parallel appends creating a new file lose nothing and none fails', async () => {
    const { ws, root } = tempWorkspace(writable)
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => ws.call('append_file', { path: 'new/log.txt', content: `${i}\n` })),
    )
    for (const result of results) expect(result.status, result.output).toBe('ok')
    expect(read(join(root, 'new/log.txt')).split('\n').filter(Boolean)).toHaveLength(20)
  })

  it('parallel appends through different spellings of the same path lose nothing', async () => {
    const { ws, root } = tempWorkspace(writable)
    writeTree(root, { 'd/log.txt': '' })
    const spellings = ['d/log.txt', './d/log.txt', join(root, 'd/log.txt'), 'd/../d/log.txt']
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        ws.call('append_file', { path: spellings[i % spellings.length]!, content: `${i}\n` }),
      ),
    )
    expect(read(join(root, 'd/log.txt')).split('\n').filter(Boolean)).toHaveLength(40)
  })

  it('parallel writes to different files all succeed', async () => {
    const { ws, root } = tempWorkspace(writable)
    const n = 40
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) => ws.call('write_file', { path: `out/f${i}.txt`, content: `file ${i}\n` })),
    )
    for (const result of results) expect(result.status).toBe('ok')
    for (let i = 0; i < n; i++) expect(read(join(root, `out/f${i}.txt`))).toBe(`file ${i}\n`)
    expect(readdirSync(join(root, 'out'))).toHaveLength(n)
  })

  it('parallel writes to one file all succeed and leave one complete version, no temp files', async () => {
    const { ws, root } = tempWorkspace(writable)
    const contents = Array.from({ length: 20 }, (_, i) => `version ${i}\n`.repeat(100))
    const results = await Promise.all(contents.map((content) => ws.call('write_file', { path: 'f.txt', content })))
    for (const result of results) expect(result.status).toBe('ok')
    expect(contents).toContain(read(join(root, 'f.txt')))
    expect(readdirSync(root)).toEqual(['f.txt'])
  })

  it('a call on the same path waits for one pending on confirmation; a call on another path does not', async () => {
    const { ws, root } = tempWorkspace()
    const gate = deferred<boolean>()
    const slow = vi.fn<ConfirmHandler>(() => gate.promise)
    const first = ws.call('write_file', { path: 'a.txt', content: 'first\n' }, { confirm: slow })
    // The first call holds the path from planning until its confirmation is answered.
    await vi.waitFor(() => expect(slow).toHaveBeenCalledOnce())
    let sameDone: ToolResult | undefined
    const same = ws
      .call('append_file', { path: 'a.txt', content: 'second\n' }, { permissions: { cwdWriteFile: true } })
      .then((r) => (sameDone = r))
    const other = await ws.call('write_file', { path: 'b.txt', content: 'b' }, { permissions: { cwdWriteFile: true } })
    expect(other.status).toBe('ok')
    await sleep(100)
    expect(sameDone).toBeUndefined()
    gate.resolve(true)
    expect((await first).status).toBe('ok')
    expect((await same).status).toBe('ok')
    expect(read(join(root, 'a.txt'))).toBe('first\nsecond\n')
  })

  it('reads in parallel with appends see whole states only', async () => {
    const { ws, root } = tempWorkspace(writable)
    writeTree(root, { 'log.txt': '' })
    const ops: Array<Promise<ToolResult>> = []
    for (let i = 0; i < 20; i++) {
      ops.push(ws.call('append_file', { path: 'log.txt', content: `line ${i}\n` }))
      ops.push(ws.call('read_file', { path: 'log.txt' }))
    }
    const results = await Promise.all(ops)
    for (const result of results) expect(result.status).toBe('ok')
    for (const result of results.filter((_, i) => i % 2 === 1)) {
      for (const line of result.output.split('\n').filter((l) => l.includes(' | '))) {
        expect(line).toMatch(/^ +\d+ \| line \d+$/)
      }
    }
  })

  it('thousands of reads at once do not run out of file descriptors', () => {
    skipOnWindows(NO_UNIX_RESOURCE_LIMITS)
    // Each read in flight used to hold its file and parent directory open while it waited for a
    // thread: 3,000 reads needed about 6,000 descriptors. Now only reads on a thread hold any.
    const { root, dataDir } = tempWorkspace()
    const n = 3000
    for (let i = 0; i < n; i++) writeFileSync(join(root, `f${i}.txt`), `file ${i}\n`)
    const child = join(dirname(fileURLToPath(import.meta.url)), 'helpers', 'parallel-reads-child.mjs')
    const run = spawnSync('prlimit', ['--nofile=2048', process.execPath, child, root, dataDir], {
      encoding: 'utf8',
      timeout: scaled(120_000),
    })
    expect(run.status, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout)).toEqual({ calls: n, failed: 0 })
  }, scaled(130_000))
})
