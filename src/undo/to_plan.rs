//! An undo's effects as a plan for the one executor (`call::execute`), with no I/O: a removal
//! is a `Remove` whose entry goes to the trash first, an entry that moves back (each hop of a
//! cycle) a `Move`, new bytes for a file in place a `Put`, what comes back at a free name a
//! restore from the trash, a new empty directory or a file built from bytes, or a tree built of
//! these (a tree from the trash with older changes inside it taken back), which entries that
//! move back may move into before it takes its place, and entries of it may move out of after.
//! Beside the plan, what the history will list of the undo (per path, hop by hop, so that a redo
//! takes it back the same way), and how a failed step is told in undo's words.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::changes::{take_over, Changes};
use super::disk::Real;
use super::effects::{Effects, Hop, Placement, Step as Effect};
use super::plan::Plan;
use super::slot::{parent_of, Like, Location, Slot};
use super::told::{changed, Told, Words};
use crate::call::execute::Done;
use crate::call::plan::{Act, ChangePlan, Expect, Keep, Place, Source, Step};
use crate::change::{Action, FileChange};
use crate::error::ToolError;
use crate::hashing::sha256_hex;
use crate::paths::fsops::Snapshot;
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

/// The plan of `effects` (planned as `plan`). `now` holds the bytes of each file given new
/// bytes in place, by its real path, as read; `place` resolves a directory (a real, canonical
/// path) and a name in it to a checked place.
pub fn to_plan(
    plan: &Plan,
    effects: &Effects,
    now: &HashMap<PathBuf, Vec<u8>>,
    place: &dyn Fn(&Path, &OsStr) -> Result<Place, ToolError>,
) -> Result<UndoPlan, ToolError> {
    let mut out = Out::default();
    let place_of = |path: &Path| place(parent_of(path), path.file_name().unwrap_or_default());

    // What leaves its place goes to the trash first; recorded first, whatever the order of the
    // steps: a redo takes back the moves out of a removed tree before it brings the tree back.
    for (index, path) in effects.removals.iter().enumerate() {
        let step = effects
            .order
            .iter()
            .position(|e| *e == Effect::Remove(index));
        let step = step.expect("every removal is in the order");
        let at = out.changes.insert(
            path.clone(),
            FileChange::new(path.clone(), removed(plan, path)?),
        );
        out.archived.push((at, step));
    }
    // A restored entry that goes with a directory above it is archived on its own too (a step
    // after every other, below), recorded after that directory's removal: a redo takes it back
    // first, then the directory's archive brings it back with the rest.
    let mut alone = Vec::new();
    for (path, _) in &effects.also_archived {
        let change = FileChange::new(path.clone(), removed(plan, path)?);
        alone.push(out.changes.insert(path.clone(), change));
    }

    // Removals and entries that move back (into trees built for their place too), in the order
    // that frees each name first and takes what moves out of a removed tree out first.
    let mut into_built: Vec<(PathBuf, FileChange)> = Vec::new();
    for effect in &effects.order {
        let Effect::Rename(index) = *effect else {
            let Effect::Remove(index) = *effect else {
                unreachable!("a step is a removal or a rename")
            };
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
            out.step(place_of(path)?, expect, Keep::Archive, Act::Remove);
            out.told(path, path, "trash", digest.is_some());
            continue;
        };
        let rename = &effects.renames[index];
        let (from, to) = (&rename.from, &rename.to);
        let real = known(plan, from)?;
        let source = rename.source();
        let (location, to_name) = rename.destination();
        let (destination, arrived) = match &location {
            Location::Real(dir) => (place(dir, &to_name)?, dir.join(&to_name)),
            Location::Staged { top, rel } => {
                let built = top_placement(effects, top).ok_or_else(|| changed(to))?;
                let anchor = place_of(built)?.anchor;
                let dir = inside(top, rel);
                let name = to_name.clone();
                (Place { anchor, dir, name }, to.clone())
            }
        };
        let expect = Expect::Entry {
            stat: stat_of(&real.stat),
        };
        let act = Act::Move { to: destination };
        out.step(place_of(&source)?, expect, Keep::Nothing, act);
        // Recorded hop by hop: a redo takes back the move aside last, when its name is free; an
        // entry that goes into a directory that comes back after it is recorded where it went,
        // and the directory's coming back after it.
        let (moved_from, moved_to) = match &rename.hop {
            Hop::Whole => (from.clone(), arrived),
            Hop::Aside(temp) => (from.clone(), source.with_file_name(temp)),
            Hop::Back(_) => (source.clone(), arrived),
        };
        out.told(from, &moved_to, "trash", false);
        if let (Location::Staged { top, .. }, Hop::Whole) = (&location, &rename.hop) {
            if from == to && effects.removals.contains(top) {
                // From its place in a tree that goes to the trash to the same place in the tree
                // that comes instead: the removal's archive keeps it there, and a redo brings it
                // back with that archive. Not a move of the record.
                continue;
            }
        }
        let changes = &mut out.changes;
        let mut change = if changes.moved_out_after(&moved_to) {
            // The removal there stays its own record: a redo takes back this move, then what
            // moved out of the removed tree, then the removal.
            changes.push(
                moved_to.clone(),
                FileChange::new(moved_to.clone(), Action::Moved),
            );
            changes.remove(&moved_to).expect("just pushed")
        } else {
            take_over(changes, &moved_to, Action::Moved)
        };
        change.from = Some(moved_from);
        match location {
            // Into a tree that comes back: after it, in the record (a redo takes it out before
            // it takes the tree away).
            Location::Staged { .. } => into_built.push((moved_to, change)),
            Location::Real(_) => {
                changes.insert(moved_to, change);
            }
        }
    }

    // What comes back takes its place (a tree with what comes back inside it), shallow first.
    let beneath_moved = |path: &Path| into_built.iter().any(|(moved, _)| path.starts_with(moved));
    let mut after_moved: Vec<(PathBuf, FileChange)> = Vec::new();
    // What is built inside a tree at the place of an entry set aside to move out of it: recorded
    // after that move (a redo takes it away before it moves the entry back there).
    let mut at_places_left: Vec<(PathBuf, FileChange)> = Vec::new();
    for placement in &effects.placements {
        let path = &placement.path;
        let change = if placement.exchange {
            exchange(plan, placement, now, &place_of, &mut out)?
        } else {
            let Location::Real(dir) = &placement.parent else {
                // Built inside the tree of the placement above it.
                let left = effects
                    .moves_out
                    .iter()
                    .any(|moved| moved.aside.is_some() && moved.top.join(&moved.member) == *path);
                if left {
                    let change = FileChange::new(path.clone(), Action::Added);
                    at_places_left.push((path.clone(), put(change, &placement.slot)));
                }
                continue;
            };
            let at = place(dir, path.file_name().unwrap_or_default())?;
            let change = take_over(&mut out.changes, path, Action::Added);
            let (act, trash) = match built(plan, effects, placement) {
                Source::Archive { archive } => (Act::Restore { archive }, "restore"),
                Source::EmptyDir { mode } => {
                    let below = PathBuf::new();
                    (
                        Act::MakeDir {
                            mode: Some(mode),
                            below,
                        },
                        "trash",
                    )
                }
                tree => (Act::Build(tree), "restore"),
            };
            let change = put(change, &placement.slot);
            out.step(at, Expect::Nothing, Keep::Nothing, act);
            out.told(path, path, trash, false);
            change
        };
        if beneath_moved(path) {
            // Beneath an entry moved into a tree that comes back: after that move, in the
            // record (a redo gives these back before it moves the entry out).
            after_moved.push((path.clone(), change));
        } else {
            out.changes.insert(path.clone(), change);
        }
    }
    // What comes out of a tree that comes back, to its place on disk: moved out of the tree
    // once it has taken its place (a failure after takes the move back first, into the tree
    // still there); recorded after it (a redo moves it back in before it takes the tree away).
    let mut out_of_built: Vec<(PathBuf, FileChange)> = Vec::new();
    for moved in &effects.moves_out {
        let to_name = moved.to.file_name().unwrap_or_default();
        let destination = match &moved.parent {
            Location::Real(dir) => place(dir, to_name)?,
            // Into another tree that comes back, placed by then.
            Location::Staged { top, rel } => {
                let built = top_placement(effects, top).ok_or_else(|| changed(&moved.to))?;
                let anchor = place_of(built)?.anchor;
                let dir = inside(top, rel);
                let name = to_name.to_owned();
                Place { anchor, dir, name }
            }
        };
        // Where it is in the tree as placed (set aside at its top, or at its own place), and
        // where the record says it comes from (its own place: a redo moves it back there).
        let now = moved
            .top
            .join(moved.aside.as_deref().unwrap_or(moved.member.as_os_str()));
        let source = moved.top.join(&moved.member);
        let built = top_placement(effects, &moved.top).ok_or_else(|| changed(&moved.to))?;
        let anchor = place_of(built)?.anchor;
        let at = Place {
            anchor,
            dir: parent_of(&now).to_owned(),
            name: now.file_name().unwrap_or_default().to_owned(),
        };
        // The entry is built by this plan: the executor knows it by the tree it stages.
        out.step(
            at,
            Expect::Built,
            Keep::Nothing,
            Act::Move { to: destination },
        );
        out.told(&moved.to, &moved.to, "restore", false);
        let mut change = take_over(&mut out.changes, &moved.to, Action::Moved);
        change.from = Some(source);
        out_of_built.push((moved.to.clone(), change));
    }

    for (path, change) in into_built
        .into_iter()
        .chain(after_moved)
        .chain(out_of_built)
        .chain(at_places_left)
    {
        out.changes.insert(path, change);
    }
    // The restored entries kept alone, last: nothing happens to them but their archive.
    for ((path, _), at) in effects.also_archived.iter().zip(alone) {
        out.archived.push((at, out.steps.len()));
        let real = known(plan, path)?;
        let expect = Expect::Entry {
            stat: stat_of(&real.stat),
        };
        out.step(place_of(path)?, expect, Keep::Archive, Act::Archive);
        out.told(path, path, "trash", false);
    }
    Ok(out.finish())
}

