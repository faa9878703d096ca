/**
 * Valid and invalid arguments per tool (../../docs/tools.md), for checking that a tool's zod schema and the
 * tool itself agree. Keyed by canonical tool name.
 */

/** Examples for one tool. */
export interface ArgumentExamples {
  valid: Record<string, unknown>[]
  /** Each invalid example with the field the rejection should name. */
  invalid: Array<{ args: unknown; field: string }>
}

export const ARGUMENT_EXAMPLES: Record<string, ArgumentExamples> = {
  read_file: {
    valid: [{ path: 'a.txt' }, { path: 'a.txt', startLine: 2, endLine: 5 }],
    invalid: [
      { args: {}, field: 'path' },
      { args: { path: 3 }, field: 'path' },
      { args: { path: 'a', startLine: 'x' }, field: 'startLine' },
      { args: { path: 'a', startLine: 1.5 }, field: 'startLine' },
      { args: { path: 'a', extra: true }, field: 'extra' },
    ],
  },
  write_file: {
    valid: [{ path: 'a.txt', content: '' }],
    invalid: [
      { args: { path: 'a.txt' }, field: 'content' },
      { args: { path: 'a.txt', content: 1 }, field: 'content' },
      { args: { path: 'a.txt', content: 'x', mode: 420 }, field: 'mode' },
    ],
  },
  append_file: {
    valid: [{ path: 'a.txt', content: 'more' }],
    invalid: [
      { args: { content: 'x' }, field: 'path' },
      { args: { path: 'a.txt', content: ['x'] }, field: 'content' },
    ],
  },
  edit_file: {
    valid: [
      { path: 'a.txt', edits: [{ oldString: 'a', newString: 'b' }] },
      { path: 'a.txt', edits: [{ oldString: 'a', newString: 'b', replaceAll: true }, { oldString: 'c', newString: '' }] },
    ],
    invalid: [
      { args: { path: 'a.txt' }, field: 'edits' },
      { args: { path: 'a.txt', edits: [{ oldString: 'a' }] }, field: 'newString' },
      { args: { path: 'a.txt', edits: [{ oldString: 'a', newString: 'b', replaceAll: 'yes' }] }, field: 'replaceAll' },
      { args: { path: 'a.txt', edits: [{ oldString: 'a', newString: 'b', extra: 1 }] }, field: 'extra' },
      { args: { path: 'a.txt', edits: 'a->b' }, field: 'edits' },
    ],
  },
  list_directory: {
    valid: [{}, { path: '.', recursive: true, includeIgnored: false }],
    invalid: [
      { args: { recursive: 'yes' }, field: 'recursive' },
      { args: { path: '.', depth: 2 }, field: 'depth' },
    ],
  },
  create_directory: {
    valid: [{ path: 'a/b/c' }],
    invalid: [{ args: {}, field: 'path' }],
  },
  delete_file: {
    valid: [{ path: 'a.txt' }, { path: 'a.txt', permanent: true }],
    invalid: [
      { args: {}, field: 'path' },
      { args: { path: 'a.txt', permanent: 'no' }, field: 'permanent' },
    ],
  },
  remove_dir: {
    valid: [{ path: 'build' }, { path: 'build', recursive: true, permanent: false }],
    invalid: [
      { args: { recursive: true }, field: 'path' },
      { args: { path: 'build', recursive: 1 }, field: 'recursive' },
    ],
  },
  move_file: {
    valid: [{ source: 'a', destination: 'b' }, { source: 'a', destination: 'b', overwrite: true }],
    invalid: [
      { args: { source: 'a' }, field: 'destination' },
      { args: { source: 'a', destination: 'b', force: true }, field: 'force' },
    ],
  },
  copy_file: {
    valid: [{ source: 'a', destination: 'b' }, { source: 'a', destination: 'b', overwrite: false }],
    invalid: [
      { args: { destination: 'b' }, field: 'source' },
      { args: { source: 'a', destination: 'b', recursive: true }, field: 'recursive' },
    ],
  },
  restore_file: {
    valid: [{ trashedPath: '/t/x.tar.gz' }, { trashedPath: '/t/x.tar.gz', targetPath: 'a', overwrite: true }],
    invalid: [
      { args: {}, field: 'trashedPath' },
      { args: { trashedPath: '/t/x.tar.gz', overwrite: 'yes' }, field: 'overwrite' },
    ],
  },
  trash_list: { valid: [{}], invalid: [{ args: { all: true }, field: 'all' }] },
  cwd_get: { valid: [{}], invalid: [{ args: { path: '.' }, field: 'path' }] },
  cwd_push: {
    valid: [{ path: 'src' }],
    invalid: [
      { args: {}, field: 'path' },
      { args: { path: ['src'] }, field: 'path' },
    ],
  },
  cwd_pop: { valid: [{}], invalid: [{ args: { n: 1 }, field: 'n' }] },
  glob: {
    valid: [{ pattern: '**/*.ts' }, { pattern: '*.rs', path: 'src', includeIgnored: true }],
    invalid: [
      { args: {}, field: 'pattern' },
      { args: { pattern: 3 }, field: 'pattern' },
      { args: { pattern: '' }, field: 'pattern' },
      { args: { pattern: '*', includeIgnored: 'yes' }, field: 'includeIgnored' },
      { args: { pattern: '*', limit: 5 }, field: 'limit' },
    ],
  },
  grep: {
    valid: [
      { pattern: 'TODO' },
      {
        pattern: 'fn\\s+main',
        path: 'src',
        include: '*.rs',
        caseInsensitive: true,
        contextLines: 2,
        maxMatches: 10,
        includeIgnored: false,
      },
    ],
    invalid: [
      { args: {}, field: 'pattern' },
      { args: { pattern: '' }, field: 'pattern' },
      { args: { pattern: ['a'] }, field: 'pattern' },
      { args: { pattern: 'x', contextLines: -1 }, field: 'contextLines' },
      { args: { pattern: 'x', contextLines: 101 }, field: 'contextLines' },
      { args: { pattern: 'x', contextLines: 1.5 }, field: 'contextLines' },
      { args: { pattern: 'x', maxMatches: 0 }, field: 'maxMatches' },
      { args: { pattern: 'x', caseInsensitive: 'yes' }, field: 'caseInsensitive' },
      { args: { pattern: 'x', include: 7 }, field: 'include' },
      { args: { pattern: 'x', regex: true }, field: 'regex' },
    ],
  },
}
