//! Removing an entry only if it is the one expected (../../../docs/trash.md#nothing-lost: only what was archived is
//! removed; a permanent delete removes the file that was confirmed, nothing swapped in since).
//!
//! There is no unlink by descriptor, and an entry checked by name and then unlinked by name can
//! be another one by then (a rename in between). So the entry is first renamed to a fresh temp
//! name beside it — atomically: whatever holds the name at that instant moves, and nothing else
//! uses the temp name — checked there, and only then removed. One that is not the expected
//! entry is renamed back without replacing anything; should the name have been taken again in
//! the meantime, it is kept under a visible [`kept_name`](super::kept_name) instead.
//!
//! Should the process die between the rename and the removal, the entry stays under its hidden
//! temp name (a microsecond window).

use std::ffi::{OsStr, OsString};
use std::io;

use super::race_point::{self, RacePoint};
use super::{keep_visible, lstat_at, rename_noreplace, rmdir_at, temp_name, unlink_at};
use crate::paths::{platform, BorrowedDir, EntryKind, Stat};

/// Whether a directory (or a file in it) held open keeps it from being removed (Windows without
/// POSIX delete semantics): what holds the data directory must then let go between calls.
pub fn open_handles_block_removal() -> bool {
    platform::open_handles_block_removal()
}

/// Why [`remove_exact`] removed nothing.
#[derive(Debug)]
pub enum RemoveError {
    /// The entry under the name was not the one expected; it is where it was, or, if the name
    /// was taken again meanwhile, under the visible name `kept`.
    NotExpected { kept: Option<OsString> },
    /// The removal failed (a directory that is not empty: `ENOTEMPTY`; no entry at all:
    /// `NotFound`); the entry is where it was, or under `kept` as above.
    Io {
        error: io::Error,
        kept: Option<OsString>,
    },
}

impl From<io::Error> for RemoveError {
    fn from(error: io::Error) -> Self {
        RemoveError::Io { error, kept: None }
    }
}

/// Removes the file, symlink or empty directory `name` of `dir` if `expected` accepts its
/// `lstat`, taken after it was renamed aside (so its ctime is the rename's).
pub fn remove_exact(
    dir: BorrowedDir<'_>,
    name: &OsStr,
    expected: &dyn Fn(&Stat) -> bool,
) -> Result<(), RemoveError> {
    let aside = temp_name(name);
    let found = set_aside(dir, name, &aside, expected)?;
    let removed = if EntryKind::of(&found) == EntryKind::Directory {
        rmdir_at(dir, &aside)
    } else {
        unlink_at(dir, &aside)
    };
    removed.map_err(|error| {
        let kept = put_back(dir, &aside, name);
        RemoveError::Io { error, kept }
    })
}

/// The first half of [`remove_exact`]: renames `name` to the fresh temp name `aside` and checks
/// it there; the expected entry stays under `aside` (its `lstat` is returned) for the caller to
/// remove — or to put back, for a change of many files that is undone halfway. Anything else goes
/// back as [`remove_exact`] says.
pub fn set_aside(
    dir: BorrowedDir<'_>,
    name: &OsStr,
    aside: &OsStr,
    expected: &dyn Fn(&Stat) -> bool,
) -> Result<Stat, RemoveError> {
    race_point::reached(RacePoint::BeforeRemove, name);
    move_aside(dir, name, aside)?;
    let aside = aside.to_owned();
    let found = match lstat_at(dir, &aside) {
        Ok(Some(stat)) => stat,
        Ok(None) => return Err(RemoveError::NotExpected { kept: None }),
        Err(error) => {
            let kept = put_back(dir, &aside, name);
            return Err(RemoveError::Io { error, kept });
        }
    };
    if !expected(&found) {
        let kept = put_back(dir, &aside, name);
        return Err(RemoveError::NotExpected { kept });
    }
    Ok(found)
}

/// Renames `name` to the fresh temp name `aside`. Where the file system has no
/// `RENAME_NOREPLACE`, a plain rename: the name is ours and fresh. (On Windows every rename of
/// an entry is one without replacing, through a handle of it: see `change_windows.rs`.)
fn move_aside(dir: BorrowedDir<'_>, name: &OsStr, aside: &OsStr) -> io::Result<()> {
    #[cfg(unix)]
    {
        use rustix::fs::RenameFlags;
        let renamed = rustix::fs::renameat_with(dir, name, dir, aside, RenameFlags::NOREPLACE);
        match renamed.map_err(super::errno) {
            Err(e) if super::is_unsupported_rename(&e) => {
                rustix::fs::renameat(dir, name, dir, aside).map_err(super::errno)
            }
            other => other,
        }
    }
    #[cfg(windows)]
    {
        rename_noreplace(dir, name, dir, aside)
    }
}

