//! Trash first: what a step keeps archived (kept in place) before anything is staged, the
//! archive checked against what the step expects; a tree removed only as archived. The steps
//! of one change are archived a few at once, and the bucket synced once for the files among
//! them (by the executor).

use std::ffi::OsStr;
use std::io;
use std::path::PathBuf;

use super::dirs::{Dirs, Opened};
use super::failure::Failure;
use crate::call::plan::{Act, Expect, Found, Keep, Place, Step};
use crate::cancel::CancelToken;
use crate::journal::commit::Commit;
use crate::parallel;
use crate::paths::fsops::Snapshot;
use crate::paths::{BorrowedDir, EntryKind};
use crate::trash::{archive_relative_path, Archived, Bucket, Observed, TrashItem};
use crate::workspace::Workspace;

/// What each step keeps, in the plan's order: nothing, an archive ([`archive`]; its name not
/// yet durable: the caller syncs the bucket), or a tree's archive and what archiving saw of it
/// ([`archive_tree`]). The steps are archived as many at a time as there are cores (gzip
/// computes; the fsyncs of the archives overlap with it); each result
/// stands alone (a failure stops no other step: the caller discards what the others made).
pub(super) fn keep_first(
    ws: &Workspace,
    steps: &[Step],
    opened: &[Opened],
    cancel: &CancelToken,
) -> Vec<Result<Kept, Failure>> {
    let items: Vec<(&Step, &Opened)> = steps.iter().zip(opened).collect();
    let archives = steps.iter().filter(|s| s.keep == Keep::Archive).count();
    let threads = if archives > 1 {
        parallel::computing_threads()
    } else {
        1
    };
    parallel::map(&items, threads, |(step, dirs)| match step.keep {
        Keep::Nothing => Ok((None, None)),
        Keep::Archive if removes_tree(step) => archive_tree(ws, step, dirs, cancel)
            .map(|(archived, tree)| (Some(archived), Some(tree))),
        Keep::Archive => archive(ws, step, dirs, cancel).map(|archived| (Some(archived), None)),
    })
}

/// What a step keeps first: its archive, and for a tree what archiving saw of it.
pub(super) type Kept = (Option<Archived>, Option<ArchivedTree>);

/// Archives what the step finds (kept in place) if it is the entry the step expects (its
/// identity, size and times), and checks the archive holds what the step expects: the bytes
/// read (by SHA-256) or an entry of the kind planned on. The archive's name is durable only
/// once the bucket is synced.
fn archive(
    ws: &Workspace,
    step: &Step,
    dirs: &Opened,
    cancel: &CancelToken,
) -> Result<Archived, Failure> {
    let expected = match &step.expect {
        Expect::File { stat, .. } | Expect::Entry { stat } | Expect::Tree { stat, .. } => {
            Snapshot::of(stat)
        }
        Expect::Nothing | Expect::EmptyDir { .. } | Expect::Built => {
            unreachable!(
                "refused by check: nothing to keep at a free name or of an empty directory"
            )
        }
    };
    let archived = with_item(ws, step, dirs, |item| {
        ws.bucket()
            .archive_expected_unsynced(item, &expected, &|| cancel.is_aborted())
            .map_err(Failure::Trash)
    })?;
    let differs = match &step.expect {
        Expect::File { sha256, .. } => {
            (archived.metadata.original_sha256 != *sha256).then_some(Found::Changed)
        }
        Expect::Entry { stat } => {
            (archived.metadata.kind != stat.kind()).then_some(Found::Replaced)
        }
        Expect::Tree { sha256, .. } => {
            if archived.metadata.kind != EntryKind::Directory {
                Some(Found::Replaced)
            } else {
                // The tree's digest: something inside it changed.
                sha256
                    .as_ref()
                    .filter(|digest| **digest != archived.metadata.original_sha256)
                    .map(|_| Found::Changed)
            }
        }
        Expect::Nothing | Expect::EmptyDir { .. } | Expect::Built => None,
    };
    match differs {
        None => Ok(archived),
        Some(found) => {
            ws.bucket().discard(archived);
            Err(Failure::NotAsExpected(found))
        }
    }
}

/// The step's entry as the trash takes it, handed to `f`.
fn with_item<T>(
    ws: &Workspace,
    step: &Step,
    dirs: &Opened,
    f: impl FnOnce(&TrashItem<'_>) -> Result<T, Failure>,
) -> Result<T, Failure> {
    let path = step.at.path();
    let relative = archive_relative_path(ws.sandbox().root(), &path);
    let item = TrashItem {
        parent: dirs.found_at()?,
        name: &step.at.name,
        original_path: &path,
        relative_path: &relative,
    };
    f(&item)
}

/// Whether the step removes a directory kept in the trash first: a tree, removed only as
/// archived ([`archive_tree`], [`add_tree_removal`]).
pub(super) fn removes_tree(step: &Step) -> bool {
    matches!(
        (&step.act, &step.expect),
        (Act::Remove, Expect::Entry { stat }) if stat.kind() == EntryKind::Directory
    )
}

/// What archiving a tree saw of it, which its removal checks it against once set aside.
pub(super) struct ArchivedTree {
    observed: Vec<Observed>,
    /// The directory messages show paths in.
    base: PathBuf,
}

/// [`archive`] for a tree a step removes: archived whole, kept in place,
/// and checked that every entry of it may be removed (refused, nothing is archived or
/// removed: the trash's words, naming the entry that could not be).
fn archive_tree(
    ws: &Workspace,
    step: &Step,
    dirs: &Opened,
    cancel: &CancelToken,
) -> Result<(Archived, ArchivedTree), Failure> {
    let Expect::Entry { stat } = &step.expect else {
        unreachable!("removes_tree checked the step")
    };
    with_item(ws, step, dirs, |item| {
        let (archived, observed) = ws
            .bucket()
            .archive_for_removal(item, &Snapshot::of(stat), &|| cancel.is_aborted())
            .map_err(Failure::Trash)?;
        if archived.metadata.kind != EntryKind::Directory {
            ws.bucket().discard(archived);
            return Err(Failure::NotAsExpected(Found::Replaced));
        }
        let base = item.display_dir().to_owned();
        Ok((archived, ArchivedTree { observed, base }))
    })
}

/// Adds the removal of a tree archived as `tree`: set aside by one rename, then checked there
/// against what was archived (every entry as it was, no other), else put back and the change
/// stopped; removed after the commit point.
pub(super) fn add_tree_removal(
    commit: &mut Commit<'_>,
    step: Step,
    dirs: Dirs,
    tree: ArchivedTree,
) -> io::Result<()> {
    let Expect::Entry { stat } = step.expect else {
        unreachable!("removes_tree checked the step")
    };
    let ArchivedTree { observed, base } = tree;
    let check = Box::new(move |dir: BorrowedDir<'_>, aside: &OsStr| {
        Bucket::unchanged_under(dir, aside, &observed, &base)
    });
    let Place { dir, name, .. } = &step.at;
    commit.remove_checked(dirs.at, dir, name, Snapshot::of(&stat), check)
}
