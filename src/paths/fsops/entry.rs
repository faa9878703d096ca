//! What an entry is: its kind and the facts that change when it does, read with `lstat`/`fstat`
//! (never following a symlink), and the names in a directory.

use std::ffi::{OsStr, OsString};
use std::io;
#[cfg(unix)]
use std::os::unix::ffi::OsStringExt;

#[cfg(unix)]
use rustix::fs::AtFlags;

#[cfg(unix)]
use super::errno;
use crate::paths::platform;
use crate::paths::{AsDir, BorrowedDir, EntryKind, FileId, Stat};

/// The facts about an entry that change when it is modified, replaced or (for a directory) when
/// an entry is added, removed or renamed inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Snapshot {
    pub dev: u64,
    pub ino: u64,
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    pub size: u64,
    pub mtime: (i64, u32),
    pub ctime: (i64, u32),
}

/// How someone other than this user may write an entry, and what stops it, for a message
/// (`others_may_write`: the mode's bits on Unix, the access list on Windows).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OthersMayWrite {
    /// How: `mode 0777`, `its access list lets S-1-1-0 write it`.
    pub how: String,
    /// The command that stops it: `chmod go-w <path>`, `icacls …`.
    pub fix: String,
}

impl Snapshot {
    /// The snapshot of a `stat` result.
    pub fn of(stat: &Stat) -> Self {
        Snapshot {
            dev: stat.dev,
            ino: stat.ino,
            mode: stat.mode,
            uid: stat.uid,
            gid: stat.gid,
            size: stat.size,
            mtime: (stat.mtime.0, stat.mtime.1),
            ctime: (stat.ctime.0, stat.ctime.1),
        }
    }

    /// Equal except for the ctime — what is left of a hard-linked file after we unlinked one of
    /// its other names (the unlink changed its link count and so its ctime).
    pub fn same_except_ctime(&self, other: &Snapshot) -> bool {
        Snapshot {
            ctime: other.ctime,
            ..*self
        } == *other
    }

    /// The entry's kind.
    pub fn kind(&self) -> EntryKind {
        EntryKind::of_mode(self.mode)
    }

    /// Permission bits only.
    pub fn permissions(&self) -> u32 {
        self.mode & 0o7777
    }

    /// Which entry it is, whatever its name.
    pub fn id(&self) -> FileId {
        FileId {
            dev: self.dev,
            ino: self.ino,
        }
    }

    /// The same inode (device and inode number)?
    pub fn same_inode(&self, other: &Snapshot) -> bool {
        self.id() == other.id()
    }
}

/// The device and inode number in a `stat`: which entry it is, whatever its name.
pub fn identity(stat: &Stat) -> (u64, u64) {
    (stat.dev, stat.ino)
}

/// How many names (hard links) the entry has.
pub fn link_count(stat: &Stat) -> u64 {
    stat.nlink
}

/// Whether a file has fewer blocks than bytes: it may have holes worth keeping.
pub fn may_have_holes(stat: &Stat) -> bool {
    (stat.blocks).saturating_mul(512) < stat.size
}

/// Whether `name` is one plain path component: not empty, not `.` or `..`, no `/` (nor, on
/// Windows, `\`) and no NUL. A name read from anywhere but the caller's own code (a record in
/// the data directory, an archive) must be one before it is joined to a directory or handed to
/// an `*at` call.
pub fn is_single_component(name: &OsStr) -> bool {
    let bytes = name.as_encoded_bytes();
    let separator = |b: &u8| *b == b'/' || (cfg!(windows) && *b == b'\\');
    !bytes.is_empty()
        && bytes != b"."
        && bytes != b".."
        && !bytes.iter().any(separator)
        && !bytes.contains(&0)
}

/// `lstat` of `name` in `dir`; `None` if it does not exist.
pub fn lstat_at(dir: BorrowedDir<'_>, name: &OsStr) -> io::Result<Option<Stat>> {
    #[cfg(unix)]
    {
        match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => Ok(Some(Stat::of(&stat))),
            Err(e) if e == rustix::io::Errno::NOENT => Ok(None),
            Err(e) => Err(errno(e)),
        }
    }
    #[cfg(windows)]
    {
        platform::lstat_at(dir, name)
    }
}

