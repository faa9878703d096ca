/**
 * Tomo's real TUI, with our tools registered the way `examples/tomo/` shows, driven in tmux by a
 * person's keys against a scripted model:
 *
 * 1. Tomo's own build (`tsup`, its configuration unchanged; our loader names the binary at run
 *    time, so its `noExternal: [/.*\/]` bundles the package), the session run from `dist/tomo.js`
 *    on Node 22; and Tomo's own type check over the integration.
 * 2. Tomo as it ships: its single executable (`node --build-sea`, Node 26), our addon a SEA asset
 *    extracted by `agent-fs-tools/sea`; the same session.
 *
 * The session: `remove_file` approved, then `restore_file` of the archive path the model read in
 * that result (byte-exact); a recursive `remove_dir` whose prompt shows the blast radius, denied
 * with `n` (tree intact, the model told); a write outside the project refused without a prompt
 * (Tomo's default permissions grant no `global*` key); a batched `edit_file` whose prompt shows the
 * diff, approved with `y`; an `apply_patch` over two files, approved, shown as Tomo shows plain
 * results; then the user's `/undo`, which takes the patch back. Asserted on disk, on the screen,
 * and on what the model received.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { writeTree } from '../helpers/files.js'
import { runtimePath } from '../helpers/runtimes.js'
import { startScriptedModel, type ScriptedModel, type TurnContext, type Turn } from '../helpers/scripted-model.js'
import { startTerminal, type Terminal } from '../helpers/tmux.js'
import { buildTomo, buildTomoSea, pathWith, prepareTomo, SEA_NODE, TOMO_NODE, tomoMissing } from '../helpers/tomo-host.js'

const missing = tomoMissing() ?? (inject('tmux') === null ? inject('tmuxMissing') : undefined)

/** `notes.txt`: bytes a text round trip would change (no final newline, CRLF, non-ASCII). */
const NOTES = Buffer.from('naïve café\r\nline two\twith a tab', 'utf8')
const APP = "const greeting = 'hello'\nconst target = 'world'\nconsole.log(greeting, target)\n"
/** 3 files and 2 directories, 280 bytes. */
const BUILD = { 'build/out.js': 'x'.repeat(100), 'build/assets/logo.svg': 'y'.repeat(80), 'build/assets/fonts/a.woff': 'z'.repeat(100) }
const DOCS = { 'docs/a.md': '# A\n\nold a\n', 'docs/b.md': '# B\n\nold b\n' }
const PATCH = [
  '*** Begin Patch',
  '*** Update File: docs/a.md',
  '@@',
  '-old a',
  '+new a',
  '*** Update File: docs/b.md',
  '@@',
  '-old b',
  '+new b',
  '*** End Patch',
].join('\n')

const PROMPT = 'Tidy up the project'

/** The model's side of the session, decided from the tool results it gets back. */
function script(outside: string): (context: TurnContext) => Turn {
  // By the results so far: Tomo sends all of a conversation's tool calls in one assistant message.
  return ({ lastUser, toolResults, lastTool }) => {
    if (lastUser !== PROMPT) return { text: 'Nothing to do.' }
    switch (toolResults.length) {
      case 0:
        return { calls: [{ name: 'remove_file', arguments: { path: 'notes.txt' } }] }
      case 1: {
        const archive = /"trashedPath": "([^"]+)"/.exec(lastTool?.content ?? '')?.[1]
        if (archive === undefined) return { text: `no archive in: ${lastTool?.content}` }
        return { calls: [{ name: 'restore_file', arguments: { trashedPath: archive } }] }
      }
      case 2:
        return { calls: [{ name: 'remove_dir', arguments: { path: 'build', recursive: true } }] }
      case 3:
        return { calls: [{ name: 'write_file', arguments: { path: join(outside, 'planted.txt'), content: 'x\n' } }] }
      case 4:
        return {
          calls: [
            {
              name: 'edit_file',
              arguments: {
                path: 'src/app.ts',
                edits: [
                  { oldString: "'hello'", newString: "'hi'" },
                  { oldString: "'world'", newString: "'there'" },
                ],
              },
            },
          ],
        }
      case 5:
        return { calls: [{ name: 'apply_patch', arguments: { input: PATCH } }] }
      default:
        return { text: 'All done.' }
    }
  }
}

