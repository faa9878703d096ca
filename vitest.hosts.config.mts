import { defineConfig } from 'vitest/config'

/**
 * The package inside real hosts (`__test__/hosts/`): Tomo's TUI in tmux, its single executable,
 * `opencode run` and `opencode serve`, the AI SDK with an OpenAI-compatible provider, an MCP
 * client launching `npx agent-fs-tools mcp`, each against a scripted model. The global setup packs
 * the built package once (`npm pack`), as the hosts install it, and makes sure tmux is there.
 * Runtimes and host trees are cached under `~/.cache/agent-fs-tools/` (`__test__/helpers/runtimes.ts`).
 */
export default defineConfig({
  test: {
    include: ['__test__/hosts/**/*.test.ts'],
    environment: 'node',
    globalSetup: ['__test__/hosts/setup.ts'],
    maxWorkers: 2,
    // A cold cache downloads runtimes and installs Tomo's dependencies in the hooks.
    testTimeout: 240_000,
    hookTimeout: 600_000,
  },
})
