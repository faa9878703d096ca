//! Planning an undo over a virtual state of the paths involved: the changes to take back are
//! walked newest first; each is checked against the state its newer ones leave (it must find
//! every path exactly as it left it), then its inverse is applied to that state. Nothing on disk
//! changes here; `apply` turns the final state into one journaled commit.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::disk::{self, Real};
use super::select::Target;
use crate::change::{Action, EntryFacts, EntryKindName};
use crate::error::{ErrorCode, ToolError};
use crate::hashing::sha256_hex;
use crate::history::{ChangeRecord, FileRecord, History};
use crate::paths::fsops::EntryKind;
use crate::paths::shown::Shown;
use crate::text::delta::Delta;
use crate::trash::{Kind, Metadata};
use crate::workspace::Workspace;

/// What a path holds in the virtual state.
#[derive(Debug, Clone)]
pub enum Slot {
    /// The entry on disk now at this real path (its own, or one that moves here).
    Disk(PathBuf),
    /// Nothing.
    Absent,
    /// The entry an archive in the trash keeps.
    Archive { archive: PathBuf, meta: Metadata },
    /// A file with these bytes, its mode and owner like `like`.
    Bytes { data: Vec<u8>, like: Like },
    /// An empty directory with this mode.
    NewDir { mode: u32 },
    /// Inside the tree the archive a directory above (`top`) comes back from keeps. Not
    /// followed into the archive: such a plan is refused (undo those changes one at a time).
    InArchive { top: PathBuf },
}

/// Where a file made from bytes takes its mode (and owner) from.
#[derive(Debug, Clone)]
pub enum Like {
    /// The file on disk now at this real path.
    Disk(PathBuf),
    /// These permission bits.
    Mode(u32),
}

