/**
 * The server's stdio transport: newline-delimited JSON-RPC on stdin/stdout, as the SDK's
 * `StdioServerTransport` speaks it, but one message too large or malformed is answered, never the
 * end of the session. The SDK's transport keeps at most 10 MiB of unread input and closes itself
 * (and so the server, which then exits) when a message is longer (`ReadBuffer` in
 * `@modelcontextprotocol/sdk/shared/stdio.js`); a `write_file` of 11 MB ended the session instead
 * of being refused as `TOO_LARGE`.
 *
 * Here a message of up to {@link MAX_MESSAGE_BYTES} is read whole, so the tools apply their own
 * limits and name them. A longer one is not kept: its first and last bytes are, to find its `id`
 * and method, and it is answered with an error result (`TOO_LARGE`) for `tools/call`, a JSON-RPC
 * error for any other request. A line that is not a JSON-RPC message gets a JSON-RPC error too
 * (parse error, or invalid request). The session goes on either way.
 */
import type { Readable, Writable } from 'node:stream'
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js'
import { toCallToolResult } from './tools.js'

/**
 * The longest message read whole: far above any argument the tools accept at the server's limits
 * (the largest, `editMaxFileBytes` and `appendMaxTotalBytes`, are 10 MiB), even with JSON
 * escaping, and small enough to hold in memory.
 */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024

/** How much of the start and of the end of an overlong message is kept to answer it. */
const KEPT_BYTES = 64 * 1024

/** JSON-RPC 2.0 error codes. */
const PARSE_ERROR = -32700
const INVALID_REQUEST = -32600

/** A JSON number or string: what an `id` is. */
const ID = String.raw`-?\d+|"(?:[^"\\]|\\.)*"`
/** `"id": …` as the first member (or the second, after `"jsonrpc"`). */
const ID_FIRST = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(${ID})`)
/** `"id": …` as the last member of the message (what the SDK's client writes). */
const ID_LAST = new RegExp(String.raw`"id"\s*:\s*(${ID})\s*\}\s*$`)
/** `"method": "…"` among the first members, before any nested value. */
const METHOD = new RegExp(String.raw`^\s*\{(?:\s*"(?:jsonrpc|id)"\s*:\s*(?:${ID})\s*,)*\s*"method"\s*:\s*"([^"\\]*)"`)
/** The tool's `name`, first in `params`. */
const TOOL = /"params"\s*:\s*\{\s*"name"\s*:\s*"([^"\\]*)"/

/** An overlong message as far as it was kept. */
interface Overlong {
  head: Buffer
  tail: Buffer
  bytes: number
}

