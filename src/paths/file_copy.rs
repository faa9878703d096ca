//! Copying one file's bytes to another file system as `mv` does: holes stay holes. Used by
//! [`super::trees::copy_tree_at`].

use std::fs::File;
use std::io::{self, Seek, SeekFrom};

#[cfg(unix)]
use rustix::fs::SeekFrom as Whence;
#[cfg(unix)]
use rustix::io::Errno;

use super::platform;

/// Copies the bytes of `source` (from its start) into the empty `copy`, at most `step` bytes
/// between two calls of `go_on`, which ends the copy with `false`. Only the data of a file with
/// holes is copied, at its own offsets, and the copy then gets the source's length: a sparse
/// disk image stays sparse instead of filling the destination with zeros. Returns whether it
/// finished (`false`: `go_on` stopped it).
pub fn copy_bytes(
    source: &File,
    copy: &mut File,
    has_holes: bool,
    step: u64,
    go_on: &dyn Fn() -> bool,
) -> io::Result<bool> {
    if !has_holes {
        return copy_range(source, copy, 0, u64::MAX, step, go_on);
    }
    copy_data_stretches(source, copy, step, go_on)
}

/// Windows: holes are not looked for yet (`FSCTL_QUERY_ALLOCATED_RANGES` would tell them), so
/// a sparse file's copy is whole (docs/windows.md).
#[cfg(windows)]
fn copy_data_stretches(
    source: &File,
    copy: &mut File,
    step: u64,
    go_on: &dyn Fn() -> bool,
) -> io::Result<bool> {
    copy_range(source, copy, 0, u64::MAX, step, go_on)
}

/// [`copy_bytes`] of a file with holes: each stretch of data at its own offset, then the
/// source's length.
#[cfg(unix)]
fn copy_data_stretches(
    source: &File,
    copy: &mut File,
    step: u64,
    go_on: &dyn Fn() -> bool,
) -> io::Result<bool> {
    let mut offset = 0;
    loop {
        let data = match rustix::fs::seek(source, Whence::Data(offset)) {
            Ok(data) => data,
            Err(Errno::NXIO) => break, // only a hole from `offset` to the end
            // A file system without SEEK_DATA: every byte is data.
            Err(e) if offset == 0 && cannot_seek_data(e) => {
                return copy_range(source, copy, 0, u64::MAX, step, go_on)
            }
            Err(e) => return Err(e.into()),
        };
        let hole = rustix::fs::seek(source, Whence::Hole(data))?;
        if !copy_range(source, copy, data, hole - data, step, go_on)? {
            return Ok(false);
        }
        offset = hole;
    }
    let end = (&*source).seek(SeekFrom::End(0))?;
    copy.set_len(end)?;
    Ok(true)
}

/// Where the stretch of data or hole that `offset` is in ends (at most at `end`), and whether it
/// is a hole, as `SEEK_DATA`/`SEEK_HOLE` tell (Linux and macOS alike). Before data, the file
/// offset is put at `offset`. A file system that cannot tell: data to `end`. No data after
/// `offset`: a hole to `end` (or the file shrank, which a caller's later stat catches).
#[cfg(unix)]
pub fn stretch_at(file: &File, offset: u64, end: u64) -> io::Result<(u64, bool)> {
    let stretch = match rustix::fs::seek(file, Whence::Data(offset)) {
        Ok(data) if data > offset => (data.min(end), true),
        Ok(_) => (
            rustix::fs::seek(file, Whence::Hole(offset))?.min(end),
            false,
        ),
        Err(Errno::NXIO) => (end, true),
        Err(e) if cannot_seek_data(e) => (end, false),
        Err(e) => return Err(e.into()),
    };
    if !stretch.1 {
        rustix::fs::seek(file, Whence::Start(offset))?;
    }
    Ok(stretch)
}

/// Windows: the system cannot tell here (holes are not looked for yet), so data to `end`.
#[cfg(windows)]
pub fn stretch_at(file: &File, offset: u64, end: u64) -> io::Result<(u64, bool)> {
    (&*file).seek(SeekFrom::Start(offset))?;
    Ok((end, false))
}