/// The [`Snapshot`] of `name` in `dir` (`lstat`); `NotFound` if it does not exist.
pub fn snapshot_at(dir: BorrowedDir<'_>, name: &OsStr) -> io::Result<Snapshot> {
    #[cfg(unix)]
    let stat = Stat::of(&rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).map_err(errno)?);
    #[cfg(windows)]
    let stat = lstat_at(dir, name)?.ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
    Ok(Snapshot::of(&stat))
}

/// `fstat` of an open file or directory.
pub fn fstat(fd: impl AsDir) -> io::Result<Stat> {
    #[cfg(unix)]
    {
        rustix::fs::fstat(fd.as_dir())
            .map(|stat| Stat::of(&stat))
            .map_err(errno)
    }
    #[cfg(windows)]
    {
        platform::info::stat(fd.as_dir())
    }
}

/// The [`Snapshot`] of an open file or directory.
pub fn snapshot_fd(fd: impl AsDir) -> io::Result<Snapshot> {
    Ok(Snapshot::of(&fstat(fd)?))
}

/// Whether the entry `name` of the directory `dir` is a mount point (see [`DirMount`]); `false`
/// if there is no such entry. Removing a tree never crosses one (README, "Security model").
pub fn is_mount_point(dir: BorrowedDir<'_>, name: &OsStr) -> io::Result<bool> {
    match lstat_at(dir, name)? {
        Some(entry) => DirMount::of(dir)?.holds_mount_point(dir, name, identity(&entry).0),
        None => Ok(false),
    }
}

/// The mount a directory is on, found once to tell which of its entries are mount points: on
/// another file system (another device) or, where the system tells mounts apart
/// ([`platform::mount_id`]: Linux), on another mount of the same one (a bind mount).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DirMount {
    dev: u64,
    id: Option<u64>,
}

impl DirMount {
    /// The mount of the directory `dir` (any descriptor of it, a handle included).
    pub fn of(dir: BorrowedDir<'_>) -> io::Result<Self> {
        Ok(DirMount {
            dev: identity(&fstat(dir)?).0,
            id: platform::mount_id(dir, OsStr::new(""))?,
        })
    }

    /// Whether an entry can be renamed between the directories `a` and `b`: they are on one
    /// mount (where the system does not tell mounts apart, one device; a rename between two
    /// bind mounts of it still fails with `EXDEV`).
    pub fn same(a: BorrowedDir<'_>, b: BorrowedDir<'_>) -> io::Result<bool> {
        Ok(DirMount::of(a)? == DirMount::of(b)?)
    }

    /// Whether the entry `name` of this directory (`dir`), whose `lstat` said it is on the
    /// device `dev`, is a mount point. An entry gone meanwhile is not.
    pub fn holds_mount_point(
        &self,
        dir: BorrowedDir<'_>,
        name: &OsStr,
        dev: u64,
    ) -> io::Result<bool> {
        if dev != self.dev {
            return Ok(true);
        }
        let Some(here) = self.id else {
            return Ok(false);
        };
        match platform::mount_id(dir, name) {
            Ok(there) => Ok(there.is_some_and(|there| there != here)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }
}

/// Reads a symlink's target (bytes as they are).
pub fn read_link_at(dir: BorrowedDir<'_>, name: &OsStr) -> io::Result<OsString> {
    #[cfg(unix)]
    {
        rustix::fs::readlinkat(dir, name, Vec::new())
            .map(|target| OsString::from_vec(target.into_bytes()))
            .map_err(errno)
    }
    #[cfg(windows)]
    {
        platform::reparse::read_link_at(dir, name)
    }
}

/// The names in the directory `dir` (any descriptor of it, a handle included), without `.` and
/// `..`, sorted bytewise.
pub fn list_names(dir: BorrowedDir<'_>) -> io::Result<Vec<OsString>> {
    let readable = super::reopen_readable(dir)?;
    let mut names: Vec<OsString> = read_entries(readable.as_dir(), &mut Vec::new())?
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    names.sort();
    Ok(names)
}

/// The entries of the directory `dir` (open for reading), without `.` and `..`, in the order
/// the file system gives them, each with its kind as the listing says it (`None` where the file
/// system does not say: ask [`lstat_at`]). `buffer` may be reused from call to call.
pub fn read_entries(
    dir: BorrowedDir<'_>,
    buffer: &mut Vec<u8>,
) -> io::Result<Vec<(OsString, Option<EntryKind>)>> {
    platform::read_entries(dir, buffer)
}
