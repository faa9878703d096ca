//! Making an undo's effects on disk as one journaled commit (`journal::commit`): what leaves a
//! place goes to the trash first; entries that move back are renamed; what comes back (from an
//! archive, from bytes, an empty directory) is staged under a temp name beside its place (or
//! inside a tree staged for its parent) and put in place with the rest. All or nothing, also
//! under a kill.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::changes::{take_over, Changes};
use super::disk;
use super::effects::{Effects, Hop, Placement, Step};
use super::plan::Plan;
use super::slot::{Like, Location, Slot};
use crate::call::execute::add_copied_move;
use crate::call::trashing::{put_in_trash, trash_error};
use crate::call::{commit_recorded, Recorded};
use crate::cancel::CancelToken;
use crate::change::{Action, EntryFacts, FileChange};
use crate::error::{ErrorCode, ToolError};
use crate::hashing::sha256_hex;
use crate::history::Heading;
use crate::journal::commit::{PlannedFile, StepFailure};
use crate::paths::fsops::{self, DirMount, Snapshot};
use crate::paths::shown::Shown;
use crate::paths::trees::{remove_tree_at, Removal};
use crate::paths::EntryKind;
use crate::progress::Meter;
use crate::text::delta::Delta;
use crate::trash::{restore_temp_name, Archived};
use crate::workspace::Workspace;

/// A tree staged for a path: its directory and the temp name it has beside its place.
struct StagedTree {
    dir: OwnedFd,
    parent_path: PathBuf,
    temp: OsString,
}