/// A plan as it is put together.
#[derive(Default)]
struct Out {
    steps: Vec<Step>,
    told: Vec<Told>,
    changes: Changes,
    archived: Vec<(usize, usize)>,
}

impl Out {
    fn step(&mut self, at: Place, expect: Expect, keep: Keep, act: Act) {
        self.steps.push(Step {
            at,
            expect,
            keep,
            act,
        });
    }

    fn told(&mut self, checked: &Path, applied: &Path, trash: &'static str, digest: bool) {
        self.told.push(Told::new(checked, applied, trash, digest));
    }

    fn finish(self) -> UndoPlan {
        UndoPlan {
            plan: ChangePlan {
                steps: self.steps,
                consume: Vec::new(),
            },
            changes: self.changes,
            archived: self.archived,
            told: self.told,
        }
    }
}
/// How the history names the removal of the entry the plan saw at `path`.
fn removed(plan: &Plan, path: &Path) -> Result<Action, ToolError> {
    Ok(match known(plan, path)?.kind {
        EntryKind::Directory => Action::Removed,
        _ => Action::Deleted,
    })
}

/// `change`, of a path `slot` is put at: what the history knows of what is there then.
fn put(mut change: FileChange, slot: &Slot) -> FileChange {
    match slot {
        Slot::Bytes { data, .. } => change.sha256_after = Some(sha256_hex(data)),
        Slot::Archive { meta, .. } if meta.kind != EntryKind::Directory => {
            change.sha256_after = Some(meta.original_sha256.clone())
        }
        Slot::NewDir { .. } if change.action == Action::Added => change.action = Action::Created,
        _ => {}
    }
    change
}

