//! From a planned final state to what must happen on disk: which entries go to the trash, which
//! move, and what is put in place where — in an order that frees every name before it is taken.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::plan::Plan;
use super::slot::{location, parent_of, physical, physical_path, Location, Slot};
use crate::error::{ErrorCode, ToolError};
use crate::paths::shown::Shown;
use crate::paths::{fsops, EntryKind};
use crate::trash::member_path_bytes;

impl Effects {
    /// Works out the effects of `plan`. Paths are followed to where their entries physically
    /// are when the steps run: beneath a directory that moves back, an entry's place is inside
    /// that directory where it is now.
    pub fn of(plan: &Plan) -> Result<Self, ToolError> {
        let finals: Vec<(&PathBuf, &Slot)> = plan
            .slots
            .iter()
            .filter(|(path, _)| !is_moot(plan, path))
            .collect();
        let exists = |path: &Path| plan.reals.get(path).is_some_and(|r| r.is_some());
        let is_file = |path: &Path| {
            plan.reals
                .get(path)
                .is_some_and(|r| r.as_ref().is_some_and(|r| r.kind == EntryKind::File))
        };

        let mut effects = Effects::default();
        let mut placements = Vec::new();
        // Real entries that stay where they physically are.
        let mut kept: BTreeSet<PathBuf> = BTreeSet::new();
        let mut drops: Vec<(PathBuf, PathBuf)> = Vec::new();
        for (path, slot) in &finals {
            let path = *path;
            // (A path beneath one an entry moves out to comes before it: the paths are sorted.)
            let parent = set_aside_at(
                &effects.moves_out,
                path,
                location(&plan.slots, parent_of(path)),
            );
            let here = physical(&parent, path);
            // Inside a tree that comes back from an archive: the entry the archive keeps here
            // (once the moves inside the tree are made) stays, or makes room for what comes
            // instead.
            if let Location::Staged { top, rel } = &parent {
                let name = path.file_name().unwrap_or_default();
                let own = rel.join(name);
                let archive_of_top = archived_at(plan, top);
                let here = archive_of_top
                    .and_then(|archive| member_at(plan, archive, parent_of(path)))
                    .map(|member| member.join(name));
                match slot {
                    Slot::InArchive { archive, member }
                        if archive_of_top == Some(archive) && here.as_ref() == Some(member) =>
                    {
                        continue;
                    }
                    // An entry of the same tree from another place in it: moved there as the
                    // tree is staged; what the archive keeps here makes room.
                    Slot::InArchive { archive, member } if archive_of_top == Some(archive) => {
                        let held = plan
                            .members
                            .get(archive)
                            .ok_or_else(|| one_at_a_time(path))?;
                        if !movable_inside(plan, held, archive, path, member) {
                            return Err(one_at_a_time(path));
                        }
                        if let Some(here) = here.filter(|h| is_held(held, h)) {
                            drops.push((top.clone(), here));
                        }
                        effects
                            .moves_inside
                            .push((top.clone(), member.clone(), own));
                        continue;
                    }
                    _ => {
                        if let Some(archive) = archive_of_top {
                            let held = plan
                                .members
                                .get(archive)
                                .ok_or_else(|| one_at_a_time(path))?;
                            if let Some(here) = here.filter(|h| is_held(held, h)) {
                                drops.push((top.clone(), here));
                            }
                        }
                    }
                }
            }
            match slot {
                Slot::Disk(at) if here.as_ref() == Some(at) => {
                    kept.insert(at.clone());
                }
                Slot::Disk(at) => effects.renames.push(Rename {
                    from: at.clone(),
                    to: path.clone(),
                    parent,
                    hop: Hop::Whole,
                }),
                Slot::Absent => {}
                // An entry a tree that comes back from the trash keeps, wanted at a place on
                // disk: moved out of the tree while it is staged, before the tree is placed.
                // Set aside in the tree first when its own place there is taken, or a directory
                // above it there goes (see `movable_out`).
                Slot::InArchive { archive, member } => {
                    let (top, set_aside) = movable_out(plan, path, archive, member, &parent)
                        .ok_or_else(|| one_at_a_time(path))?;
                    let aside = set_aside.then(|| {
                        let temp = fsops::temp_name(member.file_name().unwrap_or_default());
                        let to = PathBuf::from(&temp);
                        effects.moves_inside.push((top.clone(), member.clone(), to));
                        temp
                    });
                    effects.moves_out.push(MoveOut {
                        top,
                        member: member.clone(),
                        aside,
                        to: path.clone(),
                        parent,
                    });
                }
                placed => placements.push(Placement {
                    path: path.clone(),
                    slot: (*placed).clone(),
                    parent,
                    physical: here,
                    exchange: false,
                }),
            }
        }
        let sources: BTreeSet<PathBuf> = effects.renames.iter().map(|r| r.from.clone()).collect();
        for placement in &mut placements {
            placement.exchange = matches!(placement.slot, Slot::Bytes { .. })
                && placement
                    .physical
                    .as_ref()
                    .is_some_and(|r| is_file(r) && !sources.contains(r) && !kept.contains(r));
        }
        // What is on disk at a path involved, or where something is put, and is neither kept,
        // nor moved elsewhere, nor given new bytes in place goes to the trash — once, with the
        // directory that holds it if that goes too.
        let targets = finals
            .iter()
            .filter_map(|(path, _)| physical_path(&plan.slots, path));
        let mut removals: Vec<PathBuf> = Vec::new();
        for candidate in plan.slots.keys().cloned().chain(targets) {
            let exchanged = placements
                .iter()
                .any(|p| p.exchange && p.physical.as_ref() == Some(&candidate));
            if exists(&candidate)
                && !kept.contains(&candidate)
                && !exchanged
                && !sources.contains(&candidate)
                && !removals.contains(&candidate)
            {
                removals.push(candidate);
            }
        }
        // Folded into a removal above it, unless it is inside an entry that moves out of that
        // tree first: then it is removed on its own, from where that entry is.
        let moves_out_between = |above: &Path, path: &Path| {
            sources.iter().any(|source| {
                source != above && source.starts_with(above) && path.starts_with(source)
            })
        };
        effects.removals = removals
            .iter()
            .filter(|path| {
                !removals.iter().any(|other| {
                    other != *path && path.starts_with(other) && !moves_out_between(other, path)
                })
            })
            .cloned()
            .collect();
        for restored in removals
            .iter()
            .filter(|p| plan.restored.contains(*p) && !effects.removals.contains(p))
        {
            let with = effects
                .removals
                .iter()
                .find(|above| *above != restored && restored.starts_with(above));
            if let Some(with) = with {
                effects.also_archived.push((restored.clone(), with.clone()));
            }
        }
        effects.renames = order_renames(effects.renames);
        effects.order = order_steps(&effects.removals, &effects.renames);
        // What moves away inside a tree, or out of it, makes room by itself.
        drops.retain(|(top, member)| {
            !effects
                .moves_inside
                .iter()
                .any(|(t, from, _)| t == top && from == member)
                && !effects
                    .moves_out
                    .iter()
                    .any(|out| &out.top == top && &out.member == member)
        });
        drops.sort();
        // A drop goes with one above it, unless it is beneath an entry moved aside first.
        let moved_between = |top: &Path, above: &Path, member: &Path| {
            effects.moves_inside.iter().any(|(t, from, _)| {
                t == top && from != above && from.starts_with(above) && member.starts_with(from)
            })
        };
        effects.drops = drops
            .iter()
            .filter(|(top, member)| {
                !drops.iter().any(|(t, m)| {
                    t == top && m != member && member.starts_with(m) && !moved_between(t, m, member)
                })
            })
            .cloned()
            .collect();
        placements.sort_by_key(|p| p.path.components().count());
        effects.placements = placements;
        Ok(effects)
    }
}

