/** The audit log (../docs/trash.md#the-audit-log): one JSON line per mutating call, written before the call resolves. */
import { chmodSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { tempWorkspace } from './helpers/temp.js'
import { auditLines, sha256, writeTree } from './helpers/files.js'
import { skipOnWindows } from './helpers/skip.js'

const ids = { sessionId: 'session-1234', runId: 'run-5678', agentName: 'tester' }
const ALLOWED_KEYS = [
  'time',
  'tool',
  'path',
  'status',
  'code',
  'trashedTo',
  'sha256Before',
  'sha256After',
  'files',
  'sessionId',
  'runId',
  'agentName',
]

function expectShape(line: Record<string, unknown>): void {
  for (const key of Object.keys(line)) expect(ALLOWED_KEYS, key).toContain(key)
  expect(typeof line.time).toBe('string')
  expect(Number.isNaN(Date.parse(line.time as string))).toBe(false)
  expect(Math.abs(Date.now() - Date.parse(line.time as string))).toBeLessThan(60_000)
  expect(line).toMatchObject(ids)
}

describe('audit log', () => {
  it('an ok write: tool, absolute path, status ok, sha256After (and sha256Before for an overwrite)', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: { cwdWriteFile: true }, trash: ids })
    const created = await ws.call('write_file', { path: 'a.txt', content: 'one\n' })
    expect(created.status).toBe('ok')
    // Written before the promise resolved.
    let lines = auditLines(dataDir, root)
    expect(lines).toHaveLength(1)
    expectShape(lines[0]!)
    expect(lines[0]).toMatchObject({ tool: 'write_file', path: join(root, 'a.txt'), status: 'ok', sha256After: sha256('one\n') })
    expect(lines[0]!.code).toBeUndefined()
    expect(lines[0]!.sha256Before).toBeUndefined()

    await ws.call('write_file', { path: 'a.txt', content: 'two\n' })
    lines = auditLines(dataDir, root)
    expect(lines).toHaveLength(2)
    expect(lines[1]).toMatchObject({ status: 'ok', sha256Before: sha256('one\n'), sha256After: sha256('two\n') })
  })

  it('an error line carries the code', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: { cwdWriteFile: true }, limits: { writeMaxBytes: 1 }, trash: ids })
    const result = await ws.call('write_file', { path: 'big.txt', content: 'too big' })
    expect(result.code).toBe('TOO_LARGE')
    const lines = auditLines(dataDir, root)
    expect(lines).toHaveLength(1)
    expectShape(lines[0]!)
    expect(lines[0]).toMatchObject({ tool: 'write_file', status: 'error', code: 'TOO_LARGE' })
    expect(String(lines[0]!.path)).toMatch(/big\.txt$/)
    expect(lines[0]!.sha256After).toBeUndefined()
  })

  it('a denied call is logged as denied, without a code', async () => {
    const { ws, root, dataDir } = tempWorkspace({ trash: ids })
    const result = await ws.call('append_file', { path: 'x.log', content: 'x' }, { confirm: () => false })
    expect(result.status).toBe('denied')
    const lines = auditLines(dataDir, root)
    expect(lines).toHaveLength(1)
    expectShape(lines[0]!)
    expect(lines[0]).toMatchObject({ tool: 'append_file', status: 'denied' })
    expect(String(lines[0]!.path)).toMatch(/x\.log$/)
    expect(lines[0]!.code).toBeUndefined()
  })

  it('every mutating tool is logged; reads, listings and the cwd tools are not', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: { cwdWriteFile: true }, trash: ids })
    writeTree(root, { 'a.txt': 'a\n' })
    mkdirSync(join(root, 'sub'))
    await ws.call('read_file', { path: 'a.txt' })
    await ws.call('list_directory', { recursive: true })
    await ws.call('cwd_push', { path: 'sub' })
    await ws.call('cwd_get', {})
    await ws.call('cwd_pop', {})
    expect(auditLines(dataDir, root)).toEqual([])
    await ws.call('write_file', { path: 'b.txt', content: 'b\n' })
    await ws.call('append_file', { path: 'b.txt', content: 'c\n' })
    await ws.call('edit_file', { path: 'b.txt', edits: [{ oldString: 'c', newString: 'd' }] })
    await ws.call('create_directory', { path: 'dir' })
    const lines = auditLines(dataDir, root)
    expect(lines.map((l) => [l.tool, l.status])).toEqual([
      ['write_file', 'ok'],
      ['append_file', 'ok'],
      ['edit_file', 'ok'],
      ['create_directory', 'ok'],
    ])
    for (const line of lines) expectShape(line)
    expect(lines[3]!.path).toBe(join(root, 'dir'))
    expect(lines[3]!.files).toEqual([{ path: join(root, 'dir'), action: 'created' }])
  })

  it('every line lists the files the call changed: an append with both digests, a move with its destination', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: { cwdWriteFile: true, cwdRemoveFile: true }, trash: ids })
    writeTree(root, { 'log.txt': 'one\n', 'old.txt': 'moved\n', 'taken.txt': 'replaced\n' })
    await ws.call('append_file', { path: 'log.txt', content: 'two\n' })
    const moved = await ws.call('move_file', { source: 'old.txt', destination: 'taken.txt', overwrite: true })
    expect(moved.status).toBe('ok')
    const denied = await ws.call('write_file', { path: 'x.txt', content: 'x' }, { permissions: { cwdWriteFile: false } })
    expect(denied.status).toBe('denied')
    const [append, move, refused] = auditLines(dataDir, root)
    expect(append!.files).toEqual([
      { path: join(root, 'log.txt'), action: 'modified', sha256Before: sha256('one\n'), sha256After: sha256('one\ntwo\n') },
    ])
    expect(append).toMatchObject({ sha256Before: sha256('one\n'), sha256After: sha256('one\ntwo\n') })
    expect(move!.path).toBe(join(root, 'old.txt'))
    expect(move!.files).toEqual([
      {
        path: join(root, 'taken.txt'),
        action: 'moved',
        from: join(root, 'old.txt'),
        sha256Before: sha256('replaced\n'),
        trashedTo: moved.data!.trashedTo,
      },
    ])
    // The result lists them too, without the digests.
    expect(moved.data!.files).toEqual([
      { path: join(root, 'taken.txt'), action: 'moved', from: join(root, 'old.txt'), trashedTo: moved.data!.trashedTo },
    ])
    expect(refused!.files).toEqual([])
  })

  it('parallel mutating calls each get one whole line', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: { cwdWriteFile: true }, trash: ids })
    await Promise.all(Array.from({ length: 30 }, (_, i) => ws.call('write_file', { path: `f${i}.txt`, content: `${i}` })))
    const lines = auditLines(dataDir, root)
    expect(lines).toHaveLength(30)
    expect(new Set(lines.map((l) => l.path)).size).toBe(30)
  })

  it('a renamed tool is logged under its exposed name', async () => {
    const { ws, root, dataDir } = tempWorkspace({
      permissions: { cwdWriteFile: true },
      tools: { write_file: { name: 'save_file' } },
      trash: ids,
    })
    await ws.call('save_file', { path: 'a.txt', content: 'x' })
    expect(auditLines(dataDir, root)[0]).toMatchObject({ tool: 'save_file', status: 'ok' })
  })

  it('the log is for its owner only: 0600 in a private data directory, also when an older version made it readable', async () => {
    skipOnWindows("a file's privacy on Windows is its access list, not a mode (scripts/windows/data-dir-acl.mjs checks it)")
    const fresh = tempWorkspace({ permissions: { cwdWriteFile: true }, trash: ids })
    await fresh.ws.call('write_file', { path: 'a.txt', content: 'x' })
    const log = join(fresh.dataDir, 'audit', `${sha256(fresh.root)}.jsonl`)
    expect(statSync(log).mode & 0o777).toBe(0o600)
    expect(statSync(join(fresh.dataDir, 'audit')).mode & 0o077).toBe(0)

    const old = tempWorkspace({ permissions: { cwdWriteFile: true }, trash: ids })
    const oldLog = join(old.dataDir, 'audit', `${sha256(old.root)}.jsonl`)
    mkdirSync(join(old.dataDir, 'audit'), { recursive: true })
    writeFileSync(oldLog, '')
    chmodSync(oldLog, 0o644)
    await old.ws.call('write_file', { path: 'a.txt', content: 'x' })
    expect(statSync(oldLog).mode & 0o777).toBe(0o600)
    expect(auditLines(old.dataDir, old.root)).toHaveLength(1)
  })

  it('audit: false writes no log', async () => {
    const { ws, root, dataDir } = tempWorkspace({ permissions: { cwdWriteFile: true }, audit: false })
    expect((await ws.call('write_file', { path: 'a.txt', content: 'x' })).status).toBe('ok')
    expect(auditLines(dataDir, root)).toEqual([])
    expect(existsSync(join(dataDir, 'audit')) ? readdirSync(join(dataDir, 'audit')) : []).toEqual([])
  })
})
