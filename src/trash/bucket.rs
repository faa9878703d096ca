//! A workspace's bucket: the one directory holding its archives, and what can be done with it.

use std::ffi::OsStr;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use super::error::{changed, PartlyRemoved, TrashError};
use super::hold::ArchiveHold;
use super::item::{Identity, TrashItem};
use super::metadata::Metadata;
use super::naming;
use super::observed::Observed;
use super::place::{ArchiveFile, BucketDir};
use super::put_back;
use super::read;
use super::remove;
use super::restore;
use super::write::{self, Target, TempFile};
use crate::datadir::DataDir;
use crate::paths::fsops::{self, Snapshot};
use crate::paths::shown::Shown;
use crate::paths::BorrowedDir;
use crate::paths::EntryKind;

/// A finished archive, as returned by [`Bucket::archive`] and [`Bucket::trash`]. It keeps the
/// archive locked while it lives: [`Bucket::clear`] skips it, and only
/// [`Bucket::restore_archived`] restores it meanwhile. Keep it until the call has reported where
/// the archive is (and, before an overwrite, until the overwrite is done).
#[derive(Debug)]
pub struct Archived {
    /// Absolute path of the archive.
    pub archive_path: PathBuf,
    /// What it holds.
    pub metadata: Metadata,
    /// The lock on the archive, let go when this is dropped.
    hold: ArchiveHold,
}

/// One archive in a listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrashEntry {
    /// Absolute path of the archive.
    pub archive_path: PathBuf,
    /// What it holds.
    pub metadata: Metadata,
    /// Size of the archive file itself (compressed).
    pub archive_bytes: u64,
}

/// What [`Bucket::clear`] removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClearStats {
    /// Archives removed.
    pub cleared: u64,
    /// Their total size on disk.
    pub bytes_freed: u64,
}

/// The trash of one workspace: `<data_dir>/trash/<sha256 of the canonical root>/`, reached
/// through the data directory's descriptor (see `place.rs`).
#[derive(Debug, Clone)]
pub struct Bucket {
    data: Arc<DataDir>,
    /// `trash/<hash>`, in the data directory.
    rel: PathBuf,
    /// Its path, for messages and the archive paths calls report.
    dir: PathBuf,
    identity: Identity,
    compression_level: u32,
}

impl Bucket {
    /// The bucket of `canonical_root` in `data`. No I/O: the directory is created (mode 0700)
    /// by the first archive. `compression_level` is gzip's 0–9 (larger values mean 9).
    pub fn new(
        data: Arc<DataDir>,
        canonical_root: &Path,
        identity: Identity,
        compression_level: u32,
    ) -> Self {
        let rel = naming::bucket_rel(canonical_root);
        Bucket {
            dir: data.path().join(&rel),
            data,
            rel,
            identity,
            compression_level,
        }
    }

    /// The bucket directory, open (created first with `create`); `NotFound` when it does not
    /// exist and `create` is false. Checked private to this user, as every directory of the data
    /// directory (an `Untrusted` error otherwise, see `datadir`).
    fn open(&self, create: bool) -> io::Result<BucketDir> {
        let fd = self.data.open(&self.rel, create)?;
        Ok(BucketDir::new(fd, self.dir.clone()))
    }

