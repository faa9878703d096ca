//! Reading a small file whole, with one `read` where its size is still the one `fstat` gave.
//!
//! Most searched files are small: read whole into a buffer the worker keeps, they are searched
//! as one slice, at one system call each. (A streamed search reads a few bytes to sniff a BOM,
//! then the rest, then a last time to see the end: three reads for a 1 KB file.)

use std::io::{self, Read};

/// How much of a file [`read_whole`] read.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Contents {
    /// All of it: the first `n` bytes of the buffer.
    Whole(usize),
    /// It grew past the most read whole: the first `n` bytes of the buffer are its beginning,
    /// the rest is still to be read from the file.
    Begun(usize),
}

/// Reads `file`, a regular file `size` bytes long when it was `fstat`ed (`size` at most `max`),
/// into `buffer` (grown as needed, never shrunk, up to `max + 1` bytes).
///
/// One byte more than `size` is asked for: a regular file returns less than asked only at its
/// end, so a read that stops short exactly at `size` is the end, without another read that
/// returns nothing. Otherwise (the file grew or shrank since, or its file system returns short
/// reads) reading goes on until a read returns nothing, up to `max` bytes.
pub(super) fn read_whole(
    file: &mut impl Read,
    size: u64,
    max: usize,
    buffer: &mut Vec<u8>,
) -> io::Result<Contents> {
    let size = usize::try_from(size).unwrap_or(usize::MAX).min(max);
    let mut want = size + 1;
    let mut filled = 0;
    loop {
        if buffer.len() < want {
            buffer.resize(want, 0);
        }
        let asked = want - filled;
        let n = match file.read(&mut buffer[filled..want]) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        filled += n;
        if n == 0 || (n < asked && filled == size) {
            return Ok(Contents::Whole(filled));
        }
        if filled == want {
            if want > max {
                return Ok(Contents::Begun(filled));
            }
            want = want.saturating_mul(2).min(max + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that gives at most `step` bytes per read and counts its reads.
    struct Trickle<'a> {
        bytes: &'a [u8],
        step: usize,
        reads: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.reads += 1;
            let n = buf.len().min(self.step).min(self.bytes.len());
            buf[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Ok(n)
        }
    }

    fn read(bytes: &[u8], size: u64, max: usize, step: usize) -> (Contents, Vec<u8>, usize) {
        let mut reader = Trickle {
            bytes,
            step,
            reads: 0,
        };
        let mut buffer = Vec::new();
        let got = read_whole(&mut reader, size, max, &mut buffer).unwrap();
        let n = match got {
            Contents::Whole(n) | Contents::Begun(n) => n,
        };
        buffer.truncate(n);
        (got, buffer, reader.reads)
    }

    #[test]
    fn a_file_of_the_size_fstat_gave_takes_one_read() {
        let text = b"one\ntwo\n";
        assert_eq!(
            read(text, 8, 1024, 1 << 20),
            (Contents::Whole(8), text.to_vec(), 1)
        );
        assert_eq!(
            read(b"", 0, 1024, 1 << 20),
            (Contents::Whole(0), Vec::new(), 1)
        );
    }

    #[test]
    fn short_reads_before_the_size_go_on_to_the_end() {
        let text = b"0123456789abcdef";
        let (got, bytes, _) = read(text, 16, 1024, 3);
        assert_eq!((got, bytes), (Contents::Whole(16), text.to_vec()));
    }

    #[test]
    fn a_file_that_grew_since_fstat_is_read_to_its_end() {
        let text = b"0123456789abcdef0123456789abcdef";
        let (got, bytes, _) = read(text, 4, 1024, 1 << 20);
        assert_eq!((got, bytes), (Contents::Whole(32), text.to_vec()));
        let (got, bytes, _) = read(text, 4, 1024, 5);
        assert_eq!((got, bytes), (Contents::Whole(32), text.to_vec()));
    }

    #[test]
    fn a_file_that_grew_past_the_most_is_only_begun() {
        let text = [b'x'; 100];
        let (got, bytes, _) = read(&text, 4, 10, 1 << 20);
        assert_eq!(got, Contents::Begun(11));
        assert_eq!(bytes, text[..11]);
        let (got, _, _) = read(&text, 10, 10, 1 << 20);
        assert_eq!(got, Contents::Begun(11));
    }

    #[test]
    fn a_file_that_shrank_is_read_as_it_is() {
        let (got, bytes, _) = read(b"abc", 10, 1024, 1 << 20);
        assert_eq!((got, bytes), (Contents::Whole(3), b"abc".to_vec()));
    }
}
