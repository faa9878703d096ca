/**
 * `edit_file` through `ws.call` on real files (../docs/tools.md#edit_file): sequential batched edits,
 * `replaceAll`, overlapping-match counting, literal replacement text, atomic failure with the exact
 * The documented messages and codes, the closest-match hint, argument validation, and `formatCall`.
 * File-level fidelity, confirmation, concurrency and size live in `edit-file-fs.test.ts`.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import type { ToolResult } from 'agent-fs-tools'
import { tempWorkspace } from './helpers/temp.js'

type EditArg = { oldString: string; newString: string; replaceAll?: boolean }

/** A workspace allowed to write inside its root, with one file `name` holding `content`. */
function setup(content: string | Buffer, name = 'file.txt') {
  const confirm = vi.fn(() => true)
  const t = tempWorkspace({ permissions: { cwdWriteFile: true }, confirm })
  const file = join(t.root, name)
  writeFileSync(file, content)
  const edit = (edits: EditArg[], path = name): Promise<ToolResult> => t.ws.call('edit_file', { path, edits })
  return { ...t, file, edit, confirm, read: () => readFileSync(file, 'utf8'), bytes: () => readFileSync(file) }
}

describe('edit_file: applying edits', () => {
  it('applies a single edit and reports ok', async () => {
    const { edit, read, file } = setup('let a = 1;\nlet b = 2;\nlet c = 3;\n')
    const result = await edit([{ oldString: 'let b = 2;', newString: 'let b = 20;' }])
    expect(result.status).toBe('ok')
    expect(result.code).toBeUndefined()
    expect(read()).toBe('let a = 1;\nlet b = 20;\nlet c = 3;\n')
    expect(result.output).toContain(file)
  })

  it('applies edits in order, a later edit matching text an earlier one produced', async () => {
    const { edit, read } = setup('function alpha() {\n  return 1\n}\n')
    const result = await edit([
      { oldString: 'alpha', newString: 'beta_NEW' },
      // `beta_NEW` exists only after edit 1.
      { oldString: 'beta_NEW()', newString: 'gamma(x)' },
      { oldString: 'return 1', newString: 'return x' },
    ])
    expect(result.status).toBe('ok')
    expect(read()).toBe('function gamma(x) {\n  return x\n}\n')
    expect(result.data).toMatchObject({ edits: 3, replacements: 3 })
  })

  it('a later edit sees the earlier edit removed its text (not found, nothing written)', async () => {
    const { edit, bytes } = setup('one two three\n')
    const before = bytes()
    const result = await edit([
      { oldString: 'two', newString: '2' },
      { oldString: 'two', newString: 'deux' },
    ])
    expect(result).toMatchObject({ status: 'error', code: 'NO_MATCH' })
    expect(result.output.split('\n')[0]).toBe('edit 2: oldString not found in file')
    expect(bytes().equals(before)).toBe(true)
  })

  it('replaceAll: true replaces every occurrence', async () => {
    const { edit, read } = setup('foo(1); foo(2);\nbar(foo);\n')
    const result = await edit([{ oldString: 'foo', newString: 'qux', replaceAll: true }])
    expect(result.status).toBe('ok')
    expect(read()).toBe('qux(1); qux(2);\nbar(qux);\n')
    expect(result.data).toMatchObject({ replacements: 3 })
  })

  it('replaceAll: true with a single occurrence is fine', async () => {
    const { edit, read } = setup('only once\n')
    const result = await edit([{ oldString: 'once', newString: 'twice', replaceAll: true }])
    expect(result.status).toBe('ok')
    expect(read()).toBe('only twice\n')
  })

  it('replaceAll: true fails only on zero occurrences', async () => {
    const { edit, bytes } = setup('abc\n')
    const before = bytes()
    const result = await edit([{ oldString: 'zzz', newString: 'y', replaceAll: true }])
    expect(result).toMatchObject({ status: 'error', code: 'NO_MATCH', output: 'edit 1: oldString not found in file\nNothing in the file is close to it: read the lines again (read_file) and copy them exactly, whitespace and indentation included.' })
    expect(bytes().equals(before)).toBe(true)
  })

  it('replaceAll: false (explicit and default) refuses several occurrences with the exact message', async () => {
    for (const replaceAll of [false, undefined]) {
      const { edit, bytes } = setup('x = 1\nx = 1\nx = 1\n')
      const before = bytes()
      const e: EditArg = { oldString: 'x = 1', newString: 'x = 2' }
      if (replaceAll !== undefined) e.replaceAll = replaceAll
      const result = await edit([e])
      expect(result).toMatchObject({
        status: 'error',
        code: 'MULTIPLE_MATCHES',
        output: 'edit 1: oldString found 3 times — set replaceAll: true or add surrounding context to disambiguate\nIt occurs at lines 1, 2 and 3.',
      })
      expect(bytes().equals(before)).toBe(true)
    }
  })

  it('counts overlapping occurrences: `aa` in `aaa` is two', async () => {
    const { edit, bytes } = setup('aaa\n')
    const before = bytes()
    const result = await edit([{ oldString: 'aa', newString: 'b' }])
    expect(result).toMatchObject({
      status: 'error',
      code: 'MULTIPLE_MATCHES',
      output: 'edit 1: oldString found 2 times — set replaceAll: true or add surrounding context to disambiguate\nIt occurs at line 1.',
    })
    expect(bytes().equals(before)).toBe(true)
  })

  it('replaceAll replaces non-overlapping occurrences left to right', async () => {
    const { edit, read } = setup('aaa aaaa\n')
    const result = await edit([{ oldString: 'aa', newString: 'b', replaceAll: true }])
    expect(result.status).toBe('ok')
    expect(read()).toBe('ba bb\n')
    expect(result.data).toMatchObject({ replacements: 3 })
  })

  it('treats $&, $$, $1 and $<name> in newString literally', async () => {
    const literal = 'x$&y$$z$1w$<n>$`$\''
    const { edit, read } = setup('const a = OLD\nconst b = MANY + MANY\n')
    const result = await edit([
      { oldString: 'OLD', newString: literal },
      { oldString: 'MANY', newString: literal, replaceAll: true },
    ])
    expect(result.status).toBe('ok')
    expect(read()).toBe(`const a = ${literal}\nconst b = ${literal} + ${literal}\n`)
  })

  it('treats regex-special characters in oldString literally', async () => {
    const { edit, read } = setup('a.*b (c) [d]\naxxb\n')
    const result = await edit([{ oldString: 'a.*b (c) [d]', newString: 'ok' }])
    expect(result.status).toBe('ok')
    expect(read()).toBe('ok\naxxb\n')
  })

  it('handles non-ASCII text', async () => {
    const { edit, read } = setup('héllo wörld — 日本語 🎉\n')
    const result = await edit([{ oldString: '日本語 🎉', newString: 'にほんご ✓' }])
    expect(result.status).toBe('ok')
    expect(read()).toBe('héllo wörld — にほんご ✓\n')
  })

  it('can delete text with an empty newString', async () => {
    const { edit, read } = setup('keep\nremove me\nkeep too\n')
    const result = await edit([{ oldString: 'remove me\n', newString: '' }])
    expect(result.status).toBe('ok')
    expect(read()).toBe('keep\nkeep too\n')
  })
})