/// Makes `effects` (planned as `plan`) and records the undo in the history as `heading`, with
/// its commit (see [`commit_recorded`]); returns what changed, per path, in the history's terms
/// (so that undoing the undo — a redo — takes it back the same way).
pub fn apply(
    ws: &Workspace,
    plan: &Plan,
    effects: &Effects,
    heading: &Heading,
    cancel: &CancelToken,
    meter: &Meter,
) -> Result<(Vec<FileChange>, Recorded), ToolError> {
    let mut archives: Vec<Archived> = Vec::new();
    let mut holds: Vec<Archived> = Vec::new();
    let result = (|| {
        let mut commit = ws.journal().commit();
        let mut step_paths: Vec<PathBuf> = Vec::new();
        let mut changes = Changes::default();

        // 1. What leaves its place goes to the trash; it is removed by the commit, in the
        //    order of `effects.order` (step 3). Recorded first, whatever that order: a redo
        //    takes back the moves out of a removed tree before it brings the tree back.
        let mut leaving: Vec<Option<Leaving>> = Vec::new();
        for path in &effects.removals {
            let real = known(plan, path)?;
            let (parent, name) = parent_of(ws, path)?;
            let archived = put_in_trash(ws, parent.as_fd(), &name, path, false, cancel)?;
            let (digest, archive_path) = (
                archived.metadata.original_sha256.clone(),
                archived.archive_path.clone(),
            );
            archives.push(archived);
            let now = fsops::lstat_at(parent.as_fd(), &name)
                .map_err(|e| ToolError::io(&e, "look at", path))?
                .map(|s| Snapshot::of(&s));
            if now.as_ref() != Some(&real.stat) && !same_dir(now.as_ref(), &real.stat) {
                return Err(changed(path));
            }
            if plan.tree_digests.get(path).is_some_and(|d| *d != digest) {
                return Err(changed_inside(path));
            }
            let mut change = FileChange::new(
                path.clone(),
                if real.kind == EntryKind::Directory {
                    Action::Removed
                } else {
                    Action::Deleted
                },
            );
            change.sha256_before = Some(digest);
            change.trashed_to = Some(archive_path);
            changes.insert(path.clone(), change);
            leaving.push(Some(Leaving {
                parent,
                name,
                stat: real.stat,
            }));
            meter.advance(1);
        }
        // A restored entry that goes with a directory above it is archived on its own too,
        // recorded after that directory's removal: a redo takes it back first, then the
        // directory's archive brings it back with the rest.
        for (path, _) in &effects.also_archived {
            let (parent, name) = parent_of(ws, path)?;
            let archived = put_in_trash(ws, parent.as_fd(), &name, path, false, cancel)?;
            let mut change = FileChange::new(
                path.clone(),
                if archived.metadata.kind == EntryKind::Directory {
                    Action::Removed
                } else {
                    Action::Deleted
                },
            );
            change.sha256_before = Some(archived.metadata.original_sha256.clone());
            change.trashed_to = Some(archived.archive_path.clone());
            archives.push(archived);
            changes.insert(path.clone(), change);
        }

        // 2. What comes back, staged shallow first (a tree staged for a directory takes what
        //    goes beneath it; a tree from the trash first loses the entries that do not come
        //    back with it). Put in place by the commit after the renames.
        let mut staged: BTreeMap<PathBuf, StagedTree> = BTreeMap::new();
        let mut deferred: Vec<Deferred> = Vec::new();
        let mut new_dirs: Vec<(OwnedFd, u32, &Path)> = Vec::new();
        for placement in &effects.placements {
            if cancel.is_aborted() {
                return Err(ToolError::aborted());
            }
            meter.advance(1);
            let path = &placement.path;
            let name = path.file_name().unwrap_or_default();
            if placement.exchange {
                // The file physically there now (beneath a directory that moves back, where
                // that directory is now).
                let here = placement.physical.as_ref().unwrap_or(path);
                let (parent, _) = parent_of(ws, here)?;
                let Slot::Bytes { data, .. } = &placement.slot else {
                    unreachable!("only bytes are exchanged")
                };
                let stat = fsops::lstat_at(parent.as_fd(), name)
                    .map_err(|e| ToolError::io(&e, "look at", here))?
                    .ok_or_else(|| changed(here))?;
                if Snapshot::of(&stat) != known(plan, here)?.stat {
                    return Err(changed(here));
                }
                let now = disk::read(ws, here, u64::MAX)?;
                let mut change = FileChange::new(path.clone(), Action::Modified);
                change.sha256_before = Some(sha256_hex(&now));
                change.sha256_after = Some(sha256_hex(data));
                let reverse = Delta::around_common_ends(&now, data);
                change.undo.reverse = Some(Arc::new(reverse.encode()));
                deferred.push(Deferred::Put {
                    parent,
                    here: here.clone(),
                    data,
                    planned: PlannedFile::new(stat, &now),
                    change: Box::new(change),
                });
                continue;
            }
            let (dir, dir_path, top) = match &placement.parent {
                Location::Real(_) => {
                    let (dir, dir_path) = open_location(ws, &staged, &placement.parent, path)?;
                    (dir, dir_path, true)
                }
                inside => {
                    let (dir, dir_path) = open_location(ws, &staged, inside, path)?;
                    (dir, dir_path, false)
                }
            };
            // A top-level entry is staged under a temp name (journaled), one inside a staged
            // tree under its own name.
            let temp = if top {
                restore_temp_name()
            } else {
                name.to_owned()
            };
            let temp_entry = if top {
                ws.journal().begin_temp(&dir_path, dir.as_fd(), &temp)
            } else {
                None
            };
            let staged_now = stage(ws, plan, placement, dir.as_fd(), &temp, cancel, &mut holds);
            if let Err(e) = staged_now {
                if let Some(entry) = temp_entry {
                    entry.finish();
                }
                return Err(e);
            }
            // From here the commit answers for the temp name (or, if it never runs, the drop
            // of `deferred` below does not: the temp record does, as before).
            if let Slot::NewDir { mode } = &placement.slot {
                let fd = fsops::open_subdir(dir.as_fd(), &temp)
                    .map_err(|e| ToolError::io(&e, "create directory", path))?;
                new_dirs.push((fd, *mode, path));
            }
            let is_dir = match &placement.slot {
                Slot::NewDir { .. } => true,
                Slot::Archive { meta, .. } => meta.kind == crate::paths::EntryKind::Directory,
                _ => false,
            };
            if is_dir {
                let fd = fsops::open_subdir(dir.as_fd(), &temp)
                    .map_err(|e| ToolError::io(&e, "open", path))?;
                drop_from_staged(fd.as_fd(), effects, path)?;
                staged.insert(
                    path.clone(),
                    StagedTree {
                        dir: fd,
                        parent_path: dir_path.clone(),
                        temp: temp.clone(),
                    },
                );
            }
            if top {
                deferred.push(Deferred::Place(StagedPlace {
                    dir: Some(dir),
                    dir_path,
                    temp,
                    temp_entry,
                    placement,
                }));
            }
        }

        // 3. Removals and entries that move back (into trees staged above too), in the order
        //    that frees each name first and takes what moves out of a removed tree out first.
        let mut into_staged: Vec<(PathBuf, FileChange)> = Vec::new();
        for step in &effects.order {
            let rename = match *step {
                Step::Remove(index) => {
                    let removal = leaving[index].take().expect("each removal is one step");
                    let path = &effects.removals[index];
                    commit
                        .remove(
                            removal.parent,
                            path.parent().unwrap_or(Path::new("/")),
                            &removal.name,
                            removal.stat,
                        )
                        .map_err(|e| ToolError::io(&e, "prepare the removal of", path))?;
                    step_paths.push(path.clone());
                    continue;
                }
                Step::Rename(index) => &effects.renames[index],
            };
            let (from, to) = (&rename.from, &rename.to);
            let real = known(plan, from)?;
            let source = rename.source();
            let (from_dir, from_name) = parent_of(ws, &source)?;
            let (location, to_name) = rename.destination();
            let (to_dir, to_dir_path) = open_location(ws, &staged, &location, to)?;
            let from_dir_path = source.parent().unwrap_or(Path::new("/"));
            // Recorded hop by hop: a redo takes back the move aside last, when its name is free;
            // an entry that goes into a directory that moves back after it is recorded where it
            // went, and the directory's move after it.
            let arrived = match &location {
                Location::Real(dir) => dir.join(&to_name),
                Location::Staged { .. } => to.clone(),
            };
            let (moved_from, moved_to) = match &rename.hop {
                Hop::Whole => (from.clone(), arrived),
                Hop::Aside(temp) => (from.clone(), source.with_file_name(temp)),
                Hop::Back(_) => (source.clone(), arrived),
            };
            let across = matches!(rename.hop, Hop::Whole)
                && matches!(location, Location::Real(_))
                && !DirMount::same(from_dir.as_fd(), to_dir.as_fd()).unwrap_or(true);
            if across {
                // Back across file systems (a move_file between them): a copy placed, the
                // source removed, as the move was made.
                let now = fsops::lstat_at(from_dir.as_fd(), &from_name)
                    .map_err(|e| ToolError::io(&e, "look at", from))?
                    .filter(|now| is_planned(now, &real.stat))
                    .ok_or_else(|| changed(from))?;
                let journal = ws.journal();
                add_copied_move(
                    journal,
                    &mut commit,
                    (from_dir, from_dir_path, &from_name, &now),
                    (to_dir, &to_dir_path, &to_name),
                    cancel,
                )
                .map_err(|e| ToolError::io(&e, "prepare moving back", from))?;
                // Two steps: the copy placed, then the source removed.
                step_paths.push(moved_to.clone());
                step_paths.push(from.clone());
            } else {
                commit
                    .rename(
                        from_dir,
                        from_dir_path,
                        &from_name,
                        real.stat,
                        to_dir,
                        &to_dir_path,
                        &to_name,
                    )
                    .map_err(|e| ToolError::io(&e, "prepare moving back", from))?;
                step_paths.push(moved_to.clone());
            }
            if let (Location::Staged { top, .. }, Hop::Whole) = (&location, &rename.hop) {
                if from == to && effects.removals.contains(top) {
                    // From its place in a tree that goes to the trash to the same place in the
                    // tree that comes instead: the removal's archive keeps it there, and a redo
                    // brings it back with that archive. Not a move of the record.
                    if rename.arrives() {
                        meter.advance(1);
                    }
                    continue;
                }
            }
            let mut change = if changes.moved_out_after(&moved_to) {
                // The removal there stays its own record: a redo takes back this move, then
                // what moved out of the removed tree, then the removal.
                changes.push(
                    moved_to.clone(),
                    FileChange::new(moved_to.clone(), Action::Moved),
                );
                changes.remove(&moved_to).expect("just pushed")
            } else {
                take_over(&mut changes, &moved_to, Action::Moved)
            };
            change.from = Some(moved_from);
            if matches!(location, Location::Staged { .. }) {
                // Into a tree that comes back: after it, in the record (a redo takes it out
                // before it takes the tree away).
                into_staged.push((moved_to, change));
            } else {
                changes.insert(moved_to, change);
            }
            if rename.arrives() {
                meter.advance(1);
            }
        }

        // 4. What was staged takes its place.
        let into_staged_paths: Vec<PathBuf> =
            into_staged.iter().map(|(path, _)| path.clone()).collect();
        let mut beneath_moved: Vec<(PathBuf, FileChange)> = Vec::new();
        for step in deferred {
            match step {
                Deferred::Put {
                    parent,
                    here,
                    data,
                    planned,
                    change,
                } => {
                    let path = change.path.clone();
                    let stat = planned.stat;
                    commit
                        .put(
                            parent,
                            here.parent().unwrap_or(Path::new("/")),
                            here.file_name().unwrap_or_default(),
                            data.clone(),
                            Some(&stat),
                            Some(planned),
                        )
                        .map_err(|e| ToolError::io(&e, "write", &path))?;
                    step_paths.push(path.clone());
                    if into_staged_paths
                        .iter()
                        .any(|moved| path.starts_with(moved))
                    {
                        // Beneath an entry moved into a tree that comes back: after that move,
                        // in the record (a redo gives back these bytes before it moves the
                        // entry out).
                        beneath_moved.push((path, *change));
                    } else {
                        changes.insert(path, *change);
                    }
                }
                Deferred::Place(mut staged_place) => {
                    let placement = staged_place.placement;
                    let path = &placement.path;
                    let name = path.file_name().unwrap_or_default();
                    let dir = staged_place.dir.take().expect("staged");
                    let entry = staged_place.temp_entry.take();
                    commit
                        .place(dir, &staged_place.dir_path, &staged_place.temp, name, entry)
                        .map_err(|e| ToolError::io(&e, "prepare restoring", path))?;
                    step_paths.push(path.clone());
                    let mut change = take_over(&mut changes, path, Action::Added);
                    match &placement.slot {
                        Slot::Bytes { data, .. } => change.sha256_after = Some(sha256_hex(data)),
                        Slot::Archive { meta, .. }
                            if meta.kind != crate::paths::EntryKind::Directory =>
                        {
                            change.sha256_after = Some(meta.original_sha256.clone())
                        }
                        Slot::NewDir { .. } if change.action == Action::Added => {
                            change.action = Action::Created
                        }
                        _ => {}
                    }
                    if into_staged_paths
                        .iter()
                        .any(|moved| path.starts_with(moved))
                    {
                        beneath_moved.push((path.clone(), change));
                    } else {
                        changes.insert(path.clone(), change);
                    }
                }
            }
        }
        for (path, change) in into_staged.into_iter().chain(beneath_moved) {
            changes.insert(path, change);
        }
        // Directories get their modes once everything beneath them is in.
        for (fd, mode, path) in new_dirs.iter().rev() {
            fsops::set_mode_fd(fd, *mode)
                .map_err(|e| ToolError::io(&e, "set the mode of", path))?;
        }
        if cancel.is_aborted() {
            return Err(ToolError::aborted());
        }
        // What a redo checks: the entries as the undo leaves them, looked at once every step is
        // made, before the commit point.
        let files = || {
            let mut files = changes.in_order();
            for change in &mut files {
                if change.action != Action::Deleted && change.action != Action::Removed {
                    if let Ok(Some((parent, name))) = disk::open_parent(ws, &change.path) {
                        change.undo.entry = EntryFacts::of_entry(parent.as_fd(), &name);
                    }
                }
            }
            files
        };
        commit_recorded(ws, commit, heading, files).map_err(|e| {
            let path = step_paths.get(e.step).cloned().unwrap_or_default();
            match e.reason {
                StepFailure::Changed { .. } => changed(&path),
                StepFailure::Io(io) => ToolError::io(&io, "undo the change to", &path),
            }
        })
    })();
    if result.is_err() {
        for archived in archives {
            ws.bucket().discard(archived);
        }
    }
    // The archives the undo restored from stay in the trash (a redo of an older undo may need
    // them); their holds go here.
    drop(holds);
    result
}