/// Whether `SEEK_DATA` failed because the file system does not have it (Linux: `EINVAL`; macOS
/// also `ENOTSUP`).
#[cfg(unix)]
fn cannot_seek_data(e: Errno) -> bool {
    e == Errno::INVAL || platform::is_unsupported(e)
}

/// Copies `len` bytes (or up to the end) from `offset` in `source` to the same offset in `copy`,
/// in the kernel where it can (see [`platform::copy_bytes`]).
fn copy_range(
    source: &File,
    copy: &mut File,
    offset: u64,
    len: u64,
    step: u64,
    go_on: &dyn Fn() -> bool,
) -> io::Result<bool> {
    (&*source).seek(SeekFrom::Start(offset))?;
    copy.seek(SeekFrom::Start(offset))?;
    let mut left = len;
    while left > 0 {
        let want = left.min(step);
        let copied = platform::copy_bytes(source, copy, want)?;
        left -= copied;
        if copied < want {
            break; // the end of the file, sooner than listed: the caller's version check sees it
        }
        if left > 0 && !go_on() {
            return Ok(false);
        }
    }
    Ok(true)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::{FileExt, MetadataExt};

    /// A 64 MiB file of two holes and 1 MiB of data in the middle.
    fn sparse_file(dir: &std::path::Path) -> File {
        let path = dir.join("sparse");
        let file = File::create(&path).unwrap();
        file.set_len(64 << 20).unwrap();
        file.write_all_at(&vec![b'x'; 1 << 20], 20 << 20).unwrap();
        File::open(&path).unwrap()
    }

    #[test]
    fn holes_stay_holes() {
        let dir = tempfile::tempdir().unwrap();
        let source = sparse_file(dir.path());
        let mut copy = File::create(dir.path().join("copy")).unwrap();
        assert!(copy_bytes(&source, &mut copy, true, 256 << 10, &|| true).unwrap());
        let meta = copy.metadata().unwrap();
        assert_eq!(meta.len(), 64 << 20);
        assert!(meta.blocks() * 512 < 4 << 20, "{} blocks", meta.blocks());
        let bytes = std::fs::read(dir.path().join("copy")).unwrap();
        assert_eq!(bytes, std::fs::read(dir.path().join("sparse")).unwrap());
    }

    #[test]
    fn a_file_ending_in_data_and_an_empty_file_copy_whole() {
        let dir = tempfile::tempdir().unwrap();
        sparse_file(dir.path());
        std::fs::OpenOptions::new()
            .append(true)
            .open(dir.path().join("sparse"))
            .and_then(|mut f| io::Write::write_all(&mut f, b"tail"))
            .unwrap();
        for has_holes in [true, false] {
            let source = File::open(dir.path().join("sparse")).unwrap();
            let mut copy = File::create(dir.path().join("copy")).unwrap();
            assert!(copy_bytes(&source, &mut copy, has_holes, 8 << 20, &|| true).unwrap());
            let bytes = std::fs::read(dir.path().join("copy")).unwrap();
            assert_eq!(bytes.len(), (64 << 20) + 4);
            assert!(bytes.ends_with(b"tail") && bytes[20 << 20] == b'x');
        }
        File::create(dir.path().join("empty")).unwrap();
        let empty = File::open(dir.path().join("empty")).unwrap();
        let mut copy = File::create(dir.path().join("copy")).unwrap();
        assert!(copy_bytes(&empty, &mut copy, true, 1, &|| true).unwrap());
        assert_eq!(copy.metadata().unwrap().len(), 0);
    }

    #[test]
    fn a_stop_between_steps_ends_the_copy() {
        let dir = tempfile::tempdir().unwrap();
        let source = sparse_file(dir.path());
        let mut copy = File::create(dir.path().join("copy")).unwrap();
        assert!(!copy_bytes(&source, &mut copy, true, 256 << 10, &|| false).unwrap());
        assert!(!copy_bytes(&source, &mut copy, false, 256 << 10, &|| false).unwrap());
    }
}
