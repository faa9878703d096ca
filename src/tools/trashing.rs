//! What the destructive tools say about the trash: a step that could not trash first, and the
//! text that tells the model how to get something back. Putting entries into the trash is the
//! engine's ([`crate::call::trashing`]).

use std::path::Path;

use crate::call::execute::Failure;
use crate::call::trashing::trash_error;
use crate::call::Call;
use crate::error::ToolError;
use crate::paths::shown::Shown;

/// What was at `path` could not go to the trash first (the failure of a plan's step that
/// replaces it); nothing changed.
pub fn not_trashed_first(path: &Path, failure: Failure) -> ToolError {
    match failure {
        Failure::Trash(e) => trash_error(e, "trash", path),
        Failure::Io(e) => ToolError::io(&e, "trash", path),
        Failure::NotAsExpected(_) | Failure::Changed { .. } | Failure::Invalid(_) => {
            super::files::changed_since_planned(path)
        }
    }
}

/// The line of a result saying where `subject` went in the trash: `\n<subject> is in the trash at
/// <archive>; restore it with restore_file { "trashedPath": "…" }.`, with the host's name for
/// restore_file, and the second half only when the workspace offers it.
pub fn in_trash(call: &Call, subject: &str, archive: &Path) -> String {
    let hint = call.names.hint("restore_file", |restore| {
        let quoted = serde_json::to_string(&archive.shown().into_owned()).unwrap_or_default();
        format!("; restore it with {restore} {{ \"trashedPath\": {quoted} }}")
    });
    format!("\n{subject} is in the trash at {}{hint}.", archive.shown())
}
