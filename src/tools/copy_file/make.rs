//! The confirmed copy as one change for the executor: the destination's old entry to the trash
//! first, the copy built under a temp name and placed, with its history record.

use std::path::PathBuf;

use crate::call::execute::{execute, CopyMade, Done};
use crate::call::plan::{Act, ChangePlan, Expect, Keep, Place, Step};
use crate::call::trashing::ensure_bucket_writable;
use crate::call::Recorded;
use crate::cancel::CancelToken;
use crate::change::{Action, EntryFacts, FileChange};
use crate::error::ToolError;
use crate::history::Heading;
use crate::paths::{AsDir, EntryKind, Stat, Target};
use crate::tools::files;
use crate::trash::Archived;
use crate::workspace::Workspace;

/// A confirmed copy, made once the lock is exclusive.
pub(super) struct Copying {
    pub(super) source: Target,
    pub(super) destination: Target,
    /// The source as planned on (the entry copied must still be it).
    pub(super) planned: Stat,
    /// What was at the destination when planned (it goes to the trash first).
    pub(super) replaced: Option<Stat>,
}

/// What the copy made.
pub(super) struct Made {
    /// What the copy step built (always there once the change is made).
    pub(super) copy: Option<CopyMade>,
    pub(super) archived: Option<Archived>,
    pub(super) change: FileChange,
    pub(super) recorded: Recorded,
    pub(super) seen: Option<crate::views::Seen>,
}

impl Copying {
    /// Copies the source beside the destination and places it as one change with its history
    /// record (a kill leaves both or neither), the destination's old entry archived first.
    pub(super) fn make(
        &self,
        ws: &Workspace,
        heading: &Heading,
        cancel: &CancelToken,
    ) -> Result<Made, ToolError> {
        let dst = &self.destination.path;
        let at = Place::of(&self.destination).ok_or_else(|| files::is_a_directory(dst))?;
        let from =
            Place::of(&self.source).ok_or_else(|| files::is_a_directory(&self.source.path))?;
        let mut steps = Vec::new();
        if let Some(replaced) = self.replaced {
            ensure_bucket_writable(ws, dst)?;
            steps.push(Step {
                at: at.clone(),
                expect: Expect::Entry { stat: replaced },
                keep: Keep::Archive,
                act: Act::Remove,
            });
        }
        // Built at the topmost directory missing from its path, with the others inside it: the
        // parents made for the copy are there with it or not at all (also after a kill).
        let created_dirs = files::missing_parents(&self.destination);
        let (at, below) = match created_dirs.first() {
            None => (at, PathBuf::new()),
            Some(top) => {
                let below = dst.strip_prefix(top).unwrap_or(dst).to_owned();
                let top = Target {
                    path: top.clone(),
                    ..self.destination.clone()
                };
                (Place::of(&top).unwrap_or(at), below)
            }
        };
        steps.push(Step {
            at,
            expect: Expect::Nothing,
            keep: Keep::Nothing,
            act: Act::Copy {
                from,
                source: self.planned,
                below,
            },
        });
        let replaced_a_file = self.replaced.is_some_and(|r| r.kind() == EntryKind::File);
        let mut seen = None;
        let files = |done: &Done| {
            let action = if replaced_a_file {
                Action::Modified
            } else {
                Action::Added
            };
            let mut change = FileChange::new(dst.clone(), action);
            if let Some(archived) = done.archives.first().and_then(Option::as_ref) {
                change.sha256_before = Some(archived.metadata.original_sha256.clone());
                change.trashed_to = Some(archived.archive_path.clone());
            }
            change.sha256_after = done.copies.last().cloned().flatten().and_then(|c| c.sha256);
            if let Ok((parent, name)) = files::open_parent(&self.destination, "copy to") {
                change.undo.entry = EntryFacts::of_entry(parent.as_dir(), &name);
                seen = files::file_stat_at(parent.as_dir(), &name);
            }
            change.undo.created_dirs = created_dirs.clone();
            vec![change]
        };
        let plan = ChangePlan {
            consume: Vec::new(),
            steps,
        };
        let copy_step = plan.steps.len() - 1;
        match execute(ws, plan, heading, cancel, files) {
            Ok(mut executed) => Ok(Made {
                copy: executed.done.copies.pop().flatten(),
                archived: executed.done.archives.first_mut().and_then(Option::take),
                change: executed
                    .files
                    .pop()
                    .unwrap_or_else(|| FileChange::new(dst.clone(), Action::Added)),
                recorded: executed.recorded,
                seen,
            }),
            Err(e) => Err(self.failed(e.step == copy_step, e.failure)),
        }
    }
}
