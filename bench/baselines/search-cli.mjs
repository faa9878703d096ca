/**
 * Baselines for `glob` and `grep`: what hosts shell out to today — ripgrep (`rg`, if installed),
 * `git ls-files` / `git grep` (tracked files only, so gitignored files are skipped) and `grep -rn`
 * (searches everything). Run asynchronously as child processes; output is collected in full, as
 * a host does to hand it to the model. Exit status 1 ("no match") is not an error.
 */
import { spawn } from 'node:child_process'

/** Runs `command`, stdin closed (ripgrep would search a piped stdin), collecting its stdout. */
function run(command, args, cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    const chunks = []
    let stderr = ''
    child.stdout.on('data', (chunk) => chunks.push(chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => {
      if (code === 0 || code === 1) resolve(Buffer.concat(chunks).toString('utf8'))
      else reject(new Error(`${command} exited with ${code}: ${stderr.trim().slice(0, 200)}`))
    })
  })
}

/** Files matching a glob, gitignore-aware. */
export const rgFiles = (dir, glob) => run('rg', ['--files', '--glob', glob, '.'], dir)
export const gitLsFiles = (dir, glob) => run('git', ['ls-files', '--', glob], dir)

/** Lines matching a regex, `path:line:text`, gitignore-aware (rg, git grep) or not (grep -rn). */
export const rg = (dir, regex) => run('rg', ['-n', '--no-heading', '-e', regex, '.'], dir)
export const gitGrep = (dir, regex) => run('git', ['grep', '-n', '-E', '-e', regex], dir)
export const grepRn = (dir, regex) => run('grep', ['-rnE', '-e', regex, '.'], dir)

/** The number of non-empty lines of an output. */
const lineCount = (text) => text.split('\n').filter((line) => line.length > 0).length

/**
 * What a correct glob and grep find in the search tree: the number of files matching `glob` and
 * of lines matching `regex`, counted once from ripgrep's output (from git's when rg is missing:
 * the tree is all tracked and holds nothing ignored, so both see the same files).
 */
export async function expectedCounts(dir, glob, regex, haveRg) {
  const [files, lines] = haveRg
    ? await Promise.all([rgFiles(dir, glob), rg(dir, regex)])
    : await Promise.all([gitLsFiles(dir, glob), gitGrep(dir, regex)])
  return { globFiles: lineCount(files), grepLines: lineCount(lines), countedBy: haveRg ? 'rg' : 'git' }
}

/** Is `command` runnable? */
export async function available(command) {
  try {
    await run(command, ['--version'])
    return true
  } catch {
    return false
  }
}