/// An entry in the trash already, its removal not yet a step of the commit: its directory,
/// its name there, and what the plan saw of it.
struct Leaving {
    parent: OwnedFd,
    name: OsString,
    stat: Snapshot,
}

/// A step of the commit staged before the renames and added after them.
enum Deferred<'e> {
    /// New bytes for the file at `here` (physically), exchanged in place.
    Put {
        parent: OwnedFd,
        here: PathBuf,
        data: &'e Vec<u8>,
        planned: PlannedFile,
        change: Box<FileChange>,
    },
    /// What is staged as `temp` in `dir` takes its place.
    Place(StagedPlace<'e>),
}

/// An entry staged under a temp name beside its place, not yet a step of the commit: removed
/// again if the undo stops before (as a step, the commit answers for it).
struct StagedPlace<'e> {
    dir: Option<OwnedFd>,
    dir_path: PathBuf,
    temp: OsString,
    temp_entry: Option<crate::journal::Entry>,
    placement: &'e Placement,
}

impl Drop for StagedPlace<'_> {
    fn drop(&mut self) {
        if let Some(dir) = self.dir.take() {
            let _ = remove_tree_at(dir.as_fd(), &self.temp, Removal::OWN_TEMP);
            if let Some(entry) = self.temp_entry.take() {
                entry.finish();
            }
        }
    }
}