describe('edit_file: atomic failure when edit 2 of 3 fails', () => {
  const original = 'alpha\nbeta\nbeta\ngamma\n'
  const cases: Array<{ name: string; second: EditArg; code: string; message: string }> = [
    {
      name: 'not found',
      second: { oldString: 'delta', newString: 'D' },
      code: 'NO_MATCH',
      message:
        'edit 2: oldString not found in file\nNothing in the file is close to it: read the lines again (read_file) and copy them exactly, whitespace and indentation included.',
    },
    {
      name: 'several matches',
      second: { oldString: 'beta', newString: 'B' },
      code: 'MULTIPLE_MATCHES',
      message:
        'edit 2: oldString found 2 times — set replaceAll: true or add surrounding context to disambiguate\nIt occurs at lines 2 and 3 of the file as the earlier edits left it.',
    },
    {
      name: 'identical strings',
      second: { oldString: 'gamma', newString: 'gamma' },
      code: 'IDENTICAL_STRINGS',
      message: 'edit 2: oldString and newString are identical',
    },
  ]
  for (const c of cases) {
    it(`${c.name} → ${c.code}, file bytes unchanged, no prompt`, async () => {
      const confirm = vi.fn(() => true)
      const { ws, root } = tempWorkspace({ confirm })
      const file = join(root, 'f.txt')
      writeFileSync(file, original)
      const before = readFileSync(file)
      const mtimeBefore = statSync(file).mtimeMs
      const result = await ws.call('edit_file', {
        path: 'f.txt',
        edits: [{ oldString: 'alpha', newString: 'ALPHA' }, c.second, { oldString: 'gamma\n', newString: 'GAMMA\n' }],
      })
      expect(result.status).toBe('error')
      expect(result.code).toBe(c.code)
      expect(result.output).toBe(c.message)
      expect(result.diff).toBeUndefined()
      expect(readFileSync(file).equals(before)).toBe(true)
      expect(statSync(file).mtimeMs).toBe(mtimeBefore)
      expect(confirm).not.toHaveBeenCalled()
    })
  }

  it('an identical pair is rejected even when the text is absent', async () => {
    const { edit, bytes } = setup('abc\n')
    const before = bytes()
    const result = await edit([{ oldString: 'nowhere', newString: 'nowhere' }])
    expect(result).toMatchObject({
      status: 'error',
      code: 'IDENTICAL_STRINGS',
      output: 'edit 1: oldString and newString are identical',
    })
    expect(bytes().equals(before)).toBe(true)
  })
})

