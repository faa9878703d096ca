/**
 * Starts the playground in the terminal (imported only in interactive mode, so `ink` and `react`
 * are needed only then).
 */
import { render } from 'ink'
import { App } from './app.js'
import type { DemoWorkspace } from './demo-workspace.js'
import type { DemoIO } from './io.js'

/** Signals that end the playground cleanly (the caller then removes the temporary project). */
const SIGNALS = ['SIGTERM', 'SIGHUP'] as const

/** Renders the {@link App} on `io` until the user quits (`q` or Ctrl+C) or the terminal goes away. */
export async function runInteractive(demo: DemoWorkspace, io: DemoIO): Promise<void> {
  const instance = render(<App ws={demo.ws} root={demo.root} dataDir={demo.dataDir} />, {
    stdin: io.stdin,
    stdout: io.stdout,
    stderr: io.stderr,
  })
  const stop = (): void => instance.unmount()
  for (const signal of SIGNALS) process.once(signal, stop)
  try {
    await instance.waitUntilExit()
  } finally {
    for (const signal of SIGNALS) process.off(signal, stop)
  }
}
