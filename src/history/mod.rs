//! The history of changes (SPEC §13): every call that changed something is one record, kept in the
//! data directory per workspace (`history/<sha256 of the root>/changes.jsonl`, with the deltas
//! that take edits back beside it in `deltas/`), so it survives restarts. Records are appended as
//! whole lines through the data directory's descriptor and never rewritten: an undo is a record
//! of its own that names the changes it took back (`undoes`), and the state of every change —
//! undone or not, by what — is folded from the log when it is read.
//!
//! Records are written without fsync, after the change itself: a killed process keeps them (the
//! page cache), a power cut may lose the newest — the change stays, only its undo is lost.
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

    /// Appends a change: one record, its deltas stored first. `undoes` names the changes an
    /// undo took back. Returns the change's id.
    pub fn record(
        &self,
        tool: &str,
        summary: &str,
        files: &[FileChange],
        author: &Author,
        undoes: Vec<String>,
    ) -> io::Result<String> {
        let id = Self::new_id();
        let mut records = Vec::with_capacity(files.len());
        for (index, file) in files.iter().enumerate() {
            let delta = match &file.undo.reverse {
                Some(reverse) => {
                    let name = format!("{id}-{index}.delta");
                    self.write_delta(&name, reverse)?;
                    Some(name)
                }
                None => None,
            };
            records.push(FileRecord::of(file, delta));
        }
        let record = ChangeRecord {
            id: id.clone(),
            time: humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string(),
            tool: tool.to_owned(),
            summary: summary.to_owned(),
            files: records,
            session_id: author.session_id.clone(),
            run_id: author.run_id.clone(),
            agent_name: author.agent_name.clone(),
            undoes,
        };
        let mut line = serde_json::to_vec(&record).map_err(io::Error::other)?;
        line.push(b'\n');
        let mut slot = self.log.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            let dir = self.data.open(&self.rel, true)?;
            let file = fsops::open_for_log(dir.as_fd(), OsStr::new(LOG))?;
            let _ = fsops::set_mode_fd(&file, 0o600);
            *slot = Some(file);
        }
        slot.as_mut().expect("opened above").write_all(&line)?;
        Ok(id)
    }

    fn write_delta(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        let dir = self.data.open(&self.rel.join(DELTAS), true)?;
        let mut file = fsops::create_file_at(dir.as_fd(), OsStr::new(name))?;
        file.write_all(bytes)
    }

    /// The stored delta `name`.
    pub fn read_delta(&self, name: &str) -> io::Result<Vec<u8>> {
        let dir = self.data.open(&self.rel.join(DELTAS), false)?;
        let mut bytes = Vec::new();
        fsops::open_for_read(dir.as_fd(), OsStr::new(name))?.read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    /// The names of the stored deltas, read once per listing (not one lookup per change: a
    /// history of thousands of edits is listed in milliseconds).
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
        let deltas = self.delta_names();
        Ok(records
            .into_iter()
            .map(|record| {
                let undone_by = undone_by.get(&record.id).cloned();
                let not_undoable = match &undone_by {
                    Some(by) => Some(format!("it was undone by {by}")),
                    None => why_not_undoable(&record, archive_exists, &deltas),
                };
                Entry {
                    record,
                    undone_by,
                    not_undoable,
                }
            })
            .collect())
    }
    /// Every record, oldest first (a line that cannot be read is skipped).
    fn read_all(&self) -> io::Result<Vec<ChangeRecord>> {
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
        Ok(bytes
            .split(|&b| b == b'\n')
            .filter(|line| !line.is_empty())
            .filter_map(|line| serde_json::from_slice(line).ok())
            .collect())
    }
}

/// Why `record` cannot be taken back, if it cannot: what it needs is gone or was never kept.
/// `deltas` are the names of the stored deltas.
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
                    "what takes {path} back is missing from the history"
                ));
            }
        }
    }
    None
}
