//! Planning an undo over a virtual state of the paths involved: the changes to take back are
//! walked newest first; each is checked against the state its newer ones leave (it must find
//! every path exactly as it left it), then its inverse is applied to that state. Nothing on disk
//! changes here; `effects` and `to_plan` turn the final state into a plan the executor makes
//! as one journaled commit.

mod check;
mod invert;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::disk::{self, Real};
use super::refusal::{conflict, UnreadableArchive};
use super::select::ChangeToUndo;
use super::slot::{physical_path, Like, Slot};
use crate::change::EntryFacts;
use crate::error::ToolError;
use crate::history::History;
use crate::paths::shown::Shown;
use crate::paths::EntryKind;
use crate::trash::{member_path_bytes, Member, Members};
use crate::workspace::Workspace;

/// The outcome of planning: the final state of every path involved, and what is known of the
/// disk now.
pub struct Plan {
    pub slots: BTreeMap<PathBuf, Slot>,
    /// The entries on disk now, at every path involved (and at the real paths slots name).
    pub reals: BTreeMap<PathBuf, Option<Real>>,
    /// What each directory archive the plan looked into holds.
    pub members: HashMap<PathBuf, Arc<Members>>,
    /// The tree digest each directory on disk must still have (by its real path), where a change
    /// recorded one (a restored tree): checked when the undo archives the tree, which is when
    /// its digest is computed anyway.
    pub tree_digests: HashMap<PathBuf, String>,
    /// Entries on disk (by real path) a restore being taken back put there from an archive that
    /// no older change being taken back needs: each that goes to the trash gets an archive of
    /// its own, so that the change that made the consumed archive finds this one in its place
    /// (the history's stand-ins), also when it goes with a directory above it.
    pub restored: BTreeSet<PathBuf>,
}

/// Plans taking back changes, newest first.
pub struct Planner<'a> {
    ws: &'a Workspace,
    slots: BTreeMap<PathBuf, Slot>,
    reals: BTreeMap<PathBuf, Option<Real>>,
    /// Directories a change created, which must be empty once everything is taken back.
    must_be_empty: Vec<(PathBuf, String)>,
    /// Parent directories a change made for its entry: removed if left empty.
    made_parents: Vec<PathBuf>,
    /// Archives a restore being taken back consumed (by file name), and what stands in for
    /// each: the entry the restore put in place, as the virtual state had it (and what the
    /// state said beneath it, by relative path).
    stand_ins: HashMap<OsString, StandIn>,
    /// What each directory archive looked into holds (read once).
    members: HashMap<PathBuf, Arc<Members>>,
    /// See [`Plan::tree_digests`].
    tree_digests: HashMap<PathBuf, String>,
    /// Directories a change created inside a tree that comes back from the trash: they must be
    /// empty once everything is taken back (path, archive, member, change).
    must_be_empty_inside: Vec<(PathBuf, PathBuf, PathBuf, String)>,
    /// What is known of the entries at paths of the virtual state that an undo, or a restore
    /// being taken back, put there under new inodes: they follow their entries as the walk
    /// moves them back (and go when a change taken back replaces them). `None`: an entry that
    /// came back inside a tree put back whole, moved out of it since: known by kind and content
    /// alone, as it is inside that tree.
    facts: BTreeMap<PathBuf, Option<EntryFacts>>,
}

/// What stands in for an archive a restore consumed.
#[derive(Debug, Clone)]
struct StandIn {
    slot: Slot,
    beneath: Vec<(PathBuf, Slot)>,
    /// What is known of the restored entry (its own facts, by the empty path) and of the
    /// entries beneath it, by relative path.
    facts: Vec<(PathBuf, Option<EntryFacts>)>,
}

impl<'a> Planner<'a> {
    pub fn new(ws: &'a Workspace) -> Self {
        Self {
            ws,
            slots: BTreeMap::new(),
            reals: BTreeMap::new(),
            must_be_empty: Vec::new(),
            made_parents: Vec::new(),
            stand_ins: HashMap::new(),
            members: HashMap::new(),
            tree_digests: HashMap::new(),
            must_be_empty_inside: Vec::new(),
            facts: BTreeMap::new(),
        }
    }

    /// Takes back `record` in the virtual state, its paths in the reverse of the order they
    /// changed in: checks each is as the change left it, then sets what was there before (so a
    /// path one step of the change emptied and a later one filled is checked as filled, then as
    /// empty).
    pub fn take_back(&mut self, target: &ChangeToUndo, history: &History) -> Result<(), ToolError> {
        let record = &target.record;
        // The entries undos put back since this change: newer ones, known already, stand.
        for (path, facts) in &target.put_back {
            self.facts.entry(path.clone()).or_insert(Some(*facts));
        }
        for file in record.files.iter().rev() {
            self.check_after(target, file)?;
            self.invert(record, file, history)?;
        }
        Ok(())
    }

