//! Removing the original after it is safely archived — exactly what was archived, nothing else.
//!
//! Two passes over the preorder list of [`Observed`] entries, both through directory fds:
//! [`verify_unchanged`] (before the archive is committed) checks that every entry still has the
//! inode, size, times and, for directories, the number of entries that were archived;
//! [`remove_observed`] (after the commit) unlinks entries children-first, re-checking each one
//! right before it goes and again once it is renamed aside, the entry removed being the one
//! checked ([`fsops::remove_exact`]). A directory that gained an entry in between is not empty,
//! so `rmdir` refuses it: an entry the archive does not hold is never removed.

use std::collections::HashSet;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use super::error::{changed, TrashError};
use super::observed::Observed;
use crate::paths::fsops::{self, RemoveError, Snapshot};
use crate::paths::os_error::{cause, Cause};
use crate::paths::shown::Shown;
use crate::paths::Stat;

/// One step of a traversal.
enum Step<'o, 'f> {
    /// A file or symlink.
    Leaf(&'o Observed),
    /// A directory, just opened (and found unchanged); its fd.
    Enter(&'o Observed, BorrowedFd<'f>),
    /// A directory whose children were all visited.
    Leave(&'o Observed),
}

/// Conflict unless every observed entry is still exactly as archived.
pub(crate) fn verify_unchanged(
    parent: BorrowedFd<'_>,
    observed: &[Observed],
    base: &Path,
) -> Result<(), TrashError> {
    let verified = traverse(parent, observed, base, &mut |dir, step| match step {
        Step::Leaf(entry) => expect_unchanged(dir, entry, base),
        Step::Enter(entry, fd) => {
            if fsops::list_names(fd)?.len() == entry.children {
                Ok(())
            } else {
                Err(conflict(base, entry, "changed while it was being archived"))
            }
        }
        Step::Leave(_) => Ok(()),
    });
    verified.map_err(|stopped| stopped.error)
}

/// Why a removal stopped, where, and what it had removed by then.
pub(crate) struct RemovalFailure {
    pub error: TrashError,
    /// The entry it stopped at (its `rel`).
    pub stopped_at: PathBuf,
    /// The entries it removed before (their `rel`): whole subtrees, since a directory goes
    /// only after everything in it.
    pub removed: HashSet<PathBuf>,
}

/// Remove the observed entries, children first. Stops at the first entry that is no longer as
/// archived (what was removed before that is in the archive).
///
/// A file with several names in the tree is archived once per name; after its first name is
/// unlinked, its ctime (link count) changes, so its other names are compared without the ctime.
pub(crate) fn remove_observed(
    parent: BorrowedFd<'_>,
    observed: &[Observed],
    base: &Path,
) -> Result<(), RemovalFailure> {
    let mut removed = HashSet::new();
    let mut unlinked: HashSet<(u64, u64)> = HashSet::new();
    let result = traverse(parent, observed, base, &mut |dir, step| match step {
        Step::Leaf(entry) => {
            let inode = (entry.snapshot.dev, entry.snapshot.ino);
            let relinked = unlinked.contains(&inode);
            expect_unchanged_as(dir, entry, base, relinked)?;
            // Renamed aside, the entry's ctime is the rename's.
            let as_archived = |now: &Stat| entry.snapshot.same_except_ctime(&Snapshot::of(now));
            match fsops::remove_exact(dir, entry.name(), &as_archived) {
                Err(RemoveError::Io { error, kept: None })
                    if error.kind() == std::io::ErrorKind::NotFound => {}
                other => other.map_err(|e| removal_error(base, entry, e))?,
            }
            unlinked.insert(inode);
            removed.insert(entry.rel.clone());
            Ok(())
        }
        Step::Enter(..) => Ok(()),
        Step::Leave(entry) => {
            // Emptied, a directory has a new mtime: the same inode is what is left to compare.
            let same_dir = |now: &Stat| entry.snapshot.same_inode(&Snapshot::of(now));
            fsops::remove_exact(dir, entry.name(), &same_dir)
                .map_err(|e| removal_error(base, entry, e))?;
            removed.insert(entry.rel.clone());
            Ok(())
        }
    });
    result.map_err(|stopped| RemovalFailure {
        error: stopped.error,
        stopped_at: stopped.at,
        removed,
    })
}

/// A traversal stopped at the entry `at` (its `rel`).
struct Stopped {
    error: TrashError,
    at: PathBuf,
}

/// The visitor of a traversal.
type Visit<'v> = dyn FnMut(BorrowedFd<'_>, Step<'_, '_>) -> Result<(), TrashError> + 'v;

/// Walk `observed` (preorder) with a stack of open directory fds, calling `visit` with the fd
/// of the directory that holds each entry.
fn traverse(
    parent: BorrowedFd<'_>,
    observed: &[Observed],
    base: &Path,
    visit: &mut Visit<'_>,
) -> Result<(), Stopped> {
    let mut open: Vec<(OwnedFd, &Observed)> = Vec::new();
    for entry in observed {
        close_down_to(&mut open, entry.depth(), parent, visit)?;
        let at = |error| Stopped {
            error,
            at: entry.rel.clone(),
        };
        let holder = open.last().map_or(parent, |(fd, _)| fd.as_fd());
        if !entry.is_dir() {
            visit(holder, Step::Leaf(entry)).map_err(at)?;
            continue;
        }
        let fd = fsops::open_subdir(holder, entry.name()).map_err(|e| at(gone(base, entry, e)))?;
        if fsops::snapshot_fd(&fd).map_err(|e| at(e.into()))? != entry.snapshot {
            let changed = conflict(base, entry, "changed while it was being archived");
            return Err(at(changed));
        }
        visit(holder, Step::Enter(entry, fd.as_fd())).map_err(at)?;
        open.push((fd, entry));
    }
    close_down_to(&mut open, 0, parent, visit)
}

/// Leave open directories until only `depth` remain.
fn close_down_to(
    open: &mut Vec<(OwnedFd, &Observed)>,
    depth: usize,
    parent: BorrowedFd<'_>,
    visit: &mut Visit<'_>,
) -> Result<(), Stopped> {
    while open.len() > depth {
        let (fd, entry) = open.pop().expect("loop checked non-empty");
        drop(fd);
        let holder = open.last().map_or(parent, |(fd, _)| fd.as_fd());
        visit(holder, Step::Leave(entry)).map_err(|error| Stopped {
            error,
            at: entry.rel.clone(),
        })?;
    }
    Ok(())
}

/// Conflict unless the non-directory `entry` inside `dir` is exactly as archived.
fn expect_unchanged(dir: BorrowedFd<'_>, entry: &Observed, base: &Path) -> Result<(), TrashError> {
    expect_unchanged_as(dir, entry, base, false)
}

/// [`expect_unchanged`], ignoring the ctime if another name of the same file was unlinked.
fn expect_unchanged_as(
    dir: BorrowedFd<'_>,
    entry: &Observed,
    base: &Path,
    relinked: bool,
) -> Result<(), TrashError> {
    let now = fsops::snapshot_at(dir, entry.name()).map_err(|e| gone(base, entry, e))?;
    let same = if relinked {
        entry.snapshot.same_except_ctime(&now)
    } else {
        entry.snapshot == now
    };
    if same {
        Ok(())
    } else {
        Err(conflict(base, entry, "changed while it was being archived"))
    }
}

/// A missing or retyped entry is a conflict; other errors are I/O errors.
fn gone(base: &Path, entry: &Observed, e: std::io::Error) -> TrashError {
    let retyped = matches!(cause(&e), Cause::Loop | Cause::NotADirectory);
    if e.kind() == std::io::ErrorKind::NotFound || retyped {
        conflict(
            base,
            entry,
            "was moved or removed while it was being trashed",
        )
    } else {
        TrashError::Io(e)
    }
}

/// Why `entry` was not removed, as the trash reports it.
fn removal_error(base: &Path, entry: &Observed, e: RemoveError) -> TrashError {
    let (mut error, kept) = match e {
        RemoveError::NotExpected { kept } => (
            conflict(base, entry, "was replaced while it was being removed"),
            kept,
        ),
        RemoveError::Io { error, kept } => {
            let error = match error.kind() {
                std::io::ErrorKind::DirectoryNotEmpty => {
                    conflict(base, entry, "gained new entries while it was being removed")
                }
                _ => gone(base, entry, error),
            };
            (error, kept)
        }
    };
    if let (Some(kept), TrashError::Conflict(why)) = (kept, &mut error) {
        let dir = base.join(&entry.rel);
        let kept = dir.parent().unwrap_or(base).join(kept);
        why.push_str(&format!(
            " (what took its place meanwhile was kept as {})",
            kept.shown()
        ));
    }
    error
}

/// The conflict text for `entry`.
fn conflict(base: &Path, entry: &Observed, what: &str) -> TrashError {
    changed(&base.join(&entry.rel), what)
}
