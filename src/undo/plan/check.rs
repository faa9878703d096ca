//! Checking a change being taken back against the virtual state its newer ones leave: every
//! path it touched must be as it left it (kind, identity, content; inside a tree in the trash,
//! by the archive's members).

use std::collections::BTreeMap;
use std::path::Path;

use super::super::disk;
use super::super::refusal::{conflict, describe, Difference};
use super::super::select::ChangeToUndo;
use super::super::slot::{Like, Slot};
use super::Planner;
use crate::change::{Action, EntryFacts};
use crate::error::ToolError;
use crate::hashing::sha256_hex;
use crate::history::FileRecord;
use crate::paths::EntryKind;
use crate::trash::{member_path_bytes, Override};

impl Planner<'_> {
    /// Checks that `file`'s path (and a move's source) is as `target` left it.
    pub(super) fn check_after(
        &mut self,
        target: &ChangeToUndo,
        file: &FileRecord,
    ) -> Result<(), ToolError> {
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
                    if real.stat.id() != facts.id {
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
                    overrides.get(&member_path_bytes(above)).is_some_and(|o| {
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
            overrides.insert(member_path_bytes(&rest), over);
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
