//! Reads and writes at an offset, without moving a file's cursor (`pread`, `pwrite`): what the
//! platform names `FileExt`, here once.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// Reads into `buf` from `offset`; how much was read (0 at the end).
pub fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    file.read_at(buf, offset)
}

/// Fills `buf` from `offset`; `UnexpectedEof` if the file ends first.
pub fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    file.read_exact_at(buf, offset)
}

/// Writes all of `buf` at `offset` (on a descriptor opened without `O_APPEND`, which on Linux
/// would append wherever `offset` says).
pub fn write_all_at(file: &File, buf: &[u8], offset: u64) -> io::Result<()> {
    file.write_all_at(buf, offset)
}
