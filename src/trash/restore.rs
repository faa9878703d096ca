//! Restoring an archive: extract beside the target, verify, rename into place, drop the archive.
//!
//! The archive is untrusted input. Extraction never uses a path string: the root is created
//! under a fresh temp name inside the caller's `target_parent` fd, and every other entry is
//! created with `*at` calls relative to a directory fd reached from that root one component at
//! a time with `O_NOFOLLOW`. An entry is accepted only if (checks in `entry.rs`)
//!
//! - its type is a regular file, a directory, a symlink or a hard link (devices, FIFOs → corrupt);
//! - its path is relative, made of plain components (no `..`, `.`, empty parts), and lies at or
//!   under the archived `relativePath`;
//! - its parent is a directory created earlier by this extraction — so an entry can never pass
//!   through a symlink (or a file) that the archive planted, and duplicates fail their exclusive
//!   creation;
//! - a hard link names a regular file this extraction created from an earlier entry (by its
//!   path inside the tree, the root never): never anything outside, later or unknown, never a
//!   directory, a symlink or another hard link. The new name is checked to be that very inode.
//!
//! Files are written with `O_CREAT|O_EXCL|O_NOFOLLOW`, hashed as they are written, and given
//! their owner (as far as we may), user extended attributes and ACLs, mode and mtime. When the stream ends, the digest, size and file count must match the
//! metadata; only then do directories get their modes and mtimes (deepest first, after they were
//! filled), everything is made durable at once (one `syncfs` on Linux, see
//! `fsops::sync_new_tree`), and the temp root is renamed to the target
//! with `RENAME_NOREPLACE`. Only after
//! that (and an fsync of the target's directory) is the archive deleted. Any failure removes the
//! temp root and keeps the archive. The archive is `flock`ed for the duration (`hold.rs`), so
//! the same archive is never restored twice at once, nor restored while the trash that writes it
//! is still in flight, nor cleared meanwhile. A caller that holds the archive already (it put
//! something in the trash moments ago and now puts it back) restores through its own hold.
//!
//! This file is the flow (claim, extract, put in place, delete the archive); one extraction,
//! entry by entry, is [`extraction`].

mod extraction;

use std::ffi::OsStr;
use std::io;

use self::extraction::{Extraction, Places};
use super::error::TrashError;
use super::hold::ArchiveHold;
use super::item::{invalid, is_single_component};
use super::metadata::Metadata;
use super::place::ArchiveFile;
use super::read;
use crate::paths::fsops;
use crate::paths::shown::Shown;
use crate::paths::EntryKind;
use crate::paths::{BorrowedDir, Dir};

/// Restore `archive` as `target_name` inside `parent`, extracted under the temp name `temp`
/// first; returns its metadata. The archive is claimed for the duration, unless the caller passes
/// the hold it already has on it (`held`).
pub(crate) fn restore_archive(
    archive: &ArchiveFile,
    held: Option<&ArchiveHold>,
    parent: BorrowedDir<'_>,
    target_name: &OsStr,
    temp: &OsStr,
    cancel: &dyn Fn() -> bool,
) -> Result<Metadata, TrashError> {
    if !is_single_component(target_name) {
        let why = format!("{target_name:?} is not a single file name");
        return Err(invalid(why).into());
    }
    ensure_absent(parent, target_name)?;
    let claimed;
    let hold = match held {
        Some(hold) => {
            hold.check_named(archive)?;
            hold
        }
        None => {
            claimed = claim(archive)?;
            &claimed
        }
    };
    let mut reader = read::from_file(hold.reader()?);
    let mut entries = reader.entries().map_err(read::unreadable)?;
    let metadata = read::read_metadata_entry(&mut entries)?;
    let mut extraction = Extraction::new(parent, &metadata, temp, cancel);
    let outcome = extraction.run(&mut entries, target_name);
    if outcome.is_err() {
        extraction.discard();
    }
    outcome?;
    // The entry is back in place: failing to delete the archive now must not turn the restore
    // into an error (it would stay listed, and restoring it again would find the target taken).
    let _ = archive.remove();
    Ok(metadata)
}

/// Extracts `archive` under the temp name `temp` in `parent`, verified against its metadata and
/// durable, but neither puts it in place nor deletes the archive: a change of
/// many entries (an undo) puts it in place with the rest. The archive stays claimed while the
/// returned hold lives. On failure nothing is left under `temp`.
pub(crate) fn stage_archive(
    archive: &ArchiveFile,
    parent: BorrowedDir<'_>,
    temp: &OsStr,
    cancel: &dyn Fn() -> bool,
) -> Result<(Metadata, ArchiveHold), TrashError> {
    let hold = claim(archive)?;
    let mut reader = read::from_file(hold.reader()?);
    let mut entries = reader.entries().map_err(read::unreadable)?;
    let metadata = read::read_metadata_entry(&mut entries)?;
    let mut extraction = Extraction::new(parent, &metadata, temp, cancel);
    let outcome = extraction.stage(&mut entries);
    if outcome.is_err() {
        extraction.discard();
    }
    outcome?;
    drop(extraction);
    Ok((metadata, hold))
}

/// A directory archive extracted under a temp name, verified and finished as a restore leaves
/// it just before the rename into place, for [`extract_then`]'s caller to take entries from.
pub(crate) struct Extracted<'e> {
    places: &'e Places,
}

impl Extracted<'_> {
    /// The extracted directory at `sub` (a `/`-joined path below the archived root, `""` for
    /// the root), reached from the root one component at a time without following links.
    pub(crate) fn open_dir(&self, sub: &[u8]) -> io::Result<Dir> {
        self.places.open(sub)
    }
}

/// Extract the directory archive held by `hold` under `temp` in `parent` exactly as a restore
/// would (every check, the digest verified, directories finished, made durable), hand it to
/// `use_it` to move entries out of, then remove whatever is left of it. The archive stays.
pub(crate) fn extract_then<T>(
    hold: &ArchiveHold,
    parent: BorrowedDir<'_>,
    temp: &OsStr,
    cancel: &dyn Fn() -> bool,
    use_it: impl FnOnce(&Extracted<'_>) -> T,
) -> Result<T, TrashError> {
    let mut reader = read::from_file(hold.reader()?);
    let mut entries = reader.entries().map_err(read::unreadable)?;
    let metadata = read::read_metadata_entry(&mut entries)?;
    if metadata.kind != EntryKind::Directory {
        return Err(TrashError::corrupt("it does not hold a directory"));
    }
    let mut extraction = Extraction::new(parent, &metadata, temp, cancel);
    let outcome = extraction.stage(&mut entries).map(|()| {
        use_it(&Extracted {
            places: &extraction.places,
        })
    });
    extraction.discard();
    outcome
}

/// Claim the archive for the whole restore without waiting for anybody: a conflict while another
/// call holds it; not found if it is gone (a restore that just finished deleted it).
fn claim(archive: &ArchiveFile) -> Result<ArchiveHold, TrashError> {
    match ArchiveHold::try_claim(archive)? {
        Some(hold) => Ok(hold),
        None => Err(TrashError::Conflict(format!(
            "{} is in use by another call (being restored, or still being trashed)",
            archive.path().shown()
        ))),
    }
}

/// `AlreadyExists` if `name` exists in `parent` (the rename checks again, atomically).
fn ensure_absent(parent: BorrowedDir<'_>, name: &OsStr) -> Result<(), TrashError> {
    match fsops::snapshot_at(parent, name) {
        Ok(_) => Err(TrashError::AlreadyExists),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(TrashError::Io(e)),
    }
}
