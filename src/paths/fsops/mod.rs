//! The one race-free filesystem layer (../../../docs/paths-and-sandbox.md#the-checked-path-is-the-acted-on-path): every user path is acted on through it.
//! Directories are opened beneath their allowed tree with `openat2(RESOLVE_BENEATH |
//! RESOLVE_NO_SYMLINKS)` (on macOS, and on kernels without it, a component walk with
//! `O_NOFOLLOW`: see [`platform`](super::platform)), and
//! every file operation is an `*at` call on such a descriptor, with `O_NOFOLLOW` on every open,
//! exclusive creation and no-replace renames. A symlink or directory swapped in after the sandbox
//! check makes the operation fail (`ELOOP`/`EXDEV`); it never redirects it.
//!
//! - [`open`](self::open): directories beneath an anchor, files and subdirectories on a descriptor;
//! - [`make_dirs`](self::make_dirs): missing directories made one component at a time;
//! - [`entry`](self::entry): what an entry is (`lstat`, [`Snapshot`]) and a directory's names;
//! - [`change`](self::change): renames and swaps, unlinks, new entries, temp and kept names;
//! - [`replace`](self::replace): atomic replacement of a file, only of the file planned on;
//! - [`put_by_renames`](self::put_by_renames): the same for a change of many files where names
//!   cannot be exchanged (Windows);
//! - [`remove`](self::remove): removal of an entry, only of the entry expected;
//! - [`meta`](self::meta): owner, mode, times, fsync and advisory locks;
//! - [`race_point`](self::race_point): where a concurrent change would race with a commit (tests
//!   make those races certain there).

#[cfg_attr(windows, path = "change_windows.rs")]
mod change;
mod entry;
mod make_dirs;
#[cfg_attr(windows, path = "meta_windows.rs")]
mod meta;
#[cfg_attr(windows, path = "open_windows.rs")]
mod open;
mod put_by_renames;
pub mod race_point;
mod remove;
mod replace;
mod temp_names;

#[cfg(unix)]
use std::io;

pub use change::*;
pub use entry::*;
pub use make_dirs::*;
pub use meta::*;
pub use open::*;
pub use put_by_renames::*;
pub use remove::*;
pub use replace::*;
pub use temp_names::*;

#[cfg(unix)]
fn errno(e: rustix::io::Errno) -> io::Error {
    io::Error::from(e)
}

/// What every platform must do alike (Windows' run: `npm run test:windows -- --cargo-tests`).
#[cfg(test)]
mod portable_tests {
    use super::*;
    use crate::paths::testing::open_dir_from_root;
    use crate::paths::AsDir;
    use std::ffi::OsStr;
    use std::fs;
    use std::io;

    /// A directory, with what it holds, takes a free name beside it or in another directory, and
    /// never one that is taken: how a tree built under a temp name is put in place. One-letter
    /// names too (on Windows the rename's structure is then shorter than its own size, which the
    /// system refuses unless padded).
    #[test]
    fn a_directory_takes_a_free_name_never_a_taken_one() {
        let tmp = tempfile::tempdir().unwrap();
        let base = crate::paths::canonical::canonicalize_existing(tmp.path()).unwrap();
        fs::create_dir_all(base.join(".staged/sub")).unwrap();
        fs::write(base.join(".staged/sub/f.txt"), "tree\n").unwrap();
        fs::create_dir_all(base.join("taken")).unwrap();
        fs::create_dir_all(base.join("other")).unwrap();
        let here = open_dir_from_root(&base);
        let other = open_dir_from_root(&base.join("other"));
        let name = OsStr::new;
        let taken = rename_noreplace(here.as_dir(), name(".staged"), here.as_dir(), name("taken"));
        assert_eq!(taken.unwrap_err().kind(), io::ErrorKind::AlreadyExists);
        // A handle held inside it (its maker's, say) does not keep it from moving.
        let inside = open_dir_from_root(&base.join(".staged/sub"));
        rename_noreplace(here.as_dir(), name(".staged"), here.as_dir(), name("p")).unwrap();
        drop(inside);
        assert_eq!(
            fs::read_to_string(base.join("p/sub/f.txt")).unwrap(),
            "tree\n"
        );
        rename_noreplace(here.as_dir(), name("p"), other.as_dir(), name("m")).unwrap();
        assert_eq!(
            fs::read_to_string(base.join("other/m/sub/f.txt")).unwrap(),
            "tree\n"
        );
        assert!(!base.join("p").exists() && !base.join(".staged").exists());
    }

