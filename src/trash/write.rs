//! Writing one archive into the bucket, so that it either appears complete or not at all.
//!
//! 1. In `.archive-<unique>.partial`, keep room for the metadata member at the start
//!    (`first_member.rs`) and stream the content after it (one pass over the original, hashing
//!    what is archived) as gzip members compressed on every core ([`ParallelGzWriter`]).
//! 2. Build the metadata from what was archived and write its member into the room.
//! 3. `fsync` it, run the caller's last check (the trash re-verifies the original here), lock it
//!    (see `hold.rs`: from here on `clear` skips it until the caller lets go), then rename it to
//!    its final name without replacing anything, `fsync` the bucket (or leave that to the
//!    caller, who syncs it once for the many archives of one change).
//!
//! The content is written once: no temp file of its own, no copy. Temp files are removed on
//! every error path (by [`TempFile`]'s drop), and they are never listed or cleared: their names
//! start with `.` and end with `.partial`.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom};
use std::path::PathBuf;
use std::time::SystemTime;

use flate2::Compression;
use tar::Builder;

use super::error::TrashError;
use super::first_member;
use super::hold::ArchiveHold;
use super::item::{Identity, TrashItem};
use super::metadata::Metadata;
use super::naming;
use super::observed::Observed;
use super::parallel_gz::ParallelGzWriter;
use super::place::BucketDir;
use super::stream::CHUNK;
use super::tree::{self, Summary};
use crate::paths::shown::Shown;
use crate::paths::BorrowedDir;
use crate::paths::{fsops, io as file_io, EntryKind};

/// How many fresh names to try should a final name already exist (it never should).
const NAME_ATTEMPTS: usize = 16;

/// Where and how to write.
pub(crate) struct ArchiveDestination<'a> {
    /// The bucket, open (and created if it was missing).
    pub bucket: &'a BucketDir,
    pub identity: &'a Identity,
    pub level: u32,
    /// Whether the bucket is fsynced once the archive has its name (else the caller syncs it,
    /// once for many archives, before anything depends on them: [`super::Bucket::sync`]).
    pub sync_bucket: bool,
}

/// A finished archive, still locked, and what was archived.
pub(crate) struct Written {
    pub path: PathBuf,
    pub metadata: Metadata,
    pub observed: Vec<Observed>,
    pub hold: ArchiveHold,
}

/// Archive `item` into the bucket. `before_commit` runs after everything is on disk and before
/// the archive becomes visible; an error from it discards the archive.
pub(crate) fn write_archive(
    target: &ArchiveDestination<'_>,
    item: &TrashItem<'_>,
    cancel: &dyn Fn() -> bool,
    before_commit: &dyn Fn(&[Observed]) -> Result<(), TrashError>,
) -> Result<Written, TrashError> {
    item.validate()?;
    let room = first_member::room(&widest_metadata(target.identity, item))?;
    let (archive_temp, archive) = TempFile::create(target.bucket.fd(), "archive")?;
    let (summary, archive) = write_content(archive, room, item, target.level, cancel)?;
    let metadata = build_metadata(target.identity, item, &summary);
    let head = first_member::metadata_member(&metadata, compression(target.level), room)?;
    file_io::write_all_at(&archive, &head, 0)?;
    archive.sync_all()?;
    if cancel() {
        return Err(TrashError::Aborted);
    }
    before_commit(&summary.observed)?;
    let (path, hold) = commit(target, &metadata, item, archive_temp, archive)?;
    Ok(Written {
        path,
        metadata,
        observed: summary.observed,
        hold,
    })
}

/// Stream the original into a gzip'd tar (content entries + end-of-archive marker) in `file`,
/// after the first `room` bytes.
fn write_content(
    mut file: File,
    room: usize,
    item: &TrashItem<'_>,
    level: u32,
    cancel: &dyn Fn() -> bool,
) -> Result<(Summary, File), TrashError> {
    file.seek(SeekFrom::Start(room as u64))?;
    let buffered = BufWriter::with_capacity(CHUNK, file);
    let mut builder = Builder::new(ParallelGzWriter::new(buffered, compression(level)));
    let summary = tree::archive_source(&mut builder, item, cancel)?;
    let buffered = builder.into_inner()?.finish()?;
    let file = buffered.into_inner().map_err(|e| e.into_error())?;
    Ok((summary, file))
}