/// Removes from the tree just staged for `top` (open as `tree`) the entries of its archive that
/// do not come back with it: what a change inside the tree put there and the undo takes back.
/// The staged tree is ours (under a temp name, never seen at the user's paths in this state);
/// the archive keeps every entry.
fn drop_from_staged(
    tree: std::os::fd::BorrowedFd<'_>,
    effects: &Effects,
    top: &Path,
) -> Result<(), ToolError> {
    let open = |rel: &Path| match rel.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(parent) => fsops::open_dir_beneath(tree, parent, true),
        None => fsops::reopen_readable(tree),
    };
    // Files that come back at another place in the tree: first each to a temp name at its
    // top (so that files trading places and the drops below leave them be), then on.
    let moves: Vec<_> = effects
        .moves_inside
        .iter()
        .filter(|(t, ..)| t == top)
        .collect();
    let mut aside = Vec::with_capacity(moves.len());
    for (_, from, to) in &moves {
        let name = from.file_name().unwrap_or_default();
        let temp = fsops::temp_name(name);
        open(from)
            .and_then(|dir| fsops::rename_noreplace(dir.as_fd(), name, tree, &temp))
            .map_err(|e| ToolError::io(&e, "move back", &top.join(to)))?;
        aside.push(temp);
    }
    for (_, member) in effects.drops.iter().filter(|(t, _)| t == top) {
        let (Some(name), parent) = (member.file_name(), member.parent()) else {
            continue;
        };
        let dir = match parent.filter(|p| !p.as_os_str().is_empty()) {
            Some(parent) => fsops::open_dir_beneath(tree, parent, true),
            None => fsops::reopen_readable(tree),
        }
        .map_err(|e| ToolError::io(&e, "open", &top.join(member)))?;
        remove_tree_at(dir.as_fd(), name, Removal::OWN_TEMP)
            .map_err(|e| ToolError::io(&e, "take back", &top.join(member)))?;
    }
    for ((_, _, to), temp) in moves.iter().zip(&aside) {
        let name = to.file_name().unwrap_or_default();
        open(to)
            .and_then(|dir| fsops::rename_noreplace(tree, temp, dir.as_fd(), name))
            .map_err(|e| ToolError::io(&e, "move back", &top.join(to)))?;
    }
    Ok(())
}

