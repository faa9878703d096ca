//! An undo's effects as a plan for the one executor (`call::execute`), with no I/O: a removal
//! is a `Remove` whose entry goes to the trash first, an entry that moves back (each hop of a
//! cycle) a `Move`, new bytes for a file in place a `Put`, what comes back at a free name a
//! restore from the trash, a new empty directory or a file built from bytes. Beside the plan,
//! what the history will list of the undo (per path, hop by hop, so that a redo takes it back
//! the same way), and how a failed step is told in undo's words.
//!
//! Undos that build a tree from several pieces (entries put or moved inside a tree staged from
//! an archive or as a new directory, entries dropped or moved inside such a tree, a restored
//! entry archived with a directory above it) are not expressed here yet: [`fits`] says which
//! undos are, and the others still make their own commit (`apply.rs`).

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::changes::{take_over, Changes};
use super::disk::Real;
use super::effects::{Effects, Hop, Step as Effect};
use super::plan::Plan;
use super::slot::{parent_of, Like, Location, Slot};
use crate::call::execute::{Done, ExecuteError, Failure};
use crate::call::plan::{Act, ChangePlan, Expect, Found, Keep, Place, Source, Step};
use crate::call::trashing::trash_error;
use crate::change::{Action, FileChange};
use crate::error::{ErrorCode, ToolError};
use crate::hashing::sha256_hex;
use crate::paths::fsops::Snapshot;
use crate::paths::shown::Shown;
use crate::paths::{EntryKind, Stat};
use crate::text::delta::Delta;

/// An undo as the executor runs it, and what its record and its errors say.
pub struct UndoPlan {
    pub plan: ChangePlan,
    /// What the history lists of the undo, in order; the archives' digests and paths are filled
    /// in from the commit ([`UndoPlan::files`]).
    changes: Changes,
    /// (a change's place in `changes`, the step whose archive it names).
    archived: Vec<(usize, usize)>,
    /// Per step: how a failure of it is told.
    told: Vec<Told>,
}

/// How a failed step is told.
struct Told {
    /// The path a refusal before anything changed names (where the entry is now).
    checked: PathBuf,
    /// The path a failure as the step was applied names (the history's).
    applied: PathBuf,
    /// What a trash error was doing ("trash", "restore").
    trash: &'static str,
    /// The step removes a tree whose digest it checks: [`Found::Changed`] is a change inside.
    digest: bool,
}

/// Whether the executor can make `effects` from a plan of [`to_plan`] (see the module docs).
pub fn fits(effects: &Effects) -> bool {
    effects.also_archived.is_empty()
        && effects.drops.is_empty()
        && effects.moves_inside.is_empty()
        && effects
            .placements
            .iter()
            .all(|p| matches!(p.parent, Location::Real(_)))
        && effects
            .renames
            .iter()
            .all(|r| matches!(r.destination().0, Location::Real(_)))
}

