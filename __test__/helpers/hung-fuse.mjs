// A FUSE file system whose reads never come back, as a hung NFS or FUSE server's (needs root and
// /dev/fuse). `node hung-fuse.mjs <mountpoint>` mounts it there: one file, `file.txt`, that
// says it holds 64 bytes; lookups, attributes and opens are answered, reads never are, and
// neither is a lookup of the name `never`. Prints `ready` once mounted (or `unavailable`, and
// exits, where it cannot mount), then `stuck` for each request it leaves unanswered: its caller
// is stuck in the kernel from then on. Killing this process
// ends the mount's connection: a read stuck on it fails then, and the mount can be unmounted.
import { spawnSync } from 'node:child_process'
import { openSync, readSync, writeSync } from 'node:fs'

const at = process.argv[2]
let fd
try {
  fd = openSync('/dev/fuse', 'r+')
} catch {
  process.stdout.write('unavailable\n')
  process.exit(0)
}
const options = 'fd=3,rootmode=40000,user_id=0,group_id=0'
const mounted = spawnSync('mount', ['-t', 'fuse.hung', '-o', options, 'hung', at], {
  stdio: ['ignore', 'ignore', 'ignore', fd],
})
if (mounted.status !== 0) {
  process.stdout.write('unavailable\n')
  process.exit(0)
}
process.stdout.write('ready\n')

// Opcodes and errors of the FUSE protocol (linux/fuse.h).
const LOOKUP = 1, FORGET = 2, GETATTR = 3, OPEN = 14, READ = 15, RELEASE = 18, INIT = 26
const OPENDIR = 27, READDIR = 28, RELEASEDIR = 29, INTERRUPT = 36, BATCH_FORGET = 42
const ENOENT = 2, ENOSYS = 38
const ROOT = 1n, FILE = 2n

/** `struct fuse_attr` of the root directory or the file. */
function attr(node) {
  const b = Buffer.alloc(88)
  b.writeBigUInt64LE(node, 0) // ino
  b.writeBigUInt64LE(node === FILE ? 64n : 0n, 8) // size
  b.writeUInt32LE(node === FILE ? 0o100644 : 0o40755, 60) // mode
  b.writeUInt32LE(node === FILE ? 1 : 2, 64) // nlink
  b.writeUInt32LE(4096, 80) // blksize
  return b
}

function reply(unique, error, body = Buffer.alloc(0)) {
  const head = Buffer.alloc(16)
  head.writeUInt32LE(16 + body.length, 0)
  head.writeInt32LE(-error, 4)
  head.writeBigUInt64LE(unique, 8)
  try {
    writeSync(fd, Buffer.concat([head, body]))
  } catch {
    // The request was interrupted meanwhile: nobody waits for this answer.
  }
}

const buffer = Buffer.alloc((1 << 20) + 4096)
for (;;) {
  let n
  try {
    n = readSync(fd, buffer, 0, buffer.length, null)
  } catch (e) {
    if (e.code === 'EINTR' || e.code === 'EAGAIN' || e.code === 'ENOENT') continue
    process.exit(0) // the connection is gone (unmounted)
  }
  const opcode = buffer.readUInt32LE(4)
  const unique = buffer.readBigUInt64LE(8)
  const node = buffer.readBigUInt64LE(16)
  switch (opcode) {
    case INIT: {
      const out = Buffer.alloc(64)
      out.writeUInt32LE(7, 0) // major
      out.writeUInt32LE(31, 4) // minor
      out.writeUInt32LE(4096, 8) // max_readahead
      out.writeUInt32LE(1 << 20, 20) // max_write
      out.writeUInt32LE(1, 24) // time_gran
      reply(unique, 0, out)
      break
    }
    case LOOKUP: {
      const name = buffer.toString('utf8', 40, n - 1)
      if (name === 'never') {
        process.stdout.write('stuck\n') // never answered
        break
      }
      if (node !== ROOT || name !== 'file.txt') {
        reply(unique, ENOENT)
        break
      }
      const out = Buffer.alloc(40)
      out.writeBigUInt64LE(FILE, 0) // nodeid
      out.writeBigUInt64LE(60n, 16) // entry_valid
      out.writeBigUInt64LE(60n, 24) // attr_valid
      reply(unique, 0, Buffer.concat([out, attr(FILE)]))
      break
    }
    case GETATTR: {
      const out = Buffer.alloc(16)
      out.writeBigUInt64LE(60n, 0) // attr_valid
      reply(unique, 0, Buffer.concat([out, attr(node)]))
      break
    }
    case OPEN:
    case OPENDIR:
      reply(unique, 0, Buffer.alloc(16))
      break
    case READDIR:
      reply(unique, 0)
      break
    case READ:
      process.stdout.write('stuck\n') // never answered
      break
    case RELEASE:
    case RELEASEDIR:
      reply(unique, 0)
      break
    case FORGET:
    case BATCH_FORGET:
    case INTERRUPT:
      break // no answer expected
    default:
      reply(unique, ENOSYS)
  }
}
