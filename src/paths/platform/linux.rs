//! Linux's fast paths (see the table in [`super`]).

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::{Mode, OFlags, RawDir, ResolveFlags};

use super::portable;
use crate::paths::os_error::libc_codes;
use crate::paths::EntryKind;

pub(super) fn handle_access() -> OFlags {
    OFlags::PATH
}

pub(super) fn no_access_time() -> OFlags {
    OFlags::NOATIME
}

/// One `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`; the component walk on kernels before
/// 5.6, which lack it.
pub(super) fn open_beneath(start: OwnedFd, rel: &Path, flags: OFlags) -> io::Result<OwnedFd> {
    if rel
        .components()
        .any(|c| !matches!(c, std::path::Component::Normal(_)))
    {
        return Err(io::Error::from_raw_os_error(libc_codes::EXDEV));
    }
    let at: &Path = if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    };
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    match rustix::fs::openat2(&start, at, flags, Mode::empty(), resolve) {
        Err(e) if e == rustix::io::Errno::NOSYS => portable::open_beneath(start, rel, flags),
        other => other.map_err(io::Error::from),
    }
}

/// `getdents64` into `buffer`, grown as needed and kept for the next directory.
pub(super) fn read_entries(
    dir: BorrowedFd<'_>,
    buffer: &mut Vec<u8>,
) -> io::Result<Vec<(OsString, Option<EntryKind>)>> {
    if buffer.capacity() == 0 {
        buffer.reserve(32 << 10);
    }
    buffer.clear();
    let mut raw = RawDir::new(dir, buffer.spare_capacity_mut());
    let mut entries = Vec::new();
    while let Some(entry) = raw.next() {
        let entry = entry.map_err(io::Error::from)?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        entries.push((
            OsStr::from_bytes(name).to_owned(),
            super::listed_kind(entry.file_type()),
        ));
    }
    Ok(entries)
}

/// One `syncfs` for everything written to the file system holding `dir`.
pub(super) fn sync_file_system(dir: BorrowedFd<'_>) -> io::Result<()> {
    rustix::fs::syncfs(dir).map_err(io::Error::from)
}

/// `std::io::copy` between two files is `copy_file_range` (or `sendfile`) on Linux.
pub(super) fn copy_bytes(source: &File, copy: &mut File, len: u64) -> io::Result<u64> {
    io::copy(&mut io::Read::take(source, len), copy)
}

/// Linux has no direct query, but a read lease (`F_SETLEASE` `F_RDLCK`) is refused with `EAGAIN`
/// exactly when the file is open for writing anywhere; so one is taken on our read-only `file`
/// and released at once. `None` where no lease can be taken (only the file's owner or a process
/// with `CAP_LEASE` may; some file systems have none). Should a writer open the file in that
/// instant, the lease break is signalled with SIGURG (ignored unless handled) rather than SIGIO,
/// which would end the process.
pub(super) fn open_for_writing_elsewhere(file: &File) -> Option<bool> {
    /// `F_SETSIG` (Linux, every architecture); the `libc` crate does not name it.
    const F_SETSIG: libc::c_int = 10;
    let fd = file.as_raw_fd();
    // SAFETY: fcntl with integer arguments on a descriptor `file` keeps open; no memory is
    // passed.
    unsafe {
        if libc::fcntl(fd, F_SETSIG, libc::SIGURG) != 0 {
            return None;
        }
        if libc::fcntl(fd, libc::F_SETLEASE, libc::F_RDLCK) == 0 {
            libc::fcntl(fd, libc::F_SETLEASE, libc::F_UNLCK);
            return Some(false);
        }
    }
    match io::Error::last_os_error().raw_os_error() {
        Some(libc::EAGAIN) => Some(true),
        _ => None,
    }
}
