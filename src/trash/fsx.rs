//! Small, race-free filesystem primitives on directory file descriptors.
//!
//! Everything that touches the user's files goes through here: `*at` system calls relative to a
//! directory fd, `O_NOFOLLOW` on every open, exclusive creation, and no-replace renames. A path
//! string is never re-resolved, so a directory swapped for a symlink cannot redirect us.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags, RenameFlags, Stat, Timespec, Timestamps};

/// What an entry is, from its `lstat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EntryType {
    /// Regular file.
    File,
    /// Directory.
    Dir,
    /// Symbolic link.
    Symlink,
    /// FIFO, socket, character or block device.
    Special,
}

/// The facts about an entry that change when it is modified, replaced or (for a directory) when
/// an entry is added, removed or renamed inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Snapshot {
    pub dev: u64,
    pub ino: u64,
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    pub size: u64,
    pub mtime: (i64, u32),
    pub ctime: (i64, u32),
}

impl Snapshot {
    /// The snapshot of a `stat` result.
    pub(crate) fn of(stat: &Stat) -> Self {
        Snapshot {
            dev: stat.st_dev,
            ino: stat.st_ino,
            mode: stat.st_mode,
            uid: stat.st_uid,
            gid: stat.st_gid,
            size: stat.st_size as u64,
            mtime: (stat.st_mtime, stat.st_mtime_nsec as u32),
            ctime: (stat.st_ctime, stat.st_ctime_nsec as u32),
        }
    }

    /// Equal except for the ctime — what is left of a hard-linked file after we unlinked one of
    /// its other names (the unlink changed its link count and so its ctime).
    pub(crate) fn same_except_ctime(&self, other: &Snapshot) -> bool {
        Snapshot {
            ctime: other.ctime,
            ..*self
        } == *other
    }

    /// The entry's type.
    pub(crate) fn entry_type(&self) -> EntryType {
        match FileType::from_raw_mode(self.mode) {
            FileType::RegularFile => EntryType::File,
            FileType::Directory => EntryType::Dir,
            FileType::Symlink => EntryType::Symlink,
            _ => EntryType::Special,
        }
    }

    /// Permission bits only.
    pub(crate) fn permissions(&self) -> u32 {
        self.mode & 0o7777
    }
}

/// `lstat` of `name` inside `dir`.
pub(crate) fn stat_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<Snapshot> {
    let stat = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)?;
    Ok(Snapshot::of(&stat))
}

/// `fstat` of an open fd.
pub(crate) fn stat_fd(fd: impl AsFd) -> io::Result<Snapshot> {
    Ok(Snapshot::of(&rustix::fs::fstat(fd)?))
}

/// Open the directory `name` inside `dir` without following a symlink.
pub(crate) fn open_dir_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    Ok(rustix::fs::openat(dir, name, flags, Mode::empty())?)
}

/// Open the regular file `name` inside `dir` for reading, without following a symlink and
/// without blocking should it have been swapped for a FIFO.
pub(crate) fn open_file_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<File> {
    let flags =
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK;
    Ok(File::from(rustix::fs::openat(
        dir,
        name,
        flags,
        Mode::empty(),
    )?))
}

/// Create `name` inside `dir` for writing; fails if anything (even a dangling link) is there.
pub(crate) fn create_file_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<File> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mode = Mode::from_raw_mode(0o600);
    Ok(File::from(rustix::fs::openat(dir, name, flags, mode)?))
}

/// Create the directory `name` inside `dir` (private until its final mode is applied).
pub(crate) fn mkdir_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    Ok(rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o700))?)
}

/// Create the symlink `name` inside `dir` pointing at `target` (bytes as they are).
pub(crate) fn symlink_at(target: &[u8], dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    Ok(rustix::fs::symlinkat(OsStr::from_bytes(target), dir, name)?)
}

/// The target of the symlink `name` inside `dir`, as bytes.
pub(crate) fn read_link_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<Vec<u8>> {
    Ok(rustix::fs::readlinkat(dir, name, Vec::new())?.into_bytes())
}

