//! From a planned final state to what must happen on disk: which entries go to the trash, which
//! move, and what is put in place where — in an order that frees every name before it is taken.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::plan::Plan;
use super::slot::{location, parent_of, physical, physical_path, Location, Slot};
use crate::confirm::FilesSummary;
use crate::error::{ErrorCode, ToolError};
use crate::paths::fsops;
use crate::paths::shown::Shown;
use crate::paths::EntryKind;

/// One thing put at a path.
#[derive(Debug, Clone)]
pub struct Placement {
    pub path: PathBuf,
    pub slot: Slot,
    /// The directory it goes into.
    pub parent: Location,
    /// Where it goes on disk as the steps run, when its directory is on disk already.
    pub physical: Option<PathBuf>,
    /// The file there now gets the new bytes in its place (same inode kind of change as an edit).
    pub exchange: bool,
}

/// An entry that moves back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rename {
    /// Where the entry is on disk now.
    pub from: PathBuf,
    /// The path it goes back to.
    pub to: PathBuf,
    /// The directory `to` is in when the steps run.
    pub parent: Location,
    /// Which part of the move this step is.
    pub hop: Hop,
}

/// A move in one step, or in two around a temp name (entries that trade places).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hop {
    /// From `from` to `to`.
    Whole,
    /// From `from` to this temp name beside it, freeing `from` for the entry that goes there.
    Aside(OsString),
    /// From the temp name beside `from` on to `to`, once `to` is free.
    Back(OsString),
}

impl Rename {
    /// Where the entry is when this step runs: its directory and name there.
    pub fn source(&self) -> PathBuf {
        match &self.hop {
            Hop::Whole | Hop::Aside(_) => self.from.clone(),
            Hop::Back(temp) => parent_of(&self.from).join(temp),
        }
    }

    /// Where this step puts the entry: the directory and the name.
    pub fn destination(&self) -> (Location, OsString) {
        match &self.hop {
            Hop::Aside(temp) => (
                Location::Real(parent_of(&self.from).to_owned()),
                temp.clone(),
            ),
            Hop::Whole | Hop::Back(_) => (
                self.parent.clone(),
                self.to.file_name().unwrap_or_default().to_owned(),
            ),
        }
    }

    /// Whether this step is where the entry arrives at `to` (not only set aside).
    pub fn arrives(&self) -> bool {
        !matches!(self.hop, Hop::Aside(_))
    }
}

/// A removal or a rename of an undo (an index into [`Effects::removals`] or
/// [`Effects::renames`]), as the commit makes them one after another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Remove(usize),
    Rename(usize),
}