describe('edit_file: closest-match hint', () => {
  it('shows the region with different indentation in read_file line format, tabs kept', async () => {
    const lines = ['// header', 'function main() {', '\tif (ready) {', '\t\tstart()', '\t}', '}', '// footer']
    const { edit, bytes } = setup(lines.join('\n') + '\n')
    const before = bytes()
    const result = await edit([
      { oldString: '// header', newString: '// HEADER' },
      { oldString: '    if (ready) {\n        start()\n    }', newString: 'go()' },
    ])
    expect(result).toMatchObject({ status: 'error', code: 'NO_MATCH' })
    const out = result.output.split('\n')
    expect(out[0]).toBe('edit 2: oldString not found in file')
    // The region's lines, numbered as read_file numbers them, exactly as in the file.
    const numbered = (n: number) => String(n).padStart(4) + ' | ' + lines[n - 1]
    expect(out).toContain(numbered(3))
    expect(out).toContain(numbered(4))
    expect(out).toContain(numbered(5))
    expect(result.output).toContain('   4 | \t\tstart()')
    expect(result.output).toContain('line')
    // Lines outside the region are not offered as the match.
    expect(out).not.toContain(numbered(1))
    expect(out).not.toContain(numbered(7))
    expect(bytes().equals(before)).toBe(true)
  })

  it('gives no region when nothing is plausibly close', async () => {
    const { edit } = setup('alpha beta gamma\ndelta epsilon\n')
    const result = await edit([{ oldString: 'QQQQQQQQQQQQQQQQQQQQQQQ', newString: 'x' }])
    expect(result).toMatchObject({ status: 'error', code: 'NO_MATCH', output: 'edit 1: oldString not found in file\nNothing in the file is close to it: read the lines again (read_file) and copy them exactly, whitespace and indentation included.' })
  })
})

describe('edit_file: argument validation', () => {
  it('an empty oldString → INVALID_ARGUMENTS naming the field, nothing written', async () => {
    const { edit, bytes } = setup('abc\n')
    const before = bytes()
    const result = await edit([{ oldString: '', newString: 'x' }])
    expect(result).toMatchObject({ status: 'error', code: 'INVALID_ARGUMENTS' })
    expect(result.output).toContain('oldString')
    expect(bytes().equals(before)).toBe(true)
  })

  it('an empty oldString in edit 2 also fails the whole batch', async () => {
    const { edit, bytes } = setup('abc\n')
    const before = bytes()
    const result = await edit([
      { oldString: 'abc', newString: 'xyz' },
      { oldString: '', newString: 'x' },
    ])
    expect(result).toMatchObject({ status: 'error', code: 'INVALID_ARGUMENTS' })
    expect(result.output).toContain('oldString')
    expect(bytes().equals(before)).toBe(true)
  })

  it('an empty edits array → INVALID_ARGUMENTS naming the field', async () => {
    const { edit, bytes } = setup('abc\n')
    const before = bytes()
    const result = await edit([])
    expect(result).toMatchObject({ status: 'error', code: 'INVALID_ARGUMENTS' })
    expect(result.output).toContain('edits')
    expect(bytes().equals(before)).toBe(true)
  })

  it('missing fields, wrong types and unknown properties → INVALID_ARGUMENTS', async () => {
    const { ws, bytes } = setup('abc\n')
    const before = bytes()
    const bad: Array<[unknown, string]> = [
      [{ path: 'file.txt' }, 'edits'],
      [{ path: 'file.txt', edits: [{ oldString: 'abc' }] }, 'newString'],
      [{ path: 'file.txt', edits: [{ oldString: 'abc', newString: 1 }] }, 'newString'],
      [{ path: 'file.txt', edits: [{ oldString: 'abc', newString: 'x', replaceAll: 'yes' }] }, 'replaceAll'],
      [{ path: 'file.txt', edits: [{ oldString: 'abc', newString: 'x', extra: 1 }] }, 'extra'],
      [{ path: 'file.txt', edits: { oldString: 'abc', newString: 'x' } }, 'edits'],
    ]
    for (const [args, field] of bad) {
      const result = await ws.call('edit_file' as string, args)
      expect(result, JSON.stringify(args)).toMatchObject({ status: 'error', code: 'INVALID_ARGUMENTS' })
      expect(result.output, JSON.stringify(args)).toContain(field)
    }
    expect(bytes().equals(before)).toBe(true)
  })
})

describe('edit_file: formatCall', () => {
  it('is the path for one edit and `path (N edits)` for more', () => {
    const { ws } = tempWorkspace()
    const e = { oldString: 'a', newString: 'b' }
    expect(ws.formatCall('edit_file', { path: 'src/a.ts', edits: [e] })).toBe('src/a.ts')
    expect(ws.formatCall('edit_file', { path: 'src/a.ts', edits: [e, e] })).toBe('src/a.ts (2 edits)')
    expect(ws.formatCall('edit_file', { path: 'src/a.ts', edits: [e, e, e] })).toBe('src/a.ts (3 edits)')
    expect(ws.formatCall('edit_file', { path: ' ./odd path.ts', edits: [e] })).toBe(' ./odd path.ts')
  })
})
