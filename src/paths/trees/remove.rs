//! Removing a whole tree through descriptors (permanent `remove_dir`, our own temp trees, the
//! source of a move between file systems): never following a symlink, never crossing into
//! another mount, its place kept in a stack of open directories rather than on the call stack.

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};

use crate::paths::fsops;
use crate::paths::os_error::{self, Cause};
use crate::paths::{AsDir, BorrowedDir, Dir, EntryKind, Stat};

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
    fd: Dir,
    name: OsString,
    pending: std::vec::IntoIter<OsString>,
    kept: bool,
    mount: fsops::DirMount,
}

/// A mount point met in a tree being removed, by its path from the removed entry's directory: a
/// tree is never removed across one, so it and the directories holding it stay. The error of
/// [`remove_tree_at`] carries it (`io::Error::get_ref`).
#[derive(Debug)]
pub struct MountPointInside(pub PathBuf);

impl std::fmt::Display for MountPointInside {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} is a mount point", self.0.display())
    }
}

impl std::error::Error for MountPointInside {}

impl MountPointInside {
    /// The mount point an error of [`remove_tree_at`] is about, if it is one.
    pub fn of(e: &io::Error) -> Option<&Path> {
        let inner = e.get_ref()?.downcast_ref::<MountPointInside>()?;
        Some(&inner.0)
    }
}

/// Removes `name` in `dir` (a file, a symlink or a whole tree) as `how` says; returns how many
/// entries were kept. Like `rm -r`, it goes on past an entry it cannot remove (that entry and its
/// directories stay) and then returns the first such error. Unlike `rm -r`, it never crosses into
/// another mount ([`fsops::is_mount_point`]): a mount point stays, with what is mounted there, as
/// an entry it cannot remove ([`MountPointInside`]). `NotFound` if `name` is not there.
pub fn remove_tree_at(dir: BorrowedDir<'_>, name: &OsStr, how: Removal<'_>) -> io::Result<u64> {
    remove_checked(dir, name, how, None).map(|kept| kept.unwrap_or(0))
}

/// As [`remove_tree_at`], only if `expected` accepts the entry, checked through what is then
/// removed: a directory by the descriptor its contents are removed through (all that is left
/// to do by name is `rmdir`, which removes nothing but an empty directory), anything else once
/// renamed aside to a fresh temp name ([`fsops::remove_exact`]; a kill right then leaves it
/// under that hidden name). `Ok(None)`: not the expected entry, left where it was.
pub fn remove_tree_if(
    dir: BorrowedDir<'_>,
    name: &OsStr,
    how: Removal<'_>,
    expected: &dyn Fn(&Stat) -> bool,
) -> io::Result<Option<u64>> {
    remove_checked(dir, name, how, Some(expected))
}

