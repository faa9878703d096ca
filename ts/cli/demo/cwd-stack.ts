/**
 * The cwd stack as the playground shows it. `ws.cwd()` gives only the top and the depth, so the
 * playground, the only caller, records each frame as the depth changes after a call.
 */
import { relative, sep } from 'node:path'
import type { CwdInfo } from '../../types.js'

/**
 * The stack after a call, given the stack before it (bottom first; `stack.length` is depth + 1) and
 * `ws.cwd()` now: a deeper stack pushes the new top, a shallower one pops down to it.
 */
export function nextCwdStack(stack: readonly string[], info: CwdInfo): string[] {
  const next = stack.slice(0, info.depth + 1)
  while (next.length < info.depth + 1) next.push(info.cwd)
  next[info.depth] = info.cwd
  return next
}

/** `path` relative to `root` (`.` for the root itself), or absolute when outside it. */
export function displayPath(path: string, root: string): string {
  const rel = relative(root, path)
  if (rel === '') return '.'
  if (rel === '..' || rel.startsWith(`..${sep}`) || rel.startsWith(sep)) return path
  return rel
}
