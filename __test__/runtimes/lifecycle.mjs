/**
 * How a runtime starts and ends a process that uses the addon: the known upstream problems of
 * runtimes with Node-API addons, one per mode (`lifecycle.mjs <mode>`), runnable unchanged on Node,
 * Bun and Deno. `scripts/test-runtimes.mjs` runs every mode on every runtime and checks the exit
 * status and the printed lines.
 *
 * - `pending`: calls started and never awaited, nothing else keeping the loop alive (no timer, no
 *   I/O of JS's own). A runtime that does not count the addon's pending work exits before they
 *   resolve (napi-rs #2003; Deno's "Promise resolution is still pending but the event loop has
 *   already resolved"). Prints one line per resolved call, then `pending: done`.
 * - `top-level-await`: the module's top level awaits calls (the same problem, seen through the
 *   module loader). Prints `top-level-await: done`.
 * - `exit-in-prompt`: `process.exit(0)` from inside a confirm handler while other calls wait on
 *   theirs: the threadsafe functions are released while the process tears down (bun #37031:
 *   crashes releasing a threadsafe function at exit). Must end with status 0, nothing on stderr.
 * - `exit-while-busy`: `process.exit(0)` right after starting 200 writes with progress callbacks
 *   and a confirm handler: native threads call into JS while it goes away. Status 0, no stderr.
 * - `ends-by-itself`: a Workspace with a confirm handler and a progress callback (functions held
 *   by native code), used and then left: the process must end on its own (callbacks held by
 *   native code must not keep the loop alive). Prints `ends-by-itself: done`.
 */
import { Workspace } from 'agent-fs-tools'
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const mode = process.argv[process.argv.length - 1]
const base = realpathSync(mkdtempSync(join(tmpdir(), `afs-lifecycle-${mode}-`)))
const root = join(base, 'project')
mkdirSync(root)
const ask = { cwdWriteFile: false }

/** A workspace in the temporary project; `confirm` approves unless given. */
function workspace(confirm = () => true) {
  return new Workspace({ root, permissions: { cwdWriteFile: true }, trash: { dataDir: join(base, 'data') }, confirm })
}

/** Removes the temporary tree (where the process lives to do it). */
function cleanUp() {
  rmSync(base, { recursive: true, force: true })
}

switch (mode) {
  case 'pending': {
    const ws = workspace()
    let open = 3
    const settled = (what) => (value) => {
      console.log(`${what}: ${typeof value === 'object' && value !== null && 'status' in value ? value.status : 'ok'}`)
      if (--open === 0) {
        console.log(`written: ${readFileSync(join(root, 'a.txt'), 'utf8').trim()}`)
        cleanUp()
        console.log('pending: done')
      }
    }
    const failed = (what) => (error) => console.log(`${what} rejected: ${error}`)
    ws.call('write_file', { path: 'a.txt', content: 'written\n' }).then(settled('write_file'), failed('write_file'))
    ws.call('write_file', { path: 'b.txt', content: 'asked\n' }, { permissions: ask, confirm: async () => true }).then(settled('asked write_file'), failed('asked write_file'))
    ws.trashList().then(settled('trashList'), failed('trashList'))
    break
  }
  case 'top-level-await': {
    const ws = workspace(async () => true)
    const write = await ws.call('write_file', { path: 'a.txt', content: 'awaited\n' }, { permissions: ask })
    const grep = await ws.call('grep', { pattern: 'awaited' })
    console.log(`write_file: ${write.status}`)
    console.log(`grep: ${grep.status} ${grep.output.includes('a.txt') ? 'found' : 'not found'}`)
    cleanUp()
    console.log('top-level-await: done')
    break
  }
  case 'exit-in-prompt': {
    const waiting = () => new Promise(() => {}) // these prompts are still open at the exit
    const ws = workspace(waiting)
    for (let i = 0; i < 10; i++) ws.call('write_file', { path: `w${i}.txt`, content: 'x' }, { permissions: ask })
    ws.call('write_file', { path: 'exit.txt', content: 'x' }, {
      permissions: ask,
      confirm: () => {
        cleanUp()
        console.log('exit-in-prompt: exiting')
        process.exit(0)
      },
    })
    break
  }
  case 'exit-while-busy': {
    const ws = workspace()
    const onProgress = () => {}
    for (let i = 0; i < 200; i++) ws.call('write_file', { path: `f${i}.txt`, content: `${i}\n`.repeat(1000) }, { onProgress })
    for (let i = 0; i < 20; i++) ws.call('write_file', { path: `asked${i}.txt`, content: 'x' }, { permissions: ask })
    console.log('exit-while-busy: exiting')
    process.exit(0) // the temporary tree is left behind: removing it first would race the writes
  }
  case 'ends-by-itself': {
    const ws = workspace((request) => request.label === 'Write file?')
    const unused = workspace(() => true) // a handler native code holds and never calls
    const onProgress = () => {}
    const asked = await ws.call('write_file', { path: 'a.txt', content: 'x\n' }, { permissions: ask, onProgress })
    const plain = await ws.call('read_file', { path: 'a.txt' }, { onProgress })
    console.log(`asked: ${asked.status}, read: ${plain.status}, unused: ${unused.definitions().length > 0}`)
    cleanUp()
    console.log('ends-by-itself: done')
    break
  }
  default:
    console.error(`unknown mode ${mode}`)
    process.exitCode = 2
}
