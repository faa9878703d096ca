//! Taking out of the bucket: reading an archive's metadata and content, and restoring or
//! staging what it holds.

use std::ffi::OsStr;
use std::path::Path;

use super::{Archived, Bucket};
use crate::paths::BorrowedDir;
use crate::trash::error::TrashError;
use crate::trash::metadata::Metadata;
use crate::trash::{members, read, restore, Members};

impl Bucket {
    /// Read the metadata of an archive that must be directly inside this bucket.
    pub fn inspect(&self, archive: &Path) -> Result<Metadata, TrashError> {
        read::read_metadata(self.locate(archive)?.open()?)
    }

    /// The content of the file `archive` (directly inside this bucket) keeps, verified; `None`
    /// when it is larger than `max_bytes`.
    pub fn read_file(
        &self,
        archive: &Path,
        max_bytes: u64,
    ) -> Result<Option<(Metadata, Vec<u8>)>, TrashError> {
        read::read_file_content(self.locate(archive)?.open()?, max_bytes)
    }

    /// Every entry of the directory archive `archive` (directly inside this bucket), read as a
    /// stream and verified against its metadata.
    pub fn members(&self, archive: &Path) -> Result<(Metadata, Members), TrashError> {
        members::index(self.locate(archive)?.open()?)
    }

    /// The bytes of the file at `sub` inside the directory archive `archive`, verified against
    /// `expected` (its SHA-256, from [`Bucket::members`]); `None` when larger than `max_bytes`.
    pub fn read_member(
        &self,
        archive: &Path,
        sub: &[u8],
        expected: &[u8; 32],
        max_bytes: u64,
    ) -> Result<Option<Vec<u8>>, TrashError> {
        members::read_member(self.locate(archive)?.open()?, sub, expected, max_bytes)
    }

    /// Recreate the archived entry as `target_name` inside `target_parent` (opened and checked
    /// by the caller, who trashes an existing target first when asked to overwrite).
    ///
    /// Extracts beside the target under the temp name `temp` (a [`crate::trash::restore_temp_name`],
    /// which the caller may journal first), verifies the content against the metadata
    /// (mismatch → [`TrashError::Corrupt`], nothing left, archive kept), renames into place
    /// without replacing (an existing target → [`TrashError::AlreadyExists`]), then deletes the
    /// archive (should that deletion fail, the restore still succeeds and the archive stays
    /// listed). The archive is locked meanwhile: a concurrent restore of the same archive is a
    /// [`TrashError::Conflict`]. Returns the archive's metadata.
    pub fn restore(
        &self,
        archive: &Path,
        target_parent: BorrowedDir<'_>,
        target_name: &OsStr,
        temp: &OsStr,
        cancel: &dyn Fn() -> bool,
    ) -> Result<Metadata, TrashError> {
        let archive = self.locate(archive)?;
        restore::restore_archive(&archive, None, target_parent, target_name, temp, cancel)
    }

    /// Extracts `archive` (directly inside this bucket) under the temp name `temp` in `parent`,
    /// verified and durable, without putting it in place or deleting the archive; the returned
    /// [`Archived`] holds it until dropped, or [`Bucket::discard`]ed once what it held is in place.
    pub fn stage(
        &self,
        archive: &Path,
        parent: BorrowedDir<'_>,
        temp: &OsStr,
        cancel: &dyn Fn() -> bool,
    ) -> Result<Archived, TrashError> {
        let archive = self.locate(archive)?;
        let (metadata, hold) = restore::stage_archive(&archive, parent, temp, cancel)?;
        Ok(Archived {
            archive_path: archive.path().to_owned(),
            metadata,
            hold,
        })
    }

    /// [`Bucket::restore`] of an archive the caller made and still holds (`archived`): through
    /// that hold, since a fresh claim would find the archive in use. Puts back what an overwrite
    /// or a move moved to the trash when the rest of the call failed.
    pub fn restore_archived(
        &self,
        archived: &Archived,
        target_parent: BorrowedDir<'_>,
        target_name: &OsStr,
        temp: &OsStr,
        cancel: &dyn Fn() -> bool,
    ) -> Result<Metadata, TrashError> {
        let archive = self.locate(&archived.archive_path)?;
        restore::restore_archive(
            &archive,
            Some(&archived.hold),
            target_parent,
            target_name,
            temp,
            cancel,
        )
    }
}
