//! Where records are kept: one directory in the data directory, reached through its descriptor
//! (see `datadir`), every file in it opened without following a link. A file is read only if it
//! is a regular file of ours (owned by this user), and every record is sealed (see `seal`),
//! written and read as a stream, whatever its size. Beside the directory, `<name>.lock` is what
//! makes recovery exclusive (see [`Store::lock_recovery`]).
//!
//! A record is one or more sealed sections, each its body (which holds no newline: compact JSON)
//! then its trailer (a newline, the seal, a newline). The first section's seal is the seal of its
//! body; a later section's is the seal of the previous section's seal (hex) followed by its own
//! body, so a section belongs to the record it was appended to. The record reads as its last
//! section whose seal verifies, provided the first one does: a new state of a record is one
//! section appended and `fdatasync`'d ([`Store::append_sealed_with`]) — the record's name is
//! durable already, so no directory needs a sync — and a section cut short by a kill or a power
//! cut reads as the state before it.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use super::seal::{self, Mac, KEY_LEN, SEAL_LEN, TRAILER_LEN};
use crate::datadir::DataDir;
use crate::paths::fsops::race_point::{self, RacePoint};
use crate::paths::EntryKind;
use crate::paths::{self, fsops};
use crate::paths::{AsDir, Dir};

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

    fn dir(&self, create: bool) -> io::Result<Dir> {
        self.data.open(&self.rel, create)
    }

    /// Creates the new file `name` (0600; the directory too, the first time).
    pub fn create(&self, name: &OsStr) -> io::Result<File> {
        create_new(self.dir(true)?.as_dir(), name)
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
        let mut out = Sealing::new(BufWriter::new(file), Mac::new(&key));
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

    /// Appends a new state to the record `name` (one it wrote, whole): a section holding the body
    /// `write` gives, sealed and chained to the section before (see the module docs), then
    /// `fdatasync`'d. Once it returns, the record reads as the new body, also after a power cut;
    /// should it fail, the record is cut back to what it was (it reads as before), or — should
    /// even that fail — removed.
    pub fn append_sealed_with(
        &self,
        name: &OsStr,
        write: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
    ) -> io::Result<()> {
        let key = self.key(false)?;
        let file = fsops::open_for_update(self.dir(false)?.as_dir(), name)?;
        let stat = fsops::fstat(&file)?;
        if EntryKind::of(&stat) != EntryKind::File
            || !fsops::owned_by_user(stat.uid, Some(file.as_dir()))?
        {
            return Err(io::Error::from(io::ErrorKind::PermissionDenied));
        }
        let old_len = stat.size;
        let mut trailer = [0u8; TRAILER_LEN];
        let trailer_at = old_len
            .checked_sub(TRAILER_LEN as u64)
            .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidData))?;
        paths::io::read_exact_at(&file, &mut trailer, trailer_at)?;
        let previous = seal::seal_in_trailer(&trailer)
            .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidData))?;
        let mut mac = Mac::new(&key);
        mac.update(previous);
        let mut out = Sealing::new(BufWriter::new(&file), mac);
        let written = write(&mut out).and_then(|()| {
            let Sealing { mut to, mac } = out;
            to.write_all(&seal::trailer(&mac.finish()))?;
            to.into_inner().map_err(io::IntoInnerError::into_error)?;
            file.sync_data()
        });
        if written.is_err() && file.set_len(old_len).is_err() {
            // Cut back it would read as the old state; as it is, it may read as the new one.
            let _ = self.remove(name);
        }
        written
    }

    /// The record `name` as `parse` reads it from the body of its state (its last section whose
    /// seal verifies, see the module docs), if it is a regular file of ours whose first section
    /// verifies. Each body is given as a stream and its seal checked as it is read (what `parse`
    /// leaves is read too), so a record of any size is read in one pass, in as much memory as
    /// `parse` keeps; what `parse` makes is returned only once its section's seal verifies.
    pub fn read_sealed_with<T>(
        &self,
        name: &OsStr,
        mut parse: impl FnMut(&mut dyn Read) -> Option<T>,
    ) -> Option<T> {
        let key = self.key(false).ok()?;
        let mut from = BufReader::new(self.open_ours(name).ok()?);
        let mut previous: Option<[u8; SEAL_LEN]> = None;
        let mut state = None;
        loop {
            let mut mac = Mac::new(&key);
            if let Some(previous) = &previous {
                mac.update(previous);
            }
            let mut body = Unsealing {
                from: &mut from,
                mac,
                ended: false,
            };
            let parsed = parse(&mut body);
            if io::copy(&mut body, &mut io::sink()).is_err() || !body.ended {
                break;
            }
            let mac = body.mac;
            let mut seal = [0u8; SEAL_LEN + 1];
            if from.read_exact(&mut seal).is_err()
                || seal[SEAL_LEN] != b'\n'
                || !mac.verifies(&seal[..SEAL_LEN])
            {
                break;
            }
            state = Some(parsed);
            previous = Some(seal[..SEAL_LEN].try_into().expect("SEAL_LEN bytes"));
            if from.fill_buf().map_or(true, <[u8]>::is_empty) {
                break;
            }
        }
        state?
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
        let lock = open_lock(parent.as_dir(), &name)?;
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
        open_ours(self.dir(false)?.as_dir(), name)
    }

    pub fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        let dir = self.dir(false)?;
        fsops::rename_replacing(dir.as_dir(), from, dir.as_dir(), to)
    }

    pub fn remove(&self, name: &OsStr) -> io::Result<()> {
        fsops::unlink_at(self.dir(false)?.as_dir(), name)
    }

    /// The names in the directory (none when it does not exist).
    pub fn names(&self) -> io::Result<Vec<OsString>> {
        match self.dir(false) {
            Ok(dir) => fsops::list_names(dir.as_dir()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }

    pub fn exists(&self, name: &OsStr) -> bool {
        self.dir(false)
            .and_then(|dir| fsops::lstat_at(dir.as_dir(), name))
            .is_ok_and(|stat| stat.is_some())
    }

    /// How long ago `name` was last written.
    pub fn age(&self, name: &OsStr) -> Option<Duration> {
        let dir = self.dir(false).ok()?;
        let stat = fsops::lstat_at(dir.as_dir(), name).ok()??;
        let modified = SystemTime::UNIX_EPOCH + Duration::new(stat.mtime.0 as u64, stat.mtime.1);
        SystemTime::now().duration_since(modified).ok()
    }

    /// fsyncs the directory (best effort).
    pub fn sync(&self) {
        if let Ok(dir) = self.dir(false) {
            fsops::fsync_dir(dir.as_dir());
        }
    }

    /// The sealing key, shared by the journals of one data directory; created (from the
    /// system's random source) when `create` and missing.
    fn key(&self, create: bool) -> io::Result<[u8; KEY_LEN]> {
        let parent = self.rel.parent().unwrap_or(Path::new(""));
        let dir = self.data.open(parent, create)?;
        let name = OsStr::new(KEY_NAME);
        match open_ours(dir.as_dir(), name) {
            Ok(file) => read_key(file),
            Err(e) if e.kind() == io::ErrorKind::NotFound && create => {
                let mut key = [0u8; KEY_LEN];
                File::open("/dev/urandom")?.read_exact(&mut key)?;
                // Unique per attempt: two threads (or workspaces) of one process may race here.
                let temp = fsops::temp_name(name);
                let mut file = create_new(dir.as_dir(), &temp)?;
                let made = file.write_all(&key).and_then(|()| file.sync_all());
                // Another process may have made one meanwhile: the first one in place wins.
                let placed = made.and_then(|()| {
                    fsops::rename_noreplace(dir.as_dir(), &temp, dir.as_dir(), name)
                });
                let _ = fsops::unlink_at(dir.as_dir(), &temp);
                match placed {
                    Ok(()) => {
                        fsops::fsync_dir(dir.as_dir());
                        Ok(key)
                    }
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                        read_key(open_ours(dir.as_dir(), name)?)
                    }
                    Err(e) => Err(e),
                }
            }
            Err(e) => Err(e),
        }
    }
}

