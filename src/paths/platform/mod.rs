//! The platform seam (../../../docs/platforms.md): the one place that knows which operating system we run on.
//!
//! Every guarantee of the `*at` layer holds on every supported system; what differs is how fast
//! it is kept. Linux has primitives for which other systems need a slower way with the same
//! result; each pair lives here, the Linux one in `linux`, the portable one in `portable`
//! (what macOS runs), and what only macOS has in `macos`:
//!
//! | need | Linux | portable (macOS) |
//! |---|---|---|
//! | open beneath an allowed tree, no link followed | `openat2(RESOLVE_BENEATH \| RESOLVE_NO_SYMLINKS)` | one `openat(O_NOFOLLOW \| O_DIRECTORY)` per component, each through the descriptor of the one before |
//! | a directory handle for `*at` calls | `O_PATH` (no read permission needed) | `O_RDONLY \| O_DIRECTORY` |
//! | a search's reads leave access times alone | `O_NOATIME` (the owner's files only) | they do not |
//! | a directory's entries | `getdents64` into a reused buffer (`RawDir`) | `readdir` (`Dir`) |
//! | a copied or restored tree made durable | one `syncfs` of its file system | `fsync` of every file and directory written, then one flush of the drive's cache (`F_FULLFSYNC` on macOS) |
//! | is a file open for writing elsewhere? | a read lease is refused (`F_SETLEASE`) | cannot tell (`None`) |
//! | is an entry a mount point? | another device, or another mount id (`statx`'s `STATX_MNT_ID`, else `name_to_handle_at`, else `/proc/self/fdinfo`: bind mounts too) | another device |
//! | bytes from file to file | `copy_file_range` (through `std::io::copy`) | `read`/`write` |
//! | ACLs kept on a rewrite | they are extended attributes (`system.posix_acl_*`) | `fcopyfile(COPYFILE_ACL)` on macOS |
//! | the name an entry is stored under | the name given (Linux names are exact) | `getattrlist(ATTR_CMN_NAME)` on macOS (case-insensitive volumes) |
//!
//! What both have, no seam is needed for: `renameat2(RENAME_NOREPLACE \| RENAME_EXCHANGE)` is
//! `renameatx_np(RENAME_EXCL \| RENAME_SWAP)` on macOS (rustix maps the flags), extended
//! attributes (only their names differ, see [`super::xattrs`]), `SEEK_DATA`/`SEEK_HOLE`.
//!
//! **The portable code is tested on Linux.** With `AGENT_FS_TOOLS_PORTABLE=1` in the
//! environment (read once, at first use) Linux takes the portable way too, so the test suites
//! run what macOS runs on every CI run (`scripts/run-tests.mjs`). Only the few calls that exist
//! on macOS alone (`F_FULLFSYNC`, `fcopyfile`, `getattrlist`) are not run here; they are
//! type-checked by `npm run check:targets`.

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::path::Path;

use rustix::fs::{FileType, OFlags};
use rustix::io::Errno;

use crate::paths::EntryKind;

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
mod linux_mount_id;
#[cfg(target_os = "macos")]
mod macos;
mod portable;

/// The environment variable that switches Linux's fast paths off (any value but empty or `0`).
pub const PORTABLE_ENV: &str = "AGENT_FS_TOOLS_PORTABLE";

