/**
 * Child of the descriptor test in `__test__/concurrency.test.ts`, run under a low open-files limit:
 * reads every file of `<root>` with `read_file`, all at once.
 *
 *   node parallel-reads-child.mjs <root> <dataDir>
 *
 * Prints one line of JSON: `{ calls, failed, example }` (`example`: the first failure's output).
 */
import { readdirSync } from 'node:fs'
import { Workspace } from 'agent-fs-tools'

const [root, dataDir] = process.argv.slice(2)
const ws = new Workspace({ root, trash: { dataDir }, audit: false })
const names = readdirSync(root)
const results = await Promise.all(names.map((path) => ws.call('read_file', { path })))
const failed = results.filter((r) => r.status !== 'ok')
console.log(JSON.stringify({ calls: results.length, failed: failed.length, example: failed[0]?.output }))
