/**
 * A scripted model: a small fake OpenAI-compatible server for driving real hosts (Tomo, opencode,
 * the AI SDK's `@ai-sdk/openai-compatible`) through tool calls, the way a provider would.
 *
 * - `POST /v1/chat/completions`: with `stream: true`, server-sent events as providers stream them
 *   (`data: {…}` lines; a tool call's `delta.tool_calls` split over several chunks, its id and name
 *   first; `finish_reason: "tool_calls"` or `"stop"`; a usage chunk; `data: [DONE]`); without
 *   `stream`, one `chat.completion` JSON object.
 * - Each reply is decided by the script from the conversation the host sent: the last tool message
 *   (and the call it answers), the last user message, how many turns the model took since it.
 *   A later call can so use what an earlier result said (a trash archive's path).
 * - A request without tools (opencode's title generation) gets a short text reply, not the script.
 * - `GET /v1/models`, and Ollama's `POST /api/show` (Tomo probes it for the context window).
 * - Every request is logged, for assertions on what the model received.
 *
 * It listens on 127.0.0.1 on a free port, keeps no process alive (unref'd), and closes by itself
 * after `idleMs` without a request.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** A message of an OpenAI chat request. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool'
  content?: string | Array<{ type: string; text?: string }> | null
  tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>
  tool_call_id?: string
}

/** The body of a `POST /v1/chat/completions`. */
export interface ChatRequest {
  model: string
  messages: ChatMessage[]
  stream?: boolean
  tools?: Array<{ type: 'function'; function: { name: string; description?: string; parameters?: unknown } }>
  [key: string]: unknown
}

/** A request the server received. */
export interface LoggedRequest {
  method: string
  path: string
  body: unknown
}

/** A tool call the model makes. */
export interface ScriptedCall {
  name: string
  /** An object (sent as its JSON) or the raw arguments string. */
  arguments: Record<string, unknown> | string
}

/** One reply of the model: text, tool calls, or both. */
export interface Turn {
  text?: string
  calls?: ScriptedCall[]
}

/** What the script sees of the conversation to decide the next turn. */
export interface TurnContext {
  request: ChatRequest
  /** The text of the last user message. */
  lastUser: string
  /** How many assistant messages follow the last user message (0: the first reply to it). */
  turnsSinceUser: number
  /** The last message when it is a tool result: its text, and the call it answers. */
  lastTool: { content: string; call?: { name: string; arguments: string } } | undefined
  /** Every tool result since the last user message, oldest first. */
  toolResults: Array<{ content: string; call?: { name: string; arguments: string } }>
}

/** Decides the next turn. */
export type Script = (context: TurnContext) => Turn

/** A running scripted model. */
export interface ScriptedModel {
  /** `http://127.0.0.1:<port>` (Tomo's `baseUrl`). */
  origin: string
  /** `<origin>/v1` (the AI SDK's and opencode's `baseURL`). */
  baseURL: string
  /** Every request received, oldest first. */
  requests: LoggedRequest[]
  /** The chat requests that carried tools, oldest first. */
  chats(): ChatRequest[]
  close(): Promise<void>
}

/** The text of a message's content. */
export function textOf(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content
  if (Array.isArray(content)) return content.map((part) => part.text ?? '').join('')
  return ''
}

/** What the script sees of `request`. */
export function turnContext(request: ChatRequest): TurnContext {
  const messages = request.messages
  let lastUserAt = -1
  messages.forEach((message, i) => {
    if (message.role === 'user') lastUserAt = i
  })
  const calls = new Map<string, { name: string; arguments: string }>()
  for (const message of messages) {
    for (const call of message.tool_calls ?? []) calls.set(call.id, call.function)
  }
  const since = messages.slice(lastUserAt + 1)
  const toolResults = since
    .filter((m) => m.role === 'tool')
    .map((m) => {
      const call = m.tool_call_id === undefined ? undefined : calls.get(m.tool_call_id)
      return { content: textOf(m.content), ...(call !== undefined && { call }) }
    })
  const last = messages[messages.length - 1]
  return {
    request,
    lastUser: lastUserAt < 0 ? '' : textOf(messages[lastUserAt]!.content),
    turnsSinceUser: since.filter((m) => m.role === 'assistant').length,
    lastTool: last?.role === 'tool' ? toolResults[toolResults.length - 1] : undefined,
    toolResults,
  }
}

/** Splits `text` into up to three pieces (none empty unless `text` is). */
function pieces(text: string): string[] {
  if (text.length < 3) return [text]
  const third = Math.ceil(text.length / 3)
  return [text.slice(0, third), text.slice(third, 2 * third), text.slice(2 * third)]
}

