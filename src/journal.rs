//! The append journal: makes an in-place `append_file` all-or-nothing under a crash.
//!
//! Before appending to an existing file, a record `<dataDir>/journal/<sha256(root)>/<unique>.json`
//! names the file (path, dev, ino), its size before (`oldSize`) and the append (`appendLen`,
//! `appendSha256`); it is fsynced (and its directory) before the first byte is appended, and removed
//! once the file is fsynced. `Workspace::new` replays what is left: a file that is still the same
//! inode and holds `oldSize + appendLen` bytes whose tail hashes to `appendSha256` is complete and
//! kept; one between `oldSize` and that (or with a mismatching tail) is truncated back to
//! `oldSize`; anything else (renamed over, other inode, shorter than `oldSize`) is left alone.
//!
//! Records of a live process are not replayed: a record whose `pid` is alive and that is younger
//! than [`LIVE_GRACE`] is skipped (a pid alive but older than that is taken to be a reused pid).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

/// How long a record of a still-running pid is left alone.
pub const LIVE_GRACE: Duration = Duration::from_secs(600);

static COUNTER: AtomicU64 = AtomicU64::new(0);

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    pub path: PathBuf,
    pub dev: u64,
    pub ino: u64,
    pub old_size: u64,
    pub append_len: u64,
    pub append_sha256: String,
    pub pid: u32,
}

/// What recovery did with one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recovered {
    Complete,
    RolledBack,
    LeftAlone,
    Skipped,
}

/// One workspace's journal directory.
#[derive(Debug, Clone)]
pub struct Journal {
    dir: PathBuf,
}

/// A written record; [`Entry::finish`] removes it.
#[derive(Debug)]
pub struct Entry {
    path: PathBuf,
}

impl Entry {
    /// Removes the record (the append is durable). Best effort: a leftover record of a complete
    /// append is kept by recovery.
    pub fn finish(self) {
        let _ = fs::remove_file(&self.path);
    }
}

fn fsync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

impl Journal {
    pub fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes and fsyncs a record for appending `content` to `file` (at `path`) of `old_size` bytes.
    pub fn begin(
        &self,
        path: &Path,
        file: &File,
        old_size: u64,
        content: &[u8],
    ) -> io::Result<Entry> {
        let meta = file.metadata()?;
        let record = Record {
            path: path.to_owned(),
            dev: meta.dev(),
            ino: meta.ino(),
            old_size,
            append_len: content.len() as u64,
            append_sha256: crate::hashing::sha256_hex(content),
            pid: std::process::id(),
        };
        if fs::symlink_metadata(&self.dir).is_err() {
            fs::create_dir_all(&self.dir)?;
            if let Some(parent) = self.dir.parent() {
                fsync_dir(parent);
            }
        }
        let stamp = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let name = format!("{}-{stamp:x}-{n}.json", record.pid);
        let final_path = self.dir.join(&name);
        let temp = self.dir.join(format!(".{name}.partial"));
        let result = (|| {
            let mut f = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&temp)?;
            f.write_all(&serde_json::to_vec(&record).map_err(io::Error::other)?)?;
            f.sync_all()?;
            fs::rename(&temp, &final_path)
        })();
        if result.is_err() {
            let _ = fs::remove_file(&temp);
        }
        result?;
        fsync_dir(&self.dir);
        Ok(Entry { path: final_path })
    }

    /// Replays every record left by a crash (cheap when the directory is missing or empty).
    pub fn recover(&self) -> Vec<Recovered> {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut done = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') && name.ends_with(".partial") {
                // A record never completed: nothing was appended under it.
                if age(&path).is_some_and(|a| a > LIVE_GRACE) || !pid_alive(pid_of(&name)) {
                    let _ = fs::remove_file(&path);
                }
                continue;
            }
            if !name.ends_with(".json") {
                continue;
            }
            let Ok(bytes) = fs::read(&path) else { continue };
            let Ok(record) = serde_json::from_slice::<Record>(&bytes) else {
                let _ = fs::remove_file(&path);
                continue;
            };
            // A young record of a live process (this one included: another workspace of it)
            // may be an append in flight.
            if pid_alive(Some(record.pid)) && age(&path).is_none_or(|a| a < LIVE_GRACE) {
                done.push(Recovered::Skipped);
                continue;
            }
            let outcome = replay(&record);
            if outcome.is_ok() {
                let _ = fs::remove_file(&path);
            }
            done.push(outcome.unwrap_or(Recovered::LeftAlone));
        }
        fsync_dir(&self.dir);
        done
    }
}

fn age(path: &Path) -> Option<Duration> {
    let modified = fs::symlink_metadata(path).ok()?.modified().ok()?;
    SystemTime::now().duration_since(modified).ok()
}

fn pid_of(name: &str) -> Option<u32> {
    name.trim_start_matches('.').split('-').next()?.parse().ok()
}

