/**
 * The `ai` peer range (`^6 || ^7`) is what is tested: AI SDK 7 runs our tools through
 * `generateText` with its mock model, callback and `approval: 'sdk'` alike. AI SDK 7 is installed
 * as the dev dependency `ai-v7`; a child Node process sees it as `ai` from a temporary project
 * whose `node_modules` links this package (without its own `node_modules`, so `agent-fs-tools/ai-sdk`
 * imports AI SDK 7 too) and every other dependency.
 */
import { spawnSync } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { expect, it } from 'vitest'
import { tempWorkspaceDirs } from './helpers/temp.js'
import { scaled } from './helpers/time.js'
import { symlinkOrSkip } from './helpers/links.js'

const repo = resolve(__dirname, '..')

/** A link at `path` to `target`: a junction for a directory, which Windows makes without a privilege. */
function link(target: string, path: string): void {
  symlinkOrSkip(target, path, statSync(target).isDirectory() ? 'junction' : 'file')
}

/** A project whose `ai` is AI SDK 7 and whose `agent-fs-tools` is this package's build. */
function projectWithAi7(): string {
  const project = tempWorkspaceDirs().root
  const modules = join(project, 'node_modules')
  mkdirSync(modules)
  for (const name of readdirSync(join(repo, 'node_modules'))) {
    if (name.startsWith('.') || name === 'ai' || name === 'agent-fs-tools') continue
    link(join(repo, 'node_modules', name), join(modules, name))
  }
  link(join(repo, 'node_modules/ai-v7'), join(modules, 'ai'))
  const self = join(modules, 'agent-fs-tools')
  mkdirSync(self)
  for (const name of readdirSync(repo)) {
    if (name === 'package.json' || name === 'dist' || name === 'index.js' || name === 'index.d.ts' || name.endsWith('.node')) {
      link(join(repo, name), join(self, name))
    }
  }
  return project
}

const SCRIPT = `
import { createRequire } from 'node:module'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generateText, stepCountIs } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'
import { Workspace } from 'agent-fs-tools'
import { createAiSdkTools } from 'agent-fs-tools/ai-sdk'

const adapter = createRequire(import.meta.resolve('agent-fs-tools/ai-sdk'))
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: 1, reasoning: undefined } }
const call = (id, input) => ({ content: [{ type: 'tool-call', toolCallId: id, toolName: 'write_file', input: JSON.stringify(input) }], finishReason: { unified: 'tool-calls', raw: undefined }, usage, warnings: [] })
const text = (value) => ({ content: [{ type: 'text', text: value }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] })
const base = mkdtempSync(join(tmpdir(), 'ai7-'))
const root = join(base, 'root')
const { mkdirSync } = await import('node:fs')
mkdirSync(root)
const ws = new Workspace({ root, trash: { dataDir: join(base, 'data') }, confirm: () => true })

const model = new MockLanguageModelV4({ doGenerate: [call('c1', { path: 'a.txt', content: 'callback\\n' }), text('done'), call('c2', { path: 'b.txt', content: 'sdk\\n' }), text('approved')] })
const first = await generateText({ model, tools: createAiSdkTools(ws), prompt: 'a', stopWhen: stepCountIs(3) })
const sdkTools = createAiSdkTools(new Workspace({ root, trash: { dataDir: join(base, 'data') } }), { approval: 'sdk' })
const asked = await generateText({ model, tools: sdkTools, prompt: 'b', stopWhen: stepCountIs(3) })
const request = asked.content.find((part) => part.type === 'tool-approval-request')
const beforeApproval = existsSync(join(root, 'b.txt'))
const approved = await generateText({ model, tools: sdkTools, stopWhen: stepCountIs(3), messages: [
  { role: 'user', content: 'b' }, ...asked.response.messages,
  { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: request.approvalId, approved: true }] },
] })
console.log(JSON.stringify({
  aiSeenByAdapter: JSON.parse(readFileSync(adapter.resolve('ai/package.json'), 'utf8')).version,
  first: first.text, a: readFileSync(join(root, 'a.txt'), 'utf8'),
  requested: request?.toolCall?.toolName, beforeApproval,
  approved: approved.text, b: readFileSync(join(root, 'b.txt'), 'utf8'),
}))
`

it('AI SDK 7: generateText runs the tools, and approval "sdk" asks through the SDK, then runs the approved call', () => {
  const project = projectWithAi7()
  writeFileSync(join(project, 'run.mjs'), SCRIPT)
  const run = spawnSync(process.execPath, ['--preserve-symlinks', '--preserve-symlinks-main', 'run.mjs'], { cwd: project, encoding: 'utf8', timeout: scaled(60_000), env: { ...process.env, TMPDIR: project } })
  expect(run.stderr).not.toMatch(/Error/)
  expect(run.status).toBe(0)
  const seen = JSON.parse(run.stdout.trim().split('\n').pop()!) as Record<string, unknown>
  expect(seen).toEqual({
    aiSeenByAdapter: JSON.parse(readFileSync(join(repo, 'node_modules/ai-v7/package.json'), 'utf8')).version,
    first: 'done',
    a: 'callback\n',
    requested: 'write_file',
    beforeApproval: false,
    approved: 'approved',
    b: 'sdk\n',
  })
  expect(String(seen['aiSeenByAdapter'])).toMatch(/^7\./)
})

it('the peer range names the majors tested', () => {
  const manifest = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string>; devDependencies: Record<string, string> }
  expect(manifest.peerDependencies['ai']).toBe('^6.0.0 || ^7.0.0')
  expect(manifest.devDependencies['ai']).toMatch(/^\^6\./)
  expect(manifest.devDependencies['ai-v7']).toMatch(/^npm:ai@\^7\./)
})