    /// [`Bucket::open`] without creating it: `None` when it does not exist yet.
    fn open_existing(&self) -> io::Result<Option<BucketDir>> {
        match self.open(false) {
            Ok(bucket) => Ok(Some(bucket)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The bucket opened once to tell which archives are in it (an undo asks for every archive
    /// the history names). Fails (an `Untrusted` error, see `datadir`) if the bucket, or a
    /// directory above it in the data directory, exists and is not private to this user.
    pub fn lookup(&self) -> io::Result<ArchiveLookup<'_>> {
        Ok(ArchiveLookup {
            bucket: self,
            dir: self.open_existing()?,
        })
    }

    /// The bucket directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

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
        let bucket = self.open(true)?;
        let check = |observed: &[Observed]| match observed.first() {
            Some(root) if is_expected(&root.snapshot, expected) => Ok(()),
            _ => Err(changed(
                item.original_path,
                "was replaced while it was being archived",
            )),
        };
        let written = write::write_archive(&self.target(&bucket), item, cancel, &check)?;
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

    /// Delete an archive nobody needs (it duplicates what is in place) and make that durable.
    fn delete_archive(&self, archive: &Path) {
        if let Ok(archive) = self.locate(archive) {
            let _ = archive.remove();
        }
    }

    /// The archives in this bucket, newest first. Files that are not readable archives of this
    /// format (foreign, corrupt, temp files of trashes in flight) are skipped silently.
    pub fn list(&self) -> io::Result<Vec<TrashEntry>> {
        let mut found = Vec::new();
        let Some(bucket) = self.open_existing()? else {
            return Ok(found);
        };
        for (archive, stat) in archive_files(&bucket)? {
            let Ok(file) = archive.open() else {
                continue;
            };
            if let Ok(metadata) = read::read_metadata(file) {
                found.push(TrashEntry {
                    archive_path: archive.path().to_owned(),
                    metadata,
                    archive_bytes: stat.size,
                });
            }
        }
        found.sort_by(|a, b| {
            (&b.metadata.trashed_at, &b.archive_path)
                .cmp(&(&a.metadata.trashed_at, &a.archive_path))
        });
        Ok(found)
    }

    /// Remove finished archives — never temp files of trashes in flight, never foreign files,
    /// never an archive in use — that were completed before this call began and, if `older_than`
    /// is given, were trashed at least that long before it.
    ///
    /// "In use" is an archive another call holds locked (see `hold.rs`): one whose trash is still
    /// in flight (renamed into place, but the original not yet removed or the call not yet
    /// reported), one an overwrite is about to replace the original of, or one being restored.
    /// Each archive is locked without waiting before it is removed, and skipped if that fails,
    /// whatever its age: with `older_than`, an archive old enough but in use is skipped too,
    /// counted nowhere, and a later clear removes it if it is still there. (`older_than` is
    /// measured from `trashedAt` in its metadata, stamped before the archive is renamed into
    /// place; a trash that takes long can be "old" while still in flight.)
    ///
    /// "Completed before the call began" is decided on the filesystem's own clock: the call
    /// first creates a probe file and reads its ctime; an archive qualifies only if its ctime
    /// (set when it was renamed into place, and again when the call that made it let go of it)
    /// is strictly earlier. Archives committed or let go during the call, or in the same clock
    /// tick as its start, are kept.
    pub fn clear(&self, older_than: Option<Duration>) -> io::Result<ClearStats> {
        self.clear_with_hook(older_than, &|| {})
    }

    /// [`Bucket::clear`], calling `after_start` once the start time is taken (tests use it to
    /// trash concurrently).
    pub(crate) fn clear_with_hook(
        &self,
        older_than: Option<Duration>,
        after_start: &dyn Fn(),
    ) -> io::Result<ClearStats> {
        let started = SystemTime::now();
        let Some(bucket) = self.open_existing()? else {
            return Ok(ClearStats::default());
        };
        let (probe, probe_file) = TempFile::create(bucket.fd(), "clear")?;
        let fs_start = fsops::snapshot_fd(&probe_file)?.ctime;
        after_start();
        let mut stats = ClearStats::default();
        for (archive, stat) in archive_files(&bucket)? {
            if stat.ctime >= fs_start {
                continue;
            }
            let hold = match ArchiveHold::try_claim(&archive) {
                Ok(Some(hold)) => hold,
                Ok(None) => continue,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                // Not ours to remove (another user's file, see `place.rs`): left alone.
                Err(e) if e.kind() == io::ErrorKind::PermissionDenied => continue,
                Err(e) if e.kind() == io::ErrorKind::InvalidData => continue,
                Err(e) => return Err(e),
            };
            // Let go since the listing: by a call that was done with it only after we began.
            if hold.ctime()? >= fs_start || !is_old_enough(&hold, started, older_than) {
                continue;
            }
            match fsops::unlink_at(bucket.fd(), archive_name(&archive)) {
                Ok(()) => {
                    stats.cleared += 1;
                    stats.bytes_freed += stat.size;
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        drop(probe);
        bucket.sync()?;
        Ok(stats)
    }

    /// Remove temp files (names `.*.partial`) not modified for at least `min_age`: leftovers of
    /// trashes interrupted by a crash. Pass a generous age (an hour): a temp file of a trash in
    /// flight is rewritten continuously, but a slow fsync can pause it. Returns how many were
    /// removed.
    pub fn sweep_partials(&self, min_age: Duration) -> io::Result<u64> {
        let now = SystemTime::now();
        let mut removed = 0;
        let Some(bucket) = self.open_existing()? else {
            return Ok(0);
        };
        for name in bucket.names()? {
            if !naming::is_temp_name(&name) {
                continue;
            }
            let stat = match fsops::snapshot_at(bucket.fd(), &name) {
                Ok(stat) if stat.kind() == crate::paths::EntryKind::File => stat,
                _ => continue,
            };
            let (secs, nanos) = stat.mtime;
            let modified = SystemTime::UNIX_EPOCH + Duration::new(secs.max(0) as u64, nanos);
            let idle = now.duration_since(modified).ok();
            if idle.is_some_and(|idle| idle >= min_age)
                && fsops::unlink_at(bucket.fd(), &name).is_ok()
            {
                removed += 1;
            }
        }
        Ok(removed)
    }

    /// Removes `archived`, a copy made for a change that then did not happen: it was never
    /// reported to anyone, and what it holds is still where it was.
    pub fn discard(&self, archived: Archived) {
        self.delete_archive(&archived.archive_path);
    }

    /// Removes the archive `name` (one plain component, an archive's name) from this bucket:
    /// one made for a change that was then undone (by crash recovery). Anything else is left.
    pub fn discard_named(&self, name: &OsStr) {
        let plain = Path::new(name).components().count() == 1
            && matches!(
                Path::new(name).components().next(),
                Some(Component::Normal(_))
            );
        if plain && naming::is_archive_name(name) {
            self.delete_archive(&self.dir.join(name));
        }
    }

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
    pub fn members(&self, archive: &Path) -> Result<(Metadata, super::Members), TrashError> {
        super::members::index(self.locate(archive)?.open()?)
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
        super::members::read_member(self.locate(archive)?.open()?, sub, expected, max_bytes)
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

    /// `archive`, if it names an archive directly inside this bucket: reached through the
    /// bucket's descriptor by its name, which must be a regular file there. Decided on the path
    /// as given (`.` and `..` taken lexically), never by looking outside the bucket: an answer
    /// must not tell the model whether something exists elsewhere.
    fn locate(&self, archive: &Path) -> Result<ArchiveFile, TrashError> {
        let name = self.archive_name(archive)?;
        let archive = self.open(false)?.archive(name)?;
        match archive.lstat() {
            Ok(stat) if stat.kind() == crate::paths::EntryKind::File => Ok(archive),
            Ok(_) => Err(TrashError::NotInBucket),
            Err(e) => Err(e.into()),
        }
    }

    /// The name of `archive` in this bucket, if it names one directly inside it (decided on the
    /// path alone, see [`Bucket::locate`]).
    fn archive_name<'p>(&self, archive: &'p Path) -> Result<&'p OsStr, TrashError> {
        let mut normal = PathBuf::new();
        for part in archive.components() {
            match part {
                Component::ParentDir => {
                    normal.pop();
                }
                Component::CurDir => {}
                other => normal.push(other),
            }
        }
        let (Some(parent), Some(name)) = (normal.parent(), normal.file_name()) else {
            return Err(TrashError::NotInBucket);
        };
        if parent != self.dir || !naming::is_archive_name(name) {
            return Err(TrashError::NotInBucket);
        }
        // The last normal component of `archive` itself.
        archive
            .file_name()
            .filter(|n| *n == name)
            .ok_or(TrashError::NotInBucket)
    }

    /// Where and how [`write::write_archive`] writes, in the open `bucket`.
    fn target<'a>(&'a self, bucket: &'a BucketDir) -> Target<'a> {
        Target {
            bucket,
            identity: &self.identity,
            level: self.compression_level,
        }
    }
}

/// The bucket, open, to tell which archives are in it: see [`Bucket::lookup`].
pub struct ArchiveLookup<'b> {
    bucket: &'b Bucket,
    /// `None` when the bucket does not exist (yet, or any more).
    dir: Option<BucketDir>,
}

impl ArchiveLookup<'_> {
    /// Whether `archive` names a regular file directly inside the bucket: what an undo needs is
    /// still in the trash.
    pub fn contains(&self, archive: &Path) -> bool {
        let (Some(dir), Ok(name)) = (&self.dir, self.bucket.archive_name(archive)) else {
            return false;
        };
        fsops::lstat_at(dir.fd(), name).is_ok_and(|stat| {
            stat.is_some_and(|s| crate::paths::EntryKind::of(&s) == crate::paths::EntryKind::File)
        })
    }
}

/// Regular files in `bucket` named like finished archives, with their `lstat`.
fn archive_files(bucket: &BucketDir) -> io::Result<Vec<(ArchiveFile, fsops::Snapshot)>> {
    let mut files = Vec::new();
    for name in bucket.names()? {
        if !naming::is_archive_name(&name) {
            continue;
        }
        let archive = bucket.archive(&name)?;
        if let Ok(stat) = archive.lstat() {
            if stat.kind() == crate::paths::EntryKind::File {
                files.push((archive, stat));
            }
        }
    }
    Ok(files)
}

/// The name of `archive` in its bucket.
fn archive_name(archive: &ArchiveFile) -> &OsStr {
    archive.path().file_name().unwrap_or_default()
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

/// Is the held archive a readable archive of ours, trashed at least `older_than` before
/// `started`?
fn is_old_enough(hold: &ArchiveHold, started: SystemTime, older_than: Option<Duration>) -> bool {
    let Ok(metadata) = hold
        .reader()
        .map_err(TrashError::from)
        .and_then(read::read_metadata)
    else {
        return false;
    };
    match older_than {
        None => true,
        Some(age) => metadata
            .trashed_at_time()
            .and_then(|t| started.duration_since(t).ok())
            .is_some_and(|elapsed| elapsed >= age),
    }
}

/// Whether `found` is the entry `expected` describes: a directory by its identity (archiving
/// does not change it, but its times follow its entries), anything else exactly (its ctime
/// aside, which an unlink of another of its names changes).
fn is_expected(found: &Snapshot, expected: &Snapshot) -> bool {
    if found.kind() == EntryKind::Directory {
        found.kind() == expected.kind() && (found.dev, found.ino) == (expected.dev, expected.ino)
    } else {
        found.same_except_ctime(expected)
    }
}