/// The plan of `effects` (planned as `plan`; [`fits`] must hold). `now` holds the bytes of each
/// file given new bytes in place, by its real path, as read; `place` resolves a directory (a
/// real, canonical path) and a name in it to a checked place.
pub fn to_plan(
    plan: &Plan,
    effects: &Effects,
    now: &HashMap<PathBuf, Vec<u8>>,
    place: &dyn Fn(&Path, &OsStr) -> Result<Place, ToolError>,
) -> Result<UndoPlan, ToolError> {
    let mut steps = Vec::new();
    let mut told = Vec::new();
    let mut changes = Changes::default();
    let mut archived = Vec::new();
    let place_of = |path: &Path| place(parent_of(path), path.file_name().unwrap_or_default());

    // What leaves its place goes to the trash first; recorded first, whatever the order of the
    // steps: a redo takes back the moves out of a removed tree before it brings the tree back.
    let removal_steps: Vec<usize> = (0..effects.removals.len())
        .map(|i| {
            let at = effects.order.iter().position(|e| *e == Effect::Remove(i));
            at.expect("every removal is in the order")
        })
        .collect();
    for (path, &step) in effects.removals.iter().zip(&removal_steps) {
        let real = known(plan, path)?;
        let action = match real.kind {
            EntryKind::Directory => Action::Removed,
            _ => Action::Deleted,
        };
        let at = changes.insert(path.clone(), FileChange::new(path.clone(), action));
        archived.push((at, step));
    }

    // Removals and entries that move back, in the order that frees each name first and takes
    // what moves out of a removed tree out first.
    for effect in &effects.order {
        match *effect {
            Effect::Remove(index) => {
                let path = &effects.removals[index];
                let real = known(plan, path)?;
                let stat = stat_of(&real.stat);
                let digest = plan.tree_digests.get(path).cloned();
                let expect = match real.kind {
                    EntryKind::Directory => Expect::Tree {
                        stat,
                        sha256: digest.clone(),
                    },
                    _ => Expect::Entry { stat },
                };
                steps.push(Step {
                    at: place_of(path)?,
                    expect,
                    keep: Keep::Archive,
                    act: Act::Remove,
                });
                told.push(Told {
                    checked: path.clone(),
                    applied: path.clone(),
                    trash: "trash",
                    digest: digest.is_some(),
                });
            }
            Effect::Rename(index) => {
                let rename = &effects.renames[index];
                let from = &rename.from;
                let real = known(plan, from)?;
                let source = rename.source();
                let (Location::Real(dir), to_name) = rename.destination() else {
                    unreachable!("fits: every rename goes to a directory on disk")
                };
                let arrived = dir.join(&to_name);
                steps.push(Step {
                    at: place_of(&source)?,
                    expect: Expect::Entry {
                        stat: stat_of(&real.stat),
                    },
                    keep: Keep::Nothing,
                    act: Act::Move {
                        to: place(&dir, &to_name)?,
                    },
                });
                // Recorded hop by hop: a redo takes back the move aside last, when its name is
                // free.
                let (moved_from, moved_to) = match &rename.hop {
                    Hop::Whole => (from.clone(), arrived),
                    Hop::Aside(temp) => (from.clone(), source.with_file_name(temp)),
                    Hop::Back(_) => (source.clone(), arrived),
                };
                told.push(Told {
                    checked: from.clone(),
                    applied: moved_to.clone(),
                    trash: "trash",
                    digest: false,
                });
                let mut change = if changes.moved_out_after(&moved_to) {
                    // The removal there stays its own record: a redo takes back this move, then
                    // what moved out of the removed tree, then the removal.
                    let new = FileChange::new(moved_to.clone(), Action::Moved);
                    changes.push(moved_to.clone(), new);
                    changes.remove(&moved_to).expect("just pushed")
                } else {
                    take_over(&mut changes, &moved_to, Action::Moved)
                };
                change.from = Some(moved_from);
                changes.insert(moved_to, change);
            }
        }
    }

    // What comes back takes its place, shallow first.
    for placement in &effects.placements {
        let path = &placement.path;
        if placement.exchange {
            // The file physically there now (beneath a directory that moves back, where that
            // directory is now).
            let here = placement.physical.as_ref().unwrap_or(path);
            let Slot::Bytes { data, .. } = &placement.slot else {
                unreachable!("only bytes are exchanged")
            };
            let real = known(plan, here)?;
            let old = now.get(here).ok_or_else(|| changed(here))?;
            steps.push(Step {
                at: place_of(here)?,
                expect: Expect::File {
                    stat: stat_of(&real.stat),
                    sha256: sha256_hex(old),
                },
                keep: Keep::Nothing,
                act: Act::Put {
                    data: data.clone(),
                    like: None,
                },
            });
            told.push(Told {
                checked: here.clone(),
                applied: path.clone(),
                trash: "trash",
                digest: false,
            });
            let mut change = FileChange::new(path.clone(), Action::Modified);
            change.sha256_before = Some(sha256_hex(old));
            change.sha256_after = Some(sha256_hex(data));
            let reverse = Delta::around_common_ends(old, data);
            change.undo.reverse = Some(Arc::new(reverse.encode()));
            changes.insert(path.clone(), change);
            continue;
        }
        let Location::Real(dir) = &placement.parent else {
            unreachable!("fits: everything is put in a directory on disk")
        };
        let at = place(dir, path.file_name().unwrap_or_default())?;
        let mut change = take_over(&mut changes, path, Action::Added);
        let (act, trash) = match &placement.slot {
            Slot::Archive { archive, meta } => {
                if meta.kind != EntryKind::Directory {
                    change.sha256_after = Some(meta.original_sha256.clone());
                }
                let archive = archive.clone();
                (Act::Restore { archive }, "restore")
            }
            Slot::NewDir { mode } => {
                if change.action == Action::Added {
                    change.action = Action::Created;
                }
                let below = PathBuf::new();
                (
                    Act::MakeDir {
                        mode: Some(*mode),
                        below,
                    },
                    "trash",
                )
            }
            Slot::Bytes { data, like } => {
                change.sha256_after = Some(sha256_hex(data));
                let mode = match like {
                    Like::Mode(mode) => *mode,
                    Like::Disk(at) => plan
                        .reals
                        .get(at)
                        .and_then(|r| r.as_ref())
                        .map_or(0o644, |r| r.stat.permissions()),
                };
                let data = data.clone();
                (Act::Build(Source::Bytes { data, mode }), "trash")
            }
            Slot::Disk(_) | Slot::Absent | Slot::InArchive { .. } => {
                unreachable!("effects place entries that come back only")
            }
        };
        steps.push(Step {
            at,
            expect: Expect::Nothing,
            keep: Keep::Nothing,
            act,
        });
        told.push(Told {
            checked: path.clone(),
            applied: path.clone(),
            trash,
            digest: false,
        });
        changes.insert(path.clone(), change);
    }
    let plan = ChangePlan {
        steps,
        consume: Vec::new(),
    };
    Ok(UndoPlan {
        plan,
        changes,
        archived,
        told,
    })
}

