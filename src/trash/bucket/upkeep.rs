//! Keeping the bucket: listing its archives, clearing them, sweeping leftovers of interrupted
//! trashes, and discarding archives a change did not need.

use std::ffi::OsStr;
use std::io;
use std::path::{Component, Path};
use std::time::{Duration, SystemTime};

use super::{Archived, Bucket, ClearStats, TrashEntry};
use crate::paths::fsops;
use crate::trash::error::TrashError;
use crate::trash::hold::ArchiveHold;
use crate::trash::naming;
use crate::trash::place::{ArchiveFile, BucketDir};
use crate::trash::read;
use crate::trash::write::TempFile;

impl Bucket {
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
