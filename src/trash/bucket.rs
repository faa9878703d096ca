//! A workspace's bucket: the one directory holding its archives, and what can be done with it:
//! put an entry in ([`archiving`]), keep the bucket ([`upkeep`]: list, clear, sweep, discard)
//! and take an archive out ([`take_out`]: read, restore, stage). This file holds the bucket
//! itself: where it is, how it is opened, and which path names one of its archives.

mod archiving;
mod take_out;
mod upkeep;

use std::ffi::OsStr;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use super::hold::ArchiveHold;
use super::item::Identity;
use super::metadata::Metadata;
use super::naming;
use super::place::{ArchiveFile, BucketDir};
use super::write::ArchiveDestination;
use super::TrashError;
use crate::datadir::DataDir;
use crate::paths::fsops;

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

    /// Delete an archive nobody needs (it duplicates what is in place) and make that durable.
    fn delete_archive(&self, archive: &Path) {
        if let Ok(archive) = self.locate(archive) {
            let _ = archive.remove();
        }
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

    /// Where and how [`write::write_archive`](super::write::write_archive) writes, in the open `bucket`.
    fn target<'a>(&'a self, bucket: &'a BucketDir) -> ArchiveDestination<'a> {
        ArchiveDestination {
            bucket,
            identity: &self.identity,
            level: self.compression_level,
            sync_bucket: true,
        }
    }

    /// Makes the names of the archives made since the bucket was last synced durable (see
    /// [`Bucket::archive_expected_unsynced`]).
    pub fn sync(&self) -> io::Result<()> {
        self.open(false)?.sync()
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
