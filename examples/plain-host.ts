/**
 * A plain TypeScript host: give the model the tool definitions, run the calls it makes, and ask
 * the user in the terminal before anything is changed.
 */
import { createInterface } from 'node:readline/promises'
import { Workspace, type ConfirmRequest, type ToolDefinition, type ToolResult } from 'agent-fs-tools'

/** A tool call as your model client returns it. */
export interface ModelToolCall {
  id: string
  name: string
  arguments: unknown
}

/** Asks on the terminal; only "y" approves. */
async function askUser(request: ConfirmRequest): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stdout })
  try {
    if (request.diff) console.log(request.diff)
    const answer = await rl.question(`${request.label} ${request.detail} [y/N] `)
    return answer.trim().toLowerCase() === 'y'
  } finally {
    rl.close()
  }
}

export const ws = new Workspace({
  root: process.cwd(),
  permissions: { cwdReadFile: true, cwdWriteFile: false },
  confirm: askUser,
  trash: { agentName: 'plain-host' },
})

/** What to send the model as its tool list (cache it: it does not change). */
export const tools: ToolDefinition[] = ws.definitions()

/** Runs one turn's tool calls in parallel; every failure comes back as a result, never a throw. */
export async function runToolCalls(calls: ModelToolCall[], signal?: AbortSignal): Promise<Array<{ id: string; result: ToolResult }>> {
  return Promise.all(
    calls.map(async (call) => {
      console.log(`${call.name} ${ws.formatCall(call.name, call.arguments)}`)
      const result = await ws.call(call.name, call.arguments, signal ? { signal } : {})
      return { id: call.id, result }
    }),
  )
}
