//! Changing entries through directory descriptors: atomic replacement (temp file, fsync,
//! rename), no-replace renames, unlinks, new directories and symlinks, and the temp names a later
//! run recognises as ours.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::BorrowedFd;
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, Mode, OFlags, RenameFlags, Stat};

use super::meta::keep_metadata_of;
use super::race_point::{self, RacePoint};
use super::{errno, fsync_dir, lstat_at, EntryKind};

/// Marker in the names of our temporary files, so a later run can recognise leftovers.
pub const TEMP_MARKER: &str = ".agent-fs-tools.tmp";

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Whether `name` is one of our temporary files (an atomic write in flight, or one a crash left
/// behind): listings and searches skip them, as they are not the user's files.
pub fn is_temp_name(name: &OsStr) -> bool {
    name.as_bytes().ends_with(TEMP_MARKER.as_bytes())
}

/// A fresh, recognisable temporary name next to `name` (≤ 255 bytes).
pub fn temp_name(name: &OsStr) -> OsString {
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let suffix = format!(".{}.{n}{TEMP_MARKER}", std::process::id());
    let bytes = name.as_bytes();
    let keep = bytes.len().min(255 - 1 - suffix.len());
    let mut out = Vec::with_capacity(keep + suffix.len() + 1);
    out.push(b'.');
    out.extend_from_slice(&bytes[..keep]);
    out.extend_from_slice(suffix.as_bytes());
    std::ffi::OsStr::from_bytes(&out).to_owned()
}

/// Replaces (or creates) `name` in `dir` atomically: the temp file `temp` (a [`temp_name`] of
/// `name`, which the caller may journal first) in the same directory, written, given what the
/// file it replaces had (`replaced`, its stat; see [`keep_metadata_of`]), fsynced, renamed over
/// `name`, and the directory fsynced. A new file gets mode 0666 minus umask. On any failure the
/// temp file is removed and `name` is untouched.
pub fn write_atomic(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    temp: &OsStr,
    data: &[u8],
    replaced: Option<&Stat>,
) -> io::Result<()> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(dir, temp, flags, Mode::from_raw_mode(0o666)).map_err(errno)?;
    let result = (|| {
        let mut file = File::from(fd);
        file.write_all(data)?;
        if let Some(old) = replaced {
            keep_metadata_of(dir, name, old, &file)?;
        }
        file.sync_all()?;
        race_point::reached(RacePoint::BeforeReplace, name);
        rustix::fs::renameat(dir, temp, dir, name).map_err(errno)
    })();
    if result.is_err() {
        let _ = rustix::fs::unlinkat(dir, temp, AtFlags::empty());
    } else {
        fsync_dir(dir);
    }
    result
}

/// Renames `from_name` in `from_dir` to `to_name` in `to_dir` without replacing an existing
/// destination (an existing one → `EEXIST`).
///
/// Uses `renameat2(RENAME_NOREPLACE)`. Where the file system lacks it (`EINVAL`, e.g. some network
/// file systems), a non-directory falls back to `linkat` + `unlinkat` (still create-only); a
/// directory falls back to check-then-rename, whose window can at worst replace a directory that
/// was created empty in between (a non-empty or non-directory target still makes it fail).
pub fn rename_noreplace(
    from_dir: BorrowedFd<'_>,
    from_name: &OsStr,
    to_dir: BorrowedFd<'_>,
    to_name: &OsStr,
) -> io::Result<()> {
    match rustix::fs::renameat_with(from_dir, from_name, to_dir, to_name, RenameFlags::NOREPLACE) {
        Err(rustix::io::Errno::INVAL) => {
            rename_noreplace_fallback(from_dir, from_name, to_dir, to_name)
        }
        other => other.map_err(errno),
    }
}

/// See [`rename_noreplace`].
fn rename_noreplace_fallback(
    from_dir: BorrowedFd<'_>,
    from_name: &OsStr,
    to_dir: BorrowedFd<'_>,
    to_name: &OsStr,
) -> io::Result<()> {
    let from =
        lstat_at(from_dir, from_name)?.ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
    if EntryKind::of(&from) != EntryKind::Directory {
        rustix::fs::linkat(from_dir, from_name, to_dir, to_name, AtFlags::empty())
            .map_err(errno)?;
        return unlink_at(from_dir, from_name);
    }
    match lstat_at(to_dir, to_name)? {
        Some(_) => Err(io::Error::from(io::ErrorKind::AlreadyExists)),
        None => rustix::fs::renameat(from_dir, from_name, to_dir, to_name).map_err(errno),
    }
}

/// Unlinks a file or symlink `name` in `dir`.
pub fn unlink_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    rustix::fs::unlinkat(dir, name, AtFlags::empty()).map_err(errno)
}

/// Removes the empty directory `name` in `dir`.
pub fn rmdir_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR).map_err(errno)
}

/// Creates the directory `name` in `dir`, private (0700) until its final mode is applied.
pub fn mkdir_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o700)).map_err(errno)
}

/// Creates the symlink `name` in `dir` pointing at `target` (bytes as they are).
pub fn symlink_at(target: &OsStr, dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    rustix::fs::symlinkat(target, dir, name).map_err(errno)
}