/// What the plan saw on disk at `path`.
fn known<'p>(plan: &'p Plan, path: &Path) -> Result<&'p disk::Real, ToolError> {
    plan.reals
        .get(path)
        .and_then(|r| r.as_ref())
        .ok_or_else(|| changed(path))
}

/// A directory snapshot that is the same directory (its times move with its entries).
fn same_dir(now: Option<&Snapshot>, planned: &Snapshot) -> bool {
    now.is_some_and(|now| {
        now.kind() == EntryKind::Directory && (now.dev, now.ino) == (planned.dev, planned.ino)
    })
}

fn parent_of(ws: &Workspace, path: &Path) -> Result<(OwnedFd, OsString), ToolError> {
    disk::open_parent(ws, path)?.ok_or_else(|| {
        ToolError::new(
            ErrorCode::Conflict,
            format!(
                "cannot undo: the directory that held {} no longer exists. Nothing was undone; undo the change that removed it first",
                path.shown()
            ),
        )
    })
}

/// Opens the directory at `location` (for the entry `path`): its fd and its path as the journal
/// Whether `now` is the entry `planned` describes, as a rename step checks it: the same version
/// (its change time aside), or for a directory the same identity.
fn is_planned(now: &crate::paths::Stat, planned: &Snapshot) -> bool {
    let now = Snapshot::of(now);
    now == *planned
        || now.same_except_ctime(planned)
        || (now.kind() == EntryKind::Directory && (now.dev, now.ino) == (planned.dev, planned.ino))
}

