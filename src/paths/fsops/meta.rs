//! What a file carries besides its bytes, set through descriptors: owner and group (as far as we
//! may), permission bits, modification times, durability (fsync) and advisory locks.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};

use rustix::fs::{AtFlags, Gid, Mode, OFlags, Timespec, Timestamps, Uid};

use crate::paths::Stat;

use super::{errno, fstat, open_for_read, OthersMayWrite};
use crate::paths::{platform, xattrs};

/// Gives `new` (the next version of `name` in `dir`, whose stat was `old`) what a rewrite must
/// not take from the user: the owner and group (where we may, see [`give_owner`]), extended
/// attributes and ACLs (read from `name` if it is still that file and readable; not file
/// capabilities: new content does not inherit privileges, see [`xattrs::is_kept_on_rewrite`]),
/// then the permission bits.
pub(super) fn keep_metadata_of(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    old: &Stat,
    new: &File,
) -> io::Result<()> {
    give_owner(new.as_fd(), old.uid, old.gid)?;
    if let Ok(current) = open_for_read(dir, name) {
        if fstat(&current).is_ok_and(|now| (now.dev, now.ino) == (old.dev, old.ino)) {
            let mut kept = xattrs::read_all(current.as_fd())?;
            kept.retain(|x| xattrs::is_kept_on_rewrite(&x.name));
            xattrs::write_all(new.as_fd(), &kept)?;
            platform::copy_acl(current.as_fd(), new.as_fd())?;
        }
    }
    rustix::fs::fchmod(new, Mode::from_raw_mode((old.mode & 0o7777) as _)).map_err(errno)
}

/// Gives `fd` the owner `uid` and group `gid`, as far as we may: only a privileged process may
/// give a file away (`EPERM`), but an owner may still set the group to one of theirs. What we may
/// not set stays ours, as with `mv`, `cp -p` and `tar -x`; any other failure is an error.
pub fn give_owner(fd: impl AsFd, uid: u32, gid: u32) -> io::Result<()> {
    let fd = fd.as_fd();
    as_far_as_we_may(uid, gid, |uid, gid| rustix::fs::fchown(fd, uid, gid))
}

/// [`give_owner`] for the symlink `name` in `dir` itself.
pub fn give_link_owner(dir: BorrowedFd<'_>, name: &OsStr, uid: u32, gid: u32) -> io::Result<()> {
    as_far_as_we_may(uid, gid, |uid, gid| {
        rustix::fs::chownat(dir, name, uid, gid, AtFlags::SYMLINK_NOFOLLOW)
    })
}

fn as_far_as_we_may(
    uid: u32,
    gid: u32,
    chown: impl Fn(Option<Uid>, Option<Gid>) -> rustix::io::Result<()>,
) -> io::Result<()> {
    let (uid, gid) = (Uid::from_raw(uid), Gid::from_raw(gid));
    match chown(Some(uid), Some(gid)) {
        Err(rustix::io::Errno::PERM) => match chown(None, Some(gid)) {
            Ok(()) | Err(rustix::io::Errno::PERM) => Ok(()),
            Err(e) => Err(e.into()),
        },
        other => other.map_err(errno),
    }
}

/// fsyncs a directory given any descriptor of it, `O_PATH` included (best effort: a directory we
/// may not read cannot be fsynced, and a rename in it is still atomic).
pub fn fsync_dir(dir: BorrowedFd<'_>) {
    if let Ok(fd) = rustix::fs::openat(
        dir,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        let _ = rustix::fs::fsync(&fd);
    }
}

/// `fsync` an open file or directory.
pub fn sync_fd(fd: impl AsFd) -> io::Result<()> {
    rustix::fs::fsync(fd).map_err(errno)
}

/// A file or directory of a new tree (a copy, a restore) is complete: make it durable where the
/// whole tree cannot be synced at once (see [`platform::sync_written`]).
pub fn sync_written(fd: impl AsFd) -> io::Result<()> {
    platform::sync_written(fd.as_fd())
}

/// Makes a new tree in `parent` durable, before it is renamed into place there (see
/// [`platform::sync_new_tree`]; every entry of it went through [`sync_written`]).
pub fn sync_new_tree(parent: BorrowedFd<'_>) -> io::Result<()> {
    platform::sync_new_tree(parent)
}

