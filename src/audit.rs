//! The audit log (../docs/trash.md#the-audit-log): one JSON line per call of a mutating tool, appended before the
//! call's promise resolves, at `<dataDir>/audit/<sha256(canonical root)>.jsonl`.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

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

/// The append-only log file of one workspace, `<dataDir>/audit/<name>`, opened for each record
/// and closed after it: no descriptor of it stays open between calls, so a host can remove the
/// data directory while a workspace lives, also where a removed file's name stays until its last
/// handle closes (Windows without POSIX delete semantics, ../docs/windows.md).
pub struct AuditLog {
    data: Arc<DataDir>,
    name: String,
}

impl AuditLog {
    pub fn new(data: Arc<DataDir>, name: String) -> Self {
        Self { data, name }
    }

    /// Where the log is.
    pub fn path(&self) -> PathBuf {
        self.data.path().join("audit").join(&self.name)
    }

    /// Appends one record as a single `write` of a whole line to the end of the file (opened
    /// for appending only), so concurrent writers (calls of this workspace, other workspaces on
    /// the same root) never interleave within a line; the file is closed when it returns. Best
    /// effort: the change the record describes has already happened, so a failure to log does
    /// not fail the call.
    pub fn append(&self, record: &AuditRecord) {
        let Ok(mut line) = serde_json::to_vec(record) else {
            return;
        };
        line.push(b'\n');
        if let Ok(mut file) = self.open() {
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

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use crate::paths::testing::descriptors_on;

    fn record(tool: &str) -> AuditRecord {
        AuditRecord {
            time: "2026-11-27T00:00:00.000Z".into(),
            tool: tool.into(),
            path: "/w/a.txt".into(),
            status: "ok",
            code: None,
            trashed_to: None,
            sha256_before: None,
            sha256_after: None,
            files: Vec::new(),
            session_id: "s".into(),
            run_id: "r".into(),
            agent_name: "a".into(),
        }
    }

    /// Issue 31: the log is open only while a record is written, so nothing of the data
    /// directory stays held between calls (Windows cannot remove a directory holding an open
    /// file where deletes lack POSIX semantics); each record is still appended, whole.
    #[test]
    fn no_descriptor_of_the_log_stays_open_between_records() {
        let dir = tempfile::tempdir().unwrap();
        let data = crate::paths::canonical::canonicalize_existing(dir.path())
            .unwrap()
            .join("data");
        let log = AuditLog::new(Arc::new(DataDir::new(data)), "x.jsonl".into());
        for tool in ["write_file", "delete_file"] {
            log.append(&record(tool));
            assert_eq!(descriptors_on(&log.path()), 0, "after {tool}");
        }
        let text = std::fs::read_to_string(log.path()).unwrap();
        let tools: Vec<String> = text
            .lines()
            .map(|line| {
                serde_json::from_str::<serde_json::Value>(line).unwrap()["tool"].to_string()
            })
            .collect();
        assert_eq!(tools, ["\"write_file\"", "\"delete_file\""]);
    }
}