/// Everything an undo does, in order.
#[derive(Debug, Default)]
pub struct Effects {
    /// Entries that go to the trash (and leave their place), shallow first.
    pub removals: Vec<PathBuf>,
    /// Restored entries that go to the trash with a directory above them (in `removals`), each
    /// archived on its own too: its archive stands in for the one its restore consumed (see
    /// `Plan::restored`). (The entry, the removal it goes with.)
    pub also_archived: Vec<(PathBuf, PathBuf)>,
    /// Entries that move back, in an order that frees each destination first.
    pub renames: Vec<Rename>,
    /// The removals and renames in the order the commit makes them: a removal before a rename
    /// to its path, a rename out of a removed tree before that tree's removal (what moves out
    /// never goes with it), the renames in their own order.
    pub order: Vec<Step>,
    /// What is put in place, shallow first.
    pub placements: Vec<Placement>,
    /// Entries of trees that come back from the trash that do not come back with them (a change
    /// inside the tree is taken back): (the tree's path, the entry's path inside it). Removed
    /// from the staged tree before anything is put in it; they stay in the archive.
    pub drops: Vec<(PathBuf, PathBuf)>,
    /// Files of trees that come back from the trash that come back at another place in the same
    /// tree (a move inside it is taken back): (the tree's path, the file's path in the archive,
    /// its path inside the tree as it comes back). Moved in the staged tree before the drops.
    pub moves_inside: Vec<(PathBuf, PathBuf, PathBuf)>,
}

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
            let parent = location(&plan.slots, parent_of(path));
            let here = physical(&parent, path);
            // Inside a tree that comes back from an archive: the entry the archive keeps here
            // stays, or makes room for what comes instead.
            if let Location::Staged { top, rel } = &parent {
                let own = rel.join(path.file_name().unwrap_or_default());
                match (plan.slots.get(top), slot) {
                    (_, Slot::InArchive { archive, member })
                        if archived_at(plan, top) == Some(archive) && *member == own =>
                    {
                        continue;
                    }
                    // A file of the same tree from another place in it: moved there as the
                    // tree is staged; what the archive keeps here makes room.
                    (_, Slot::InArchive { archive, member })
                        if archived_at(plan, top) == Some(archive) =>
                    {
                        let held = plan
                            .members
                            .get(archive)
                            .ok_or_else(|| one_at_a_time(path))?;
                        if !movable_inside(plan, held, path, member, rel) {
                            return Err(one_at_a_time(path));
                        }
                        if held.get(own.as_os_str().as_encoded_bytes()).is_some() {
                            drops.push((top.clone(), own.clone()));
                        }
                        effects
                            .moves_inside
                            .push((top.clone(), member.clone(), own));
                        continue;
                    }
                    (Some(Slot::Archive { archive, .. }), _) => {
                        let held = plan
                            .members
                            .get(archive)
                            .ok_or_else(|| one_at_a_time(path))?;
                        if held.get(own.as_os_str().as_encoded_bytes()).is_some() {
                            drops.push((top.clone(), own));
                        }
                    }
                    _ => {}
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
                // An entry a tree in the trash keeps, anywhere but at its own place in that
                // tree as it comes back: not followed.
                Slot::InArchive { .. } => return Err(one_at_a_time(path)),
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
        // What moves away inside a tree makes room by itself.
        drops.retain(|(top, member)| {
            !effects
                .moves_inside
                .iter()
                .any(|(t, from, _)| t == top && from == member)
        });
        drops.sort();
        effects.drops = drops
            .iter()
            .filter(|(top, member)| {
                !drops
                    .iter()
                    .any(|(t, m)| t == top && m != member && member.starts_with(m))
            })
            .cloned()
            .collect();
        placements.sort_by_key(|p| p.path.components().count());
        effects.placements = placements;
        Ok(effects)
    }

    /// What the undo changes, counted for the prompt (`ConfirmRequest.summary`); `diff` is the
    /// diff it shows.
    pub fn summary(&self, diff: &str) -> FilesSummary {
        let lines = |sign: char, header: &str| {
            diff.lines()
                .filter(|l| l.starts_with(sign) && !l.starts_with(header))
                .count() as u64
        };
        FilesSummary {
            added: self.placements.iter().filter(|p| !p.exchange).count() as u64,
            updated: self.placements.iter().filter(|p| p.exchange).count() as u64,
            deleted: self.removals.iter().filter(|p| !self.refilled(p)).count() as u64,
            moved: self.renames.iter().filter(|r| r.arrives()).count() as u64,
            lines_added: lines('+', "+++"),
            lines_removed: lines('-', "---"),
        }
    }

    /// Whether something is put at `path` after what is there goes to the trash.
    fn refilled(&self, path: &Path) -> bool {
        self.placements.iter().any(|p| p.path == path) || self.renames.iter().any(|r| r.to == path)
    }

    /// One line per path, for a prompt's detail and a dry run.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for path in &self.removals {
            if !self.refilled(path) {
                lines.push(format!("remove {} (into the trash)", path.shown()));
            }
        }
        for rename in self.renames.iter().filter(|r| r.arrives()) {
            lines.push(format!(
                "move {} back to {}",
                rename.from.shown(),
                rename.to.shown()
            ));
        }
        for placement in &self.placements {
            let path = placement.path.shown();
            lines.push(match &placement.slot {
                Slot::Bytes { .. } => format!("restore the previous content of {path}"),
                Slot::Archive { meta, .. } => {
                    let what = meta.kind.as_str();
                    format!("restore the {what} {path} from the trash")
                }
                Slot::NewDir { .. } => format!("recreate the empty directory {path}"),
                Slot::Disk(_) | Slot::Absent | Slot::InArchive { .. } => continue,
            });
        }
        lines
    }
}

