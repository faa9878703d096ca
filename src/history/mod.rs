//! The history of changes (../../docs/history-and-undo.md): every call that changed something is one record, kept in the
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
mod view;

use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

pub use record::{ChangeRecord, FileRecord};
pub use view::{changes_json, ChangeJson};

use crate::change::{Action, FileChange};
use crate::datadir::{self, DataDir};
use crate::paths::fsops;
use crate::paths::{AsDir, FileId};

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

#[cfg(test)]
impl Heading {
    /// A heading for a change made by a test: a fresh id, `tool` and `summary` as given, by
    /// session `s`, run `r`, agent `a`, undoing nothing.
    pub fn for_test(tool: &str, summary: &str) -> Heading {
        Heading {
            id: History::new_id(),
            tool: tool.into(),
            summary: summary.into(),
            author: Author {
                session_id: "s".into(),
                run_id: "r".into(),
                agent_name: "a".into(),
            },
            undoes: Vec::new(),
        }
    }
}

/// One workspace's history.
pub struct History {
    data: Arc<DataDir>,
    rel: PathBuf,
    /// Held while a record is written; true once this process checked the log for a line a
    /// kill left unfinished (the log itself is opened for each record and closed after it).
    torn_line_checked: Mutex<bool>,
    parsed: Mutex<Parsed>,
}

/// The records read so far. The log only grows, so a read parses only the lines appended since
/// the last one (by this process or another on the same data directory).
#[derive(Default)]
struct Parsed {
    /// The log file they were read from: another file means reading it whole.
    file: Option<FileId>,
    /// How many bytes of the log were parsed: whole lines only.
    consumed: u64,
    records: Vec<Arc<ChangeRecord>>,
    /// Each record's JSON as the host sees it, but for its state.
    json: Vec<Arc<ChangeJson>>,
}

/// A change as the history shows it: its record and its state.
#[derive(Debug, Clone)]
pub struct HistoryEntry {
    pub record: Arc<ChangeRecord>,
    /// The record's JSON as the host sees it, but for the state below.
    pub json: Arc<ChangeJson>,
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
            torn_line_checked: Mutex::new(false),
            parsed: Mutex::new(Parsed::default()),
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

    /// Appends a change: one record, its deltas stored first. Returns the change's id. (Every
    /// change is recorded with its journaled commit, [`History::prepare`] then
    /// [`History::append`]; tests build histories with this.)
    #[cfg(test)]
    pub fn record(&self, heading: &Heading, files: &[FileChange]) -> io::Result<String> {
        let record = self.prepare(heading, files)?;
        self.append(&record)?;
        Ok(record.id)
    }

