//! The history's records, as stored (one JSON line each).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::change::{Action, EntryFacts, FileChange};

/// One change: a call that changed something, or an undo.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ChangeRecord {
    pub id: String,
    /// RFC 3339, milliseconds.
    pub time: String,
    /// The tool as the host named it, or `undo`.
    pub tool: String,
    /// `formatCall` of the call.
    pub summary: String,
    pub files: Vec<FileRecord>,
    pub session_id: String,
    pub run_id: String,
    pub agent_name: String,
    /// The changes this one took back (an undo; several for a session).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub undoes: Vec<String>,
}

/// One path of a change, with what taking it back needs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct FileRecord {
    pub path: PathBuf,
    pub action: Action,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256_before: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256_after: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trashed_to: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_trashed_to: Option<PathBuf>,
    /// The delta (in the history's `deltas/`) that takes the content back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta: Option<String>,
    /// Where that delta lies in the file `delta`, `[offset, length]` in bytes, when the file
    /// holds the deltas of several files of the change; the whole file when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta_range: Option<[u64; 2]>,
    /// The entry at `path` after the change (trees and links are known by it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<EntryFacts>,
    /// What was removed was not kept.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub permanent: bool,
    /// The mode of an empty directory removed without an archive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir_mode: Option<u32>,
    /// The archive a restore took the entry from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restored_from: Option<PathBuf>,
    /// Directories the change created above `path`, shallowest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub created_dirs: Vec<PathBuf>,
}

impl FileRecord {
    /// The record of `file`, its delta stored as `delta` (at `delta_range` in it, if given).
    pub fn of(file: &FileChange, delta: Option<String>, delta_range: Option<[u64; 2]>) -> Self {
        Self {
            path: file.path.clone(),
            action: file.action,
            from: file.from.clone(),
            sha256_before: file.sha256_before.clone(),
            sha256_after: file.sha256_after.clone(),
            trashed_to: file.trashed_to.clone(),
            from_trashed_to: file.from_trashed_to.clone(),
            delta,
            delta_range,
            entry: file.undo.entry,
            permanent: file.undo.permanent,
            dir_mode: file.undo.dir_mode,
            restored_from: file.undo.restored_from.clone(),
            created_dirs: file.undo.created_dirs.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::EntryKind;

    /// Records as this crate wrote them before the entry kinds became one enum read back, and
    /// are written again byte for byte.
    #[test]
    fn records_written_before_read_and_write_the_same() {
        let written = [
            r#"{"id":"c1","time":"2026-11-22T05:17:17.123Z","tool":"move_file","summary":"a → b","files":[{"path":"/w/b","action":"moved","from":"/w/a","entry":{"kind":"directory","dev":2049,"ino":77}}],"sessionId":"s","runId":"r","agentName":"x"}"#,
            r#"{"id":"c2","time":"2026-11-22T05:17:17.123Z","tool":"restore_file","summary":"l","files":[{"path":"/w/l","action":"added","entry":{"kind":"symlink","dev":1,"ino":2},"restoredFrom":"/t/l.tar.gz"}],"sessionId":"s","runId":"r","agentName":"x"}"#,
            r#"{"id":"c3","time":"2026-11-22T05:17:17.123Z","tool":"undo","summary":"undo","files":[{"path":"/w/f","action":"added","entry":{"kind":"file","dev":1,"ino":3}}],"sessionId":"s","runId":"r","agentName":"x","undoes":["c2"]}"#,
        ];
        let kinds = [EntryKind::Directory, EntryKind::Symlink, EntryKind::File];
        for (text, kind) in written.into_iter().zip(kinds) {
            let record: ChangeRecord = serde_json::from_str(text).unwrap();
            assert_eq!(record.files[0].entry.unwrap().kind, kind);
            assert_eq!(serde_json::to_string(&record).unwrap(), text);
        }
        let special = written[0].replace(r#""kind":"directory""#, r#""kind":"special""#);
        assert!(serde_json::from_str::<ChangeRecord>(&special).is_err());
    }
}
