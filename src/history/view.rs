//! The history as the host sees it: `Change[]` (../../docs/history-and-undo.md), newest first, as JSON text. Written
//! straight from the records (no intermediate JSON tree): a host may list ten thousand changes.

use std::borrow::Cow;

use serde::Serialize;

use super::HistoryEntry;
use crate::change::Action;
use crate::paths::shown::Shown;

/// One change as §13's `Change` (plus `undoes` on an undo).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Change<'a> {
    id: &'a str,
    time: &'a str,
    tool: &'a str,
    summary: &'a str,
    files: Vec<File<'a>>,
    session_id: &'a str,
    run_id: &'a str,
    agent_name: &'a str,
    undoable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    undone_by: Option<&'a str>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    undoes: &'a [String],
}

/// One path of a change.
#[derive(Serialize)]
struct File<'a> {
    path: Cow<'a, str>,
    action: Action,
    #[serde(skip_serializing_if = "Option::is_none")]
    from: Option<Cow<'a, str>>,
}

impl<'a> Change<'a> {
    fn of(entry: &'a HistoryEntry) -> Self {
        let record = &entry.record;
        Self {
            id: &record.id,
            time: &record.time,
            tool: &record.tool,
            summary: &record.summary,
            files: record
                .files
                .iter()
                .map(|f| File {
                    path: f.path.shown(),
                    action: f.action,
                    from: f.from.as_ref().map(|from| from.shown()),
                })
                .collect(),
            session_id: &record.session_id,
            run_id: &record.run_id,
            agent_name: &record.agent_name,
            undoable: entry.not_undoable.is_none(),
            reason: entry.not_undoable.as_deref(),
            undone_by: entry.undone_by.as_deref(),
            undoes: &record.undoes,
        }
    }
}

/// The JSON of `entries` (oldest first, as `History::entries` gives them) as the host sees them:
/// newest first, only `session_id`'s if given, at most `limit`.
pub fn changes_json(
    entries: &[HistoryEntry],
    limit: Option<usize>,
    session_id: Option<&str>,
) -> String {
    let changes: Vec<Change> = entries
        .iter()
        .rev()
        .filter(|e| session_id.is_none_or(|s| e.record.session_id == s))
        .take(limit.unwrap_or(usize::MAX))
        .map(Change::of)
        .collect();
    serde_json::to_string(&changes).expect("the history's JSON is made of strings and booleans")
}
