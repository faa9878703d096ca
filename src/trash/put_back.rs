//! Putting back what a removal took before it stopped, so that a tree is never left half removed.
//!
//! A recursive removal goes children first and stops at the first entry it cannot remove (an
//! unwritable folder, an immutable file, a read-only mount, an entry that changed meanwhile).
//! What it removed before that is in the committed archive, but the tree is neither there nor
//! gone, and restoring the archive over what is left fails: the target exists. So the trash puts
//! back what it removed: it extracts the archive beside the tree under a temp name exactly as a
//! restore would (every check of `restore.rs`, the digest verified), then renames each removed
//! subtree's top back to its place without replacing anything, through directory fds reached
//! from the tree's parent one component at a time without following links, each checked to be
//! the directory that was archived. A removed name of a file that still has a name in the tree
//! goes back as a link to it, as it was. The directories it put entries back into get their
//! archived mtimes again, and the archive (which holds nothing the tree does not) is deleted.
//!
//! Should something not go back (its place was taken meanwhile, the disk is full), the archive
//! stays and the error says how to get the tree back whole.

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::error::{changed, PartlyRemoved, TrashError};
use super::observed::Observed;
use super::restore::{self, Extracted};
use crate::paths::fsops;
use crate::paths::{AsDir, BorrowedDir, Dir, FileId};

/// Put back every removed entry of `partly` into the tree inside `parent` (a handle is enough),
/// extracting the archive under `temp` beside it first. The archive is left as it is.
pub(crate) fn put_back_removed(
    partly: &PartlyRemoved,
    parent: BorrowedDir<'_>,
    temp: &OsStr,
) -> Result<(), TrashError> {
    // The extraction syncs and times directories through it, which a path handle cannot do.
    let parent = fsops::reopen_readable(parent)?;
    let places = Originals::new(parent.as_dir(), &partly.base, &partly.observed);
    restore::extract_then(
        &partly.hold,
        parent.as_dir(),
        temp,
        &|| false,
        |extracted| places.put_back(extracted, &partly.removed),
    )?
}

/// The archived entries, found again in the original tree.
struct Originals<'a> {
    parent: BorrowedDir<'a>,
    /// The parent's path, for messages.
    base: &'a Path,
    observed: &'a [Observed],
    by_rel: HashMap<&'a Path, &'a Observed>,
}

impl<'a> Originals<'a> {
    fn new(parent: BorrowedDir<'a>, base: &'a Path, observed: &'a [Observed]) -> Self {
        let by_rel = observed.iter().map(|o| (o.rel.as_path(), o)).collect();
        Originals {
            parent,
            base,
            observed,
            by_rel,
        }
    }

