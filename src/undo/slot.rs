//! The virtual state an undo is planned over: what each path holds ([`Slot`]), where a file
//! made from bytes takes its mode from ([`Like`]), and where a path's directory is when the
//! steps run ([`Location`]: on disk, or inside a tree staged for a path above it).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::trash::Metadata;

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
    /// The entry at `member` (a relative path, empty for the root) inside the directory archive
    /// `archive` keeps: a path beneath a tree that comes back from the trash.
    InArchive { archive: PathBuf, member: PathBuf },
}

/// Where a file made from bytes takes its mode (and owner) from.
#[derive(Debug, Clone)]
pub enum Like {
    /// The file on disk now at this real path.
    Disk(PathBuf),
    /// These permission bits.
    Mode(u32),
}

/// Where a directory a path goes into is, when the steps run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A directory on disk now, at this path.
    Real(PathBuf),
    /// Inside the tree staged for the path `top`, at `rel` beneath it.
    Staged { top: PathBuf, rel: PathBuf },
}

/// The directory `path` is in.
pub fn parent_of(path: &Path) -> &Path {
    path.parent().unwrap_or(Path::new("/"))
}

/// The real path `path` takes in `parent`, when that is a directory on disk.
pub fn physical(parent: &Location, path: &Path) -> Option<PathBuf> {
    match (parent, path.file_name()) {
        (Location::Real(dir), Some(name)) => Some(dir.join(name)),
        _ => None,
    }
}

/// Where `path` physically goes when the steps run, if its directory is on disk (for planning:
/// what is there now must be known).
pub fn physical_path(slots: &BTreeMap<PathBuf, Slot>, path: &Path) -> Option<PathBuf> {
    physical(&location(slots, parent_of(path)), path)
}

/// Where the directory `dir` is when the steps run.
pub fn location(slots: &BTreeMap<PathBuf, Slot>, dir: &Path) -> Location {
    match slots.get(dir) {
        Some(Slot::Disk(at)) => return Location::Real(at.clone()),
        Some(Slot::Archive { .. } | Slot::NewDir { .. }) => {
            return Location::Staged {
                top: dir.to_owned(),
                rel: PathBuf::new(),
            }
        }
        // A directory of a tree that comes back from the trash, wanted out of that tree: it is
        // in the tree as it is staged (and moves out once the tree is placed).
        Some(Slot::InArchive { archive, member }) => {
            let top = slots.iter().find_map(|(top, slot)| match slot {
                Slot::Archive { archive: a, .. } if a == archive => Some(top),
                _ => None,
            });
            if let Some(top) = top.filter(|top| !dir.starts_with(top)) {
                return Location::Staged {
                    top: top.clone(),
                    rel: member.clone(),
                };
            }
        }
        _ => {}
    }
    match (dir.parent(), dir.file_name()) {
        (Some(parent), Some(name)) => match location(slots, parent) {
            Location::Real(at) => Location::Real(at.join(name)),
            Location::Staged { top, rel } => Location::Staged {
                top,
                rel: rel.join(name),
            },
        },
        _ => Location::Real(dir.to_owned()),
    }
}