    /// The final state, after checking that directories created by the changes are empty then.
    pub fn finish(mut self) -> Result<Plan, ToolError> {
        // Parents a change made go too, deepest first, where nothing else is left in them.
        let mut parents = std::mem::take(&mut self.made_parents);
        parents.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
        parents.dedup();
        for dir in parents {
            // Made inside a tree that comes back from the trash, or that tree itself: goes when
            // empty there.
            match self.slot(&dir) {
                Slot::InArchive { archive, member } => {
                    self.drop_if_empty_inside(&dir, &archive, &member)?;
                    continue;
                }
                Slot::Archive { archive, meta } if meta.kind == EntryKind::Directory => {
                    self.drop_if_empty_inside(&dir, &archive, Path::new(""))?;
                    continue;
                }
                // Made again empty (a removal of it taken back): goes unless something comes
                // back into it.
                Slot::NewDir { .. } => {
                    let something_comes_back = self.slots.iter().any(|(k, v)| {
                        k.starts_with(&dir) && k != &dir && !matches!(v, Slot::Absent)
                    });
                    if !something_comes_back {
                        self.set(&dir, Slot::Absent);
                    }
                    continue;
                }
                _ => {}
            }
            self.drop_made_dir_if_empty(&dir)?;
        }
        let restored = self
            .stand_ins
            .values()
            .filter_map(|stand_in| match &stand_in.slot {
                Slot::Disk(at) => Some(at.clone()),
                _ => None,
            })
            .collect();
        for (dir, change) in std::mem::take(&mut self.must_be_empty) {
            if !matches!(self.slot(&dir), Slot::Absent) {
                continue;
            }
            let Some(real) = self.real(&dir)? else {
                continue;
            };
            if real.kind != EntryKind::Directory {
                continue;
            }
            for name in disk::list(self.ws, &dir)? {
                let child = dir.join(&name);
                // Its own state: what is inside goes with the directory otherwise.
                let own = self.slots.get(&child).cloned();
                if !matches!(own, Some(Slot::Absent)) {
                    return Err(conflict(
                        &dir,
                        &change,
                        format!(
                            "it is not empty: it holds {}, which no change being undone made",
                            shown_name(&name)
                        ),
                    ));
                }
            }
        }
        for (dir, archive, member, change) in std::mem::take(&mut self.must_be_empty_inside) {
            if !matches!(self.slot(&dir), Slot::Absent) {
                continue;
            }
            let members = self
                .members_of(&archive)
                .map_err(|e| conflict(&dir, &change, e))?;
            for name in members.children(&member_path_bytes(&member)) {
                let child = dir.join(crate::paths::names::from_bytes(&name));
                if !matches!(self.slots.get(&child), Some(Slot::Absent)) {
                    return Err(conflict(
                        &dir,
                        &change,
                        format!(
                            "it is not empty: {} is in it",
                            shown_name(&OsString::from(crate::paths::names::from_bytes(&name)))
                        ),
                    ));
                }
            }
        }
        // Trees that come back from the trash with changes inside: what their archives hold.
        let trees: Vec<PathBuf> = self
            .slots
            .iter()
            .filter_map(|(path, slot)| match slot {
                Slot::Archive { archive, meta } if meta.kind == EntryKind::Directory => {
                    let inside = self.slots.keys().any(|k| k.starts_with(path) && k != path);
                    inside.then(|| archive.clone())
                }
                _ => None,
            })
            .collect();
        for archive in trees {
            self.members_of(&archive)?;
        }
        // Every real path a slot names, or where something goes, is known.
        let physical: Vec<PathBuf> = self
            .slots
            .keys()
            .filter_map(|path| physical_path(&self.slots, path))
            .collect();
        for path in physical {
            self.real(&path)?;
        }
        let named: Vec<PathBuf> = self
            .slots
            .values()
            .filter_map(|slot| match slot {
                Slot::Disk(at) => Some(at.clone()),
                Slot::Bytes {
                    like: Like::Disk(at),
                    ..
                } => Some(at.clone()),
                _ => None,
            })
            .chain(self.slots.keys().cloned())
            .collect();
        for path in named {
            self.real(&path)?;
        }
        Ok(Plan {
            slots: self.slots,
            reals: self.reals,
            members: self.members,
            tree_digests: self.tree_digests,
            restored,
        })
    }

