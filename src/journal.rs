//! The crash journal: records, under `<dataDir>/journal/<sha256(root)>/<pid>-<unique>.json`, what
//! a crash must not leave half done; `Workspace::new` starts replaying what is left (on a thread
//! of its own, which every call waits for). A record's `kind` says what it covers; a record
//! without one (written before there were kinds) is an append.
//!
//! - `append`: made an in-place `append_file` all-or-nothing without ever cutting what anyone
//!   else wrote, in versions before the change executor (which appends in a `commit` record's
//!   step, with the history record: see `commit.rs`); no longer written, still replayed. Before
//!   appending to an existing file, the record names the file (path, dev,
//!   ino), its size before (`oldSize`) and the append (`appendLen`, `appendSha256`), and a copy
//!   of the appended bytes is kept beside it (`<record>.bytes`, `keptBytes: true`); both are
//!   fsynced (and their directory) before the first byte is appended, and removed once the file
//!   is fsynced. Replay (see `tail.rs`): only if the file is still the same inode and holds
//!   exactly `oldSize` bytes followed by a prefix of the kept bytes — nothing after them — is it
//!   ours to judge: the whole append is kept, a cut-short one is truncated back to `oldSize`.
//!   Anything else is left alone: bytes that differ from ours or follow them (someone appended
//!   after the crash), a size outside `oldSize ..= oldSize + appendLen`, another inode, a kept
//!   copy that is missing or does not hash to `appendSha256`. A record without kept bytes
//!   (written before they were kept) cannot prove a partial append ours: a complete append
//!   (the tail hashes to `appendSha256`) is kept, anything else is left alone. The same rule
//!   decides what `append_file` rolls back itself when a write fails. The one thing it cannot
//!   tell: bytes someone else appended that happen to equal a prefix of ours.
//! - `temp`: makes the temp entry of an atomic write or of a move between file systems
//!   (`.<name>.<pid>.<n>.agent-fs-tools.tmp`, see `fsops::temp_name`: a file, or the copied tree),
//!   or the temp root of a restore (`.restore-<unique>.partial`: a file, symlink or whole tree),
//!   garbage a later run collects. Before the temp file is created, the
//!   record names its directory (canonical `dir`, `dirDev`, `dirIno`) and its `name`; it is
//!   removed once the temp file is renamed into place or removed. The files a change stages in
//!   one directory share one record (`countersBelow`): their names are numbered from a block of
//!   counters reserved for them (`fsops::numbered_temp_name`), the record names the first and
//!   the end of the block, and replay removes every entry of the directory named with the
//!   record's process and a counter in the block (and the doomed and hold names derived from
//!   them, which keep the counter) — one record a directory rather than one a file (a patch of
//!   50 files wrote 50, each a new inode). It is written without fsync
//!   (a SIGKILL keeps the page cache; a power cut may lose it, and the temp stays) and best
//!   effort: a write goes on without it when the journal cannot be written. Replay: the temp is
//!   removed if it is still there, reached from `/` without following a symlink, in the same
//!   directory (dev, ino) and has one of our temp names; it is removed without following links.
//!   Anything else is left alone.
//! - `removal`: covers removing an entry entry by entry once it is archived (a trash) or copied
//!   (a move between file systems): `fsops::remove_exact` renames each entry aside to a temp
//!   name and checks it before unlinking it, so a kill can leave one under that name. Replay
//!   removes the temp names of the record's process in the recorded directory (the entry's own)
//!   and in what is left of the entry's tree, never following links; nothing else.
//!
//! Records of a live process are not replayed: a record whose `pid` is alive and that is younger
//! than [`LIVE_GRACE`] is skipped (a pid alive but older than that is taken to be a reused pid).
//!
//! Recovery acts only on records we wrote and only inside the allowed trees: the journal lives in
//! the data directory, reached by descriptor (`store.rs`); a record counts only if it is a regular
//! file of this user whose seal verifies under the data directory's key (`seal.rs`) and whose
//! names are plain — one component each, directories absolute — checked as it is read
//! (`record.rs`); and the file or directory it names is opened beneath the allowed tree holding
//! it, never through a link. A record that does not verify (planted, or torn by a kill while it
//! was written) or names anything else is never acted on, only dropped. Records are written and
//! read as streams, so a record is readable whatever its size.
//!
//! Recovery is exclusive: one at a time per journal (data directory and root), under an `flock`
//! held across processes and threads ([`Journal::recover_all`]); and every replay is safe to
//! run again, on a record replayed before wholly or in part. It is all or nothing per record: one
//! covering a directory the sandbox does not reach is left whole ([`Recovered::Deferred`]) for a
//! workspace that reaches it, and the workspace that left it refuses changes of what it covers
//! meanwhile ([`Pending`]).

