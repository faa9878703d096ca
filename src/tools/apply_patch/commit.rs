//! A planned patch as one change (`call::execute`): a step per file — a put for an added or
//! updated file (its bytes derived again from the file as read now where the plan did not keep
//! them, which must still be the planned file and give the planned content), a removal for a
//! deleted file or a moved one's source, then the put at its destination — with what each
//! destroys kept in the trash first, or, for an update, the delta that takes it
//! back in its history record. The executor makes them all or none, with the record.

use std::collections::HashSet;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::plan::{self, Context, Existing, FilePlan};
use crate::call::execute::{execute, Done, ExecuteError, Failure};
use crate::call::plan::{Act, BytesRead, ChangePlan, Expect, Keep, Place, Step};
use crate::call::trashing::{ensure_bucket_writable, trash_error};
use crate::call::Recorded;
use crate::change::{Action, FileChange};
use crate::error::{ErrorCode, ToolError};
use crate::hashing::sha256_hex;
use crate::history::Heading;
use crate::paths::fsops;
use crate::paths::shown::Shown;
use crate::paths::{EntryKind, Target};
use crate::progress::Meter;
use crate::text::delta::Delta;
use crate::text::diff::delta_within;
use crate::text::patch::{FilePatch, PatchChange};
use crate::tools::files;
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

/// A file of the patch as its steps make it: its change as known before the commit, and
/// which steps' archives complete it.
struct Pending {
    committed: Committed,
    /// The step removing a deleted file or a moved source, if it is archived.
    removal_archived: Option<usize>,
    /// The step putting the new content, if what it replaces is archived.
    put_archived: Option<usize>,
}

/// Makes every planned file's change at once, recorded in the history as `heading` with it.
/// On any failure nothing has changed, and the archives and directories made for it are gone
/// again. `progress` counts the files prepared.
pub(super) fn commit(
    ws: &Workspace,
    plans: Vec<FilePlan>,
    files: &[FilePatch],
    cx: &Context,
    heading: &Heading,
    progress: &Meter,
) -> Result<(Vec<Committed>, Recorded), ToolError> {
    let mut steps = Vec::new();
    let mut pending = Vec::new();
    // Directories a put of an earlier file makes: a later file's parents made with them are
    // recorded by the file that makes them.
    let mut made_dirs = HashSet::new();
    for plan in plans.into_iter().filter(|p| !p.unchanged) {
        pending.push(plan_file(plan, files, cx, &mut steps, &mut made_dirs)?);
        progress.advance(1);
    }
    // One bucket for every archive: checked once, named by the first file kept.
    if let Some(step) = steps.iter().find(|s| s.keep == Keep::Archive) {
        ensure_bucket_writable(ws, &step.at.path())?;
    }
    if cx.cancel.is_aborted() {
        return Err(ToolError::aborted());
    }
    let paths: Vec<PathBuf> = steps.iter().map(|s| s.at.path()).collect();
    let plan = ChangePlan {
        steps,
        consume: Vec::new(),
    };
    let listed = |done: &Done| {
        pending
            .iter_mut()
            .map(|file| {
                complete(file, done);
                file.committed.recorded()
            })
            .collect()
    };
    let executed = execute(ws, plan, heading, &cx.cancel, listed).map_err(|e| failed(&paths, e))?;
    let committed = pending.into_iter().map(|p| p.committed).collect();
    Ok((committed, executed.recorded))
}

