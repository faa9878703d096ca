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
