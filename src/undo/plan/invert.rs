//! Taking a change back in the virtual state: what was at each path before it (an archive, or
//! what stands in for one a restore consumed; older bytes through a stored delta; an empty
//! directory; an entry moved back).

use std::path::{Path, PathBuf};

use super::super::disk;
use super::super::refusal::{damaged, describe, not_undoable};
use super::super::slot::{Like, Slot};
use super::{join, Planner, StandIn};
use crate::change::Action;
use crate::datadir;
use crate::error::ToolError;
use crate::hashing::sha256_hex;
use crate::history::{ChangeRecord, FileRecord, History};
use crate::paths::shown::Shown;
use crate::paths::EntryKind;
use crate::text::delta::Delta;
use crate::trash::{member_path_bytes, TrashError};

/// How much of a file undo reads into memory to apply a delta (edits and appends are bounded
/// far below this by their own limits).
const MAX_CONTENT: u64 = 1 << 30;

impl Planner<'_> {
    /// Sets what was at `file`'s path (and a move's source) before `record`; the parent
    /// directories it made are removed at the end if left empty.
    pub(super) fn invert(
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

    /// The bytes `path` holds in the virtual state, with the stored delta applied.
    fn apply_delta(
        &mut self,
        record: &ChangeRecord,
        file: &FileRecord,
        path: &Path,
        delta: &str,
        history: &History,
    ) -> Result<Vec<u8>, ToolError> {
        let stored = history.read_delta(delta, file.delta_range).map_err(|e| {
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
                    .unwrap_or_else(|| member_path_bytes(&member));
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
