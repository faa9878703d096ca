/**
 * A terminal program driven the way a person uses it: started in a detached tmux session on a
 * server of its own (`tmux -L <socket>`), keys typed with `send-keys`, the screen read with
 * `capture-pane`. Waiting is for what the screen shows, with a generous deadline that only
 * bounds a hung run (never a timing assertion).
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'

/** A program running in tmux. */
export interface Terminal {
  /** Types `text` literally. */
  type(text: string): void
  /** Presses keys by tmux name (`Enter`, `Escape`, `C-c`). */
  press(...keys: string[]): void
  /** Types `text`, waits until the screen shows it (the program took it in), then presses Enter. */
  submit(text: string): Promise<void>
  /** The visible screen, as plain text. */
  screen(): string
  /** The whole session: scrollback and screen, as plain text. */
  transcript(): string
  /** Waits until `predicate(screen)` holds; throws with the screen after `ms`. */
  waitFor(predicate: (screen: string) => boolean, what: string, ms?: number): Promise<string>
  /** Whether the program is still running. */
  alive(): boolean
  /** Ends the session and its tmux server. */
  close(): void
}

/** Options of {@link startTerminal}. */
export interface TerminalOptions {
  tmux: string
  cwd: string
  /** The whole environment of the program. */
  env: Record<string, string>
  columns?: number
  rows?: number
}

/** The environment as a list of `-e NAME=value` arguments for `new-session`. */
function envArgs(env: Record<string, string>): string[] {
  return Object.entries(env).flatMap(([name, value]) => ['-e', `${name}=${value}`])
}

/** Starts `command` (argv) in a fresh tmux server; the pane stays open after the program exits. */
export function startTerminal(command: string[], options: TerminalOptions): Terminal {
  const socket = `afs-${process.pid}-${randomBytes(4).toString('hex')}`
  const tmux = (...args: string[]) => execFileSync(options.tmux, ['-L', socket, ...args], { encoding: 'utf8' })
  execFileSync(
    options.tmux,
    [
      '-L',
      socket,
      '-f',
      '/dev/null',
      'new-session',
      '-d',
      '-s',
      'host',
      '-x',
      String(options.columns ?? 180),
      '-y',
      String(options.rows ?? 60),
      '-c',
      options.cwd,
      ...envArgs(options.env),
      ...command,
    ],
    { env: { ...options.env, TMUX: '' } },
  )
  tmux('set-option', '-t', 'host', 'remain-on-exit', 'on')
  tmux('set-option', '-t', 'host', 'history-limit', '20000')
  const terminal: Terminal = {
    type: (text) => void tmux('send-keys', '-t', 'host', '-l', text),
    press: (...keys) => void tmux('send-keys', '-t', 'host', ...keys),
    async submit(text) {
      terminal.type(text)
      await terminal.waitFor((screen) => screen.includes(text), `"${text}" typed in`)
      terminal.press('Enter')
    },
    screen: () => tmux('capture-pane', '-p', '-J', '-t', 'host'),
    transcript: () => tmux('capture-pane', '-p', '-J', '-S', '-', '-t', 'host'),
    async waitFor(predicate, what, ms = 90_000) {
      const deadline = Date.now() + ms
      for (;;) {
        const screen = terminal.screen()
        if (predicate(screen)) return screen
        if (Date.now() > deadline || !terminal.alive()) {
          throw new Error(`waited for ${what}${terminal.alive() ? '' : ' (the program exited)'}; the screen:\n${terminal.transcript()}`)
        }
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
    },
    alive: () => tmux('display-message', '-p', '-t', 'host', '#{pane_dead}').trim() === '0',
    close: () => {
      spawnSync(options.tmux, ['-L', socket, 'kill-server'], { stdio: 'ignore' })
    },
  }
  return terminal
}