use std::ffi::{OsStr, OsString};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::datadir::DataDir;
use crate::paths::{fsops, Sandbox};

mod append;
pub mod commit;
mod commit_record;
mod made_dirs;
mod record;
mod record_names;
mod recovery;
mod removal;
mod seal;
mod store;
mod tail;
mod temp;

use store::Store;

pub use made_dirs::MadeDirRecord;
pub use record::{AppendRecord, Record, RemovalRecord, TempRecord};
use tail::Tail;

/// How long a record of a still-running pid is left alone.
pub const LIVE_GRACE: Duration = Duration::from_secs(600);

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// What recovery did with one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recovered {
    /// An append that had completed: kept.
    Complete,
    /// A partial append: truncated back to the old size.
    RolledBack,
    /// Nothing to do, or nothing safe to do (the record is dropped).
    LeftAlone,
    /// A temp file left by a crashed write: removed.
    TempRemoved,
    /// A record that may belong to an operation in flight: kept for later.
    Skipped,
    /// A change of many entries cut short before its commit point: undone.
    CommitUndone,
    /// A change of many entries cut short after its commit point: finished.
    CommitFinished,
    /// A record we cannot show we wrote (not a regular file of ours, or its seal does not
    /// verify), or one naming anything but plain names (see `record.rs`): never acted on; the
    /// record itself is dropped.
    Untrusted,
    /// A record covering a directory this workspace's sandbox does not reach: nothing is done
    /// and the record stays, whole, for a workspace that can finish it.
    Deferred,
}

/// What one recovery did, and what it left for a workspace that can finish it.
#[derive(Debug, Default)]
pub struct Recovery {
    /// What was done with each record.
    pub outcomes: Vec<Recovered>,
    /// The records left whole ([`Recovered::Deferred`]) because this sandbox does not reach all
    /// they cover.
    pub pending: Vec<Pending>,
}

/// A record a recovery left whole, for a workspace whose sandbox reaches all it covers.
#[derive(Debug, Clone)]
pub struct Pending {
    /// The record's name in the journal: it is done once that is gone.
    record: OsString,
    /// The paths of the entries it covers, which a change must not find half done.
    pub paths: Vec<PathBuf>,
    /// A directory it acts in that the sandbox did not reach.
    pub out_of_reach: PathBuf,
}

impl Pending {
    /// Whether `path` is an entry the record covers, or inside or above one.
    pub fn covers(&self, path: &Path) -> bool {
        self.paths
            .iter()
            .any(|covered| covered.starts_with(path) || path.starts_with(covered))
    }
}

/// How a record is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Durability {
    /// Under a `.partial` name, fsynced, renamed, the directory fsynced: survives a power cut.
    Fsynced,
    /// Created under its final name and written, nothing more: survives a killed process.
    PageCache,
}

/// One workspace's journal directory, `<dataDir>/<rel>`.
#[derive(Debug, Clone)]
pub struct Journal {
    store: Store,
}

/// A written record; [`WrittenRecord::finish`] removes it.
#[derive(Debug)]
pub struct WrittenRecord {
    store: Store,
    name: OsString,
    /// The copy of an append's bytes kept beside the record.
    kept: Option<OsString>,
}

