/**
 * Stale views (../docs/tools.md#stale-views) through the JS surface: the model never overwrites what it has not seen. Every change
 * "by the user" changes the file's size, so the check sees it whatever the clock's resolution.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ERROR_CODES, Workspace } from 'agent-fs-tools'
import { describe, expect, it } from 'vitest'
import { tempWorkspace } from './helpers/temp.js'
import { read } from './helpers/files.js'

const writable = { permissions: { cwdWriteFile: true } } as const

describe('stale views (../docs/tools.md#stale-views)', () => {
  it('the Tomo story: read, the user adds a line, the stale rewrite is refused and the line stays', async () => {
    const { ws, root } = tempWorkspace(writable)
    const path = join(root, 'cfg.txt')
    writeFileSync(path, 'a = 1\n')
    expect((await ws.call('read_file', { path: 'cfg.txt' })).status).toBe('ok')
    writeFileSync(path, 'a = 1\nadded = by the user\n')
    const stale = await ws.call('write_file', { path: 'cfg.txt', content: 'a = 2\n' })
    expect(stale).toEqual({
      status: 'error',
      code: 'STALE',
      output: `${path} has changed since you last read it (by the user or another program). Read it again before you overwrite it; edit_file changes only the text you name.`,
    })
    expect(read(path)).toBe('a = 1\nadded = by the user\n')
    expect(ERROR_CODES).toContain('STALE')
    // Read again: the write goes through.
    await ws.call('read_file', { path: 'cfg.txt' })
    expect((await ws.call('write_file', { path: 'cfg.txt', content: 'a = 2\n' })).status).toBe('ok')
  })

  it('a file never read is refused; a new file needs no read; the host chooses with staleWrites', async () => {
    const { ws, root } = tempWorkspace(writable)
    writeFileSync(join(root, 'old.txt'), 'user\n')
    const refused = await ws.call('write_file', { path: 'old.txt', content: 'model\n' })
    expect(refused.code).toBe('STALE')
    expect(refused.output).toBe(
      `${join(root, 'old.txt')} exists and you have not read it. Read it first (read_file), then write it; to change a part of it, use edit_file.`,
    )
    expect((await ws.call('write_file', { path: 'new.txt', content: 'x\n' })).status).toBe('ok')

    const allow = new Workspace({ root, ...writable, staleWrites: 'allow', trash: { dataDir: join(root, '..', 'data') } })
    expect((await allow.call('write_file', { path: 'old.txt', content: 'model\n' })).status).toBe('ok')
    expect(read(join(root, 'old.txt'))).toBe('model\n')
  })

  it('edit, append and patch are not refused but say the file had changed', async () => {
    const { ws, root } = tempWorkspace(writable)
    const path = join(root, 'a.txt')
    writeFileSync(path, 'one\n')
    await ws.call('read_file', { path: 'a.txt' })
    writeFileSync(path, 'one\ntwo\n')
    const edited = await ws.call('edit_file', { path: 'a.txt', edits: [{ oldString: 'one', newString: '1' }] })
    expect(edited.status).toBe('ok')
    expect(edited.output.split('\n')[1]).toBe(
      `Note: ${path} had changed since you last read it (by the user or another program); this change was made to what it holds now. Read it again before relying on what you saw.`,
    )
  })

  it('staleWrites is validated: a TypeError naming the option', () => {
    const { root } = tempWorkspace()
    expect(() => new Workspace({ root, staleWrites: 'ask' as never })).toThrow(TypeError)
    expect(() => new Workspace({ root, staleWrites: 'ask' as never })).toThrow(/^staleWrites: must be 'refuse' or 'allow'$/)
    expect(() => new Workspace({ root, staleWrites: 'refuse' })).not.toThrow()
  })
})
