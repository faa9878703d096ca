//! Fixed-size streaming with hashing and cancellation, in both directions.
//!
//! Memory never grows with file size: archiving pulls at most [`CHUNK`] bytes per read through
//! [`SourceReader`] (the `tar` builder copies through it with its own fixed buffer), restoring
//! copies through one [`CHUNK`]-sized buffer in [`write_restored`]. Holes stay holes both ways:
//! archiving hands them out as zeros without reading them, restoring skips chunks of zeros. Both
//! poll the cancel callback before every chunk, so a cancel is noticed within one chunk.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

use sha2::{Digest, Sha256};

use super::error::{changed_io, Signal};
use crate::paths::{file_copy, fsops};
use crate::progress::{self, Unit};

/// The most bytes read from a file in one step.
pub(crate) const CHUNK: usize = 64 * 1024;

/// Reads exactly `len` bytes of an original file (the size `fstat` reported), hashing each byte
/// handed out: the digest is over exactly what went into the archive. The holes of a sparse file
/// are handed out as zeros without reading them (found with `SEEK_DATA`/`SEEK_HOLE`): reading a
/// hole makes the kernel fill page after page with zeros, which was most of the time spent
/// trashing a sparse disk image.
pub(crate) struct SourceReader<'a> {
    file: &'a mut File,
    /// Bytes handed out so far (the file offset, except inside a hole).
    offset: u64,
    remaining: u64,
    /// Where the stretch of data or hole last looked up ends, and whether it is a hole.
    stretch: Option<(u64, bool)>,
    /// Fewer blocks than bytes: worth looking for holes (otherwise everything is read).
    has_holes: bool,
    hasher: Sha256,
    cancel: &'a dyn Fn() -> bool,
    display: &'a Path,
}

impl<'a> SourceReader<'a> {
    /// Read `len` bytes of `file` (named `display` in errors), polling `cancel` per chunk.
    pub(crate) fn new(
        file: &'a mut File,
        len: u64,
        cancel: &'a dyn Fn() -> bool,
        display: &'a Path,
    ) -> Self {
        let has_holes = len > CHUNK as u64
            && fsops::fstat(&*file).is_ok_and(|stat| fsops::may_have_holes(&stat));
        SourceReader {
            file,
            offset: 0,
            remaining: len,
            stretch: None,
            has_holes,
            hasher: Sha256::new(),
            cancel,
            display,
        }
    }

    /// The SHA-256 of everything read.
    pub(crate) fn digest(self) -> [u8; 32] {
        self.hasher.finalize().into()
    }

    /// The end of the stretch of data or hole that `offset` is in, and whether it is a hole;
    /// before data, the file offset is put at `offset`.
    fn stretch_at_offset(&mut self) -> io::Result<(u64, bool)> {
        let end = self.offset + self.remaining;
        file_copy::stretch_at(self.file, self.offset, end)
    }

    /// Hashes and counts bytes handed out; returns how many.
    fn hand_out(&mut self, bytes: &[u8]) -> usize {
        progress::advance(Unit::Bytes, bytes.len() as u64);
        self.hasher.update(bytes);
        self.remaining -= bytes.len() as u64;
        self.offset += bytes.len() as u64;
        bytes.len()
    }
}

impl Read for SourceReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.remaining == 0 || buf.is_empty() {
            return Ok(0);
        }
        if (self.cancel)() {
            return Err(Signal::Aborted.into_io());
        }
        let mut want = buf.len().min(CHUNK).min(clamp(self.remaining));
        if self.has_holes {
            let (end, is_hole) = match self.stretch {
                Some((end, is_hole)) if self.offset < end => (end, is_hole),
                _ => {
                    let stretch = self.stretch_at_offset()?;
                    self.stretch = Some(stretch);
                    stretch
                }
            };
            want = want.min(clamp(end - self.offset));
            if is_hole {
                buf[..want].fill(0);
                return Ok(self.hand_out(&buf[..want]));
            }
        }
        let n = read_retrying(self.file, &mut buf[..want])?;
        if n == 0 {
            return Err(changed_io(
                self.display,
                "became shorter while it was being archived",
            ));
        }
        Ok(self.hand_out(&buf[..n]))
    }
}

/// Copies `reader` into the new, empty `file` through `buf` (filled before each write), hashing
/// every byte and polling `cancel` per chunk. A whole chunk of zeros is skipped rather than
/// written, so the file gets a hole there: a sparse file comes back sparse instead of as
/// gigabytes of allocated zeros (its bytes are the same either way). Returns the number of bytes
/// copied.
pub(crate) fn write_restored(
    reader: &mut dyn Read,
    file: &mut File,
    buf: &mut [u8],
    hasher: &mut Sha256,
    cancel: &dyn Fn() -> bool,
) -> io::Result<u64> {
    let mut total = 0u64;
    let mut hole = 0u64;
    loop {
        if cancel() {
            return Err(Signal::Aborted.into_io());
        }
        let n = read_full(reader, buf)?;
        if n == 0 {
            break;
        }
        let chunk = &buf[..n];
        hasher.update(chunk);
        if n == buf.len() && is_all_zeros(chunk) {
            hole += n as u64;
        } else {
            if hole > 0 {
                file.seek(SeekFrom::Current(hole as i64))?;
                hole = 0;
            }
            file.write_all(chunk)?;
        }
        progress::advance(Unit::Bytes, n as u64);
        total += n as u64;
    }
    if hole > 0 {
        file.set_len(total)?; // the file ends in a hole
    }
    Ok(total)
}

/// Whether every byte is zero (checked a page at a time, so the inner loop vectorizes).
pub(crate) fn is_all_zeros(bytes: &[u8]) -> bool {
    bytes
        .chunks(4096)
        .all(|page| page.iter().fold(0u8, |any, &b| any | b) == 0)
}

/// Reads until `buf` is full or the input ends; returns how many bytes it holds.
fn read_full(reader: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match read_retrying(reader, &mut buf[filled..])? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

/// One `read`, retried on `EINTR`.
fn read_retrying(reader: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match reader.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

/// `n` as a `usize`, saturating.
fn clamp(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sparse file read through `SourceReader` gives exactly its bytes (holes as zeros), with
    /// their digest, whatever the reader's buffer size, and data on both sides of every hole.
    #[test]
    fn holes_read_as_zeros_without_changing_a_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sparse");
        let file = File::create(&path).unwrap();
        file.set_len(9 << 20).unwrap(); // ends in a hole
        for (at, byte) in [(0u64, 1u8), (3 << 20, 2), ((5 << 20) + 12_345, 3)] {
            crate::paths::io::write_all_at(&file, &vec![byte; 70_000], at).unwrap();
        }
        let expected = std::fs::read(&path).unwrap();
        for buffer in [4096, CHUNK, 1 << 20] {
            let mut file = File::open(&path).unwrap();
            let mut reader = SourceReader::new(&mut file, 9 << 20, &|| false, &path);
            assert!(reader.has_holes);
            let mut got = Vec::new();
            let mut buf = vec![7u8; buffer];
            loop {
                let n = reader.read(&mut buf).unwrap();
                if n == 0 {
                    break;
                }
                got.extend_from_slice(&buf[..n]);
            }
            assert!(got == expected, "buffer {buffer}");
            let digest: [u8; 32] = Sha256::digest(&expected).into();
            assert_eq!(reader.digest(), digest);
        }
    }
}