/// records it.
fn open_location(
    ws: &Workspace,
    staged: &BTreeMap<PathBuf, StagedTree>,
    location: &Location,
    path: &Path,
) -> Result<(OwnedFd, PathBuf), ToolError> {
    match location {
        Location::Real(dir) => {
            let target = disk::target(ws, dir)?;
            let fd = fsops::open_dir(&target.anchor, &target.path, true).map_err(|_| {
                ToolError::new(
                    ErrorCode::Conflict,
                    format!(
                        "cannot undo: the directory that held {} no longer exists. Nothing was undone; undo the change that removed it first",
                        path.shown()
                    ),
                )
            })?;
            Ok((fd, target.path))
        }
        Location::Staged { top, rel } => {
            let tree = staged.get(top).ok_or_else(|| changed(path))?;
            let fd = if rel.as_os_str().is_empty() {
                fsops::reopen_readable(tree.dir.as_fd())
            } else {
                fsops::open_dir_beneath(tree.dir.as_fd(), rel, true)
            }
            .map_err(|e| ToolError::io(&e, "open", path))?;
            Ok((fd, tree.parent_path.join(&tree.temp).join(rel)))
        }
    }
}

/// Stages what `placement` puts as `name` in `dir`.
fn stage(
    ws: &Workspace,
    plan: &Plan,
    placement: &Placement,
    dir: std::os::fd::BorrowedFd<'_>,
    name: &OsStr,
    cancel: &CancelToken,
    holds: &mut Vec<Archived>,
) -> Result<(), ToolError> {
    let path = &placement.path;
    match &placement.slot {
        Slot::Archive { archive, .. } => {
            let aborted = || cancel.is_aborted();
            let held = ws
                .bucket()
                .stage(archive, dir, name, &aborted)
                .map_err(|e| trash_error(e, "restore", path))?;
            holds.push(held);
        }
        Slot::NewDir { .. } => {
            fsops::mkdir_at(dir, name).map_err(|e| ToolError::io(&e, "create directory", path))?
        }
        Slot::Bytes { data, like } => {
            let mode = match like {
                Like::Mode(mode) => *mode,
                Like::Disk(at) => plan
                    .reals
                    .get(at)
                    .and_then(|r| r.as_ref())
                    .map_or(0o644, |r| r.stat.permissions()),
            };
            fsops::stage(dir, name, name, data, None)
                .and_then(|()| fsops::open_for_read(dir, name))
                .and_then(|file| fsops::set_mode_fd(&file, mode))
                .map_err(|e| ToolError::io(&e, "write", path))?;
        }
        Slot::Disk(_) | Slot::Absent | Slot::InArchive { .. } => {}
    }
    Ok(())
}

/// A tree the undo would trash again holds something other than what the change left in it.
fn changed_inside(path: &Path) -> ToolError {
    ToolError::new(
        ErrorCode::Conflict,
        format!(
            "{} is not as the change left it: something inside it changed since. Nothing was undone; look at what changed inside it, or leave this change as it is",
            path.shown()
        ),
    )
}

fn changed(path: &Path) -> ToolError {
    ToolError::new(
        ErrorCode::Conflict,
        format!(
            "{} changed while the undo was being prepared; nothing was undone. Look at it again and retry",
            path.shown()
        ),
    )
}
