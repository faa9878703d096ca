/**
 * Strict JSON serialisation for values crossing into Rust: instead of silently dropping or
 * mangling what JSON cannot carry, it reports where the bad value is.
 *
 * @internal
 */

/** A value that cannot be sent as JSON; `path` names where it is (e.g. `limits.readMaxBytes`). */
export class JsonValueError extends Error {
  /** Dotted path of the offending value; empty for the top level. */
  readonly path: string

  constructor(path: string, message: string) {
    super(path === '' ? message : `${path}: ${message}`)
    this.name = 'JsonValueError'
    this.path = path
  }
}

function childPath(parent: string, key: string, holder: object): string {
  if (Array.isArray(holder)) return `${parent}[${key}]`
  return parent === '' ? key : `${parent}.${key}`
}

/** A UTF-16 surrogate that is not half of a pair (in `u` mode pairs match as one code point). */
const LONE_SURROGATE = /\p{Cs}/u

/**
 * `JSON.stringify` that throws a {@link JsonValueError} for a BigInt, a function, a symbol, a
 * non-finite number, a string with a lone surrogate or a cycle anywhere in `value`. An `undefined` property is left out, as in JSON;
 * an `undefined` top-level value gives `"null"`.
 */
export function toJson(value: unknown): string {
  const paths = new WeakMap<object, string>()
  /** The objects being serialised, from the top-level value down to the current holder. */
  const stack: object[] = []
  let top = true
  const json = JSON.stringify(value, function (this: object, key: string, v: unknown): unknown {
    let path = ''
    if (top) {
      top = false
    } else {
      path = childPath(paths.get(this) ?? '', key, this)
      while (stack.length > 0 && stack[stack.length - 1] !== this) stack.pop()
    }
    switch (typeof v) {
      case 'bigint':
      case 'function':
      case 'symbol':
        throw new JsonValueError(path, `must be a JSON value, got a ${typeof v}`)
      case 'string':
        // Rust strings are UTF-8: a lone surrogate has no encoding, so name where it is.
        if (LONE_SURROGATE.test(v)) throw new JsonValueError(path, 'must be valid Unicode text, but contains a lone UTF-16 surrogate')
        return v
      case 'number':
        if (!Number.isFinite(v)) throw new JsonValueError(path, `must be a finite number, got ${v}`)
        return v
      case 'object':
        if (v === null) return v
        if (stack.includes(v)) throw new JsonValueError(path, 'must not contain a cycle')
        stack.push(v)
        paths.set(v, path)
        return v
      default:
        return v
    }
  }) as string | undefined
  return json ?? 'null'
}

/** A top-level string argument of at least this many UTF-16 code units is passed as itself. */
const PASSED_AS_ITSELF = 16 * 1024

/**
 * Tool arguments for the core: {@link toJson} of `args`, but for its long top-level strings (a
 * patch, a file's content), which are passed as themselves beside the JSON. `JSON.stringify`
 * escapes a string character by character (about 8 ms for a 2 MB patch of short lines, which the
 * core then unescapes), while a string passed as itself is copied once. Checked as `toJson`
 * checks them; anything but a plain object of arguments goes whole as JSON.
 */
export function argumentsToNative(args: unknown): { json: string; strings: Record<string, string> | null } {
  if (args === null || typeof args !== 'object' || Array.isArray(args) || typeof (args as { toJSON?: unknown }).toJSON === 'function') {
    return { json: toJson(args), strings: null }
  }
  const entries = Object.entries(args)
  const long = entries.filter((entry): entry is [string, string] => typeof entry[1] === 'string' && entry[1].length >= PASSED_AS_ITSELF)
  if (long.length === 0) return { json: toJson(args), strings: null }
  for (const [key, text] of long) {
    if (LONE_SURROGATE.test(text)) throw new JsonValueError(key, 'must be valid Unicode text, but contains a lone UTF-16 surrogate')
  }
  const strings: Record<string, string> = Object.fromEntries(long)
  return { json: toJson(Object.fromEntries(entries.filter(([key]) => !Object.hasOwn(strings, key)))), strings }
}

/**
 * A tool's result from the core: its JSON parsed, and a long `diff` the core passed as itself
 * beside it put back where the JSON holds its key (`NativeResult`): `JSON.parse` of a diff of
 * short lines, escaped line by line, took ~2 ms a MB.
 */
export function resultFromNative<T extends { diff?: string }>(native: { json: string; diff?: string | null }): T {
  const result = JSON.parse(native.json) as T
  if (typeof native.diff === 'string') result.diff = native.diff
  return result
}
