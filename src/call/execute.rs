//! The one executor: every [`ChangePlan`] is made the same way, all or nothing, on the journal's
//! commit (`journal::commit`): open each step's directory (one still missing is a free name)
//! → verify every step's [`Expect`](super::plan::Expect) (the readable refusal: nothing is kept or staged yet) →
//! trash first (each [`Keep::Archive`](crate::call::plan::Keep::Archive) step's entry archived, kept in place, the archive
//! checked against what was expected) → stage (missing parents of what is put or built made
//! just before, removed again unless the change is made; new bytes, built entries, under
//! journaled temp names) → commit (one fsynced record;
//! each step checks again as it is applied, and a step that fails takes back the ones before
//! it) with the history's record of the change in it ([`commit_recorded`](crate::call::commit_recorded)).
//!
//! Not yet here (issue 27, later steps): the lock and the question, which the call flow does
//! before; the tools still make their changes themselves.

use std::io;
use std::path::PathBuf;

use super::plan::{Act, ChangePlan, Place, Source};
use super::{commit_consuming, stage, Recorded};
use crate::cancel::CancelToken;
use crate::change::FileChange;
use crate::history::Heading;
use crate::journal::commit::LeftInPlace;
use crate::paths::fsops;
use crate::paths::os_error::{cause, Cause};
use crate::paths::trees::CopyError;
use crate::paths::{process, AsDir};
use crate::trash::Archived;
use crate::workspace::Workspace;
pub use stage::{CopyFailed, CopyMade};

/// What the commit made, for the result and the history.
#[derive(Default)]
pub struct Done {
    /// Each step's archive (trash-first), in the plan's order; held (`trashClear` leaves it
    /// alone) until the call has reported it.
    pub archives: Vec<Option<Archived>>,
    /// Each step's copy (an [`Act::Copy`] step's), in the plan's order.
    pub copies: Vec<Option<stage::CopyMade>>,
}

/// A plan made and recorded.
pub struct Executed {
    pub done: Done,
    /// What the history lists, as the plan's `files` said once every step was made.
    pub files: Vec<FileChange>,
    pub recorded: Recorded,
    /// What removals could not remove after the commit point (the system refused it, or a
    /// mount point inside), by the plan's step: the change stands, what is left is back at its
    /// name. See [`LeftInPlace`].
    pub left: Vec<(usize, io::Error)>,
}

/// Makes every step of `plan`, or none, with its record in the history as `heading` (see the
/// module docs): `files` says, once every step is made, what the history lists; the record
/// rides in the commit's journal record, so a kill leaves the change with its record or
/// neither. Archives made for a change that is not made are discarded.
///
/// A move between two directories an entry cannot be renamed between (another file system, or
/// another mount of it) is made as a copy: the entry copied beside its destination under a
/// journaled temp name and placed there, and the source set aside, checked to be, entry for
/// entry, what was copied (else [`Failure::Io`] carrying [`CopyFailed`]`(`[`CopyError::Changed`]`)`
/// and nothing is moved), and removed after the commit point. A rename that fails with `EXDEV`
/// as it is applied (two bind mounts the check could not tell apart) is made that way, once.
pub fn execute(
    ws: &Workspace,
    plan: ChangePlan,
    heading: &Heading,
    cancel: &CancelToken,
    files: impl FnOnce(&Done) -> Vec<FileChange>,
) -> Result<Executed, ExecuteError> {
    let again = plan
        .steps
        .iter()
        .any(|step| matches!(step.act, Act::Move { .. }))
        .then(|| plan.clone());
    let mut files = Some(files);
    match make(ws, plan, heading, cancel, &mut files, false) {
        Err(e) if crosses_mounts(&e) => match (again, files.is_some()) {
            (Some(plan), true) => make(ws, plan, heading, cancel, &mut files, true),
            _ => Err(e),
        },
        made => made,
    }
}

/// Whether a change failed only because a rename crossed file systems (or mounts).
fn crosses_mounts(e: &ExecuteError) -> bool {
    matches!(&e.failure, Failure::Io(io) if cause(io) == Cause::CrossDevice)
}

