//! Writing one archive into the bucket, so that it either appears complete or not at all.
//!
//! 1. Stream the content (one pass over the original, hashing what is archived) into gzip
//!    members, compressed on every core ([`ParallelGzWriter`]), in `.content-<unique>.partial`.
//! 2. Build the metadata from what was archived; write `[gzip member: metadata.json entry]` into
//!    `.archive-<unique>.partial`, then append the content member (a kernel-side copy of the
//!    compressed bytes where the filesystem supports it).
//! 3. `fsync` it, run the caller's last check (the trash re-verifies the original here), lock it
//!    (see `hold.rs`: from here on `clear` skips it until the caller lets go), then rename it to
//!    its final name without replacing anything, `fsync` the bucket.
//!
//! Temp files are removed on every error path (by [`TempFile`]'s drop), and they are never
//! listed or cleared: their names start with `.` and end with `.partial`.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, BufWriter, Seek};
use std::path::PathBuf;
use std::time::SystemTime;

use flate2::write::GzEncoder;
use flate2::Compression;
use tar::Builder;

use super::error::TrashError;
use super::hold::ArchiveHold;
use super::item::{Identity, TrashItem};
use super::metadata::Metadata;
use super::naming;
use super::observed::Observed;
use super::parallel_gz::ParallelGzWriter;
use super::place::BucketDir;
use super::stream::CHUNK;
use super::tarx;
use super::tree::{self, Summary};
use crate::paths::fsops;
use crate::paths::shown::Shown;
use crate::paths::BorrowedDir;

/// How many fresh names to try should a final name already exist (it never should).
const NAME_ATTEMPTS: usize = 16;

/// Where and how to write.
pub(crate) struct ArchiveDestination<'a> {
    /// The bucket, open (and created if it was missing).
    pub bucket: &'a BucketDir,
    pub identity: &'a Identity,
    pub level: u32,
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
    let (content_temp, content) = TempFile::create(target.bucket.fd(), "content")?;
    let (summary, mut content) = write_content(content, item, target.level, cancel)?;
    let metadata = build_metadata(target.identity, item, &summary);
    let (archive_temp, mut archive) = TempFile::create(target.bucket.fd(), "archive")?;
    write_metadata_member(&mut archive, &metadata, target.level)?;
    content.rewind()?;
    io::copy(&mut content, &mut archive)?;
    archive.sync_all()?;
    drop(content);
    drop(content_temp);
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

/// Stream the original into a gzip'd tar (content entries + end-of-archive marker).
fn write_content(
    file: File,
    item: &TrashItem<'_>,
    level: u32,
    cancel: &dyn Fn() -> bool,
) -> Result<(Summary, File), TrashError> {
    let buffered = BufWriter::with_capacity(CHUNK, file);
    let mut builder = Builder::new(ParallelGzWriter::new(buffered, compression(level)));
    let summary = tree::archive_source(&mut builder, item, cancel)?;
    let buffered = builder.into_inner()?.finish()?;
    let file = buffered.into_inner().map_err(|e| e.into_error())?;
    Ok((summary, file))
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

/// The first gzip member: the `metadata.json` entry alone.
fn write_metadata_member(out: &mut File, metadata: &Metadata, level: u32) -> io::Result<()> {
    let mtime = metadata
        .trashed_at_time()
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs());
    let mut gz = GzEncoder::new(out, compression(level));
    tarx::write_metadata_entry(&mut gz, &metadata.to_json(), mtime)?;
    gz.finish()?;
    Ok(())
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
                mark_committed(hold.file(), bucket)?;
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
/// new, whatever the filesystem does on rename) and `fsync` the bucket directory.
fn mark_committed(archive: &File, bucket: &BucketDir) -> io::Result<()> {
    fsops::set_mode_fd(archive, 0o600)?;
    bucket.sync()
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