    /// Sets the directory `dir` a change made (on disk, wherever it is now) to nothing when
    /// nothing in it is left or comes back.
    fn drop_made_dir_if_empty(&mut self, dir: &Path) -> Result<(), ToolError> {
        // Where it is on disk now (beneath a directory that moves back, where that one is;
        // beneath one that goes, where it was made).
        let at = match self.slot(dir) {
            Slot::Disk(at) => at,
            Slot::Absent if !self.slots.contains_key(dir) => match self.on_disk_beneath_gone(dir) {
                Some(at) => at,
                None => return Ok(()),
            },
            _ => return Ok(()),
        };
        if !self
            .real(&at)?
            .is_some_and(|r| r.kind == EntryKind::Directory)
        {
            return Ok(());
        }
        let names = disk::list(self.ws, &at)?;
        let something_comes_back = self
            .slots
            .iter()
            .any(|(k, v)| k.starts_with(dir) && k != dir && !matches!(v, Slot::Absent));
        if !something_comes_back
            && names
                .iter()
                .all(|name| matches!(self.slot(&dir.join(name)), Slot::Absent))
        {
            self.set(dir, Slot::Absent);
        }
        Ok(())
    }

    /// Where `path`, beneath a directory that ends gone, is on disk now: where the nearest
    /// directory above it that moves back is, else where it is; `None` beneath one that comes
    /// from the trash.
    fn on_disk_beneath_gone(&self, path: &Path) -> Option<PathBuf> {
        for above in path.ancestors().skip(1) {
            match self.slots.get(above) {
                Some(Slot::Disk(at)) => {
                    return Some(at.join(path.strip_prefix(above).expect("an ancestor")))
                }
                Some(Slot::Archive { .. } | Slot::InArchive { .. }) => return None,
                _ => {}
            }
        }
        Some(path.to_owned())
    }

    /// What `path` holds in the virtual state: its own slot, else what the nearest directory
    /// above it with a slot says of it (an entry beneath a moved directory moved with it; beneath
    /// a directory that is gone or a file, there is nothing).
    fn slot(&self, path: &Path) -> Slot {
        if let Some(slot) = self.slots.get(path) {
            return slot.clone();
        }
        for above in path.ancestors().skip(1) {
            let Some(slot) = self.slots.get(above) else {
                continue;
            };
            let rest = path.strip_prefix(above).expect("an ancestor");
            return match slot {
                Slot::Disk(at) => Slot::Disk(at.join(rest)),
                Slot::Archive { meta, archive } if meta.kind == EntryKind::Directory => {
                    Slot::InArchive {
                        archive: archive.clone(),
                        member: rest.to_owned(),
                    }
                }
                Slot::InArchive { archive, member } => Slot::InArchive {
                    archive: archive.clone(),
                    member: member.join(rest),
                },
                _ => Slot::Absent,
            };
        }
        Slot::Disk(path.to_owned())
    }

    fn set(&mut self, path: &Path, slot: Slot) {
        self.slots.insert(path.to_owned(), slot);
    }

    /// Moves the entry at `from` (and what is known beneath it) to `to` in the virtual state.
    fn move_entry(&mut self, from: &Path, to: &Path) {
        let moved = self.slot(from);
        // Nothing is left at `to` (checked): what the state says is gone beneath it no longer
        // applies once the entry is there.
        self.slots.retain(|k, slot| {
            !(k.starts_with(to) && k.as_path() != to && matches!(slot, Slot::Absent))
        });
        let beneath: Vec<PathBuf> = self
            .slots
            .keys()
            .filter(|k| k.starts_with(from) && k.as_path() != from)
            .cloned()
            .collect();
        for key in beneath {
            if let Some(slot) = self.slots.remove(&key) {
                let rest = key.strip_prefix(from).expect("beneath");
                self.slots.insert(to.join(rest), slot);
            }
        }
        for (dir, _) in &mut self.must_be_empty {
            if let Ok(rest) = dir.strip_prefix(from) {
                *dir = to.join(rest);
            }
        }
        for dir in &mut self.made_parents {
            if let Ok(rest) = dir.strip_prefix(from) {
                *dir = join(to, rest);
            }
        }
        let mut facts = self.take_facts(from);
        let put_back_whole = from
            .ancestors()
            .skip(1)
            .any(|above| self.facts.contains_key(above));
        if put_back_whole && !facts.iter().any(|(rest, _)| rest.as_os_str().is_empty()) {
            facts.push((PathBuf::new(), None));
        }
        self.take_facts(to);
        for (rest, known) in facts {
            self.facts.insert(join(to, &rest), known);
        }
        self.set(to, moved);
        self.set(from, Slot::Absent);
    }

