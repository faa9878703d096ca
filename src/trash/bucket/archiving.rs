//! Putting an entry in the bucket: archiving it (kept, or checked against what a change planned
//! on), trashing it (archived, then removed), and putting back what a removal that stopped
//! halfway had removed.

use std::ffi::OsStr;
use std::path::Path;

use super::{Archived, Bucket};
use crate::paths::fsops::Snapshot;
use crate::paths::shown::Shown;
use crate::paths::BorrowedDir;
use crate::paths::EntryKind;
use crate::trash::error::{changed, PartlyRemoved, TrashError};
use crate::trash::item::TrashItem;
use crate::trash::observed::Observed;
use crate::trash::write::ArchiveDestination;
use crate::trash::{put_back, remove, write};

impl Bucket {
    /// Archive the entry and keep the original (used before an overwrite replaces a file).
    /// A conflict (the entry changed while it was read) leaves no archive.
    pub fn archive(
        &self,
        item: &TrashItem<'_>,
        cancel: &dyn Fn() -> bool,
    ) -> Result<Archived, TrashError> {
        let bucket = self.open(true)?;
        let written = write::write_archive(&self.target(&bucket), item, cancel, &|_| Ok(()))?;
        Ok(Archived {
            archive_path: written.path,
            metadata: written.metadata,
            hold: written.hold,
        })
    }

    /// [`Bucket::archive`], kept only if what was archived is `expected` (the entry a change
    /// planned on: the same inode, and for a file or link the same size and times), else
    /// [`TrashError::Conflict`] and no archive: an entry swapped in under the name meanwhile is
    /// never archived in place of the one the change removes.
    pub fn archive_expected(
        &self,
        item: &TrashItem<'_>,
        expected: &Snapshot,
        cancel: &dyn Fn() -> bool,
    ) -> Result<Archived, TrashError> {
        self.archive_expected_syncing(item, expected, cancel, true)
    }

    /// [`Bucket::archive_expected`] for one of many archives of a change: the archive is
    /// durable, but its name only once the caller has called [`Bucket::sync`] (one fsync of the
    /// bucket for them all), which it must do before anything depends on the archive.
    pub fn archive_expected_unsynced(
        &self,
        item: &TrashItem<'_>,
        expected: &Snapshot,
        cancel: &dyn Fn() -> bool,
    ) -> Result<Archived, TrashError> {
        self.archive_expected_syncing(item, expected, cancel, false)
    }

    fn archive_expected_syncing(
        &self,
        item: &TrashItem<'_>,
        expected: &Snapshot,
        cancel: &dyn Fn() -> bool,
        sync_bucket: bool,
    ) -> Result<Archived, TrashError> {
        let bucket = self.open(true)?;
        let check = |observed: &[Observed]| match observed.first() {
            Some(root) if is_expected(&root.snapshot, expected) => Ok(()),
            _ => Err(changed(
                item.original_path,
                "was replaced while it was being archived",
            )),
        };
        let target = ArchiveDestination {
            sync_bucket,
            ..self.target(&bucket)
        };
        let written = write::write_archive(&target, item, cancel, &check)?;
        Ok(Archived {
            archive_path: written.path,
            metadata: written.metadata,
            hold: written.hold,
        })
    }

    /// [`Bucket::archive_expected`] for an entry a change is about to remove: also checks that
    /// every entry of it may be removed ([`remove::check_removable`]) before the archive is
    /// kept, and returns what archiving saw, which the removal checks the entry against once it
    /// is set aside ([`Bucket::unchanged_under`]).
    pub(crate) fn archive_for_removal(
        &self,
        item: &TrashItem<'_>,
        expected: &Snapshot,
        cancel: &dyn Fn() -> bool,
    ) -> Result<(Archived, Vec<Observed>), TrashError> {
        let bucket = self.open(true)?;
        let base = item.display_dir();
        let check = |observed: &[Observed]| match observed.first() {
            Some(root) if is_expected(&root.snapshot, expected) => {
                remove::check_removable(item.parent, observed, base)
            }
            _ => Err(changed(
                item.original_path,
                "was replaced while it was being archived",
            )),
        };
        let written = write::write_archive(&self.target(&bucket), item, cancel, &check)?;
        let archived = Archived {
            archive_path: written.path,
            metadata: written.metadata,
            hold: written.hold,
        };
        Ok((archived, written.observed))
    }

    /// Whether the entry archived as `observed` (by [`Bucket::archive_for_removal`], from
    /// `parent`), set aside as `aside` in `parent`, is still every entry as archived and no
    /// other; `base` is the directory shown in messages.
    pub(crate) fn unchanged_under(
        parent: BorrowedDir<'_>,
        aside: &OsStr,
        observed: &[Observed],
        base: &Path,
    ) -> bool {
        remove::unchanged_under(parent, aside, observed, base)
    }

