//! Whole trees through descriptors: removing one (permanent `remove_dir`, our own temp trees).
//! It never follows a symlink, and keeps its place in a stack of open directories rather than on
//! the call stack, so a deep tree cannot overflow it.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::fs::{Mode, Stat};

use super::fsops::{self, EntryKind};
use crate::error::libc_codes;

/// How [`remove_tree_at`] treats what it finds.
#[derive(Clone, Copy)]
pub struct Removal<'a> {
    /// Give each directory mode 0700 before emptying it. Only for our own temp trees, which a
    /// restore or a copy may already have made read-only; a user's tree keeps its modes.
    pub make_writable: bool,
    /// Non-directories for which this returns true are left in place, and so are their
    /// directories; a directory that gained entries meanwhile is left too instead of failing.
    pub keep: Option<&'a dyn Fn(&Stat) -> bool>,
}

impl Removal<'_> {
    /// A user's tree, removed as `rm -r` would: everything, modes respected.
    pub const EVERYTHING: Removal<'static> = Removal {
        make_writable: false,
        keep: None,
    };
    /// One of our own temp trees (a copy or restore in progress, or left by a crash).
    pub const OWN_TEMP: Removal<'static> = Removal {
        make_writable: true,
        keep: None,
    };
}

/// One directory being emptied or filled: its descriptor and the names still to visit.
struct Frame {
    fd: OwnedFd,
    name: OsString,
    pending: std::vec::IntoIter<OsString>,
    kept: bool,
}

/// Removes `name` in `dir` (a file, a symlink or a whole tree) as `how` says; returns how many
/// entries were kept. Like `rm -r`, it goes on past an entry it cannot remove (that entry and its
/// directories stay) and then returns the first such error. `NotFound` if `name` is not there.
pub fn remove_tree_at(dir: BorrowedFd<'_>, name: &OsStr, how: Removal<'_>) -> io::Result<u64> {
    let stat =
        fsops::lstat_at(dir, name)?.ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
    let keeps = |stat: &Stat| how.keep.is_some_and(|keep| keep(stat));
    if EntryKind::of(&stat) != EntryKind::Directory {
        if keeps(&stat) {
            return Ok(1);
        }
        return fsops::unlink_at(dir, name).map(|()| 0);
    }
    let mut kept = 0;
    let mut first_error = None;
    let mut stack = vec![open_for_removal(dir, name, how)?];
    while let Some(top) = stack.last_mut() {
        if let Some(child) = top.pending.next() {
            let parent = top.fd.as_fd();
            let removed = match fsops::lstat_at(parent, &child) {
                Ok(None) => Ok(()),
                Ok(Some(stat)) if EntryKind::of(&stat) == EntryKind::Directory => {
                    match open_for_removal(parent, &child, how) {
                        Ok(frame) => {
                            stack.push(frame);
                            continue;
                        }
                        Err(e) => Err(e),
                    }
                }
                Ok(Some(stat)) if keeps(&stat) => {
                    kept += 1;
                    top.kept = true;
                    Ok(())
                }
                Ok(Some(_)) => match fsops::unlink_at(parent, &child) {
                    Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                    other => other,
                },
                Err(e) => Err(e),
            };
            if let Err(e) = removed {
                top.kept = true;
                first_error.get_or_insert(e);
            }
            continue;
        }
        let done = stack.pop().expect("loop checked non-empty");
        let parent = stack.last().map_or(dir, |f| f.fd.as_fd());
        let left_in_place = done.kept
            || match fsops::rmdir_at(parent, &done.name) {
                Ok(()) => false,
                Err(e) => {
                    if how.keep.is_some() && e.raw_os_error() == Some(libc_codes::ENOTEMPTY) {
                        kept += 1;
                    } else {
                        first_error.get_or_insert(e);
                    }
                    true
                }
            };
        if let (true, Some(parent)) = (left_in_place, stack.last_mut()) {
            parent.kept = true;
        }
    }
    first_error.map_or(Ok(kept), Err)
}