/// A section of a sealed record being written: the body goes to the file and into its seal.
struct Sealing<W: Write> {
    to: BufWriter<W>,
    mac: Mac,
}

impl<W: Write> Sealing<W> {
    fn new(to: BufWriter<W>, mac: Mac) -> Self {
        Self { to, mac }
    }
}

impl<W: Write> Write for Sealing<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // A newline ends a section's body (see the module docs); compact JSON never has one.
        if buf.contains(&b'\n') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a record's body holds no newline",
            ));
        }
        let n = self.to.write(buf)?;
        self.mac.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.to.flush()
    }
}

/// A section's body being read, up to the newline that ends it (consumed, `ended` set): what is
/// read goes into the seal to check. Input that ends before the newline leaves `ended` unset.
struct Unsealing<'r, R: BufRead> {
    from: &'r mut R,
    mac: Mac,
    ended: bool,
}

impl<R: BufRead> Read for Unsealing<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.ended || buf.is_empty() {
            return Ok(0);
        }
        let available = self.from.fill_buf()?;
        let (body, newline) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (at, true),
            None => (available.len(), false),
        };
        let n = body.min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.mac.update(&available[..n]);
        self.from.consume(n);
        if newline && n == body {
            self.from.consume(1);
            self.ended = true;
        }
        Ok(n)
    }
}

