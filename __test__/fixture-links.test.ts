/**
 * The tests' symbolic-link fixture (helpers/links.ts): a link made and checked, skipped with
 * its reason only on Windows, and never skipped elsewhere.
 */
import { lstatSync, readlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { symlinkOrSkip, whyNoLink } from './helpers/links.js'
import { tempWorkspaceDirs } from './helpers/temp.js'

describe.runIf(process.platform !== 'win32')('symbolic links for fixtures, on Unix', () => {
  it('makes the link asked for, dangling or not', () => {
    const dir = tempWorkspaceDirs().root
    writeFileSync(join(dir, 'a.txt'), 'a')
    symlinkOrSkip('a.txt', join(dir, 'to-a'))
    symlinkOrSkip('no/such/place', join(dir, 'dangling'))
    expect(lstatSync(join(dir, 'to-a')).isSymbolicLink()).toBe(true)
    expect(readlinkSync(join(dir, 'to-a'))).toBe('a.txt')
    expect(readlinkSync(join(dir, 'dangling'))).toBe('no/such/place')
  })

  it('a link that cannot be made fails the test instead of skipping it', () => {
    const dir = tempWorkspaceDirs().root
    writeFileSync(join(dir, 'taken'), 'x')
    expect(() => symlinkOrSkip('a.txt', join(dir, 'taken'))).toThrow(/EEXIST/)
    expect(() => whyNoLink('/x/l', 'symlinkSync reported success and made none', 'linux')).toThrow(
      'no symbolic link at /x/l: symlinkSync reported success and made none',
    )
    expect(() => whyNoLink('/x/l', 'made none', 'darwin')).toThrow('no symbolic link at /x/l')
  })
})

describe('why a test is skipped on Windows', () => {
  it('says the system cannot make a link, and why', () => {
    expect(whyNoLink('C:\\w\\l', 'symlinkSync reported success and made none', 'win32')).toBe(
      'this system cannot make a symbolic link (symlinkSync reported success and made none)',
    )
    const refused = Object.assign(new Error("EPERM: operation not permitted, symlink 'a' -> 'C:\\w\\l'"), {
      code: 'EPERM',
    })
    expect(whyNoLink('C:\\w\\l', refused, 'win32')).toBe(
      "this system cannot make a symbolic link (EPERM: operation not permitted, symlink 'a' -> 'C:\\w\\l')",
    )
  })
})
