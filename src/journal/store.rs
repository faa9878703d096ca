//! Where records are kept: one directory in the data directory, reached through its descriptor
//! (see `datadir`), every file in it opened without following a link. A file is read only if it
//! is a regular file of ours (owned by this user), and every record is sealed (see `seal`),
//! written and read as a stream, whatever its size. Beside the directory, `<name>.lock` is what
//! makes recovery exclusive (see [`Store::lock_recovery`]).

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use super::seal::{self, Mac, KEY_LEN, TRAILER_LEN};
use crate::datadir::DataDir;
use crate::paths::fsops::race_point::{self, RacePoint};
use crate::paths::EntryKind;
use crate::paths::{self, fsops, process};

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
    #[cfg(test)]
    pub fn write_sealed(&self, name: &OsStr, bytes: &[u8], durable: bool) -> io::Result<()> {
        self.write_sealed_with(name, durable, &mut |out| out.write_all(bytes))
    }

    /// Writes the new file `name`: the body `write` gives, then its seal (computed as it goes
    /// by), with `fsync` when `durable`. Nothing is left of `name` when it fails.
    pub fn write_sealed_with(
        &self,
        name: &OsStr,
        durable: bool,
        write: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
    ) -> io::Result<()> {
        let key = self.key(true)?;
        let file = self.create(name)?;
        let mut out = Sealing {
            to: BufWriter::new(file),
            mac: Mac::new(&key),
        };
        let written = write(&mut out).and_then(|()| {
            let Sealing { mut to, mac } = out;
            to.write_all(&seal::trailer(&mac.finish()))?;
            let file = to.into_inner().map_err(io::IntoInnerError::into_error)?;
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

    /// The record `name` as `parse` reads it from its body, if it is a regular file of ours and
    /// its seal verifies. The body is given as a stream and the seal checked as it is read
    /// (what `parse` leaves is read too), so a record of any size is read in one pass, in as
    /// much memory as `parse` keeps; what `parse` makes is returned only once the seal verifies.
    pub fn read_sealed_with<T>(
        &self,
        name: &OsStr,
        parse: impl FnOnce(&mut dyn Read) -> Option<T>,
    ) -> Option<T> {
        let key = self.key(false).ok()?;
        let file = self.open_ours(name).ok()?;
        let body_len = file
            .metadata()
            .ok()?
            .len()
            .checked_sub(TRAILER_LEN as u64)?;
        let mut trailer = [0u8; TRAILER_LEN];
        paths::io::read_exact_at(&file, &mut trailer, body_len).ok()?;
        let seal = seal::seal_in_trailer(&trailer)?;
        let mut body = Unsealing {
            from: BufReader::new((&file).take(body_len)),
            mac: Mac::new(&key),
            read: 0,
        };
        let parsed = parse(&mut body);
        io::copy(&mut body, &mut io::sink()).ok()?;
        let whole = body.read == body_len;
        (whole && body.mac.verifies(seal)).then_some(parsed)?
    }

    /// The body of the record `name`, if it is a regular file of ours whose seal verifies.
    #[cfg(test)]
    pub fn read_sealed(&self, name: &OsStr) -> Option<Vec<u8>> {
        self.read_sealed_with(name, |body| {
            let mut bytes = Vec::new();
            body.read_to_end(&mut bytes).ok().map(|_| bytes)
        })
    }

    /// The first bytes of `name` (at most `max`), if it is a regular file of ours; nothing is
    /// verified (to sort records before reading them).
    pub fn peek(&self, name: &OsStr, max: usize) -> Option<Vec<u8>> {
        let mut head = Vec::with_capacity(max);
        self.open_ours(name)
            .ok()?
            .take(max as u64)
            .read_to_end(&mut head)
            .ok()?;
        Some(head)
    }

    /// Takes the recovery lock of this journal, waiting for it: an exclusive `flock` on
    /// `<name>.lock` beside the journal directory, held — against other processes and other
    /// workspaces of this one alike — while the returned file is open (a killed holder's goes
    /// with it). `None` when the journal directory does not exist: there is nothing to recover.
    pub fn lock_recovery(&self) -> io::Result<Option<File>> {
        match self.dir(false) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        }
        let parent = self
            .data
            .open(self.rel.parent().unwrap_or(Path::new("")), false)?;
        let mut name = self.rel.file_name().unwrap_or_default().to_owned();
        name.push(".lock");
        let lock = open_lock(parent.as_fd(), &name)?;
        match fsops::try_lock_exclusive(&lock) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                race_point::reached(RacePoint::LockBusy, &name);
                fsops::lock_exclusive(&lock)?;
            }
            other => other?,
        }
        Ok(Some(lock))
    }

    /// Opens `name` for reading if it is a regular file owned by this user (never following a
    /// link, never blocking on a FIFO).
    pub fn open_ours(&self, name: &OsStr) -> io::Result<File> {
        open_ours(self.dir(false)?.as_fd(), name)
    }

    pub fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        let dir = self.dir(false)?;
        fsops::rename_replacing(dir.as_fd(), from, dir.as_fd(), to)
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
        let modified = SystemTime::UNIX_EPOCH + Duration::new(stat.mtime.0 as u64, stat.mtime.1);
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

/// A sealed record being written: the body goes to the file and into its seal.
struct Sealing {
    to: BufWriter<File>,
    mac: Mac,
}

impl Write for Sealing {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.to.write(buf)?;
        self.mac.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.to.flush()
    }
}

/// A sealed record's body being read: what is read goes into the seal to check.
struct Unsealing<R> {
    from: R,
    mac: Mac,
    read: u64,
}

impl<R: Read> Read for Unsealing<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.from.read(buf)?;
        self.mac.update(&buf[..n]);
        self.read += n as u64;
        Ok(n)
    }
}

/// Opens (creating it, 0600) the lock file `name` in `dir`: a regular file of ours, never
/// through a link.
fn open_lock(dir: impl AsFd, name: &OsStr) -> io::Result<File> {
    let file = fsops::open_lock_file(dir.as_fd(), name)?;
    let stat = fsops::fstat(&file)?;
    if EntryKind::of(&stat) != EntryKind::File || stat.uid != process::effective_user() {
        return Err(io::Error::from(io::ErrorKind::PermissionDenied));
    }
    Ok(file)
}

fn read_key(mut file: File) -> io::Result<[u8; KEY_LEN]> {
    let mut key = [0u8; KEY_LEN];
    file.read_exact(&mut key)?;
    Ok(key)
}

fn create_new(dir: impl AsFd, name: &OsStr) -> io::Result<File> {
    fsops::create_file_at(dir.as_fd(), name)
}

fn open_ours(dir: impl AsFd, name: &OsStr) -> io::Result<File> {
    let dir = dir.as_fd();
    let stat =
        fsops::lstat_at(dir, name)?.ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
    if EntryKind::of(&stat) != EntryKind::File || stat.uid != process::effective_user() {
        return Err(io::Error::from(io::ErrorKind::PermissionDenied));
    }
    let file = fsops::open_for_read(dir, name)?;
    let opened = fsops::fstat(&file)?;
    if (opened.dev, opened.ino) != (stat.dev, stat.ino) {
        return Err(io::Error::from(io::ErrorKind::PermissionDenied));
    }
    Ok(file)
}
