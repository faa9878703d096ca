//! The audit log (SPEC §7.5): one JSON line per call of a mutating tool, appended before the
//! call's promise resolves, at `<dataDir>/audit/<sha256(canonical root)>.jsonl`.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::Serialize;

use crate::change::FileChange;
use crate::error::ErrorCode;

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

/// The append-only log file of one workspace.
pub struct AuditLog {
    path: PathBuf,
    file: Mutex<Option<File>>,
}

impl AuditLog {
    pub fn new(path: PathBuf) -> Self {
        Self {
            path,
            file: Mutex::new(None),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
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
            if let Some(dir) = self.path.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            *slot = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.path)
                .ok();
        }
        if let Some(file) = slot.as_mut() {
            let _ = file.write_all(&line);
        }
    }
}