/** A project Tomo runs in: a git repository with a commit (Tomo fails in one without). */
function makeProject(base: string): { project: string; outside: string; home: string } {
  const project = join(base, 'project')
  const outside = join(base, 'outside')
  const home = join(base, 'home')
  mkdirSync(outside)
  mkdirSync(home)
  writeTree(project, { 'notes.txt': NOTES, 'src/app.ts': APP, ...BUILD, ...DOCS })
  const git = (...args: string[]) => execFileSync('git', args, { cwd: project, stdio: 'ignore' })
  git('init', '-q', '-b', 'main')
  git('add', '.')
  git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'start')
  return { project, outside, home }
}

/** Tomo's `~/.tomo/config.yaml`: the scripted model as an Ollama-type provider, Tomo's default permissions. */
function writeConfig(home: string, model: ScriptedModel): void {
  mkdirSync(join(home, '.tomo'))
  writeFileSync(
    join(home, '.tomo', 'config.yaml'),
    [
      'activeProvider: scripted',
      'activeModel: scripted-model',
      'providers:',
      '  - name: scripted',
      '    type: ollama',
      `    baseUrl: ${model.origin}`,
      'permissions:',
      '  cwdReadFile: true',
      '',
    ].join('\n'),
  )
}

/** The tool messages of the model's last request, in order. */
function toolMessages(model: ScriptedModel): string[] {
  const chats = model.chats()
  const last = chats[chats.length - 1]!
  return last.messages.filter((m) => m.role === 'tool').map((m) => String(m.content))
}

/** Runs the whole session in `command` (Tomo started in `project`), asserting as it goes. */
async function session(command: string[], base: string, node: string): Promise<void> {
  const { project, outside, home } = makeProject(base)
  const model = await startScriptedModel(script(outside))
  writeConfig(home, model)
  const terminal: Terminal = startTerminal(command, {
    tmux: inject('tmux')!,
    cwd: project,
    env: { HOME: home, PATH: pathWith(node), TERM: 'xterm-256color', LANG: 'C.UTF-8', TMPDIR: base },
  })
  try {
    await terminal.waitFor((s) => /❯/.test(s), "Tomo's input")
    await terminal.submit(PROMPT)

    // delete, then restore from the archive path the model read
    let screen = await terminal.waitFor((s) => s.includes('Remove file?'), 'the delete prompt')
    expect(screen).toContain(join(project, 'notes.txt'))
    terminal.press('y')
    screen = await terminal.waitFor((s) => s.includes('Restore file?'), 'the restore prompt')
    expect(existsSync(join(project, 'notes.txt'))).toBe(false)
    terminal.press('y')

    // a recursive removal: "Remove directory recursively?" and the blast radius, denied
    screen = await terminal.waitFor((s) => s.includes('Remove directory recursively?'), 'the recursive removal prompt')
    expect(readFileSync(join(project, 'notes.txt')).equals(NOTES)).toBe(true)
    expect(screen).toContain(`${join(project, 'build')} (recursive): 3 files and 2 directories, 280 bytes (largest:`)
    terminal.press('n')

    // the edit's prompt shows its diff above Tomo's approval panel
    screen = await terminal.waitFor((s) => s.includes('Edit file?'), 'the edit prompt')
    expect(screen).toMatch(/@@ -1,3 \+1,3 @@\s*\n\s*-const greeting = 'hello'\s*\n\s*-const target = 'world'\s*\n\s*\+const greeting = 'hi'\s*\n\s*\+const target = 'there'/)
    expect(screen).toContain(join(project, 'src/app.ts'))
    expect(readFileSync(join(project, 'src/app.ts'), 'utf8')).toBe(APP)
    terminal.press('y')

    // the patch: one prompt naming both files, each file's hunks under its name
    screen = await terminal.waitFor((s) => s.includes('Apply patch?'), 'the patch prompt')
    expect(screen).toContain(`update ${join(project, 'docs/a.md')} (+1 -1)`)
    expect(screen).toContain(`update ${join(project, 'docs/b.md')} (+1 -1)`)
    expect(screen).toMatch(/docs\/a\.md\s*\n\s*@@ -1,3 \+1,3 @@/)
    terminal.press('y')
    await terminal.waitFor((s) => s.includes('All done.'), 'the end of the turn')

    // on disk
    expect(readFileSync(join(project, 'src/app.ts'), 'utf8')).toBe(APP.replace("'hello'", "'hi'").replace("'world'", "'there'"))
    expect(readFileSync(join(project, 'docs/a.md'), 'utf8')).toBe('# A\n\nnew a\n')
    expect(readFileSync(join(project, 'docs/b.md'), 'utf8')).toBe('# B\n\nnew b\n')
    for (const [file, content] of Object.entries(BUILD)) expect(readFileSync(join(project, file), 'utf8')).toBe(content)
    expect(existsSync(join(outside, 'planted.txt'))).toBe(false)

    // what the model received (as Tomo words results for it)
    const results = toolMessages(model)
    expect(results).toHaveLength(6)
    const archive = /"trashedPath": "([^"]+)"/.exec(results[0]!)?.[1]
    expect(archive).toBeDefined()
    expect(results[1]).toContain(join(project, 'notes.txt'))
    expect(results[1]).toContain(archive)
    expect(results[2]).toMatch(/^DENIED: The user denied this/)
    expect(results[3]).toMatch(/^ERROR: /)
    expect(results[3]).toContain(join(outside, 'planted.txt'))
    expect(results[4]).toMatch(/^Edit applied successfully\. Unified diff:\n@@ /)
    // apply_patch is plain: the model gets the patch's own words, not Tomo's preamble for diffs
    expect(results[5]!.startsWith('Success. Updated the following files:\nM docs/a.md\nM docs/b.md\n')).toBe(true)

    // on the screen: human tool names (Ink wraps "Restore from Trash" beside its long path), and the
    // patch's result shown as Tomo shows plain text (its tail)
    const transcript = terminal.transcript()
    for (const header of ['Remove File notes.txt', 'Restore from', 'Remove Directory build (recursive)', 'Edit File src/app.ts (2 edits)', 'Apply Patch docs/a.md, docs/b.md']) {
      expect(transcript).toContain(header)
    }
    expect(transcript).not.toContain('Remove Dir ')
    expect(transcript).toMatch(/…\[\d+ more lines\]/)

    // the user's /undo takes the patch back
    // Tomo's first Enter takes the command from its autocomplete list ("/undo "), the second runs it.
    await terminal.submit('/undo')
    await terminal.waitFor((s) => !s.includes("Undo the agent's latest file change"), 'the autocomplete list to close')
    terminal.press('Enter')
    await terminal.waitFor((s) => /Undid/.test(s), 'the /undo output')
    expect(readFileSync(join(project, 'docs/a.md'), 'utf8')).toBe(DOCS['docs/a.md'])
    expect(readFileSync(join(project, 'docs/b.md'), 'utf8')).toBe(DOCS['docs/b.md'])
    expect(readFileSync(join(project, 'src/app.ts'), 'utf8')).not.toBe(APP)
  } finally {
    terminal.close()
    await model.close()
  }
}