impl WrittenRecord {
    /// Removes the record (what it covers is done), then its kept bytes. Best effort: a leftover
    /// record is handled by recovery (a complete append is kept, a temp file already gone is just
    /// dropped), leftover kept bytes without a record are swept.
    pub fn finish(self) {
        let _ = self.store.remove(&self.name);
        if let Some(kept) = &self.kept {
            let _ = self.store.remove(kept);
        }
    }

    /// Where the record is (for tests).
    pub fn path(&self) -> PathBuf {
        self.store.path().join(&self.name)
    }
}

/// Where the bytes of the append recorded as `record` are kept: `<stem>.bytes` beside
/// `<stem>.json`, so a record can never name any other file.
fn kept_bytes_name(record: &OsStr) -> OsString {
    Path::new(record)
        .with_extension(KEPT_EXTENSION)
        .into_os_string()
}

const KEPT_EXTENSION: &str = "bytes";

impl Journal {
    /// The journal at `<data>/<rel>` (e.g. `journal/<sha256 of the root>`); its key is kept in
    /// the directory above.
    pub fn new(data: Arc<DataDir>, rel: impl Into<PathBuf>) -> Self {
        Self {
            store: Store::new(data, rel.into()),
        }
    }

    pub fn dir(&self) -> PathBuf {
        self.store.path()
    }

    /// Writes and fsyncs `record` under a fresh name; when `kept` holds any bytes (what a
    /// change's in-place appends add, in order), a copy of them beside it first (written and
    /// fsynced before the record), removed with the record.
    fn write_with_kept(&self, record: &Record, kept: &[&[u8]]) -> io::Result<WrittenRecord> {
        if kept.iter().all(|bytes| bytes.is_empty()) {
            return self.write(record, Durability::Fsynced);
        }
        let name = fresh_name(record.pid());
        let kept_name = kept_bytes_name(&name);
        let written = self.store.create(&kept_name).and_then(|mut f| {
            for bytes in kept {
                f.write_all(bytes)?;
            }
            f.sync_all()
        });
        match written.and_then(|()| self.write_as(&name, record, Durability::Fsynced)) {
            Ok(entry) => Ok(WrittenRecord {
                kept: Some(kept_name),
                ..entry
            }),
            Err(e) => {
                let _ = self.store.remove(&kept_name);
                Err(e)
            }
        }
    }

    /// Writes `record` as the new file `name`, sealed, as it is serialised (a record of any size
    /// takes no more memory than the record itself); `fsync`ed when `durable`.
    fn write_record(&self, name: &OsStr, record: &Record, durable: bool) -> io::Result<()> {
        self.store.write_sealed_with(name, durable, &mut |out| {
            serde_json::to_writer(out, record).map_err(io::Error::other)
        })
    }

    /// Writes `record` under a fresh name, creating the directory if needed.
    fn write(&self, record: &Record, durability: Durability) -> io::Result<WrittenRecord> {
        self.write_as(&fresh_name(record.pid()), record, durability)
    }

    /// Writes `record`, sealed, as `name` (a [`fresh_name`]), creating the directory if needed.
    fn write_as(
        &self,
        name: &OsStr,
        record: &Record,
        durability: Durability,
    ) -> io::Result<WrittenRecord> {
        match durability {
            Durability::PageCache => self.write_record(name, record, false)?,
            Durability::Fsynced => {
                let mut partial = OsString::from(".");
                partial.push(name);
                partial.push(".partial");
                self.write_record(&partial, record, true)?;
                if let Err(e) = self.store.rename(&partial, name) {
                    let _ = self.store.remove(&partial);
                    return Err(e);
                }
                self.store.sync();
            }
        }
        Ok(WrittenRecord {
            store: self.store.clone(),
            name: name.to_owned(),
            kept: None,
        })
    }

