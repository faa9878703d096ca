//! Which changes an undo takes back (SPEC §13): the latest that is neither undone nor an undo,
//! one by id (an undo's id redoes), or every standing change of a session, newest first; and the
//! refusal when a later change touched the same paths.

use std::path::Path;

use super::plan::describe;
use crate::error::{ErrorCode, ToolError};
use crate::history::{ChangeRecord, Entry};
use crate::paths::shown::Shown;

/// What to undo.
#[derive(Debug, Clone, Default)]
pub struct Selector {
    pub id: Option<String>,
    pub session_id: Option<String>,
}

/// The changes to take back, newest first.
pub fn select(entries: &[Entry], selector: &Selector) -> Result<Vec<ChangeRecord>, ToolError> {
    let standing = |e: &&Entry| e.undone_by.is_none();
    let is_undo = |e: &Entry| !e.record.undoes.is_empty();
    let targets: Vec<&Entry> = if let Some(id) = &selector.id {
        let Some(entry) = entries.iter().find(|e| &e.record.id == id) else {
            return Err(ToolError::new(
                ErrorCode::NotFound,
                format!(
                    "no change {id} in this workspace's history; ws.history() lists the changes"
                ),
            ));
        };
        if let Some(by) = &entry.undone_by {
            return Err(ToolError::new(
                ErrorCode::Conflict,
                format!(
                    "{} was already undone by {by}; undo {by} to redo it",
                    describe(&entry.record)
                ),
            ));
        }
        vec![entry]
    } else if let Some(session) = &selector.session_id {
        let found: Vec<&Entry> = entries
            .iter()
            .rev()
            .filter(standing)
            .filter(|e| &e.record.session_id == session && !is_undo(e))
            .collect();
        if found.is_empty() {
            return Err(ToolError::new(
                ErrorCode::NotFound,
                format!(
                    "nothing to undo in session {session}: it has no change that is not undone yet"
                ),
            ));
        }
        found
    } else {
        match entries.iter().rev().filter(standing).find(|e| !is_undo(e)) {
            Some(latest) => vec![latest],
            None => {
                return Err(ToolError::new(
                    ErrorCode::NotFound,
                    "nothing to undo: the history has no change that is not undone yet".to_owned(),
                ))
            }
        }
    };
    for target in &targets {
        if let Some(reason) = &target.not_undoable {
            return Err(ToolError::new(
                ErrorCode::Conflict,
                format!(
                    "{} cannot be undone: {reason}. Nothing was undone",
                    describe(&target.record)
                ),
            ));
        }
    }
    refuse_later_changes(entries, &targets)?;
    Ok(targets.into_iter().map(|e| e.record.clone()).collect())
}

/// A later standing change (not an undo, not among `targets`) to a path a target touched must be
/// undone first.
fn refuse_later_changes(entries: &[Entry], targets: &[&Entry]) -> Result<(), ToolError> {
    let Some(first) = targets
        .iter()
        .filter_map(|t| entries.iter().position(|e| e.record.id == t.record.id))
        .min()
    else {
        return Ok(());
    };
    for later in &entries[first + 1..] {
        let is_target = targets.iter().any(|t| t.record.id == later.record.id);
        if is_target || later.undone_by.is_some() || !later.record.undoes.is_empty() {
            continue;
        }
        for target in targets {
            let position = entries.iter().position(|e| e.record.id == target.record.id);
            if position.is_some_and(|p| {
                p >= entries
                    .iter()
                    .position(|e| e.record.id == later.record.id)
                    .unwrap_or(0)
            }) {
                continue;
            }
            if let Some(path) = shared_path(&target.record, &later.record) {
                return Err(ToolError::new(
                    ErrorCode::Conflict,
                    format!(
                        "cannot undo {}: {} was changed again by the later {}; undo that change first. Nothing was undone",
                        describe(&target.record),
                        path.shown(),
                        describe(&later.record)
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A path (or one beneath or above it) both changes touched.
fn shared_path<'r>(a: &ChangeRecord, b: &'r ChangeRecord) -> Option<&'r Path> {
    let paths = |r: &ChangeRecord| -> Vec<std::path::PathBuf> {
        r.files
            .iter()
            .flat_map(|f| std::iter::once(f.path.clone()).chain(f.from.clone()))
            .collect()
    };
    let ours = paths(a);
    b.files
        .iter()
        .flat_map(|f| std::iter::once(f.path.as_path()).chain(f.from.as_deref()))
        .find(|theirs| {
            ours.iter()
                .any(|p| p.as_path() == *theirs || p.starts_with(theirs) || theirs.starts_with(p))
        })
}
