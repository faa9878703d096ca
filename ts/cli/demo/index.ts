/**
 * `agent-fs-tools demo`: the playground. In a terminal, an Ink app that hosts the tools
 * (`./interactive.js`, loaded only then, so `ink` and `react` stay optional peers); without one,
 * or with `--script FILE`, a scripted session that prints every call and exits.
 */
import { readFileSync } from 'node:fs'
import { DEMO_USAGE, parseDemoArgs, UsageError, type DemoOptions } from './options.js'
import { openDemoWorkspace } from './demo-workspace.js'
import type { DemoIO } from './io.js'
import { BUILTIN_SCRIPT, parseScript, printScriptHeader, printTrashSummary, runScript, type ScriptCall } from './script.js'

export { parseDemoArgs, type DemoOptions } from './options.js'

export type { DemoIO } from './io.js'

const MISSING_PEERS = `The interactive playground needs ink and react, optional peer dependencies of agent-fs-tools.
Install them next to it:    npm install ink@^6 react@^19
or try it without installing: npx -p agent-fs-tools -p ink@^6 -p react@^19 agent-fs-tools demo
Without them, a scripted session still runs: agent-fs-tools demo --script calls.json (or pipe stdin).
`

/** Whether `error` says that `ink` or `react` is not installed. */
function isMissingPeer(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown }
  return code === 'ERR_MODULE_NOT_FOUND' && typeof message === 'string' && /Cannot find (package|module) '(ink|react)[/']/.test(message)
}

/** Reads the calls to run in scripted mode: the `--script` file, or the built-in session. */
function scriptCalls(options: DemoOptions): readonly ScriptCall[] {
  if (options.script === undefined) return BUILTIN_SCRIPT
  let text: string
  try {
    text = readFileSync(options.script, 'utf8')
  } catch (error) {
    throw new UsageError(`--script: cannot read ${options.script}: ${(error as Error).message}`)
  }
  try {
    return parseScript(text, options.script)
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
}

/**
 * Runs `agent-fs-tools demo` with the arguments after `demo`; resolves to the exit code (0 done,
 * 1 the interactive mode cannot start, 2 a usage error).
 */
export async function runDemo(argv: readonly string[], io: DemoIO = process): Promise<number> {
  // Set when the reader of stdout is gone (`agent-fs-tools demo | head`): nothing more is
  // written, and the session still ends normally, so its temporary directory is removed.
  let readerGone = false
  const print = (line: string): void => {
    if (!readerGone) io.stdout.write(`${line}\n`)
  }
  try {
    const options = parseDemoArgs(argv)
    if (options.help) {
      io.stdout.write(DEMO_USAGE)
      return 0
    }
    const interactive = options.script === undefined && io.stdin.isTTY === true && io.stdout.isTTY === true
    if (interactive) {
      let runInteractive: typeof import('./interactive.js').runInteractive
      try {
        ;({ runInteractive } = await import('./interactive.js'))
      } catch (error) {
        if (!isMissingPeer(error)) throw error
        io.stderr.write(MISSING_PEERS)
        return 1
      }
      const demo = openDemoWorkspace({ root: options.root, keep: options.keep, agentName: 'demo-playground' })
      // A backstop: if the terminal disappears mid-session (its writes then fail and end the
      // process), the temporary project is still removed.
      const backstop = (): void => void demo.dispose()
      process.once('exit', backstop)
      try {
        await runInteractive(demo, io)
      } finally {
        process.off('exit', backstop)
        const note = demo.dispose()
        if (note !== undefined) print(note)
      }
      return 0
    }
    if (options.root !== undefined && options.script === undefined) {
      throw new UsageError('--root without a terminal needs --script FILE (the built-in session would change your files)')
    }
    const calls = scriptCalls(options)
    const demo = openDemoWorkspace({ root: options.root, keep: options.keep, agentName: 'demo-script' })
    const gone = (): void => void (readerGone = true)
    io.stdout.on?.('error', gone)
    const backstop = (): void => void demo.dispose()
    process.once('exit', backstop)
    try {
      printScriptHeader(demo.ws, demo.root, demo.dataDir, print)
      await runScript(demo.ws, calls, print)
      await printTrashSummary(demo.ws, print)
    } finally {
      process.off('exit', backstop)
      const note = demo.dispose()
      if (note !== undefined) print(`\n${note}`)
    }
    return 0
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    io.stderr.write(`agent-fs-tools demo: ${error.message}\n\n${DEMO_USAGE}`)
    return 2
  }
}
