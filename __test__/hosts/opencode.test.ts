/**
 * opencode (npm `opencode-ai`, its Linux binary) with `agent-fs-tools/opencode` as a project plugin
 * (`.opencode/plugin/agent-fs-tools.ts`, as the README shows it), the package and zod installed
 * from the packed tarball, opencode's own edit/write/patch turned off (`"permission": {"edit":
 * "deny"}`), against a scripted model:
 *
 * 1. `opencode run`: a batched edit, a patch over two files, a delete and a restore from the
 *    archive the model read, a write outside the project refused (reported as opencode reports a
 *    tool failure). Asserted on disk, on opencode's JSON events, and on what the model received
 *    (tool names prefixed, opencode's own edit tools absent, descriptions naming `fs_` tools).
 * 2. `opencode serve`, its permission requests answered over HTTP as its UI does: an edit
 *    approved (`once`), a patch over two files asked with both paths and rejected (nothing
 *    changed, the model told).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { writeTree } from '../helpers/files.js'
import { cachedTree, runtimePath } from '../helpers/runtimes.js'
import { startScriptedModel, type ScriptedModel, type Turn, type TurnContext } from '../helpers/scripted-model.js'

/** The opencode version tested (its npm package `opencode-ai`, whose Linux binary is `opencode-linux-x64`). */
const OPENCODE = '1.18.33'

const PLUGIN = `import { createOpencodePlugin } from 'agent-fs-tools/opencode'

export const AgentFsTools = createOpencodePlugin()
`

/** Bytes a text round trip would change. */
const NOTES = Buffer.from('naïve café\r\nno final newline', 'utf8')

const patchOver = (a: string, b: string, from: string, to: string) =>
  ['*** Begin Patch', `*** Update File: ${a}`, '@@', `-${from}`, `+${to}`, `*** Update File: ${b}`, '@@', `-${from}`, `+${to}`, '*** End Patch'].join('\n')

/** The model's side: one script per prompt, each step decided by the results so far. */
function script(outside: string): (context: TurnContext) => Turn {
  return ({ lastUser, toolResults, lastTool }) => {
    const step = toolResults.length
    if (lastUser.includes('run session')) {
      switch (step) {
        case 0:
          return { calls: [{ name: 'fs_edit_file', arguments: { path: 'src/app.ts', edits: [{ oldString: "'hello'", newString: "'hi'" }, { oldString: "'world'", newString: "'there'" }] } }] }
        case 1:
          return { calls: [{ name: 'fs_apply_patch', arguments: { input: patchOver('docs/a.md', 'docs/b.md', 'old', 'new') } }] }
        case 2:
          return { calls: [{ name: 'fs_delete_file', arguments: { path: 'notes.txt' } }] }
        case 3: {
          const archive = /"trashedPath": "([^"]+)"/.exec(lastTool?.content ?? '')?.[1]
          return archive === undefined ? { text: 'no archive' } : { calls: [{ name: 'fs_restore_file', arguments: { trashedPath: archive } }] }
        }
        case 4:
          return { calls: [{ name: 'fs_write_file', arguments: { path: join(outside, 'planted.txt'), content: 'x\n' } }] }
        default:
          return { text: 'Run done.' }
      }
    }
    if (lastUser.includes('serve session')) {
      switch (step) {
        case 0:
          return { calls: [{ name: 'fs_edit_file', arguments: { path: 'src/served.ts', edits: [{ oldString: 'before', newString: 'after' }] } }] }
        case 1:
          return { calls: [{ name: 'fs_apply_patch', arguments: { input: patchOver('docs/c.md', 'docs/d.md', 'keep', 'lose') } }] }
        default:
          return { text: 'Serve done.' }
      }
    }
    return { text: 'Nothing to do.' }
  }
}

/** `opencode.json`: the scripted model as an OpenAI-compatible provider, opencode's edit tools off, `extra` permissions. */
function writeConfig(project: string, model: ScriptedModel, extra: Record<string, string> = {}): void {
  writeFileSync(
    join(project, 'opencode.json'),
    JSON.stringify(
      {
        $schema: 'https://opencode.ai/config.json',
        provider: {
          scripted: {
            npm: '@ai-sdk/openai-compatible',
            name: 'Scripted',
            options: { baseURL: model.baseURL, apiKey: 'none' },
            models: { 'scripted-model': { name: 'Scripted model' } },
          },
        },
        model: 'scripted/scripted-model',
        permission: { edit: 'deny', ...extra },
      },
      null,
      2,
    ),
  )
}

/** What opencode installs for plugins (`@opencode-ai/plugin`, in the config directory and the project's `.opencode/`), installed once. */
function pluginDependencies(): string {
  return cachedTree(`hosts/opencode-${OPENCODE}-plugin-deps`, (dir) => {
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ dependencies: { '@opencode-ai/plugin': OPENCODE } }))
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] })
  })
}