/// The archive the tree at `top` comes back from, if it does.
fn archived_at<'p>(plan: &'p Plan, top: &Path) -> Option<&'p PathBuf> {
    match plan.slots.get(top) {
        Some(Slot::Archive { archive, .. }) => Some(archive),
        _ => None,
    }
}

/// The member of `archive` that the tree staged from it holds at `path` once the moves inside
/// it are made (`path` may be a directory moved out of that tree: its place there as the tree
/// is staged), if the tree holds one of it there: what the nearest path at or above `path` with
/// a slot says.
fn member_at(plan: &Plan, archive: &Path, path: &Path) -> Option<PathBuf> {
    let (above, slot) = path
        .ancestors()
        .find_map(|above| Some((above, plan.slots.get(above)?)))?;
    let rest = path.strip_prefix(above).ok()?;
    let member = match slot {
        Slot::Archive { archive: a, meta } if a == archive && meta.kind == EntryKind::Directory => {
            PathBuf::new()
        }
        Slot::InArchive { archive: a, member } if a == archive => member.clone(),
        _ => return None,
    };
    Some(if rest.as_os_str().is_empty() {
        member
    } else {
        member.join(rest)
    })
}

/// Whether the archive's members `held` hold `member`.
fn is_held(held: &crate::trash::Members, member: &Path) -> bool {
    held.get(&member_path_bytes(member)).is_some()
}

/// Whether the member `member` of `archive` (`held`) is wanted at `path` only.
fn wanted_once(plan: &Plan, archive: &Path, member: &Path) -> bool {
    plan.slots
        .values()
        .filter(|slot| {
            matches!(slot, Slot::InArchive { archive: a, member: m } if a == archive && m == member)
        })
        .count()
        == 1
}

/// Whether the archive's `member` (`held`), wanted at `path` inside the same tree, can be moved
/// there as the tree is staged: an entry of it (a file, a link, or a directory with what is in
/// it), wanted nowhere else, into a directory the archive keeps (where it is once the moves
/// inside the tree are made).
fn movable_inside(
    plan: &Plan,
    held: &crate::trash::Members,
    archive: &Path,
    path: &Path,
    member: &Path,
) -> bool {
    let parent_kept = member_at(plan, archive, parent_of(path)).is_some_and(|dir| {
        dir.as_os_str().is_empty()
            || held
                .get(&member_path_bytes(&dir))
                .is_some_and(|m| m.kind == EntryKind::Directory)
    });
    is_held(held, member) && wanted_once(plan, archive, member) && parent_kept
}