/// The bytes an unprivileged process may still write on the file system `dir` is on
/// (`fstatvfs`: available blocks × fragment size).
pub fn free_space(dir: BorrowedFd<'_>) -> io::Result<u64> {
    let stat = rustix::fs::fstatvfs(dir)?;
    Ok(stat.f_bavail.saturating_mul(stat.f_frsize))
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

/// Sets the modification time of an open file or directory.
pub fn set_mtime_fd(fd: impl AsFd, mtime: (i64, u32)) -> io::Result<()> {
    rustix::fs::futimens(fd, &mtime_only(mtime)).map_err(errno)
}

/// Sets the modification time of the symlink `name` itself (not its target).
pub fn set_link_mtime_at(dir: BorrowedFd<'_>, name: &OsStr, mtime: (i64, u32)) -> io::Result<()> {
    rustix::fs::utimensat(dir, name, &mtime_only(mtime), AtFlags::SYMLINK_NOFOLLOW).map_err(errno)
}

/// Sets the access and modification times of an open file or directory.
pub fn set_times_fd(fd: impl AsFd, atime: (i64, u32), mtime: (i64, u32)) -> io::Result<()> {
    rustix::fs::futimens(fd, &both_times(atime, mtime)).map_err(errno)
}

/// Sets the access and modification times of the symlink `name` itself (not its target).
pub fn set_link_times_at(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    atime: (i64, u32),
    mtime: (i64, u32),
) -> io::Result<()> {
    let times = both_times(atime, mtime);
    rustix::fs::utimensat(dir, name, &times, AtFlags::SYMLINK_NOFOLLOW).map_err(errno)
}

fn both_times(atime: (i64, u32), mtime: (i64, u32)) -> Timestamps {
    Timestamps {
        last_access: Timespec {
            tv_sec: atime.0,
            tv_nsec: atime.1 as _,
        },
        last_modification: Timespec {
            tv_sec: mtime.0,
            tv_nsec: mtime.1 as _,
        },
    }
}

/// The effective user id of this process: whose files the data directory's must be.
pub fn effective_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// Whether an entry owned by `uid` (open as `handle`, where it is open) belongs to the user this
/// process runs as: `uid` is the effective uid. (Windows asks the handle's owner SID instead.)
pub fn owned_by_user(uid: u32, handle: Option<BorrowedFd<'_>>) -> io::Result<bool> {
    let _ = handle;
    Ok(uid == effective_uid())
}

/// Whether anyone but this user may write the entry whose permission bits are `mode` (open as
/// `handle`, where it is open; `path` as shown, for the fix): a group or other write bit.
/// (Windows reads the handle's access list instead.)
pub fn others_may_write(
    mode: u32,
    handle: Option<BorrowedFd<'_>>,
    path: &str,
) -> io::Result<Option<OthersMayWrite>> {
    let _ = handle;
    Ok((mode & 0o022 != 0).then(|| OthersMayWrite {
        how: format!("mode {:04o}", mode & 0o7777),
        fix: format!("chmod go-w {path}"),
    }))
}

/// How an owner that is not this process's user is named in a message: `uid 1000; this
/// process runs as uid 501`.
pub fn other_owner(uid: u32) -> String {
    format!("uid {uid}; this process runs as uid {}", effective_uid())
}

/// Sets the permission bits of an open file or directory.
pub fn set_mode_fd(fd: impl AsFd, mode: u32) -> io::Result<()> {
    rustix::fs::fchmod(fd, Mode::from_raw_mode((mode & 0o7777) as _)).map_err(errno)
}

/// Moves an open entry's change time (ctime) to now and changes nothing else: its mode set
/// again as it is.
pub fn mark_changed(fd: impl AsFd) -> io::Result<()> {
    let mode = fstat(&fd)?.mode;
    set_mode_fd(fd, mode)
}

/// Takes an exclusive advisory lock on `fd` without waiting; `WouldBlock` if someone holds it.
pub fn try_lock_exclusive(fd: impl AsFd) -> io::Result<()> {
    rustix::fs::flock(fd, rustix::fs::FlockOperation::NonBlockingLockExclusive).map_err(errno)
}

/// Takes an exclusive advisory lock on `fd`, waiting for whoever holds it to let go.
pub fn lock_exclusive(fd: impl AsFd) -> io::Result<()> {
    loop {
        match rustix::fs::flock(&fd, rustix::fs::FlockOperation::LockExclusive) {
            Err(rustix::io::Errno::INTR) => continue,
            other => return other.map_err(errno),
        }
    }
}

/// Whether this process may write the existing entry `name` of `dir`, as the system decides for
/// its effective user and groups (mode, ACLs, a read-only mount): `faccessat(W_OK, AT_EACCESS)`.
/// `Ok(false)` when refused (`EACCES`, `EPERM`, `EROFS`).
pub fn may_write_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<bool> {
    use rustix::io::Errno;
    match rustix::fs::accessat(dir, name, rustix::fs::Access::WRITE_OK, AtFlags::EACCESS) {
        Ok(()) => Ok(true),
        Err(Errno::ACCESS | Errno::PERM | Errno::ROFS) => Ok(false),
        Err(e) => Err(errno(e)),
    }
}

/// Whether this process may add and remove entries in the directory `dir` (write and search
/// on it, as the system decides for its effective user and groups: mode, ACLs, a read-only
/// mount): `Ok(())`, or the refusal (`EACCES`, `EROFS`, …) as the error a removal would meet.
pub fn may_change_entries(dir: BorrowedFd<'_>) -> io::Result<()> {
    let access = rustix::fs::Access::WRITE_OK | rustix::fs::Access::EXEC_OK;
    rustix::fs::accessat(dir, ".", access, AtFlags::EACCESS).map_err(errno)
}

/// Whether another process has `file` open for writing (or mapped writable): `Some(true)` or
/// `Some(false)`, or `None` where the system cannot tell (no leases on this file system or
/// platform, or we may not take one). See [`platform::open_for_writing_elsewhere`].
pub fn open_for_writing_elsewhere(file: &File) -> Option<bool> {
    platform::open_for_writing_elsewhere(file)
}

/// Whether we may create and remove entries in the directory `dir` (`access(W_OK)` on it, for
/// the real user, as the kernel would decide).
pub fn check_writable_dir(dir: BorrowedFd<'_>) -> io::Result<()> {
    rustix::fs::accessat(dir, ".", rustix::fs::Access::WRITE_OK, AtFlags::empty()).map_err(errno)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_open_for_writing_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "x").unwrap();
        let reader = File::open(&path).unwrap();
        if !platform::linux_fast_paths() {
            assert_eq!(open_for_writing_elsewhere(&reader), None);
            return;
        }
        assert_eq!(open_for_writing_elsewhere(&reader), Some(false));
        let writer = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        assert_eq!(open_for_writing_elsewhere(&reader), Some(true));
        drop(writer);
        assert_eq!(open_for_writing_elsewhere(&reader), Some(false));
    }
}
