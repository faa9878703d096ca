import { describe, expect, it } from 'vitest'
import { hunksOnly } from '../ts/internal/hunks.js'
import { displayNameOf, toTomoResult } from 'agent-fs-tools/tomo'

const DIFF = '--- a.txt\n+++ a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n'

describe('hunksOnly', () => {
  it('drops the file header and trailing newlines', () => {
    expect(hunksOnly(DIFF)).toBe('@@ -1,2 +1,2 @@\n one\n-two\n+TWO')
  })

  it('keeps a diff that starts with a hunk', () => {
    expect(hunksOnly('@@ -0,0 +1 @@\n+x\n\\ No newline at end of file\n')).toBe('@@ -0,0 +1 @@\n+x\n\\ No newline at end of file')
  })

  it('is undefined without a hunk', () => {
    expect(hunksOnly('')).toBeUndefined()
    expect(hunksOnly('--- a\n+++ a\n')).toBeUndefined()
  })

  it('does not mistake "@@" inside a line for a hunk header', () => {
    expect(hunksOnly('--- a\n+++ a\n x @@ y\n')).toBeUndefined()
  })
})

describe('toTomoResult', () => {
  it('gives format diff with hunks for a successful change', () => {
    expect(toTomoResult({ status: 'ok', output: `Edited /w/a.txt\n\n${DIFF}`, diff: DIFF })).toEqual({
      status: 'ok',
      format: 'diff',
      output: '@@ -1,2 +1,2 @@\n one\n-two\n+TWO',
    })
  })

  it('keeps the SPEC output, plain, for everything else', () => {
    expect(toTomoResult({ status: 'ok', output: 'CWD: /w' })).toEqual({ status: 'ok', format: 'plain', output: 'CWD: /w' })
    expect(toTomoResult({ status: 'denied', output: 'The user denied this write.', diff: DIFF })).toEqual({
      status: 'denied',
      format: 'plain',
      output: 'The user denied this write.',
    })
    expect(toTomoResult({ status: 'error', code: 'NOT_FOUND', output: 'file not found: /w/x' })).toEqual({
      status: 'error',
      format: 'plain',
      output: 'file not found: /w/x',
    })
    expect(toTomoResult({ status: 'ok', output: 'Wrote /w/a (unchanged)', diff: '' })).toEqual({
      status: 'ok',
      format: 'plain',
      output: 'Wrote /w/a (unchanged)',
    })
  })
})

describe('displayNameOf', () => {
  it('title-cases snake_case names', () => {
    expect(displayNameOf('read_file')).toBe('Read File')
    expect(displayNameOf('cwd_push')).toBe('Cwd Push')
    expect(displayNameOf('remove_file')).toBe('Remove File')
  })
})
