/**
 * Run by `scripts/test-windows.mjs` under Wine, from a host project holding the package: one
 * `delete_file` into the trash of the data directory `dataDir`, printed as one JSON line
 * (`status`, `code`, `output`, and whether the file is still there). The harness runs it, makes
 * the data directory writable by everyone from the Linux side (Wine reads a Unix mode's other
 * bits as an `Everyone` entry of the access list), runs it again, and expects the refusal.
 *
 *   node data-dir-acl.mjs <name> <root> <dataDir>
 */
import { Workspace } from 'agent-fs-tools'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const [name, root, dataDir] = process.argv.slice(2)
const ws = new Workspace({
  root,
  allowedPaths: [root],
  permissions: { cwdWriteFile: true, cwdRemoveFile: true },
  trash: { dataDir, sessionId: 'acl-check', agentName: 'data-dir-acl' },
})
writeFileSync(join(root, name), `${name}\n`)
const result = await ws.call('delete_file', { path: name })
console.log(JSON.stringify({ status: result.status, code: result.code, output: result.output, kept: existsSync(join(root, name)) }))
