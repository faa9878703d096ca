import { describe, expect, it } from 'vitest'
import { forDiffView, hunksOnly } from '../ts/internal/hunks.js'
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
    expect(toTomoResult({ status: 'ok', output: `Edited /w/a.txt\n\n${DIFF}`, diff: DIFF, data: { path: '/w/a.txt' } })).toEqual({
      status: 'ok',
      format: 'diff',
      output: '@@ -1,2 +1,2 @@\n one\n-two\n+TWO',
    })
  })

  it('takes the diff from where the tools put it, and only when it is the result\'s diff', () => {
    const data = { path: '/w/a.txt' }
    // A whole rewrite is counted, not echoed: text in the output that looks like the diff (here its
    // header and a hunk, as a note or a quoted line might hold) is not the change, and is not drawn as one.
    const counted = 'Wrote /w/a.txt (4 bytes, 1 line), replacing all 2 lines it had\n--- a.txt\n+++ a.txt\n@@ -1 +1 @@\n-x\n+y'
    expect(toTomoResult({ status: 'ok', output: counted, diff: DIFF, data })).toEqual({ status: 'ok', format: 'plain', output: counted })
    // After the blank line, something other than the diff: plain.
    const other = `Edited /w/a.txt\n\n--- a.txt\n+++ a.txt\n@@ -1 +1 @@\n-x\n+y\n`
    expect(toTomoResult({ status: 'ok', output: other, diff: DIFF, data })).toEqual({ status: 'ok', format: 'plain', output: other })
    // Cut to fit the output, with its note, and followed by the summary's notes.
    const cut = `Wrote /w/a.txt (9 bytes)\nThe previous content is in the trash at /t/a.tar.gz.\n\n${DIFF.slice(0, DIFF.indexOf('-two'))}[diff truncated: 2 more lines not shown; read_file shows the file as it is now]`
    expect(toTomoResult({ status: 'ok', output: cut, diff: DIFF, data })).toEqual({
      status: 'ok',
      format: 'diff',
      output: '@@ -1,2 +1,2 @@\n one\n[diff truncated: 2 more lines not shown; read_file shows the file as it is now]\nThe previous content is in the trash at /t/a.tar.gz.',
    })
  })

  it('keeps the documented output, plain, for everything else', () => {
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

describe('forDiffView (what Tomo\'s DiffView draws above a prompt)', () => {
  const PATCH =
    '--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+bee\n' +
    '--- a/gone.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n--- not a header\n-+++ nor this\n--- a/old.txt\n+++ b/new.txt\n@@ -1 +1 @@\n-x\n+y\n\\ No newline at end of file\n'

  it('one file: its hunks only', () => {
    expect(forDiffView(DIFF)).toBe('@@ -1,2 +1,2 @@\n one\n-two\n+TWO')
  })

  it('several files: each header pair becomes one plain line naming the file; hunk bodies are kept whole', () => {
    expect(forDiffView(PATCH)!.split('\n')).toEqual([
      'a.txt',
      '@@ -1,2 +1,2 @@',
      ' one',
      '-two',
      '+TWO',
      'b.txt (new file)',
      '@@ -0,0 +1 @@',
      '+bee',
      'gone.txt (deleted)',
      '@@ -1,2 +0,0 @@',
      '--- not a header',
      '-+++ nor this',
      'old.txt → new.txt',
      '@@ -1 +1 @@',
      '-x',
      '+y',
      '\\ No newline at end of file',
    ])
  })

  it('is undefined without a hunk', () => {
    expect(forDiffView('')).toBeUndefined()
    expect(forDiffView('--- a/x\n+++ b/x\n--- a/y\n+++ b/y\n')).toBeUndefined()
  })
})

describe('toTomoResult of apply_patch', () => {
  it('is the documented output, plain: Tomo\'s diff view would draw the file list, the notes and the file headers as diff lines', () => {
    const output = `Success. Updated the following files:\nM a.txt\n\nWhat was at /w/a.txt is in the trash at /t/a.tar.gz.\n\n${DIFF}`
    expect(toTomoResult({ status: 'ok', output, diff: DIFF })).toEqual({ status: 'ok', format: 'plain', output })
  })
})

describe('displayNameOf', () => {
  it('gives every tool a name a person reads', () => {
    expect(
      Object.fromEntries(
        ['read_file', 'write_file', 'edit_file', 'append_file', 'apply_patch', 'list_directory', 'create_directory', 'delete_file', 'remove_dir',
          'move_file', 'copy_file', 'restore_file', 'trash_list', 'cwd_get', 'cwd_push', 'cwd_pop', 'glob', 'grep'].map((name) => [name, displayNameOf(name)]),
      ),
    ).toEqual({
      read_file: 'Read File',
      write_file: 'Write File',
      edit_file: 'Edit File',
      append_file: 'Append to File',
      apply_patch: 'Apply Patch',
      list_directory: 'List Directory',
      create_directory: 'Create Directory',
      delete_file: 'Delete File',
      remove_dir: 'Remove Directory',
      move_file: 'Move',
      copy_file: 'Copy',
      restore_file: 'Restore from Trash',
      trash_list: 'List Trash',
      cwd_get: 'Current Directory',
      cwd_push: 'Change Directory',
      cwd_pop: 'Back to Previous Directory',
      glob: 'Find Files',
      grep: 'Search in Files',
    })
  })

  it("title-cases a name the host chose (Tomo's remove_file)", () => {
    expect(displayNameOf('remove_file')).toBe('Remove File')
    expect(displayNameOf('view-file')).toBe('View File')
    expect(displayNameOf('toString')).toBe('ToString')
  })
})
