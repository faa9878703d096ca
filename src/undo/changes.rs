//! What an undo changed, per path, in the order it happened: the undo's own record in the
//! history, which a redo (undoing the undo) takes back path by path in the reverse order.

use std::path::{Path, PathBuf};

use crate::change::{Action, FileChange};

/// What the undo changed, per path, in the order it happened: a redo takes the paths back in the
/// reverse order, so that (say) an entry moved away from a path is checked and moved back only
/// once what the undo put at that path afterwards was taken away. A path has one entry, but for
/// a removal followed by a move there after something moved out of the removed tree.
#[derive(Default)]
pub struct Changes {
    /// Each path's entry, in order (`None` while taken out to be changed: it keeps its place).
    entries: Vec<(PathBuf, Option<FileChange>)>,
}

impl Changes {
    /// Sets the change at `path` (the latest entry for it, or a new one at the end); returns
    /// its place in the order, which it keeps whatever later changes at `path` make of it.
    pub fn insert(&mut self, path: PathBuf, change: FileChange) -> usize {
        match self.entries.iter().rposition(|(p, _)| *p == path) {
            Some(at) => {
                self.entries[at].1 = Some(change);
                at
            }
            None => {
                self.entries.push((path, Some(change)));
                self.entries.len() - 1
            }
        }
    }

    /// Adds an entry for `path` at the end, after any it has.
    pub fn push(&mut self, path: PathBuf, change: FileChange) {
        self.entries.push((path, Some(change)));
    }

    /// Takes the latest change at `path` out, keeping its place.
    pub fn remove(&mut self, path: &Path) -> Option<FileChange> {
        self.entries
            .iter_mut()
            .rev()
            .find(|(p, _)| p == path)
            .and_then(|(_, slot)| slot.take())
    }

    /// The change at the place `at` in the order (see [`Changes::insert`]).
    pub fn at_mut(&mut self, at: usize) -> Option<&mut FileChange> {
        self.entries
            .get_mut(at)
            .and_then(|(_, change)| change.as_mut())
    }

    /// Whether something moved out from beneath `path` after its latest entry.
    pub fn moved_out_after(&self, path: &Path) -> bool {
        let Some(at) = self.entries.iter().rposition(|(p, _)| p == path) else {
            return false;
        };
        self.entries[at + 1..].iter().any(|(_, change)| {
            change
                .as_ref()
                .and_then(|c| c.from.as_ref())
                .is_some_and(|from| from != path && from.starts_with(path))
        })
    }

    /// Every change, in order.
    pub fn in_order(self) -> Vec<FileChange> {
        self.entries
            .into_iter()
            .filter_map(|(_, change)| change)
            .collect()
    }
}

/// The change at `path` so far (an entry that left for the trash is now replaced), or a new one.
pub fn take_over(changes: &mut Changes, path: &Path, action: Action) -> FileChange {
    match changes.remove(path) {
        Some(mut removed) => {
            removed.action = if action == Action::Moved {
                Action::Moved
            } else {
                Action::Modified
            };
            removed
        }
        None => FileChange::new(path.to_owned(), action),
    }
}
