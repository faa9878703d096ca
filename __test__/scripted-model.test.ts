/**
 * The scripted model the host tests drive real hosts with (`__test__/helpers/scripted-model.ts`):
 * what goes over the wire, as a host's OpenAI-compatible client reads it.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { startScriptedModel, type ScriptedModel, type TurnContext } from './helpers/scripted-model.js'

let model: ScriptedModel | undefined
afterEach(async () => {
  await model?.close()
  model = undefined
})

const TOOLS = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } }]
const seen: TurnContext[] = []

async function start() {
  seen.length = 0
  model = await startScriptedModel((context) => {
    seen.push(context)
    if (context.toolResults.length === 0) return { calls: [{ name: 'read_file', arguments: { path: 'a-rather-long-file-name.txt' } }] }
    return { text: `read: ${context.lastTool?.content}` }
  })
  return model
}

function chat(url: string, body: Record<string, unknown>) {
  return fetch(`${url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
}

describe('the scripted model', () => {
  it('streams a tool call as providers do: split over chunks, finish_reason, usage, [DONE]', async () => {
    const { baseURL, requests } = await start()
    const response = await chat(baseURL, { model: 'm', stream: true, tools: TOOLS, messages: [{ role: 'user', content: 'go' }] })
    expect(response.headers.get('content-type')).toBe('text/event-stream')
    const events = (await response.text()).split('\n\n').filter((e) => e !== '')
    expect(events.every((e) => e.startsWith('data: '))).toBe(true)
    expect(events.at(-1)).toBe('data: [DONE]')
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.slice(6)) as { choices: Array<{ delta: Record<string, any>; finish_reason: string | null }>; usage?: unknown })
    const deltas = chunks.flatMap((c) => c.choices.map((choice) => choice.delta.tool_calls?.[0]).filter(Boolean))
    expect(deltas[0]).toMatchObject({ index: 0, id: expect.any(String), type: 'function', function: { name: 'read_file', arguments: '' } })
    expect(deltas.length).toBeGreaterThanOrEqual(3)
    expect(deltas.slice(1).every((d) => d.id === undefined && d.function.name === undefined)).toBe(true)
    expect(JSON.parse(deltas.map((d) => d.function.arguments).join(''))).toEqual({ path: 'a-rather-long-file-name.txt' })
    expect(chunks.flatMap((c) => c.choices.map((choice) => choice.finish_reason)).filter(Boolean)).toEqual(['tool_calls'])
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: expect.any(Number) } })
    expect(requests).toHaveLength(1)
  })

  it('answers plain JSON without stream, each turn decided from the last tool message', async () => {
    const { baseURL, chats } = await start()
    const messages = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'hello' },
    ]
    const body = (await (await chat(baseURL, { model: 'm', tools: TOOLS, messages })).json()) as { choices: Array<{ message: unknown; finish_reason: string }> }
    expect(body.choices[0]).toEqual({ index: 0, message: { role: 'assistant', content: 'read: hello' }, finish_reason: 'stop' })
    expect(seen[0]).toMatchObject({ lastUser: 'go', turnsSinceUser: 1, lastTool: { content: 'hello', call: { name: 'read_file' } } })
    expect(chats()).toHaveLength(1)
  })

  it("answers a request without tools (a title) with text, and Ollama's /api/show", async () => {
    const { baseURL, origin } = await start()
    const body = (await (await chat(baseURL, { model: 'm', messages: [{ role: 'user', content: 'title?' }] })).json()) as { choices: Array<{ message: { content: string } }> }
    expect(body.choices[0]!.message.content).toBe('Scripted session')
    expect(seen).toHaveLength(0)
    const show = (await (await fetch(`${origin}/api/show`, { method: 'POST', body: '{}' })).json()) as { model_info: Record<string, number> }
    expect(Object.entries(show.model_info)[0]![0]).toMatch(/\.context_length$/)
  })
})