/** A stdio transport that answers what it cannot take (see the module comment). */
export class StdioLineTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void

  /** The unfinished line so far (while it is short enough to keep). */
  #pending: Buffer[] = []
  #pendingBytes = 0
  /** The unfinished line, once it is too long to keep. */
  #overlong: Overlong | undefined
  #started = false

  constructor(
    private readonly stdin: Readable = process.stdin,
    private readonly stdout: Writable = process.stdout,
    private readonly maxMessageBytes: number = MAX_MESSAGE_BYTES,
  ) {}

  async start(): Promise<void> {
    if (this.#started) throw new Error('StdioLineTransport already started')
    this.#started = true
    this.stdin.on('data', this.#onData)
    this.stdin.on('error', this.#onError)
  }

  async close(): Promise<void> {
    this.stdin.off('data', this.#onData)
    this.stdin.off('error', this.#onError)
    if (this.stdin.listenerCount('data') === 0) this.stdin.pause()
    this.#pending = []
    this.#overlong = undefined
    this.onclose?.()
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(serializeMessage(message))) resolve()
      else this.stdout.once('drain', resolve)
    })
  }

  readonly #onError = (error: Error): void => {
    this.onerror?.(error)
  }

  readonly #onData = (chunk: Buffer): void => {
    let start = 0
    for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10, start)) {
      this.#append(chunk.subarray(start, end))
      this.#endLine()
      start = end + 1
    }
    if (start < chunk.length) this.#append(chunk.subarray(start))
  }

  /** Adds `part` to the unfinished line, keeping only its ends once it is too long. */
  #append(part: Buffer): void {
    if (part.length === 0) return
    if (this.#overlong === undefined) {
      this.#pending.push(part)
      this.#pendingBytes += part.length
      if (this.#pendingBytes <= this.maxMessageBytes) return
      const all = Buffer.concat(this.#pending)
      this.#pending = []
      this.#pendingBytes = 0
      this.#overlong = { head: Buffer.from(all.subarray(0, KEPT_BYTES)), tail: Buffer.alloc(0), bytes: 0 }
      part = all.subarray(KEPT_BYTES)
      this.#overlong.bytes = KEPT_BYTES
    }
    const overlong = this.#overlong
    overlong.bytes += part.length
    const tail = part.length >= KEPT_BYTES ? part : Buffer.concat([overlong.tail, part])
    overlong.tail = Buffer.from(tail.subarray(Math.max(0, tail.length - KEPT_BYTES)))
  }

  /** A newline ended the line: hand it on, or answer it. */
  #endLine(): void {
    const overlong = this.#overlong
    if (overlong !== undefined) {
      this.#overlong = undefined
      this.#answerOverlong(overlong)
      return
    }
    if (this.#pendingBytes === 0) return
    const line = Buffer.concat(this.#pending).toString('utf8').replace(/\r$/, '')
    this.#pending = []
    this.#pendingBytes = 0
    if (line.trim() === '') return
    let message: JSONRPCMessage
    try {
      message = deserializeMessage(line)
    } catch (error) {
      this.#answerMalformed(line, error as Error)
      return
    }
    this.onmessage?.(message)
  }

  /** Answers a message too long to read with an error naming the limit. */
  #answerOverlong({ head, tail, bytes }: Overlong): void {
    const start = head.toString('utf8')
    const end = tail.toString('utf8')
    const id = parseId(ID_FIRST.exec(start)?.[1] ?? ID_LAST.exec(end)?.[1])
    const method = METHOD.exec(start)?.[1]
    const what = method === 'tools/call' ? `the ${TOOL.exec(start)?.[1] ?? 'tool'} call` : `the ${method ?? 'message'}`
    const output =
      `${what} is ${mib(bytes)} long, more than this server reads in one message (${mib(this.maxMessageBytes)}); ` +
      'nothing was done. Send less in one call: for a large file, write_file a first part and append_file the rest.'
    this.onerror?.(new Error(`a message of ${bytes} bytes is longer than ${this.maxMessageBytes}: answered, not read`))
    if (id === undefined) return
    if (method === 'tools/call') {
      void this.send({ jsonrpc: '2.0', id, result: toCallToolResult({ status: 'error', code: 'TOO_LARGE', output }) })
    } else {
      void this.send({ jsonrpc: '2.0', id, error: { code: INVALID_REQUEST, message: output } })
    }
  }

  /** Answers a line that is not a JSON-RPC message with a JSON-RPC error. */
  #answerMalformed(line: string, error: Error): void {
    this.onerror?.(error)
    let parsed: unknown
    try {
      parsed = JSON.parse(line)
    } catch {
      void this.send({
        jsonrpc: '2.0',
        ...idOf(line),
        error: { code: PARSE_ERROR, message: `Parse error: the message is not JSON (${error.message})` },
      } as JSONRPCMessage)
      return
    }
    const id = (parsed as { id?: unknown } | null)?.id
    void this.send({
      jsonrpc: '2.0',
      ...(typeof id === 'string' || typeof id === 'number' ? { id } : {}),
      error: { code: INVALID_REQUEST, message: 'Invalid request: the message is not a JSON-RPC 2.0 request, notification or response' },
    } as JSONRPCMessage)
  }
}

/** The `id` member of a line that is not JSON, where it can be found. */
function idOf(line: string): { id?: RequestId } {
  const id = parseId(ID_FIRST.exec(line)?.[1] ?? ID_LAST.exec(line)?.[1])
  return id === undefined ? {} : { id }
}

function parseId(text: string | undefined): RequestId | undefined {
  if (text === undefined) return undefined
  try {
    const id: unknown = JSON.parse(text)
    return typeof id === 'string' || typeof id === 'number' ? id : undefined
  } catch {
    return undefined
  }
}

/** `bytes` in MiB, for messages. */
function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`
}