/// The path of the tree `archive` comes back at, if its `member` (wanted at `path`, in the
/// directory `parent`) can be moved out of it to there once the tree is placed: an entry of it
/// (a file, a link, or a directory with what is in it), wanted nowhere else, into a directory
/// on disk or in another tree that comes back beside it (placed before), its own place in the
/// tree left empty or given an entry that comes back there from the trash or from bytes, or an
/// empty directory. With whether it is set aside in the tree first (to a temp name at its top,
/// as the tree is staged, before anything is dropped or built in it): when its own place there
/// is not left empty or a directory above it there is not kept as the archive keeps it (one
/// the changes made, dropped).
fn movable_out(
    plan: &Plan,
    path: &Path,
    archive: &Path,
    member: &Path,
    parent: &Location,
) -> Option<(PathBuf, bool)> {
    if member.as_os_str().is_empty() {
        return None;
    }
    let top = plan.slots.iter().find_map(|(top, slot)| match slot {
        Slot::Archive { archive: a, .. } if a == archive && !is_moot(plan, top) => {
            Some(top.clone())
        }
        _ => None,
    })?;
    let into_place = match parent {
        Location::Real(_) => true,
        Location::Staged { top: other, .. } => {
            other != &top
                && !other.starts_with(&top)
                && !top.starts_with(other)
                && built_as_is(plan, other, path)
        }
    };
    if !into_place {
        return None;
    }
    let held = plan.members.get(archive)?;
    let own = top.join(member);
    // What comes back at its place is recorded on its own, after the move out (see `to_plan`):
    // an entry from the trash or from bytes, or an empty directory. (What moves there is not:
    // a redo would find the place taken when it moves the entry back.)
    let own_left_empty = match plan.slots.get(&own)? {
        Slot::Absent => true,
        Slot::Archive { .. } | Slot::Bytes { .. } | Slot::NewDir { .. } => false,
        Slot::Disk(_) | Slot::InArchive { .. } => return None,
    };
    let above_kept = member.ancestors().skip(1).all(|rel| {
        rel.as_os_str().is_empty()
            || match plan.slots.get(&top.join(rel)) {
                None => true,
                Some(Slot::InArchive {
                    archive: a,
                    member: m,
                }) => a == archive && m == rel,
                Some(_) => false,
            }
    });
    (is_held(held, member) && wanted_once(plan, archive, member) && own != path)
        .then_some((top, !(own_left_empty && above_kept)))
}

/// `parent`, the location of `path`'s directory, where an entry moves out of a tree (`moves_out`,
/// to a path above `path`) that is set aside in it first: its directory inside the tree is then
/// beneath the temp name.
fn set_aside_at(moves_out: &[MoveOut], path: &Path, parent: Location) -> Location {
    let Location::Staged { top, rel } = &parent else {
        return parent;
    };
    let aside = moves_out.iter().find_map(|out| {
        let temp = out.aside.as_ref()?;
        let beneath = path != out.to && path.starts_with(&out.to) && &out.top == top;
        let rest = rel.strip_prefix(&out.member).ok().filter(|_| beneath)?;
        Some(Path::new(temp).join(rest))
    });
    match aside {
        Some(rel) => Location::Staged {
            top: top.clone(),
            rel,
        },
        None => parent,
    }
}

/// Whether the directory `path` is in, inside the tree that comes back at `top`, is there once
/// that tree has taken its place, where its path says: no directory between them comes from
/// elsewhere (another tree, a directory that moves out of its own).
fn built_as_is(plan: &Plan, top: &Path, path: &Path) -> bool {
    let archive = archived_at(plan, top);
    path.starts_with(top)
        && !is_moot(plan, top)
        && parent_of(path)
            .ancestors()
            .take_while(|above| *above != top)
            .all(|above| match plan.slots.get(above) {
                None => true,
                Some(Slot::InArchive { archive: a, .. }) => Some(a) == archive,
                Some(_) => false,
            })
}

/// A plan this undo does not make in one step.
fn one_at_a_time(path: &Path) -> ToolError {
    ToolError::new(
        ErrorCode::Conflict,
        format!(
            "cannot undo these changes in one step: {} would come from inside a tree in the trash to another place. Nothing was undone; undo the changes one at a time",
            path.shown()
        ),
    )
}

/// A path whose final state does not matter: a directory above it ends gone or as a file.
fn is_moot(plan: &Plan, path: &Path) -> bool {
    path.ancestors().skip(1).any(|above| {
        matches!(
            plan.slots.get(above),
            Some(Slot::Absent | Slot::Bytes { .. })
        ) || matches!(
            plan.slots.get(above),
            Some(Slot::Archive { meta, .. }) if meta.kind != EntryKind::Directory
        )
    })
}

mod model;
mod order;
mod report;
pub use model::{Effects, Hop, MoveOut, Placement, Rename, Step};
use order::{order_renames, order_steps};

#[cfg(test)]
mod tests;