describe(`opencode ${OPENCODE} with agent-fs-tools/opencode`, () => {
  /** Every process started here, ended after the tests whatever happened. */
  const children: ChildProcess[] = []
  let base: string
  let project: string
  let outside: string
  let env: Record<string, string>
  let opencode: string
  let model: ScriptedModel

  beforeAll(async () => {
    base = realpathSync(mkdtempSync(join(tmpdir(), 'afs-opencode-')))
    project = join(base, 'project')
    outside = join(base, 'outside')
    mkdirSync(outside)
    opencode = await runtimePath('opencode', OPENCODE)
    model = await startScriptedModel(script(outside))
    writeTree(project, {
      'src/app.ts': "const greeting = 'hello'\nconst target = 'world'\n",
      'src/served.ts': 'before\n',
      'docs/a.md': 'old\n',
      'docs/b.md': 'old\n',
      'docs/c.md': 'keep\n',
      'docs/d.md': 'keep\n',
      'notes.txt': NOTES,
      '.opencode/plugin/agent-fs-tools.ts': PLUGIN,
      '.gitignore': 'node_modules/\n.opencode/node_modules/\n',
    })
    // The package as a user installs it: `npm install agent-fs-tools zod`.
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', '--prefer-offline', inject('packedPackage'), 'zod@^4.2.0'], {
      cwd: project,
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    const git = (...args: string[]) => execFileSync('git', args, { cwd: project, stdio: 'ignore' })
    git('init', '-q', '-b', 'main')
    git('add', '.')
    git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'start')
    // What opencode would install on its first start (from the npm registry), made once.
    const deps = pluginDependencies()
    const home = join(base, 'home')
    for (const dir of [join(home, '.config', 'opencode'), join(project, '.opencode')]) {
      for (const entry of ['package.json', 'package-lock.json', 'node_modules']) cpSync(join(deps, entry), join(dir, entry), { recursive: true })
    }
    env = {
      PATH: process.env.PATH ?? '',
      HOME: home,
      TMPDIR: base,
      AGENT_FS_TOOLS_DATA_DIR: join(base, 'data'),
      OPENCODE_DISABLE_MODELS_FETCH: '1',
      OPENCODE_DISABLE_AUTOUPDATE: '1',
      OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    }
  })

  afterAll(async () => {
    for (const child of children) child.kill()
    await model?.close()
    if (base !== undefined) rmSync(base, { recursive: true, force: true })
  })

  it('opencode run: batched edit, a patch over two files, delete and restore, an outside path refused', async () => {
    writeConfig(project, model)
    const run = await output(opencode, ['run', '--format', 'json', 'run session'], { cwd: project, env })
    const events = run
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { type: string; part: { tool?: string; state?: { status: string; error?: string; output?: string; metadata?: Record<string, unknown> } } })
    const tools = events.filter((e) => e.type === 'tool_use').map((e) => e.part)

    // on disk
    expect(readFileSync(join(project, 'src/app.ts'), 'utf8')).toBe("const greeting = 'hi'\nconst target = 'there'\n")
    expect(readFileSync(join(project, 'docs/a.md'), 'utf8')).toBe('new\n')
    expect(readFileSync(join(project, 'docs/b.md'), 'utf8')).toBe('new\n')
    expect(readFileSync(join(project, 'notes.txt')).equals(NOTES)).toBe(true)
    expect(existsSync(join(outside, 'planted.txt'))).toBe(false)

    // opencode's view: four completed tools and one failure, the diff in the metadata
    expect(tools.map((t) => [t.tool, t.state?.status])).toEqual([
      ['fs_edit_file', 'completed'],
      ['fs_apply_patch', 'completed'],
      ['fs_delete_file', 'completed'],
      ['fs_restore_file', 'completed'],
      ['fs_write_file', 'error'],
    ])
    expect(tools[0]!.state!.metadata!['diff']).toContain("-const greeting = 'hello'\n-const target = 'world'\n+const greeting = 'hi'\n+const target = 'there'")
    expect(tools[1]!.state!.metadata!['diff']).toMatch(/--- a\/docs\/a\.md[\s\S]*--- a\/docs\/b\.md/)
    expect(tools[4]!.state!.error).toContain(join(outside, 'planted.txt'))

    // what the model received
    const chats = model.chats().filter((c) => c.messages.some((m) => m.role === 'user' && JSON.stringify(m.content).includes('run session')))
    const last = chats[chats.length - 1]!
    const offered = last.tools!.map((t) => t.function.name)
    expect(offered).toEqual(expect.arrayContaining(['fs_read_file', 'fs_edit_file', 'fs_apply_patch', 'fs_glob', 'fs_grep', 'fs_restore_file']))
    for (const own of ['edit', 'write', 'apply_patch']) expect(offered).not.toContain(own)
    const editDescription = last.tools!.find((t) => t.function.name === 'fs_edit_file')!.function.description!
    expect(editDescription).toContain('fs_read_file')
    expect(editDescription).not.toMatch(/\bread_file\b(?<!fs_read_file)/)
    const results = last.messages.filter((m) => m.role === 'tool').map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)))
    expect(results).toHaveLength(5)
    expect(results[1]).toMatch(/^Success\. Updated the following files:\nM docs\/a\.md\nM docs\/b\.md/)
    expect(results[3]).toContain(join(project, 'notes.txt'))
    expect(results[4]).toContain('outside the allowed directories')
  })

  it("opencode serve: an edit approved and a two-file patch rejected through its permission replies", async () => {
    writeConfig(project, model, { fs_edit_file: 'ask', fs_apply_patch: 'ask' })
    const port = await freePort()
    const server: ChildProcess = spawn(opencode, ['serve', '--print-logs', '--hostname', '127.0.0.1', '--port', String(port)], {
      cwd: project,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    children.push(server)
    let log = ''
    server.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')))
    const url = `http://127.0.0.1:${port}`
    try {
      await until(async () => (await fetch(`${url}/session`, { signal: AbortSignal.timeout(10_000) }).catch(() => undefined))?.ok === true, 'opencode serve to listen')
      const session = (await (await post(`${url}/session`, {})).json()) as { id: string }
      const prompted = await post(`${url}/session/${session.id}/prompt_async`, {
        parts: [{ type: 'text', text: 'serve session' }],
        model: { providerID: 'scripted', modelID: 'scripted-model' },
      })
      expect(prompted.ok).toBe(true)

      const edit = await pendingPermission(url, 'fs_edit_file')
      expect(edit.patterns).toEqual(['src/served.ts'])
      expect(edit.metadata['diff']).toContain('-before\n+after')
      expect(readFileSync(join(project, 'src/served.ts'), 'utf8')).toBe('before\n')
      expect((await post(`${url}/permission/${edit.id}/reply`, { reply: 'once' })).ok).toBe(true)

      const patch = await pendingPermission(url, 'fs_apply_patch')
      expect(readFileSync(join(project, 'src/served.ts'), 'utf8')).toBe('after\n')
      expect(patch.patterns).toEqual(['docs/c.md', 'docs/d.md'])
      expect((await post(`${url}/permission/${patch.id}/reply`, { reply: 'reject' })).ok).toBe(true)

      await until(async () => {
        const last = model.chats().at(-1)
        return last !== undefined && last.messages.filter((m) => m.role === 'tool').length === 2 && last.messages.some((m) => m.role === 'user' && JSON.stringify(m.content).includes('serve session'))
      }, 'the model to get both results')
      const results = model.chats().at(-1)!.messages.filter((m) => m.role === 'tool').map((m) => String(m.content))
      expect(results[0]).toContain('Edited')
      expect(results[1]).toContain('The user denied this patch.')
      expect(readFileSync(join(project, 'docs/c.md'), 'utf8')).toBe('keep\n')
      expect(readFileSync(join(project, 'docs/d.md'), 'utf8')).toBe('keep\n')
    } catch (error) {
      throw new Error(`${(error as Error).message}\nopencode serve's log:\n${log.split('\n').slice(-40).join('\n')}`, { cause: error })
    } finally {
      server.kill()
    }
  })
})

