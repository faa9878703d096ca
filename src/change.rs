//! A change: what one call did to the file system, as a list of files. A one-file tool is the
//! one-element case; `apply_patch` and undo list many. The call result (`data.files`), the audit
//! record and the history carry it.

use std::path::{Path, PathBuf};

use crate::paths::shown::Shown;
use serde::Serialize;
use serde_json::{json, Value};

/// What happened to one path (SPEC §13 `Change.files[].action`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// A file or link that did not exist before (written, appended to, or restored).
    Added,
    /// A file's content replaced or extended (write, edit, append, a restore over it).
    Modified,
    /// A file or link removed (into the trash, or permanently).
    Deleted,
    /// An entry moved here from `from`.
    Moved,
    /// A directory created.
    Created,
    /// A directory removed (empty, or a whole tree).
    Removed,
}

/// One path a change touched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileChange {
    /// The absolute path changed (for a move, the destination).
    #[serde(serialize_with = "display")]
    pub path: PathBuf,
    pub action: Action,
    /// Where a moved entry came from.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "display_some"
    )]
    pub from: Option<PathBuf>,
    /// The SHA-256 of what was at `path` before (a tree's digest for a directory).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256_before: Option<String>,
    /// The SHA-256 of what is at `path` after.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256_after: Option<String>,
    /// The archive that keeps what was at `path` before.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "display_some"
    )]
    pub trashed_to: Option<PathBuf>,
    /// For a move that also changed the content: the archive that keeps the content it had at
    /// `from`.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "display_some"
    )]
    pub from_trashed_to: Option<PathBuf>,
}

impl FileChange {
    /// `action` on `path`, nothing else known yet.
    pub fn new(path: impl Into<PathBuf>, action: Action) -> Self {
        Self {
            path: path.into(),
            action,
            from: None,
            sha256_before: None,
            sha256_after: None,
            trashed_to: None,
            from_trashed_to: None,
        }
    }

    /// This file as a result's `data.files` lists it: `{ path, action, from?, trashedTo? }`
    /// (SPEC §12; the digests go to the audit log and the history).
    pub fn summary(&self) -> Value {
        let mut entry = json!({ "path": self.path.shown().into_owned(), "action": self.action });
        if let Some(from) = &self.from {
            entry["from"] = from.shown().into_owned().into();
        }
        if let Some(archive) = &self.trashed_to {
            entry["trashedTo"] = archive.shown().into_owned().into();
        }
        if let Some(archive) = &self.from_trashed_to {
            entry["fromTrashedTo"] = archive.shown().into_owned().into();
        }
        entry
    }
}

fn display<S: serde::Serializer>(path: &Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&path.shown())
}

fn display_some<S: serde::Serializer>(path: &Option<PathBuf>, s: S) -> Result<S::Ok, S::Error> {
    match path {
        Some(path) => display(path, s),
        None => s.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_change_serialises_as_the_spec_names_it() {
        let change = FileChange {
            from: Some("/w/a".into()),
            trashed_to: Some("/d/t.tar.gz".into()),
            sha256_before: Some("ab".into()),
            ..FileChange::new("/w/b", Action::Moved)
        };
        assert_eq!(
            serde_json::to_value(&change).unwrap(),
            json!({ "path": "/w/b", "action": "moved", "from": "/w/a", "sha256Before": "ab", "trashedTo": "/d/t.tar.gz" })
        );
        assert_eq!(
            change.summary(),
            json!({ "path": "/w/b", "action": "moved", "from": "/w/a", "trashedTo": "/d/t.tar.gz" })
        );
    }
}