/// Adds the steps of one planned file to `steps`; returns its change as known before the
/// commit.
fn plan_file(
    plan: FilePlan,
    files: &[FilePatch],
    cx: &Context,
    steps: &mut Vec<Step>,
    made_dirs: &mut HashSet<PathBuf>,
) -> Result<Pending, ToolError> {
    let mut change = FileChange::new(
        plan.write
            .as_ref()
            .map(|w| w.target.path.clone())
            .or_else(|| plan.remove.as_ref().map(|(t, _)| t.path.clone()))
            .unwrap_or_default(),
        plan.action,
    );
    // An updated file's bytes as read again (the planned ones), for its new content if the
    // plan did not keep it, and for what takes it back if the trash will not have it.
    let delta_needed = match plan.action {
        Action::Modified => !plan.archive_replaced && plan.reverse.is_none(),
        Action::Moved => !plan.archive_removed,
        _ => false,
    };
    let read_source = plan.new.is_none() || delta_needed;
    let source = match (&plan.write, &plan.remove, &files[plan.file].change) {
        _ if !read_source => None,
        (_, Some((from, old)), PatchChange::Update { .. }) => Some(read_again(from, old, cx)?),
        (Some(write), None, PatchChange::Update { .. }) => {
            let old = write
                .replaced
                .as_ref()
                .expect("an update replaces its file");
            Some(read_again(&write.target, old, cx)?)
        }
        _ => None,
    };
    let (source_stat, source) = match source {
        Some((stat, bytes)) => (Some(stat), Some(bytes)),
        None => (None, None),
    };
    let mut removal_archived = None;
    if let Some((from, old)) = &plan.remove {
        // A moved source read again is expected as read now; a deleted entry as planned.
        let stat = source_stat.unwrap_or(old.stat);
        let expect = match EntryKind::of(&stat) {
            EntryKind::File => Expect::File {
                stat,
                sha256: old.sha256.clone(),
                bytes: None,
            },
            _ => Expect::Entry { stat },
        };
        if plan.archive_removed {
            removal_archived = Some(steps.len());
        } else if plan.action == Action::Moved {
            change.sha256_before = Some(old.sha256.clone());
        }
        if plan.action == Action::Moved {
            change.from = Some(from.path.clone());
        }
        steps.push(Step {
            at: place(from)?,
            expect,
            keep: if plan.archive_removed {
                Keep::Archive
            } else {
                Keep::Nothing
            },
            act: Act::Remove,
        });
    }
    let mut put_archived = None;
    let mut old_bytes = plan.old;
    if let Some(write) = plan.write {
        // The bytes the plan hashed (an added file's text, an update's new content kept), or
        // derived again, which must give the planned content (and, for an update, the delta
        // of its changed lines the plan did not keep).
        let mut reverse = plan.reverse;
        let data = match (&files[plan.file].change, plan.new, &source) {
            (PatchChange::Add { text, .. }, _, _) => text.clone().into_bytes(),
            (_, Some(kept), _) => kept,
            (_, None, Some(bytes)) => {
                let patched = plan::patched(&files[plan.file], &write.target, bytes, cx)?;
                if sha256_hex(patched.new.as_bytes()) != write.sha256 {
                    return Err(changed_since_planned(&write.target.path));
                }
                if plan.action == Action::Modified && reverse.is_none() {
                    let timeout = Duration::from_millis(cx.limits.diff_timeout_ms);
                    reverse = Some(delta_within(
                        patched.old,
                        &patched.new,
                        &patched.spans,
                        timeout,
                    ));
                }
                patched.new.into_bytes()
            }
            _ => unreachable!("a written file is added, or updated and read again"),
        };
        let target = &write.target;
        let missing = files::missing_parents(target);
        change.undo.created_dirs = missing
            .into_iter()
            .filter(|dir| made_dirs.insert(dir.clone()))
            .collect();
        let mut keep = Keep::Nothing;
        let expect = match &write.replaced {
            None => Expect::Nothing,
            Some(old) => {
                if plan.archive_replaced {
                    keep = Keep::Archive;
                    put_archived = Some(steps.len());
                } else if plan.action == Action::Modified {
                    // No copy in the trash: the history keeps the delta that takes it back.
                    let reverse = reverse.take().unwrap_or_else(|| {
                        Delta::around_common_ends(source.as_deref().unwrap_or_default(), &data)
                    });
                    change.undo.reverse = Some(Arc::new(reverse.encode()));
                } else if plan.action == Action::Moved {
                    // The file the move replaced was not kept.
                    change.undo.permanent = true;
                }
                if plan.action != Action::Moved {
                    change.sha256_before = Some(old.sha256.clone());
                }
                // An updated file read again is expected as read now; one whose bytes the
                // plan kept, as those bytes.
                let (stat, bytes) = match (plan.action, source_stat) {
                    (Action::Modified, Some(now)) => (now, None),
                    (Action::Modified, None) => (old.stat, old_bytes.take()),
                    _ => (old.stat, None),
                };
                Expect::File {
                    stat,
                    sha256: old.sha256.clone(),
                    bytes: bytes.map(|bytes| BytesRead(Arc::new(bytes))),
                }
            }
        };
        if plan.action == Action::Moved && plan.remove.is_some() && !plan.archive_removed {
            // No copy of the source in the trash: the history keeps what takes its content
            // back from the destination's.
            let old_bytes = source.as_deref().unwrap_or_default();
            let reverse = Delta::around_common_ends(old_bytes, &data);
            change.undo.reverse = Some(Arc::new(reverse.encode()));
        }
        change.sha256_after = Some(write.sha256.clone());
        // A moved file keeps its source's mode and owner; an updated one its own.
        let like = match &plan.remove {
            Some((_, from)) if plan.action == Action::Moved => {
                Some(source_stat.unwrap_or(from.stat))
            }
            _ => None,
        };
        steps.push(Step {
            at: place(target)?,
            expect,
            keep,
            act: Act::Put {
                data,
                like,
                sha256: Some(write.sha256.clone()),
            },
        });
    }
    Ok(Pending {
        committed: Committed {
            letter: plan.letter,
            given: plan.given,
            change,
            notes: plan.notes,
            removed_to: None,
        },
        removal_archived,
        put_archived,
    })
}

