/**
 * Vercel AI SDK 6 integration: the workspace's tools in `generateText` / `streamText`, with a
 * confirm handler for the actions that need the user's approval.
 */
import { generateText, stepCountIs, type LanguageModel } from 'ai'
import { Workspace, type ConfirmRequest } from 'agent-fs-tools'
import { createAiSdkTools } from 'agent-fs-tools/ai-sdk'

/** Runs one agent task in `root`; `approve` decides each write, edit or removal. */
export async function runTask(
  model: LanguageModel,
  root: string,
  prompt: string,
  approve: (request: ConfirmRequest) => Promise<boolean>,
  abortSignal?: AbortSignal,
): Promise<string> {
  const ws = new Workspace({ root, permissions: { cwdReadFile: true } })
  const result = await generateText({
    model,
    tools: createAiSdkTools(ws, { confirm: approve }),
    stopWhen: stepCountIs(20),
    prompt,
    ...(abortSignal ? { abortSignal } : {}),
  })
  return result.text
}
