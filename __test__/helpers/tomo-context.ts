/** A Tomo tool context stub of exactly Tomo's shape, with a recording `confirm`. */
import { vi } from 'vitest'
import type { TomoPermissions, TomoToolContext } from '../../examples/tomo/tomo-types.js'

/** Tomo's defaults: `cwdReadFile` on, everything else off. */
export const TOMO_DEFAULT_PERMISSIONS: TomoPermissions = {
  cwdReadFile: true,
  cwdWriteFile: false,
  cwdRemoveFile: false,
  cwdRemoveDir: false,
  globalReadFile: false,
  globalWriteFile: false,
  globalRemoveFile: false,
  globalRemoveDir: false,
}

/** Builds a Tomo context; `confirm` answers `answer` and records its calls. */
export function tomoContext(overrides: Partial<TomoToolContext> = {}, answer = true) {
  const confirm = vi.fn(async (_message: string, _options?: { label?: string; detail?: string; diff?: string }) => answer)
  const context: TomoToolContext = {
    permissions: { ...TOMO_DEFAULT_PERMISSIONS },
    allowedCommands: [],
    confirm,
    ask: vi.fn(async () => null),
    signal: new AbortController().signal,
    provider: { name: 'test', type: 'ollama', baseUrl: 'http://localhost:11434' },
    model: 'test-model',
    contextWindow: 8192,
    depth: 0,
    ...overrides,
  }
  return { context, confirm }
}
