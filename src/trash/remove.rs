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
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::error::{changed, TrashError};
use super::observed::Observed;
use crate::paths::fsops::{self, RemoveError, Snapshot};
use crate::paths::os_error::{cause, Cause};
use crate::paths::shown::Shown;
use crate::paths::Stat;
use crate::paths::{AsDir, BorrowedDir, Dir, FileId};

/// One step of a traversal.
enum Step<'o, 'f> {
    /// A file or symlink.
    Leaf(&'o Observed),
    /// A directory, just opened (and found unchanged); its fd.
    Enter(&'o Observed, BorrowedDir<'f>),
    /// A directory whose children were all visited.
    Leave(&'o Observed),
}

/// Conflict unless every observed entry is still exactly as archived.
pub(crate) fn verify_unchanged(
    parent: BorrowedDir<'_>,
    observed: &[Observed],
    base: &Path,
) -> Result<(), TrashError> {
    verify_observed(parent, observed, base, false)
}

/// Whether the tree archived as `observed` (named `observed[0].rel` in `parent`) is, set aside
/// under `aside` in `parent` by one rename, still every entry as archived: the same entries,
/// each as it was (the renamed directory's ctime aside, which the rename set), and no other.
pub(crate) fn unchanged_under(
    parent: BorrowedDir<'_>,
    aside: &OsStr,
    observed: &[Observed],
    base: &Path,
) -> bool {
    let renamed: Vec<Observed> = observed
        .iter()
        .map(|entry| {
            let mut parts = entry.rel.components();
            parts.next();
            Observed {
                rel: Path::new(aside).join(parts.as_path()),
                ..entry.clone()
            }
        })
        .collect();
    verify_observed(parent, &renamed, base, true).is_ok()
}

/// Whether this process may remove every entry of the tree archived as `observed` (named
/// `observed[0].rel` in `parent`): each directory holding an entry is one it may write and
/// search, so a removal after the change's commit point does not stop halfway on a refusal the
/// system would make. Refused: [`TrashError::Stopped`] with the cause's code, naming the first
/// entry that could not be removed, nothing removed or archived.
pub(crate) fn check_removable(
    parent: BorrowedDir<'_>,
    observed: &[Observed],
    base: &Path,
) -> Result<(), TrashError> {
    let mut checked: HashSet<PathBuf> = HashSet::new();
    let mut check = |holder: BorrowedDir<'_>, entry: &Observed| {
        let Some(dir) = entry.rel.parent().filter(|_| entry.depth() > 0) else {
            return Ok(());
        };
        if checked.contains(dir) {
            return Ok(());
        }
        match fsops::may_change_entries(holder) {
            Ok(()) => {
                checked.insert(dir.to_owned());
                Ok(())
            }
            Err(e) => Err(not_removable(base, observed, entry, &e)),
        }
    };
    let checked = traverse(parent, observed, base, &mut |dir, step| match step {
        Step::Leaf(entry) | Step::Enter(entry, _) => check(dir, entry),
        Step::Leave(_) => Ok(()),
    });
    checked.map_err(|stopped| stopped.error)
}

/// The refusal of a tree whose `entry` cannot be removed for the reason `e`.
fn not_removable(
    base: &Path,
    observed: &[Observed],
    entry: &Observed,
    e: &std::io::Error,
) -> TrashError {
    let original = base.join(&observed[0].rel);
    let original = original.shown();
    let cause = crate::error::ToolError::io(e, "remove", &base.join(&entry.rel)).message;
    TrashError::Stopped {
        code: crate::paths::io_error_code(e),
        why: format!(
            "{original} was not removed: {cause}; {original} is as it was and nothing of it is in the trash"
        ),
    }
}

/// Conflict unless every observed entry is still exactly as archived; `root_renamed`: the
/// tree's top directory was renamed since (its ctime is the rename's).
fn verify_observed(
    parent: BorrowedDir<'_>,
    observed: &[Observed],
    base: &Path,
    root_renamed: bool,
) -> Result<(), TrashError> {
    let mut visit = |dir: BorrowedDir<'_>, step: Step<'_, '_>| match step {
        Step::Leaf(entry) => expect_unchanged(dir, entry, base),
        Step::Enter(entry, fd) => {
            if fsops::list_names(fd)?.len() == entry.children {
                Ok(())
            } else {
                Err(conflict(base, entry, "changed while it was being archived"))
            }
        }
        Step::Leave(_) => Ok(()),
    };
    let traversed = if root_renamed {
        traverse_as(parent, observed, base, &mut visit, true)
    } else {
        traverse(parent, observed, base, &mut visit)
    };
    traversed.map_err(|stopped| stopped.error)
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
    parent: BorrowedDir<'_>,
    observed: &[Observed],
    base: &Path,
) -> Result<(), RemovalFailure> {
    let mut removed = HashSet::new();
    let mut unlinked: HashSet<FileId> = HashSet::new();
    let result = traverse(parent, observed, base, &mut |dir, step| match step {
        Step::Leaf(entry) => {
            let inode = entry.snapshot.id();
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
type Visit<'v> = dyn FnMut(BorrowedDir<'_>, Step<'_, '_>) -> Result<(), TrashError> + 'v;

/// Walk `observed` (preorder) with a stack of open directory fds, calling `visit` with the fd
/// of the directory that holds each entry.
fn traverse(
    parent: BorrowedDir<'_>,
    observed: &[Observed],
    base: &Path,
    visit: &mut Visit<'_>,
) -> Result<(), Stopped> {
    traverse_as(parent, observed, base, visit, false)
}

/// [`traverse`]; `root_renamed`: the top directory is compared without its ctime.
fn traverse_as(
    parent: BorrowedDir<'_>,
    observed: &[Observed],
    base: &Path,
    visit: &mut Visit<'_>,
    root_renamed: bool,
) -> Result<(), Stopped> {
    let mut open: Vec<(Dir, &Observed)> = Vec::new();
    for entry in observed {
        close_down_to(&mut open, entry.depth(), parent, visit)?;
        let at = |error| Stopped {
            error,
            at: entry.rel.clone(),
        };
        let holder = open.last().map_or(parent, |(fd, _)| fd.as_dir());
        if !entry.is_dir() {
            visit(holder, Step::Leaf(entry)).map_err(at)?;
            continue;
        }
        let fd = fsops::open_subdir(holder, entry.name()).map_err(|e| at(gone(base, entry, e)))?;
        let now = fsops::snapshot_fd(&fd).map_err(|e| at(e.into()))?;
        let same = if root_renamed && entry.depth() == 0 {
            entry.snapshot.same_except_ctime(&now)
        } else {
            now == entry.snapshot
        };
        if !same {
            let changed = conflict(base, entry, "changed while it was being archived");
            return Err(at(changed));
        }
        visit(holder, Step::Enter(entry, fd.as_dir())).map_err(at)?;
        open.push((fd, entry));
    }
    close_down_to(&mut open, 0, parent, visit)
}

/// Leave open directories until only `depth` remain.
fn close_down_to(
    open: &mut Vec<(Dir, &Observed)>,
    depth: usize,
    parent: BorrowedDir<'_>,
    visit: &mut Visit<'_>,
) -> Result<(), Stopped> {
    while open.len() > depth {
        let (fd, entry) = open.pop().expect("loop checked non-empty");
        drop(fd);
        let holder = open.last().map_or(parent, |(fd, _)| fd.as_dir());
        visit(holder, Step::Leave(entry)).map_err(|error| Stopped {
            error,
            at: entry.rel.clone(),
        })?;
    }
    Ok(())
}

/// Conflict unless the non-directory `entry` inside `dir` is exactly as archived.
fn expect_unchanged(dir: BorrowedDir<'_>, entry: &Observed, base: &Path) -> Result<(), TrashError> {
    expect_unchanged_as(dir, entry, base, false)
}

/// [`expect_unchanged`], ignoring the ctime if another name of the same file was unlinked.
fn expect_unchanged_as(
    dir: BorrowedDir<'_>,
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