/// Opens (creating it, 0600) the lock file `name` in `dir`: a regular file of ours, never
/// through a link.
fn open_lock(dir: impl AsDir, name: &OsStr) -> io::Result<File> {
    let file = fsops::open_lock_file(dir.as_dir(), name)?;
    let stat = fsops::fstat(&file)?;
    if EntryKind::of(&stat) != EntryKind::File
        || !fsops::owned_by_user(stat.uid, Some(file.as_dir()))?
    {
        return Err(io::Error::from(io::ErrorKind::PermissionDenied));
    }
    Ok(file)
}

fn read_key(mut file: File) -> io::Result<[u8; KEY_LEN]> {
    let mut key = [0u8; KEY_LEN];
    file.read_exact(&mut key)?;
    Ok(key)
}

fn create_new(dir: impl AsDir, name: &OsStr) -> io::Result<File> {
    fsops::create_file_at(dir.as_dir(), name)
}

fn open_ours(dir: impl AsDir, name: &OsStr) -> io::Result<File> {
    let dir = dir.as_dir();
    let stat =
        fsops::lstat_at(dir, name)?.ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
    if EntryKind::of(&stat) != EntryKind::File || !fsops::owned_by_user(stat.uid, None)? {
        return Err(io::Error::from(io::ErrorKind::PermissionDenied));
    }
    let file = fsops::open_for_read(dir, name)?;
    let opened = fsops::fstat(&file)?;
    if opened.id() != stat.id() || !fsops::owned_by_user(opened.uid, Some(file.as_dir()))? {
        return Err(io::Error::from(io::ErrorKind::PermissionDenied));
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn store() -> (tempfile::TempDir, Store) {
        let tmp = tempfile::tempdir().unwrap();
        let data = Arc::new(DataDir::new(tmp.path().to_path_buf()));
        (tmp, Store::new(data, PathBuf::from("journal/x")))
    }

    fn append(store: &Store, name: &OsStr, body: &[u8]) -> io::Result<()> {
        store.append_sealed_with(name, &mut |out| out.write_all(body))
    }

    #[test]
    fn a_record_reads_as_its_last_appended_state() {
        let (_tmp, store) = store();
        let name = OsStr::new("r.json");
        store
            .write_sealed(name, br#"{"applied":false}"#, true)
            .unwrap();
        assert_eq!(store.read_sealed(name).unwrap(), br#"{"applied":false}"#);
        append(&store, name, br#"{"applied":true}"#).unwrap();
        assert_eq!(store.read_sealed(name).unwrap(), br#"{"applied":true}"#);
        append(&store, name, br#"{"third":1}"#).unwrap();
        assert_eq!(store.read_sealed(name).unwrap(), br#"{"third":1}"#);
    }

    /// A kill or a power cut can leave any prefix of an appended section: each reads as the
    /// state before it; a record cut inside its first section does not read at all.
    #[test]
    fn a_section_cut_short_reads_as_the_state_before() {
        let (_tmp, store) = store();
        let name = OsStr::new("r.json");
        store.write_sealed(name, br#"{"state":1}"#, true).unwrap();
        let first_len = fs::metadata(store.path().join(name)).unwrap().len();
        append(&store, name, br#"{"state":2}"#).unwrap();
        let whole = fs::read(store.path().join(name)).unwrap();
        for cut in 0..whole.len() {
            fs::write(store.path().join(name), &whole[..cut]).unwrap();
            let read = store.read_sealed(name);
            if (cut as u64) < first_len {
                assert_eq!(read, None, "cut at {cut}");
            } else {
                assert_eq!(read.unwrap(), br#"{"state":1}"#, "cut at {cut}");
            }
        }
        fs::write(store.path().join(name), &whole).unwrap();
        assert_eq!(store.read_sealed(name).unwrap(), br#"{"state":2}"#);
    }

    /// A section counts only chained to the record it was appended to: one sealed on its own, or
    /// taken from another record, leaves the record as it was.
    #[test]
    fn a_section_not_chained_to_the_record_does_not_count() {
        let (_tmp, store) = store();
        let (a, b) = (OsStr::new("a.json"), OsStr::new("b.json"));
        store.write_sealed(a, br#"{"state":"a1"}"#, true).unwrap();
        store.write_sealed(b, br#"{"state":"b1"}"#, true).unwrap();
        let a_len = fs::metadata(store.path().join(a)).unwrap().len() as usize;
        let b_len = fs::metadata(store.path().join(b)).unwrap().len() as usize;
        append(&store, b, br#"{"state":"b2"}"#).unwrap();
        let b_bytes = fs::read(store.path().join(b)).unwrap();
        let a_bytes = fs::read(store.path().join(a)).unwrap();
        // b's second section after a's first: chained to b's seal, not a's.
        let grafted = [&a_bytes[..a_len], &b_bytes[b_len..]].concat();
        fs::write(store.path().join(a), &grafted).unwrap();
        assert_eq!(store.read_sealed(a).unwrap(), br#"{"state":"a1"}"#);
        // A section sealed as a first one (not chained at all).
        let key = store.key(false).unwrap();
        let lone = seal::sealed(&key, br#"{"state":"a2"}"#);
        fs::write(store.path().join(a), [&a_bytes[..], &lone].concat()).unwrap();
        assert_eq!(store.read_sealed(a).unwrap(), br#"{"state":"a1"}"#);
    }

    #[test]
    fn a_body_holding_a_newline_is_refused_and_leaves_the_record_as_it_was() {
        let (_tmp, store) = store();
        let name = OsStr::new("r.json");
        assert!(store.write_sealed(name, b"{}\n{}", true).is_err());
        assert!(!store.exists(name));
        store.write_sealed(name, br#"{"state":1}"#, true).unwrap();
        let before = fs::read(store.path().join(name)).unwrap();
        assert!(append(&store, name, b"{}\n").is_err());
        assert_eq!(fs::read(store.path().join(name)).unwrap(), before);
        assert_eq!(store.read_sealed(name).unwrap(), br#"{"state":1}"#);
    }
}
