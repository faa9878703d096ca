//! Opening directories and files without following a symlink: directories beneath an allowed
//! tree (one `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` on Linux, a component walk with
//! `O_NOFOLLOW` elsewhere: see [`platform`]), files and subdirectories relative to a descriptor,
//! and the primitives [`make_dirs`](super::make_dirs) makes missing directories with.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{Mode, OFlags};

use super::errno;
use crate::paths::os_error::libc_codes;
use crate::paths::platform;

/// The flags of a directory handle for `*at` calls (`O_PATH` on Linux, see
/// [`platform::handle_access`]), never following a final symlink.
fn handle_flags() -> OFlags {
    platform::handle_access() | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// The flags of a directory opened for listing, or of a handle (see [`handle_flags`]).
fn dir_flags(readable: bool) -> OFlags {
    if readable {
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
    } else {
        handle_flags()
    }
}

/// Opens the anchor (canonical; the one thing opened by path) as a handle.
pub(super) fn open_anchor(anchor: &Path) -> io::Result<OwnedFd> {
    rustix::fs::open(anchor, handle_flags(), Mode::empty()).map_err(errno)
}

/// The error of a path that leaves the tree it was confined to (`EXDEV`).
pub(super) fn cross_device() -> io::Error {
    io::Error::from_raw_os_error(libc_codes::EXDEV)
}

/// `dir` relative to `anchor`, or [`cross_device`] when it is not inside it.
pub(super) fn relative<'a>(anchor: &Path, dir: &'a Path) -> io::Result<&'a Path> {
    dir.strip_prefix(anchor).map_err(|_| cross_device())
}

/// Opens the directory `dir` (canonical, inside `anchor`) without following any symlink on the
/// way. `readable` gives a descriptor that can be listed and fsynced; otherwise a handle for
/// `*at` calls (`O_PATH` on Linux).
pub fn open_dir(anchor: &Path, dir: &Path, readable: bool) -> io::Result<OwnedFd> {
    let rel = relative(anchor, dir)?;
    platform::open_beneath(open_anchor(anchor)?, rel, dir_flags(readable))
}

/// Opens the subdirectory `name` of `dir` as a handle for `*at` calls, never following a
/// symlink (one component of the walk in [`make_dirs`](super::make_dirs)).
pub(super) fn open_handle_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<OwnedFd> {
    rustix::fs::openat(dir, name, handle_flags(), Mode::empty()).map_err(errno)
}

/// `mkdirat` of `name` in `dir` with `mode` (minus umask): `Ok(true)` when this call made it,
/// `Ok(false)` when an entry was there already.
pub(super) fn make_dir(dir: BorrowedFd<'_>, name: &OsStr, mode: u32) -> io::Result<bool> {
    match rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(mode as _)) {
        Ok(()) => Ok(true),
        Err(e) if e == rustix::io::Errno::EXIST => Ok(false),
        Err(e) => Err(errno(e)),
    }
}

/// Removes the directory `name` of `parent` that a failed [`make_dirs`](super::make_dirs) call
/// made, if it is still empty (`rmdir` removes nothing else). `identity` is not checked here:
/// Unix has no removal through a checked handle, and an empty directory is all `rmdir` takes.
pub(super) fn remove_made_dir(
    parent: BorrowedFd<'_>,
    name: &OsStr,
    identity: (u64, u64),
) -> io::Result<()> {
    let _ = identity;
    rustix::fs::unlinkat(parent, name, rustix::fs::AtFlags::REMOVEDIR).map_err(errno)
}

/// Opens the directory `rel` (relative, plain components) beneath `dir` without following any
/// symlink: a handle, or a readable descriptor when `readable`.
pub fn open_dir_beneath(dir: BorrowedFd<'_>, rel: &Path, readable: bool) -> io::Result<OwnedFd> {
    let start = rustix::fs::openat(dir, ".", handle_flags(), Mode::empty()).map_err(errno)?;
    platform::open_beneath(start, rel, dir_flags(readable))
}