/// [`execute`], every move by copy when `by_copy`.
fn make<F: FnOnce(&Done) -> Vec<FileChange>>(
    ws: &Workspace,
    plan: ChangePlan,
    heading: &Heading,
    cancel: &CancelToken,
    files: &mut Option<F>,
    by_copy: bool,
) -> Result<Executed, ExecuteError> {
    let mut commit = ws.journal().commit();
    let into = into_built(&plan.steps);
    let out = out_of_built(&plan.steps);
    let opened = open_and_verify(&plan.steps, &into, &out)?;
    let ChangePlan { steps, consume } = plan;
    let mut done = Done::default();
    let failed = |done: &mut Done, step, failure| {
        for archived in done.archives.drain(..).flatten() {
            ws.bucket().discard(archived);
        }
        ExecuteError { step, failure }
    };
    let mut trees = Vec::with_capacity(steps.len());
    // The first step (in the plan's order) whose entry could not be kept; the archives made
    // for the others are discarded with the rest.
    let mut refused = None;
    for (index, kept) in keep_first(ws, &steps, &opened, cancel)
        .into_iter()
        .enumerate()
    {
        let (archived, tree) = match kept {
            Ok(kept) => kept,
            Err(failure) => {
                refused.get_or_insert((index, failure));
                (None, None)
            }
        };
        if let Some(name) = archived.as_ref().and_then(|a| a.archive_path.file_name()) {
            commit.archived(name);
        }
        done.archives.push(archived);
        trees.push(tree);
    }
    if let Some((index, failure)) = refused {
        return Err(failed(&mut done, index, failure));
    }
    // The archives' names, made durable at once (each archive's bytes are already).
    let unsynced = steps
        .iter()
        .zip(&done.archives)
        .position(|(step, archived)| archived.is_some() && !removes_tree(step));
    if let Some(index) = unsynced {
        if let Err(e) = ws.bucket().sync() {
            return Err(failed(&mut done, index, Failure::Trash(e.into())));
        }
    }
    process::crash_point("archived");
    let journal = ws.journal();
    // The archives restored from, held (no other call restores or clears one) until the
    // commit is done.
    let mut held = Vec::new();
    // The plan's step of each of the commit's (a move by copy adds two), and the commit's
    // steps that remove a moved source once checked against its copy.
    let mut of_step = Vec::with_capacity(steps.len());
    let mut copied_sources = Vec::new();
    // Directories built whole (an archive's tree, a tree built of pieces), before any step is
    // added: what moves into one is set aside beside it, and moves in once it is placed.
    let mut opened: Vec<Option<Opened>> = opened.into_iter().map(Some).collect();
    let mut made: Vec<Option<Dirs>> = steps.iter().map(|_| None).collect();
    let mut built: Vec<Option<stage::StagedTree>> = steps.iter().map(|_| None).collect();
    // Moves into each built tree set aside beside it, to go on into it once it is placed; the
    // places of the trees built; the commit's steps that move into a tree, by the plan's step.
    let mut moving_in: Vec<Vec<MovingIn>> = steps.iter().map(|_| Vec::new()).collect();
    let places: Vec<Place> = steps.iter().map(|step| step.at.clone()).collect();
    let mut moved_in = Vec::new();
    for (index, step) in steps.iter().enumerate() {
        let Act::Build(source) = &step.act else {
            continue;
        };
        if matches!(source, Source::Bytes { .. }) {
            continue;
        }
        let opened = opened[index].take().expect("opened once");
        let staged = opened
            .made(&mut commit, step, false)
            .map_err(Failure::Io)
            .and_then(|dirs| {
                let readable = fsops::reopen_readable(dirs.at.as_dir()).map_err(Failure::Io)?;
                let above = commit.made_above(&step.at.dir);
                let dir = &step.at.dir;
                let tree = stage::tree(ws, readable.as_dir(), dir, source, above, cancel);
                Ok((dirs, tree.map_err(built_failure)?))
            });
        match staged {
            Ok((dirs, tree)) => {
                made[index] = Some(dirs);
                built[index] = Some(tree);
            }
            Err(failure) => {
                drop(commit);
                return Err(failed(&mut done, index, failure));
            }
        }
    }
    for (index, ((step, opened), tree)) in steps.into_iter().zip(opened).zip(trees).enumerate() {
        let out_of_tree = out[index]
            .as_ref()
            .and_then(|(tree, rel)| Some((built[*tree].as_ref()?, rel.as_path())));
        let dirs = match (made[index].take(), opened) {
            (Some(dirs), _) => Ok(dirs),
            (None, Some(opened)) if out_of_tree.is_some() => {
                let (tree, rel) = out_of_tree.expect("matched");
                into_placed(&into, &built, index).and_then(|placed| {
                    let at = dir_in(tree, rel)?;
                    opened.made_out_of_built(&mut commit, &step, at, placed)
                })
            }
            (None, Some(opened)) => opened.made(&mut commit, &step, into[index].is_some()),
            (None, None) => unreachable!("every step's directories are opened once"),
        };
        let dirs = match dirs {
            Ok(dirs) => dirs,
            Err(e) => {
                drop(commit);
                return Err(failed(&mut done, index, Failure::Io(e)));
            }
        };
        let into_tree = into[index]
            .as_ref()
            .and_then(|(tree, rel)| Some((built[*tree].as_ref()?, rel.as_path())));
        let across = matches!(step.act, Act::Move { .. })
            && into_tree.is_none()
            && out_of_tree.is_none()
            && (by_copy || !same_mount(&dirs));
        let added = match (tree, &step.act) {
            (Some(tree), _) => add_tree_removal(&mut commit, step, dirs, tree)
                .map(|()| None)
                .map_err(Failure::Io),
            (None, Act::Archive) => Ok(None),
            (None, Act::Build(source)) if !matches!(source, Source::Bytes { .. }) => {
                let tree = built[index].as_mut().expect("built before");
                held.append(&mut tree.held);
                let placed = tree.take();
                let Place { dir, name, .. } = &step.at;
                let tree = built[index].as_ref().expect("built before");
                commit
                    .place(dirs.at, dir, &placed.aside, name, placed.temp)
                    .and_then(|()| {
                        for moving in moving_in[index].drain(..) {
                            moved_in.push((commit.len(), moving.step));
                            add_moved_in(&mut commit, tree, &step.at, moving)?;
                        }
                        Ok(None)
                    })
                    .map_err(Failure::Io)
            }
            (None, Act::Move { .. }) if out_of_tree.is_some() => {
                let (_, rel) = out_of_tree.expect("matched");
                add_move_out(&mut commit, step, dirs, rel).map(|()| None)
            }
            (None, Act::Move { .. }) if into_tree.is_some() => {
                let (tree, rel) = into_tree.expect("matched");
                let build = into[index].as_ref().map_or(index, |(build, _)| *build);
                add_move_into(&mut commit, step, dirs, tree, rel, index)
                    .and_then(|moving| {
                        if build < index {
                            // Placed already: on into it at once.
                            moved_in.push((commit.len(), index));
                            add_moved_in(&mut commit, tree, &places[build], moving)?;
                        } else {
                            moving_in[build].push(moving);
                        }
                        Ok(None)
                    })
                    .map_err(Failure::Io)
            }
            (None, Act::Restore { .. }) => {
                add_restore(ws, &mut commit, step, dirs, cancel).map(|archive| {
                    held.push(archive);
                    None
                })
            }
            (None, Act::Copy { .. }) => add_by_copy(journal, &mut commit, step, dirs, cancel)
                .map(Some)
                .map_err(Failure::Io),
            (None, Act::Append { .. }) => add_append(&mut commit, step, dirs).map(|()| None),
            (None, Act::Move { .. }) if across => {
                let copied = add_by_copy(journal, &mut commit, step, dirs, cancel);
                copied_sources.push(commit.len().saturating_sub(1));
                copied.map(Some).map_err(Failure::Io)
            }
            (None, _) => add(journal, &mut commit, step, dirs)
                .map(|()| None)
                .map_err(Failure::Io),
        };
        match added {
            Ok(copy) => done.copies.push(copy),
            Err(failure) => {
                drop(commit);
                return Err(failed(&mut done, index, failure));
            }
        }
        of_step.resize(commit.len(), index);
    }
    for (commit_step, plan_step) in moved_in {
        of_step[commit_step] = plan_step;
    }
    process::crash_point("staged");
    let consume = consume
        .iter()
        .filter_map(|archive| archive.file_name().map(PathBuf::from))
        .collect();
    let files = files.take().expect("a plan is recorded once");
    let committed = commit_consuming(ws, commit, heading, consume, || files(&done));
    drop(held);
    let plan_step = |step: usize| of_step.get(step).copied().unwrap_or(step);
    match committed {
        Ok((files, recorded, left)) => Ok(Executed {
            done,
            files,
            recorded,
            left: left
                .into_iter()
                .map(|LeftInPlace { step, error }| (plan_step(step), error))
                .collect(),
        }),
        Err(e) => {
            let commit_step = e.step;
            let mut e = ExecuteError::from(e);
            e.step = plan_step(commit_step);
            if copied_sources.contains(&commit_step) && matches!(e.failure, Failure::Changed { .. })
            {
                let changed = CopyFailed(CopyError::Changed(PathBuf::new()));
                e.failure = Failure::Io(io::Error::other(changed));
            }
            Err(failed(&mut done, e.step, e.failure))
        }
    }
}

mod built;
mod commit_steps;
mod copying;
mod dirs;
mod failure;
mod trash_first;
mod verify;
use built::{
    add_move_into, add_move_out, add_moved_in, built_failure, dir_in, into_built, into_placed,
    out_of_built, MovingIn,
};
use commit_steps::{add, add_append, add_restore};
pub use copying::add_copied_move;
use copying::{add_by_copy, same_mount};
use dirs::{Dirs, Opened};
pub use failure::{ExecuteError, Failure};
use trash_first::{add_tree_removal, keep_first, removes_tree};
use verify::open_and_verify;

#[cfg(test)]
#[path = "execute_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "execute_copy_tests.rs"]
mod copy_tests;

#[cfg(test)]
#[path = "execute_append_tests.rs"]
mod append_tests;

#[cfg(test)]
#[path = "execute_move_tests.rs"]
mod move_tests;

#[cfg(test)]
#[path = "execute_undo_tests.rs"]
mod undo_tests;
