//! Changing entries through directory descriptors: no-replace renames and swaps, unlinks, new
//! directories and symlinks (the names they use: [`temp_names`](super::temp_names)).

use std::ffi::OsStr;
use std::io;
use std::os::fd::BorrowedFd;

use rustix::fs::{AtFlags, Mode, RenameFlags};

use super::{errno, lstat_at};
use crate::paths::platform;
use crate::paths::EntryKind;

/// Swaps the entries `a` in `dir_a` and `b` in `dir_b` atomically: at every instant each name
/// holds one of the two (`renameat2(RENAME_EXCHANGE)`; on macOS `renameatx_np(RENAME_SWAP)`,
/// which rustix calls for the same flag).
/// Both must exist. A file system that cannot swap gives an error for which
/// [`is_unsupported_rename`] is true.
pub fn rename_exchange(
    dir_a: BorrowedFd<'_>,
    a: &OsStr,
    dir_b: BorrowedFd<'_>,
    b: &OsStr,
) -> io::Result<()> {
    rustix::fs::renameat_with(dir_a, a, dir_b, b, RenameFlags::EXCHANGE).map_err(errno)
}

/// Whether a rename failed only because the file system (or kernel) lacks the flag asked for:
/// `EINVAL` from `renameat2`, `EOPNOTSUPP`/`ENOTSUP` (macOS's `renameatx_np` on a file system
/// without `RENAME_SWAP`/`RENAME_EXCL`), or no `renameat2` at all (`ENOSYS`).
pub fn is_unsupported_rename(e: &io::Error) -> bool {
    use rustix::io::Errno;
    let Some(raw) = e.raw_os_error() else {
        return false;
    };
    let errno = Errno::from_raw_os_error(raw);
    errno == Errno::INVAL || errno == Errno::NOSYS || platform::is_unsupported(errno)
}

/// Renames `from_name` in `from_dir` to `to_name` in `to_dir` without replacing an existing
/// destination (an existing one → `EEXIST`).
///
/// Uses `renameat2(RENAME_NOREPLACE)` (macOS: `renameatx_np(RENAME_EXCL)`). Where the file
/// system lacks it (`EINVAL`, `ENOTSUP`, e.g. some network file systems), a non-directory falls
/// back to `linkat` + `unlinkat` (still create-only); a
/// directory falls back to check-then-rename, whose window can at worst replace a directory that
/// was created empty in between (a non-empty or non-directory target still makes it fail).
pub fn rename_noreplace(
    from_dir: BorrowedFd<'_>,
    from_name: &OsStr,
    to_dir: BorrowedFd<'_>,
    to_name: &OsStr,
) -> io::Result<()> {
    match rustix::fs::renameat_with(from_dir, from_name, to_dir, to_name, RenameFlags::NOREPLACE)
        .map_err(errno)
    {
        Err(e) if is_unsupported_rename(&e) => {
            rename_noreplace_fallback(from_dir, from_name, to_dir, to_name)
        }
        other => other,
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

/// Gives the file `from_name` in `from_dir` the new name `to_name` in `to_dir` (a hard link; a
/// symlink is linked itself, never followed; an existing `to_name` → `EEXIST`).
pub fn hard_link_at(
    from_dir: BorrowedFd<'_>,
    from_name: &OsStr,
    to_dir: BorrowedFd<'_>,
    to_name: &OsStr,
) -> io::Result<()> {
    rustix::fs::linkat(from_dir, from_name, to_dir, to_name, AtFlags::empty()).map_err(errno)
}

/// Renames `from_name` in `from_dir` to `to_name` in `to_dir`, replacing whatever file is there
/// (a file of ours taking its final name, as in the data directory).
pub fn rename_replacing(
    from_dir: BorrowedFd<'_>,
    from_name: &OsStr,
    to_dir: BorrowedFd<'_>,
    to_name: &OsStr,
) -> io::Result<()> {
    rustix::fs::renameat(from_dir, from_name, to_dir, to_name).map_err(errno)
}

/// Unlinks a file or symlink `name` in `dir`.
pub fn unlink_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    rustix::fs::unlinkat(dir, name, AtFlags::empty()).map_err(errno)
}

/// Removes the empty directory `name` in `dir`.
pub fn rmdir_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR).map_err(errno)
}

/// Creates the directory `name` in `dir` as a new directory is made: `mode` less the umask.
pub fn mkdir_umasked_at(dir: BorrowedFd<'_>, name: &OsStr, mode: u32) -> io::Result<()> {
    rustix::fs::mkdirat(dir, name, Mode::from_raw_mode((mode & 0o7777) as _)).map_err(errno)
}

/// Creates the directory `name` in `dir`, private (0700) until its final mode is applied.
pub fn mkdir_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o700)).map_err(errno)
}

/// Creates the symlink `name` in `dir` pointing at `target` (bytes as they are).
pub fn symlink_at(target: &OsStr, dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    rustix::fs::symlinkat(target, dir, name).map_err(errno)
}