    /// The record of a change about to be made, its deltas stored (what a change journaled as
    /// one commit carries in its journal record, to be appended once it stands).
    ///
    /// The deltas of a change are one file, `<id>.delta`, whatever the number of files they take
    /// back (a file made per delta made a patch of many files pay for as many new files); each
    /// record says where its delta lies in it when there are several.
    pub fn prepare(&self, heading: &Heading, files: &[FileChange]) -> io::Result<ChangeRecord> {
        let reverses: Vec<&[u8]> = files
            .iter()
            .filter_map(|file| file.undo.reverse.as_deref().map(Vec::as_slice))
            .collect();
        let name = format!("{}.delta", heading.id);
        if !reverses.is_empty() {
            self.write_deltas(&name, &reverses)?;
        }
        let several = reverses.len() > 1;
        let mut offset = 0;
        let records = files
            .iter()
            .map(|file| match &file.undo.reverse {
                Some(reverse) => {
                    let len = reverse.len() as u64;
                    let range = several.then_some([offset, len]);
                    offset += len;
                    FileRecord::of(file, Some(name.clone()), range)
                }
                None => FileRecord::of(file, None, None),
            })
            .collect();
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

    /// Appends `record` unless the log holds its id already (crash recovery: the process may
    /// have been killed after appending it). Whether it was appended.
    pub fn append_once(&self, record: &ChangeRecord) -> io::Result<bool> {
        if self.read_all()?.0.iter().any(|r| r.id == record.id) {
            return Ok(false);
        }
        self.write_line(record, true)?;
        Ok(true)
    }

    /// Appends `record` to the log.
    pub fn append(&self, record: &ChangeRecord) -> io::Result<()> {
        self.write_line(record, false)
    }

    /// Writes `record` as one line, through the log opened for it and closed after it: no
    /// descriptor of the data directory's files stays open between calls, so a host can remove
    /// it while a workspace lives (Windows without POSIX delete semantics keeps a removed name
    /// while a handle of it is open: ../../docs/windows.md). A line a kill or a power cut left
    /// unfinished is ended first, so that the record starts a line of its own: checked on this
    /// process's first record and, for recovery, whenever `end_torn_line`.
    fn write_line(&self, record: &ChangeRecord, end_torn_line: bool) -> io::Result<()> {
        let mut line = serde_json::to_vec(record).map_err(io::Error::other)?;
        line.push(b'\n');
        let mut torn_line_checked = self
            .torn_line_checked
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let dir = self.data.open(&self.rel, true)?;
        let mut log = fsops::open_for_log(dir.as_dir(), OsStr::new(LOG))?;
        datadir::check_file(&log, &self.path().join(LOG))?;
        let _ = fsops::set_mode_fd(&log, 0o600);
        if !*torn_line_checked || end_torn_line {
            end_last_line(dir.as_dir(), &mut log)?;
            *torn_line_checked = true;
        }
        log.write_all(&line)
    }

    /// Stores `deltas` one after the other as the new file `name` in `deltas/`.
    fn write_deltas(&self, name: &str, deltas: &[&[u8]]) -> io::Result<()> {
        let dir = self.data.open(&self.rel.join(DELTAS), true)?;
        let mut file = fsops::create_file_at(dir.as_dir(), OsStr::new(name))?;
        deltas.iter().try_for_each(|delta| file.write_all(delta))
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
        for name in fsops::list_names(dir.as_dir())? {
            let old_enough = match older_than {
                None => true,
                Some(age) => fsops::lstat_at(dir.as_dir(), &name)?.is_some_and(|stat| {
                    let (secs, nanos) = fsops::Snapshot::of(&stat).mtime;
                    let written =
                        std::time::UNIX_EPOCH + std::time::Duration::new(secs.max(0) as u64, nanos);
                    now.duration_since(written).is_ok_and(|idle| idle >= age)
                }),
            };
            if old_enough && fsops::unlink_at(dir.as_dir(), &name).is_ok() {
                removed += 1;
            }
        }
        Ok(removed)
    }

    /// The stored delta `name` (the bytes at `range`, `[offset, length]`, of it when given): a
    /// file directly in `deltas/`, of this user (see [`datadir::check_file`]). A name that is
    /// not one plain component is `InvalidData`, never looked up; so is a range the file does
    /// not hold whole.
    pub fn read_delta(&self, name: &str, range: Option<[u64; 2]>) -> io::Result<Vec<u8>> {
        if !fsops::is_single_component(OsStr::new(name)) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("the history names the delta {name:?}, which is not a file name in its deltas folder"),
            ));
        }
        let dir = self.data.open(&self.rel.join(DELTAS), false)?;
        let mut file = fsops::open_for_read(dir.as_dir(), OsStr::new(name))?;
        datadir::check_file(&file, &self.path().join(DELTAS).join(name))?;
        let mut bytes = Vec::new();
        let Some([offset, len]) = range else {
            file.read_to_end(&mut bytes)?;
            return Ok(bytes);
        };
        file.seek(SeekFrom::Start(offset))?;
        file.take(len).read_to_end(&mut bytes)?;
        if bytes.len() as u64 != len {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("the history places a delta at bytes {offset}..{} of {name:?}, which is shorter (the history was altered)", offset.saturating_add(len)),
            ));
        }
        Ok(bytes)
    }

    /// Its directory (for messages).
    fn path(&self) -> PathBuf {
        self.data.path().join(&self.rel)
    }

    /// The names of the stored deltas (listed once per read of the history).
    fn delta_names(&self) -> HashSet<OsString> {
        self.data
            .open(&self.rel.join(DELTAS), false)
            .and_then(|dir| fsops::list_names(dir.as_dir()))
            .map(|names| names.into_iter().collect())
            .unwrap_or_default()
    }

    /// Every change, oldest first, with its state folded from the log: an undo marks what it
    /// took back as undone by it; an undo taken back (a redo) unmarks what it had taken back.
    /// `archive_exists` tells whether an archive a change needs is still in the trash.
    pub fn entries(&self, archive_exists: &dyn Fn(&Path) -> bool) -> io::Result<Vec<HistoryEntry>> {
        let (records, json) = self.read_all()?;
        let deltas = self.delta_names();
        let mut undone_by: HashMap<String, String> = HashMap::new();
        let undos = records.iter().filter(|r| !r.undoes.is_empty());
        let by_id: HashMap<&str, &ChangeRecord> = match undos.clone().next() {
            Some(_) => records.iter().map(|r| (r.id.as_str(), &**r)).collect(),
            None => HashMap::new(),
        };
        for record in undos {
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
            .zip(json)
            .map(|(record, json)| {
                let undone_by = undone_by.get(&record.id).cloned();
                let not_undoable = match &undone_by {
                    Some(by) => Some(format!("it was undone by {by}")),
                    None => why_not_undoable(&record, archive_exists, &deltas),
                };
                let only_archives_missing = undone_by.is_none()
                    && not_undoable.is_some()
                    && why_not_undoable(&record, &|_| true, &deltas).is_none();
                HistoryEntry {
                    record,
                    json,
                    undone_by,
                    not_undoable,
                    only_archives_missing,
                }
            })
            .collect())
    }

    /// Every record, oldest first (a line that cannot be read is skipped), and the JSON of each.
    /// Parses only what was appended since the last read; a line not yet ended waits for its
    /// newline.
    #[allow(clippy::type_complexity)]
    fn read_all(&self) -> io::Result<(Vec<Arc<ChangeRecord>>, Vec<Arc<ChangeJson>>)> {
        let dir = match self.data.open(&self.rel, false) {
            Ok(dir) => dir,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Default::default()),
            Err(e) => return Err(e),
        };
        let mut file = match fsops::open_for_read(dir.as_dir(), OsStr::new(LOG)) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Default::default()),
            Err(e) => return Err(e),
        };
        datadir::check_file(&file, &self.path().join(LOG))?;
        let stat = fsops::fstat(&file)?;
        let identity = stat.id();
        let mut parsed = self.parsed.lock().unwrap_or_else(|e| e.into_inner());
        if parsed.file != Some(identity) || (stat.size) < parsed.consumed {
            *parsed = Parsed {
                file: Some(identity),
                ..Parsed::default()
            };
        }
        file.seek(SeekFrom::Start(parsed.consumed))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        let whole = bytes
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |end| end + 1);
        let new = bytes[..whole]
            .split(|&b| b == b'\n')
            .filter(|line| !line.is_empty())
            .filter_map(|line| serde_json::from_slice::<ChangeRecord>(line).ok());
        for record in new {
            parsed.json.push(Arc::new(ChangeJson::of(&record)));
            parsed.records.push(Arc::new(record));
        }
        parsed.consumed += whole as u64;
        Ok((parsed.records.clone(), parsed.json.clone()))
    }
}

