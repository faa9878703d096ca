/**
 * The Vercel AI SDK with a real provider, `@ai-sdk/openai-compatible`, against the scripted model
 * over HTTP: AI SDK 7 (with `@ai-sdk/openai-compatible` 3) on Node 22 from npm, and AI SDK 6 (with
 * `@ai-sdk/openai-compatible` 2) on this Node. In each:
 *
 * - `streamText` (streamed SSE: tool calls split over chunks) with the callback approval: a
 *   write and a batched edit approved by `confirm`;
 * - `generateText` (plain JSON) with `approval: 'sdk'`: `needsApproval` turns a write into the
 *   SDK's `tool-approval-request`; approved, it runs; denied, nothing is written and the model is
 *   told.
 *
 * Each runs in a child process of a project whose `ai` and `@ai-sdk/openai-compatible` are that
 * major's (linked from this repository's dev dependencies) and whose `agent-fs-tools` is this build.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runtimePath } from '../helpers/runtimes.js'
import { startScriptedModel, type ScriptedModel, type Turn, type TurnContext } from '../helpers/scripted-model.js'

const repo = resolve(__dirname, '..', '..')

/** The Node AI SDK 7 needs (22 or later). */
const NODE_22 = '22.23.3'

/** The host loop, as an application using the SDK writes it. Prints one JSON line. */
const HOST = `
import { readFileSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import { generateText, streamText, stepCountIs } from 'ai'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { Workspace } from 'agent-fs-tools'
import { createAiSdkTools } from 'agent-fs-tools/ai-sdk'

const [baseURL, root, dataDir, tag] = process.argv.slice(2)
const provider = createOpenAICompatible({ name: 'scripted', baseURL, apiKey: 'none', includeUsage: true })
const model = provider.chatModel('scripted-model')
const ws = new Workspace({ root, trash: { dataDir } })
const read = (name) => (existsSync(join(root, name)) ? readFileSync(join(root, name), 'utf8') : null)

// streamText, the callback approval
const asked = []
const streamed = streamText({
  model,
  tools: createAiSdkTools(ws, { confirm: (request) => (asked.push(request.label), true) }),
  prompt: tag + ' stream',
  stopWhen: stepCountIs(5),
})
const streamedText = await streamed.text

// generateText, the SDK's approval: once approved, once denied
const sdkTools = createAiSdkTools(ws, { approval: 'sdk' })
async function withApproval(prompt, approved) {
  const first = await generateText({ model, tools: sdkTools, prompt, stopWhen: stepCountIs(5) })
  const request = first.content.find((part) => part.type === 'tool-approval-request')
  const before = read(prompt.endsWith('approve') ? 'approved.txt' : 'denied.txt')
  const second = await generateText({
    model,
    tools: sdkTools,
    stopWhen: stepCountIs(5),
    messages: [
      { role: 'user', content: prompt },
      ...first.response.messages,
      { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: request.approvalId, approved, ...(approved ? {} : { reason: 'not now' }) }] },
    ],
  })
  return { requested: request?.toolCall?.toolName ?? null, before, text: second.text }
}
const approvedRun = await withApproval(tag + ' approve', true)
const deniedRun = await withApproval(tag + ' deny', false)

console.log(JSON.stringify({
  ai: JSON.parse(readFileSync(new URL(import.meta.resolve('ai/package.json')), 'utf8')).version,
  node: process.versions.node,
  streamedText, asked, app: read('src/app.ts'),
  approvedRun, approved: read('approved.txt'),
  deniedRun, denied: read('denied.txt'),
}))
`

/** The model's side, by prompt: `<tag> stream` writes and edits; `<tag> approve|deny` writes one file. */
function script({ lastUser, toolResults }: TurnContext): Turn {
  const [, mode] = lastUser.split(' ')
  if (mode === 'stream') {
    if (toolResults.length === 0) return { calls: [{ name: 'write_file', arguments: { path: 'src/app.ts', content: "const a = 'one'\nconst b = 'two'\n" } }] }
    if (toolResults.length === 1)
      return { calls: [{ name: 'edit_file', arguments: { path: 'src/app.ts', edits: [{ oldString: "'one'", newString: "'1'" }, { oldString: "'two'", newString: "'2'" }] } }] }
    return { text: 'Streamed and done.' }
  }
  if (mode === 'approve' || mode === 'deny') {
    if (toolResults.length === 0) return { calls: [{ name: 'write_file', arguments: { path: `${mode === 'approve' ? 'approved' : 'denied'}.txt`, content: `${mode}\n` } }] }
    return { text: `After ${mode}: ${toolResults[0]!.content}` }
  }
  return { text: 'Nothing to do.' }
}