    /// Makes `record` the state of `entry`'s record (written [`Durability::Fsynced`]),
    /// atomically and durably: one sealed section appended to it and `fdatasync`'d (see
    /// `store.rs`). Its name is durable since it was written, so no directory sync is needed;
    /// a section cut short by a kill or a power cut reads as the state before. On failure the
    /// record is as it was (or gone).
    fn rewrite_durable(&self, entry: &WrittenRecord, record: &Record) -> io::Result<()> {
        self.store.append_sealed_with(&entry.name, &mut |out| {
            serde_json::to_writer(out, record).map_err(io::Error::other)
        })
    }

    /// Rewrites the record at `entry_path` with the body `body`, sealed (tests stage crashes
    /// with it).
    #[cfg(test)]
    pub fn rewrite(&self, entry_path: &Path, body: &[u8]) {
        let name = entry_path.file_name().unwrap();
        let _ = self.store.remove(name);
        self.store.write_sealed(name, body, false).unwrap();
    }

    /// Appends `body` to the record at `entry_path` as its new state, as the commit point does
    /// (tests stage kills in it with it).
    #[cfg(test)]
    pub fn append_state(&self, entry_path: &Path, body: &[u8]) {
        let name = entry_path.file_name().unwrap();
        self.store
            .append_sealed_with(name, &mut |out| out.write_all(body))
            .unwrap();
    }

    /// The body of the record at `entry_path`, if it is sealed and ours (for tests).
    #[cfg(test)]
    pub fn read(&self, entry_path: &Path) -> Option<Vec<u8>> {
        self.store.read_sealed(entry_path.file_name()?)
    }

    /// How many records the journal holds (for tests).
    #[cfg(test)]
    pub fn record_count(&self) -> usize {
        self.store.names().map_or(0, |names| {
            names
                .iter()
                .filter(|n| n.to_string_lossy().ends_with(".json"))
                .count()
        })
    }
}

/// A fresh record name `<pid>-<time>-<n>.json`.
fn fresh_name(pid: u32) -> OsString {
    let stamp = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{pid}-{stamp:x}-{n}.json").into()
}

fn pid_of(name: &str) -> Option<u32> {
    name.trim_start_matches('.').split('-').next()?.parse().ok()
}

fn pid_alive(pid: Option<u32>) -> bool {
    pid.is_some_and(crate::paths::process::alive)
}

/// The directory a record names, opened as [`open_beneath_allowed`] does, if it is still the
/// recorded one (`dev`, `ino`); `None` when it is gone, elsewhere or another directory now.
fn open_recorded_dir(
    sandbox: &Sandbox,
    dir: &Path,
    dev: u64,
    ino: u64,
) -> io::Result<Option<crate::paths::Dir>> {
    let Ok(fd) = open_beneath_allowed(sandbox, dir) else {
        return Ok(None);
    };
    Ok((fsops::identity(&fsops::fstat(&fd)?) == (dev, ino)).then_some(fd))
}

/// Whether `dir` lies inside `sandbox`'s allowed trees, and not in a hidden one.
fn reaches(sandbox: &Sandbox, dir: &Path) -> bool {
    sandbox.anchor_of(dir).is_some() && !sandbox.is_hidden(dir)
}

/// Opens the directory `dir` beneath the allowed tree holding it (never a hidden one, never
/// through a link); `PermissionDenied` when it lies outside them all.
fn open_beneath_allowed(sandbox: &Sandbox, dir: &Path) -> io::Result<crate::paths::Dir> {
    match sandbox.anchor_of(dir) {
        Some(anchor) if !sandbox.is_hidden(dir) => fsops::open_dir(&anchor, dir, false),
        _ => Err(io::Error::from(io::ErrorKind::PermissionDenied)),
    }
}

#[cfg(test)]
mod append_tests;
#[cfg(test)]
mod recovery_tests;
#[cfg(test)]
mod temp_tests;
#[cfg(test)]
mod test_support;