/// Opens the subdirectory `name` of `dir` for reading its entries, never following a symlink (a
/// link there is `ELOOP`/`ENOTDIR`).
pub fn open_subdir(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<OwnedFd> {
    rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(errno)
}

/// A readable descriptor of the same directory as the handle `dir`, for operations that
/// need one (listing, fsync, `futimens` beneath it).
pub fn reopen_readable(dir: BorrowedFd<'_>) -> io::Result<OwnedFd> {
    rustix::fs::openat(
        dir,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(errno)
}

/// Opens `name` in `dir` for reading without following a symlink and without blocking on a FIFO;
/// the caller checks the type with `fstat` before reading.
pub fn open_for_read(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<File> {
    file_at(dir, name, READ_FLAGS, 0)
}

/// The flags of [`open_for_read`].
const READ_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::NOFOLLOW)
    .union(OFlags::NONBLOCK)
    .union(OFlags::NOCTTY)
    .union(OFlags::CLOEXEC);

/// Opens the many files a search reads, as [`open_for_read`] does, and where the system allows
/// it without their reads updating the access times (`O_NOATIME` on Linux, allowed on the
/// caller's own files). Once that is refused (someone else's file), the files that follow are
/// opened without it: a tree of others' files costs one refused open per search, not one per
/// file. Shared by the search's threads.
#[derive(Debug, Default)]
pub struct SearchOpener {
    no_access_time_refused: AtomicBool,
}

impl SearchOpener {
    /// Opens `name` in `dir` for reading (see [`open_for_read`]).
    pub fn open(&self, dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<File> {
        let quiet = platform::no_access_time();
        if !quiet.is_empty() && !self.no_access_time_refused.load(Ordering::Relaxed) {
            match rustix::fs::openat(dir, name, READ_FLAGS | quiet, Mode::empty()) {
                Err(e) if e == rustix::io::Errno::PERM => {
                    self.no_access_time_refused.store(true, Ordering::Relaxed)
                }
                opened => return opened.map(File::from).map_err(errno),
            }
        }
        open_for_read(dir, name)
    }
}

/// Opens the existing `name` in `dir` for reading and appending through one descriptor, without
/// following a symlink and without blocking on a FIFO: the caller checks (with `fstat` and reads
/// on this very descriptor) that it is the file it planned on, then appends through it, so
/// nothing swapped in under the name between the check and the write can receive the bytes.
pub fn open_for_update(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<File> {
    let flags = OFlags::RDWR
        | OFlags::APPEND
        | OFlags::NOFOLLOW
        | OFlags::NONBLOCK
        | OFlags::NOCTTY
        | OFlags::CLOEXEC;
    file_at(dir, name, flags, 0)
}

/// Opens the existing `name` in `dir` for reading and writing in place (at offsets: no
/// `O_APPEND`), without following a symlink and without blocking on a FIFO; the caller checks
/// with `fstat` that it is the file it means before writing.
pub fn open_in_place(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<File> {
    let flags =
        OFlags::RDWR | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    file_at(dir, name, flags, 0)
}

/// Opens `name` in `dir` for appending whole records, creating it private (0600), never following
/// a symlink and never blocking on a FIFO.
pub fn open_for_log(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<File> {
    let flags = OFlags::WRONLY
        | OFlags::APPEND
        | OFlags::CREATE
        | OFlags::NOFOLLOW
        | OFlags::NONBLOCK
        | OFlags::CLOEXEC;
    file_at(dir, name, flags, 0o600)
}

/// Creates `name` in `dir` for writing, private (0600) until its final mode is applied; fails if
/// anything (even a dangling link) is there.
pub fn create_file_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<File> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    file_at(dir, name, flags, 0o600)
}

/// Creates `name` in `dir` for writing as a new file is made (mode 0666 minus umask); fails if
/// anything (even a dangling link) is there.
pub fn create_file_umasked_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<File> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    file_at(dir, name, flags, 0o666)
}

/// [`create_file_at`] for reading as well as writing (a file written, then read back).
pub fn create_read_write_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<File> {
    let flags = OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    file_at(dir, name, flags, 0o600)
}

/// Opens (creating it, private: 0600) the lock file `name` in `dir` for reading and writing,
/// never following a symlink and never blocking on a FIFO; the caller checks with `fstat` that
/// it is a regular file of ours.
pub fn open_lock_file(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<File> {
    let flags = OFlags::RDWR
        | OFlags::CREATE
        | OFlags::NOFOLLOW
        | OFlags::NONBLOCK
        | OFlags::NOCTTY
        | OFlags::CLOEXEC;
    file_at(dir, name, flags, 0o600)
}

/// `openat` of `name` in `dir` with `flags` (and `mode` for a file it creates), as a [`File`].
fn file_at(dir: BorrowedFd<'_>, name: &OsStr, flags: OFlags, mode: u32) -> io::Result<File> {
    rustix::fs::openat(dir, name, flags, Mode::from_raw_mode(mode as _))
        .map(File::from)
        .map_err(errno)
}