/// Adds the step that gives the file physically at `placement`'s place (beneath a directory
/// that moves back, where that directory is now) its older bytes in place; returns its change.
fn exchange(
    plan: &Plan,
    placement: &Placement,
    now: &HashMap<PathBuf, Vec<u8>>,
    place_of: &dyn Fn(&Path) -> Result<Place, ToolError>,
    out: &mut Out,
) -> Result<FileChange, ToolError> {
    let path = &placement.path;
    let here = placement.physical.as_ref().unwrap_or(path);
    let Slot::Bytes { data, .. } = &placement.slot else {
        unreachable!("only bytes are exchanged")
    };
    let real = known(plan, here)?;
    let old = now.get(here).ok_or_else(|| changed(here))?;
    let expect = Expect::File {
        stat: stat_of(&real.stat),
        sha256: sha256_hex(old),
        bytes: None,
    };
    let sha256_after = sha256_hex(data);
    let act = Act::Put {
        data: data.clone(),
        like: None,
        sha256: Some(sha256_after.clone()),
    };
    out.step(place_of(here)?, expect, Keep::Nothing, act);
    out.told(here, path, "trash", false);
    let mut change = FileChange::new(path.clone(), Action::Modified);
    change.sha256_before = Some(sha256_hex(old));
    change.sha256_after = Some(sha256_after);
    let reverse = Delta::around_common_ends(old, data);
    change.undo.reverse = Some(Arc::new(reverse.encode()));
    Ok(change)
}

