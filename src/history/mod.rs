//! The history of changes (SPEC §13): every call that changed something is one record, kept in the
//! data directory per workspace (`history/<sha256 of the root>/changes.jsonl`, with the deltas
//! that take edits back beside it in `deltas/`), so it survives restarts. Records are appended as
//! whole lines through the data directory's descriptor and never rewritten: an undo is a record
//! of its own that names the changes it took back (`undoes`), and the state of every change —
//! undone or not, by what — is folded from the log when it is read.
//!
//! Records are written without fsync, after the change itself: a killed process keeps them (the
//! page cache), a power cut may lose the newest — the change stays, only its undo is lost. A
//! change made as one journaled commit (undo, `apply_patch`) carries its record, prepared before
//! its commit point, in its journal record, so that a kill between the commit and the append
//! cannot lose it: crash recovery that finishes the change appends it ([`History::append_once`]).
//! What a record needs to be undone is kept elsewhere: the trash keeps what a change destroyed or
//! replaced, a delta what an edit or an append replaced. `trashClear` removes archives, and the
//! changes that need them then report `undoable: false` with the reason.

mod record;

use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

pub use record::{ChangeRecord, FileRecord};

use crate::change::{Action, FileChange};
use crate::datadir::DataDir;
use crate::paths::fsops;

/// Name of the log in a workspace's history directory.
const LOG: &str = "changes.jsonl";
/// Directory of the deltas that take edits back.
const DELTAS: &str = "deltas";

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Who made a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Author {
    pub session_id: String,
    pub run_id: String,
    pub agent_name: String,
}

/// What the history says of a change besides its files, fixed before the change is made — its
/// id too, so that a record carried in the change's journal record and the id the host is given
/// are the same.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heading {
    pub id: String,
    /// The tool as the host named it, or `undo`.
    pub tool: String,
    /// `formatCall` of the call.
    pub summary: String,
    pub author: Author,
    /// The changes an undo takes back.
    pub undoes: Vec<String>,
}

/// One workspace's history.
pub struct History {
    data: Arc<DataDir>,
    rel: PathBuf,
    log: Mutex<Option<File>>,
}

/// A change as the history shows it: its record and its state.
#[derive(Debug, Clone)]
pub struct Entry {
    pub record: ChangeRecord,
    /// The change that took this one back, while it stands.
    pub undone_by: Option<String>,
    /// Why it cannot be taken back, if it cannot.
    pub not_undoable: Option<String>,
    /// It could be taken back but for archives no longer in the trash.
    pub only_archives_missing: bool,
}

impl History {
    /// The history at `<data>/<rel>` (e.g. `history/<sha256 of the root>`).
    pub fn new(data: Arc<DataDir>, rel: impl Into<PathBuf>) -> Self {
        Self {
            data,
            rel: rel.into(),
            log: Mutex::new(None),
        }
    }

    /// A fresh change id: unique, and ordered by time within one process.
    pub fn new_id() -> String {
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_micros();
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        format!("c{stamp:x}-{:x}-{n:x}", std::process::id())
    }

    /// Appends a change: one record, its deltas stored first. Returns the change's id.
    pub fn record(&self, heading: &Heading, files: &[FileChange]) -> io::Result<String> {
        let record = self.prepare(heading, files)?;
        self.append(&record)?;
        Ok(record.id)
    }

    /// The record of a change about to be made, its deltas stored (what a change journaled as
    /// one commit carries in its journal record, to be appended once it stands).
    pub fn prepare(&self, heading: &Heading, files: &[FileChange]) -> io::Result<ChangeRecord> {
        let mut records = Vec::with_capacity(files.len());
        for (index, file) in files.iter().enumerate() {
            let delta = match &file.undo.reverse {
                Some(reverse) => {
                    let name = format!("{}-{index}.delta", heading.id);
                    self.write_delta(&name, reverse)?;
                    Some(name)
                }
                None => None,
            };
            records.push(FileRecord::of(file, delta));
        }
        Ok(ChangeRecord {
            id: heading.id.clone(),
            time: humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string(),
            tool: heading.tool.clone(),
            summary: heading.summary.clone(),
            files: records,
            session_id: heading.author.session_id.clone(),
            run_id: heading.author.run_id.clone(),
            agent_name: heading.author.agent_name.clone(),
            undoes: heading.undoes.clone(),
        })
    }