/// The names inside the directory `dir` (without `.` and `..`), sorted bytewise.
pub(crate) fn list_names(dir: BorrowedFd<'_>) -> io::Result<Vec<OsString>> {
    let mut reader = Dir::read_from(dir)?;
    let mut names = Vec::new();
    while let Some(entry) = reader.read() {
        let bytes = entry?.file_name().to_bytes().to_vec();
        if bytes != b"." && bytes != b".." {
            names.push(OsString::from_vec(bytes));
        }
    }
    names.sort();
    Ok(names)
}

/// A modification time for `futimens`/`utimensat`; the access time is left alone.
fn mtime_only(mtime: (i64, u32)) -> Timestamps {
    Timestamps {
        last_access: Timespec {
            tv_sec: 0,
            tv_nsec: rustix::fs::UTIME_OMIT,
        },
        last_modification: Timespec {
            tv_sec: mtime.0,
            tv_nsec: mtime.1.into(),
        },
    }
}

/// Set the modification time of an open file or directory.
pub(crate) fn set_mtime_fd(fd: impl AsFd, mtime: (i64, u32)) -> io::Result<()> {
    Ok(rustix::fs::futimens(fd, &mtime_only(mtime))?)
}

/// Set the modification time of the symlink `name` itself (not its target).
pub(crate) fn set_link_mtime_at(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    mtime: (i64, u32),
) -> io::Result<()> {
    let flags = AtFlags::SYMLINK_NOFOLLOW;
    Ok(rustix::fs::utimensat(dir, name, &mtime_only(mtime), flags)?)
}

/// Set the permission bits of an open file or directory.
pub(crate) fn set_mode_fd(fd: impl AsFd, mode: u32) -> io::Result<()> {
    Ok(rustix::fs::fchmod(fd, Mode::from_raw_mode(mode & 0o7777))?)
}

/// Take an exclusive advisory lock on `fd` without waiting; `WouldBlock` if someone holds it.
pub(crate) fn try_lock_exclusive(fd: impl AsFd) -> io::Result<()> {
    Ok(rustix::fs::flock(
        fd,
        rustix::fs::FlockOperation::NonBlockingLockExclusive,
    )?)
}

/// `fsync` an open file or directory.
pub(crate) fn sync_fd(fd: impl AsFd) -> io::Result<()> {
    Ok(rustix::fs::fsync(fd)?)
}

/// Rename `from` to `to` inside `dir`, failing with `AlreadyExists` if `to` exists.
///
/// Uses `renameat2(RENAME_NOREPLACE)`. Where the filesystem lacks it (`EINVAL`, e.g. some network
/// filesystems), a non-directory falls back to `linkat` + `unlinkat` (still create-only); a
/// directory falls back to check-then-rename, whose window can at worst replace a directory that
/// was created empty in between (a non-empty or non-directory target still makes it fail).
pub(crate) fn rename_noreplace(dir: BorrowedFd<'_>, from: &OsStr, to: &OsStr) -> io::Result<()> {
    match rustix::fs::renameat_with(dir, from, dir, to, RenameFlags::NOREPLACE) {
        Err(rustix::io::Errno::INVAL) => rename_noreplace_fallback(dir, from, to),
        other => Ok(other?),
    }
}

/// See [`rename_noreplace`].
fn rename_noreplace_fallback(dir: BorrowedFd<'_>, from: &OsStr, to: &OsStr) -> io::Result<()> {
    if stat_at(dir, from)?.entry_type() != EntryType::Dir {
        rustix::fs::linkat(dir, from, dir, to, AtFlags::empty())?;
        return Ok(rustix::fs::unlinkat(dir, from, AtFlags::empty())?);
    }
    match stat_at(dir, to) {
        Ok(_) => Err(io::ErrorKind::AlreadyExists.into()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            Ok(rustix::fs::renameat(dir, from, dir, to)?)
        }
        Err(e) => Err(e),
    }
}

/// Remove the non-directory `name` inside `dir`.
pub(crate) fn unlink_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    Ok(rustix::fs::unlinkat(dir, name, AtFlags::empty())?)
}

/// Remove the empty directory `name` inside `dir`.
pub(crate) fn rmdir_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    Ok(rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)?)
}
