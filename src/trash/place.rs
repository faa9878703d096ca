//! Where the trash reads and writes: the bucket, opened through the data directory's held
//! descriptor (`datadir`: every directory on the way checked to be private to this user), and
//! the archives in it, each reached by its plain name relative to the bucket's descriptor and
//! checked to be a regular file of this user before anything is read from it. No path string is
//! ever opened, so a data directory moved away and replaced after it was checked is never the one
//! read or written; paths are kept for messages only.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use crate::datadir;
use crate::paths::fsops;
use crate::paths::{AsDir, BorrowedDir, Dir};

/// The bucket directory, open.
#[derive(Debug)]
pub(crate) struct BucketDir {
    fd: Dir,
    path: PathBuf,
}

impl BucketDir {
    /// The bucket opened as `fd` (a handle for `*at` calls), known as `path`.
    pub(crate) fn new(fd: Dir, path: PathBuf) -> Self {
        Self { fd, path }
    }

    pub(crate) fn fd(&self) -> BorrowedDir<'_> {
        self.fd.as_dir()
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The names in it.
    pub(crate) fn names(&self) -> io::Result<Vec<OsString>> {
        fsops::list_names(self.fd())
    }

    /// fsyncs it, so that the names written in it last.
    pub(crate) fn sync(&self) -> io::Result<()> {
        fsops::sync_fd(fsops::reopen_readable(self.fd())?)
    }

    /// The archive `name` (one plain component, checked by the caller) in it.
    pub(crate) fn archive(&self, name: &OsStr) -> io::Result<ArchiveFile> {
        Ok(ArchiveFile {
            dir: self.fd.try_clone()?,
            name: name.to_owned(),
            path: self.path.join(name),
        })
    }
}

/// One archive: its bucket's descriptor and its name there.
#[derive(Debug)]
pub(crate) struct ArchiveFile {
    dir: Dir,
    name: OsString,
    path: PathBuf,
}

impl ArchiveFile {
    /// Its path, for messages and for what a call reports.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Opens it for reading: a regular file of this user that nobody else may write to (see
    /// [`datadir::check_file`]), never through a link, never blocking on a FIFO.
    pub(crate) fn open(&self) -> io::Result<File> {
        let file = fsops::open_for_read(self.dir.as_dir(), &self.name)?;
        datadir::check_file(&file, &self.path)?;
        Ok(file)
    }

    /// Its `lstat`; `NotFound` when it is gone.
    pub(crate) fn lstat(&self) -> io::Result<fsops::Snapshot> {
        fsops::snapshot_at(self.dir.as_dir(), &self.name)
    }

    /// `NotFound` unless its name still holds `file` (a restore that just finished deleted it, or
    /// something else took the name).
    pub(crate) fn check_named(&self, file: &File) -> io::Result<()> {
        let named = self.lstat()?;
        if !named.same_inode(&fsops::snapshot_fd(file)?) {
            return Err(io::ErrorKind::NotFound.into());
        }
        Ok(())
    }

    /// Deletes it and makes that durable; gone already is fine.
    pub(crate) fn remove(&self) -> io::Result<()> {
        match fsops::unlink_at(self.dir.as_dir(), &self.name) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        fsops::sync_fd(fsops::reopen_readable(self.dir.as_dir())?)
    }
}

#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// The directory `dir` as a bucket (tests of what takes an [`ArchiveFile`]).
    pub(crate) fn bucket_at(dir: &Path) -> BucketDir {
        BucketDir::new(fsops::open_dir(dir, dir, false).unwrap(), dir.to_owned())
    }
}
