//! Changing entries through directory descriptors: no-replace renames and swaps, unlinks, new
//! directories and symlinks, the temp names a later run recognises as ours, and the visible names
//! of entries kept aside.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::BorrowedFd;
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, Mode, RenameFlags};

use super::{errno, lstat_at};
use crate::paths::platform;
use crate::paths::EntryKind;

/// Marker in the names of our temporary files, so a later run can recognise leftovers.
pub const TEMP_MARKER: &str = ".agent-fs-tools.tmp";

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Whether `name` is one of our temporary files (an atomic write in flight, or one a crash left
/// behind): listings and searches skip them, as they are not the user's files.
pub fn is_temp_name(name: &OsStr) -> bool {
    name.as_bytes().ends_with(TEMP_MARKER.as_bytes())
}

/// Whether `name` is a temp name process `pid` made ([`temp_name`]: `….<pid>.<n>` + marker).
pub fn is_temp_name_of(name: &OsStr, pid: u32) -> bool {
    let Some(rest) = name.as_bytes().strip_suffix(TEMP_MARKER.as_bytes()) else {
        return false;
    };
    let Some(dot) = rest.iter().rposition(|&b| b == b'.') else {
        return false;
    };
    let (before, n) = (&rest[..dot], &rest[dot + 1..]);
    !n.is_empty()
        && n.iter().all(u8::is_ascii_digit)
        && before.ends_with(format!(".{pid}").as_bytes())
}

/// A fresh, recognisable temporary name next to `name` (≤ 255 bytes).
pub fn temp_name(name: &OsStr) -> OsString {
    sibling_name(".", name, &format!(".{}{TEMP_MARKER}", unique()))
}

/// The name an entry under our temp name `temp` is moved to just before it is removed (see
/// [`set_aside`](super::set_aside)): `.gone` and as much of the end of `temp` as fits in 255
/// bytes (where its process and counter are), ending in [`TEMP_MARKER`]. Derived, not fresh, so
/// whoever answers for `temp` (a journal record) finds it should the removal be cut short.
pub fn doomed_name(temp: &OsStr) -> OsString {
    let temp = temp.as_bytes();
    let marker: &[u8] = if temp.ends_with(TEMP_MARKER.as_bytes()) {
        b""
    } else {
        TEMP_MARKER.as_bytes()
    };
    let prefix = b".gone";
    let keep = temp.len().min(255 - prefix.len() - marker.len());
    let out = [prefix, &temp[temp.len() - keep..], marker].concat();
    std::ffi::OsStr::from_bytes(&out).to_owned()
}

/// Marker in the names of entries a commit moved aside and could not put back (see
/// [`keep_visible`]).
pub const KEPT_MARKER: &str = ".kept-by-agent-fs-tools";

/// A fresh, visible name next to `name` for an entry kept aside (≤ 255 bytes):
/// `<name>.kept-by-agent-fs-tools.<pid>.<n>`.
pub fn kept_name(name: &OsStr) -> OsString {
    sibling_name("", name, &format!("{KEPT_MARKER}.{}", unique()))
}

/// `<pid>.<n>`, unique in this machine for as long as this process runs.
fn unique() -> String {
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{}.{n}", std::process::id())
}

/// `prefix`, as much of `name` as fits in 255 bytes, and `suffix`.
fn sibling_name(prefix: &str, name: &OsStr, suffix: &str) -> OsString {
    let bytes = name.as_bytes();
    let keep = bytes.len().min(255 - prefix.len() - suffix.len());
    let mut out = Vec::with_capacity(prefix.len() + keep + suffix.len());
    out.extend_from_slice(prefix.as_bytes());
    out.extend_from_slice(&bytes[..keep]);
    out.extend_from_slice(suffix.as_bytes());
    std::ffi::OsStr::from_bytes(&out).to_owned()
}

/// Moves the entry `from` of `dir` (one of our temp names, holding something that is not ours
/// to remove and cannot go back where it was) to a fresh [`kept_name`] of `name`, without
/// replacing anything, so that the user sees it and no cleanup of temp files removes it.
/// Returns the new name.
pub fn keep_visible(dir: BorrowedFd<'_>, from: &OsStr, name: &OsStr) -> io::Result<OsString> {
    loop {
        let kept = kept_name(name);
        match rename_noreplace(dir, from, dir, &kept) {
            Ok(()) => return Ok(kept),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

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
