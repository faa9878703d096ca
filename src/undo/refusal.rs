//! Why an undo is refused, in the words the host and the model read: a path not as the change
//! left it (`CONFLICT`), a change that cannot be undone, what the history keeps that does not
//! give back what it recorded.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::{ErrorCode, ToolError};
use crate::history::ChangeRecord;
use crate::paths::shown::Shown;
use crate::trash::TrashError;

/// `change <id> (<summary>)`.
pub fn describe(record: &ChangeRecord) -> String {
    format!("change {} ({})", record.id, record.summary)
}

/// A path not as the change left it (`why`: what differs, e.g. a [`Difference`]).
pub fn conflict(path: &Path, change: &str, why: impl fmt::Display) -> ToolError {
    ToolError::new(
        ErrorCode::Conflict,
        format!(
            "cannot undo {change}: {} is not as it left it ({why}). Nothing was undone; undo the later changes to it first, or leave this change as it is",
            path.shown()
        ),
    )
}

/// A change that cannot be taken back at all, and why.
pub fn not_undoable(record: &ChangeRecord, why: &str) -> ToolError {
    ToolError::new(
        ErrorCode::Conflict,
        format!(
            "{} cannot be undone: {why}. Nothing was undone",
            describe(record)
        ),
    )
}

/// What the history keeps to take `path` back does not give back the recorded content.
pub fn damaged(record: &ChangeRecord, path: &Path) -> ToolError {
    ToolError::new(
        ErrorCode::IoError,
        format!(
            "cannot undo {}: what the history keeps to take {} back does not give back the recorded content. Nothing was undone",
            describe(record),
            path.shown()
        ),
    )
}

/// How a path differs from what a change left there: the clause a [`conflict`] gives.
#[derive(Debug)]
pub enum Difference {
    /// An entry is where the change left nothing: of this kind, when it is known.
    Present(Option<&'static str>),
    /// Nothing is where the change left an entry.
    Gone,
    /// An entry of this other kind is there.
    OtherKind(&'static str),
    /// Another entry of this (the same) kind took its place.
    Replaced(&'static str),
    /// Its content is not what the change left.
    ContentChanged,
    /// What is there could not be looked at.
    Unreadable(ToolError),
    /// The archive a tree comes back from could not be read.
    Archive(UnreadableArchive),
    /// What the undo takes back inside the tree at this path, which comes back from the trash,
    /// cannot be checked in one step.
    InsideArchive(PathBuf),
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Difference::Present(Some(kind)) => write!(f, "{kind} is there now"),
            Difference::Present(None) => f.write_str("an entry is there now"),
            Difference::Gone => f.write_str("it no longer exists"),
            Difference::OtherKind(kind) => write!(f, "it is now a {kind}"),
            Difference::Replaced(kind) => write!(f, "it was replaced by another {kind} since"),
            Difference::ContentChanged => f.write_str("its content changed since"),
            Difference::Unreadable(e) => f.write_str(&e.message),
            Difference::Archive(e) => e.fmt(f),
            Difference::InsideArchive(top) => write!(
                f,
                "what this undo takes back inside {}, which comes back from the trash, cannot be checked in one step; undo these changes one at a time",
                top.shown()
            ),
        }
    }
}

impl From<UnreadableArchive> for Difference {
    fn from(e: UnreadableArchive) -> Self {
        Difference::Archive(e)
    }
}

impl From<ToolError> for Difference {
    fn from(e: ToolError) -> Self {
        Difference::Unreadable(e)
    }
}

/// A directory archive whose entries could not be read.
#[derive(Debug)]
pub struct UnreadableArchive {
    pub archive: PathBuf,
    pub error: TrashError,
}

impl fmt::Display for UnreadableArchive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "what the trash keeps of it cannot be read ({}: {})",
            self.archive.shown(),
            self.error
        )
    }
}

impl From<UnreadableArchive> for ToolError {
    fn from(e: UnreadableArchive) -> Self {
        ToolError::new(ErrorCode::IoError, e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The clauses hosts and models read in a `CONFLICT`, word for word.
    #[test]
    fn differences_read_as_the_conflict_says_them() {
        let cases = [
            (Difference::Present(Some("file")), "file is there now"),
            (Difference::Present(None), "an entry is there now"),
            (Difference::Gone, "it no longer exists"),
            (Difference::OtherKind("directory"), "it is now a directory"),
            (
                Difference::Replaced("symlink"),
                "it was replaced by another symlink since",
            ),
            (Difference::ContentChanged, "its content changed since"),
            (
                Difference::Unreadable(ToolError::new(ErrorCode::IoError, "cannot read /w/a")),
                "cannot read /w/a",
            ),
            (
                Difference::Archive(UnreadableArchive {
                    archive: "/t/a.tar.gz".into(),
                    error: TrashError::Corrupt("bad".into()),
                }),
                "what the trash keeps of it cannot be read (/t/a.tar.gz: the trash archive is corrupt: bad. Nothing was restored and the archive was left in place; pick another archive from trash_list)",
            ),
            (
                Difference::InsideArchive("/w/t".into()),
                "what this undo takes back inside /w/t, which comes back from the trash, cannot be checked in one step; undo these changes one at a time",
            ),
        ];
        for (difference, text) in cases {
            assert_eq!(difference.to_string(), text);
        }
        let e = conflict(Path::new("/w/a"), "change c1 (a)", Difference::Gone);
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                ErrorCode::Conflict,
                "cannot undo change c1 (a): /w/a is not as it left it (it no longer exists). Nothing was undone; undo the later changes to it first, or leave this change as it is"
            )
        );
    }
}