/// Ends a log whose last line was cut short (a power cut mid-append), so that the next record
/// starts a line of its own instead of being lost with the fragment.
fn end_last_line(dir: crate::paths::BorrowedDir<'_>, log: &mut File) -> io::Result<()> {
    let reader = fsops::open_for_read(dir, OsStr::new(LOG))?;
    let size = fsops::fstat(&reader)?.size;
    let mut last = [b'\n'];
    if size > 0 {
        crate::paths::io::read_exact_at(&reader, &mut last, size - 1)?;
    }
    if last[0] != b'\n' {
        log.write_all(b"\n")?;
    }
    Ok(())
}

/// Why `record` cannot be taken back, if it cannot: what it needs is gone or was never kept.
fn why_not_undoable(
    record: &ChangeRecord,
    archive_exists: &dyn Fn(&Path) -> bool,
    deltas: &HashSet<OsString>,
) -> Option<String> {
    record.files.iter().find_map(|file| {
        let path = || crate::paths::shown::Shown::shown(file.path.as_path());
        if file.permanent {
            return Some(format!(
                "{} was removed permanently; no copy was kept",
                path()
            ));
        }
        let needs_old_content = file.action == Action::Modified
            || (file.action == Action::Deleted)
            || (file.action == Action::Removed && file.trashed_to.is_some());
        if needs_old_content && file.trashed_to.is_none() && file.delta.is_none() {
            return Some(format!(
                "the previous content of {} was not kept (trash.keepOverwrites is false)",
                path()
            ));
        }
        let archives = [&file.trashed_to, &file.from_trashed_to];
        if archives.into_iter().flatten().any(|a| !archive_exists(a)) {
            return Some(format!(
                "the copy of {} it needs was removed from the trash (trashClear)",
                path()
            ));
        }
        if let Some(delta) = file
            .delta
            .as_ref()
            .filter(|d| !fsops::is_single_component(OsStr::new(d)))
        {
            return Some(format!(
                "its record names {delta:?} as what takes {} back, which is not a file name in the history's deltas folder (the history was altered)",
                path()
            ));
        }
        let delta_gone = |delta: &String| !deltas.contains(OsStr::new(delta));
        file.delta.as_ref().filter(|d| delta_gone(d)).map(|_| {
            format!(
                "what takes {} back was removed with the trash (trashClear)",
                path()
            )
        })
    })
}

