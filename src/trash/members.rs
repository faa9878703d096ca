//! What a directory archive holds, entry by entry, without extracting it: an undo that takes
//! back changes made inside a tree the same session later removed checks each inner path
//! against the archive, and reads an inner file's bytes from it.
//!
//! The archive is read as a stream (one entry at a time, content hashed as it passes) with the
//! same checks a restore makes on every entry (`entry.rs`); the whole tree must hash to the
//! digest its metadata records, so what the index says is what a restore would extract. Memory
//! is one small record per entry, never file content.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read};

use sha2::{Digest, Sha256};

use super::digest::TreeDigest;
use super::entry::{self, Decoding};
use super::error::TrashError;
use super::metadata::Metadata;
use super::naming;
use super::read;
use crate::paths::EntryKind;

/// One entry of an archived tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub kind: EntryKind,
    /// Permission bits (0 for a symlink).
    pub mode: u32,
    /// SHA-256 of a file's bytes or a link's target (zeros for a directory).
    pub content: [u8; 32],
    /// Another name of the file first archived at this path (a hard link).
    pub first: Option<Vec<u8>>,
}

impl Member {
    /// Lowercase hex of [`Member::content`].
    pub fn sha256(&self) -> String {
        naming::hex(&self.content)
    }
}

/// What stands at a path of the tree instead of what the archive holds there (for
/// [`Members::digest_with`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Override {
    /// Nothing (the member, and what is beneath it, is not there).
    Gone,
    /// An entry of this kind, mode and content instead of the member and what is beneath it.
    Entry {
        kind: EntryKind,
        mode: u32,
        content: [u8; 32],
    },
}

/// Every entry of a directory archive, by its `/`-joined path below the archived root (`""` is
/// the root).
#[derive(Debug, Clone, Default)]
pub struct Members {
    entries: BTreeMap<Vec<u8>, Member>,
}

impl Members {
    /// The entry at `sub`, if the archive holds one.
    pub fn get(&self, sub: &[u8]) -> Option<&Member> {
        self.entries.get(sub)
    }

    /// The names directly inside the directory at `sub`.
    pub fn children(&self, sub: &[u8]) -> Vec<Vec<u8>> {
        self.entries
            .keys()
            .filter(|path| is_beneath(path, sub))
            .map(|path| {
                let rest = if sub.is_empty() {
                    &path[..]
                } else {
                    &path[sub.len() + 1..]
                };
                rest.to_vec()
            })
            .filter(|rest| !rest.contains(&b'/'))
            .collect()
    }

    /// The tree digest (see `digest.rs`) of the archived tree with `overrides` in place, or
    /// `None` when an override touches a name that shares its file with another (hard links).
    pub fn digest_with(&self, overrides: &BTreeMap<Vec<u8>, Override>) -> Option<String> {
        let covered = |path: &[u8]| {
            overrides
                .keys()
                .any(|at| path == at.as_slice() || is_beneath(path, at))
        };
        let mut digest = TreeDigest::default();
        for (path, member) in &self.entries {
            let linked = self.entries.iter().any(|(other, m)| {
                m.first.as_deref() == Some(path) && covered(other) != covered(path)
            });
            if linked {
                return None;
            }
            if covered(path) {
                continue;
            }
            match &member.first {
                Some(first) if covered(first) => return None,
                Some(first) => digest.add_hard_link(path, member.mode, first),
                None => digest.add(path, member.kind, member.mode, member.content),
            }
        }
        for (path, over) in overrides {
            if let Override::Entry {
                kind,
                mode,
                content,
            } = over
            {
                digest.add(path, *kind, *mode, *content);
            }
        }
        Some(naming::hex(&digest.finish()))
    }
}

/// The tree digest of an empty directory with permission bits `mode`.
pub fn empty_tree_digest(mode: u32) -> String {
    let mut digest = TreeDigest::default();
    digest.add(b"", EntryKind::Directory, mode, [0; 32]);
    naming::hex(&digest.finish())
}

impl FromIterator<(Vec<u8>, Member)> for Members {
    fn from_iter<I: IntoIterator<Item = (Vec<u8>, Member)>>(iter: I) -> Self {
        Self {
            entries: iter.into_iter().collect(),
        }
    }
}

/// Whether `path` lies strictly beneath `dir` (both `/`-joined; `""` is the root).
fn is_beneath(path: &[u8], dir: &[u8]) -> bool {
    if dir.is_empty() {
        return !path.is_empty();
    }
    path.len() > dir.len() && path.starts_with(dir) && path[dir.len()] == b'/'
}