fn remove_checked(
    dir: BorrowedDir<'_>,
    name: &OsStr,
    how: Removal<'_>,
    expected: Option<&dyn Fn(&Stat) -> bool>,
) -> io::Result<Option<u64>> {
    let stat =
        fsops::lstat_at(dir, name)?.ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
    if expected.is_some_and(|expected| !expected(&stat)) {
        return Ok(None);
    }
    if fsops::is_mount_point(dir, name)? {
        return Err(mount_point_inside(&[], name));
    }
    let keeps = |stat: &Stat| how.keep.is_some_and(|keep| keep(stat));
    if EntryKind::of(&stat) != EntryKind::Directory {
        if keeps(&stat) {
            return Ok(Some(1));
        }
        let Some(expected) = expected else {
            return remove_leaf(dir, name, how).map(|kept| Some(u64::from(kept)));
        };
        return match fsops::remove_exact(dir, name, expected) {
            Ok(()) => Ok(Some(0)),
            Err(fsops::RemoveError::NotExpected { .. }) => Ok(None),
            Err(fsops::RemoveError::Io { error, .. }) => Err(error),
        };
    }
    let mut kept = 0;
    let mut first_error = None;
    let Some(top) = open_for_removal(dir, name, how, expected)? else {
        return Ok(None);
    };
    let mut stack = vec![top];
    while let Some(top) = stack.last_mut() {
        if let Some(child) = top.pending.next() {
            let parent = top.fd.as_dir();
            let found = fsops::lstat_at(parent, &child);
            let mounted = match &found {
                Ok(Some(stat)) => {
                    let dev = fsops::identity(stat).0;
                    top.mount.holds_mount_point(parent, &child, dev)
                }
                _ => Ok(false),
            };
            if !matches!(mounted, Ok(false)) {
                top.kept = true;
                let e = mounted.err();
                first_error
                    .get_or_insert_with(|| e.unwrap_or_else(|| mount_point_inside(&stack, &child)));
                continue;
            }
            let removed = match found {
                Ok(None) => Ok(()),
                Ok(Some(stat)) if EntryKind::of(&stat) == EntryKind::Directory => {
                    match open_for_removal(parent, &child, how, None) {
                        Ok(Some(frame)) => {
                            stack.push(frame);
                            continue;
                        }
                        Ok(None) => Ok(()),
                        Err(e) => Err(e),
                    }
                }
                Ok(Some(stat)) if keeps(&stat) => {
                    kept += 1;
                    top.kept = true;
                    Ok(())
                }
                Ok(Some(_)) => match remove_leaf(parent, &child, how) {
                    Ok(true) => {
                        kept += 1;
                        top.kept = true;
                        Ok(())
                    }
                    Ok(false) => Ok(()),
                    Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                    Err(e) => Err(e),
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
        let parent = stack.last().map_or(dir, |f| f.fd.as_dir());
        let left_in_place = done.kept
            || match fsops::rmdir_at(parent, &done.name) {
                Ok(()) => false,
                Err(e) => {
                    if how.keep.is_some() && os_error::cause(&e) == Cause::NotEmpty {
                        kept += 1;
                    } else if e.kind() == io::ErrorKind::ResourceBusy {
                        // `rmdir` refuses a mount point as busy: one that could not be told
                        // before (where no mount id is known), or mounted meanwhile.
                        first_error.get_or_insert_with(|| mount_point_inside(&stack, &done.name));
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
    first_error.map_or(Ok(Some(kept)), Err)
}

/// The error for the mount point `name` inside the directories `open` (outermost first).
fn mount_point_inside(open: &[Frame], name: &OsStr) -> io::Error {
    let mut path: PathBuf = open.iter().map(|frame| frame.name.as_os_str()).collect();
    path.push(name);
    io::Error::other(MountPointInside(path))
}

/// Removes the file or symlink `name` of `dir`; returns whether it was kept instead. With a
/// `keep` rule, the entry is checked again once renamed aside (`fsops::remove_exact`): one
/// swapped in under the name after the caller's check is kept, never removed.
fn remove_leaf(dir: BorrowedDir<'_>, name: &OsStr, how: Removal<'_>) -> io::Result<bool> {
    let Some(keep) = how.keep else {
        return fsops::unlink_at(dir, name).map(|()| false);
    };
    match fsops::remove_exact(dir, name, &|now| !keep(now)) {
        Ok(()) => Ok(false),
        Err(fsops::RemoveError::NotExpected { .. }) => Ok(true),
        Err(fsops::RemoveError::Io { error, .. }) => Err(error),
    }
}

/// The directory `name` of `dir`, opened to be emptied; `None` if `expected` does not accept
/// what was opened.
fn open_for_removal(
    dir: BorrowedDir<'_>,
    name: &OsStr,
    how: Removal<'_>,
    expected: Option<&dyn Fn(&Stat) -> bool>,
) -> io::Result<Option<Frame>> {
    let fd = fsops::open_subdir(dir, name)?;
    if let Some(expected) = expected {
        if !expected(&fsops::fstat(&fd)?) {
            return Ok(None);
        }
    }
    if how.make_writable {
        fsops::set_mode_fd(&fd, 0o700)?;
    }
    let names = fsops::list_names(fd.as_dir())?;
    Ok(Some(Frame {
        mount: fsops::DirMount::of(fd.as_dir())?,
        fd,
        name: name.to_owned(),
        pending: names.into_iter(),
        kept: false,
    }))
}