fn open_for_removal(dir: BorrowedFd<'_>, name: &OsStr, how: Removal<'_>) -> io::Result<Frame> {
    let fd = fsops::open_subdir(dir, name)?;
    if how.make_writable {
        rustix::fs::fchmod(&fd, Mode::from_raw_mode(0o700))?;
    }
    let names = fsops::list_names(fd.as_fd())?;
    Ok(Frame {
        fd,
        name: name.to_owned(),
        pending: names.into_iter(),
        kept: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
    use std::path::Path;

    fn open(path: &Path) -> OwnedFd {
        fsops::open_dir(path, path, false).unwrap()
    }

    fn sample_tree(base: &Path) {
        fs::create_dir_all(base.join("t/a/b")).unwrap();
        fs::create_dir(base.join("keep")).unwrap();
        fs::write(base.join("keep/precious"), "x").unwrap();
        fs::write(base.join("t/a/b/f"), "y").unwrap();
        fs::write(base.join("t/top.sh"), "#!/bin/sh\n").unwrap();
        fs::set_permissions(base.join("t/top.sh"), fs::Permissions::from_mode(0o751)).unwrap();
        symlink(base.join("keep"), base.join("t/a/link")).unwrap();
        symlink("missing", base.join("t/dangling")).unwrap();
    }

    #[test]
    fn removal_never_follows_links() {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        sample_tree(&base);
        let kept =
            remove_tree_at(open(&base).as_fd(), OsStr::new("t"), Removal::EVERYTHING).unwrap();
        assert_eq!(kept, 0);
        assert!(!base.join("t").exists());
        assert_eq!(fs::read(base.join("keep/precious")).unwrap(), b"x");
    }

    #[test]
    fn removal_of_a_file_or_a_missing_name() {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        fs::write(base.join("f"), "x").unwrap();
        remove_tree_at(open(&base).as_fd(), OsStr::new("f"), Removal::EVERYTHING).unwrap();
        assert!(!base.join("f").exists());
        let e =
            remove_tree_at(open(&base).as_fd(), OsStr::new("f"), Removal::EVERYTHING).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn own_temp_trees_go_even_when_read_only() {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        fs::create_dir_all(base.join("t/ro/inner")).unwrap();
        fs::write(base.join("t/ro/inner/f"), "y").unwrap();
        fs::set_permissions(base.join("t/ro/inner"), fs::Permissions::from_mode(0o555)).unwrap();
        fs::set_permissions(base.join("t/ro"), fs::Permissions::from_mode(0o555)).unwrap();
        remove_tree_at(open(&base).as_fd(), OsStr::new("t"), Removal::OWN_TEMP).unwrap();
        assert!(!base.join("t").exists());
    }

    #[test]
    fn kept_entries_stay_with_their_directories() {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        sample_tree(&base);
        let spared = fs::symlink_metadata(base.join("t/a/b/f")).unwrap().ino();
        let keep = move |s: &Stat| s.st_ino == spared;
        let how = Removal {
            make_writable: false,
            keep: Some(&keep),
        };
        let kept = remove_tree_at(open(&base).as_fd(), OsStr::new("t"), how).unwrap();
        assert_eq!(kept, 1);
        assert_eq!(fs::read(base.join("t/a/b/f")).unwrap(), b"y");
        assert!(!base.join("t/top.sh").exists());
        assert!(fs::symlink_metadata(base.join("t/a/link")).is_err());
        assert!(fs::symlink_metadata(base.join("t/dangling")).is_err());
    }

    #[test]
    fn removal_goes_on_past_what_it_cannot_remove() {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        sample_tree(&base);
        let stuck = base.join("t/a/b/f");
        let chattr = |flag: &str| {
            std::process::Command::new("chattr")
                .arg(flag)
                .arg(&stuck)
                .status()
                .is_ok_and(|s| s.success())
        };
        if !chattr("+i") {
            eprintln!("skipped: chattr +i is not possible here (not root, or no ext4)");
            return;
        }
        let result = remove_tree_at(open(&base).as_fd(), OsStr::new("t"), Removal::EVERYTHING);
        assert!(chattr("-i"));
        assert_eq!(result.unwrap_err().raw_os_error(), Some(libc_codes::EPERM));
        assert_eq!(fs::read(&stuck).unwrap(), b"y");
        assert!(!base.join("t/top.sh").exists() && !base.join("t/dangling").exists());
        assert_eq!(fs::read(base.join("keep/precious")).unwrap(), b"x");
    }
}
