/**
 * Example arguments for each tool, prefilled in the playground's editor. They fit the sample
 * project; any other tool gets placeholders built from its schema.
 */
import type { JsonSchema, ToolDefinition } from '../../types.js'

/** Hand-written examples, by tool name. */
const EXAMPLES: Readonly<Record<string, Record<string, unknown>>> = {
  read_file: { path: 'README.md' },
  write_file: { path: 'notes/hello.md', content: '# Hello\n\nWritten from the playground.\n' },
  append_file: { path: 'README.md', content: '\nAppended from the playground.\n' },
  edit_file: {
    path: 'src/greet.ts',
    edits: [{ oldString: "'Hello, ' + name", newString: '`Hello, ${name}!`' }],
  },
  apply_patch: {
    input:
      '*** Begin Patch\n*** Update File: src/greet.ts\n@@\n export function greet(name: string): string {\n-  return \'Hello, \' + name\n+  return `Hello, ${name}!`\n }\n*** Add File: src/farewell.ts\n+export const farewell = (name: string): string => `Bye, ${name}`\n*** End Patch\n',
  },
  list_directory: { path: '.', recursive: true },
  create_directory: { path: 'build/output' },
  delete_file: { path: 'src/index.ts' },
  remove_dir: { path: 'src', recursive: true },
  move_file: { source: 'README.md', destination: 'docs/README.md' },
  copy_file: { source: 'src', destination: 'src-backup' },
  // No `<`, `>` or `:`: Windows refuses them in a name, and the placeholder should fail as a
  // missing archive does, not as a malformed path.
  restore_file: { trashedPath: 'an archive path (see the trash with t)' },
  trash_list: {},
  cwd_get: {},
  cwd_push: { path: 'src' },
  cwd_pop: {},
  glob: { pattern: '**/*.ts' },
  grep: { pattern: 'greet' },
}

/** A placeholder value of a JSON Schema's type. */
function placeholder(schema: JsonSchema | undefined): unknown {
  const type = Array.isArray(schema?.['type']) ? (schema['type'] as unknown[])[0] : schema?.['type']
  switch (type) {
    case 'integer':
    case 'number':
      return 1
    case 'boolean':
      return false
    case 'array':
      return []
    case 'object':
      return {}
    default:
      return ''
  }
}

/** Arguments of the hand-written examples that are paths relative to the workspace root. */
const PATH_KEYS = new Set(['path', 'source', 'destination'])

/** What the examples depend on. */
export interface ExampleContext {
  /** The newest archive in the trash, for `restore_file`. */
  latestArchive?: string | undefined
  /** Turns a root-relative example path into one relative to the current cwd (default: unchanged). */
  fromRoot?: (path: string) => string
  /**
   * Whether a root-relative path exists. An example naming a file of the sample project that does
   * not exist here (`--root` on your own directory) names `someFile` instead.
   */
  exists?: (path: string) => boolean
  /** A file of the workspace root (root-relative) for the examples to name instead. */
  someFile?: string | undefined
}

/** The files of the sample project the examples name. */
const SAMPLE_PATHS = new Set(['README.md', 'src/greet.ts', 'src/index.ts'])

/**
 * Example arguments for `def`: the hand-written example limited to the properties the schema has,
 * plus a placeholder for every other required property.
 */
export function exampleArgs(def: ToolDefinition, context: ExampleContext = {}): Record<string, unknown> {
  const { properties, required } = def.inputSchema
  const { latestArchive, fromRoot = (path: string) => path, exists = () => true, someFile } = context
  const here = (path: string): string => (SAMPLE_PATHS.has(path) && !exists(path) && someFile !== undefined ? someFile : path)
  const known = def.name === 'restore_file' && latestArchive !== undefined ? { trashedPath: latestArchive } : EXAMPLES[def.name] ?? {}
  const args: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(known)) {
    if (key in properties) args[key] = PATH_KEYS.has(key) && typeof value === 'string' ? fromRoot(here(value)) : value
  }
  for (const key of required) if (!(key in args)) args[key] = placeholder(properties[key])
  return args
}

/** JSON on one line with spaces after `{`, `:` and `,`, for the one-line editor. */
export function oneLineJson(value: unknown): string {
  return JSON.stringify(value, null, 1).replace(/\n\s*/g, ' ')
}
