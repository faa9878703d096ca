//! Committing a planned patch (`journal::commit`), one file at a time: what the file destroys
//! goes to the trash, its new content is derived again from the file as read now (which must
//! still be the planned one, and give the planned content) and staged, and then dropped — so
//! that memory stays flat however many files the patch has. Then the whole change is made at
//! once, with its history record; on any failure nothing has changed, and the archives and
//! directories made for it are gone again.

use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use super::plan::{self, Context, Existing, Planned};
use crate::call::{commit_recorded, Recorded};
use crate::cancel::CancelToken;
use crate::change::{Action, FileChange};
use crate::error::{ErrorCode, ToolError};
use crate::hashing::sha256_hex;
use crate::history::Heading;
use crate::journal::commit::{PlannedFile, StepFailure};
use crate::paths::fsops::{self, Snapshot};
use crate::paths::shown::Shown;
use crate::paths::EntryKind;
use crate::paths::Target;
use crate::progress::Meter;
use crate::text::delta::Delta;
use crate::text::patch::{FileChange as PatchChange, FilePatch};
use crate::tools::files;
use crate::tools::trashing::put_in_trash;
use crate::workspace::Workspace;

/// A file as committed: for the result, the audit log and the history.
pub(super) struct Committed {
    pub letter: char,
    pub given: String,
    pub change: FileChange,
    pub notes: Vec<String>,
    /// Archive of the removed entry (a delete, or a moved source that changed).
    pub removed_to: Option<PathBuf>,
}

impl Committed {
    /// The file's change as the audit log and the history keep it: a delete's archive is where
    /// its content went; a changed move's, where its old content went.
    pub fn recorded(&self) -> FileChange {
        let mut change = self.change.clone();
        if change.action == Action::Deleted {
            change.trashed_to = self.removed_to.clone();
        } else {
            change.from_trashed_to = self.removed_to.clone();
        }
        change
    }
}

/// Puts what the patch destroys into the trash, stages every new file, and makes the whole
/// change at once, recorded in the history as `heading` with it (`call::commit_recorded`). On
/// any failure, nothing has changed and the copies made for it are discarded. `progress` counts
/// the files staged.
pub(super) fn commit(
    ws: &Workspace,
    plans: Vec<Planned>,
    files: &[FilePatch],
    cx: &Context,
    heading: &Heading,
    progress: &Meter,
) -> Result<(Vec<Committed>, Recorded), ToolError> {
    let mut archives = Vec::new();
    let result = (|| {
        let mut commit = ws.journal().commit();
        let mut committed = Vec::new();
        // The path of each step, in the order the steps are added (for an error naming it).
        let mut step_paths = Vec::new();
        for plan in plans.into_iter().filter(|p| !p.unchanged) {
            let mut change_record = FileChange::new(
                plan.write
                    .as_ref()
                    .map(|w| w.target.path.clone())
                    .or_else(|| plan.remove.as_ref().map(|(t, _)| t.path.clone()))
                    .unwrap_or_default(),
                plan.action,
            );
            // An updated file's bytes as read again (the planned ones), for its new content if
            // the plan did not keep it, and for what takes it back if the trash will not have it.
            let delta_needed = match plan.action {
                Action::Modified => !plan.archive_replaced,
                Action::Moved => !plan.archive_removed,
                _ => false,
            };
            let read_source = plan.new.is_none() || delta_needed;
            let source = match (&plan.write, &plan.remove, &files[plan.file].change) {
                _ if !read_source => None,
                (_, Some((from, old)), PatchChange::Update { .. }) => {
                    Some(read_again(from, old, cx)?)
                }
                (Some(write), None, PatchChange::Update { .. }) => {
                    let old = write
                        .replaced
                        .as_ref()
                        .expect("an update replaces its file");
                    Some(read_again(&write.target, old, cx)?)
                }
                _ => None,
            };
            let mut removed_to = None;
            if let Some((from, old)) = &plan.remove {
                let (parent, name) = files::open_parent(from, "remove")?;
                if plan.archive_removed {
                    let archived = archive_as_planned(ws, from, old, &cx.cancel)?;
                    removed_to = Some(archived.archive_path.clone());
                    change_record.sha256_before = Some(archived.metadata.original_sha256.clone());
                    record_archive(&mut commit, &archived.archive_path);
                    archives.push(archived);
                } else if plan.action == Action::Moved {
                    change_record.sha256_before = Some(old.sha256.clone());
                }
                if plan.action == Action::Moved {
                    change_record.from = Some(from.path.clone());
                }
                commit
                    .remove(parent, split_parent(from), &name, Snapshot::of(&old.stat))
                    .map_err(|e| ToolError::io(&e, "prepare the removal of", &from.path))?;
                step_paths.push(from.path.clone());
            }
            if let Some(write) = plan.write {
                let data = match (&files[plan.file].change, plan.new, &source) {
                    (PatchChange::Add { text, .. }, _, _) => text.clone().into_bytes(),
                    (_, Some(kept), _) => kept,
                    (_, None, Some(bytes)) => {
                        plan::patched(&files[plan.file], &write.target, bytes, cx)?.0
                    }
                    _ => unreachable!("a written file is added, or updated and read again"),
                };
                if sha256_hex(&data) != write.sha256 {
                    return Err(changed_since_planned(&write.target.path));
                }
                let target = &write.target;
                let (parent_path, name) = target
                    .split()
                    .ok_or_else(|| files::is_a_directory(&target.path))?;
                let (parent, made) =
                    fsops::ensure_dir_made(&target.anchor, parent_path).map_err(|e| {
                        ToolError::io(&e, "create the parent directory of", &target.path)
                    })?;
                change_record.undo.created_dirs = made.iter().map(|d| d.path.clone()).collect();
                commit.made_dirs(made);
                let parent = fsops::reopen_readable(parent.as_fd())
                    .map_err(|e| ToolError::io(&e, "open the parent directory of", &target.path))?;
                if let Some(old) = &write.replaced {
                    if plan.archive_replaced {
                        let archived = archive_as_planned(ws, target, old, &cx.cancel)?;
                        change_record.trashed_to = Some(archived.archive_path.clone());
                        record_archive(&mut commit, &archived.archive_path);
                        archives.push(archived);
                    } else if plan.action == Action::Modified {
                        // No copy in the trash: the history keeps what takes it back.
                        let old_bytes = source.as_deref().unwrap_or_default();
                        let reverse = Delta::around_common_ends(old_bytes, &data);
                        change_record.undo.reverse = Some(std::sync::Arc::new(reverse.encode()));
                    } else if plan.action == Action::Moved {
                        // The file the move replaced was not kept.
                        change_record.undo.permanent = true;
                    }
                    if plan.action != Action::Moved {
                        change_record.sha256_before = Some(old.sha256.clone());
                    }
                }
                if plan.action == Action::Moved && plan.remove.is_some() && removed_to.is_none() {
                    // No copy of the source in the trash: the history keeps what takes its
                    // content back from the destination's.
                    let old_bytes = source.as_deref().unwrap_or_default();
                    let reverse = Delta::around_common_ends(old_bytes, &data);
                    change_record.undo.reverse = Some(std::sync::Arc::new(reverse.encode()));
                }
                change_record.sha256_after = Some(write.sha256.clone());
                // A moved file keeps its source's mode and owner; an updated one its own.
                let metadata_of = match (&plan.remove, &write.replaced) {
                    (Some((_, from)), _) if plan.action == Action::Moved => Some(from.stat),
                    (_, Some(old)) => Some(old.stat),
                    _ => None,
                };
                let replaces = write.replaced.map(|old| PlannedFile {
                    stat: old.stat,
                    sha256: old.sha256,
                });
                commit
                    .put(
                        parent,
                        parent_path,
                        name,
                        data,
                        metadata_of.as_ref(),
                        replaces,
                    )
                    .map_err(|e| ToolError::io(&e, "write", &target.path))?;
                step_paths.push(target.path.clone());
            }
            progress.advance(1);
            committed.push(Committed {
                letter: plan.letter,
                given: plan.given,
                change: change_record,
                notes: plan.notes,
                removed_to,
            });
        }
        if cx.cancel.is_aborted() {
            return Err(ToolError::aborted());
        }
        let changes = || committed.iter().map(Committed::recorded).collect();
        let (_, recorded) = commit_recorded(ws, commit, heading, changes).map_err(|e| {
            let file = step_paths
                .get(e.step)
                .map(|p| p.shown().into_owned())
                .unwrap_or_default();
            match e.reason {
                StepFailure::Changed { being_written, .. } if being_written => ToolError::new(
                    ErrorCode::Conflict,
                    format!("{file} is open for writing in another program; retry once that program has saved or closed it"),
                ),
                StepFailure::Changed { .. } => ToolError::new(
                    ErrorCode::Conflict,
                    format!("{file} changed since the patch was planned; read it again and redo the patch"),
                ),
                StepFailure::Io(io) => ToolError::io(&io, "apply the patch to", Path::new(&file)),
            }
        })?;
        Ok((committed, recorded))
    })();
    if result.is_err() {
        for archived in archives {
            ws.bucket().discard(archived);
        }
    }
    // On success the archives' locks go with them here: they are in place, and reported.
    result
}

