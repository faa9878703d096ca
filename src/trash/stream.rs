//! Fixed-size streaming with hashing and cancellation, in both directions.
//!
//! Memory never grows with file size: archiving pulls at most [`CHUNK`] bytes per read through
//! [`SourceReader`] (the `tar` builder copies through it with its own fixed buffer), restoring
//! copies through one [`CHUNK`]-sized buffer in [`copy_chunks`]. Both poll the cancel callback
//! before every chunk, so a cancel is noticed within one chunk.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::Path;

use sha2::{Digest, Sha256};

use super::error::{changed_io, Signal};

/// The most bytes read from a file in one step.
pub(crate) const CHUNK: usize = 64 * 1024;

/// Reads exactly `len` bytes of an original file (the size `fstat` reported), hashing each byte
/// handed out: the digest is over exactly what went into the archive.
pub(crate) struct SourceReader<'a> {
    file: &'a mut File,
    remaining: u64,
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
        SourceReader {
            file,
            remaining: len,
            hasher: Sha256::new(),
            cancel,
            display,
        }
    }

    /// The SHA-256 of everything read.
    pub(crate) fn digest(self) -> [u8; 32] {
        self.hasher.finalize().into()
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
        let want = buf.len().min(CHUNK).min(clamp(self.remaining));
        let n = read_retrying(self.file, &mut buf[..want])?;
        if n == 0 {
            return Err(changed_io(
                self.display,
                "became shorter while it was being archived",
            ));
        }
        self.hasher.update(&buf[..n]);
        self.remaining -= n as u64;
        Ok(n)
    }
}

/// Copy `reader` to `writer` through `buf`, hashing every byte and polling `cancel` per chunk.
/// Returns the number of bytes copied.
pub(crate) fn copy_chunks(
    reader: &mut dyn Read,
    writer: &mut dyn Write,
    buf: &mut [u8],
    hasher: &mut Sha256,
    cancel: &dyn Fn() -> bool,
) -> io::Result<u64> {
    let mut total = 0u64;
    loop {
        if cancel() {
            return Err(Signal::Aborted.into_io());
        }
        let n = read_retrying(reader, buf)?;
        if n == 0 {
            return Ok(total);
        }
        hasher.update(&buf[..n]);
        writer.write_all(&buf[..n])?;
        total += n as u64;
    }
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