/** A project whose `ai` and `@ai-sdk/openai-compatible` are `ai` and `compatible` (dev dependency names here). */
function project(base: string, ai: string, compatible: string): string {
  const dir = join(base, `project-${ai}`)
  const modules = join(dir, 'node_modules')
  mkdirSync(join(modules, '@ai-sdk'), { recursive: true })
  for (const name of readdirSync(join(repo, 'node_modules'))) {
    if (name.startsWith('.') || name === 'ai' || name === 'ai-v7' || name === 'agent-fs-tools' || name === '@ai-sdk') continue
    symlinkSync(join(repo, 'node_modules', name), join(modules, name))
  }
  for (const name of readdirSync(join(repo, 'node_modules', '@ai-sdk'))) {
    if (name.startsWith('openai-compatible')) continue
    symlinkSync(join(repo, 'node_modules', '@ai-sdk', name), join(modules, '@ai-sdk', name))
  }
  symlinkSync(join(repo, 'node_modules', ai), join(modules, 'ai'))
  symlinkSync(join(repo, 'node_modules', '@ai-sdk', compatible), join(modules, '@ai-sdk', 'openai-compatible'))
  const self = join(modules, 'agent-fs-tools')
  mkdirSync(self)
  for (const name of readdirSync(repo)) {
    if (name === 'package.json' || name === 'dist' || name === 'index.js' || name === 'index.d.ts' || name.endsWith('.node')) symlinkSync(join(repo, name), join(self, name))
  }
  writeFileSync(join(dir, 'host.mjs'), HOST)
  mkdirSync(join(dir, 'root', 'src'), { recursive: true })
  return dir
}

interface HostOutput {
  ai: string
  node: string
  streamedText: string
  asked: string[]
  app: string | null
  approvedRun: { requested: string | null; before: string | null; text: string }
  approved: string | null
  deniedRun: { requested: string | null; before: string | null; text: string }
  denied: string | null
}

/** Runs the host loop with `node` (async: the scripted model answers from this process). */
function runHost(node: string, dir: string, model: ScriptedModel, tag: string): Promise<HostOutput> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(
      node,
      ['--preserve-symlinks', '--preserve-symlinks-main', 'host.mjs', model.baseURL, join(dir, 'root'), join(dir, 'data'), tag],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TMPDIR: dir } },
    )
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
    child.on('error', reject)
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`the host exited with ${code}:\n${stderr}`))
      else resolvePromise(JSON.parse(stdout.trim().split('\n').pop()!) as HostOutput)
    })
  })
}

/** What the model sent and received in the requests of prompts starting with `tag`. */
function requestsOf(model: ScriptedModel, tag: string) {
  return model.chats().filter((chat) => chat.messages.some((m) => m.role === 'user' && JSON.stringify(m.content).includes(`${tag} `)))
}

describe.each([
  { major: 7, ai: 'ai-v7', compatible: 'openai-compatible-v3', node: NODE_22 },
  { major: 6, ai: 'ai', compatible: 'openai-compatible', node: undefined },
])('AI SDK $major with @ai-sdk/openai-compatible against the scripted model', ({ major, ai, compatible, node }) => {
  let base: string
  let model: ScriptedModel

  beforeAll(async () => {
    base = realpathSync(mkdtempSync(join(tmpdir(), `afs-ai${major}-`)))
    model = await startScriptedModel(script)
  })

  afterAll(async () => {
    await model?.close()
    if (base !== undefined) rmSync(base, { recursive: true, force: true })
  })

  it(`streamText with confirm, generateText with needsApproval approved and denied${node ? ` (Node ${node})` : ''}`, async () => {
    const dir = project(base, ai, compatible)
    const executable = node === undefined ? process.execPath : await runtimePath('node', node)
    const tag = `ai${major}`
    const out = await runHost(executable, dir, model, tag)

    expect(out.ai.split('.')[0]).toBe(String(major))
    if (node !== undefined) expect(out.node).toBe(node)
    // streamed: both calls approved through confirm, the file written then edited
    expect(out.asked).toEqual(['Write file?', 'Edit file?'])
    expect(out.app).toBe("const a = '1'\nconst b = '2'\n")
    expect(out.streamedText).toBe('Streamed and done.')
    // the SDK's approval: asked before anything was written; approved runs, denied does not
    expect(out.approvedRun).toEqual({ requested: 'write_file', before: null, text: expect.stringMatching(/^After approve: Created .*approved\.txt \(8 bytes, 1 line\)$/) })
    expect(out.approved).toBe('approve\n')
    expect(out.deniedRun.requested).toBe('write_file')
    expect(out.denied).toBeNull()

    // over the wire: streamed requests for streamText, plain ones for generateText
    const all = requestsOf(model, tag)
    const streamedRequests = all.filter((chat) => JSON.stringify(chat.messages).includes(`${tag} stream`))
    expect(streamedRequests.length).toBe(3)
    expect(streamedRequests.every((chat) => chat.stream === true)).toBe(true)
    const plain = all.filter((chat) => !JSON.stringify(chat.messages).includes(`${tag} stream`))
    expect(plain.length).toBeGreaterThan(0)
    expect(plain.every((chat) => !chat.stream)).toBe(true)
    // what the model received: the edit's diff, and the denial
    const editResult = streamedRequests[2]!.messages.filter((m) => m.role === 'tool')[1]!
    expect(String(editResult.content)).toContain("-const a = 'one'\n-const b = 'two'\n+const a = '1'\n+const b = '2'")
    const deniedRequest = all.filter((chat) => JSON.stringify(chat.messages).includes(`${tag} deny`)).at(-1)!
    const denial = deniedRequest.messages.filter((m) => m.role === 'tool').map((m) => String(m.content))
    expect(denial).toHaveLength(1)
    expect(denial[0]).toMatch(/denied|not now/i)
    expect(existsSync(join(dir, 'root', 'denied.txt'))).toBe(false)
    expect(readFileSync(join(dir, 'root', 'approved.txt'), 'utf8')).toBe('approve\n')
  })
})