describe.skipIf(missing !== undefined)(`Tomo's TUI${missing === undefined ? '' : ` (skipped: ${missing})`}`, () => {
  let work: string
  let tomo: string
  let node22: string

  beforeAll(async () => {
    work = realpathSync(mkdtempSync(join(tmpdir(), 'afs-tomo-')))
    node22 = await runtimePath('node', TOMO_NODE)
    tomo = prepareTomo(work, inject('packedPackage'), node22)
  })

  afterAll(() => {
    if (work !== undefined) rmSync(work, { recursive: true, force: true })
  })

  it("Tomo's own build, unchanged configuration, run from dist/tomo.js on Node 22: the whole session", async () => {
    const dist = buildTomo(tomo, node22)
    const base = mkdtempSync(join(work, 'run-'))
    await session([node22, dist], base, node22)
  })

  it("the integration type-checks against Tomo's own types (its tsc --noEmit, strict)", () => {
    const tsc = join(tomo, 'node_modules', 'typescript', 'bin', 'tsc')
    const run = spawnSync(node22, [tsc, '--noEmit', '-p', tomo], { cwd: tomo, encoding: 'utf8' })
    expect(run.stdout + run.stderr).toBe('')
    expect(run.status).toBe(0)
  })

  it('Tomo as it ships: its single executable (node --build-sea, Node 26), the addon a SEA asset: the whole session', async () => {
    const node26 = await runtimePath('node', SEA_NODE)
    if (!existsSync(join(tomo, 'dist', 'tomo.js'))) buildTomo(tomo, node22)
    const executable = buildTomoSea(tomo, node26)
    const base = mkdtempSync(join(work, 'sea-'))
    await session([executable], base, node22)
    // The addon came out of the executable into the cache directory of the (test's) user.
    expect(execFileSync('sh', ['-c', `ls ${join(base, 'home', '.cache', 'agent-fs-tools')}`], { encoding: 'utf8' })).toMatch(/^agent-fs-tools-[0-9a-f]{32}\.node$/m)
  })
})