/// The outcome of planning: the final state of every path involved, and what is known of the
/// disk now.
pub struct Plan {
    pub slots: BTreeMap<PathBuf, Slot>,
    /// The entries on disk now, at every path involved (and at the real paths slots name).
    pub reals: BTreeMap<PathBuf, Option<Real>>,
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
    /// each: the entry the restore put in place, as the virtual state had it.
    stand_ins: std::collections::HashMap<OsString, Slot>,
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
            stand_ins: std::collections::HashMap::new(),
        }
    }

    /// Takes back `record` in the virtual state, its paths in the reverse of the order they
    /// changed in: checks each is as the change left it, then sets what was there before (so a
    /// path one step of the change emptied and a later one filled is checked as filled, then as
    /// empty).
    pub fn take_back(&mut self, target: &Target, history: &History) -> Result<(), ToolError> {
        let record = &target.record;
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
            if !matches!(self.slot(&dir), Slot::Disk(at) if at == dir) {
                continue;
            }
            if !self
                .real(&dir)?
                .is_some_and(|r| r.kind == EntryKind::Directory)
            {
                continue;
            }
            let names = disk::list(self.ws, &dir)?;
            let something_comes_back = self
                .slots
                .iter()
                .any(|(k, v)| k.starts_with(&dir) && k != &dir && !matches!(v, Slot::Absent));
            if !something_comes_back
                && names
                    .iter()
                    .all(|name| matches!(self.slot(&dir.join(name)), Slot::Absent))
            {
                self.set(&dir, Slot::Absent);
            }
        }
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
                        &format!(
                            "it is not empty: it holds {}, which no change being undone made",
                            shown_name(&name)
                        ),
                    ));
                }
            }
        }
        if let Some((path, Slot::InArchive { top })) = self
            .slots
            .iter()
            .find(|(_, slot)| matches!(slot, Slot::InArchive { .. }))
        {
            return Err(ToolError::new(
                ErrorCode::Conflict,
                format!(
                    "cannot undo these changes in one step: {} {}. Nothing was undone",
                    path.shown(),
                    inside_archive(top)
                ),
            ));
        }
        // Every real path a slot names, or where something goes, is known.
        let physical: Vec<PathBuf> = self
            .slots
            .keys()
            .filter_map(|path| super::effects::physical_path(&self.slots, path))
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
        })
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
                Slot::Archive { meta, .. } if meta.kind == Kind::Directory => Slot::InArchive {
                    top: above.to_owned(),
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
        self.set(to, moved);
        self.set(from, Slot::Absent);
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
            .any(|above| target.put_back.contains_key(above));
        let recorded = target.put_back.get(&file.path).copied().or(file.entry);
        let kind = recorded.map(|f| f.kind);
        let facts =
            recorded.filter(|_| !inside_put_back || target.put_back.contains_key(&file.path));
        let expected = match file.action {
            Action::Deleted | Action::Removed => Expected::Nothing,
            Action::Created => Expected::Entry {
                kind: Some(EntryKindName::Directory),
                sha256: None,
                facts,
            },
            Action::Added | Action::Modified | Action::Moved => Expected::Entry {
                kind,
                sha256: file.sha256_after.clone(),
                facts,
            },
        };
        if let Err(why) = self.matches(&file.path, &expected) {
            return Err(conflict(&file.path, &change, &why));
        }
        if let (Action::Moved, Some(from)) = (file.action, &file.from) {
            if let Err(why) = self.matches(from, &Expected::Nothing) {
                return Err(conflict(from, &change, &why));
            }
        }
        Ok(())
    }

    /// Whether the virtual state at `path` is `expected`; else what differs.
    fn matches(&mut self, path: &Path, expected: &Expected) -> Result<(), String> {
        let slot = self.slot(path);
        let (kind, sha256, facts) = match expected {
            Expected::Nothing => {
                return match slot {
                    Slot::Absent => Ok(()),
                    Slot::Disk(at) => match self.real(&at).map_err(|e| e.message)? {
                        None => Ok(()),
                        Some(real) => Err(format!("{} is there now", real.kind_name())),
                    },
                    Slot::InArchive { top } => Err(inside_archive(&top)),
                    _ => Err("an entry is there now".to_owned()),
                }
            }
            Expected::Entry {
                kind,
                sha256,
                facts,
            } => (*kind, sha256.as_deref(), *facts),
        };
        match slot {
            Slot::Absent => Err("it no longer exists".to_owned()),
            Slot::InArchive { top } => Err(inside_archive(&top)),
            Slot::Disk(at) => {
                let Some(real) = self.real(&at).map_err(|e| e.message)? else {
                    return Err("it no longer exists".to_owned());
                };
                if let Some(kind) = kind {
                    if real.kind_fact() != kind {
                        return Err(format!("it is now a {}", real.kind_name()));
                    }
                }
                if let Some(facts) = facts {
                    if (real.stat.dev, real.stat.ino) != (facts.dev, facts.ino) {
                        return Err(format!(
                            "it was replaced by another {} since",
                            real.kind_name()
                        ));
                    }
                }
                if let Some(sha256) = sha256 {
                    if real.kind == EntryKind::Directory {
                        // A tree is known by its kind and inode, not by its digest.
                        if kind != Some(EntryKindName::Directory) {
                            return Err("it is now a directory".to_owned());
                        }
                    } else {
                        let now = disk::sha256_of(self.ws, &at, &real).map_err(|e| e.message)?;
                        if now != sha256 {
                            return Err("its content changed since".to_owned());
                        }
                    }
                }
                Ok(())
            }
            Slot::Archive { meta, .. } => {
                if kind.is_some_and(|k| k != kind_of_archive(&meta)) {
                    return Err(format!("it is now a {}", archive_kind_name(&meta)));
                }
                match sha256 {
                    Some(sha256) if sha256 != meta.original_sha256 => {
                        Err("its content changed since".to_owned())
                    }
                    _ => Ok(()),
                }
            }
            Slot::Bytes { data, .. } => {
                if kind.is_some_and(|k| k != EntryKindName::File) {
                    return Err("it is now a file".to_owned());
                }
                match sha256 {
                    Some(sha256) if sha256 != sha256_hex(&data) => {
                        Err("its content changed since".to_owned())
                    }
                    _ => Ok(()),
                }
            }
            Slot::NewDir { .. } => match (kind, sha256) {
                (Some(EntryKindName::Directory) | None, None) => Ok(()),
                _ => Err("it is now a directory".to_owned()),
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
            self.stand_ins.insert(consumed.to_owned(), self.slot(path));
        }
        let archived = |planner: &mut Self, archive: &Option<PathBuf>| match archive {
            Some(archive) => planner.archive(record, file, archive).map(Some),
            None => Ok(None),
        };
        match file.action {
            Action::Added => {
                let before = archived(self, &file.trashed_to)?.unwrap_or(Slot::Absent);
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
                } else if let Some(slot) = archived(self, &file.trashed_to)? {
                    slot
                } else {
                    return Err(not_undoable(record, "its previous content was not kept"));
                };
                self.set(path, before);
            }
            Action::Deleted => {
                let Some(before) = archived(self, &file.trashed_to)? else {
                    return Err(not_undoable(record, "no copy was kept"));
                };
                self.set(path, before);
            }
            Action::Removed => {
                let before = match (archived(self, &file.trashed_to)?, file.dir_mode) {
                    (Some(slot), _) => slot,
                    (None, Some(mode)) => Slot::NewDir { mode },
                    (None, None) => return Err(not_undoable(record, "no copy was kept")),
                };
                self.set(path, before);
            }
            Action::Created => {
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
                } else if let Some(slot) = archived(self, &file.from_trashed_to)? {
                    self.set(from, slot);
                    self.set(path, Slot::Absent);
                } else {
                    self.move_entry(path, from);
                }
                if let Some(slot) = archived(self, &file.trashed_to)? {
                    self.set(path, slot);
                }
            }
        }
        self.made_parents.extend(file.created_dirs.iter().cloned());
        Ok(())
    }

    fn archive(
        &mut self,
        record: &ChangeRecord,
        file: &FileRecord,
        archive: &Path,
    ) -> Result<Slot, ToolError> {
        match self.ws.bucket().inspect(archive) {
            Ok(meta) => Ok(Slot::Archive {
                archive: archive.to_owned(),
                meta,
            }),
            Err(_)
                if archive
                    .file_name()
                    .is_some_and(|n| self.stand_ins.contains_key(n)) =>
            {
                Ok(self
                    .stand_ins
                    .remove(archive.file_name().expect("checked"))
                    .expect("checked"))
            }
            Err(_) => Err(not_undoable(
                record,
                &format!(
                    "the copy of {} it needs is no longer in the trash ({})",
                    file.path.shown(),
                    archive.shown()
                ),
            )),
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
        let stored = history.read_delta(delta).map_err(|_| {
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
            Slot::Absent | Slot::NewDir { .. } | Slot::InArchive { .. } => {
                Err(damaged(record, path))
            }
        }
    }

    /// What a file made from bytes at `path` takes its mode from: what is there in the virtual
    /// state.
    fn like(&self, path: &Path) -> Like {
        match self.slot(path) {
            Slot::Disk(at) => Like::Disk(at),
            Slot::Bytes { like, .. } => like,
            Slot::Archive { meta, .. } => Like::Mode(meta.mode),
            Slot::Absent | Slot::NewDir { .. } | Slot::InArchive { .. } => Like::Mode(0o644),
        }
    }
}

/// What a change left at a path.
enum Expected {
    Nothing,
    Entry {
        kind: Option<EntryKindName>,
        sha256: Option<String>,
        facts: Option<EntryFacts>,
    },
}

fn kind_of_archive(meta: &Metadata) -> EntryKindName {
    match meta.kind {
        Kind::File => EntryKindName::File,
        Kind::Directory => EntryKindName::Directory,
        Kind::Symlink => EntryKindName::Symlink,
    }
}

fn archive_kind_name(meta: &Metadata) -> &'static str {
    match meta.kind {
        Kind::File => "file",
        Kind::Directory => "directory",
        Kind::Symlink => "symlink",
    }
}

