/**
 * The sample project the demo runs in by default: a README, two TypeScript files, a `.gitignore`d
 * `node_modules/`, and a `.git` directory.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'

/** The sample project's files (relative path → content). */
export const SAMPLE_FILES: Readonly<Record<string, string>> = {
  'README.md': '# Sample project\n\nA tiny project to try the agent-fs-tools tools on.\n',
  '.gitignore': 'node_modules/\nbuild/\n',
  'src/greet.ts': "export function greet(name: string): string {\n  return 'Hello, ' + name\n}\n",
  'src/index.ts': "import { greet } from './greet'\n\nconsole.log(greet('world'))\n",
  'node_modules/left-pad/index.js': 'module.exports = () => {}\n',
}

/** Writes the sample project under `root`, with a `.git` directory so it is its own ProjectRoot. */
export function writeSampleProject(root: string): void {
  for (const [path, content] of Object.entries(SAMPLE_FILES)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), content)
  }
  mkdirSync(join(root, '.git'), { recursive: true })
}
