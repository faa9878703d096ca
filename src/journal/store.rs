//! Where records are kept: one directory in the data directory, reached through its descriptor
//! (see `datadir`), every file in it opened without following a link. A file is read only if it
//! is a regular file of ours (owned by this user), and every record is sealed (see `seal`).

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use rustix::fs::{AtFlags, Mode, OFlags};

use super::seal::{self, KEY_LEN};
use crate::datadir::DataDir;
use crate::paths::fsops::{self, EntryKind};

/// Name of the sealing key, in the directory above the journals of every workspace.
const KEY_NAME: &str = "key";

/// One journal directory: `<data dir>/<rel>`.
#[derive(Debug, Clone)]
pub struct Store {
    data: Arc<DataDir>,
    rel: PathBuf,
}

impl Store {
    pub fn new(data: Arc<DataDir>, rel: PathBuf) -> Self {
        Self { data, rel }
    }

    /// Its path (for messages and tests).
    pub fn path(&self) -> PathBuf {
        self.data.path().join(&self.rel)
    }

    fn dir(&self, create: bool) -> io::Result<OwnedFd> {
        self.data.open(&self.rel, create)
    }

    /// Creates the new file `name` (0600; the directory too, the first time).
    pub fn create(&self, name: &OsStr) -> io::Result<File> {
        create_new(self.dir(true)?.as_fd(), name)
    }

    /// Writes `bytes` as the new file `name`, sealed, with `fsync` when `durable`.
    pub fn write_sealed(&self, name: &OsStr, bytes: &[u8], durable: bool) -> io::Result<()> {
        let key = self.key(true)?;
        let mut file = self.create(name)?;
        let written = file.write_all(&seal::sealed(&key, bytes)).and_then(|()| {
            if durable {
                file.sync_all()
            } else {
                Ok(())
            }
        });
        if written.is_err() {
            let _ = self.remove(name);
        }
        written
    }

    /// The body of the record `name`, if it is a regular file of ours whose seal verifies.
    pub fn read_sealed(&self, name: &OsStr) -> Option<Vec<u8>> {
        let key = self.key(false).ok()?;
        let file = self.open_ours(name).ok()?;
        let mut stored = Vec::new();
        file.take(1 << 20).read_to_end(&mut stored).ok()?;
        seal::opened(&key, &stored).map(<[u8]>::to_vec)
    }

    /// Opens `name` for reading if it is a regular file owned by this user (never following a
    /// link, never blocking on a FIFO).
    pub fn open_ours(&self, name: &OsStr) -> io::Result<File> {
        open_ours(self.dir(false)?.as_fd(), name)
    }

    pub fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        let dir = self.dir(false)?;
        rustix::fs::renameat(&dir, from, &dir, to).map_err(io::Error::from)
    }

    pub fn remove(&self, name: &OsStr) -> io::Result<()> {
        fsops::unlink_at(self.dir(false)?.as_fd(), name)
    }

    /// The names in the directory (none when it does not exist).
    pub fn names(&self) -> io::Result<Vec<OsString>> {
        match self.dir(false) {
            Ok(dir) => fsops::list_names(dir.as_fd()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }

    pub fn exists(&self, name: &OsStr) -> bool {
        self.dir(false)
            .and_then(|dir| fsops::lstat_at(dir.as_fd(), name))
            .is_ok_and(|stat| stat.is_some())
    }

    /// How long ago `name` was last written.
    pub fn age(&self, name: &OsStr) -> Option<Duration> {
        let dir = self.dir(false).ok()?;
        let stat = fsops::lstat_at(dir.as_fd(), name).ok()??;
        let modified =
            SystemTime::UNIX_EPOCH + Duration::new(stat.st_mtime as u64, stat.st_mtime_nsec as u32);
        SystemTime::now().duration_since(modified).ok()
    }

    /// fsyncs the directory (best effort).
    pub fn sync(&self) {
        if let Ok(dir) = self.dir(false) {
            fsops::fsync_dir(dir.as_fd());
        }
    }

    /// The sealing key, shared by the journals of one data directory; created (from the
    /// system's random source) when `create` and missing.
    fn key(&self, create: bool) -> io::Result<[u8; KEY_LEN]> {
        let parent = self.rel.parent().unwrap_or(Path::new(""));
        let dir = self.data.open(parent, create)?;
        let name = OsStr::new(KEY_NAME);
        match open_ours(dir.as_fd(), name) {
            Ok(file) => read_key(file),
            Err(e) if e.kind() == io::ErrorKind::NotFound && create => {
                let mut key = [0u8; KEY_LEN];
                File::open("/dev/urandom")?.read_exact(&mut key)?;
                // Unique per attempt: two threads (or workspaces) of one process may race here.
                let temp = fsops::temp_name(name);
                let mut file = create_new(dir.as_fd(), &temp)?;
                let made = file.write_all(&key).and_then(|()| file.sync_all());
                // Another process may have made one meanwhile: the first one in place wins.
                let placed = made
                    .and_then(|()| fsops::rename_noreplace(dir.as_fd(), &temp, dir.as_fd(), name));
                let _ = fsops::unlink_at(dir.as_fd(), &temp);
                match placed {
                    Ok(()) => {
                        fsops::fsync_dir(dir.as_fd());
                        Ok(key)
                    }
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                        read_key(open_ours(dir.as_fd(), name)?)
                    }
                    Err(e) => Err(e),
                }
            }
            Err(e) => Err(e),
        }
    }
}

fn read_key(mut file: File) -> io::Result<[u8; KEY_LEN]> {
    let mut key = [0u8; KEY_LEN];
    file.read_exact(&mut key)?;
    Ok(key)
}

fn create_new(dir: impl AsFd, name: &OsStr) -> io::Result<File> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    rustix::fs::openat(dir, name, flags, Mode::from_raw_mode(0o600))
        .map(File::from)
        .map_err(io::Error::from)
}

fn open_ours(dir: impl AsFd, name: &OsStr) -> io::Result<File> {
    let dir = dir.as_fd();
    let stat = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).map_err(io::Error::from)?;
    if EntryKind::of(&stat) != EntryKind::File || stat.st_uid != rustix::process::geteuid().as_raw()
    {
        return Err(io::Error::from(io::ErrorKind::PermissionDenied));
    }
    let file = fsops::open_for_read(dir, name)?;
    let opened = fsops::fstat(&file)?;
    if (opened.st_dev, opened.st_ino) != (stat.st_dev, stat.st_ino) {
        return Err(io::Error::from(io::ErrorKind::PermissionDenied));
    }
    Ok(file)
}
