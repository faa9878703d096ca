//! A change: what one call did to the file system, as a list of files. A one-file tool is the
//! one-element case; `apply_patch` and undo list many. The call result (`data.files`), the audit
//! record and the history carry it.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::paths::fsops;
use crate::paths::shown::Shown;
use crate::paths::BorrowedDir;
use crate::paths::{EntryKind, FileId};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// What happened to one path (`Change.files[].action`, ../docs/history-and-undo.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
    /// What undo needs besides (kept in the history, not in results or the audit log).
    #[serde(skip)]
    pub undo: UndoFacts,
}

/// What taking a change back needs beyond the change record.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UndoFacts {
    /// The stored form of the `text::delta::Delta` that turns the content after back into the
    /// content before, when no archive keeps it (an edit, an append).
    pub reverse: Option<Arc<Vec<u8>>>,
    /// The entry at `path` after the change.
    pub entry: Option<EntryFacts>,
    /// What was removed was not kept (a permanent delete or removal).
    pub permanent: bool,
    /// The permission bits of an empty directory removed without an archive (undo recreates it).
    pub dir_mode: Option<u32>,
    /// The archive a restore took the entry from (the restore deletes it; an undo of the
    /// restore trashes the entry again, to a new archive that stands for it).
    pub restored_from: Option<PathBuf>,
    /// Directories the change created above `path` (shallowest first): undo removes them again
    /// when they are left empty.
    pub created_dirs: Vec<PathBuf>,
}

/// An entry as the change left it: its kind, and which entry it is (what tells a moved or
/// restored tree from anything put in its place since). Stored as `kind`, `dev` and `ino`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EntryFacts {
    pub kind: EntryKind,
    #[serde(flatten)]
    pub id: FileId,
}

impl EntryFacts {
    /// The entry `name` of `dir` as a change leaves it, for the history (undo checks it is still
    /// that entry): its kind, device and inode. `None` if there is nothing there to describe.
    pub fn of_entry(dir: BorrowedDir<'_>, name: &OsStr) -> Option<Self> {
        let stat = fsops::lstat_at(dir, name).ok()??;
        let kind = match EntryKind::of(&stat) {
            EntryKind::Special => return None,
            kind => kind,
        };
        Some(Self {
            kind,
            id: stat.id(),
        })
    }
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
            undo: UndoFacts::default(),
        }
    }

    /// This file as a result's `data.files` lists it: `{ path, action, from?, trashedTo? }`
    /// (../docs/tools.md#apply_patch; the digests go to the audit log and the history).
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
