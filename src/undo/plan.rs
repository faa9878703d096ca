//! Planning an undo over a virtual state of the paths involved: the changes to take back are
//! walked newest first; each is checked against the state its newer ones leave (it must find
//! every path exactly as it left it), then its inverse is applied to that state. Nothing on disk
//! changes here; `apply` turns the final state into one journaled commit.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::disk::{self, Real};
use super::refusal::{conflict, damaged, describe, not_undoable, Difference, UnreadableArchive};
use super::select::Target;
use super::slot::{physical_path, Like, Slot};
use crate::change::{Action, EntryFacts};
use crate::datadir;
use crate::error::ToolError;
use crate::hashing::sha256_hex;
use crate::history::{ChangeRecord, FileRecord, History};
use crate::paths::shown::Shown;
use crate::paths::EntryKind;
use crate::text::delta::Delta;
use crate::trash::{Member, Members, Override, TrashError};
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

/// How much of a file undo reads into memory to apply a delta (edits and appends are bounded
/// far below this by their own limits).
const MAX_CONTENT: u64 = 1 << 30;

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
    pub fn take_back(&mut self, target: &Target, history: &History) -> Result<(), ToolError> {
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
            for name in members.children(member.as_os_str().as_encoded_bytes()) {
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
        // Where it is on disk now (beneath a directory that moves back, where that one is).
        let Slot::Disk(at) = self.slot(dir) else {
            return Ok(());
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

    /// Checks that `file`'s path (and a move's source) is as `target` left it.
    fn check_after(&mut self, target: &Target, file: &FileRecord) -> Result<(), ToolError> {
        let change = describe(&target.record);
        // An undo since may have put the entry back under a new inode: known by what that undo
        // recorded, or — inside a tree it put back whole — by kind and content alone.
        let inside_put_back = file
            .path
            .ancestors()
            .skip(1)
            .any(|above| self.facts.contains_key(above));
        let put_back = self.facts.get(&file.path).copied();
        let recorded = put_back.flatten().or(file.entry);
        let kind = recorded.map(|f| f.kind);
        let facts = match put_back {
            Some(known) => known,
            None => recorded.filter(|_| !inside_put_back),
        };
        let expected = match file.action {
            Action::Deleted | Action::Removed => Expected::Nothing,
            Action::Created => Expected::Entry {
                kind: Some(EntryKind::Directory),
                sha256: None,
                facts,
            },
            Action::Added | Action::Modified | Action::Moved => Expected::Entry {
                kind,
                sha256: file.sha256_after.clone(),
                facts,
            },
        };
        self.check_at(&file.path, &expected, &change)?;
        if let (Action::Moved, Some(from)) = (file.action, &file.from) {
            self.check_at(from, &Expected::Nothing, &change)?;
        }
        Ok(())
    }

    /// Checks that the virtual state at `path` is `expected` (as the change `change` left it).
    /// Where it must hold nothing, directories newer changes made there (a restore into a
    /// directory moved away or removed made it again) go first, when nothing is left in them:
    /// what the change took away comes back in their place.
    fn check_at(
        &mut self,
        path: &Path,
        expected: &Expected,
        change: &str,
    ) -> Result<(), ToolError> {
        if matches!(expected, Expected::Nothing) && self.matches(path, expected).is_err() {
            self.drop_made_parents_at(path)?;
        }
        self.matches(path, expected)
            .map_err(|why| conflict(path, change, why))
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

    /// Whether the virtual state at `path` is `expected`; else what differs.
    fn matches(&mut self, path: &Path, expected: &Expected) -> Result<(), Difference> {
        let slot = self.slot(path);
        let (kind, sha256, facts) = match expected {
            Expected::Nothing => {
                return match slot {
                    Slot::Absent => Ok(()),
                    Slot::Disk(at) => match self.real(&at)? {
                        None => Ok(()),
                        Some(real) => Err(Difference::Present(Some(real.kind_name()))),
                    },
                    Slot::InArchive { archive, member } => match self.member(&archive, &member)? {
                        None => Ok(()),
                        Some(m) => Err(Difference::Present(Some(m.kind.as_str()))),
                    },
                    _ => Err(Difference::Present(None)),
                }
            }
            Expected::Entry {
                kind,
                sha256,
                facts,
            } => (*kind, sha256.as_deref(), *facts),
        };
        match slot {
            Slot::Absent => Err(Difference::Gone),
            Slot::InArchive { archive, member } => {
                // Inside a tree in the trash: known by kind and content (inodes are not kept).
                let Some(m) = self.member(&archive, &member)? else {
                    return Err(Difference::Gone);
                };
                if kind.is_some_and(|k| k != m.kind) {
                    return Err(Difference::OtherKind(m.kind.as_str()));
                }
                match sha256 {
                    Some(_) if m.kind == EntryKind::Directory => match kind {
                        Some(EntryKind::Directory) => Ok(()),
                        _ => Err(Difference::OtherKind("directory")),
                    },
                    Some(sha256) if sha256 != m.sha256() => Err(Difference::ContentChanged),
                    _ => Ok(()),
                }
            }
            Slot::Disk(at) => {
                let Some(real) = self.real(&at)? else {
                    return Err(Difference::Gone);
                };
                if let Some(kind) = kind {
                    if real.kind_fact() != kind {
                        return Err(Difference::OtherKind(real.kind_name()));
                    }
                }
                if let Some(facts) = facts {
                    if (real.stat.dev, real.stat.ino) != (facts.dev, facts.ino) {
                        return Err(Difference::Replaced(real.kind_name()));
                    }
                }
                if let Some(sha256) = sha256 {
                    if real.kind == EntryKind::Directory {
                        // A tree is known by its kind and inode here; its digest is checked when
                        // the undo archives it, where nothing beneath it is taken back first (then
                        // it is not as it is on disk now; each such path was checked itself).
                        if kind != Some(EntryKind::Directory) {
                            return Err(Difference::OtherKind("directory"));
                        }
                        let untouched_inside = !self
                            .slots
                            .keys()
                            .any(|k| k.starts_with(path) && k.as_path() != path);
                        if untouched_inside {
                            self.tree_digests.insert(at.clone(), sha256.to_owned());
                        }
                    } else {
                        let now = disk::sha256_of(self.ws, &at, &real)?;
                        if now != sha256 {
                            return Err(Difference::ContentChanged);
                        }
                    }
                }
                Ok(())
            }
            Slot::Archive { meta, archive } => {
                if kind.is_some_and(|k| k != meta.kind) {
                    return Err(Difference::OtherKind(meta.kind.as_str()));
                }
                let Some(sha256) = sha256 else {
                    return Ok(());
                };
                // A tree with changes inside it taken back already: the digest of the tree the
                // archive keeps with those in place.
                let now = if meta.kind == EntryKind::Directory {
                    self.tree_digest(path, &archive)?
                } else {
                    None
                };
                if sha256 != now.as_deref().unwrap_or(&meta.original_sha256) {
                    return Err(Difference::ContentChanged);
                }
                Ok(())
            }
            Slot::Bytes { data, .. } => {
                if kind.is_some_and(|k| k != EntryKind::File) {
                    return Err(Difference::OtherKind("file"));
                }
                match sha256 {
                    Some(sha256) if sha256 != sha256_hex(&data) => Err(Difference::ContentChanged),
                    _ => Ok(()),
                }
            }
            Slot::NewDir { mode } => match (kind, sha256) {
                (Some(EntryKind::Directory) | None, None) => Ok(()),
                // A tree restored empty, then removed without an archive: known by the digest
                // of an empty directory with its mode.
                (Some(EntryKind::Directory) | None, Some(sha256)) => {
                    if sha256 == crate::trash::empty_tree_digest(mode) {
                        Ok(())
                    } else {
                        Err(Difference::ContentChanged)
                    }
                }
                _ => Err(Difference::OtherKind("directory")),
            },
        }
    }

    /// Sets what was at `file`'s path (and a move's source) before `record`; the parent
    /// directories it made are removed at the end if left empty.
    fn invert(
        &mut self,
        record: &ChangeRecord,
        file: &FileRecord,
        history: &History,
    ) -> Result<(), ToolError> {
        let path = file.path.as_path();
        if let Some(consumed) = file.restored_from.as_ref().and_then(|a| a.file_name()) {
            let mut facts = self.take_facts(path);
            if !facts.iter().any(|(rest, _)| rest.as_os_str().is_empty()) {
                facts.extend(file.entry.map(|own| (PathBuf::new(), Some(own))));
            }
            let stand_in = StandIn {
                slot: self.slot(path),
                beneath: self.beneath(path),
                facts,
            };
            self.stand_ins.insert(consumed.to_owned(), stand_in);
        }
        // What the change left at its paths is replaced by what was there before: what is known
        // of it goes (a moved entry's goes back with it, in `move_entry`).
        if file.action != Action::Moved || file.delta.is_some() || file.from_trashed_to.is_some() {
            self.take_facts(path);
        }
        if let Some(from) = &file.from {
            self.take_facts(from);
        }
        let archived = |planner: &mut Self, archive: &Option<PathBuf>, at: &Path| match archive {
            Some(archive) => planner.archive(record, file, archive, at).map(Some),
            None => Ok(None),
        };
        match file.action {
            Action::Added => {
                let before = archived(self, &file.trashed_to, path)?.unwrap_or(Slot::Absent);
                self.set(path, before);
            }
            Action::Modified => {
                let before = if let Some(delta) = &file.delta {
                    let data = self.apply_delta(record, file, path, delta, history)?;
                    if let Some(sha256) = &file.sha256_before {
                        if &sha256_hex(&data) != sha256 {
                            return Err(damaged(record, path));
                        }
                    }
                    Slot::Bytes {
                        data,
                        like: self.like(path),
                    }
                } else if let Some(slot) = archived(self, &file.trashed_to, path)? {
                    slot
                } else {
                    return Err(not_undoable(record, "its previous content was not kept"));
                };
                self.set(path, before);
            }
            Action::Deleted => {
                let Some(before) = archived(self, &file.trashed_to, path)? else {
                    return Err(not_undoable(record, "no copy was kept"));
                };
                self.set(path, before);
            }
            Action::Removed => {
                let before = match (archived(self, &file.trashed_to, path)?, file.dir_mode) {
                    (Some(slot), _) => slot,
                    (None, Some(mode)) => Slot::NewDir { mode },
                    (None, None) => return Err(not_undoable(record, "no copy was kept")),
                };
                self.set(path, before);
            }
            Action::Created => {
                if let Slot::InArchive { archive, member } = self.slot(path) {
                    let inside = (path.to_owned(), archive, member, describe(record));
                    self.must_be_empty_inside.push(inside);
                }
                self.set(path, Slot::Absent);
                self.must_be_empty.push((path.to_owned(), describe(record)));
            }
            Action::Moved => {
                let from = file.from.as_deref().ok_or_else(|| damaged(record, path))?;
                if let Some(delta) = &file.delta {
                    let data = self.apply_delta(record, file, path, delta, history)?;
                    if let Some(sha256) = &file.sha256_before {
                        if &sha256_hex(&data) != sha256 {
                            return Err(damaged(record, path));
                        }
                    }
                    let like = self.like(path);
                    self.set(from, Slot::Bytes { data, like });
                    self.set(path, Slot::Absent);
                } else if let Some(slot) = archived(self, &file.from_trashed_to, from)? {
                    self.set(from, slot);
                    self.set(path, Slot::Absent);
                } else {
                    self.move_entry(path, from);
                }
                if let Some(slot) = archived(self, &file.trashed_to, path)? {
                    self.set(path, slot);
                }
            }
        }
        self.made_parents.extend(file.created_dirs.iter().cloned());
        Ok(())
    }

    /// What the archive a change trashed the entry at `at` to holds, as a slot (or what stands
    /// in for it); what the state said beneath `at` goes: the entry from the archive replaces
    /// everything there (and what stood beneath a stand-in comes with it).
    fn archive(
        &mut self,
        record: &ChangeRecord,
        file: &FileRecord,
        archive: &Path,
        at: &Path,
    ) -> Result<Slot, ToolError> {
        let (slot, beneath, facts) = match self.ws.bucket().inspect(archive) {
            Err(TrashError::Io(e)) if datadir::is_untrusted(&e) => {
                return Err(ToolError::io(
                    &e,
                    "read the trash in",
                    self.ws.data_dir().path(),
                ))
            }
            Ok(meta) => (
                Slot::Archive {
                    archive: archive.to_owned(),
                    meta,
                },
                Vec::new(),
                Vec::new(),
            ),
            Err(_)
                if archive
                    .file_name()
                    .is_some_and(|n| self.stand_ins.contains_key(n)) =>
            {
                let stand_in = self
                    .stand_ins
                    .remove(archive.file_name().expect("checked"))
                    .expect("checked");
                (stand_in.slot, stand_in.beneath, stand_in.facts)
            }
            Err(_) => {
                return Err(not_undoable(
                    record,
                    &format!(
                        "the copy of {} it needs is no longer in the trash ({})",
                        file.path.shown(),
                        archive.shown()
                    ),
                ))
            }
        };
        self.slots.retain(|k, _| !(k.starts_with(at) && k != at));
        for (rest, inner) in beneath {
            self.slots.insert(at.join(rest), inner);
        }
        self.take_facts(at);
        for (rest, known) in facts {
            self.facts.insert(join(at, &rest), known);
        }
        Ok(slot)
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
        let sub = member.as_os_str().as_encoded_bytes();
        if members
            .get(sub)
            .is_none_or(|m| m.kind != EntryKind::Directory)
        {
            return Ok(());
        }
        let emptied = members.children(sub).iter().all(|name| {
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
        Ok(members.get(member.as_os_str().as_encoded_bytes()).cloned())
    }

    /// The digest of the tree the archive at `path` keeps with the slots set beneath `path` in
    /// its place; `None` when nothing is set beneath (the archive's own digest holds).
    fn tree_digest(&mut self, path: &Path, archive: &Path) -> Result<Option<String>, Difference> {
        let beneath = self.beneath(path);
        if beneath.is_empty() {
            return Ok(None);
        }
        let mut overrides: BTreeMap<Vec<u8>, Override> = BTreeMap::new();
        let one_at_a_time = || Difference::InsideArchive(path.to_owned());
        for (rest, slot) in beneath {
            let under_a_leaf =
                rest.ancestors().skip(1).any(|above| {
                    overrides.get(above.as_os_str().as_encoded_bytes()).is_some_and(|o| {
                    matches!(o, Override::Gone)
                        || matches!(o, Override::Entry { kind, .. } if *kind != EntryKind::Directory)
                })
                });
            if under_a_leaf {
                continue;
            }
            let over = match slot {
                Slot::InArchive {
                    archive: from,
                    member,
                } if from == archive && member == rest => continue,
                Slot::Absent => Override::Gone,
                Slot::Bytes { data, like } => Override::Entry {
                    kind: EntryKind::File,
                    mode: self.mode_of(&like),
                    content: sha256_bytes(&data),
                },
                Slot::NewDir { mode } => Override::Entry {
                    kind: EntryKind::Directory,
                    mode,
                    content: [0; 32],
                },
                Slot::Archive { meta, .. } if meta.kind != EntryKind::Directory => {
                    Override::Entry {
                        kind: meta.kind,
                        mode: meta.mode,
                        content: from_hex(&meta.original_sha256).ok_or_else(one_at_a_time)?,
                    }
                }
                _ => return Err(one_at_a_time()),
            };
            overrides.insert(rest.as_os_str().as_encoded_bytes().to_vec(), over);
        }
        let members = self.members_of(archive)?;
        members
            .digest_with(&overrides)
            .map(Some)
            .ok_or_else(one_at_a_time)
    }

    /// The permission bits a file made from bytes gets.
    fn mode_of(&mut self, like: &Like) -> u32 {
        match like {
            Like::Mode(mode) => *mode,
            Like::Disk(at) => self
                .real(at)
                .ok()
                .flatten()
                .map_or(0o644, |r| r.stat.permissions()),
        }
    }

    /// The bytes `path` holds in the virtual state, with the stored delta applied.
    fn apply_delta(
        &mut self,
        record: &ChangeRecord,
        file: &FileRecord,
        path: &Path,
        delta: &str,
        history: &History,
    ) -> Result<Vec<u8>, ToolError> {
        let stored = history.read_delta(delta).map_err(|e| {
            if datadir::is_untrusted(&e) {
                return ToolError::io(&e, "read the history in", self.ws.data_dir().path());
            }
            if e.kind() == std::io::ErrorKind::InvalidData {
                return damaged(record, path);
            }
            not_undoable(
                record,
                &format!(
                    "what takes {} back is missing from the history",
                    file.path.shown()
                ),
            )
        })?;
        let delta = Delta::decode(&stored).map_err(|_| damaged(record, path))?;
        let now = self.content(record, path)?;
        delta.apply(&now).map_err(|_| damaged(record, path))
    }

    /// The bytes of the file at `path` in the virtual state.
    fn content(&mut self, record: &ChangeRecord, path: &Path) -> Result<Vec<u8>, ToolError> {
        match self.slot(path) {
            Slot::Disk(at) => disk::read(self.ws, &at, MAX_CONTENT),
            Slot::Bytes { data, .. } => Ok(data),
            Slot::Archive { archive, .. } => {
                match self.ws.bucket().read_file(&archive, MAX_CONTENT) {
                    Ok(Some((_, data))) => Ok(data),
                    _ => Err(damaged(record, path)),
                }
            }
            Slot::InArchive { archive, member } => {
                let found = self.member(&archive, &member).ok().flatten();
                let Some(m) = found.filter(|m| m.kind == EntryKind::File) else {
                    return Err(damaged(record, path));
                };
                let sub = m
                    .first
                    .clone()
                    .unwrap_or_else(|| member.as_os_str().as_encoded_bytes().to_vec());
                match self
                    .ws
                    .bucket()
                    .read_member(&archive, &sub, &m.content, MAX_CONTENT)
                {
                    Ok(Some(data)) => Ok(data),
                    _ => Err(damaged(record, path)),
                }
            }
            Slot::Absent | Slot::NewDir { .. } => Err(damaged(record, path)),
        }
    }

    /// What a file made from bytes at `path` takes its mode from: what is there in the virtual
    /// state.
    fn like(&mut self, path: &Path) -> Like {
        match self.slot(path) {
            Slot::Disk(at) => Like::Disk(at),
            Slot::Bytes { like, .. } => like,
            Slot::Archive { meta, .. } => Like::Mode(meta.mode),
            Slot::InArchive { archive, member } => match self.member(&archive, &member) {
                Ok(Some(m)) => Like::Mode(m.mode),
                _ => Like::Mode(0o644),
            },
            Slot::Absent | Slot::NewDir { .. } => Like::Mode(0o644),
        }
    }
}

/// What a change left at a path.
enum Expected {
    Nothing,
    Entry {
        kind: Option<EntryKind>,
        sha256: Option<String>,
        facts: Option<EntryFacts>,
    },
}

fn sha256_bytes(data: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(data).into()
}

/// 64 hex digits as 32 bytes.
fn from_hex(hex: &str) -> Option<[u8; 32]> {
    let mut out = [0u8; 32];
    if hex.len() != 64 {
        return None;
    }
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
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