/// What is built for `placement`: the entry from the trash, the empty directory or the file
/// from bytes — a directory as a tree when anything is built, dropped or moved inside it, or
/// moves into it or out of it (or into it out of another).
fn built(plan: &Plan, effects: &Effects, placement: &Placement) -> Source {
    let path = &placement.path;
    let root = match &placement.slot {
        Slot::Archive { archive, .. } => Source::Archive {
            archive: archive.clone(),
        },
        Slot::NewDir { mode } => Source::EmptyDir { mode: *mode },
        Slot::Bytes { data, like } => {
            let mode = match like {
                Like::Mode(mode) => *mode,
                Like::Disk(at) => plan
                    .reals
                    .get(at)
                    .and_then(|r| r.as_ref())
                    .map_or(0o644, |r| r.stat.permissions()),
            };
            let data = data.clone();
            return Source::Bytes { data, mode };
        }
        Slot::Disk(_) | Slot::Absent | Slot::InArchive { .. } => {
            unreachable!("effects place entries that come back only")
        }
    };
    let moves: Vec<(PathBuf, PathBuf)> = effects
        .moves_inside
        .iter()
        .filter(|(top, ..)| top == path)
        .map(|(_, from, to)| (from.clone(), to.clone()))
        .collect();
    let drops: Vec<PathBuf> = effects
        .drops
        .iter()
        .filter(|(top, _)| top == path)
        .map(|(_, member)| member.clone())
        .collect();
    let inside: Vec<(PathBuf, Source)> = effects
        .placements
        .iter()
        .filter_map(|inner| match &inner.parent {
            Location::Staged { top, rel } if top == path => {
                let name = inner.path.file_name().unwrap_or_default();
                Some((rel.join(name), built(plan, effects, inner)))
            }
            _ => None,
        })
        .collect();
    let moved_into = effects.renames.iter().any(|rename| {
        matches!(rename.destination().0, Location::Staged { top, .. } if top.starts_with(path))
    });
    let moved_out = effects.moves_out.iter().any(|out| {
        out.top == *path
            || matches!(&out.parent, Location::Staged { top, .. } if top.starts_with(path))
    });
    if moves.is_empty() && drops.is_empty() && inside.is_empty() && !moved_into && !moved_out {
        return root;
    }
    Source::Tree {
        root: Box::new(root),
        moves,
        drops,
        inside,
    }
}

/// The directory `rel` inside `top` (`top` itself for the empty `rel`: a journal record names a
/// directory by a plain path, with no `/` at its end).
fn inside(top: &Path, rel: &Path) -> PathBuf {
    if rel.as_os_str().is_empty() {
        top.to_owned()
    } else {
        top.join(rel)
    }
}

/// The placement at a real place whose tree holds `top` (a tree built there, or one inside it).
fn top_placement<'e>(effects: &'e Effects, top: &Path) -> Option<&'e PathBuf> {
    effects
        .placements
        .iter()
        .filter(|p| matches!(p.parent, Location::Real(_)) && top.starts_with(&p.path))
        .map(|p| &p.path)
        .next()
}

impl UndoPlan {
    /// The first path whose entry goes to the trash, if any does.
    pub fn first_trashed(&self) -> Option<PathBuf> {
        let &(_, step) = self.archived.first()?;
        Some(self.told.get(step)?.checked().to_owned())
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
        Words::new(std::mem::take(&mut self.told))
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
