//! The audit log (../docs/trash.md#the-audit-log): one JSON line per call of a mutating tool, appended before the
//! call's promise resolves, at `<dataDir>/audit/<sha256(canonical root)>.jsonl`.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::change::FileChange;
use crate::datadir::DataDir;
use crate::error::ErrorCode;
use crate::paths::fsops;
use crate::paths::AsDir;

/// One line of the log.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditRecord {
    pub time: String,
    pub tool: String,
    pub path: String,
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<ErrorCode>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trashed_to: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256_before: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256_after: Option<String>,
    /// Every path the call changed (a move: its destination, `from` its source).
    pub files: Vec<FileChange>,
    pub session_id: String,
    pub run_id: String,
    pub agent_name: String,
}

/// The append-only log file of one workspace, `<dataDir>/audit/<name>`.
pub struct AuditLog {
    data: Arc<DataDir>,
    name: String,
    file: Mutex<Option<File>>,
}

impl AuditLog {
    pub fn new(data: Arc<DataDir>, name: String) -> Self {
        Self {
            data,
            name,
            file: Mutex::new(None),
        }
    }

    /// Where the log is.
    pub fn path(&self) -> PathBuf {
        self.data.path().join("audit").join(&self.name)
    }

    /// Appends one record as a single `write` of a whole line, so concurrent writers (other
    /// workspaces on the same root) never interleave within a line. Best effort: the change the
    /// record describes has already happened, so a failure to log does not fail the call.
    pub fn append(&self, record: &AuditRecord) {
        let Ok(mut line) = serde_json::to_vec(record) else {
            return;
        };
        line.push(b'\n');
        let mut slot = self.file.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = self.open().ok();
        }
        if let Some(file) = slot.as_mut() {
            let _ = file.write_all(&line);
        }
    }

    /// Opens the log for appending through the data directory's descriptor, creating it. It
    /// names what changed and the digests of contents (the digest of a short secret is a lookup
    /// away), so it is for its owner only: 0600, also when an older version created it readable.
    fn open(&self) -> io::Result<File> {
        let dir = self.data.open(Path::new("audit"), true)?;
        let file = fsops::open_for_log(dir.as_dir(), OsStr::new(&self.name))?;
        // A log someone else could write is not appended to (nor made private: it is theirs).
        let path = self.data.path().join("audit").join(&self.name);
        crate::datadir::check_file(&file, &path)?;
        let _ = fsops::set_mode_fd(&file, 0o600);
        Ok(file)
    }
}
