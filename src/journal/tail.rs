//! What is at the end of a file after an append of ours may have been cut short, and rolling
//! back only what is provably ours.
//!
//! An append can stop at any byte (a SIGKILL between two `write`s, a full disk), and once it
//! has stopped anyone may append after it. So the only end that is ours to cut is the old
//! content followed by a prefix of exactly our bytes — nothing more, nothing else. Telling that
//! needs our bytes themselves (a digest of the whole append cannot recognise a part of it), so
//! the caller hands them in as a reader: the content in memory, or the copy the journal keeps.

use std::fs::File;
use std::io::{self, Read};

use crate::paths;

/// What follows the old content of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tail {
    /// Nothing: the file is exactly its old size.
    Absent,
    /// A proper prefix of our bytes, and nothing after it.
    CutShort,
    /// All of our bytes, and nothing after them.
    Whole,
    /// Anything else: bytes that are not ours, a shorter file, a longer one, or a file that
    /// changed while it was compared.
    Other,
}

/// The state of a file that tells whether anyone wrote to it between two looks.
#[derive(Debug, PartialEq, Eq)]
struct Version {
    size: u64,
    mtime: (i64, u32),
    ctime: (i64, u32),
}

impl Version {
    fn of(file: &File) -> io::Result<Self> {
        let stat = paths::fsops::fstat(file)?;
        Ok(Version {
            size: stat.size,
            mtime: stat.mtime,
            ctime: stat.ctime,
        })
    }
}

/// Classifies the end of `file` past `old_size` against `ours` (which yields the `ours_len`
/// appended bytes); when it is [`Tail::CutShort`] (or [`Tail::Whole`], unless `keep_whole`),
/// truncates the file back to `old_size` and syncs it. The file is truncated only if it is
/// still, by size and times, what was compared: a write by anyone in between makes it
/// [`Tail::Other`] and nothing is cut. (What remains is the moment between that last look and
/// the truncation: the kernel offers no "truncate if unchanged".) Returns what was found.
pub fn roll_back_if_ours(
    file: &File,
    old_size: u64,
    ours: impl Read,
    ours_len: u64,
    keep_whole: bool,
) -> io::Result<Tail> {
    let before = Version::of(file)?;
    let tail = classify(file, old_size, before.size, ours, ours_len)?;
    let cut = match tail {
        Tail::CutShort => true,
        Tail::Whole => !keep_whole,
        Tail::Absent | Tail::Other => false,
    };
    if !cut {
        return Ok(tail);
    }
    if Version::of(file)? != before {
        return Ok(Tail::Other);
    }
    file.set_len(old_size)?;
    file.sync_all()?;
    Ok(tail)
}

/// How the `size` bytes of `file` continue past `old_size`, compared with `ours`.
fn classify(
    file: &File,
    old_size: u64,
    size: u64,
    mut ours: impl Read,
    ours_len: u64,
) -> io::Result<Tail> {
    if size == old_size {
        return Ok(Tail::Absent);
    }
    if size < old_size || size - old_size > ours_len {
        return Ok(Tail::Other);
    }
    const CHUNK: usize = 64 * 1024;
    let (mut theirs_buf, mut ours_buf) = (vec![0u8; CHUNK], vec![0u8; CHUNK]);
    let mut at = old_size;
    while at < size {
        let n = (size - at).min(CHUNK as u64) as usize;
        if read_fully_at(file, &mut theirs_buf[..n], at)? < n {
            return Ok(Tail::Other);
        }
        match ours.read_exact(&mut ours_buf[..n]) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(Tail::Other),
            Err(e) => return Err(e),
        }
        if theirs_buf[..n] != ours_buf[..n] {
            return Ok(Tail::Other);
        }
        at += n as u64;
    }
    Ok(if size - old_size == ours_len {
        Tail::Whole
    } else {
        Tail::CutShort
    })
}

/// Reads into `buf` from `offset` until it is full or the file ends; returns how much was read.
fn read_fully_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match paths::io::read_at(file, &mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::{self, OpenOptions};

    /// A file holding `content`, opened for reading and writing.
    fn file_with(content: &[u8]) -> (tempfile::TempDir, File) {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("f");
        fs::write(&path, content).unwrap();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        (tmp, file)
    }

    fn content(file: &File) -> Vec<u8> {
        let mut out = vec![0; file.metadata().unwrap().len() as usize];
        read_fully_at(file, &mut out, 0).unwrap();
        out
    }

    const OURS: &[u8] = b"0123456789";

    fn roll_back(file: &File, keep_whole: bool) -> Tail {
        roll_back_if_ours(file, 3, OURS, OURS.len() as u64, keep_whole).unwrap()
    }

    #[test]
    fn only_the_old_content_plus_a_prefix_of_ours_is_cut() {
        let cases: [(&[u8], Tail, &[u8]); 7] = [
            (b"old", Tail::Absent, b"old"),
            (b"old0", Tail::CutShort, b"old"),
            (b"old012345678", Tail::CutShort, b"old"),
            (b"old0123456789", Tail::Whole, b"old0123456789"),
            (b"old0123456789x", Tail::Other, b"old0123456789x"),
            (b"old01x", Tail::Other, b"old01x"),
            (b"ol", Tail::Other, b"ol"),
        ];
        for (before, expected, after) in cases {
            let (_tmp, file) = file_with(before);
            assert_eq!(roll_back(&file, true), expected, "{before:?}");
            assert_eq!(content(&file), after, "{before:?}");
        }
    }

    #[test]
    fn a_whole_append_is_cut_only_when_asked() {
        let (_tmp, file) = file_with(b"old0123456789");
        assert_eq!(roll_back(&file, false), Tail::Whole);
        assert_eq!(content(&file), b"old");
    }

    #[test]
    fn appends_longer_than_a_chunk_are_compared_throughout() {
        let ours: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let mut differs = [&b"old"[..], &ours[..150_000]].concat();
        differs[3 + 140_000] ^= 1;
        let (_tmp, file) = file_with(&differs);
        let tail = roll_back_if_ours(&file, 3, &ours[..], ours.len() as u64, true).unwrap();
        assert_eq!((tail, content(&file)), (Tail::Other, differs));
        let (_tmp, file) = file_with(&[&b"old"[..], &ours[..150_000]].concat());
        let tail = roll_back_if_ours(&file, 3, &ours[..], ours.len() as u64, true).unwrap();
        assert_eq!((tail, content(&file)), (Tail::CutShort, b"old".to_vec()));
    }

    #[test]
    fn a_copy_of_ours_shorter_than_announced_proves_nothing() {
        let (_tmp, file) = file_with(b"old01234");
        let tail = roll_back_if_ours(&file, 3, &OURS[..4], OURS.len() as u64, true).unwrap();
        assert_eq!((tail, content(&file)), (Tail::Other, b"old01234".to_vec()));
    }
}
