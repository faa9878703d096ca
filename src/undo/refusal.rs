//! Why an undo is refused, in the words the host and the model read: a path not as the change
//! left it (`CONFLICT`), a change that cannot be undone, what the history keeps that does not
//! give back what it recorded.

use std::path::Path;

use crate::error::{ErrorCode, ToolError};
use crate::history::ChangeRecord;
use crate::paths::shown::Shown;

/// `change <id> (<summary>)`.
pub fn describe(record: &ChangeRecord) -> String {
    format!("change {} ({})", record.id, record.summary)
}

/// A path not as the change left it.
pub fn conflict(path: &Path, change: &str, why: &str) -> ToolError {
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

/// Why a tree coming back from the trash cannot be checked with what is taken back inside it.
pub fn inside_archive(top: &Path) -> String {
    format!(
        "what this undo takes back inside {}, which comes back from the trash, cannot be checked in one step; undo these changes one at a time",
        top.shown()
    )
}
