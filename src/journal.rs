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
//!   removed once the temp file is renamed into place or removed. It is written without fsync
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

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::datadir::DataDir;
use crate::paths::{fsops, trees, EntryKind, Sandbox};

pub mod commit;
mod commit_record;
mod made_dirs;
mod record;
mod record_names;
mod seal;
mod store;
mod tail;

use store::Store;

pub use made_dirs::MadeDirRecord;
pub use record::{AppendRecord, Record, RemovalRecord, TempRecord};
use tail::{roll_back_if_ours, Tail};

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

/// A written record; [`Entry::finish`] removes it.
#[derive(Debug)]
pub struct Entry {
    store: Store,
    name: OsString,
    /// The copy of an append's bytes kept beside the record.
    kept: Option<OsString>,
}

impl Entry {
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

    /// Writes and fsyncs an `append` record for appending `content` to `file` (at `path`) of
    /// `old_size` bytes, and a copy of `content` beside it (written and fsynced first, so a
    /// record that says `keptBytes` always has them) — as versions before the change executor
    /// did. `append_file` now appends in a commit record's step (`commit::StepAction::Append`);
    /// this writer stays for the tests of replaying the records such versions left.
    #[cfg(test)]
    pub fn begin(
        &self,
        path: &Path,
        file: &File,
        old_size: u64,
        content: &[u8],
    ) -> io::Result<Entry> {
        let (dev, ino) = fsops::fstat(file)?.identity();
        let record = Record::Append(AppendRecord {
            path: path.to_owned(),
            dev,
            ino,
            old_size,
            append_len: content.len() as u64,
            append_sha256: crate::hashing::sha256_hex(content),
            pid: std::process::id(),
            kept_bytes: true,
        });
        let name = fresh_name(record.pid());
        let kept = kept_bytes_name(&name);
        let written = self.store.create(&kept).and_then(|mut f| {
            f.write_all(content)?;
            f.sync_all()
        });
        let entry = written.and_then(|()| self.write_as(&name, &record, Durability::Fsynced));
        match entry {
            Ok(entry) => Ok(Entry {
                kept: Some(kept),
                ..entry
            }),
            Err(e) => {
                let _ = self.store.remove(&kept);
                Err(e)
            }
        }
    }