/// Whether Linux's fast paths are in use: on Linux unless [`PORTABLE_ENV`] says otherwise,
/// never elsewhere.
pub fn linux_fast_paths() -> bool {
    #[cfg(target_os = "linux")]
    {
        static FAST: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *FAST
            .get_or_init(|| std::env::var_os(PORTABLE_ENV).is_none_or(|v| v.is_empty() || v == "0"))
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// The environment variable a debug build reads (once) to put a planned file in place by three
/// renames, as Windows must (it cannot exchange two names: `fsops::put_by_renames`), so that
/// that way is tested here (any value but empty or `0`).
#[cfg(debug_assertions)]
pub const PUT_BY_RENAMES_ENV: &str = "AGENT_FS_TOOLS_PUT_BY_RENAMES";

/// Whether a change of many files puts each staged file in place of the planned one by
/// exchanging their names (`RENAME_EXCHANGE`, macOS's `RENAME_SWAP`): always on Unix, unless a
/// debug build is told otherwise ([`PUT_BY_RENAMES_ENV`]).
pub fn exchanges_names() -> bool {
    #[cfg(debug_assertions)]
    {
        static EXCHANGES: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *EXCHANGES.get_or_init(|| {
            std::env::var_os(PUT_BY_RENAMES_ENV).is_none_or(|v| v.is_empty() || v == "0")
        })
    }
    #[cfg(not(debug_assertions))]
    {
        true
    }
}

/// Whether a directory (or a file in it) held open keeps it from being removed: never on Unix,
/// where a removed name goes at once whatever holds it.
pub fn open_handles_block_removal() -> bool {
    false
}

/// Runs the Linux fast path `linux` where it is in use, else `portable`.
macro_rules! choose {
    ($linux:expr, $portable:expr) => {{
        #[cfg(target_os = "linux")]
        {
            if linux_fast_paths() {
                $linux
            } else {
                $portable
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            $portable
        }
    }};
}

/// The access mode of a directory handle that is only used for `*at` calls, `fstat` and as a
/// place to walk from: `O_PATH` on Linux (which needs no read permission), else `O_RDONLY`.
pub fn handle_access() -> OFlags {
    choose!(linux::handle_access(), OFlags::RDONLY)
}

/// The open flag that keeps reads from updating the file's access time: `O_NOATIME` on Linux
/// (refused with `EPERM` unless the caller owns the file or has `CAP_FOWNER`), else none.
pub fn no_access_time() -> OFlags {
    choose!(linux::no_access_time(), OFlags::empty())
}

/// Opens the directory `rel` (plain components only; empty for `start` itself) beneath `start`
/// without following any symlink on the way, nor climbing out of `start`: `ELOOP`/`ENOTDIR` for
/// a link, `EXDEV` for anything but a plain component. `flags` are the final open's (access
/// mode, `O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC`).
pub fn open_beneath(start: OwnedFd, rel: &Path, flags: OFlags) -> io::Result<OwnedFd> {
    choose!(
        linux::open_beneath(start, rel, flags),
        portable::open_beneath(start, rel, flags)
    )
}

/// The entries of the directory `dir` (open for reading), without `.` and `..`, each with its
/// kind as the listing gives it (`None` where the file system does not say). `buffer` is
/// reused from call to call.
pub fn read_entries(
    dir: BorrowedFd<'_>,
    buffer: &mut Vec<u8>,
) -> io::Result<Vec<(OsString, Option<EntryKind>)>> {
    choose!(linux::read_entries(dir, buffer), {
        let _ = buffer; // `readdir` has its own
        portable::read_entries(dir)
    })
}

/// The id of the mount the entry `name` of `dir` (empty: `dir` itself) is on, where the
/// system tells mounts apart even on one file system (a bind mount): Linux's mount ids
/// (`linux_mount_id`: `statx`, else `name_to_handle_at`, else `/proc/self/fdinfo`). `None`
/// portably (macOS has no bind mounts; its firmlinks are not mounts), or where Linux gives no
/// id, where a device number is all there is to go by.
pub fn mount_id(dir: BorrowedFd<'_>, name: &std::ffi::OsStr) -> io::Result<Option<u64>> {
    choose!(linux_mount_id::mount_id(dir, name), {
        let _ = (dir, name);
        Ok(None)
    })
}

/// Whether an error says the file system (or system) does not do what was asked: `ENOTSUP`,
/// `EOPNOTSUPP` (two numbers on macOS, one on Linux).
pub fn is_unsupported(e: Errno) -> bool {
    e == Errno::NOTSUP || e == Errno::OPNOTSUPP
}

/// The error for an extended attribute that is not there.
#[cfg(target_os = "linux")]
pub const NO_SUCH_ATTRIBUTE: Errno = Errno::NODATA;
/// The error for an extended attribute that is not there.
#[cfg(not(target_os = "linux"))]
pub const NO_SUCH_ATTRIBUTE: Errno = Errno::NOATTR;

/// The kind a directory listing gives (`None`: the file system does not say).
fn listed_kind(file_type: FileType) -> Option<EntryKind> {
    match file_type {
        FileType::RegularFile => Some(EntryKind::File),
        FileType::Directory => Some(EntryKind::Directory),
        FileType::Symlink => Some(EntryKind::Symlink),
        FileType::Unknown => None,
        _ => Some(EntryKind::Special),
    }
}

/// Whether another process has `file` open for writing: `Some(true)` or `Some(false)`, or
/// `None` where the system cannot tell (see `linux::open_for_writing_elsewhere`; other
/// systems have no way to know).
pub fn open_for_writing_elsewhere(file: &File) -> Option<bool> {
    choose!(linux::open_for_writing_elsewhere(file), {
        let _ = file;
        None
    })
}

/// Copies up to `len` bytes from `source`'s offset to `copy`'s; returns how many (fewer at the
/// end of the file). In the kernel where it can (`copy_file_range`), else through a buffer.
pub fn copy_bytes(source: &File, copy: &mut File, len: u64) -> io::Result<u64> {
    choose!(
        linux::copy_bytes(source, copy, len),
        portable::copy_bytes(source, copy, len)
    )
}

/// Gives `copy` the access control list of `source` where ACLs are not extended attributes
/// (macOS); elsewhere they came with the attributes and this does nothing.
pub fn copy_acl(source: BorrowedFd<'_>, copy: BorrowedFd<'_>) -> io::Result<()> {
    #[cfg(target_os = "macos")]
    {
        macos::copy_acl(source, copy)
    }
    #[cfg(not(target_os = "macos"))]
    {
        let _ = (source, copy);
        Ok(())
    }
}

/// The name under which the existing entry `path` is stored in its directory, where that can
/// differ from the name used to find it (a case- or normalization-insensitive volume: APFS's
/// default, HFS+), so that the same entry always has the same canonical path. `None`: the name
/// given is the stored one (Linux), or the system would not say.
pub fn stored_name(path: &Path) -> Option<OsString> {
    #[cfg(target_os = "macos")]
    {
        macos::stored_name(path)
    }
    #[cfg(not(target_os = "macos"))]
    {
        let _ = path;
        None
    }
}

/// A file or directory of a new tree is written (content, metadata and, for a directory, its
/// entries): portably it is fsynced now; on Linux [`sync_new_tree`] covers it.
pub fn sync_written(fd: BorrowedFd<'_>) -> io::Result<()> {
    if linux_fast_paths() {
        return Ok(());
    }
    rustix::fs::fsync(fd).map_err(io::Error::from)
}

/// Makes a tree of new files and directories durable before it is published under its final
/// name in `parent` (a copy between file systems, a restore from the trash): on Linux one
/// `syncfs` of the file system; portably an `fsync` of `parent`, every file and directory having
/// been fsynced as it was written ([`sync_written`]), then one flush of the drive's cache
/// (`F_FULLFSYNC` on macOS, whose `fsync` does not reach the disk).
pub fn sync_new_tree(parent: BorrowedFd<'_>) -> io::Result<()> {
    choose!(linux::sync_file_system(parent), portable::sync_dir(parent))?;
    #[cfg(target_os = "macos")]
    macos::flush_drive_cache(parent)?;
    Ok(())
}

/// Makes a FIFO at `path` (tests need one; rustix has `mknodat` on Linux only).
#[cfg(test)]
pub fn make_fifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path that lives across the call.
    let made = unsafe { libc::mkfifo(path.as_ptr(), 0o644) };
    assert_eq!(made, 0, "mkfifo: {}", io::Error::last_os_error());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::os_error::libc_codes;
    use std::os::fd::AsFd;
    use std::os::unix::fs::symlink;

    type OpenBeneath = fn(OwnedFd, &Path, OFlags) -> io::Result<OwnedFd>;

    /// Every way this machine has: the portable one always, Linux's where it runs. (The test
    /// suites also run whole with `AGENT_FS_TOOLS_PORTABLE=1`.)
    fn ways_to_open() -> Vec<(&'static str, OpenBeneath)> {
        #[cfg_attr(not(target_os = "linux"), allow(unused_mut))]
        let mut ways: Vec<(&'static str, OpenBeneath)> = vec![("portable", portable::open_beneath)];
        #[cfg(target_os = "linux")]
        ways.push(("linux", linux::open_beneath));
        ways
    }

    fn open_base(base: &Path) -> OwnedFd {
        rustix::fs::open(
            base,
            OFlags::RDONLY | OFlags::DIRECTORY,
            rustix::fs::Mode::empty(),
        )
        .unwrap()
    }

    #[test]
    fn every_way_opens_beneath_without_following_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let base = crate::paths::canonical::canonicalize_existing(dir.path()).unwrap();
        std::fs::create_dir_all(base.join("a/b")).unwrap();
        std::fs::create_dir(base.join("outside")).unwrap();
        symlink(base.join("outside"), base.join("a/link")).unwrap();
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let ino = |fd: &OwnedFd| rustix::fs::fstat(fd).unwrap().st_ino;
        for (way, open) in ways_to_open() {
            let opened = open(open_base(&base), Path::new("a/b"), flags).unwrap();
            let expected = std::fs::metadata(base.join("a/b")).unwrap();
            assert_eq!(
                ino(&opened),
                std::os::unix::fs::MetadataExt::ino(&expected),
                "{way}"
            );
            let itself = open(open_base(&base), Path::new(""), flags).unwrap();
            assert_eq!(ino(&itself), ino(&open_base(&base)), "{way}");
            for through_link in ["a/link", "a/link/x"] {
                let e = open(open_base(&base), Path::new(through_link), flags).unwrap_err();
                assert!(
                    matches!(
                        e.raw_os_error(),
                        Some(libc_codes::ELOOP | libc_codes::ENOTDIR)
                    ),
                    "{way} {through_link}: {e}"
                );
            }
            for climbing in ["a/../../outside", "/outside"] {
                let e = open(open_base(&base), Path::new(climbing), flags).unwrap_err();
                assert_eq!(
                    e.raw_os_error(),
                    Some(libc_codes::EXDEV),
                    "{way} {climbing}"
                );
            }
        }
    }

    #[test]
    fn every_way_lists_the_same_entries_with_their_kinds() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        std::fs::create_dir(base.join("d")).unwrap();
        std::fs::write(base.join("f"), "x").unwrap();
        symlink("f", base.join("l")).unwrap();
        make_fifo(&base.join("p"));
        let sorted = |mut entries: Vec<(OsString, Option<EntryKind>)>| {
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            entries
        };
        let portable = sorted(portable::read_entries(open_base(base).as_fd()).unwrap());
        let expected = [
            ("d", EntryKind::Directory),
            ("f", EntryKind::File),
            ("l", EntryKind::Symlink),
            ("p", EntryKind::Special),
        ];
        let names: Vec<_> = portable.iter().map(|(n, _)| n.to_str().unwrap()).collect();
        assert_eq!(names, ["d", "f", "l", "p"]);
        for ((_, kind), (_, wanted)) in portable.iter().zip(expected) {
            assert!(kind.is_none_or(|k| k == wanted), "{kind:?} {wanted:?}");
        }
        #[cfg(target_os = "linux")]
        {
            let mut buffer = Vec::new();
            let linux = linux::read_entries(open_base(base).as_fd(), &mut buffer).unwrap();
            assert_eq!(sorted(linux), portable);
        }
    }

    #[test]
    fn every_way_copies_the_bytes_asked_for() {
        use std::io::{Seek, SeekFrom};
        let dir = tempfile::tempdir().unwrap();
        let data: Vec<u8> = (0..600_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(dir.path().join("source"), &data).unwrap();
        type Copy = fn(&File, &mut File, u64) -> io::Result<u64>;
        #[cfg_attr(not(target_os = "linux"), allow(unused_mut))]
        let mut ways: Vec<(&str, Copy)> = vec![("portable", portable::copy_bytes)];
        #[cfg(target_os = "linux")]
        ways.push(("linux", linux::copy_bytes));
        for (way, copy_bytes) in ways {
            let source = File::open(dir.path().join("source")).unwrap();
            let mut copy = File::create(dir.path().join(way)).unwrap();
            (&source).seek(SeekFrom::Start(1000)).unwrap();
            assert_eq!(
                copy_bytes(&source, &mut copy, 300_000).unwrap(),
                300_000,
                "{way}"
            );
            // Past the end: what there is.
            assert_eq!(
                copy_bytes(&source, &mut copy, u64::MAX).unwrap(),
                299_000,
                "{way}"
            );
            let copied = std::fs::read(dir.path().join(way)).unwrap();
            assert_eq!(copied, data[1000..], "{way}");
        }
    }

    #[test]
    fn the_environment_chooses_the_way() {
        let portable = std::env::var_os(PORTABLE_ENV).is_some_and(|v| !v.is_empty() && v != "0");
        assert_eq!(linux_fast_paths(), cfg!(target_os = "linux") && !portable);
        let expected = if linux_fast_paths() {
            "linux"
        } else {
            "portable"
        };
        let dir = tempfile::tempdir().unwrap();
        let fd = open_base(dir.path());
        let handle = rustix::fs::openat(
            &fd,
            ".",
            handle_access() | OFlags::DIRECTORY | OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .unwrap();
        // A handle of the fast way (`O_PATH`) cannot be read from; a portable one can.
        let readable =
            rustix::fs::Dir::read_from(&handle).is_ok() && rustix::fs::fsync(&handle).is_ok();
        assert_eq!(readable, expected == "portable", "{expected}");
    }
}