/// Renames `aside` back to `name` without replacing anything, else to a visible kept name
/// (returned).
pub fn put_back(dir: BorrowedDir<'_>, aside: &OsStr, name: &OsStr) -> Option<OsString> {
    match rename_noreplace(dir, aside, dir, name) {
        Ok(()) => None,
        Err(_) => Some(keep_visible(dir, aside, name).unwrap_or_else(|_| aside.to_owned())),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::paths::fsops::{open_dir, race_point};
    use rustix::fs::RenameFlags;
    use std::os::fd::{AsFd, OwnedFd};
    use std::path::PathBuf;

    fn setup(tag: &str) -> (tempfile::TempDir, PathBuf, OwnedFd, String) {
        let tmp = tempfile::tempdir().unwrap();
        let path = crate::paths::canonical::canonicalize_existing(tmp.path()).unwrap();
        let name = format!("{tag}.txt");
        std::fs::write(path.join(&name), "expected").unwrap();
        let fd = open_dir(&path, &path, false).unwrap();
        (tmp, path, fd, name)
    }

    fn contents(dir: &std::path::Path) -> Vec<(String, String)> {
        let mut found: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let name = e.file_name().to_string_lossy().into_owned();
                let content = std::fs::read_to_string(e.path()).unwrap_or_default();
                (name, content)
            })
            .collect();
        found.sort();
        found
    }

    fn ino(path: &std::path::Path) -> u64 {
        use std::os::unix::fs::MetadataExt;
        std::fs::symlink_metadata(path).unwrap().ino()
    }

    #[test]
    fn the_expected_entry_is_removed() {
        let (_t, path, fd, name) = setup("rm-expected");
        let inode = ino(&path.join(&name));
        remove_exact(fd.as_fd(), name.as_ref(), &|s| s.ino == inode).unwrap();
        assert_eq!(contents(&path), []);
    }

    /// A file swapped in under the name after the caller's check is put back, not removed.
    #[test]
    fn an_entry_swapped_in_is_put_back() {
        let (_t, path, fd, name) = setup("rm-swapped");
        let inode = ino(&path.join(&name));
        std::fs::write(path.join("other"), "other").unwrap();
        let (file, other) = (path.join(&name), path.join("other"));
        race_point::at(RacePoint::BeforeRemove, &name, move || {
            rustix::fs::renameat_with(
                rustix::fs::CWD,
                &file,
                rustix::fs::CWD,
                &other,
                RenameFlags::EXCHANGE,
            )
            .unwrap()
        });
        let result = remove_exact(fd.as_fd(), name.as_ref(), &|s| s.ino == inode);
        assert!(
            matches!(result, Err(RemoveError::NotExpected { kept: None })),
            "{result:?}"
        );
        assert_eq!(
            contents(&path),
            [("other".into(), "expected".into()), (name, "other".into())]
        );
    }

    /// The entry moved aside is not the expected one, and its name was taken again meanwhile:
    /// it is kept under a visible name.
    #[test]
    fn an_entry_that_cannot_go_back_is_kept_visible() {
        let (_t, path, fd, name) = setup("rm-kept");
        let file = path.join(&name);
        let retaken = |_: &Stat| {
            std::fs::write(&file, "new at the name").unwrap();
            false
        };
        let kept = match remove_exact(fd.as_fd(), name.as_ref(), &retaken) {
            Err(RemoveError::NotExpected { kept: Some(kept) }) => kept,
            other => panic!("{other:?}"),
        };
        let kept = kept.to_string_lossy().into_owned();
        assert!(kept.starts_with(&name) && kept.contains(".kept-by-agent-fs-tools."));
        let mut expected = vec![
            (name, "new at the name".to_owned()),
            (kept, "expected".to_owned()),
        ];
        expected.sort();
        assert_eq!(contents(&path), expected);
    }

    #[test]
    fn a_directory_that_is_not_empty_is_put_back() {
        let (_t, path, fd, _) = setup("rm-dir");
        std::fs::create_dir(path.join("d")).unwrap();
        std::fs::write(path.join("d/inside"), "x").unwrap();
        let result = remove_exact(fd.as_fd(), "d".as_ref(), &|_| true);
        assert!(
            matches!(&result, Err(RemoveError::Io { error, kept: None }) if error.kind() == io::ErrorKind::DirectoryNotEmpty),
            "{result:?}"
        );
        assert_eq!(std::fs::read_to_string(path.join("d/inside")).unwrap(), "x");
    }
}
