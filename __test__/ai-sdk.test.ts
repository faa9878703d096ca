/** `agent-fs-tools/ai-sdk`: AI SDK 6 tools, checked directly and through `generateText` with a mock model. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { generateText, stepCountIs } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { describe, expect, it, vi } from 'vitest'
import { createAiSdkTools, toModelOutput } from 'agent-fs-tools/ai-sdk'
import { tempWorkspace } from './helpers/temp.js'

const callOptions = { toolCallId: 'call-1', messages: [] }

describe('createAiSdkTools shape', () => {
  it('has one tool per definition with description, JSON Schema input and execute', () => {
    const { ws } = tempWorkspace({ tools: { read_file: { name: 'view_file' } } })
    const tools = createAiSdkTools(ws)
    const defs = ws.definitions()
    expect(Object.keys(tools)).toEqual(defs.map((d) => d.name))
    for (const def of defs) {
      const t = tools[def.name]!
      expect(t.description).toBe(def.description)
      expect((t.inputSchema as { jsonSchema: unknown }).jsonSchema).toEqual(def.inputSchema)
      expect(typeof t.execute).toBe('function')
      expect(typeof t.toModelOutput).toBe('function')
    }
  })
})

describe('execute', () => {
  it('runs the call with the confirm option and resolves to the ToolResult', async () => {
    const { ws, root } = tempWorkspace()
    const confirm = vi.fn(() => true)
    const tools = createAiSdkTools(ws, { confirm })
    const result = await tools.write_file!.execute!({ path: 'a.txt', content: 'hi\n' }, callOptions)
    expect(result).toMatchObject({ status: 'ok', diff: expect.stringContaining('+hi') })
    expect(confirm).toHaveBeenCalledWith(expect.objectContaining({ label: 'Write file?' }))
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('hi\n')
  })

  it('falls back to the workspace confirm and honours the permissions option', async () => {
    const { ws } = tempWorkspace({ confirm: () => false })
    expect((await createAiSdkTools(ws).write_file!.execute!({ path: 'a.txt', content: 'x' }, callOptions)).status).toBe('denied')
    const granted = createAiSdkTools(ws, { permissions: { cwdWriteFile: true } })
    expect((await granted.write_file!.execute!({ path: 'a.txt', content: 'x' }, callOptions)).status).toBe('ok')
  })

  it('wires abortSignal', async () => {
    const { ws, root } = tempWorkspace({ confirm: () => true })
    const controller = new AbortController()
    controller.abort()
    const result = await createAiSdkTools(ws).write_file!.execute!(
      { path: 'a.txt', content: 'x' },
      { ...callOptions, abortSignal: controller.signal },
    )
    expect(result).toMatchObject({ status: 'error', code: 'ABORTED' })
    expect(existsSync(join(root, 'a.txt'))).toBe(false)
  })
})

describe('toModelOutput', () => {
  it('maps ok, denied and error', () => {
    expect(toModelOutput({ status: 'ok', output: 'done' })).toEqual({ type: 'text', value: 'done' })
    expect(toModelOutput({ status: 'denied', output: 'The user denied this write.' })).toEqual({
      type: 'execution-denied',
      reason: 'The user denied this write.',
    })
    expect(toModelOutput({ status: 'error', code: 'NOT_FOUND', output: 'file not found: /x' })).toEqual({
      type: 'error-text',
      value: 'file not found: /x',
    })
  })
})

describe('with generateText', () => {
  const usage = {
    inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 1, text: 1, reasoning: undefined },
  }

  it('executes a model tool call and sends the output text back to the model', async () => {
    const { ws, root } = tempWorkspace({ confirm: () => true })
    const model = new MockLanguageModelV3({
      doGenerate: [
        {
          content: [
            { type: 'tool-call', toolCallId: 'c1', toolName: 'write_file', input: JSON.stringify({ path: 'n.txt', content: 'note\n' }) },
          ],
          finishReason: { unified: 'tool-calls', raw: undefined },
          usage,
          warnings: [],
        },
        {
          content: [{ type: 'text', text: 'Wrote it.' }],
          finishReason: { unified: 'stop', raw: undefined },
          usage,
          warnings: [],
        },
      ],
    })
    const result = await generateText({ model, tools: createAiSdkTools(ws), prompt: 'write a note', stopWhen: stepCountIs(3) })
    expect(result.text).toBe('Wrote it.')
    expect(readFileSync(join(root, 'n.txt'), 'utf8')).toBe('note\n')
    const toolResult = result.steps[0]!.toolResults[0]!
    expect(toolResult.output).toMatchObject({ status: 'ok' })
    const secondPrompt = JSON.stringify(model.doGenerateCalls[1]!.prompt)
    expect(secondPrompt).toContain('Created ')
    expect(secondPrompt).toContain('"type":"text"')
  })
})

describe("approval: 'sdk' (the AI SDK's own tool approval)", () => {
  const usage = {
    inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 1, text: 1, reasoning: undefined },
  }
  const toolCall = (toolCallId: string, toolName: string, input: unknown) => ({
    content: [{ type: 'tool-call' as const, toolCallId, toolName, input: JSON.stringify(input) }],
    finishReason: { unified: 'tool-calls' as const, raw: undefined },
    usage,
    warnings: [],
  })
  const text = (value: string) => ({
    content: [{ type: 'text' as const, text: value }],
    finishReason: { unified: 'stop' as const, raw: undefined },
    usage,
    warnings: [],
  })

  it('a call that needs approval stops for the SDK; approved, it runs without asking again', async () => {
    const confirm = vi.fn(() => false)
    const { ws, root } = tempWorkspace({ confirm })
    const tools = createAiSdkTools(ws, { approval: 'sdk' })
    const model = new MockLanguageModelV3({ doGenerate: [toolCall('c1', 'write_file', { path: 'n.txt', content: 'note\n' }), text('Wrote it.')] })
    const first = await generateText({ model, tools, prompt: 'write a note', stopWhen: stepCountIs(3) })
    const request = first.content.find((part) => part.type === 'tool-approval-request')
    expect(request).toMatchObject({ type: 'tool-approval-request', toolCall: { toolCallId: 'c1', toolName: 'write_file' } })
    expect(existsSync(join(root, 'n.txt'))).toBe(false)

    const approvalId = (request as { approvalId: string }).approvalId
    const second = await generateText({
      model,
      tools,
      stopWhen: stepCountIs(3),
      messages: [
        { role: 'user', content: 'write a note' },
        ...first.response.messages,
        { role: 'tool', content: [{ type: 'tool-approval-response', approvalId, approved: true }] },
      ],
    })
    expect(second.text).toBe('Wrote it.')
    expect(readFileSync(join(root, 'n.txt'), 'utf8')).toBe('note\n')
    // The workspace's own handler (which says no) was never asked.
    expect(confirm).not.toHaveBeenCalled()
  })

  it('a call the permissions grant runs at once; a denied approval changes nothing', async () => {
    const { ws, root } = tempWorkspace()
    writeFileSync(join(root, 'r.txt'), 'read me\n')
    const tools = createAiSdkTools(ws, { approval: 'sdk' })
    const model = new MockLanguageModelV3({
      doGenerate: [toolCall('c1', 'read_file', { path: 'r.txt' }), text('Read it.'), toolCall('c2', 'write_file', { path: 'w.txt', content: 'x' }), text('Not written.')],
    })
    const read = await generateText({ model, tools, prompt: 'read', stopWhen: stepCountIs(3) })
    expect(read.text).toBe('Read it.')
    expect(read.steps[0]!.toolResults[0]!.output).toMatchObject({ status: 'ok' })

    const write = await generateText({ model, tools, prompt: 'write', stopWhen: stepCountIs(1) })
    const request = write.content.find((part) => part.type === 'tool-approval-request') as { approvalId: string }
    const denied = await generateText({
      model,
      tools,
      stopWhen: stepCountIs(1),
      messages: [
        { role: 'user', content: 'write' },
        ...write.response.messages,
        { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: request.approvalId, approved: false }] },
      ],
    })
    expect(denied.text).toBe('Not written.')
    expect(existsSync(join(root, 'w.txt'))).toBe(false)
  })

  it('execute without an SDK approval falls back to the callback, or is denied as nobody could be asked', async () => {
    const { ws, root } = tempWorkspace()
    const bare = await createAiSdkTools(ws, { approval: 'sdk' }).write_file!.execute!({ path: 'a.txt', content: 'x' }, callOptions)
    expect(bare).toMatchObject({ status: 'denied', code: 'NO_CONFIRM_HANDLER' })
    const confirm = vi.fn(() => true)
    const withCallback = await createAiSdkTools(ws, { approval: 'sdk', confirm }).write_file!.execute!({ path: 'a.txt', content: 'x' }, callOptions)
    expect(withCallback.status).toBe('ok')
    expect(confirm).toHaveBeenCalledOnce()
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('x')
  })

  it('the default stays the callback: no needsApproval', () => {
    const { ws } = tempWorkspace()
    expect(createAiSdkTools(ws).write_file!.needsApproval).toBeUndefined()
    expect(typeof createAiSdkTools(ws, { approval: 'sdk' }).write_file!.needsApproval).toBe('function')
    expect(() => createAiSdkTools(ws, { approval: 'ui' as never })).toThrow(TypeError)
  })
})