fn pid_alive(pid: Option<u32>) -> bool {
    let Some(pid) = pid else { return false };
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Applies one record to its file; `Err` only for an I/O failure worth retrying next time.
pub fn replay(record: &Record) -> io::Result<Recovered> {
    let mut file = match OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(
            rustix::fs::OFlags::NOFOLLOW.bits() as i32 | rustix::fs::OFlags::NONBLOCK.bits() as i32,
        )
        .open(&record.path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Recovered::LeftAlone),
        Err(_) => return Ok(Recovered::LeftAlone),
    };
    let meta = file.metadata()?;
    if !meta.is_file() || (meta.dev(), meta.ino()) != (record.dev, record.ino) {
        return Ok(Recovered::LeftAlone);
    }
    let size = meta.len();
    let full = record.old_size + record.append_len;
    if size < record.old_size || size > full {
        return Ok(Recovered::LeftAlone);
    }
    if size == full && tail_sha256(&mut file, record.old_size)? == record.append_sha256 {
        return Ok(Recovered::Complete);
    }
    file.set_len(record.old_size)?;
    file.sync_all()?;
    Ok(Recovered::RolledBack)
}

fn tail_sha256(file: &mut File, from: u64) -> io::Result<String> {
    file.seek(SeekFrom::Start(from))?;
    crate::hashing::sha256_reader(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, Journal, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let journal = Journal::new(tmp.path().join("journal").join("x"));
        let file = tmp.path().join("f.txt");
        fs::write(&file, b"old").unwrap();
        (tmp, journal, file)
    }

    fn begin(journal: &Journal, file: &Path, content: &[u8]) -> PathBuf {
        let f = File::open(file).unwrap();
        let entry = journal.begin(file, &f, 3, content).unwrap();
        // Pretend the writer died: a pid that is not alive.
        let mut record: Record = serde_json::from_slice(&fs::read(&entry.path).unwrap()).unwrap();
        record.pid = u32::MAX - 1;
        fs::write(&entry.path, serde_json::to_vec(&record).unwrap()).unwrap();
        entry.path
    }

    #[test]
    fn record_fields() {
        let (_tmp, journal, file) = setup();
        let f = File::open(&file).unwrap();
        let entry = journal.begin(&file, &f, 3, b"new").unwrap();
        let record: Record = serde_json::from_slice(&fs::read(&entry.path).unwrap()).unwrap();
        assert_eq!(record.path, file);
        assert_eq!(record.ino, f.metadata().unwrap().ino());
        assert_eq!((record.old_size, record.append_len), (3, 3));
        assert_eq!(record.append_sha256, crate::hashing::sha256_hex(b"new"));
        assert_eq!(record.pid, std::process::id());
        // A fresh record of this (live) process is not replayed.
        assert_eq!(journal.recover(), vec![Recovered::Skipped]);
        entry.finish();
        assert_eq!(fs::read_dir(journal.dir()).unwrap().count(), 0);
        assert!(journal.recover().is_empty());
    }

    #[test]
    fn recover_complete() {
        let (_tmp, journal, file) = setup();
        let rec = begin(&journal, &file, b"new");
        fs::write(&file, b"oldnew").unwrap();
        assert_eq!(journal.recover(), vec![Recovered::Complete]);
        assert_eq!(fs::read(&file).unwrap(), b"oldnew");
        assert!(!rec.exists());
    }

    #[test]
    fn recover_partial_and_mismatch() {
        let (_tmp, journal, file) = setup();
        begin(&journal, &file, b"new");
        OpenOptions::new()
            .append(true)
            .open(&file)
            .unwrap()
            .write_all(b"ne")
            .unwrap();
        assert_eq!(journal.recover(), vec![Recovered::RolledBack]);
        assert_eq!(fs::read(&file).unwrap(), b"old");
        begin(&journal, &file, b"new");
        OpenOptions::new()
            .append(true)
            .open(&file)
            .unwrap()
            .write_all(b"\0\0\0")
            .unwrap();
        assert_eq!(journal.recover(), vec![Recovered::RolledBack]);
        assert_eq!(fs::read(&file).unwrap(), b"old");
        begin(&journal, &file, b"new");
        assert_eq!(journal.recover(), vec![Recovered::RolledBack]);
        assert_eq!(fs::read(&file).unwrap(), b"old");
    }

    #[test]
    fn recover_replaced_or_shorter_is_left_alone() {
        let (_tmp, journal, file) = setup();
        begin(&journal, &file, b"new");
        let other = file.with_extension("other");
        fs::write(&other, b"oldne").unwrap();
        fs::rename(&other, &file).unwrap();
        assert_eq!(journal.recover(), vec![Recovered::LeftAlone]);
        assert_eq!(fs::read(&file).unwrap(), b"oldne");
        let (_tmp2, journal, file) = setup();
        begin(&journal, &file, b"new");
        fs::write(&file, b"o").unwrap();
        assert_eq!(journal.recover(), vec![Recovered::LeftAlone]);
        assert_eq!(fs::read(&file).unwrap(), b"o");
        assert_eq!(fs::read_dir(journal.dir()).unwrap().count(), 0);
    }
}
