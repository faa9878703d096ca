/**
 * Baseline for a recoverable delete in pure Node: walk the tree, gzip each file with
 * `zlib.gzipSync` (default level 6) into a `tar-stream` entry, stream the tar to disk, then
 * `fs.rm` the tree. Directories, modes, mtimes and symlinks are kept.
 */
import { createWriteStream } from 'node:fs'
import { lstat, readFile, readdir, readlink, rm } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { gzipSync } from 'node:zlib'
import tarStream from 'tar-stream'

function addEntry(pack, header, body) {
  return new Promise((resolve, reject) => pack.entry(header, body, (error) => (error ? reject(error) : resolve())))
}

/** Archives `dir` into `archive` (a tar of per-file gzip members) and removes it. */
export async function trashTree(dir, archive) {
  const pack = tarStream.pack()
  const written = pipeline(pack, createWriteStream(archive))
  const walk = async (abs, rel) => {
    const stat = await lstat(abs)
    const common = { name: rel, mode: stat.mode & 0o7777, mtime: stat.mtime }
    if (stat.isDirectory()) {
      await addEntry(pack, { ...common, name: `${rel}/`, type: 'directory' })
      const names = (await readdir(abs)).sort()
      for (const name of names) await walk(join(abs, name), `${rel}/${name}`)
    } else if (stat.isSymbolicLink()) {
      await addEntry(pack, { ...common, type: 'symlink', linkname: await readlink(abs) })
    } else if (stat.isFile()) {
      const gz = gzipSync(await readFile(abs))
      await addEntry(pack, { ...common, name: `${rel}.gz`, size: gz.length }, gz)
    }
  }
  await walk(dir, basename(dir))
  pack.finalize()
  await written
  await rm(dir, { recursive: true, force: true })
}