    /// Takes what is known of the entries at and beneath `path` out of the virtual state, by
    /// path relative to it (the empty path for `path` itself).
    fn take_facts(&mut self, path: &Path) -> Vec<(PathBuf, Option<EntryFacts>)> {
        let keys: Vec<PathBuf> = self
            .facts
            .range(path.to_owned()..)
            .map(|(k, _)| k)
            .take_while(|k| k.starts_with(path))
            .cloned()
            .collect();
        keys.into_iter()
            .filter_map(|key| {
                let known = self.facts.remove(&key)?;
                Some((key.strip_prefix(path).expect("beneath").to_owned(), known))
            })
            .collect()
    }

    fn real(&mut self, path: &Path) -> Result<Option<Real>, ToolError> {
        if let Some(known) = self.reals.get(path) {
            return Ok(known.clone());
        }
        let found = disk::look(self.ws, path)?;
        self.reals.insert(path.to_owned(), found.clone());
        Ok(found)
    }

    /// Sets the directories newer changes made at or beneath `path`, on disk now, to nothing
    /// where nothing in them is left or comes back, deepest first (what [`Self::finish`] does
    /// for the rest, at the end).
    fn drop_made_parents_at(&mut self, path: &Path) -> Result<(), ToolError> {
        let mut made: Vec<PathBuf> = self
            .made_parents
            .iter()
            .filter(|dir| dir.starts_with(path))
            .cloned()
            .collect();
        made.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
        made.dedup();
        for dir in made {
            if !matches!(self.slot(&dir), Slot::Disk(_)) {
                continue;
            }
            self.drop_made_dir_if_empty(&dir)?;
            if matches!(self.slot(&dir), Slot::Absent) {
                self.made_parents.retain(|d| d != &dir);
            }
        }
        Ok(())
    }

    /// Sets the directory `dir`, the entry `member` of `archive`, to nothing when nothing else
    /// is left in it.
    fn drop_if_empty_inside(
        &mut self,
        dir: &Path,
        archive: &Path,
        member: &Path,
    ) -> Result<(), ToolError> {
        let members = self.members_of(archive)?;
        let sub = member_path_bytes(member);
        if members
            .get(&sub)
            .is_none_or(|m| m.kind != EntryKind::Directory)
        {
            return Ok(());
        }
        let emptied = members.children(&sub).iter().all(|name| {
            matches!(
                self.slots
                    .get(&dir.join(crate::paths::names::from_bytes(name))),
                Some(Slot::Absent)
            )
        });
        let something_comes_back = self
            .slots
            .iter()
            .any(|(k, v)| k.starts_with(dir) && k != dir && !matches!(v, Slot::Absent));
        if emptied && !something_comes_back {
            self.set(dir, Slot::Absent);
        }
        Ok(())
    }

    /// The slots set beneath `path`, by path relative to it.
    fn beneath(&self, path: &Path) -> Vec<(PathBuf, Slot)> {
        self.slots
            .iter()
            .filter(|(k, _)| k.starts_with(path) && k.as_path() != path)
            .map(|(k, v)| (k.strip_prefix(path).expect("beneath").to_owned(), v.clone()))
            .collect()
    }

    /// What the directory archive `archive` holds (read once).
    fn members_of(&mut self, archive: &Path) -> Result<Arc<Members>, UnreadableArchive> {
        if let Some(known) = self.members.get(archive) {
            return Ok(known.clone());
        }
        let (_, members) =
            self.ws
                .bucket()
                .members(archive)
                .map_err(|error| UnreadableArchive {
                    archive: archive.to_owned(),
                    error,
                })?;
        let members = Arc::new(members);
        self.members.insert(archive.to_owned(), members.clone());
        Ok(members)
    }

    /// The entry at `member` inside the directory archive `archive`.
    fn member(
        &mut self,
        archive: &Path,
        member: &Path,
    ) -> Result<Option<Member>, UnreadableArchive> {
        let members = self.members_of(archive)?;
        Ok(members.get(&member_path_bytes(member)).cloned())
    }
}

/// `path` with `rest` beneath it (`path` itself for the empty `rest`).
fn join(path: &Path, rest: &Path) -> PathBuf {
    if rest.as_os_str().is_empty() {
        path.to_owned()
    } else {
        path.join(rest)
    }
}

fn shown_name(name: &OsString) -> String {
    Path::new(name).shown().into_owned()
}
