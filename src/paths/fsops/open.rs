//! Opening directories and files without following a symlink: directories beneath an allowed
//! tree (one `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` on Linux, a component walk with
//! `O_NOFOLLOW` elsewhere: see [`platform`]), files and subdirectories relative to a descriptor,
//! and creating missing directories the same way.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

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

fn open_anchor(anchor: &Path) -> io::Result<OwnedFd> {
    rustix::fs::open(anchor, handle_flags(), Mode::empty()).map_err(errno)
}

fn relative<'a>(anchor: &Path, dir: &'a Path) -> io::Result<&'a Path> {
    dir.strip_prefix(anchor)
        .map_err(|_| io::Error::from_raw_os_error(libc_codes::EXDEV))
}

/// Opens the directory `dir` (canonical, inside `anchor`) without following any symlink on the
/// way. `readable` gives a descriptor that can be listed and fsynced; otherwise a handle for
/// `*at` calls (`O_PATH` on Linux).
pub fn open_dir(anchor: &Path, dir: &Path, readable: bool) -> io::Result<OwnedFd> {
    let rel = relative(anchor, dir)?;
    platform::open_beneath(open_anchor(anchor)?, rel, dir_flags(readable))
}

/// `mkdir -p dir` beneath `anchor`, creating each missing component with `mkdirat` (mode 0777
/// minus umask) and descending with `O_NOFOLLOW`. Returns a handle of `dir` and whether anything
/// was created. An existing non-directory component → `ENOTDIR`.
pub fn ensure_dir(anchor: &Path, dir: &Path) -> io::Result<(OwnedFd, bool)> {
    ensure_dir_mode(anchor, dir, 0o777)
}

/// [`ensure_dir`] creating missing directories with `mode` (minus umask).
pub fn ensure_dir_mode(anchor: &Path, dir: &Path, mode: u32) -> io::Result<(OwnedFd, bool)> {
    // Fast path: it already exists.
    match open_dir(anchor, dir, false) {
        Ok(fd) => return Ok((fd, false)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    make_dirs_beneath(open_anchor(anchor)?, relative(anchor, dir)?, mode)
}

/// `mkdir -p` of the relative path `rel` beneath the directory `start`, one component at a time
/// (`mkdirat` with `mode`, then `openat(O_NOFOLLOW)`): a symlink on the way is `ELOOP`/`ENOTDIR`,
/// never followed. Returns a handle of the last directory and whether anything was created.
pub fn make_dirs_beneath(start: OwnedFd, rel: &Path, mode: u32) -> io::Result<(OwnedFd, bool)> {
    let mut current = start;
    let mut created = false;
    for component in rel.components() {
        let Component::Normal(part) = component else {
            return Err(io::Error::from_raw_os_error(libc_codes::EXDEV));
        };
        match rustix::fs::mkdirat(&current, part, Mode::from_raw_mode(mode as _)) {
            Ok(()) => created = true,
            Err(e) if e == rustix::io::Errno::EXIST => {}
            Err(e) => return Err(errno(e)),
        }
        current =
            rustix::fs::openat(&current, part, handle_flags(), Mode::empty()).map_err(errno)?;
    }
    Ok((current, created))
}

/// A directory [`ensure_dir_made`] made: its path, a handle of its parent, and the device and
/// inode of both (so that it can be removed again, only if it is still this one and empty).
#[derive(Debug)]
pub struct MadeDir {
    pub path: PathBuf,
    pub parent: OwnedFd,
    pub parent_identity: (u64, u64),
    pub identity: (u64, u64),
}

/// [`ensure_dir`], telling which directories it made (shallowest first): only those its own
/// `mkdirat` created, not one that another process made meanwhile.
pub fn ensure_dir_made(anchor: &Path, dir: &Path) -> io::Result<(OwnedFd, Vec<MadeDir>)> {
    ensure_dir_made_with(anchor, dir, |parent, _, name| {
        match rustix::fs::mkdirat(parent, name, Mode::from_raw_mode(0o777)) {
            Ok(()) => Ok(true),
            Err(e) if e == rustix::io::Errno::EXIST => Ok(false),
            Err(e) => Err(errno(e)),
        }
    })
}

/// [`ensure_dir_made`], each missing directory made by `make(parent, path, name)` (never
/// called for one that exists): `Ok(true)` when it made the directory `name` of `parent`
/// (canonical path `path`), `Ok(false)` when one was there already (made by someone else
/// meanwhile).
pub fn ensure_dir_made_with(
    anchor: &Path,
    dir: &Path,
    mut make: impl FnMut(BorrowedFd<'_>, &Path, &OsStr) -> io::Result<bool>,
) -> io::Result<(OwnedFd, Vec<MadeDir>)> {
    match open_dir(anchor, dir, false) {
        Ok(fd) => return Ok((fd, Vec::new())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut made = Vec::new();
    let result = make_dirs_reporting(anchor, dir, &mut made, &mut make);
    if result.is_err() {
        // Nothing half made: what was made before the error goes again (if still empty).
        for dir in made.iter().rev() {
            if let Some(name) = dir.path.file_name() {
                let _ = rustix::fs::unlinkat(&dir.parent, name, rustix::fs::AtFlags::REMOVEDIR);
            }
        }
    }
    result.map(|fd| (fd, made))
}

/// The work of [`ensure_dir_made_with`]: each directory made is pushed to `made` as it is.
fn make_dirs_reporting(
    anchor: &Path,
    dir: &Path,
    made: &mut Vec<MadeDir>,
    make: &mut impl FnMut(BorrowedFd<'_>, &Path, &OsStr) -> io::Result<bool>,
) -> io::Result<OwnedFd> {
    let mut current = open_anchor(anchor)?;
    let mut path = anchor.to_path_buf();
    for component in relative(anchor, dir)?.components() {
        let Component::Normal(part) = component else {
            return Err(io::Error::from_raw_os_error(libc_codes::EXDEV));
        };
        path.push(part);
        match rustix::fs::openat(&current, part, handle_flags(), Mode::empty()) {
            Ok(next) => {
                current = next;
                continue;
            }
            Err(e) if e == rustix::io::Errno::NOENT => {}
            Err(e) => return Err(errno(e)),
        }
        let created = make(current.as_fd(), &path, part)?;
        let next =
            rustix::fs::openat(&current, part, handle_flags(), Mode::empty()).map_err(errno)?;
        if created {
            made.push(MadeDir {
                path: path.clone(),
                parent_identity: super::identity(&super::fstat(&current)?),
                identity: super::identity(&super::fstat(&next)?),
                parent: current,
            });
        }
        current = next;
    }
    Ok(current)
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
    let flags =
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    file_at(dir, name, flags, 0)
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