    /// Move every top of a removed subtree from the extraction back to its place, each
    /// removed name of a file that kept a name in the tree relinked to it first; then give the
    /// directories that got entries back their archived mtimes. Goes on after a failure (as much
    /// as possible goes back) and returns the first.
    fn put_back(
        &self,
        extracted: &Extracted<'_>,
        removed: &HashSet<PathBuf>,
    ) -> Result<(), TrashError> {
        let is_removed = |o: &&Observed| removed.contains(&o.rel);
        let stayed: HashMap<FileId, &Observed> = self
            .observed
            .iter()
            .filter(|o| !o.is_dir() && !removed.contains(&o.rel))
            .map(|o| (o.snapshot.id(), o))
            .collect();
        let mut first_error = None;
        for entry in self
            .observed
            .iter()
            .filter(is_removed)
            .filter(|o| !o.is_dir())
        {
            if let Some(kept) = stayed.get(&entry.snapshot.id()) {
                if let Err(e) = self.relink(extracted, entry, kept) {
                    first_error.get_or_insert(e);
                }
            }
        }
        let mut refilled: Vec<&Path> = Vec::new();
        for top in self.observed.iter().filter(is_removed) {
            let holder = top.rel.parent().unwrap_or(Path::new(""));
            if removed.contains(holder) {
                continue;
            }
            match self.move_back(extracted, top, holder) {
                Ok(()) if !refilled.contains(&holder) => refilled.push(holder),
                Ok(()) => {}
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        for dir in refilled {
            if let Err(e) = self.reset_dir(dir) {
                first_error.get_or_insert(e);
            }
        }
        match first_error {
            None => Ok(()),
            Some(e) => Err(e),
        }
    }

    /// Rename the extracted `top` (inside the directory `holder`) back into the original
    /// `holder`, without replacing anything.
    fn move_back(
        &self,
        extracted: &Extracted<'_>,
        top: &Observed,
        holder: &Path,
    ) -> Result<(), TrashError> {
        let from = extracted.open_dir(&self.extracted_sub(holder))?;
        let to = self.open_original(holder)?;
        fsops::rename_noreplace(from.as_dir(), top.name(), to.as_dir(), top.name())?;
        Ok(())
    }

    /// Replace the extracted copy of `entry` by a link to `kept`, the name of the same file that
    /// is still in the tree, checked to be that file.
    fn relink(
        &self,
        extracted: &Extracted<'_>,
        entry: &Observed,
        kept: &Observed,
    ) -> Result<(), TrashError> {
        let holder = entry.rel.parent().unwrap_or(Path::new(""));
        let copy_dir = extracted.open_dir(&self.extracted_sub(holder))?;
        let kept_dir = self.open_original(kept.rel.parent().unwrap_or(Path::new("")))?;
        fsops::unlink_at(copy_dir.as_dir(), entry.name())?;
        fsops::hard_link_at(
            kept_dir.as_dir(),
            kept.name(),
            copy_dir.as_dir(),
            entry.name(),
        )?;
        let linked = fsops::lstat_at(copy_dir.as_dir(), entry.name())?;
        if linked.map(|stat| stat.id()) != Some(kept.snapshot.id()) {
            return Err(self.replaced(&kept.rel));
        }
        // The swap touched the extracted directory's mtime; it goes back with its own.
        fsops::set_mtime_fd(&copy_dir, self.by_rel[holder].snapshot.mtime)?;
        Ok(())
    }

    /// Give the original directory `rel` its archived mtime back and make its entries durable.
    fn reset_dir(&self, rel: &Path) -> Result<(), TrashError> {
        let dir = self.open_original(rel)?;
        fsops::set_mtime_fd(&dir, self.by_rel[rel].snapshot.mtime)?;
        fsops::sync_fd(&dir)?;
        Ok(())
    }

    /// The original directory `rel` (a path from `parent`), reached one component at a time
    /// without following links, every step the directory that was archived there.
    fn open_original(&self, rel: &Path) -> Result<Dir, TrashError> {
        let mut walked = PathBuf::new();
        let mut fd: Option<Dir> = None;
        for part in rel.components() {
            walked.push(part);
            let holder = fd.as_ref().map_or(self.parent, |fd| fd.as_dir());
            let next = fsops::open_subdir(holder, part.as_os_str())?;
            let archived = self.by_rel.get(walked.as_path());
            let now = fsops::snapshot_fd(&next)?;
            if !archived.is_some_and(|o| o.snapshot.same_inode(&now)) {
                return Err(self.replaced(&walked));
            }
            fd = Some(next);
        }
        fd.ok_or_else(|| TrashError::Conflict("the removed entry has no directory".into()))
    }

    /// The conflict for an original entry that is no longer the one archived.
    fn replaced(&self, rel: &Path) -> TrashError {
        changed(
            &self.base.join(rel),
            "was replaced while it was being removed",
        )
    }

    /// The `/`-joined path inside the extraction of the original `rel` (its first component is
    /// the trashed entry itself, the extraction's root).
    fn extracted_sub(&self, rel: &Path) -> Vec<u8> {
        let parts: Vec<&[u8]> = rel
            .components()
            .skip(1)
            .map(|part| part.as_os_str().as_encoded_bytes())
            .collect();
        parts.join(&b'/')
    }
}
