/** The sources, the tests and the integration examples type-check (`npm run typecheck`), strict. */
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { join, resolve } from 'node:path'
import { expect, it } from 'vitest'
import { scaled } from './helpers/time.js'

const root = resolve(__dirname, '..')

it('tsc --noEmit over ts/, __test__/ and examples/ reports no errors', () => {
  const tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc')
  const run = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.json'), '--noEmit', '--pretty', 'false'], {
    cwd: root,
    encoding: 'utf8',
  })
  expect(run.stdout.split('\n').filter((line) => line.includes('error TS'))).toEqual([])
  expect(run.status).toBe(0)
}, scaled(120_000))
