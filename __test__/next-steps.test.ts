/**
 * Messages that say what to do next (../docs/tools.md#error-codes), through the JS surface. The exact texts of every
 * case are in the core's tests (`src/tools/next_step_tests.rs`); these check what a host sees.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { tempWorkspace } from './helpers/temp.js'
import { NAMES_WINDOWS_REFUSES, skipOnWindows } from './helpers/skip.js'

const NEXT = 'Do not retry it or work around it (with another tool or path); ask the user what to do instead.'

describe('messages that say what to do next', () => {
  it("a denial keeps the documented text, then tells the model not to work around it", async () => {
    const { ws } = tempWorkspace({ confirm: () => false })
    const write = await ws.call('write_file', { path: 'a.txt', content: 'x' })
    expect(write).toMatchObject({ status: 'denied', code: 'USER_DENIED', output: `The user denied this write. ${NEXT}` })
    const patch = await ws.call('apply_patch', { input: '*** Begin Patch\n*** Add File: b.txt\n+b\n*** End Patch' })
    expect(patch.output).toBe(`The user denied this patch. ${NEXT}\nNo files were modified.`)
    // The host's own undo is not the model's: its denial has no advice for a model.
    const { ws: host } = tempWorkspace({ permissions: { cwdWriteFile: true } })
    await host.call('write_file', { path: 'c.txt', content: 'c' })
    expect((await host.undo({ confirm: () => false })).output).toBe('The user denied this undo.')
  })

  it('a move onto an existing directory names the path that would move the file into it', async () => {
    const { ws, root } = tempWorkspace({ permissions: { cwdWriteFile: true, cwdRemoveFile: true } })
    mkdirSync(join(root, 'src'))
    writeFileSync(join(root, 'b.txt'), 'b\n')
    const result = await ws.call('move_file', { source: 'b.txt', destination: 'src' })
    expect(result.code).toBe('ALREADY_EXISTS')
    expect(result.output).toContain('give destination "src/b.txt"')
    expect(result.output).toContain('overwrite: true would replace the entire directory')
  })

  it('a missing file: the documented text first, then whitespace and the nearest names', async () => {
    skipOnWindows(NAMES_WINDOWS_REFUSES)
    const { ws, root } = tempWorkspace()
    writeFileSync(join(root, 'notes.md'), 'x\n')
    const result = await ws.call('read_file', { path: 'notes.md ' })
    expect(result.output).toBe(
      `file not found: ${join(root, 'notes.md ')}; the path you gave, "notes.md ", ends with whitespace, which is part of the name; similar names in ${root}: "notes.md"`,
    )
  })

  it('an invalid regular expression is one line with its literal form', async () => {
    const { ws } = tempWorkspace()
    const result = await ws.call('grep', { pattern: 'foo(' })
    expect(result.output.split('\n')).toHaveLength(1)
    expect(result.output).toContain('pattern `foo\\(`')
  })
})