/// The metadata of `item` with every field archiving fills in at its widest (the room kept for
/// the real one is measured on it): the longest kind, digest and time, the largest numbers.
fn widest_metadata(identity: &Identity, item: &TrashItem<'_>) -> Metadata {
    Metadata {
        session_id: identity.session_id.clone(),
        run_id: identity.run_id.clone(),
        agent_name: identity.agent_name.clone(),
        // As long as any time `format_rfc3339_millis` gives (years 0000-9999).
        trashed_at: "0000-00-00T00:00:00.000Z".to_owned(),
        original_path: item.original_path.shown().into_owned(),
        relative_path: item.relative_path.to_owned(),
        kind: EntryKind::Directory,
        original_sha256: naming::hex(&[0xff; 32]),
        size: u64::MAX,
        mode: u32::MAX,
        file_count: Some(u64::MAX),
    }
}

/// The metadata for what `summary` says was archived, stamped now.
fn build_metadata(identity: &Identity, item: &TrashItem<'_>, summary: &Summary) -> Metadata {
    Metadata {
        session_id: identity.session_id.clone(),
        run_id: identity.run_id.clone(),
        agent_name: identity.agent_name.clone(),
        trashed_at: humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
        original_path: item.original_path.shown().into_owned(),
        relative_path: item.relative_path.to_owned(),
        kind: summary.kind,
        original_sha256: naming::hex(&summary.sha256),
        size: summary.size,
        mode: summary.mode,
        file_count: summary.file_count,
    }
}

/// Lock the finished temp file, rename it to a fresh final name without replacing anything and
/// make the rename durable. Returns the final path and the lock.
fn commit(
    target: &ArchiveDestination<'_>,
    metadata: &Metadata,
    item: &TrashItem<'_>,
    temp: TempFile<'_>,
    archive: File,
) -> Result<(PathBuf, ArchiveHold), TrashError> {
    let hold = ArchiveHold::lock_new(archive)?;
    let bucket = target.bucket;
    for _ in 0..NAME_ATTEMPTS {
        let name = naming::archive_file_name(
            &metadata.trashed_at,
            &target.identity.session_id,
            &target.identity.run_id,
            &naming::unique_token(),
            item.name,
        );
        match fsops::rename_noreplace(bucket.fd(), temp.name.as_ref(), bucket.fd(), name.as_ref()) {
            Ok(()) => {
                temp.disarm();
                mark_committed(hold.file(), bucket, target.sync_bucket)?;
                return Ok((bucket.path().join(name), hold));
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(TrashError::Io(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "could not find a free archive name in the trash",
    )))
}

/// After the rename: bump the archive's ctime (so a `clear` that began earlier can tell it is
/// new, whatever the filesystem does on rename) and, with `sync`, `fsync` the bucket directory.
fn mark_committed(archive: &File, bucket: &BucketDir, sync: bool) -> io::Result<()> {
    fsops::set_mode_fd(archive, 0o600)?;
    if sync {
        bucket.sync()?;
    }
    Ok(())
}

/// `level` as a flate2 compression level (0–9).
fn compression(level: u32) -> Compression {
    Compression::new(level.min(9))
}

/// A temp file in the bucket, removed when dropped unless disarmed.
pub(crate) struct TempFile<'d> {
    dir: BorrowedDir<'d>,
    name: String,
    armed: bool,
}

impl<'d> TempFile<'d> {
    /// Create `.<what>-<unique>.partial` exclusively in `dir`, readable by the user only.
    pub(crate) fn create(dir: BorrowedDir<'d>, what: &str) -> io::Result<(TempFile<'d>, File)> {
        loop {
            let name = naming::temp_name(what);
            match fsops::create_read_write_at(dir, OsStr::new(&name)) {
                Ok(file) => {
                    let temp = TempFile {
                        dir,
                        name,
                        armed: true,
                    };
                    return Ok((temp, file));
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Keep the file (it was renamed into place).
    fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for TempFile<'_> {
    fn drop(&mut self) {
        if self.armed {
            let _ = fsops::unlink_at(self.dir, OsStr::new(&self.name));
        }
    }
}