impl UndoPlan {
    /// The first path whose entry goes to the trash, if any does.
    pub fn first_trashed(&self) -> Option<PathBuf> {
        let &(_, step) = self.archived.first()?;
        Some(self.told.get(step)?.checked.clone())
    }

    /// What the history lists of the undo once `done` made it, in order: each removal with its
    /// archive; `facts` gives what each entry the undo leaves is (what a redo checks).
    pub fn files(
        mut self,
        done: &Done,
        facts: impl Fn(&Path) -> Option<crate::change::EntryFacts>,
    ) -> Vec<FileChange> {
        for &(at, step) in &self.archived {
            let archive = done.archives.get(step).and_then(Option::as_ref);
            if let (Some(change), Some(archive)) = (self.changes.at_mut(at), archive) {
                change.sha256_before = Some(archive.metadata.original_sha256.clone());
                change.trashed_to = Some(archive.archive_path.clone());
            }
        }
        let mut files = self.changes.in_order();
        for change in &mut files {
            if change.action != Action::Deleted && change.action != Action::Removed {
                change.undo.entry = facts(&change.path);
            }
        }
        files
    }

    /// Splits off what tells the failures of the plan's steps.
    pub fn take_words(&mut self) -> Words {
        Words(std::mem::take(&mut self.told))
    }
}

/// How the failures of an undo plan's steps are told.
pub struct Words(Vec<Told>);

impl Words {
    /// The failure of the undo, in undo's words; nothing was undone.
    pub fn failed(&self, e: ExecuteError) -> ToolError {
        let Some(told) = self.0.get(e.step) else {
            let io = match e.failure {
                Failure::Io(io) => io,
                other => io::Error::other(format!("{other:?}")),
            };
            return ToolError::io(&io, "undo the change to", Path::new("/"));
        };
        match e.failure {
            Failure::NotAsExpected(Found::Changed) if told.digest => changed_inside(&told.checked),
            Failure::NotAsExpected(_) => changed(&told.checked),
            Failure::Changed { .. } => changed(&told.applied),
            Failure::Trash(e) => trash_error(e, told.trash, &told.checked),
            Failure::Io(e) if e.kind() == io::ErrorKind::NotFound => gone_above(&told.checked),
            Failure::Io(e) => ToolError::io(&e, "undo the change to", &told.applied),
            Failure::Invalid(why) => {
                ToolError::io(&io::Error::other(why), "undo the change to", &told.applied)
            }
        }
    }
}

/// The stat the plan saw, as the executor's steps expect it (what a snapshot does not keep is
/// not compared).
fn stat_of(snapshot: &Snapshot) -> Stat {
    Stat {
        dev: snapshot.dev,
        ino: snapshot.ino,
        mode: snapshot.mode,
        uid: snapshot.uid,
        gid: snapshot.gid,
        size: snapshot.size,
        blocks: 0,
        nlink: 1,
        atime: (0, 0),
        mtime: snapshot.mtime,
        ctime: snapshot.ctime,
    }
}

/// What the plan saw on disk at `path`.
pub fn known<'p>(plan: &'p Plan, path: &Path) -> Result<&'p Real, ToolError> {
    plan.reals
        .get(path)
        .and_then(|r| r.as_ref())
        .ok_or_else(|| changed(path))
}

/// The directory that held `path` is gone.
pub fn gone_above(path: &Path) -> ToolError {
    ToolError::new(
        ErrorCode::Conflict,
        format!(
            "cannot undo: the directory that held {} no longer exists. Nothing was undone; undo the change that removed it first",
            path.shown()
        ),
    )
}

/// A tree the undo would trash again holds something other than what the change left in it.
pub fn changed_inside(path: &Path) -> ToolError {
    ToolError::new(
        ErrorCode::Conflict,
        format!(
            "{} is not as the change left it: something inside it changed since. Nothing was undone; look at what changed inside it, or leave this change as it is",
            path.shown()
        ),
    )
}

/// An entry is not as the undo was planned on.
pub fn changed(path: &Path) -> ToolError {
    ToolError::new(
        ErrorCode::Conflict,
        format!(
            "{} changed while the undo was being prepared; nothing was undone. Look at it again and retry",
            path.shown()
        ),
    )
}