/// Completes a file's change with the archives its steps made.
fn complete(file: &mut Pending, done: &Done) {
    let archive = |step: Option<usize>| {
        step.and_then(|i| done.archives.get(i))
            .and_then(Option::as_ref)
    };
    if let Some(archived) = archive(file.removal_archived) {
        file.committed.removed_to = Some(archived.archive_path.clone());
        file.committed.change.sha256_before = Some(archived.metadata.original_sha256.clone());
    }
    if let Some(archived) = archive(file.put_archived) {
        file.committed.change.trashed_to = Some(archived.archive_path.clone());
    }
}

/// The place of a file the patch changes (never an allowed tree's root: that is a directory).
fn place(target: &Target) -> Result<Place, ToolError> {
    Place::of(target).ok_or_else(|| files::is_a_directory(&target.path))
}

/// A step that was refused or failed, in the patch's words, naming its file.
fn failed(paths: &[PathBuf], e: ExecuteError) -> ToolError {
    let path = paths
        .get(e.step)
        .map(PathBuf::as_path)
        .unwrap_or(Path::new(""));
    let file = path.shown();
    match e.failure {
        Failure::Changed {
            being_written: true,
            ..
        } => ToolError::new(
            ErrorCode::Conflict,
            format!("{file} is open for writing in another program; retry once that program has saved or closed it"),
        ),
        Failure::Changed { .. } | Failure::NotAsExpected(_) => changed_since_planned(path),
        Failure::Trash(e) => trash_error(e, "trash", path),
        Failure::Io(io) => ToolError::io(&io, "apply the patch to", path),
        Failure::Invalid(why) => ToolError::io(&io::Error::other(why), "apply the patch to", path),
    }
}

/// The stat and bytes of the file at `target`, which must still be the `planned` one (the same
/// file, the same content); else `CONFLICT`.
fn read_again(
    target: &Target,
    planned: &Existing,
    cx: &Context,
) -> Result<(crate::paths::Stat, Vec<u8>), ToolError> {
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
    Ok((opened.stat, bytes))
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
