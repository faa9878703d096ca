//! Which changes an undo takes back (../../docs/history-and-undo.md): the latest that is neither undone nor an undo,
//! one by id (an undo's id redoes), or every standing change of a session, newest first; and the
//! refusal when a later change touched the same paths.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::refusal::describe;
use crate::change::EntryFacts;
use crate::error::{ErrorCode, ToolError};
use crate::history::{ChangeRecord, HistoryEntry};
use crate::paths::shown::Shown;

/// What to undo.
#[derive(Debug, Clone, Default)]
pub struct Selector {
    pub id: Option<String>,
    pub session_id: Option<String>,
}

/// A change to take back.
#[derive(Debug, Clone)]
pub struct ChangeToUndo {
    pub record: ChangeRecord,
    /// The entries the standing undos after this change (and before the next newer target)
    /// put back, by path as each undo left it: they hold what the changes left there, under new
    /// inodes (restored from the trash, recreated), and are known by these facts instead. The
    /// planner adds them to its virtual state when it reaches this change (see `plan`), where
    /// they follow the entries as older changes are taken back.
    pub put_back: HashMap<PathBuf, EntryFacts>,
}

/// The changes to take back, newest first.
pub fn select(
    entries: &[HistoryEntry],
    selector: &Selector,
    archive_exists: &dyn Fn(&Path) -> bool,
) -> Result<Vec<ChangeToUndo>, ToolError> {
    let standing = |e: &&HistoryEntry| e.undone_by.is_none();
    let is_undo = |e: &HistoryEntry| !e.record.undoes.is_empty();
    let targets: Vec<&HistoryEntry> = if let Some(id) = &selector.id {
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
        let found: Vec<&HistoryEntry> = entries
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
    // Within a session undo, an archive a restore of the same session consumed is not needed
    // from the trash: the restored entry itself stands in for it (see `plan`).
    let restored: Vec<&std::ffi::OsStr> = targets
        .iter()
        .flat_map(|t| t.record.files.iter())
        .filter_map(|f| f.restored_from.as_ref().and_then(|a| a.file_name()))
        .collect();
    for target in &targets {
        let stood_in = target.record.files.iter().all(|f| {
            [&f.trashed_to, &f.from_trashed_to]
                .into_iter()
                .flatten()
                .all(|a| archive_exists(a) || a.file_name().is_some_and(|n| restored.contains(&n)))
        });
        if targets.len() > 1 && stood_in && target.only_archives_missing {
            continue;
        }
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
    let position = |target: &HistoryEntry| {
        entries
            .iter()
            .position(|e| e.record.id == target.record.id)
            .unwrap_or(entries.len())
    };
    let mut newer = entries.len();
    Ok(targets
        .into_iter()
        .map(|target| {
            let at = position(target);
            let put_back = put_back_between(entries, at, newer);
            newer = newer.min(at);
            ChangeToUndo {
                record: ChangeRecord::clone(&target.record),
                put_back,
            }
        })
        .collect())
}

/// The entry facts the standing undos after `entries[at]` and before `entries[newer]` recorded,
/// per path (the latest wins).
fn put_back_between(
    entries: &[HistoryEntry],
    at: usize,
    newer: usize,
) -> HashMap<PathBuf, EntryFacts> {
    let mut facts = HashMap::new();
    for undo in entries.iter().take(newer).skip(at + 1) {
        if undo.undone_by.is_some() || undo.record.undoes.is_empty() {
            continue;
        }
        for file in &undo.record.files {
            if let Some(entry) = file.entry {
                facts.insert(file.path.clone(), entry);
            }
        }
    }
    facts
}

/// A later standing change (not an undo, not among `targets`) to a path a target touched must be
/// undone first.
fn refuse_later_changes(
    entries: &[HistoryEntry],
    targets: &[&HistoryEntry],
) -> Result<(), ToolError> {
    let position = |id: &str| entries.iter().position(|e| e.record.id == id);
    for target in targets {
        let Some(at) = position(&target.record.id) else {
            continue;
        };
        let later = entries[at + 1..].iter().filter(|e| {
            e.undone_by.is_none()
                && e.record.undoes.is_empty()
                && !targets.iter().any(|t| t.record.id == e.record.id)
        });
        for change in later {
            if let Some(path) = shared_path(&target.record, &change.record) {
                return Err(ToolError::new(
                    ErrorCode::Conflict,
                    format!(
                        "cannot undo {}: {} was changed again by the later {}; undo that change first. Nothing was undone",
                        describe(&target.record),
                        path.shown(),
                        describe(&change.record)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::change::Action;
    use crate::history::FileRecord;

    fn entry(id: &str, session: &str, paths: &[&str], undoes: &[&str]) -> HistoryEntry {
        let record = ChangeRecord {
            id: id.into(),
            time: String::new(),
            tool: if undoes.is_empty() {
                "write_file"
            } else {
                "undo"
            }
            .into(),
            summary: id.into(),
            files: paths
                .iter()
                .map(|p| FileRecord {
                    path: p.into(),
                    action: Action::Modified,
                    from: None,
                    sha256_before: None,
                    sha256_after: None,
                    trashed_to: None,
                    from_trashed_to: None,
                    delta: None,
                    delta_range: None,
                    entry: None,
                    permanent: false,
                    dir_mode: None,
                    restored_from: None,
                    created_dirs: Vec::new(),
                })
                .collect(),
            session_id: session.into(),
            run_id: String::new(),
            agent_name: String::new(),
            undoes: undoes.iter().map(|u| u.to_string()).collect(),
        };
        HistoryEntry {
            json: std::sync::Arc::new(crate::history::ChangeJson::of(&record)),
            record: std::sync::Arc::new(record),
            undone_by: None,
            not_undoable: None,
            only_archives_missing: false,
        }
    }

    fn select_all(
        entries: &[HistoryEntry],
        selector: &Selector,
    ) -> Result<Vec<ChangeToUndo>, ToolError> {
        select(entries, selector, &|_| true)
    }

    fn ids(targets: &[ChangeToUndo]) -> Vec<&str> {
        targets.iter().map(|t| t.record.id.as_str()).collect()
    }

    #[test]
    fn the_latest_skips_undone_changes_and_undos() {
        let mut entries = vec![
            entry("a", "s", &["/w/a"], &[]),
            entry("b", "s", &["/w/b"], &[]),
            entry("u", "s", &["/w/b"], &["b"]),
        ];
        entries[1].undone_by = Some("u".into());
        let picked = select_all(&entries, &Selector::default()).unwrap();
        assert_eq!(ids(&picked), ["a"]);
    }

    #[test]
    fn a_later_change_to_the_same_path_or_one_beneath_it_is_named() {
        let entries = vec![
            entry("a", "s", &["/w/d"], &[]),
            entry("b", "s", &["/w/d/x"], &[]),
        ];
        let by_id = Selector {
            id: Some("a".into()),
            ..Selector::default()
        };
        let refused = select_all(&entries, &by_id).unwrap_err();
        assert_eq!(refused.code, ErrorCode::Conflict);
        assert!(
            refused.message.contains("change b (b)"),
            "{}",
            refused.message
        );
        // Unrelated paths do not block.
        let entries = vec![
            entry("a", "s", &["/w/d"], &[]),
            entry("b", "s", &["/w/dx"], &[]),
        ];
        assert_eq!(ids(&select_all(&entries, &by_id).unwrap()), ["a"]);
    }

    #[test]
    fn a_session_is_its_standing_changes_newest_first_and_others_later_block_it() {
        let entries = vec![
            entry("a", "s1", &["/w/a"], &[]),
            entry("b", "s2", &["/w/b"], &[]),
            entry("c", "s1", &["/w/c"], &[]),
        ];
        let session = Selector {
            session_id: Some("s1".into()),
            ..Selector::default()
        };
        assert_eq!(ids(&select_all(&entries, &session).unwrap()), ["c", "a"]);
        let entries = vec![
            entry("a", "s1", &["/w/a"], &[]),
            entry("b", "s2", &["/w/a"], &[]),
        ];
        assert_eq!(
            select_all(&entries, &session).unwrap_err().code,
            ErrorCode::Conflict
        );
    }

    #[test]
    fn an_undone_change_by_id_says_what_undid_it() {
        let mut entries = vec![
            entry("a", "s", &["/w/a"], &[]),
            entry("u", "s", &["/w/a"], &["a"]),
        ];
        entries[0].undone_by = Some("u".into());
        let by_id = Selector {
            id: Some("a".into()),
            ..Selector::default()
        };
        let refused = select_all(&entries, &by_id).unwrap_err();
        assert!(
            refused.message.contains("undo u to redo it"),
            "{}",
            refused.message
        );
        let unknown = Selector {
            id: Some("zz".into()),
            ..Selector::default()
        };
        assert_eq!(
            select_all(&entries, &unknown).unwrap_err().code,
            ErrorCode::NotFound
        );
    }
}