/// Reads the directory archive open as `file` into an index of its entries, verified against
/// its metadata (digest, size, file count).
pub(crate) fn index(file: File) -> Result<(Metadata, Members), TrashError> {
    let mut archive = read::from_file(file);
    let mut entries = archive.entries().map_err(read::unreadable)?;
    let meta = read::read_metadata_entry(&mut entries)?;
    if meta.kind != EntryKind::Directory {
        return Err(TrashError::corrupt("it does not hold a directory"));
    }
    let mut members = Members::default();
    let mut digest = TreeDigest::default();
    let (mut size, mut files) = (0u64, 0u64);
    let mut buf = vec![0u8; 64 << 10];
    for entry in entries {
        let mut entry = entry.map_err(read::unreadable)?;
        let info = entry::entry_info(&mut entry, &meta.relative_path)?;
        if members.entries.contains_key(&info.sub) {
            return Err(TrashError::corrupt("an entry appears twice"));
        }
        let member = match (info.kind, info.hard_link) {
            (EntryKind::File, Some(first)) => {
                let Some(target) = members.entries.get(&first).filter(|m| m.first.is_none()) else {
                    return Err(TrashError::corrupt(
                        "a hard link points at no file archived before it",
                    ));
                };
                if target.kind != EntryKind::File {
                    return Err(TrashError::corrupt("a hard link points at no file"));
                }
                digest.add_hard_link(&info.sub, info.mode, &first);
                files += 1;
                Member {
                    kind: EntryKind::File,
                    mode: target.mode,
                    content: target.content,
                    first: Some(first),
                }
            }
            (EntryKind::File, None) => {
                let mut hasher = Sha256::new();
                let mut source = Decoding(&mut entry);
                loop {
                    let n = source.read(&mut buf).map_err(corrupt_or_io)?;
                    if n == 0 {
                        break;
                    }
                    hasher.update(&buf[..n]);
                    size += n as u64;
                }
                let content: [u8; 32] = hasher.finalize().into();
                digest.add(&info.sub, EntryKind::File, info.mode, content);
                files += 1;
                member(EntryKind::File, info.mode, content)
            }
            (EntryKind::Directory, _) => {
                digest.add(&info.sub, EntryKind::Directory, info.mode, [0; 32]);
                member(EntryKind::Directory, info.mode, [0; 32])
            }
            (EntryKind::Symlink, _) => {
                let link = info.link.unwrap_or_default();
                let content: [u8; 32] = Sha256::digest(&link).into();
                digest.add(&info.sub, EntryKind::Symlink, 0, content);
                member(EntryKind::Symlink, 0, content)
            }
            (EntryKind::Special, _) => {
                return Err(TrashError::corrupt("it holds a device or FIFO entry"))
            }
        };
        members.entries.insert(info.sub, member);
    }
    let found = naming::hex(&digest.finish());
    if found != meta.original_sha256 || size != meta.size || meta.file_count != Some(files) {
        return Err(TrashError::corrupt(
            "its content does not match its metadata",
        ));
    }
    Ok((meta, members))
}

/// The bytes of the file at `sub` in the directory archive open as `file` (a hard link's are its
/// first name's), at most `max` (else `None`); `expected` is its SHA-256 as indexed.
pub(crate) fn read_member(
    file: File,
    sub: &[u8],
    expected: &[u8; 32],
    max: u64,
) -> Result<Option<Vec<u8>>, TrashError> {
    let mut archive = read::from_file(file);
    let mut entries = archive.entries().map_err(read::unreadable)?;
    let meta = read::read_metadata_entry(&mut entries)?;
    for entry in entries {
        let mut entry = entry.map_err(read::unreadable)?;
        let info = entry::entry_info(&mut entry, &meta.relative_path)?;
        if info.sub != sub || info.kind != EntryKind::File || info.hard_link.is_some() {
            continue;
        }
        if entry.size() > max {
            return Ok(None);
        }
        let mut bytes = Vec::with_capacity(entry.size() as usize);
        Decoding(&mut entry)
            .take(max + 1)
            .read_to_end(&mut bytes)
            .map_err(corrupt_or_io)?;
        if Sha256::digest(&bytes).as_slice() != expected {
            return Err(TrashError::corrupt(
                "a file's content does not match the archive's digest",
            ));
        }
        return Ok(Some(bytes));
    }
    Err(TrashError::corrupt(
        "it does not hold the file it was read for",
    ))
}

fn member(kind: EntryKind, mode: u32, content: [u8; 32]) -> Member {
    Member {
        kind,
        mode,
        content,
        first: None,
    }
}

fn corrupt_or_io(e: io::Error) -> TrashError {
    TrashError::from(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(content: u8) -> Member {
        member(EntryKind::File, 0o644, [content; 32])
    }

    fn members(entries: &[(&str, Member)]) -> Members {
        Members {
            entries: entries
                .iter()
                .map(|(p, m)| (p.as_bytes().to_vec(), m.clone()))
                .collect(),
        }
    }

    #[test]
    fn a_digest_with_overrides_is_the_digest_of_the_tree_they_describe() {
        let dir = member(EntryKind::Directory, 0o755, [0; 32]);
        let archived = members(&[
            ("", dir.clone()),
            ("a", file(1)),
            ("d", dir.clone()),
            ("d/x", file(2)),
        ]);
        // The tree the overrides describe: a changed, d/x gone, n added.
        let wanted = members(&[
            ("", dir.clone()),
            ("a", file(9)),
            ("d", dir),
            ("n", file(3)),
        ]);
        let overrides: BTreeMap<Vec<u8>, Override> =
            [("a", Some(file(9))), ("d/x", None), ("n", Some(file(3)))]
                .into_iter()
                .map(|(p, m)| {
                    let over = match m {
                        Some(m) => Override::Entry {
                            kind: m.kind,
                            mode: m.mode,
                            content: m.content,
                        },
                        None => Override::Gone,
                    };
                    (p.as_bytes().to_vec(), over)
                })
                .collect();
        assert_eq!(
            archived.digest_with(&overrides),
            wanted.digest_with(&BTreeMap::new())
        );
        assert_ne!(
            archived.digest_with(&BTreeMap::new()),
            wanted.digest_with(&BTreeMap::new())
        );
    }

    #[test]
    fn an_override_of_one_name_of_a_linked_file_is_not_digested() {
        let dir = member(EntryKind::Directory, 0o755, [0; 32]);
        let mut link = file(1);
        link.first = Some(b"a".to_vec());
        let archived = members(&[("", dir), ("a", file(1)), ("b", link)]);
        let gone: BTreeMap<Vec<u8>, Override> = [(b"a".to_vec(), Override::Gone)].into();
        assert_eq!(archived.digest_with(&gone), None);
    }
}
