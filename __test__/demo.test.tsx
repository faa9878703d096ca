/**
 * The interactive playground (`agent-fs-tools demo` in a terminal), driven through
 * ink-testing-library: keys go in on a fake stdin, assertions are on the rendered frames and on
 * the files of a real workspace over a sample project.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { SAMPLE_FILES, writeSampleProject } from '../ts/cli/demo/sample-project.js'
import { tempWorkspace } from './helpers/temp.js'
import { scaled } from './helpers/time'

// Colours are part of what is tested (the diff): force them before chalk (inside ink) loads. Each
// test file runs in its own worker module graph, so this does not leak into other files.
process.env['FORCE_COLOR'] = '1'
const { cleanup, render } = await import('ink-testing-library')
const { App, progressBar } = await import('../ts/cli/demo/app.js')

const KEY = {
  up: '\u001B[A',
  down: '\u001B[B',
  enter: '\r',
  escape: '\u001B',
  backspace: '\u007F',
  ctrlU: '\u0015',
  home: '\u001B[H',
  end: '\u001B[F',
} as const

// eslint-disable-next-line no-control-regex
const ANSI = /\u001B\[[0-9;]*m/g
const GREEN = '\u001B[32m'
const RED = '\u001B[31m'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A rendered playground over a fresh sample project, with helpers to drive it. */
function playground(options: Parameters<typeof tempWorkspace>[0] = {}) {
  // The frame is 100 columns and the playground shortens what does not fit; a long TMPDIR
  // (macOS's /var/folders/…, the runtime harness's private one) would cut the paths asserted on.
  const made = tempWorkspace(options, '/tmp')
  writeSampleProject(made.root)
  const app = render(<App ws={made.ws} root={made.root} dataDir={made.dataDir} />)
  const raw = (): string => app.lastFrame() ?? ''
  const frame = (): string => raw().replace(ANSI, '')

  /** Waits until the frame contains `text` (or matches it). */
  async function waitFor(text: string | RegExp, timeoutMs = scaled(5000)): Promise<string> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const current = frame()
      if (typeof text === 'string' ? current.includes(text) : text.test(current)) return current
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${String(text)} in frame:\n${current}`)
      await sleep(10)
    }
  }

  /**
   * Writes each key to stdin as one chunk. Waits first, so that a screen just rendered has
   * subscribed its input handler (Ink subscribes in an effect, after the frame is drawn), and
   * after, so that Ink has processed it (a lone Esc is flushed on the next tick).
   */
  async function press(...keys: string[]): Promise<void> {
    for (const key of keys) {
      await sleep(20)
      app.stdin.write(key)
      await sleep(20)
    }
  }

  /** Moves the tool list's highlight to `name` with ↑/↓, as a user would. */
  async function selectTool(name: string): Promise<void> {
    const names = made.ws.definitions().map((d) => d.name)
    const target = names.indexOf(name)
    expect(target, `tool ${name}`).toBeGreaterThanOrEqual(0)
    await waitFor('Pick a tool')
    const highlighted = (): number => names.indexOf(/▸ (\w+)/.exec(frame())?.[1] ?? '')
    for (let current = highlighted(); current !== target; ) {
      await press(current < target ? KEY.down : KEY.up)
      const next = current + (current < target ? 1 : -1)
      await waitFor(`▸ ${names[next]}`)
      current = next
    }
  }

  /** From the tool list: choose `name`, replace the prefilled arguments with `args` (unless undefined), press Enter. */
  async function callTool(name: string, args?: string): Promise<void> {
    await selectTool(name)
    await press(KEY.enter)
    await waitFor(/Enter run/)
    if (args !== undefined) await press(KEY.ctrlU, args)
    await press(KEY.enter)
  }

  return { ...made, app, raw, frame, waitFor, press, selectTool, callTool }
}

afterEach(() => {
  cleanup()
})

describe('playground', () => {
  let p: ReturnType<typeof playground>
  beforeEach(async () => {
    p = playground()
    await p.waitFor('0 archives')
  })

  it('lists the tools, the root, the empty trash and the cwd stack', () => {
    const frame = p.frame()
    expect(frame).toContain('agent-fs-tools playground')
    expect(frame).toContain(p.root)
    for (const def of p.ws.definitions()) expect(frame).toContain(def.name)
    expect(frame).toContain('cwd stack (depth 0)')
    expect(frame).toMatch(/0 \.\s+← cwd/)
    expect(frame).toContain('▸ read_file')
  })

  it('prefills an example: read_file runs without a prompt (cwdReadFile) and shows numbered lines', async () => {
    await p.callTool('read_file')
    const frame = await p.waitFor('✔ ok')
    expect(frame).toContain('   1 | # Sample project')
    expect(frame).toContain('✔ read_file README.md')
  })

  it('type arguments, see the coloured diff in the prompt, approve with y: the file is written', async () => {
    await p.selectTool('write_file')
    await p.press(KEY.enter)
    await p.waitFor('"notes/hello.md"') // the example
    await p.press(KEY.ctrlU)
    // Typed key by key (the last one a typo, erased), then pasted in one chunk.
    for (const ch of '{"path":"notes/a.md",x') await p.press(ch)
    await p.press(KEY.backspace)
    await p.press('"content":"hi\\nthere\\n"}')
    await p.waitFor('{"path":"notes/a.md","content":"hi\\nthere\\n"}')
    expect(p.frame()).toContain('write_file  notes/a.md') // live formatCall header
    await p.press(KEY.enter)

    const prompt = await p.waitFor('Write file?')
    expect(prompt).toContain(join(p.root, 'notes/a.md'))
    expect(prompt).toContain('+hi')
    expect(prompt).toContain('y approve · n deny · Esc deny')
    expect(p.raw()).toContain(`${GREEN}+hi`)
    expect(existsSync(join(p.root, 'notes/a.md'))).toBe(false) // nothing before the answer

    await p.press('y')
    const result = await p.waitFor('✔ ok')
    expect(result).toContain('write_file  notes/a.md')
    expect(readFileSync(join(p.root, 'notes/a.md'), 'utf8')).toBe('hi\nthere\n')
    expect(result).toContain('✔ write_file notes/a.md') // recent calls

    await p.press(KEY.enter)
    await p.waitFor('Pick a tool')
  })

  it('deny with n, and with Esc: the file is unchanged and the result says denied', async () => {
    const greet = join(p.root, 'src/greet.ts')
    await p.callTool('edit_file') // the prefilled example edits src/greet.ts
    const prompt = await p.waitFor('Edit file?')
    expect(prompt).toContain("-  return 'Hello, ' + name")
    expect(prompt).toContain('+  return `Hello, ${name}!`')
    expect(p.raw()).toContain(`${RED}-  return 'Hello, ' + name`)
    await p.press('n')
    let result = await p.waitFor('⊘ denied')
    expect(result).toContain('The user denied this edit.')
    expect(readFileSync(greet, 'utf8')).toBe(SAMPLE_FILES['src/greet.ts'])

    await p.press(KEY.enter)
    await p.callTool('edit_file') // the editor keeps the last arguments run
    await p.waitFor('Edit file?')
    await p.press(KEY.escape)
    result = await p.waitFor('⊘ denied')
    expect(result).toContain('The user denied this edit.')
    expect(readFileSync(greet, 'utf8')).toBe(SAMPLE_FILES['src/greet.ts'])
    expect(result).toMatch(/⊘ edit_file src\/greet\.ts[\s\S]*⊘ edit_file src\/greet\.ts/)
  })

  it('delete, browse the trash, restore with Enter and y: the file is back', async () => {
    const readme = join(p.root, 'README.md')
    await p.callTool('delete_file', '{"path":"README.md"}')
    await p.waitFor('Remove file?')
    await p.press('y')
    await p.waitFor('✔ ok')
    await p.waitFor('1 archive')
    expect(existsSync(readme)).toBe(false)

    await p.press(KEY.enter)
    await p.waitFor('Pick a tool')
    await p.press('t')
    const trash = await p.waitFor('▸ file      README.md')
    expect(trash).toContain('by ')
    expect(trash).toMatch(/archive\s+\S*README\.md\.tar\.gz/)

    await p.press(KEY.enter)
    const prompt = await p.waitFor('Restore file?')
    expect(prompt).toContain(readme)
    await p.press('y')
    const result = await p.waitFor('✔ ok')
    // The header names the file that came back, not its archive.
    expect(result).toContain(`restore_file  ${readme}`)
    expect(result).not.toMatch(/restore_file  \S*\.tar\.gz/)
    expect(readFileSync(readme, 'utf8')).toBe(SAMPLE_FILES['README.md'])

    await p.press(KEY.enter) // back to the tool list, as after any call
    await p.waitFor('Pick a tool')
    await p.waitFor('0 archives')
  })

  it('text and Enter in one chunk (a paste ending in a newline) run at once', async () => {
    await p.selectTool('read_file')
    await p.press(KEY.enter)
    await p.waitFor(/Enter run/)
    await p.press(KEY.ctrlU, '{"path":"src/index.ts"}\r')
    const frame = await p.waitFor('✔ ok')
    expect(frame).toContain("   1 | import { greet } from './greet'")
  })

  it('Home and End jump to the top and the bottom of a long output', async () => {
    for (let i = 0; i < 40; i += 1) writeFileSync(join(p.root, `f${String(i).padStart(2, '0')}.txt`), 'x')
    await p.callTool('list_directory', '{"path":"."}')
    const top = await p.waitFor('✔ ok')
    expect(top).toMatch(/lines 1–\d+ of 4\d/)
    expect(top).toContain('.gitignore')
    await p.press(KEY.end)
    const bottom = await p.waitFor(/lines \d+–(\d+) of \1/)
    expect(bottom).not.toContain('lines 1–')
    expect(bottom).toContain('src/')
    await p.press(KEY.home)
    await p.waitFor('lines 1–')
  })

  it('u undoes the latest change after asking; h shows the history, where Enter on the undo redoes it', async () => {
    const readme = join(p.root, 'README.md')
    await p.callTool('delete_file', '{"path":"README.md"}')
    await p.waitFor('Remove file?')
    await p.press('y')
    await p.waitFor('✔ ok')
    await p.press(KEY.enter)
    await p.waitFor('Pick a tool')

    await p.press('u')
    const prompt = await p.waitFor('Undo change?')
    expect(prompt).toContain(readme)
    await p.press('y')
    await p.waitFor('✔ ok')
    expect(readFileSync(readme, 'utf8')).toBe(SAMPLE_FILES['README.md'])
    await p.press(KEY.enter)
    await p.waitFor('Pick a tool')

    await p.press('h')
    const history = await p.waitFor('▸ undo')
    expect(history).toMatch(/delete_file\s+README\.md.*\(undone\)/)
    expect(history).toContain('Enter/u redo')
    await p.press(KEY.enter)
    await p.waitFor('Undo change?')
    await p.press('y')
    await p.waitFor('✔ ok')
    expect(existsSync(readme)).toBe(false)
    await p.press(KEY.enter)
    await p.waitFor('Pick a tool')
  })

  it('restore_file from the tool list is prefilled with the newest archive', async () => {
    await p.callTool('delete_file', '{"path":"src/index.ts"}')
    await p.waitFor('Remove file?')
    await p.press('y')
    await p.waitFor('1 archive')
    await p.press(KEY.enter)
    await p.callTool('restore_file')
    await p.waitFor('Restore file?')
    await p.press('y')
    await p.waitFor('✔ ok')
    expect(readFileSync(join(p.root, 'src/index.ts'), 'utf8')).toBe(SAMPLE_FILES['src/index.ts'])
  })

  it('shows the cwd stack as cwd_push and cwd_pop change it; examples follow the cwd', async () => {
    await p.callTool('cwd_push') // example: src
    let frame = await p.waitFor('cwd stack (depth 1)')
    expect(frame).toContain('Pushed to')
    expect(frame).toMatch(/0 \.\s/)
    expect(frame).toMatch(/1 src\s+← cwd/)
    expect(p.ws.cwd().cwd).toBe(join(p.root, 'src'))

    await p.press(KEY.enter)
    await p.selectTool('read_file')
    await p.press(KEY.enter)
    await p.waitFor('"../README.md"') // the example path, relative to the new cwd
    await p.press(KEY.escape)

    await p.callTool('cwd_pop')
    frame = await p.waitFor('cwd stack (depth 0)')
    expect(frame).toContain('Popped to')
    expect(frame).toMatch(/0 \.\s+← cwd/)
  })

  it('keeps the editor open with an error for invalid JSON; Esc goes back', async () => {
    await p.callTool('read_file', '{"path": ')
    await p.waitFor('Not valid JSON')
    expect(p.frame()).toContain('Enter run')
    await p.press(KEY.escape)
    await p.waitFor('Pick a tool')
  })

  it('shows tool errors with their code', async () => {
    await p.callTool('read_file', '{"path":"missing.txt"}')
    const frame = await p.waitFor('✖ error NOT_FOUND')
    expect(frame).toContain(`file not found: ${join(p.root, 'missing.txt')}`)
  })

  it('the description of a tool wraps without a stray space at the start of a line', async () => {
    await p.selectTool('write_file')
    const lines = p.frame().split('\n')
    const start = lines.findIndex((line) => line.includes('write_file destructive'))
    expect(start).toBeGreaterThan(0)
    const column = lines[start]!.indexOf('write_file destructive')
    const description = lines.slice(start + 1, start + 10).map((line) => line.slice(column))
    expect(description[0]).toMatch(/^Create a file/)
    for (const line of description.slice(1)) expect(line).not.toMatch(/^ \S/)
  })

  it('denies a pending confirmation when the app is unmounted: nothing is written', async () => {
    await p.callTool('write_file', '{"path":"late.txt","content":"x"}')
    await p.waitFor('Write file?')
    p.app.unmount()
    await sleep(200)
    expect(existsSync(join(p.root, 'late.txt'))).toBe(false)
  })
})

describe('playground prompts and progress', () => {
  it('closes a prompt the call withdraws (confirmTimeoutMs), and shows the denial', async () => {
    const p = playground({ confirmTimeoutMs: 300 })
    await p.callTool('write_file', '{"path":"slow.txt","content":"x"}')
    await p.waitFor('Write file?')
    const frame = await p.waitFor('⊘ denied CONFIRM_TIMEOUT')
    expect(frame).not.toContain('Write file?')
    expect(existsSync(join(p.root, 'slow.txt'))).toBe(false)
    await p.press(KEY.enter)
    await p.waitFor('Pick a tool')
  })

  it('draws a bar for progress with a total, words without', () => {
    expect(progressBar({ done: 5, total: 10, unit: 'files' }, 10)).toBe('█████░░░░░')
    expect(progressBar({ done: 0, total: 4, unit: 'bytes' }, 4)).toBe('░░░░')
    expect(progressBar({ done: 9, total: 4, unit: 'bytes' }, 4)).toBe('████')
    expect(progressBar({ done: 9, unit: 'files' }, 4)).toBeUndefined()
  })
})