/// The records with each archive a restore consumed replaced by the one that stands for it now:
/// when a restore was undone, the undo trashed the restored entry again, to a new archive with
/// the same content — what the changes before the restore (the delete it undid, say) need.
fn stand_ins(
    mut records: Vec<Arc<ChangeRecord>>,
    undone_by: &HashMap<String, String>,
    archive_exists: &dyn Fn(&Path) -> bool,
) -> Vec<Arc<ChangeRecord>> {
    if undone_by.is_empty() {
        return records;
    }
    let by_id: HashMap<&str, &ChangeRecord> =
        records.iter().map(|r| (r.id.as_str(), &**r)).collect();
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
    let stood_in = |archive: &Option<PathBuf>| {
        archive.as_ref().and_then(|path| {
            let again = path.file_name().and_then(|n| stand_in.get(n))?;
            (!archive_exists(path)).then(|| again.clone())
        })
    };
    for record in &mut records {
        let replaced = record
            .files
            .iter()
            .any(|f| stood_in(&f.trashed_to).is_some() || stood_in(&f.from_trashed_to).is_some());
        if !replaced {
            continue;
        }
        for file in &mut Arc::make_mut(record).files {
            for archive in [&mut file.trashed_to, &mut file.from_trashed_to] {
                if let Some(again) = stood_in(archive) {
                    *archive = Some(again);
                }
            }
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
            undoes,
            ..Heading::for_test(tool, summary)
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
                .read_delta(entries[0].record.files[0].delta.as_ref().unwrap(), None)
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

    /// The deltas of a change of several files are one file, each record placing its own in it;
    /// a change of one file keeps the whole file as its delta (as every change did before), and
    /// a record placing its delta past the file's end is refused as altered.
    #[test]
    fn the_deltas_of_a_change_are_one_file_each_record_placing_its_own() {
        let base = tempfile::tempdir().unwrap();
        let history = History::new(Arc::new(DataDir::new(base.path().join("data"))), "h");
        let edit = |path: &str, delta: &[u8]| {
            let mut file = FileChange::new(path, Action::Modified);
            file.undo.reverse = Some(Arc::new(delta.to_vec()));
            file
        };
        let files = [
            edit("/w/a", b"first"),
            FileChange::new("/w/b", Action::Added),
            edit("/w/c", b""),
            edit("/w/d", b"the last one"),
        ];
        let patch = history
            .record(
                &heading("apply_patch", "a, b (+2 more)", Vec::new()),
                &files,
            )
            .unwrap();
        let single = history
            .record(
                &heading("edit_file", "e", Vec::new()),
                &[edit("/w/e", b"alone")],
            )
            .unwrap();
        let names = fsops::list_names(
            history
                .data
                .open(&history.rel.join(DELTAS), false)
                .unwrap()
                .as_dir(),
        )
        .unwrap();
        assert_eq!(names.len(), 2, "one delta file a change: {names:?}");
        let entries = history.entries(&|_| true).unwrap();
        let read = |file: &FileRecord| {
            history
                .read_delta(file.delta.as_deref().unwrap(), file.delta_range)
                .unwrap()
        };
        let kept = &entries[0].record.files;
        assert_eq!(entries[0].record.id, patch);
        assert_eq!(read(&kept[0]), b"first");
        assert_eq!(kept[1].delta, None);
        assert_eq!(read(&kept[2]), b"");
        assert_eq!(read(&kept[3]), b"the last one");
        assert_eq!(kept[3].delta_range, Some([5, 12]));
        assert_eq!(entries[1].record.id, single);
        assert_eq!(entries[1].record.files[0].delta_range, None);
        assert_eq!(read(&entries[1].record.files[0]), b"alone");
        assert!(entries.iter().all(|e| e.not_undoable.is_none()));
        let past_the_end = history
            .read_delta(kept[3].delta.as_deref().unwrap(), Some([5, 13]))
            .unwrap_err();
        assert_eq!(
            past_the_end.kind(),
            io::ErrorKind::InvalidData,
            "{past_the_end}"
        );
        assert!(
            past_the_end.to_string().contains("altered"),
            "{past_the_end}"
        );
    }

    /// Issue 26: a record naming its delta `../x` read `x` from beside the deltas folder (or, with
    /// more `..`, from anywhere).
    #[test]
    fn a_delta_name_that_is_not_a_plain_file_name_is_never_read() {
        let base = tempfile::tempdir().unwrap();
        let history = History::new(Arc::new(DataDir::new(base.path().join("data"))), "h");
        let mut edit = FileChange::new("/w/a", Action::Modified);
        edit.undo.reverse = Some(Arc::new(b"delta".to_vec()));
        history
            .record(&heading("edit_file", "a", Vec::new()), &[edit])
            .unwrap();
        std::fs::write(base.path().join("data/h/outside.delta"), "planted").unwrap();
        std::fs::write(base.path().join("outside.delta"), "planted").unwrap();
        for name in ["../outside.delta", "../../outside.delta", "..", ".", ""] {
            let e = history.read_delta(name, None).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidData, "{name}: {e}");
        }
        // A record that names one is not undoable, and says why.
        let log = base.path().join("data/h").join(LOG);
        let text = std::fs::read_to_string(&log).unwrap();
        let delta = history.entries(&|_| true).unwrap()[0].record.files[0]
            .delta
            .clone()
            .unwrap();
        let planted = text.replace(&delta, "../outside.delta");
        std::fs::write(&log, planted).unwrap();
        let reason = history.entries(&|_| true).unwrap()[0]
            .not_undoable
            .clone()
            .unwrap();
        assert!(
            reason.contains("names \"../outside.delta\" as what takes"),
            "{reason}"
        );
    }

    fn ids(history: &History) -> Vec<String> {
        let all = |_: &Path| true;
        let entries = history.entries(&all).unwrap();
        entries.iter().map(|e| e.record.id.clone()).collect()
    }

    fn write(history: &History, path: &str) -> String {
        let files = [FileChange::new(path, Action::Added)];
        history
            .record(&heading("write_file", path, Vec::new()), &files)
            .unwrap()
    }

    /// Issue 31: the log is open only while a record is written or read, so nothing of the
    /// data directory stays held between calls; a torn last line is still ended by the next
    /// process's first record.
    #[cfg(target_os = "linux")]
    #[test]
    fn no_descriptor_of_the_log_stays_open_between_records() {
        use crate::paths::testing::descriptors_on;
        let base = tempfile::tempdir().unwrap();
        let data = crate::paths::canonical::canonicalize_existing(base.path())
            .unwrap()
            .join("data");
        let data = Arc::new(DataDir::new(data));
        let history = History::new(data.clone(), "h");
        let log = data.path().join("h").join(LOG);
        let first = write(&history, "/w/a");
        assert_eq!(descriptors_on(&log), 0, "after the first record");
        std::fs::OpenOptions::new()
            .append(true)
            .open(&log)
            .and_then(|mut f| f.write_all(b"{\"torn"))
            .unwrap();
        let next_process = History::new(data, "h");
        let second = write(&next_process, "/w/b");
        assert_eq!(descriptors_on(&log), 0, "after the second record");
        assert_eq!(ids(&history), [first, second]);
        assert_eq!(descriptors_on(&log), 0, "after a read");
    }

    #[test]
    fn a_read_sees_what_another_history_on_the_same_data_appended_since() {
        let base = tempfile::tempdir().unwrap();
        let data = Arc::new(DataDir::new(base.path().join("data")));
        let (mine, other) = (History::new(data.clone(), "h"), History::new(data, "h"));
        let first = write(&mine, "/w/a");
        assert_eq!(ids(&other), [first.as_str()]);
        let second = write(&other, "/w/b");
        let third = write(&mine, "/w/c");
        assert_eq!(ids(&mine), [first.clone(), second.clone(), third.clone()]);
        assert_eq!(ids(&other), [first, second, third]);
    }

    #[test]
    fn a_log_replaced_or_cut_shorter_is_read_again_whole() {
        let base = tempfile::tempdir().unwrap();
        let history = History::new(Arc::new(DataDir::new(base.path().join("data"))), "h");
        let log = base.path().join("data/h").join(LOG);
        let kept = write(&history, "/w/a");
        write(&history, "/w/b");
        assert_eq!(ids(&history).len(), 2);
        // Another file holding only the first line, under the log's name.
        let text = std::fs::read_to_string(&log).unwrap();
        let first_line = text.lines().next().unwrap().to_owned() + "\n";
        std::fs::write(base.path().join("new"), &first_line).unwrap();
        std::fs::rename(base.path().join("new"), &log).unwrap();
        assert_eq!(ids(&history), [kept.as_str()]);
        // The same file, cut shorter.
        let log_file = std::fs::OpenOptions::new().write(true).open(&log).unwrap();
        log_file.set_len(0).unwrap();
        assert!(ids(&history).is_empty());
    }

    #[test]
    fn a_line_not_yet_ended_is_read_once_it_is_and_a_cut_one_does_not_swallow_the_next() {
        let base = tempfile::tempdir().unwrap();
        let history = History::new(Arc::new(DataDir::new(base.path().join("data"))), "h");
        let first = write(&history, "/w/a");
        let log = base.path().join("data/h").join(LOG);
        // A record being appended by another process: half of it is there.
        let line = std::fs::read_to_string(&log)
            .unwrap()
            .replace(&first, "c-other");
        let (head, tail) = line.split_at(line.len() / 2);
        let append = |text: &str| {
            let mut file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
            file.write_all(text.as_bytes()).unwrap();
        };
        append(head);
        assert_eq!(ids(&history), [first.as_str()]);
        append(tail);
        assert_eq!(ids(&history), [first.clone(), "c-other".to_owned()]);
        // A record cut short for good (a power cut): the next one, from a new process, still
        // starts its own line.
        append(head);
        let after = History::new(Arc::new(DataDir::new(base.path().join("data"))), "h");
        let next = write(&after, "/w/b");
        assert_eq!(ids(&after), [first, "c-other".to_owned(), next]);
    }

    #[test]
    fn the_host_sees_changes_newest_first_filtered_and_limited() {
        let base = tempfile::tempdir().unwrap();
        let history = History::new(Arc::new(DataDir::new(base.path().join("data"))), "h");
        let a = write(&history, "/w/a");
        let in_session_t = |mut heading: Heading| {
            heading.author.session_id = "t".into();
            heading
        };
        let files = [FileChange::new("/w/b", Action::Added)];
        let b = history
            .record(
                &in_session_t(heading("write_file", "b", Vec::new())),
                &files,
            )
            .unwrap();
        let undo = history
            .record(
                &in_session_t(heading("undo", "undo", vec![b.clone()])),
                &files,
            )
            .unwrap();
        let all = |_: &Path| true;
        let entries = history.entries(&all).unwrap();
        let json = |limit, session| -> serde_json::Value {
            serde_json::from_str(&changes_json(&entries, limit, session)).unwrap()
        };
        let listed = json(None, None);
        let ids: Vec<&str> = listed
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, [undo.as_str(), b.as_str(), a.as_str()]);
        assert_eq!(listed[0]["undoes"], serde_json::json!([b]));
        assert_eq!(listed[1]["undoneBy"], undo.as_str());
        assert_eq!(listed[1]["undoable"], false);
        assert!(listed[1]["reason"].as_str().unwrap().contains(&undo));
        assert_eq!(
            listed[2],
            serde_json::json!({
                "id": a, "time": entries[0].record.time, "tool": "write_file", "summary": "/w/a",
                "files": [{ "path": "/w/a", "action": "added" }],
                "sessionId": "s", "runId": "r", "agentName": "a", "undoable": true,
            })
        );
        assert_eq!(json(Some(1), None).as_array().unwrap().len(), 1);
        let session_s = json(None, Some("s"));
        assert_eq!(session_s.as_array().unwrap().len(), 1);
        assert_eq!(session_s[0]["id"], a.as_str());
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
            .map(|e| e.record.id.clone())
            .collect();
        assert_eq!(ids, vec![first.id, carried.id]);
    }
}
