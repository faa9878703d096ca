//! Linux's mount ids, which tell the mounts of one file system apart (a bind mount), from the
//! first of three sources that gives one (each names the same id, the kernel's `mnt_id`):
//!
//! 1. `statx`'s `STATX_MNT_ID` (Linux 5.8): one call. Not taken where the mask lacks it (older
//!    kernels) or the id is 0: qemu-user (which runs the arm64 tests) passes the host's mask on
//!    but not the id, so every entry would seem to be on one mount. A real id 0 (the first mount
//!    the kernel made, normally hidden under `/`) is found again by the next source.
//! 2. `name_to_handle_at` (Linux 2.6.39), asked for a handle of no bytes: it answers
//!    `EOVERFLOW` with the mount id filled in, on every file system that makes file handles.
//! 3. The `mnt_id:` line of `/proc/self/fdinfo/<fd>` (Linux 3.15) for an `O_PATH` descriptor of
//!    the entry: every file system (procfs, FUSE without handles), where `/proc` is mounted.
//!
//! Where none answers (a kernel before 5.8 or qemu-user, without `/proc`, on a file system
//! without file handles) the id is unknown (`None`) and only another device tells a mount point.

use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;

use rustix::fs::{AtFlags, Mode, OFlags, StatxFlags};

/// The environment variable a debug build reads (once) to skip the sources before one:
/// `handle` (no `statx`), `fdinfo` (neither `statx` nor `name_to_handle_at`) or `none` (no source
/// answers), so the test suites run the ways an older kernel or qemu-user takes on any machine.
#[cfg(debug_assertions)]
pub const MOUNT_ID_FROM_ENV: &str = "AGENT_FS_TOOLS_MOUNT_ID_FROM";

/// The sources, in the order they are asked (a release build always starts at `Statx`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[cfg_attr(not(debug_assertions), allow(dead_code))]
enum Source {
    Statx,
    Handle,
    Fdinfo,
    /// No source answers: a kernel before 5.8 or qemu-user, without `/proc`, on a file system
    /// without file handles.
    Nothing,
}

/// The first source asked: `statx`, unless a debug build is told otherwise ([`MOUNT_ID_FROM_ENV`]).
fn first_source() -> Source {
    #[cfg(debug_assertions)]
    {
        static FIRST: std::sync::OnceLock<Source> = std::sync::OnceLock::new();
        *FIRST.get_or_init(|| match std::env::var_os(MOUNT_ID_FROM_ENV) {
            Some(v) if v == "handle" => Source::Handle,
            Some(v) if v == "fdinfo" => Source::Fdinfo,
            Some(v) if v == "none" => Source::Nothing,
            _ => Source::Statx,
        })
    }
    #[cfg(not(debug_assertions))]
    {
        Source::Statx
    }
}