    /// Appends `record` to the log.
    pub fn append(&self, record: &ChangeRecord) -> io::Result<()> {
        self.append_line(record, false)
    }

    /// Appends `record` unless the log holds its id already (crash recovery: the process may
    /// have been killed after appending it). Whether it was appended. A line a kill cut short
    /// is ended first, so that the record starts a line of its own.
    pub fn append_once(&self, record: &ChangeRecord) -> io::Result<bool> {
        let log = self.read_log()?;
        if parse(&log).iter().any(|r| r.id == record.id) {
            return Ok(false);
        }
        self.append_line(record, log.last().is_some_and(|&b| b != b'\n'))?;
        Ok(true)
    }

    fn append_line(&self, record: &ChangeRecord, end_torn_line: bool) -> io::Result<()> {
        let mut line = Vec::new();
        if end_torn_line {
            line.push(b'\n');
        }
        serde_json::to_writer(&mut line, record).map_err(io::Error::other)?;
        line.push(b'\n');
        let mut slot = self.log.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            let dir = self.data.open(&self.rel, true)?;
            let file = fsops::open_for_log(dir.as_fd(), OsStr::new(LOG))?;
            let _ = fsops::set_mode_fd(&file, 0o600);
            *slot = Some(file);
        }
        slot.as_mut().expect("opened above").write_all(&line)
    }

    fn write_delta(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        let dir = self.data.open(&self.rel.join(DELTAS), true)?;
        let mut file = fsops::create_file_at(dir.as_fd(), OsStr::new(name))?;
        file.write_all(bytes)
    }

    /// Removes the stored deltas (those written at least `older_than` ago, if given): what
    /// `trashClear` does to the history, so that the changes needing them say they can no longer
    /// be undone. Returns how many were removed.
    pub fn clear_deltas(&self, older_than: Option<std::time::Duration>) -> io::Result<u64> {
        let dir = match self.data.open(&self.rel.join(DELTAS), false) {
            Ok(dir) => dir,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(e),
        };
        let now = std::time::SystemTime::now();
        let mut removed = 0;
        for name in fsops::list_names(dir.as_fd())? {
            let old_enough = match older_than {
                None => true,
                Some(age) => fsops::lstat_at(dir.as_fd(), &name)?.is_some_and(|stat| {
                    let (secs, nanos) = fsops::Snapshot::of(&stat).mtime;
                    let written =
                        std::time::UNIX_EPOCH + std::time::Duration::new(secs.max(0) as u64, nanos);
                    now.duration_since(written).is_ok_and(|idle| idle >= age)
                }),
            };
            if old_enough && fsops::unlink_at(dir.as_fd(), &name).is_ok() {
                removed += 1;
            }
        }
        Ok(removed)
    }

    /// The stored delta `name`.
    pub fn read_delta(&self, name: &str) -> io::Result<Vec<u8>> {
        let dir = self.data.open(&self.rel.join(DELTAS), false)?;
        let mut bytes = Vec::new();
        fsops::open_for_read(dir.as_fd(), OsStr::new(name))?.read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    /// The names of the stored deltas (listed once per read of the history).
    fn delta_names(&self) -> HashSet<OsString> {
        self.data
            .open(&self.rel.join(DELTAS), false)
            .and_then(|dir| fsops::list_names(dir.as_fd()))
            .map(|names| names.into_iter().collect())
            .unwrap_or_default()
    }

    /// Every change, oldest first, with its state folded from the log: an undo marks what it
    /// took back as undone by it; an undo taken back (a redo) unmarks what it had taken back.
    /// `archive_exists` tells whether an archive a change needs is still in the trash.
    pub fn entries(&self, archive_exists: &dyn Fn(&Path) -> bool) -> io::Result<Vec<Entry>> {
        let records = self.read_all()?;
        let deltas = self.delta_names();
        let mut undone_by: HashMap<String, String> = HashMap::new();
        let by_id: HashMap<&str, &ChangeRecord> =
            records.iter().map(|r| (r.id.as_str(), r)).collect();
        for record in &records {
            for taken in &record.undoes {
                undone_by.insert(taken.clone(), record.id.clone());
                // Taking back an undo brings back what it had taken back.
                if let Some(undo) = by_id.get(taken.as_str()) {
                    for brought_back in &undo.undoes {
                        if undone_by.get(brought_back) == Some(&undo.id) {
                            undone_by.remove(brought_back);
                        }
                    }
                }
            }
        }
        let records = stand_ins(records, &undone_by, archive_exists);
        Ok(records
            .into_iter()
            .map(|record| {
                let undone_by = undone_by.get(&record.id).cloned();
                let not_undoable = match &undone_by {
                    Some(by) => Some(format!("it was undone by {by}")),
                    None => why_not_undoable(&record, archive_exists, &deltas),
                };
                let only_archives_missing = undone_by.is_none()
                    && not_undoable.is_some()
                    && why_not_undoable(&record, &|_| true, &deltas).is_none();
                Entry {
                    record,
                    undone_by,
                    not_undoable,
                    only_archives_missing,
                }
            })
            .collect())
    }

    /// Every record, oldest first (a line that cannot be read is skipped).
    fn read_all(&self) -> io::Result<Vec<ChangeRecord>> {
        Ok(parse(&self.read_log()?))
    }

    /// The log's bytes (none when there is no log yet).
    fn read_log(&self) -> io::Result<Vec<u8>> {
        let dir = match self.data.open(&self.rel, false) {
            Ok(dir) => dir,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut bytes = Vec::new();
        match fsops::open_for_read(dir.as_fd(), OsStr::new(LOG)) {
            Ok(mut file) => file.read_to_end(&mut bytes)?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        Ok(bytes)
    }
}

/// The records of a log, oldest first (a line that cannot be read is skipped).
fn parse(log: &[u8]) -> Vec<ChangeRecord> {
    log.split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .filter_map(|line| serde_json::from_slice(line).ok())
        .collect()
}

/// Why `record` cannot be taken back, if it cannot: what it needs is gone or was never kept.
fn why_not_undoable(
    record: &ChangeRecord,
    archive_exists: &dyn Fn(&Path) -> bool,
    deltas: &HashSet<OsString>,
) -> Option<String> {
    for file in &record.files {
        let path = crate::paths::shown::Shown::shown(file.path.as_path()).into_owned();
        if file.permanent {
            return Some(format!("{path} was removed permanently; no copy was kept"));
        }
        let needs_old_content = file.action == Action::Modified
            || (file.action == Action::Deleted)
            || (file.action == Action::Removed && file.trashed_to.is_some());
        if needs_old_content && file.trashed_to.is_none() && file.delta.is_none() {
            return Some(format!(
                "the previous content of {path} was not kept (trash.keepOverwrites is false)"
            ));
        }
        for archive in [&file.trashed_to, &file.from_trashed_to]
            .into_iter()
            .flatten()
        {
            if !archive_exists(archive) {
                return Some(format!(
                    "the copy of {path} it needs was removed from the trash (trashClear)"
                ));
            }
        }
        if let Some(delta) = &file.delta {
            if !deltas.contains(OsStr::new(delta)) {
                return Some(format!(
                    "what takes {path} back was removed with the trash (trashClear)"
                ));
            }
        }
    }
    None
}

/// The records with each archive a restore consumed replaced by the one that stands for it now:
/// when a restore was undone, the undo trashed the restored entry again, to a new archive with
/// the same content — what the changes before the restore (the delete it undid, say) need.
fn stand_ins(
    mut records: Vec<ChangeRecord>,
    undone_by: &HashMap<String, String>,
    archive_exists: &dyn Fn(&Path) -> bool,
) -> Vec<ChangeRecord> {
    let by_id: HashMap<&str, &ChangeRecord> = records.iter().map(|r| (r.id.as_str(), r)).collect();
    let mut stand_in: HashMap<OsString, PathBuf> = HashMap::new();
    for record in &records {
        let Some(undo) = undone_by
            .get(&record.id)
            .and_then(|u| by_id.get(u.as_str()))
        else {
            continue;
        };
        for file in &record.files {
            let Some(consumed) = file.restored_from.as_ref().and_then(|a| a.file_name()) else {
                continue;
            };
            let again = undo
                .files
                .iter()
                .find(|f| f.path == file.path)
                .and_then(|f| f.trashed_to.clone());
            if let Some(again) = again {
                stand_in.insert(consumed.to_owned(), again);
            }
        }
    }
    if stand_in.is_empty() {
        return records;
    }
    let replace = |archive: &mut Option<PathBuf>| {
        if let Some(path) = archive {
            if let Some(again) = path.file_name().and_then(|n| stand_in.get(n)) {
                if !archive_exists(path) {
                    *path = again.clone();
                }
            }
        }
    };
    for record in &mut records {
        for file in &mut record.files {
            replace(&mut file.trashed_to);
            replace(&mut file.from_trashed_to);
        }
    }
    records
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::change::FileChange;

    fn heading(tool: &str, summary: &str, undoes: Vec<String>) -> Heading {
        Heading {
            id: History::new_id(),
            tool: tool.into(),
            summary: summary.into(),
            author: Author {
                session_id: "s".into(),
                run_id: "r".into(),
                agent_name: "a".into(),
            },
            undoes,
        }
    }

    #[test]
    fn undo_marks_undone_and_an_undo_of_the_undo_brings_the_change_back() {
        let base = tempfile::tempdir().unwrap();
        let history = History::new(Arc::new(DataDir::new(base.path().join("data"))), "h");
        let mut edit = FileChange::new("/w/a", Action::Modified);
        edit.undo.reverse = Some(Arc::new(b"delta".to_vec()));
        let change = history
            .record(&heading("edit_file", "a", Vec::new()), &[edit])
            .unwrap();
        let files = [FileChange::new("/w/a", Action::Modified)];
        let undo = history
            .record(&heading("undo", "undo", vec![change.clone()]), &files)
            .unwrap();
        let all = |_: &Path| true;
        let entries = history.entries(&all).unwrap();
        assert_eq!(entries[0].undone_by.as_deref(), Some(undo.as_str()));
        assert_eq!(
            history
                .read_delta(entries[0].record.files[0].delta.as_ref().unwrap())
                .unwrap(),
            b"delta"
        );
        let redo = history
            .record(&heading("undo", "redo", vec![undo.clone()]), &files)
            .unwrap();
        let entries = history.entries(&all).unwrap();
        assert_eq!(entries[0].undone_by, None);
        assert_eq!(entries[1].undone_by.as_deref(), Some(redo.as_str()));
        // Cleared deltas make the change say why it cannot be undone.
        assert_eq!(history.clear_deltas(None).unwrap(), 1);
        let reason = history.entries(&all).unwrap()[0]
            .not_undoable
            .clone()
            .unwrap();
        assert!(reason.contains("trashClear"), "{reason}");
    }

    /// Recovery appends a carried record once, on a line of its own even after a line a kill
    /// cut short.
    #[test]
    fn append_once_appends_a_record_once_on_a_line_of_its_own() {
        let base = tempfile::tempdir().unwrap();
        let history = History::new(Arc::new(DataDir::new(base.path().join("data"))), "h");
        let first = history
            .prepare(&heading("edit_file", "a", Vec::new()), &[])
            .unwrap();
        history.append(&first).unwrap();
        let log = base.path().join("data/h").join(LOG);
        let torn = serde_json::to_vec(&first).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&log)
            .and_then(|mut f| f.write_all(&torn[..torn.len() / 2]))
            .unwrap();
        let carried = history
            .prepare(&heading("apply_patch", "b", Vec::new()), &[])
            .unwrap();
        assert!(history.append_once(&carried).unwrap());
        assert!(!history.append_once(&carried).unwrap());
        assert!(!history.append_once(&first).unwrap());
        let ids: Vec<String> = history
            .entries(&|_| true)
            .unwrap()
            .into_iter()
            .map(|e| e.record.id)
            .collect();
        assert_eq!(ids, vec![first.id, carried.id]);
    }
}