let nextId = 0

/** The chunks of a streamed turn, as an OpenAI-compatible provider sends them. */
export function streamChunks(turn: Turn, model: string): unknown[] {
  const id = `chatcmpl-${++nextId}`
  const created = Math.floor(Date.now() / 1000)
  const chunk = (delta: unknown, finish: string | null = null) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  })
  const chunks: unknown[] = [chunk({ role: 'assistant', content: '' })]
  for (const piece of turn.text === undefined ? [] : pieces(turn.text)) chunks.push(chunk({ content: piece }))
  ;(turn.calls ?? []).forEach((call, index) => {
    const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments)
    chunks.push(chunk({ tool_calls: [{ index, id: `call_${nextId}_${index}`, type: 'function', function: { name: call.name, arguments: '' } }] }))
    for (const piece of pieces(args)) chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }))
  })
  chunks.push(chunk({}, turn.calls?.length ? 'tool_calls' : 'stop'))
  chunks.push({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 } })
  return chunks
}

/** A whole (not streamed) completion of `turn`. */
export function completion(turn: Turn, model: string): unknown {
  const id = `chatcmpl-${++nextId}`
  const calls = (turn.calls ?? []).map((call, index) => ({
    id: `call_${nextId}_${index}`,
    type: 'function',
    function: { name: call.name, arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments) },
  }))
  return {
    id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: turn.text ?? null, ...(calls.length > 0 && { tool_calls: calls }) },
        finish_reason: calls.length > 0 ? 'tool_calls' : 'stop',
      },
    ],
    usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
  }
}

async function bodyOf(request: IncomingMessage): Promise<string> {
  const parts: Buffer[] = []
  for await (const part of request) parts.push(part as Buffer)
  return Buffer.concat(parts).toString('utf8')
}

function json(response: ServerResponse, status: number, value: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' })
  response.end(JSON.stringify(value))
}

/** Starts a scripted model; it closes itself after `idleMs` (default 5 minutes) without a request. */
export async function startScriptedModel(script: Script, options: { idleMs?: number; model?: string } = {}): Promise<ScriptedModel> {
  const requests: LoggedRequest[] = []
  const modelId = options.model ?? 'scripted-model'
  let idle: NodeJS.Timeout | undefined
  const server = createServer((request, response) => {
    void (async () => {
      armIdle()
      const raw = await bodyOf(request)
      let body: unknown = raw
      try {
        body = raw === '' ? undefined : JSON.parse(raw)
      } catch {
        // Logged as the raw text.
      }
      const path = (request.url ?? '/').split('?')[0]!
      requests.push({ method: request.method ?? 'GET', path, body })
      if (path.endsWith('/models') && request.method === 'GET') {
        json(response, 200, { object: 'list', data: [{ id: modelId, object: 'model', owned_by: 'scripted', context_length: 128_000 }] })
      } else if (path === '/api/show') {
        json(response, 200, { model_info: { 'scripted.context_length': 128_000 } })
      } else if (path.endsWith('/chat/completions') && request.method === 'POST') {
        const chat = body as ChatRequest
        let turn: Turn
        try {
          turn = chat.tools?.length ? script(turnContext(chat)) : { text: 'Scripted session' }
        } catch (error) {
          json(response, 500, { error: { message: `the script failed: ${(error as Error).message}` } })
          return
        }
        if (chat.stream) {
          response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
          for (const chunk of streamChunks(turn, chat.model)) response.write(`data: ${JSON.stringify(chunk)}\n\n`)
          response.end('data: [DONE]\n\n')
        } else {
          json(response, 200, completion(turn, chat.model))
        }
      } else {
        json(response, 404, { error: { message: `no route ${request.method} ${path}` } })
      }
    })().catch((error: unknown) => {
      if (!response.headersSent) json(response, 500, { error: { message: String(error) } })
      else response.end()
    })
  })
  function armIdle(): void {
    if (idle !== undefined) clearTimeout(idle)
    idle = setTimeout(() => server.close(), options.idleMs ?? 300_000)
    idle.unref()
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  server.unref()
  armIdle()
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    origin,
    baseURL: `${origin}/v1`,
    requests,
    chats: () =>
      requests
        .filter((r) => r.path.endsWith('/chat/completions') && ((r.body as ChatRequest | undefined)?.tools?.length ?? 0) > 0)
        .map((r) => r.body as ChatRequest),
    close: () =>
      new Promise<void>((resolve) => {
        if (idle !== undefined) clearTimeout(idle)
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