/// The id of the mount the entry `name` of `dir` (empty: `dir` itself) is on; `None` where no
/// source gives it (see the module). A mount point is reported as the mount on it, as any
/// lookup crosses into it; an automount is not triggered. An entry that is not there is
/// `NotFound`.
pub(super) fn mount_id(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<Option<u64>> {
    let first = first_source();
    if first <= Source::Statx {
        if let Some(id) = from_statx(dir, name)? {
            return Ok(Some(id));
        }
    }
    if first <= Source::Handle {
        if let Some(id) = from_handle(dir, name) {
            return Ok(Some(id));
        }
    }
    if first <= Source::Fdinfo {
        return from_fdinfo(dir, name);
    }
    Ok(None)
}

fn from_statx(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<Option<u64>> {
    let mut flags = AtFlags::SYMLINK_NOFOLLOW | AtFlags::NO_AUTOMOUNT;
    if name.is_empty() {
        flags |= AtFlags::EMPTY_PATH;
    }
    match rustix::fs::statx(dir, name, flags, StatxFlags::MNT_ID) {
        Ok(stx) => Ok(usable_statx_id(stx.stx_mask, stx.stx_mnt_id)),
        Err(e) if e == rustix::io::Errno::NOSYS => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// `statx`'s mount id where it can be trusted: the mask says it is there, and it is not 0.
fn usable_statx_id(mask: u32, id: u64) -> Option<u64> {
    (StatxFlags::from_bits_retain(mask).contains(StatxFlags::MNT_ID) && id != 0).then_some(id)
}

/// The mount id `name_to_handle_at` gives with a handle of no bytes (`EOVERFLOW`, or success
/// should a file system's handles ever be empty); `None` on any other answer, which the next
/// source either explains (the entry's own error) or gets past (no file handles here).
fn from_handle(dir: BorrowedFd<'_>, name: &OsStr) -> Option<u64> {
    let name = std::ffi::CString::new(name.as_bytes()).ok()?;
    let flags = if name.is_empty() {
        libc::AT_EMPTY_PATH
    } else {
        0 // neither following a symlink nor triggering an automount
    };
    let mut handle = libc::file_handle {
        handle_bytes: 0,
        handle_type: 0,
        f_handle: [],
    };
    let mut mount: libc::c_int = -1;
    // SAFETY: `handle` is a header announcing 0 bytes of handle, so the kernel writes only the
    // header; `name` is a C string and `mount` an int, all alive for the call.
    let done = unsafe {
        libc::name_to_handle_at(
            dir.as_raw_fd(),
            name.as_ptr(),
            &mut handle,
            &mut mount,
            flags,
        )
    };
    let answered = done == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EOVERFLOW);
    (answered && mount >= 0).then_some(mount as u64)
}

/// The `mnt_id:` of an `O_PATH` descriptor of the entry in `/proc/self/fdinfo`; `None` where
/// that cannot be read (no `/proc`).
fn from_fdinfo(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<Option<u64>> {
    let opened;
    let fd = if name.is_empty() {
        dir
    } else {
        // `O_PATH` opens anything without side effects: no automount, no FIFO waiting for a
        // writer, and with `O_NOFOLLOW` a symlink itself.
        let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        opened = rustix::fs::openat(dir, name, flags, Mode::empty())?;
        use std::os::fd::AsFd;
        opened.as_fd()
    };
    let Ok(info) = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", fd.as_raw_fd())) else {
        return Ok(None);
    };
    Ok(info
        .lines()
        .find_map(|line| line.strip_prefix("mnt_id:"))
        .and_then(|id| id.trim().parse().ok()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::test_mounts::Mounted;
    use std::os::fd::{AsFd, OwnedFd};

    fn open_dir(path: &std::path::Path) -> OwnedFd {
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        rustix::fs::open(path, flags, Mode::empty()).unwrap()
    }

    /// qemu-user's `statx` says the mount id is there and gives 0; an older kernel's does not
    /// say it is. Neither is taken, so the other sources are asked.
    #[test]
    fn a_statx_mount_id_of_0_or_not_in_the_mask_is_not_taken() {
        let mnt_id = StatxFlags::MNT_ID.bits();
        let basic = StatxFlags::BASIC_STATS.bits();
        assert_eq!(usable_statx_id(basic | mnt_id, 27), Some(27));
        assert_eq!(usable_statx_id(basic | mnt_id, 0), None, "qemu-user");
        assert_eq!(usable_statx_id(basic, 27), None, "Linux before 5.8");
    }

    /// Every source that answers here gives the same ids, and each tells a bind mount of the same
    /// file system from a plain directory: the directory, an entry of it, a mount point in it.
    #[test]
    fn every_source_tells_a_bind_mount_of_the_same_file_system() {
        let tmp = tempfile::tempdir().unwrap();
        let base = crate::paths::canonical::canonicalize_existing(tmp.path()).unwrap();
        std::fs::create_dir_all(base.join("R/plain")).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        std::fs::write(base.join("R/file"), "x").unwrap();
        std::os::unix::fs::symlink("nowhere", base.join("R/link")).unwrap();
        let Some(_bind) = Mounted::bind(&base.join("outside"), &base.join("R/bound")) else {
            eprintln!("skipped: mounting is not permitted here (not root)");
            return;
        };
        let root = open_dir(&base.join("R"));
        let dir = root.as_fd();
        let ids = |source: &str| -> Vec<Option<u64>> {
            ["", "plain", "file", "link", "bound"]
                .into_iter()
                .map(|name| {
                    let name = OsStr::new(name);
                    match source {
                        "statx" => from_statx(dir, name).unwrap(),
                        "handle" => from_handle(dir, name),
                        _ => from_fdinfo(dir, name).unwrap(),
                    }
                })
                .collect()
        };
        let fdinfo = ids("fdinfo");
        let here = fdinfo[0].expect("/proc/self/fdinfo gives mount ids");
        assert_eq!(fdinfo[1..4], [Some(here); 3], "plain entries");
        assert!(fdinfo[4].is_some_and(|bound| bound != here), "{fdinfo:?}");
        let handle = ids("handle");
        if handle[0].is_some() {
            assert_eq!(handle, fdinfo, "name_to_handle_at");
        } else {
            eprintln!("this file system makes no file handles: name_to_handle_at not compared");
        }
        let statx = ids("statx");
        if statx[0].is_some() {
            assert_eq!(statx, fdinfo);
        } else {
            eprintln!("statx gives no mount id here: only the other sources were compared");
        }
        assert_eq!(mount_id(dir, OsStr::new("bound")).unwrap(), fdinfo[4]);
    }

    #[test]
    fn an_entry_that_is_not_there_is_not_found_by_every_source() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = open_dir(tmp.path());
        let missing = OsStr::new("missing");
        let not_found = |r: io::Result<Option<u64>>| r.unwrap_err().kind();
        assert_eq!(
            not_found(from_statx(dir.as_fd(), missing)),
            io::ErrorKind::NotFound
        );
        assert_eq!(from_handle(dir.as_fd(), missing), None);
        assert_eq!(
            not_found(from_fdinfo(dir.as_fd(), missing)),
            io::ErrorKind::NotFound
        );
        assert_eq!(
            not_found(mount_id(dir.as_fd(), missing)),
            io::ErrorKind::NotFound
        );
    }
}