/// The archive the tree at `top` comes back from, if it does.
fn archived_at<'p>(plan: &'p Plan, top: &Path) -> Option<&'p PathBuf> {
    match plan.slots.get(top) {
        Some(Slot::Archive { archive, .. }) => Some(archive),
        _ => None,
    }
}

/// Whether the archive's `member` (`held`), wanted at `path` inside the same tree (in the
/// directory `rel` of it), can be moved there as the tree is staged: a file or link, wanted
/// nowhere else, into a directory the archive keeps and that stays as it is.
fn movable_inside(
    plan: &Plan,
    held: &crate::trash::Members,
    path: &Path,
    member: &Path,
    rel: &Path,
) -> bool {
    let is_file = held
        .get(member.as_os_str().as_encoded_bytes())
        .is_some_and(|m| m.kind != EntryKind::Directory);
    let wanted_once = plan
        .slots
        .values()
        .filter(|slot| matches!(slot, Slot::InArchive { member: m, .. } if m == member))
        .count()
        == 1;
    let parent_kept = rel.as_os_str().is_empty()
        || (held
            .get(rel.as_os_str().as_encoded_bytes())
            .is_some_and(|m| m.kind == EntryKind::Directory)
            && match plan.slots.get(parent_of(path)) {
                None => true,
                Some(Slot::InArchive { member, .. }) => member == rel,
                Some(_) => false,
            });
    is_file && wanted_once && parent_kept
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

/// Orders the removals and the (ordered) renames: each waits for the steps it must follow (see
/// [`Effects::order`]); otherwise removals come first, as listed.
fn order_steps(removals: &[PathBuf], renames: &[Rename]) -> Vec<Step> {
    let must_precede = |first: Step, then: Step| match (first, then) {
        (Step::Rename(i), Step::Remove(j)) => {
            let source = renames[i].source();
            source != removals[j] && source.starts_with(&removals[j])
        }
        (Step::Remove(j), Step::Rename(i)) => match renames[i].destination() {
            (Location::Real(dir), name) => dir.join(name) == removals[j],
            (Location::Staged { .. }, _) => false,
        },
        (Step::Rename(i), Step::Rename(k)) => i < k,
        (Step::Remove(_), Step::Remove(_)) => false,
    };
    let mut pending: Vec<Step> = (0..removals.len())
        .map(Step::Remove)
        .chain((0..renames.len()).map(Step::Rename))
        .collect();
    let mut ordered = Vec::with_capacity(pending.len());
    while !pending.is_empty() {
        // Steps that wait on one another every way round keep the order listed.
        let ready = pending
            .iter()
            .position(|&step| {
                !pending
                    .iter()
                    .any(|&other| other != step && must_precede(other, step))
            })
            .unwrap_or(0);
        ordered.push(pending.remove(ready));
    }
    ordered
}

/// Orders renames so that an entry leaves a name before another takes it. Entries that trade
/// places (a cycle) are untied by a temp name: one of them moves aside first, the others follow
/// one another, and it moves on to its place last.
fn order_renames(mut pending: Vec<Rename>) -> Vec<Rename> {
    let mut ordered = Vec::with_capacity(pending.len() + 1);
    while !pending.is_empty() {
        // (An entry may go back to its own path inside a directory that moves back there.)
        let frees_its_name = |r: &Rename| {
            !pending
                .iter()
                .any(|other| other != r && other.source() == r.to)
        };
        // An entry whose source or destination is beneath another that moves too goes first,
        // while its directory is where it was planned at (and the record names it there).
        let nothing_moves_inside = |r: &Rename| {
            let above = r.source();
            let beneath = |path: &Path| path != above && path.starts_with(&above);
            !pending.iter().any(|other| {
                let into = match other.destination() {
                    (Location::Real(dir), name) => Some(dir.join(name)),
                    (Location::Staged { .. }, _) => None,
                };
                other != r && (beneath(&other.source()) || into.is_some_and(|p| beneath(&p)))
            })
        };
        let ready = pending
            .iter()
            .position(|r| frees_its_name(r) && nothing_moves_inside(r))
            .or_else(|| pending.iter().position(frees_its_name));
        match ready {
            Some(index) => ordered.push(pending.remove(index)),
            None => {
                // Every destination is some other's source: a cycle. Its first entry steps aside.
                let stuck = pending.remove(0);
                let temp = fsops::temp_name(stuck.from.file_name().unwrap_or_default());
                ordered.push(Rename {
                    hop: Hop::Aside(temp.clone()),
                    ..stuck.clone()
                });
                pending.push(Rename {
                    hop: Hop::Back(temp),
                    ..stuck
                });
            }
        }
    }
    ordered
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::fsops::Snapshot;
    use crate::undo::disk::Real;
    use std::collections::BTreeMap;

    fn real(kind: EntryKind) -> Option<Real> {
        let mode = match kind {
            EntryKind::Directory => 0o040755,
            _ => 0o100644,
        };
        Some(Real {
            stat: Snapshot {
                dev: 1,
                ino: 2,
                mode,
                uid: 0,
                gid: 0,
                size: 0,
                mtime: (0, 0),
                ctime: (0, 0),
            },
            kind,
        })
    }

    fn plan(slots: &[(&str, Slot)], reals: &[(&str, Option<Real>)]) -> Plan {
        Plan {
            slots: slots
                .iter()
                .map(|(p, s)| (PathBuf::from(p), s.clone()))
                .collect(),
            reals: reals
                .iter()
                .map(|(p, r)| (PathBuf::from(p), r.clone()))
                .collect::<BTreeMap<_, _>>(),
            members: Default::default(),
            tree_digests: Default::default(),
            restored: Default::default(),
        }
    }

    #[test]
    fn a_chain_of_moves_frees_each_name_before_it_is_taken() {
        // c's entry goes back to b, b's to a.
        let p = plan(
            &[
                ("/w/a", Slot::Disk("/w/b".into())),
                ("/w/b", Slot::Disk("/w/c".into())),
                ("/w/c", Slot::Absent),
            ],
            &[
                ("/w/a", None),
                ("/w/b", real(EntryKind::File)),
                ("/w/c", real(EntryKind::File)),
            ],
        );
        let effects = Effects::of(&p).unwrap();
        let order: Vec<_> = effects
            .renames
            .iter()
            .map(|r| (r.from.to_str().unwrap(), r.to.to_str().unwrap()))
            .collect();
        assert_eq!(order, [("/w/b", "/w/a"), ("/w/c", "/w/b")]);
        assert!(effects.removals.is_empty());
    }

    #[test]
    fn entries_that_trade_places_go_round_a_temp_name() {
        // a, b and c trade places: a's entry goes to b, b's to c, c's to a.
        let p = plan(
            &[
                ("/w/a", Slot::Disk("/w/c".into())),
                ("/w/b", Slot::Disk("/w/a".into())),
                ("/w/c", Slot::Disk("/w/b".into())),
            ],
            &[
                ("/w/a", real(EntryKind::File)),
                ("/w/b", real(EntryKind::File)),
                ("/w/c", real(EntryKind::File)),
            ],
        );
        let effects = Effects::of(&p).unwrap();
        assert!(effects.removals.is_empty());
        // Replayed on a map of names: every step finds its source and a free destination.
        let mut names: BTreeMap<PathBuf, &str> = [("/w/a", "A"), ("/w/b", "B"), ("/w/c", "C")]
            .into_iter()
            .map(|(p, e)| (PathBuf::from(p), e))
            .collect();
        for rename in &effects.renames {
            let entry = names.remove(&rename.source()).expect("the source is there");
            let (Location::Real(dir), name) = rename.destination() else {
                panic!("a real directory")
            };
            assert!(names.insert(dir.join(name), entry).is_none(), "{rename:?}");
        }
        let end: Vec<_> = names
            .iter()
            .map(|(p, e)| (p.to_str().unwrap(), *e))
            .collect();
        assert_eq!(end, [("/w/a", "C"), ("/w/b", "A"), ("/w/c", "B")]);
        assert_eq!(effects.renames.len(), 4);
        assert_eq!(effects.lines().len(), 3, "one line per entry moved back");
    }

    #[test]
    fn what_goes_with_its_directory_is_removed_once_and_what_lands_in_a_new_tree_is_staged_there() {
        let p = plan(
            &[
                ("/w/d", Slot::Absent),
                ("/w/d/x", Slot::Absent),
                ("/w/n", Slot::NewDir { mode: 0o755 }),
                (
                    "/w/n/f",
                    Slot::Bytes {
                        data: b"f".to_vec(),
                        like: super::super::slot::Like::Mode(0o644),
                    },
                ),
            ],
            &[
                ("/w/d", real(EntryKind::Directory)),
                ("/w/d/x", real(EntryKind::File)),
                ("/w/n", None),
                ("/w/n/f", None),
            ],
        );
        let effects = Effects::of(&p).unwrap();
        assert_eq!(effects.removals, [PathBuf::from("/w/d")]);
        let placed: Vec<_> = effects
            .placements
            .iter()
            .map(|p| (p.path.to_str().unwrap(), p.parent.clone()))
            .collect();
        assert_eq!(
            placed,
            [
                ("/w/n", Location::Real("/w".into())),
                (
                    "/w/n/f",
                    Location::Staged {
                        top: "/w/n".into(),
                        rel: PathBuf::new()
                    }
                ),
            ]
        );
    }

    #[test]
    fn inside_a_tree_from_the_trash_what_changed_makes_room_and_what_moved_is_refused() {
        use crate::trash::{Member, Members, Metadata};
        let meta = Metadata {
            session_id: "s".into(),
            run_id: "r".into(),
            agent_name: "a".into(),
            trashed_at: "2026-01-01T00:00:00.000Z".into(),
            original_path: "/w/a".into(),
            relative_path: "a".into(),
            kind: EntryKind::Directory,
            original_sha256: "0".repeat(64),
            size: 0,
            mode: 0o755,
            file_count: Some(2),
        };
        let member = |kind| Member {
            kind,
            mode: 0o644,
            content: [0; 32],
            first: None,
        };
        let members: Members = [
            (b"".to_vec(), member(EntryKind::Directory)),
            (b"x".to_vec(), member(EntryKind::File)),
            (b"d".to_vec(), member(EntryKind::Directory)),
            (b"d/y".to_vec(), member(EntryKind::File)),
            (b"keep".to_vec(), member(EntryKind::File)),
        ]
        .into_iter()
        .collect();
        let archive = PathBuf::from("/trash/a.tar.gz");
        let in_archive = |member: &str| Slot::InArchive {
            archive: archive.clone(),
            member: member.into(),
        };
        let mut p = plan(
            &[
                (
                    "/w/a",
                    Slot::Archive {
                        archive: archive.clone(),
                        meta,
                    },
                ),
                // x gets its older bytes, d goes with what is in it, new never was.
                (
                    "/w/a/x",
                    Slot::Bytes {
                        data: b"old".to_vec(),
                        like: super::super::slot::Like::Mode(0o644),
                    },
                ),
                ("/w/a/d", Slot::Absent),
                ("/w/a/d/y", Slot::Absent),
                ("/w/a/new", Slot::Absent),
                ("/w/a/keep", in_archive("keep")),
            ],
            &[("/w/a", None)],
        );
        p.members
            .insert(archive.clone(), std::sync::Arc::new(members));
        let effects = Effects::of(&p).unwrap();
        assert_eq!(
            effects.drops,
            [
                (PathBuf::from("/w/a"), PathBuf::from("d")),
                (PathBuf::from("/w/a"), PathBuf::from("x")),
            ]
        );
        let placed: Vec<_> = effects
            .placements
            .iter()
            .map(|p| p.path.to_str().unwrap())
            .collect();
        assert_eq!(placed, ["/w/a", "/w/a/x"]);
        // An entry of the archive wanted at another place is not followed.
        p.slots.insert("/w/a/x".into(), in_archive("keep"));
        assert_eq!(Effects::of(&p).unwrap_err().code, ErrorCode::Conflict);
    }
}