    /// Writes and fsyncs `record` under a fresh name; when `kept` holds any bytes (what a
    /// change's in-place appends add, in order), a copy of them beside it first (written and
    /// fsynced before the record), removed with the record.
    fn write_with_kept(&self, record: &Record, kept: &[&[u8]]) -> io::Result<Entry> {
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
            Ok(entry) => Ok(Entry {
                kept: Some(kept_name),
                ..entry
            }),
            Err(e) => {
                let _ = self.store.remove(&kept_name);
                Err(e)
            }
        }
    }

    /// Records (not fsynced) that the temp file `temp` is about to be created in the directory
    /// `dir` (canonical path `dir_path`). `None` when the record cannot be written (read-only
    /// data dir): the write goes on without one.
    pub fn begin_temp(&self, dir_path: &Path, dir: BorrowedFd<'_>, temp: &OsStr) -> Option<Entry> {
        self.begin_temp_in_made_dirs(dir_path, dir, temp, Vec::new())
    }

    /// [`Journal::begin_temp`] for a temp file in directories made for it (`made_dirs`), which
    /// recovery removes too, if they are still empty.
    pub fn begin_temp_in_made_dirs(
        &self,
        dir_path: &Path,
        dir: BorrowedFd<'_>,
        temp: &OsStr,
        made_dirs: Vec<MadeDirRecord>,
    ) -> Option<Entry> {
        let (dir_dev, dir_ino) = fsops::identity(&fsops::fstat(dir).ok()?);
        let record = Record::Temp(TempRecord {
            dir: dir_path.to_owned(),
            dir_dev,
            dir_ino,
            name: PathBuf::from(temp),
            pid: std::process::id(),
            made_dirs,
        });
        self.write(&record, Durability::PageCache).ok()
    }

    /// Runs `work`, which creates the temp file `temp` in `dir` (canonical path `dir_path`) and
    /// then renames it away or removes it, under a temp record (see [`Journal::begin_temp`]).
    /// The record is removed afterwards unless the temp file is still there (its removal failed:
    /// the next `Workspace` removes it).
    pub fn with_temp<T, E>(
        &self,
        dir_path: &Path,
        dir: BorrowedFd<'_>,
        temp: &OsStr,
        work: impl FnOnce() -> Result<T, E>,
    ) -> Result<T, E> {
        let entry = self.begin_temp(dir_path, dir, temp);
        let result = work();
        if let Some(entry) = entry {
            if result.is_ok() || matches!(fsops::lstat_at(dir, temp), Ok(None)) {
                entry.finish();
            }
        }
        result
    }

    /// Runs `work`, which removes the entry `name` of `dir` (canonical path `dir_path`) entry
    /// by entry after it was archived or copied, under a removal record: should the process be
    /// killed meanwhile, the next `Workspace` removes what it left under its temp names.
    pub fn with_removal<T>(
        &self,
        dir_path: &Path,
        dir: BorrowedFd<'_>,
        name: &OsStr,
        work: impl FnOnce() -> T,
    ) -> T {
        let entry = fsops::fstat(dir).ok().and_then(|stat| {
            let (dir_dev, dir_ino) = fsops::identity(&stat);
            let record = Record::Removal(RemovalRecord {
                dir: dir_path.to_owned(),
                dir_dev,
                dir_ino,
                name: PathBuf::from(name),
                pid: std::process::id(),
            });
            self.write(&record, Durability::PageCache).ok()
        });
        let result = work();
        if let Some(entry) = entry {
            entry.finish();
        }
        result
    }

    /// Writes `record` as the new file `name`, sealed, as it is serialised (a record of any size
    /// takes no more memory than the record itself); `fsync`ed when `durable`.
    fn write_record(&self, name: &OsStr, record: &Record, durable: bool) -> io::Result<()> {
        self.store.write_sealed_with(name, durable, &mut |out| {
            serde_json::to_writer(out, record).map_err(io::Error::other)
        })
    }

    /// Writes `record` under a fresh name, creating the directory if needed.
    fn write(&self, record: &Record, durability: Durability) -> io::Result<Entry> {
        self.write_as(&fresh_name(record.pid()), record, durability)
    }

    /// Writes `record`, sealed, as `name` (a [`fresh_name`]), creating the directory if needed.
    fn write_as(&self, name: &OsStr, record: &Record, durability: Durability) -> io::Result<Entry> {
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
        Ok(Entry {
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
    fn rewrite_durable(&self, entry: &Entry, record: &Record) -> io::Result<()> {
        self.store.append_sealed_with(&entry.name, &mut |out| {
            serde_json::to_writer(out, record).map_err(io::Error::other)
        })
    }

    /// Replays every record left by a crash (cheap when the directory is missing or empty), then
    /// removes kept append bytes whose record is gone (see [`Journal::recover_all`]).
    pub fn recover(&self, sandbox: &Sandbox, aftermath: &dyn commit::Aftermath) -> Vec<Recovered> {
        self.recover_all(sandbox, aftermath).outcomes
    }

    /// Replays every record left by a crash, under the journal's recovery lock: one recovery at
    /// a time per journal (data directory and root), across processes and the workspaces of one
    /// process alike; the next one finds what this one left. Only records we wrote (sealed, with
    /// plain names) are acted on, and only where `sandbox` reaches all a record covers: one it
    /// does not is left whole and returned as [`Pending`]. `aftermath` performs the sequel of a
    /// change of many entries that recovery finishes (see [`commit`]) unless it was done
    /// already — should it fail, the record stays for the next recovery — and discards the trash
    /// archives made for one it undoes. Nothing is done when the
    /// lock cannot be taken (a data directory that cannot be written): the records stay.
    pub fn recover_all(&self, sandbox: &Sandbox, aftermath: &dyn commit::Aftermath) -> Recovery {
        let mut recovery = Recovery::default();
        let Ok(Some(_lock)) = self.store.lock_recovery() else {
            return recovery;
        };
        let Ok(names) = self.store.names() else {
            return recovery;
        };
        // Changes of many entries first: until one is undone or finished, the temp names it lists
        // may hold a user's displaced file, which a temp record must not remove.
        let (commits, others): (Vec<_>, Vec<_>) = names.into_iter().partition(|name| {
            self.store
                .peek(name, record::COMMIT_HEAD.len())
                .is_some_and(|head| head == record::COMMIT_HEAD)
        });
        // The temp names of changes left whole: their temp records stay with them.
        let mut held: HashSet<(PathBuf, OsString)> = HashSet::new();
        for name in commits.into_iter().chain(others) {
            let text = name.to_string_lossy();
            if text.starts_with('.') && text.ends_with(".partial") {
                // A record never completed: nothing was done under it.
                if !self.in_flight(pid_of(&text), &name) {
                    let _ = self.store.remove(&name);
                }
                continue;
            }
            if !text.ends_with(".json") {
                continue;
            }
            let record = self
                .store
                .read_sealed_with(&name, |body| Record::read(body).ok());
            // A young record of a live process (this one included: another workspace of it) may
            // be an operation in flight; one that does not open, a record still being written.
            let pid = record.as_ref().map(Record::pid).or_else(|| pid_of(&text));
            if self.in_flight(pid, &name) {
                recovery.outcomes.push(Recovered::Skipped);
                continue;
            }
            let Some(record) = record else {
                // Not ours, not whole (a record torn by the kill), or naming what is not a plain
                // name: never acted on, and dropped as the garbage it is.
                let _ = self.store.remove(&name);
                recovery.outcomes.push(Recovered::Untrusted);
                continue;
            };
            if let Some(out_of_reach) = record.dirs().into_iter().find(|d| !reaches(sandbox, d)) {
                if let Record::Commit(commit) = &record {
                    held.extend(
                        commit
                            .asides()
                            .map(|(dir, aside)| (dir.to_owned(), aside.to_owned())),
                    );
                }
                recovery.pending.push(Pending {
                    paths: record.paths(),
                    out_of_reach: out_of_reach.to_owned(),
                    record: name,
                });
                recovery.outcomes.push(Recovered::Deferred);
                continue;
            }
            if let Record::Temp(temp) = &record {
                if held.contains(&(temp.dir.clone(), temp.name.as_os_str().to_owned())) {
                    recovery.outcomes.push(Recovered::Deferred);
                    continue;
                }
            }
            let kept = kept_bytes_name(&name);
            let outcome = match &record {
                Record::Append(record) => replay(record, self.store.open_ours(&kept).ok(), sandbox),
                Record::Temp(record) => remove_temp(record, sandbox),
                Record::Commit(record) => {
                    commit::recover(record, self.store.open_ours(&kept).ok(), sandbox, aftermath)
                }
                Record::Removal(record) => finish_removal(record, sandbox),
            };
            if matches!(outcome, Ok(outcome) if outcome != Recovered::Deferred) {
                let _ = self.store.remove(&name);
                let _ = self.store.remove(&kept);
            }
            recovery
                .outcomes
                .push(outcome.unwrap_or(Recovered::LeftAlone));
        }
        self.sweep_kept_bytes();
        self.store.sync();
        recovery
    }

    /// Whether the record `pending` names is still in the journal (no workspace finished it).
    pub fn holds(&self, pending: &Pending) -> bool {
        self.store.exists(&pending.record)
    }

    /// Removes kept append bytes without a record: a crash between writing them and the
    /// record, or a record removed but not its copy. Those of a live young process may be an
    /// append about to be recorded and stay.
    fn sweep_kept_bytes(&self) {
        let Ok(names) = self.store.names() else {
            return;
        };
        for name in names {
            let path = Path::new(&name);
            if path.extension() != Some(OsStr::new(KEPT_EXTENSION)) {
                continue;
            }
            let record = path.with_extension("json");
            if self.store.exists(record.as_os_str())
                || self.in_flight(pid_of(&name.to_string_lossy()), &name)
            {
                continue;
            }
            let _ = self.store.remove(&name);
        }
    }

    /// Whether the record `name` of `pid` may belong to an operation still in flight: `pid` is
    /// alive and the record is younger than [`LIVE_GRACE`].
    fn in_flight(&self, pid: Option<u32>, name: &OsStr) -> bool {
        pid_alive(pid) && self.store.age(name).is_none_or(|a| a < LIVE_GRACE)
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

/// Applies one append record to its file, with the copy of the appended bytes kept beside the
/// record (`kept`, when there is one); `Err` only for an I/O failure worth retrying next time.
pub fn replay(
    record: &AppendRecord,
    kept: Option<File>,
    sandbox: &Sandbox,
) -> io::Result<Recovered> {
    // Reached beneath the allowed tree holding it without following any symlink, as every user
    // path is.
    let (Some(parent), Some(name)) = (record.path.parent(), record.path.file_name()) else {
        return Ok(Recovered::LeftAlone);
    };
    let Ok(dir) = open_beneath_allowed(sandbox, parent) else {
        return Ok(Recovered::LeftAlone);
    };
    let Ok(mut file) = fsops::open_for_update(dir.as_fd(), name) else {
        return Ok(Recovered::LeftAlone);
    };
    let stat = fsops::fstat(&file)?;
    if stat.kind() != EntryKind::File || stat.identity() != (record.dev, record.ino) {
        return Ok(Recovered::LeftAlone);
    }
    let Some(ours) = kept_bytes(record, kept)? else {
        let complete = stat.size == record.old_size + record.append_len
            && tail_sha256(&mut file, record.old_size)? == record.append_sha256;
        return Ok(if complete {
            Recovered::Complete
        } else {
            Recovered::LeftAlone
        });
    };
    Ok(
        match roll_back_if_ours(&file, record.old_size, ours, record.append_len, true)? {
            Tail::Whole => Recovered::Complete,
            Tail::CutShort => Recovered::RolledBack,
            Tail::Absent | Tail::Other => Recovered::LeftAlone,
        },
    )
}

/// The kept copy of the appended bytes, opened at its start, if the record has one and it is
/// intact: exactly `appendLen` bytes hashing to `appendSha256` (a copy torn by a power cut
/// proves nothing).
fn kept_bytes(record: &AppendRecord, kept: Option<File>) -> io::Result<Option<File>> {
    let (true, Some(mut copy)) = (record.kept_bytes, kept) else {
        return Ok(None);
    };
    let meta = copy.metadata()?;
    if !meta.is_file()
        || meta.len() != record.append_len
        || crate::hashing::sha256_reader(&mut copy)? != record.append_sha256
    {
        return Ok(None);
    }
    copy.rewind()?;
    Ok(Some(copy))
}

fn tail_sha256(file: &mut File, from: u64) -> io::Result<String> {
    file.seek(SeekFrom::Start(from))?;
    crate::hashing::sha256_reader(file)
}

/// Removes the temp entry a crashed write, copy or restore left behind, if it is still ours: a
/// temp name (one component: an atomic write's or a cross-file-system move's temp file or tree,
/// or a restore's temp root) in the recorded directory, opened from `/` without following any
/// symlink and still the same dev and ino. It goes as our own temp trees do (see
/// [`trees::Removal::OWN_TEMP`]): never following a link, read-only directories made writable
/// first. `Err` only for an I/O failure worth retrying next time.
pub fn remove_temp(record: &TempRecord, sandbox: &Sandbox) -> io::Result<Recovered> {
    let name = record.name.as_os_str();
    let ours = crate::trash::is_restore_temp_name(name) || fsops::is_temp_name(name);
    if name.as_encoded_bytes().contains(&b'/') || !ours {
        return Ok(Recovered::LeftAlone);
    }
    let Some(dir) = open_recorded_dir(sandbox, &record.dir, record.dir_dev, record.dir_ino)? else {
        return Ok(Recovered::LeftAlone);
    };
    // What a checked removal of it moved to its doomed name is ours too (see `commit.rs`).
    let mut removed = false;
    for name in [name.to_owned(), fsops::doomed_name(name)] {
        match trees::remove_tree_at(dir.as_fd(), &name, trees::Removal::OWN_TEMP) {
            Ok(_) => removed = true,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    made_dirs::remove_recorded(&record.made_dirs, sandbox);
    Ok(if removed {
        Recovered::TempRemoved
    } else {
        Recovered::LeftAlone
    })
}

/// Finishes a removal a kill cut short: what its process left under its temp names — in the
/// recorded directory (the entry itself, set aside) and anywhere in what is left of the entry's
/// tree — is removed (it was archived or copied before it was set aside). Nothing else is
/// touched; links are never followed.
pub fn finish_removal(record: &RemovalRecord, sandbox: &Sandbox) -> io::Result<Recovered> {
    let Some(dir) = open_recorded_dir(sandbox, &record.dir, record.dir_dev, record.dir_ino)? else {
        return Ok(Recovered::LeftAlone);
    };
    let mut removed = false;
    let mut prefix = b".".to_vec();
    prefix.extend_from_slice(record.name.as_os_str().as_encoded_bytes());
    prefix.push(b'.');
    for found in fsops::list_names(dir.as_fd())? {
        let ours = fsops::is_temp_name_of(&found, record.pid)
            && found.as_encoded_bytes().starts_with(&prefix);
        if ours && trees::remove_tree_at(dir.as_fd(), &found, trees::Removal::OWN_TEMP).is_ok() {
            removed = true;
        }
    }
    if let Ok(tree) = fsops::open_subdir(dir.as_fd(), record.name.as_os_str()) {
        removed |= sweep_temps(tree, record.pid, 0);
    }
    Ok(if removed {
        Recovered::TempRemoved
    } else {
        Recovered::LeftAlone
    })
}

/// Removes the temp entries process `pid` left in `dir` and the directories beneath it (never
/// through a link); whether any went.
fn sweep_temps(dir: std::os::fd::OwnedFd, pid: u32, depth: usize) -> bool {
    let Ok(names) = fsops::list_names(dir.as_fd()) else {
        return false;
    };
    let mut removed = false;
    for name in names {
        if fsops::is_temp_name_of(&name, pid) {
            removed |= trees::remove_tree_at(dir.as_fd(), &name, trees::Removal::OWN_TEMP).is_ok();
        } else if depth < 4096 {
            if let Ok(sub) = fsops::open_subdir(dir.as_fd(), &name) {
                removed |= sweep_temps(sub, pid, depth + 1);
            }
        }
    }
    removed
}

/// The directory a record names, opened as [`open_beneath_allowed`] does, if it is still the
/// recorded one (`dev`, `ino`); `None` when it is gone, elsewhere or another directory now.
fn open_recorded_dir(
    sandbox: &Sandbox,
    dir: &Path,
    dev: u64,
    ino: u64,
) -> io::Result<Option<std::os::fd::OwnedFd>> {
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
fn open_beneath_allowed(sandbox: &Sandbox, dir: &Path) -> io::Result<std::os::fd::OwnedFd> {
    match sandbox.anchor_of(dir) {
        Some(anchor) if !sandbox.is_hidden(dir) => fsops::open_dir(&anchor, dir, false),
        _ => Err(io::Error::from(io::ErrorKind::PermissionDenied)),
    }
}

#[cfg(test)]
mod recovery_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::{self, OpenOptions};
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::fs::{symlink, PermissionsExt};

    /// A journal at `<base>/journal/x` in the data directory `base`.
    fn journal_in(base: &Path) -> Journal {
        let base = fs::canonicalize(base).unwrap();
        Journal::new(Arc::new(DataDir::new(base)), "journal/x")
    }

    /// No allowedPaths: every path is reachable.
    fn anywhere() -> Sandbox {
        Sandbox::new(PathBuf::from("/"), None, vec![])
    }

    /// For records that carry no sequel.
    fn no_sequel(_: &serde_json::Value) -> io::Result<()> {
        unreachable!("no record here carries a sequel")
    }

    fn kept_bytes_path(record: &Path) -> PathBuf {
        record.with_extension(KEPT_EXTENSION)
    }

    /// A pid no process has (above any `pid_max`): the writer of a record "died".
    const DEAD_PID: u32 = u32::MAX - 1;

    fn setup() -> (tempfile::TempDir, Journal, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let journal = journal_in(tmp.path());
        let file = tmp.path().join("f.txt");
        fs::write(&file, b"old").unwrap();
        (tmp, journal, file)
    }

    /// Rewrites the record at `path` as if its writer were dead, in the current format (as it
    /// is: a record naming what recovery must refuse is kept as written).
    fn kill_writer(journal: &Journal, path: &Path) {
        let mut record: serde_json::Value =
            serde_json::from_slice(&journal.read(path).unwrap()).unwrap();
        record["pid"] = DEAD_PID.into();
        journal.rewrite(path, &serde_json::to_vec(&record).unwrap());
    }

    fn begin(journal: &Journal, file: &Path, content: &[u8]) -> PathBuf {
        let f = File::open(file).unwrap();
        let entry = journal.begin(file, &f, 3, content).unwrap();
        kill_writer(journal, &entry.path());
        entry.path()
    }

    #[test]
    fn record_fields() {
        let (_tmp, journal, file) = setup();
        let f = File::open(&file).unwrap();
        let entry = journal.begin(&file, &f, 3, b"new").unwrap();
        let bytes = journal.read(&entry.path()).unwrap();
        let Record::Append(record) = Record::parse(&bytes).unwrap() else {
            panic!("not an append record")
        };
        assert!(String::from_utf8(bytes)
            .unwrap()
            .contains(r#""kind":"append""#));
        assert_eq!(record.path, file);
        assert_eq!(record.ino, f.metadata().unwrap().ino());
        assert_eq!((record.old_size, record.append_len), (3, 3));
        assert_eq!(record.append_sha256, crate::hashing::sha256_hex(b"new"));
        assert_eq!(record.pid, std::process::id());
        assert!(record.kept_bytes);
        assert_eq!(fs::read(kept_bytes_path(&entry.path())).unwrap(), b"new");
        // A fresh record of this (live) process is not replayed.
        assert_eq!(
            journal.recover(&anywhere(), &no_sequel),
            vec![Recovered::Skipped]
        );
        entry.finish();
        assert_eq!(fs::read_dir(journal.dir()).unwrap().count(), 0);
        assert!(journal.recover(&anywhere(), &no_sequel).is_empty());
    }

    /// Rewrites the append record at `rec` in a format before kept bytes: no `keptBytes`, and
    /// (the oldest) no `kind`; the kept copy is gone.
    fn as_old_record(journal: &Journal, rec: &Path, with_kind: bool) {
        let Record::Append(record) = Record::parse(&journal.read(rec).unwrap()).unwrap() else {
            panic!("not an append record")
        };
        let mut old = serde_json::to_value(Record::Append(record)).unwrap();
        let fields = old.as_object_mut().unwrap();
        fields.remove("keptBytes");
        if !with_kind {
            fields.remove("kind");
        }
        journal.rewrite(rec, &serde_json::to_vec(&old).unwrap());
        fs::remove_file(kept_bytes_path(rec)).unwrap();
    }

    #[test]
    fn records_without_kept_bytes_keep_a_complete_append_and_cut_nothing() {
        for with_kind in [false, true] {
            let (_tmp, journal, file) = setup();
            let rec = begin(&journal, &file, b"new");
            as_old_record(&journal, &rec, with_kind);
            fs::write(&file, b"oldnew").unwrap();
            assert_eq!(
                journal.recover(&anywhere(), &no_sequel),
                vec![Recovered::Complete]
            );
            assert_eq!(fs::read(&file).unwrap(), b"oldnew");
            assert!(!rec.exists());
            // Without our bytes, a partial append cannot be told from someone else's.
            let rec = begin(&journal, &file, b"new");
            as_old_record(&journal, &rec, with_kind);
            fs::write(&file, b"oldne").unwrap();
            assert_eq!(
                journal.recover(&anywhere(), &no_sequel),
                vec![Recovered::LeftAlone]
            );
            assert_eq!(fs::read(&file).unwrap(), b"oldne");
            assert_eq!(records(&journal), 0);
        }
    }

    #[test]
    fn a_missing_or_torn_copy_of_our_bytes_proves_nothing() {
        let (_tmp, journal, file) = setup();
        let rec = begin(&journal, &file, b"new");
        fs::remove_file(kept_bytes_path(&rec)).unwrap();
        append(&file, b"ne");
        assert_eq!(
            journal.recover(&anywhere(), &no_sequel),
            vec![Recovered::LeftAlone]
        );
        assert_eq!(fs::read(&file).unwrap(), b"oldne");
        // A copy of the right length that is not what was appended (a power cut's zeros).
        let (_tmp, journal, file) = setup();
        let rec = begin(&journal, &file, b"new");
        fs::write(kept_bytes_path(&rec), b"\0\0\0").unwrap();
        append(&file, b"\0\0");
        assert_eq!(
            journal.recover(&anywhere(), &no_sequel),
            vec![Recovered::LeftAlone]
        );
        assert_eq!(fs::read(&file).unwrap(), b"old\0\0");
        assert_eq!(records(&journal), 0);
    }

    #[test]
    fn kept_bytes_without_a_record_are_swept_unless_their_writer_is_alive() {
        let (_tmp, journal, file) = setup();
        let rec = begin(&journal, &file, b"new");
        // A dead writer's copy (the name says whose it is), its record gone.
        let dead = journal
            .dir()
            .join(format!("{DEAD_PID}-1-2.{KEPT_EXTENSION}"));
        fs::rename(kept_bytes_path(&rec), &dead).unwrap();
        fs::remove_file(&rec).unwrap();
        let live = journal
            .dir()
            .join(format!("{}-1-1.{KEPT_EXTENSION}", std::process::id()));
        fs::write(&live, b"being recorded").unwrap();
        assert!(journal.recover(&anywhere(), &no_sequel).is_empty());
        assert!(!dead.exists() && live.exists());
    }

    #[test]
    fn recover_complete() {
        let (_tmp, journal, file) = setup();
        let rec = begin(&journal, &file, b"new");
        fs::write(&file, b"oldnew").unwrap();
        assert_eq!(
            journal.recover(&anywhere(), &no_sequel),
            vec![Recovered::Complete]
        );
        assert_eq!(fs::read(&file).unwrap(), b"oldnew");
        assert!(!rec.exists());
    }

    /// Appends `bytes` to `file` as another process would.
    fn append(file: &Path, bytes: &[u8]) {
        OpenOptions::new()
            .append(true)
            .open(file)
            .unwrap()
            .write_all(bytes)
            .unwrap();
    }

    #[test]
    fn a_cut_short_append_with_nothing_after_it_is_rolled_back() {
        let (_tmp, journal, file) = setup();
        let rec = begin(&journal, &file, b"new");
        append(&file, b"ne");
        assert_eq!(
            journal.recover(&anywhere(), &no_sequel),
            vec![Recovered::RolledBack]
        );
        assert_eq!(fs::read(&file).unwrap(), b"old");
        assert_eq!(records(&journal), 0);
        assert!(!rec.exists());
    }

    #[test]
    fn what_others_appended_after_a_cut_short_append_is_never_cut() {
        // The user appends after the crash: the file is the old bytes, a prefix of ours, then
        // theirs — as long as ours (an exact fit) or shorter.
        for theirs in [
            &b"Z"[..],
            b"ab",
            b"
",
        ] {
            let (_tmp, journal, file) = setup();
            begin(&journal, &file, b"0123456789");
            append(&file, b"0123");
            append(&file, theirs);
            let expected = [&b"old0123"[..], theirs].concat();
            assert_eq!(
                journal.recover(&anywhere(), &no_sequel),
                vec![Recovered::LeftAlone]
            );
            assert_eq!(fs::read(&file).unwrap(), expected);
            assert_eq!(records(&journal), 0);
        }
        let (_tmp, journal, file) = setup();
        begin(&journal, &file, b"new");
        append(&file, b"ne");
        append(&file, b"Z");
        assert_eq!(
            journal.recover(&anywhere(), &no_sequel),
            vec![Recovered::LeftAlone]
        );
        assert_eq!(fs::read(&file).unwrap(), b"oldneZ");
    }

    #[test]
    fn bytes_that_are_not_a_prefix_of_ours_are_left_alone() {
        let (_tmp, journal, file) = setup();
        begin(&journal, &file, b"new");
        append(&file, b"\0\0\0");
        assert_eq!(
            journal.recover(&anywhere(), &no_sequel),
            vec![Recovered::LeftAlone]
        );
        assert_eq!(fs::read(&file).unwrap(), b"old\0\0\0");
        // Nothing of ours went through, and the user appended: theirs stays too.
        begin(&journal, &file, b"new");
        append(&file, b"x");
        assert_eq!(
            journal.recover(&anywhere(), &no_sequel),
            vec![Recovered::LeftAlone]
        );
        assert_eq!(fs::read(&file).unwrap(), b"old\0\0\0x");
    }

    #[test]
    fn an_append_that_never_began_leaves_the_file_as_it_is() {
        let (_tmp, journal, file) = setup();
        begin(&journal, &file, b"new");
        assert_eq!(
            journal.recover(&anywhere(), &no_sequel),
            vec![Recovered::LeftAlone]
        );
        assert_eq!(fs::read(&file).unwrap(), b"old");
        assert_eq!(records(&journal), 0);
    }

    #[test]
    fn recover_replaced_or_shorter_is_left_alone() {
        let (_tmp, journal, file) = setup();
        begin(&journal, &file, b"new");
        let other = file.with_extension("other");
        fs::write(&other, b"oldne").unwrap();
        fs::rename(&other, &file).unwrap();
        assert_eq!(
            journal.recover(&anywhere(), &no_sequel),
            vec![Recovered::LeftAlone]
        );
        assert_eq!(fs::read(&file).unwrap(), b"oldne");
        let (_tmp2, journal, file) = setup();
        begin(&journal, &file, b"new");
        fs::write(&file, b"o").unwrap();
        assert_eq!(
            journal.recover(&anywhere(), &no_sequel),
            vec![Recovered::LeftAlone]
        );
        assert_eq!(fs::read(&file).unwrap(), b"o");
        assert_eq!(fs::read_dir(journal.dir()).unwrap().count(), 0);
    }

    /// A journal and a canonical directory `d` for temp files.
    fn temp_setup() -> (tempfile::TempDir, Journal, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        let journal = journal_in(&base);
        let dir = base.join("d");
        fs::create_dir(&dir).unwrap();
        (tmp, journal, dir)
    }

    /// A temp record for `name` in `dir` whose writer is dead, and the record's path. `name` is
    /// created as a regular file first when `create`.
    fn crashed_temp(journal: &Journal, dir: &Path, name: &str, create: bool) -> PathBuf {
        if create {
            fs::write(dir.join(name), b"a whole copy").unwrap();
        }
        let fd = fsops::open_dir(Path::new("/"), dir, false).unwrap();
        let entry = journal
            .begin_temp(dir, fd.as_fd(), OsStr::new(name))
            .unwrap();
        kill_writer(journal, &entry.path());
        entry.path()
    }

    fn records(journal: &Journal) -> usize {
        fs::read_dir(journal.dir()).map_or(0, Iterator::count)
    }

    #[test]
    fn temp_record_fields() {
        let (_tmp, journal, dir) = temp_setup();
        let fd = fsops::open_dir(Path::new("/"), &dir, false).unwrap();
        let temp = fsops::temp_name(OsStr::new("f.txt"));
        let entry = journal.begin_temp(&dir, fd.as_fd(), &temp).unwrap();
        let bytes = journal.read(&entry.path()).unwrap();
        let Record::Temp(record) = Record::parse(&bytes).unwrap() else {
            panic!("not a temp record")
        };
        let meta = fs::metadata(&dir).unwrap();
        assert_eq!(record.dir, dir);
        assert_eq!((record.dir_dev, record.dir_ino), (meta.dev(), meta.ino()));
        assert_eq!(record.name.as_os_str(), temp);
        assert_eq!(record.pid, std::process::id());
        entry.finish();
        assert_eq!(records(&journal), 0);
    }

    #[test]
    fn a_dead_writers_temp_is_removed() {
        let (_tmp, journal, dir) = temp_setup();
        let name = ".f.txt.1234.0.agent-fs-tools.tmp";
        let rec = crashed_temp(&journal, &dir, name, true);
        fs::write(dir.join("f.txt"), b"keep").unwrap();
        assert_eq!(
            journal.recover(&anywhere(), &no_sequel),
            vec![Recovered::TempRemoved]
        );
        assert!(!dir.join(name).exists() && !rec.exists());
        assert_eq!(fs::read(dir.join("f.txt")).unwrap(), b"keep");
    }

    #[test]
    fn a_removal_cut_short_leaves_no_temp_of_its_process_and_nothing_else_goes() {
        let (_tmp, journal, dir) = temp_setup();
        let tree = dir.join("tree");
        fs::create_dir_all(tree.join("sub")).unwrap();
        let ours = format!(".f.txt.{DEAD_PID}.7.agent-fs-tools.tmp");
        let theirs = ".g.txt.12345.7.agent-fs-tools.tmp";
        fs::write(tree.join("sub").join(&ours), b"archived").unwrap();
        fs::write(tree.join("sub").join(theirs), b"another process's").unwrap();
        fs::write(tree.join("kept.txt"), b"not yet removed").unwrap();
        // The tree's own root, set aside before its rmdir.
        let root_aside = format!(".tree2.{DEAD_PID}.9.agent-fs-tools.tmp");
        fs::create_dir(dir.join(&root_aside)).unwrap();
        let own_aside = format!(".tree.{DEAD_PID}.3.agent-fs-tools.tmp");
        fs::write(dir.join(&own_aside), b"set aside").unwrap();
        let fd = fsops::open_dir(Path::new("/"), &dir, false).unwrap();
        let mut entry = None;
        journal.with_removal(&dir, fd.as_fd(), OsStr::new("tree"), || {
            // The record exists while the removal runs; keep a copy of it as a kill would.
            let name = fs::read_dir(journal.dir())
                .unwrap()
                .next()
                .unwrap()
                .unwrap()
                .path();
            entry = Some((name.clone(), fs::read(&name).unwrap()));
        });
        let (path, bytes) = entry.unwrap();
        fs::write(&path, bytes).unwrap();
        kill_writer(&journal, &path);
        assert_eq!(
            journal.recover(&anywhere(), &no_sequel),
            vec![Recovered::TempRemoved]
        );
        assert!(!tree.join("sub").join(&ours).exists());
        assert!(!dir.join(&own_aside).exists());
        assert!(
            tree.join("sub").join(theirs).exists(),
            "another process's temp stays"
        );
        assert_eq!(fs::read(tree.join("kept.txt")).unwrap(), b"not yet removed");
        assert!(
            dir.join(&root_aside).exists(),
            "only the recorded entry's own asides go"
        );
    }

    #[test]
    fn temp_names_tell_their_process() {
        let name = fsops::temp_name(OsStr::new("f.txt"));
        assert!(fsops::is_temp_name_of(&name, std::process::id()));
        assert!(!fsops::is_temp_name_of(&name, std::process::id() + 1));
        assert!(!fsops::is_temp_name_of(
            OsStr::new("f.txt"),
            std::process::id()
        ));
    }

    #[test]
    fn paths_that_are_not_utf8_are_journaled_as_bytes() {
        let (_tmp, journal, dir) = temp_setup();
        let odd = dir.join(crate::paths::names::from_bytes(b"caf\xe9"));
        fs::create_dir(&odd).unwrap();
        // An append to a file there is journaled and rolled back like any other.
        let file = odd.join(crate::paths::names::from_bytes(b"n\xffe.log"));
        fs::write(&file, b"old").unwrap();
        let rec = begin(&journal, &file, b"new");
        let stored = journal.read(&rec).unwrap();
        assert!(
            std::str::from_utf8(&fs::read(&rec).unwrap()).is_ok(),
            "the record stays text: JSON and its seal"
        );
        let Record::Append(record) = Record::parse(&stored).unwrap() else {
            panic!("not an append record")
        };
        assert_eq!(record.path, file);
        fs::write(&file, b"oldne").unwrap();
        assert_eq!(
            journal.recover(&anywhere(), &no_sequel),
            vec![Recovered::RolledBack]
        );
        assert_eq!(fs::read(&file).unwrap(), b"old");
        // A temp file of a name that is not UTF-8 is recorded and swept.
        let temp = fsops::temp_name(crate::paths::names::from_bytes(b"\xfe.txt"));
        fs::write(odd.join(&temp), b"a whole copy").unwrap();
        let fd = fsops::open_dir(Path::new("/"), &odd, false).unwrap();
        let entry = journal.begin_temp(&odd, fd.as_fd(), &temp).unwrap();
        kill_writer(&journal, &entry.path());
        assert_eq!(
            journal.recover(&anywhere(), &no_sequel),
            vec![Recovered::TempRemoved]
        );
        assert!(!odd.join(&temp).exists());
    }

    #[test]
    fn a_dead_restores_temp_tree_is_removed_without_following_links() {
        let (tmp, journal, dir) = temp_setup();
        let outside = tmp.path().join("outside");
        fs::create_dir(&outside).unwrap();
        fs::write(outside.join("keep.txt"), b"outside").unwrap();
        let temp = crate::trash::restore_temp_name();
        let root = dir.join(&temp);
        fs::create_dir_all(root.join("sub")).unwrap();
        fs::write(root.join("sub/f.txt"), b"half restored").unwrap();
        symlink(&outside, root.join("link")).unwrap();
        // The restore may already have given a directory its archived read-only mode (this
        // bites only when not running as root, which ignores modes).
        fs::set_permissions(root.join("sub"), fs::Permissions::from_mode(0o555)).unwrap();
        let fd = fsops::open_dir(Path::new("/"), &dir, false).unwrap();
        let entry = journal.begin_temp(&dir, fd.as_fd(), &temp).unwrap();
        kill_writer(&journal, &entry.path());
        assert_eq!(
            journal.recover(&anywhere(), &no_sequel),
            vec![Recovered::TempRemoved]
        );
        assert!(!root.exists() && records(&journal) == 0);
        assert_eq!(fs::read(outside.join("keep.txt")).unwrap(), b"outside");
        // A move's copied tree under a temp name goes too, read-only parts and all.
        let name = ".d.1234.0.agent-fs-tools.tmp";
        fs::create_dir_all(dir.join(name).join("inner")).unwrap();
        fs::set_permissions(
            dir.join(name).join("inner"),
            fs::Permissions::from_mode(0o555),
        )
        .unwrap();
        crashed_temp(&journal, &dir, name, false);
        assert_eq!(
            journal.recover(&anywhere(), &no_sequel),
            vec![Recovered::TempRemoved]
        );
        assert!(!dir.join(name).exists());
    }

    #[test]
    fn a_live_young_writers_temp_is_left_alone() {
        let (_tmp, journal, dir) = temp_setup();
        let name = ".f.txt.1234.0.agent-fs-tools.tmp";
        fs::write(dir.join(name), b"in flight").unwrap();
        let fd = fsops::open_dir(Path::new("/"), &dir, false).unwrap();
        let entry = journal
            .begin_temp(&dir, fd.as_fd(), OsStr::new(name))
            .unwrap();
        assert_eq!(
            journal.recover(&anywhere(), &no_sequel),
            vec![Recovered::Skipped]
        );
        assert!(dir.join(name).exists() && entry.path().exists());
    }

    #[test]
    fn a_gone_temp_only_drops_the_record() {
        let (_tmp, journal, dir) = temp_setup();
        let rec = crashed_temp(&journal, &dir, ".f.1.2.agent-fs-tools.tmp", false);
        assert_eq!(
            journal.recover(&anywhere(), &no_sequel),
            vec![Recovered::LeftAlone]
        );
        assert!(!rec.exists());
    }

    #[test]
    fn only_our_temp_names_are_ever_removed_and_links_never_followed() {
        let (_tmp, journal, dir) = temp_setup();
        // Not a temp name; a name leading out of the directory: refused as the record is read
        // (under a dead writer's name: a record that does not read is judged by its name).
        fs::write(dir.join("notes.txt"), b"user").unwrap();
        let refused = crashed_temp(&journal, &dir, "notes.txt", false);
        fs::rename(&refused, journal.dir().join(format!("{DEAD_PID}-9-1.json"))).unwrap();
        fs::write(dir.join(".x.1.2.agent-fs-tools.tmp"), b"user").unwrap();
        let sub = dir.join("sub");
        fs::create_dir(&sub).unwrap();
        let refused = crashed_temp(&journal, &sub, "../.x.1.2.agent-fs-tools.tmp", false);
        fs::rename(&refused, journal.dir().join(format!("{DEAD_PID}-9-2.json"))).unwrap();
        // A symlink under a temp name goes, its target stays; so does a linked directory's content.
        let target = dir.join("target.txt");
        fs::write(&target, b"user").unwrap();
        symlink(&target, dir.join(".l.1.2.agent-fs-tools.tmp")).unwrap();
        crashed_temp(&journal, &dir, ".l.1.2.agent-fs-tools.tmp", false);
        symlink(&sub, dir.join(".d.1.2.agent-fs-tools.tmp")).unwrap();
        fs::write(sub.join("kept.txt"), b"user").unwrap();
        crashed_temp(&journal, &dir, ".d.1.2.agent-fs-tools.tmp", false);
        let mut outcomes = journal.recover(&anywhere(), &no_sequel);
        outcomes.sort_by_key(|o| format!("{o:?}"));
        assert_eq!(
            outcomes,
            [
                vec![Recovered::TempRemoved; 2],
                vec![Recovered::Untrusted; 2]
            ]
            .concat()
        );
        assert_eq!(fs::read(dir.join("notes.txt")).unwrap(), b"user");
        assert_eq!(
            fs::read(dir.join(".x.1.2.agent-fs-tools.tmp")).unwrap(),
            b"user"
        );
        assert!(fs::symlink_metadata(dir.join(".l.1.2.agent-fs-tools.tmp")).is_err());
        assert!(fs::symlink_metadata(dir.join(".d.1.2.agent-fs-tools.tmp")).is_err());
        assert_eq!(fs::read(&target).unwrap(), b"user");
        assert_eq!(fs::read(sub.join("kept.txt")).unwrap(), b"user");
        assert_eq!(records(&journal), 0);
    }

    #[test]
    fn a_temp_reached_through_a_symlink_or_in_another_directory_is_kept() {
        let (_tmp, journal, dir) = temp_setup();
        let name = ".f.1.2.agent-fs-tools.tmp";
        // The recorded directory became a symlink to one holding such a name.
        let real = dir.join("real");
        fs::create_dir(&real).unwrap();
        let linked = dir.join("linked");
        fs::create_dir(&linked).unwrap();
        crashed_temp(&journal, &linked, name, false);
        fs::remove_dir(&linked).unwrap();
        symlink(&real, &linked).unwrap();
        fs::write(real.join(name), b"user").unwrap();
        // The recorded directory was replaced by another one (other inode).
        let replaced = dir.join("replaced");
        fs::create_dir(&replaced).unwrap();
        crashed_temp(&journal, &replaced, name, false);
        let other = dir.join("other");
        fs::create_dir(&other).unwrap();
        fs::write(other.join(name), b"user").unwrap();
        fs::remove_dir(&replaced).unwrap();
        fs::rename(&other, &replaced).unwrap();
        assert_eq!(
            journal.recover(&anywhere(), &no_sequel),
            vec![Recovered::LeftAlone; 2]
        );
        assert!(real.join(name).exists() && replaced.join(name).exists());
        assert_eq!(records(&journal), 0);
    }

    #[test]
    fn with_temp_keeps_the_record_only_while_the_temp_is_there() {
        let (_tmp, journal, dir) = temp_setup();
        let fd = fsops::open_dir(Path::new("/"), &dir, false).unwrap();
        let temp = OsStr::new(".f.1.2.agent-fs-tools.tmp");
        let during = journal.with_temp(&dir, fd.as_fd(), temp, || Ok::<_, ()>(records(&journal)));
        assert_eq!((during, records(&journal)), (Ok(1), 0));
        // Failed, temp removed: no record; failed, temp still there: the record stays for recovery.
        let failed: Result<(), ()> = journal.with_temp(&dir, fd.as_fd(), temp, || Err(()));
        assert_eq!((failed, records(&journal)), (Err(()), 0));
        let _ = journal.with_temp(&dir, fd.as_fd(), temp, || {
            fs::write(dir.join(temp), b"x").map_err(drop)?;
            Err::<(), ()>(())
        });
        assert_eq!(records(&journal), 1);
    }

    /// A record that looks right but was not written by us (unsealed, sealed under another key,
    /// or not this user's) is never acted on, and stays where it is.
    #[test]
    fn only_records_we_wrote_are_replayed() {
        let (tmp, journal, file) = setup();
        let rec = begin(&journal, &file, b"new");
        append(&file, b"ne");
        let body = journal.read(&rec).unwrap();
        // Under a dead writer's name (a record named for a live one is taken to be in flight).
        let planted = journal.dir().join(format!("{DEAD_PID}-1-9.json"));
        fs::rename(kept_bytes_path(&rec), kept_bytes_path(&planted)).unwrap();
        fs::remove_file(&rec).unwrap();
        let rec = planted;
        // Planted: the same body, unsealed.
        fs::write(&rec, &body).unwrap();
        assert_eq!(
            journal.recover(&anywhere(), &no_sequel),
            vec![Recovered::Untrusted]
        );
        assert_eq!(fs::read(&file).unwrap(), b"oldne");
        assert!(!rec.exists(), "dropped");
        // Sealed under another data directory's key.
        let other = journal_in(&tmp.path().join("other-data").tap_mkdir());
        other
            .store
            .write_sealed(OsStr::new("x.json"), &body, false)
            .unwrap();
        fs::copy(other.dir().join("x.json"), &rec).unwrap();
        fs::write(kept_bytes_path(&rec), b"new").unwrap();
        assert_eq!(
            journal.recover(&anywhere(), &no_sequel),
            vec![Recovered::Untrusted]
        );
        assert_eq!(fs::read(&file).unwrap(), b"oldne");
        // Ours again: replayed.
        fs::write(kept_bytes_path(&rec), b"new").unwrap();
        journal.rewrite(&rec, &body);
        assert_eq!(
            journal.recover(&anywhere(), &no_sequel),
            vec![Recovered::RolledBack]
        );
        assert_eq!(fs::read(&file).unwrap(), b"old");
    }

    /// Recovery acts only inside the allowed trees of the workspace recovering; a record it
    /// cannot finish there stays, whole, for a workspace whose sandbox reaches it.
    #[test]
    fn a_record_outside_the_allowed_trees_stays_for_a_workspace_that_reaches_it() {
        let (tmp, journal, file) = setup();
        let rec = begin(&journal, &file, b"new");
        append(&file, b"ne");
        let elsewhere = fs::canonicalize(tmp.path()).unwrap().join("elsewhere");
        fs::create_dir(&elsewhere).unwrap();
        let bounded = Sandbox::new(elsewhere.clone(), Some(vec![elsewhere]), vec![]);
        let recovery = journal.recover_all(&bounded, &no_sequel);
        assert_eq!(recovery.outcomes, vec![Recovered::Deferred]);
        assert_eq!(fs::read(&file).unwrap(), b"oldne");
        assert!(rec.exists() && kept_bytes_path(&rec).exists());
        let [pending] = &recovery.pending[..] else {
            panic!("{:?}", recovery.pending)
        };
        assert_eq!(pending.paths, vec![file.clone()]);
        assert!(pending.covers(&file) && pending.covers(file.parent().unwrap()));
        assert!(!pending.covers(&file.with_extension("other")));
        assert!(journal.holds(pending));
        // The data directory's own journal is hidden from the tools: never reached either.
        let hidden = Sandbox::new(
            PathBuf::from("/"),
            None,
            vec![file.parent().unwrap().into()],
        );
        assert_eq!(
            journal.recover(&hidden, &no_sequel),
            vec![Recovered::Deferred]
        );
        assert_eq!(
            journal.recover(&anywhere(), &no_sequel),
            vec![Recovered::RolledBack]
        );
        assert_eq!(fs::read(&file).unwrap(), b"old");
        assert!(!rec.exists() && !journal.holds(pending));
    }

    trait TapMkdir {
        fn tap_mkdir(self) -> Self;
    }

    impl TapMkdir for PathBuf {
        fn tap_mkdir(self) -> Self {
            fs::create_dir_all(&self).unwrap();
            self
        }
    }

    #[test]
    fn with_temp_goes_on_when_the_journal_cannot_be_written() {
        let (_tmp, _journal, dir) = temp_setup();
        // The journal directory cannot be created: its parent is a file.
        fs::write(dir.join("file"), b"").unwrap();
        let journal = Journal::new(Arc::new(DataDir::new(dir.join("file"))), "journal");
        let fd = fsops::open_dir(Path::new("/"), &dir, false).unwrap();
        let temp = OsStr::new(".f.1.2.agent-fs-tools.tmp");
        assert_eq!(
            journal.with_temp(&dir, fd.as_fd(), temp, || Ok::<_, ()>(7)),
            Ok(7)
        );
    }
}