    /// Archive the entry, check that nothing changed while it was archived (else
    /// [`TrashError::Conflict`], original kept, no archive), commit the archive, then remove the
    /// original through `item.parent` — exactly the entries archived, children first, never
    /// following a symlink. Should the removal stop (the tree gained an entry meanwhile, or the
    /// OS refused an unlink) before anything was removed, the archive is dropped and the error
    /// returned; after part of a tree was removed, the error is [`TrashError::PartlyRemoved`],
    /// which the caller hands to [`Bucket::put_back_removed`].
    pub fn trash(
        &self,
        item: &TrashItem<'_>,
        cancel: &dyn Fn() -> bool,
    ) -> Result<Archived, TrashError> {
        self.trash_with_hook(item, cancel, &|_| {})
    }

    /// [`Bucket::trash`], calling `committed` with the archive's path once it is in place and
    /// before the original is removed (tests use it to clear or restore meanwhile).
    pub(crate) fn trash_with_hook(
        &self,
        item: &TrashItem<'_>,
        cancel: &dyn Fn() -> bool,
        committed: &dyn Fn(&Path),
    ) -> Result<Archived, TrashError> {
        let base = item.display_dir();
        let verify = |observed: &[_]| remove::verify_unchanged(item.parent, observed, base);
        let bucket = self.open(true)?;
        let written = write::write_archive(&self.target(&bucket), item, cancel, &verify)?;
        committed(&written.path);
        let failure = match remove::remove_observed(item.parent, &written.observed, base) {
            Ok(()) => {
                return Ok(Archived {
                    archive_path: written.path,
                    metadata: written.metadata,
                    hold: written.hold,
                })
            }
            Err(failure) => failure,
        };
        if failure.removed.is_empty() {
            // The archive duplicates the untouched original.
            self.delete_archive(&written.path);
            return Err(failure.error);
        }
        Err(TrashError::PartlyRemoved(Box::new(PartlyRemoved {
            archive: written.path,
            hold: written.hold,
            original: item.original_path.to_path_buf(),
            base: base.to_path_buf(),
            observed: written.observed,
            removed: failure.removed,
            stopped_at: failure.stopped_at,
            error: failure.error,
        })))
    }

    /// Puts back what a removal that stopped halfway had removed (see `put_back.rs`), extracting
    /// the archive under the temp name `temp` (a [`crate::trash::restore_temp_name`], which the
    /// caller may journal first) in `parent`, the directory the entry was trashed from. Returns
    /// the error to report, a [`TrashError::Stopped`]: if everything went back, the entry is as
    /// it was and its archive is deleted; otherwise the archive stays and the text says how to
    /// get the entry back whole.
    pub fn put_back_removed(
        &self,
        partly: PartlyRemoved,
        parent: BorrowedDir<'_>,
        temp: &OsStr,
    ) -> TrashError {
        let original = partly.original().shown().into_owned();
        let cause = stop_reason(&partly);
        let code = partly.error().error_code();
        match put_back::put_back_removed(&partly, parent, temp) {
            Ok(()) => {
                self.delete_archive(partly.archive_path());
                TrashError::Stopped {
                    code,
                    why: format!(
                        "{original} was not removed: {cause}. What had been removed before that \
                         was put back, so {original} is as it was and nothing of it is in the trash"
                    ),
                }
            }
            Err(e) => TrashError::Stopped {
                code,
                why: format!(
                    "{original} was only partly removed: {cause}, and putting back what had been \
                     removed failed ({e}). All of it, as it was, is in the trash at {archive}: move \
                     what is left of {original} aside, then restore that archive to its place",
                    archive = partly.archive_path().shown()
                ),
            },
        }
    }
}

/// Why a removal stopped, as a clause: "cannot remove X: reason" or the conflict's text.
fn stop_reason(partly: &PartlyRemoved) -> String {
    let at = partly.stopped_at();
    match partly.error() {
        TrashError::Io(e) => crate::error::ToolError::io(e, "remove", &at).message,
        TrashError::Conflict(why) => why.clone(),
        other => format!("cannot remove {}: {other}", at.shown()),
    }
}

/// Whether `found` is the entry `expected` describes: a directory by its identity (archiving
/// does not change it, but its times follow its entries), anything else exactly (its ctime
/// aside, which an unlink of another of its names changes).
fn is_expected(found: &Snapshot, expected: &Snapshot) -> bool {
    if found.kind() == EntryKind::Directory {
        found.kind() == expected.kind() && found.id() == expected.id()
    } else {
        found.same_except_ctime(expected)
    }
}