/// Why a path inside a tree coming back from the trash is not followed.
fn inside_archive(top: &Path) -> String {
    format!(
        "it is inside {}, which this undo brings back from the trash whole; undo these changes one at a time",
        top.shown()
    )
}

fn shown_name(name: &OsString) -> String {
    Path::new(name).shown().into_owned()
}

/// `change <id> (<summary>)`.
pub fn describe(record: &ChangeRecord) -> String {
    format!("change {} ({})", record.id, record.summary)
}

/// A path not as the change left it.
pub fn conflict(path: &Path, change: &str, why: &str) -> ToolError {
    ToolError::new(
        ErrorCode::Conflict,
        format!(
            "cannot undo {change}: {} is not as it left it ({why}). Nothing was undone; undo the later changes to it first, or leave this change as it is",
            path.shown()
        ),
    )
}

fn not_undoable(record: &ChangeRecord, why: &str) -> ToolError {
    ToolError::new(
        ErrorCode::Conflict,
        format!(
            "{} cannot be undone: {why}. Nothing was undone",
            describe(record)
        ),
    )
}

fn damaged(record: &ChangeRecord, path: &Path) -> ToolError {
    ToolError::new(
        ErrorCode::IoError,
        format!(
            "cannot undo {}: what the history keeps to take {} back does not give back the recorded content. Nothing was undone",
            describe(record),
            path.shown()
        ),
    )
}