    /// Marking an open file changed moves its change time forward and leaves its bytes, its
    /// mode and its modification time as they were: how an archive's hold tells a clear that
    /// began before it let go to leave the archive. Through a handle opened to read, and through
    /// one opened to write a file renamed since (an archive written under a temp name).
    #[test]
    fn a_file_marked_changed_has_a_later_change_time_and_nothing_else_changed() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("a.tar.gz");
        fs::write(&path, "archive").unwrap();
        let marks_changed = |file: &fs::File| {
            let before = snapshot_fd(file).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(30));
            mark_changed(file).unwrap();
            let after = snapshot_fd(file).unwrap();
            assert!(
                after.ctime > before.ctime,
                "{:?} → {:?}",
                before.ctime,
                after.ctime
            );
            let kept = |s: &Snapshot| (s.mtime, s.mode, s.size);
            assert_eq!(kept(&after), kept(&before));
        };
        marks_changed(&fs::File::open(&path).unwrap());
        let written = fs::OpenOptions::new().write(true).open(&path).unwrap();
        let renamed = tmp.path().join("b.tar.gz");
        fs::rename(&path, &renamed).unwrap();
        marks_changed(&written);
        assert_eq!(fs::read_to_string(&renamed).unwrap(), "archive");
    }

    /// A handle of a directory reaches its entries after the directory, or one above it, has
    /// moved: how a change moves an entry out of a tree it built, once the tree is in place.
    #[test]
    fn a_directory_handle_follows_its_directory_when_a_parent_moves() {
        let tmp = tempfile::tempdir().unwrap();
        let base = crate::paths::canonical::canonicalize_existing(tmp.path()).unwrap();
        fs::create_dir_all(base.join(".staged/sub")).unwrap();
        fs::write(base.join(".staged/sub/f.txt"), "tree\n").unwrap();
        let here = open_dir_from_root(&base);
        let sub = open_dir_from_root(&base.join(".staged/sub"));
        let name = OsStr::new;
        rename_noreplace(here.as_dir(), name(".staged"), here.as_dir(), name("built")).unwrap();
        let seen = lstat_at(sub.as_dir(), name("f.txt")).unwrap();
        assert!(seen.is_some(), "the entry is not seen through the handle");
        rename_noreplace(sub.as_dir(), name("f.txt"), here.as_dir(), name("out.txt")).unwrap();
        assert_eq!(fs::read_to_string(base.join("out.txt")).unwrap(), "tree\n");
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::paths::os_error::libc_codes;
    use crate::paths::xattrs;
    use crate::paths::EntryKind;
    use std::ffi::{OsStr, OsString};
    use std::os::fd::AsFd;
    use std::os::unix::fs::symlink;

    /// Replacing the file `stat` describes, whatever its content.
    fn planned(stat: &crate::paths::Stat) -> Replacing<'_> {
        Replacing::File {
            stat,
            same_content: &|_| Ok(true),
        }
    }

    fn setup() -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let base = crate::paths::canonical::canonicalize_existing(dir.path()).unwrap();
        std::fs::create_dir_all(base.join("R/a")).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        (dir, base)
    }

    #[test]
    fn a_swapped_symlink_is_refused_not_followed() {
        let (_d, base) = setup();
        let r = base.join("R");
        std::fs::remove_dir(r.join("a")).unwrap();
        symlink(base.join("outside"), r.join("a")).unwrap();
        let e = open_dir(&r, &r.join("a"), false).unwrap_err();
        assert!(matches!(
            e.raw_os_error(),
            Some(libc_codes::ELOOP) | Some(libc_codes::ENOTDIR)
        ));
        let e = ensure_dir(&r, &r.join("a/b")).unwrap_err();
        assert!(matches!(
            e.raw_os_error(),
            Some(libc_codes::ELOOP) | Some(libc_codes::ENOTDIR)
        ));
        assert!(!base.join("outside/b").exists());
    }

    #[test]
    fn ensure_dir_creates_each_missing_component() {
        let (_d, base) = setup();
        let r = base.join("R");
        let (_fd, created) = ensure_dir(&r, &r.join("a/x/y")).unwrap();
        assert!(created && r.join("a/x/y").is_dir());
        let (_fd, created) = ensure_dir(&r, &r.join("a/x/y")).unwrap();
        assert!(!created);
    }

    /// The maker is asked only for the directories that are missing, never for an existing
    /// one above them (which may be outside the allowed trees: the anchor can be `/`).
    #[test]
    fn ensure_dir_made_with_asks_only_for_missing_directories() {
        let (_d, base) = setup();
        let r = base.join("R");
        let mut asked = Vec::new();
        let (_fd, made) = ensure_dir_made_with(
            &crate::paths::canonical::root_of(&r),
            &r.join("a/x/y"),
            |dir, path, name| {
                asked.push(path.to_owned());
                mkdir_umasked_at(dir, name, 0o777).map(|()| true)
            },
        )
        .unwrap();
        assert_eq!(asked, [r.join("a/x"), r.join("a/x/y")]);
        let made: Vec<_> = made.into_iter().map(|m| m.path).collect();
        assert_eq!(made, asked);
    }

    /// A rewrite through temp file + rename must not strip what the user set on the file: owner
    /// and group (where we may), user attributes, ACLs. File capabilities are not carried to new
    /// content.
    #[test]
    fn write_atomic_keeps_owner_attributes_and_acls_but_not_capabilities() {
        use std::os::unix::fs::MetadataExt;
        let (_d, base) = setup();
        let r = base.join("R");
        let f = r.join("a/shared.txt");
        std::fs::write(&f, "old").unwrap();
        let flags = rustix::fs::XattrFlags::empty();
        let acl = xattrs::sample_access_acl();
        rustix::fs::setxattr(&f, "user.origin", b"kept", flags).unwrap();
        rustix::fs::setxattr(&f, "system.posix_acl_access", &acl, flags).unwrap();
        let root = rustix::process::geteuid().is_root();
        // Version 2 capabilities: CAP_NET_BIND_SERVICE permitted (only root may set them).
        let caps = [0x0200_0000u32, 1 << 10, 0, 0, 0]
            .map(u32::to_le_bytes)
            .concat();
        // (A change of owner clears capabilities: the owner first.)
        let with_caps = root
            && std::os::unix::fs::chown(&f, Some(1234), Some(5678)).is_ok()
            && rustix::fs::setxattr(&f, "security.capability", &caps, flags).is_ok();
        let dir = open_dir(&r, &r.join("a"), false).unwrap();
        let name = OsStr::new("shared.txt");
        let old = lstat_at(dir.as_fd(), name).unwrap().unwrap();
        write_atomic(dir.as_fd(), name, &temp_name(name), b"new", planned(&old)).unwrap();

        let get = |attr: &str| {
            let mut buf = vec![0u8; 256];
            let n = rustix::fs::getxattr(&f, attr, &mut buf[..]).ok()?;
            buf.truncate(n);
            Some(buf)
        };
        let meta = std::fs::metadata(&f).unwrap();
        assert_ne!(meta.ino(), old.ino, "it was replaced, not written in place");
        assert_eq!(get("user.origin").as_deref(), Some(&b"kept"[..]));
        assert_eq!(get("system.posix_acl_access"), Some(acl));
        assert_eq!(meta.mode(), Snapshot::of(&old).mode);
        if with_caps {
            assert_eq!((meta.uid(), meta.gid()), (1234, 5678));
            assert_eq!(get("security.capability"), None);
        } else {
            eprintln!("owner and capabilities not checked: only root may set them");
        }
    }

    #[test]
    fn write_atomic_replaces_keeps_mode_and_leaves_no_temp() {
        use std::os::unix::fs::PermissionsExt;
        let (_d, base) = setup();
        let r = base.join("R");
        let f = r.join("a/f.sh");
        std::fs::write(&f, "old").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o751)).unwrap();
        let dir = open_dir(&r, &r.join("a"), false).unwrap();
        let name = OsStr::new("f.sh");
        let old = lstat_at(dir.as_fd(), name).unwrap().unwrap();
        write_atomic(dir.as_fd(), name, &temp_name(name), b"new", planned(&old)).unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"new");
        assert_eq!(
            std::fs::metadata(&f).unwrap().permissions().mode() & 0o777,
            0o751
        );
        let names: Vec<_> = std::fs::read_dir(r.join("a"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![OsString::from("f.sh")]);
    }

    #[test]
    fn reading_a_fifo_does_not_block() {
        let (_d, base) = setup();
        let r = base.join("R");
        let fifo = r.join("a/fifo");
        crate::paths::platform::make_fifo(&fifo);
        let dir = open_dir(&r, &r.join("a"), false).unwrap();
        let file = open_for_read(dir.as_fd(), OsStr::new("fifo")).unwrap();
        assert_eq!(EntryKind::of(&fstat(&file).unwrap()), EntryKind::Special);
    }

    /// A bind mount of the same file system is a mount point (told by its mount id where the
    /// fast paths run), and so is another file system; a plain directory or file is not.
    #[test]
    fn mount_points_are_recognised() {
        use crate::paths::test_mounts::Mounted;
        let (_tmp, base) = setup();
        std::fs::write(base.join("R/file"), "x").unwrap();
        let root = open_dir(&base, &base.join("R"), false).unwrap();
        let Some(_bind) = Mounted::bind(&base.join("outside"), &base.join("R/bound")) else {
            eprintln!("skipped: mounting is not permitted here (not root)");
            return;
        };
        let Some(_tmpfs) = Mounted::tmpfs(&base.join("R/other")) else {
            eprintln!("skipped: a tmpfs cannot be mounted here");
            return;
        };
        let is = |name: &str| is_mount_point(root.as_fd(), OsStr::new(name)).unwrap();
        assert!(!is("a") && !is("file") && !is("missing"));
        assert!(is("other"));
        if crate::paths::platform::linux_fast_paths() {
            assert!(is("bound"), "a bind mount, by its mount id");
        }
    }

    #[test]
    fn temp_names_fit_and_are_recognisable() {
        let long = "x".repeat(255);
        let t = temp_name(OsStr::new(&long));
        assert!(t.len() <= 255);
        assert!(t.to_string_lossy().ends_with(TEMP_MARKER));
        assert!(is_temp_name(&t) && !is_temp_name(OsStr::new("notes.tmp")));
    }

    /// A numbered temp name tells its counter, and so do the doomed and hold names derived from
    /// it, however long the name it stands beside; another process's does not.
    #[test]
    fn numbered_temp_names_tell_their_counter() {
        let pid = std::process::id();
        let first = reserve_temp_counters(3);
        assert_eq!(
            reserve_temp_counters(1),
            first + 3,
            "a reserved block is skipped"
        );
        for name in ["a.txt".to_owned(), "y".repeat(255)] {
            let t = numbered_temp_name(OsStr::new(&name), first + 2);
            assert!(t.len() <= 255 && is_temp_name_of(&t, pid));
            for derived in [t.clone(), doomed_name(&t), hold_name(&t)] {
                assert_eq!(
                    temp_counter_of(&derived, pid),
                    Some(first + 2),
                    "{derived:?}"
                );
                assert_eq!(temp_counter_of(&derived, pid.wrapping_add(1)), None);
            }
        }
        let plain = temp_name(OsStr::new("b.txt"));
        assert!(temp_counter_of(&plain, pid).is_some_and(|n| n > first + 2));
        for other in [
            "a.txt",
            ".a.txt.1.x.agent-fs-tools.tmp",
            ".a.txt.1..agent-fs-tools.tmp",
        ] {
            assert_eq!(temp_counter_of(OsStr::new(other), 1), None, "{other}");
        }
    }
}