/// The bytes of the file at `target`, which must still be the `planned` one (the same file,
/// the same content); else `CONFLICT`.
fn read_again(target: &Target, planned: &Existing, cx: &Context) -> Result<Vec<u8>, ToolError> {
    let changed = || changed_since_planned(&target.path);
    let mut opened = files::open_existing(target, "read")?.ok_or_else(changed)?;
    if fsops::identity(&opened.stat) != fsops::identity(&planned.stat) {
        return Err(changed());
    }
    let bytes = files::read_at_most(
        &mut opened.file,
        cx.limits.edit_max_file_bytes,
        "read",
        &target.path,
    )?
    .ok_or_else(changed)?;
    if sha256_hex(&bytes) != planned.sha256 {
        return Err(changed());
    }
    Ok(bytes)
}

/// `CONFLICT`: the file at `path` is not the one the patch was planned on.
fn changed_since_planned(path: &Path) -> ToolError {
    ToolError::new(
        ErrorCode::Conflict,
        format!(
            "{} changed since the patch was planned; read it again and redo the patch",
            path.shown()
        ),
    )
}

/// Tells the journal about an archive made for the change (recovery discards it if it undoes
/// the change).
fn record_archive(commit: &mut crate::journal::commit::Commit<'_>, archive: &Path) {
    if let Some(name) = archive.file_name() {
        commit.archived(name);
    }
}

/// The parent directory path of a target (every target has one).
fn split_parent(target: &Target) -> &Path {
    target.path.parent().unwrap_or(Path::new("/"))
}

/// Archives (without removing) the entry at `target`, which must still be what was planned on.
fn archive_as_planned(
    ws: &Workspace,
    target: &Target,
    planned: &Existing,
    cancel: &CancelToken,
) -> Result<crate::trash::Archived, ToolError> {
    let (parent, name) = files::open_parent(target, "trash")?;
    let archived = put_in_trash(ws, parent.as_fd(), &name, &target.path, false, cancel)?;
    let is_file = EntryKind::of(&planned.stat) == EntryKind::File;
    if is_file && archived.metadata.original_sha256 != planned.sha256 {
        ws.bucket().discard(archived);
        return Err(files::changed_since_planned(&target.path));
    }
    Ok(archived)
}
