//! What copying one file to another file system takes beyond `io::copy`, as `mv` does it: holes
//! stay holes, and extended attributes (user attributes, POSIX ACLs, file capabilities) come
//! along. Used by [`super::trees::copy_tree_at`].

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::fd::BorrowedFd;

use rustix::fs::{SeekFrom as Whence, XattrFlags};
use rustix::io::Errno;

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
    let mut offset = 0;
    loop {
        let data = match rustix::fs::seek(source, Whence::Data(offset)) {
            Ok(data) => data,
            Err(Errno::NXIO) => break, // only a hole from `offset` to the end
            // A file system without SEEK_DATA: every byte is data.
            Err(Errno::INVAL) if offset == 0 => {
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

/// Copies `len` bytes (or up to the end) from `offset` in `source` to the same offset in `copy`,
/// in the kernel where it can (`copy_file_range`, `sendfile`).
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
        let copied = io::copy(&mut source.take(want), copy)?;
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

/// Gives `copy` every extended attribute of `source` that its file system and our privileges
/// allow, as `mv` does: an attribute the destination does not support or we may not set
/// (`security.*` without the capability, say) is left out silently; any other failure is an
/// error. Call it after changing the owner (which clears file capabilities) and before setting
/// the mode (an ACL sets the group bits).
pub fn copy_xattrs(source: BorrowedFd<'_>, copy: BorrowedFd<'_>) -> io::Result<()> {
    let names = match read_sized(
        || rustix::fs::flistxattr_query(source),
        |buf| rustix::fs::flistxattr(source, buf),
    ) {
        Ok(names) => names,
        Err(Errno::NOTSUP) => return Ok(()), // the source's file system has none
        Err(e) => return Err(e.into()),
    };
    for name in names.split(|&b| b == 0).filter(|n| !n.is_empty()) {
        let value = match read_sized(
            || rustix::fs::fgetxattr_query(source, name),
            |buf| rustix::fs::fgetxattr(source, name, buf),
        ) {
            Ok(value) => value,
            Err(Errno::NODATA) => continue, // removed since it was listed
            Err(e) => return Err(e.into()),
        };
        match rustix::fs::fsetxattr(copy, name, &value, XattrFlags::empty()) {
            Ok(()) | Err(Errno::NOTSUP | Errno::PERM | Errno::ACCESS) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Reads a list or value of unknown size: `query` tells the size, `read` fills a buffer of it,
/// again if it grew in between (`ERANGE`).
fn read_sized(
    query: impl Fn() -> Result<usize, Errno>,
    mut read: impl FnMut(&mut [u8]) -> Result<usize, Errno>,
) -> Result<Vec<u8>, Errno> {
    loop {
        let mut buf = vec![0u8; query()?];
        if buf.is_empty() {
            return Ok(buf); // an empty buffer would be taken for another query
        }
        match read(&mut buf) {
            Ok(n) => {
                buf.truncate(n);
                return Ok(buf);
            }
            Err(Errno::RANGE) => continue,
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;
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

    #[test]
    fn extended_attributes_come_along() {
        let dir = tempfile::tempdir().unwrap();
        let source = File::create(dir.path().join("a")).unwrap();
        let copy = File::create(dir.path().join("b")).unwrap();
        let big = vec![b'v'; 3000];
        for (name, value) in [
            ("user.one", &b"1"[..]),
            ("user.big", &big),
            ("user.empty", b""),
        ] {
            rustix::fs::fsetxattr(&source, name, value, XattrFlags::empty()).unwrap();
        }
        copy_xattrs(source.as_fd(), copy.as_fd()).unwrap();
        let read = |name: &str| {
            read_sized(
                || rustix::fs::fgetxattr_query(&copy, name),
                |buf| rustix::fs::fgetxattr(&copy, name, buf),
            )
            .unwrap()
        };
        assert_eq!(read("user.one"), b"1");
        assert_eq!(read("user.big"), big);
        assert_eq!(read("user.empty"), b"");
    }
}