/**
 * Runs a command to its end and returns its stdout; throws with its stderr when it fails. Not
 * `execFileSync`: the scripted model answers from this process's event loop. stdin is closed
 * (`opencode run` reads a piped stdin into the message).
 */
function output(command: string, args: string[], options: { cwd: string; env: Record<string, string> }): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
    child.on('error', reject)
    child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`${command} ${args.join(' ')} exited with ${code}:\n${stderr}`))))
  })
}

interface PermissionRequest {
  id: string
  permission: string
  patterns: string[]
  metadata: Record<string, unknown>
}

function post(url: string, body: unknown): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(60_000) })
}

/** Waits for opencode's pending permission request for `permission`. */
async function pendingPermission(url: string, permission: string): Promise<PermissionRequest> {
  let found: PermissionRequest | undefined
  await until(async () => {
    const pending = (await (await fetch(`${url}/permission`, { signal: AbortSignal.timeout(60_000) })).json()) as PermissionRequest[]
    found = pending.find((p) => p.permission === permission)
    return found !== undefined
  }, `opencode to ask for ${permission}`)
  return found!
}

/** Polls `condition` until it holds (a deadline only bounds a hung run). */
async function until(condition: () => Promise<boolean>, what: string, ms = 120_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`waited for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

/** A free TCP port on 127.0.0.1. */
async function freePort(): Promise<number> {
  const { createServer } = await import('node:net')
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
    server.on('error', reject)
  })
}
