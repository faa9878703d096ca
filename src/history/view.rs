//! The history as the host sees it: `Change[]` (../../docs/history-and-undo.md), newest first, as JSON text. Written
//! straight from the records (no intermediate JSON tree): a host may list ten thousand changes.
//!
//! What a record fixes — its id, time, tool, summary, files (paths in their shown form), author
//! and the changes it undoes — is written once, when the record is first read from the log
//! ([`ChangeJson`]); each listing writes only the state folded from the log around it
//! (`undoable`, `reason`, `undoneBy`). Records are never rewritten, so the text stays true.

use std::borrow::Cow;

use serde::Serialize;

use super::record::ChangeRecord;
use super::HistoryEntry;
use crate::change::Action;
use crate::paths::shown::Shown;

/// The fields of §13's `Change` that its record fixes, in the order they are written.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Fixed<'a> {
    id: &'a str,
    time: &'a str,
    tool: &'a str,
    summary: &'a str,
    files: Vec<File<'a>>,
    session_id: &'a str,
    run_id: &'a str,
    agent_name: &'a str,
}

/// One path of a change.
#[derive(Serialize)]
struct File<'a> {
    path: Cow<'a, str>,
    action: Action,
    #[serde(skip_serializing_if = "Option::is_none")]
    from: Option<Cow<'a, str>>,
}

/// A change's JSON but for its state: `head` is the object up to `agentName` without its
/// closing brace, `tail` the closing brace, after the `undoes` of an undo.
#[derive(Debug)]
pub struct ChangeJson {
    head: Box<str>,
    tail: Box<str>,
}

impl ChangeJson {
    /// The JSON `record` fixes.
    pub fn of(record: &ChangeRecord) -> Self {
        let fixed = Fixed {
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
        };
        let mut head = json(&fixed);
        head.pop(); // the object goes on with the change's state
        let tail = if record.undoes.is_empty() {
            "}".to_owned()
        } else {
            format!(",\"undoes\":{}}}", json(&record.undoes))
        };
        Self {
            head: head.into(),
            tail: tail.into(),
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
    let listed = entries
        .iter()
        .rev()
        .filter(|e| session_id.is_none_or(|s| e.record.session_id == s))
        .take(limit.unwrap_or(usize::MAX));
    let mut out = String::from("[");
    for (i, entry) in listed.enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&entry.json.head);
        out.push_str(if entry.not_undoable.is_none() {
            ",\"undoable\":true"
        } else {
            ",\"undoable\":false"
        });
        if let Some(reason) = &entry.not_undoable {
            out.push_str(",\"reason\":");
            out.push_str(&json(reason));
        }
        if let Some(by) = &entry.undone_by {
            out.push_str(",\"undoneBy\":");
            out.push_str(&json(by));
        }
        out.push_str(&entry.json.tail);
    }
    out.push(']');
    out
}

fn json(value: &(impl Serialize + ?Sized)) -> String {
    serde_json::to_string(value).expect("the history's JSON is made of strings and booleans")
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use serde_json::{json, Value};

    use super::*;
    use crate::change::FileChange;
    use crate::history::FileRecord;

    /// A change whose every field is shown: names that must be escaped, a move, an undo's
    /// `undoes`, and the state (`undoable`, `reason`, `undoneBy`) written around what the record
    /// fixes — valid JSON, field for field what the record and its state say.
    #[test]
    fn a_change_is_written_whole_around_its_state() {
        let file = |path: &str, action, from: Option<&str>| FileRecord {
            from: from.map(Into::into),
            ..FileRecord::of(&FileChange::new(PathBuf::from(path), action), None, None)
        };
        let record = ChangeRecord {
            id: "c2".into(),
            time: "2026-11-27T10:00:00.000Z".into(),
            tool: "undo".into(),
            summary: "undo \"a\"\n".into(),
            files: vec![
                file("/w/new\nline", Action::Moved, Some("/w/old\u{202e}")),
                file("/w/b", Action::Deleted, None),
            ],
            session_id: "s".into(),
            run_id: "r".into(),
            agent_name: "x".into(),
            undoes: vec!["c1".into()],
        };
        let entry = HistoryEntry {
            json: Arc::new(ChangeJson::of(&record)),
            record: Arc::new(record),
            undone_by: Some("c3".into()),
            not_undoable: Some("it was undone by \"c3\"".into()),
            only_archives_missing: false,
        };
        let listed: Value = serde_json::from_str(&changes_json(&[entry], None, None)).unwrap();
        assert_eq!(
            listed,
            json!([{
                "id": "c2", "time": "2026-11-27T10:00:00.000Z", "tool": "undo",
                "summary": "undo \"a\"\n",
                "files": [
                    { "path": "/w/new\\nline", "action": "moved", "from": "/w/old\\u202e" },
                    { "path": "/w/b", "action": "deleted" },
                ],
                "sessionId": "s", "runId": "r", "agentName": "x",
                "undoable": false, "reason": "it was undone by \"c3\"", "undoneBy": "c3",
                "undoes": ["c1"],
            }])
        );
        assert_eq!(changes_json(&[], None, None), "[]");
    }
}
