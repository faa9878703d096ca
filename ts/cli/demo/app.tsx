/**
 * The playground: an Ink app that hosts the tools of one {@link Workspace} the way an agent host
 * does — it picks a tool, takes JSON arguments, answers the tool's confirmation with the user's
 * `y`/`n`, shows the result, browses and restores the trash, and shows the cwd stack.
 */
import { existsSync, readdirSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import { Box, Text, useApp, useInput, useStdout } from 'ink'
import { useCallback, useEffect, useRef, useState, type ReactElement } from 'react'
import type { Workspace } from '../../workspace.js'
import type { Change, ConfirmRequest, ToolDefinition, ToolProgress, ToolResult, TrashEntry } from '../../types.js'
import { describeProgress } from '../../internal/progress.js'
import { ArgsEditor } from './components/ArgsEditor.js'
import { ConfirmPrompt } from './components/ConfirmPrompt.js'
import { Header } from './components/Header.js'
import { KeyHints } from './components/KeyHints.js'
import { ResultView } from './components/ResultView.js'
import { Sidebar, type HistoryEntry } from './components/Sidebar.js'
import { ToolList } from './components/ToolList.js'
import { TrashBrowser } from './components/TrashBrowser.js'
import { HistoryView } from './components/HistoryView.js'
import { nextCwdStack } from './cwd-stack.js'
import { useSyncState } from './use-sync-state.js'
import { exampleArgs, oneLineJson } from './examples.js'

export interface AppProps {
  ws: Workspace
  /** Canonical workspace root. */
  root: string
  /** Trash/audit data directory (shown in the header). */
  dataDir?: string | undefined
}

/** What the main panel shows. */
type Screen =
  | { kind: 'tools' }
  | { kind: 'args'; tool: ToolDefinition }
  | { kind: 'running'; tool: string; header: string }
  | { kind: 'result'; tool: string; header: string; result: ToolResult }
  | { kind: 'trash' }
  | { kind: 'history'; changes: Change[] | undefined; error?: string }

/** A confirmation the running call is waiting for. */
interface PendingConfirm {
  request: ConfirmRequest
  resolve: (approve: boolean) => void
}

/** The list clamp for ↑/↓. */
function clamp(value: number, length: number): number {
  return Math.max(0, Math.min(length - 1, value))
}

/** A progress bar of `width` cells, or nothing when the total is unknown. */
export function progressBar(progress: ToolProgress, width: number): string | undefined {
  if (progress.total === undefined || progress.total <= 0) return undefined
  const filled = Math.round((Math.min(progress.done, progress.total) / progress.total) * width)
  return `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`
}

/** While a call runs: its progress, if it reports any; Esc aborts it (../../../docs/hosts.md#the-workspace-api: `ABORTED`, nothing changed). */
function Running({ tool, header, progress, onAbort, isActive }: { tool: string; header: string; progress: ToolProgress | undefined; onAbort: () => void; isActive: boolean }): ReactElement {
  useInput((_input, key) => key.escape && onAbort(), { isActive })
  const bar = progress === undefined ? undefined : progressBar(progress, 30)
  return (
    <Box flexDirection="column">
      <Text>
        <Text color="yellow">running </Text>
        <Text bold>{tool}</Text>
        <Text dimColor>{header ? `  ${header}` : ''}</Text>
        <Text> …</Text>
      </Text>
      {progress === undefined ? null : (
        <Text>
          {bar === undefined ? '' : <Text color="cyan">{`${bar} `}</Text>}
          <Text dimColor>{describeProgress(progress)}</Text>
        </Text>
      )}
      <KeyHints hints={[['Esc', 'abort']]} />
    </Box>
  )
}

/** A file of `root` for the examples when the sample project's are not there: a README first. */
function someFileOf(root: string): string | undefined {
  try {
    const files = readdirSync(root, { withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => entry.name)
      .sort()
    return files.find((name) => /^readme/i.test(name)) ?? files[0]
  } catch {
    return undefined
  }
}

/** The trash, refreshed on demand; errors are kept for display. */
function useTrash(ws: Workspace): { entries: TrashEntry[] | undefined; error: string | undefined; refresh: () => Promise<void> } {
  const [entries, setEntries] = useState<TrashEntry[] | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  const mounted = useRef(true)
  useEffect(() => () => void (mounted.current = false), [])
  const refresh = useCallback(async () => {
    try {
      const list = await ws.trashList()
      if (mounted.current) {
        setEntries(list)
        setError(undefined)
      }
    } catch (e) {
      if (mounted.current) setError(`trashList() failed: ${(e as Error).message}`)
    }
  }, [ws])
  return { entries, error, refresh }
}

/** The playground's root component. */
export function App({ ws, root, dataDir }: AppProps): ReactElement {
  const { exit } = useApp()
  const { stdout } = useStdout()
  const viewHeight = Math.max(6, (stdout.rows || 30) - 14)
  const sidebarWidth = (stdout.columns || 100) >= 100 ? 32 : 26
  // The tool list's description column: the width left of the sidebar (and its 1 column of
  // padding) after the 22 columns of names.
  const descriptionWidth = Math.max(20, (stdout.columns || 100) - sidebarWidth - 1 - 22)

  const [tools] = useState(() => ws.definitions())
  const [screen, setScreen] = useState<Screen>({ kind: 'tools' })
  const [selectedTool, setSelectedTool, selectedToolRef] = useSyncState(0)
  const [selectedTrash, setSelectedTrash, selectedTrashRef] = useSyncState(0)
  const [selectedChange, setSelectedChange, selectedChangeRef] = useSyncState(0)
  const [drafts, setDrafts] = useState<Record<string, string>>({})
  const [pending, setPending] = useState<PendingConfirm | undefined>(undefined)
  const [progress, setProgress] = useState<ToolProgress | undefined>(undefined)
  const [someFile] = useState(() => someFileOf(root))
  const [cwdStack, setCwdStack] = useState<string[]>(() => nextCwdStack([], ws.cwd()))
  const [history, setHistory] = useState<HistoryEntry[]>([])
  const trash = useTrash(ws)
  // Ink turns raw mode off whenever no input handler is active, e.g. for the render between two
  // screens; a key typed then would be echoed by the terminal. This handler keeps it on.
  useInput(() => undefined)

  // Refs for the unmount cleanup: a pending confirmation is denied and a running call aborted,
  // so nothing waits on a prompt that can no longer be answered.
  const pendingRef = useRef<PendingConfirm | undefined>(undefined)
  const abortRef = useRef<AbortController | undefined>(undefined)
  const mounted = useRef(true)
  useEffect(() => {
    void trash.refresh()
    return () => {
      mounted.current = false
      pendingRef.current?.resolve(false)
      abortRef.current?.abort()
    }
  }, [])

  /**
   * The confirm handler given to every call: shows the prompt and waits for `y`/`n`. A prompt the
   * call withdraws (aborted, or timed out) closes.
   */
  const confirm = useCallback(
    (request: ConfirmRequest) =>
      new Promise<boolean>((resolve) => {
        const entry = { request, resolve }
        pendingRef.current = entry
        setPending(entry)
        request.signal?.addEventListener(
          'abort',
          () => {
            if (pendingRef.current !== entry) return
            pendingRef.current = undefined
            setPending(undefined)
            resolve(false)
          },
          { once: true },
        )
      }),
    [],
  )

  const answer = useCallback((approve: boolean) => {
    const entry = pendingRef.current
    pendingRef.current = undefined
    setPending(undefined)
    entry?.resolve(approve)
  }, [])

  /**
   * Runs one call through `ws.call` with the interactive confirm handler and a progress display,
   * then shows its result. `header` overrides `ws.formatCall`'s.
   */
  const run = useCallback(
    async (tool: string, args: unknown, header = ws.formatCall(tool, args)) => {
      const controller = new AbortController()
      abortRef.current = controller
      setProgress(undefined)
      setScreen({ kind: 'running', tool, header })
      const onProgress = (update: ToolProgress): void => {
        if (mounted.current) setProgress(update)
      }
      const result = await ws.call(tool, args, { confirm, signal: controller.signal, onProgress })
      abortRef.current = undefined
      if (!mounted.current) return
      setHistory((h) => [{ tool, header, status: result.status, code: result.code }, ...h].slice(0, 8))
      setCwdStack((stack) => nextCwdStack(stack, ws.cwd()))
      void trash.refresh()
      setScreen({ kind: 'result', tool, header, result })
    },
    [ws, confirm, trash.refresh],
  )

  /** Undoes a change through `ws.undo` (asking first, like every change here), then shows the result. */
  const undo = useCallback(
    async (id: string | undefined) => {
      const header = id === undefined ? 'the latest change' : id
      setScreen({ kind: 'running', tool: 'undo', header })
      const result = await ws.undo({ ...(id === undefined ? {} : { id }), confirm })
      if (!mounted.current) return
      setHistory((h) => [{ tool: 'undo', header, status: result.status, code: result.code }, ...h].slice(0, 8))
      void trash.refresh()
      setScreen({ kind: 'result', tool: 'undo', header, result })
    },
    [ws, confirm, trash.refresh],
  )

  const openHistory = (): void => {
    setSelectedChange(0)
    setScreen({ kind: 'history', changes: undefined })
    ws.history({ limit: 200 }).then(
      (changes) => mounted.current && setScreen({ kind: 'history', changes }),
      (error: unknown) => mounted.current && setScreen({ kind: 'history', changes: [], error: String(error) }),
    )
  }

  const latestArchive = trash.entries?.[0]?.archivePath
  const cwd = cwdStack[cwdStack.length - 1] ?? root
  // `/` on every system (Windows takes both): a `\` would show doubled in the JSON.
  const fromRoot = (path: string): string => relative(cwd, join(root, path)).split(sep).join('/') || '.'
  const exists = (path: string): boolean => existsSync(join(root, path))
  const example = (tool: ToolDefinition): string => oneLineJson(exampleArgs(tool, { latestArchive, fromRoot, exists, someFile }))

  const openTrash = (): void => {
    setSelectedTrash(0)
    setScreen({ kind: 'trash' })
    void trash.refresh()
  }

  const main = (): ReactElement => {
    const idle = pending === undefined
    switch (screen.kind) {
      case 'tools':
        return (
          <ToolList
            tools={tools}
            selected={selectedTool}
            onMove={(delta) => setSelectedTool((i) => clamp(i + delta, tools.length))}
            onChoose={() => {
              const tool = tools[selectedToolRef.current]
              if (tool) setScreen({ kind: 'args', tool })
            }}
            onTrash={openTrash}
            onUndo={() => void undo(undefined)}
            onHistory={openHistory}
            onQuit={exit}
            width={descriptionWidth}
            isActive={idle}
          />
        )
      case 'args': {
        const { tool } = screen
        return (
          <ArgsEditor
            key={tool.name}
            tool={tool}
            initial={drafts[tool.name] ?? example(tool)}
            example={example(tool)}
            formatCall={(args) => ws.formatCall(tool.name, args)}
            onSubmit={(args, text) => {
              setDrafts((d) => ({ ...d, [tool.name]: text }))
              void run(tool.name, args)
            }}
            onCancel={() => setScreen({ kind: 'tools' })}
            isActive={idle}
          />
        )
      }
      case 'running':
        return <Running tool={screen.tool} header={screen.header} progress={progress} onAbort={() => abortRef.current?.abort()} isActive={idle} />
      case 'result':
        return (
          <ResultView
            tool={screen.tool}
            header={screen.header}
            result={screen.result}
            height={viewHeight}
            onClose={() => setScreen({ kind: 'tools' })}
            isActive={idle}
          />
        )
      case 'trash':
        return (
          <TrashBrowser
            entries={trash.entries}
            error={trash.error}
            selected={selectedTrash}
            onMove={(delta) => setSelectedTrash((i) => clamp(i + delta, trash.entries?.length ?? 0))}
            onRestore={(overwrite) => {
              const entry = trash.entries?.[selectedTrashRef.current]
              // The header names what comes back, not the archive it comes from.
              const header = `${entry?.originalPath ?? ''}${overwrite ? ' (overwrite)' : ''}`
              if (entry) void run('restore_file', { trashedPath: entry.archivePath, ...(overwrite ? { overwrite: true } : {}) }, header)
            }}
            onBack={() => setScreen({ kind: 'tools' })}
            isActive={idle}
          />
        )
      case 'history': {
        const { changes } = screen
        return (
          <HistoryView
            changes={changes}
            error={screen.error}
            selected={selectedChange}
            onMove={(delta) => setSelectedChange((i) => clamp(i + delta, changes?.length ?? 0))}
            onUndo={() => {
              const change = changes?.[selectedChangeRef.current]
              if (change) void undo(change.id)
            }}
            onBack={() => setScreen({ kind: 'tools' })}
            isActive={idle}
          />
        )
      }
    }
  }

  return (
    <Box flexDirection="column">
      <Header root={root} dataDir={dataDir} trashCount={trash.entries?.length} />
      <Box>
        <Box flexDirection="column" flexGrow={1} paddingRight={1}>
          {pending ? <ConfirmPrompt request={pending.request} onAnswer={answer} maxDiffLines={viewHeight} isActive /> : main()}
        </Box>
        <Sidebar root={root} cwdStack={cwdStack} history={history} width={sidebarWidth} />
      </Box>
    </Box>
  )
}
