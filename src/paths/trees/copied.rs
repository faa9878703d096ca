//! What a copy read of its source ([`Copied`]), and the check that the source is still that
//! before a move across file systems removes it.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io;
use std::path::Path;

use crate::paths::fsops;
use crate::paths::{AsDir, BorrowedDir, EntryKind, Stat, Version};

/// The version of every source entry a copy read, keyed by device and inode, so that removing the
/// source afterwards can leave alone whatever changed since: its size and modification time (to
/// the nanosecond), which every write changes. Not its change time: removing one name of a file
/// with several changes that, and the other names are still the copied file.
#[derive(Debug, Default)]
pub struct Copied {
    versions: HashMap<(u64, u64), Version>,
    /// What the copy holds beneath its root (the root itself not counted).
    pub counts: CopyCounts,
}

/// The entries a copy made beneath its root, by kind (each name of a file with several counts).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CopyCounts {
    pub files: u64,
    pub dirs: u64,
    pub links: u64,
}

impl Copied {
    /// Whether `stat` is an entry this copy read, as it was when read.
    pub fn unchanged(&self, stat: &Stat) -> bool {
        self.versions.get(&stat.identity()) == Some(&stat.version())
    }

    /// Whether the entry `identity` (device, inode) is one this copy read.
    pub fn read(&self, identity: (u64, u64)) -> bool {
        self.versions.contains_key(&identity)
    }

    pub(super) fn count(&mut self, kind: EntryKind, relative: &Path) {
        if relative.as_os_str().is_empty() {
            return;
        }
        match kind {
            EntryKind::File => self.counts.files += 1,
            EntryKind::Directory => self.counts.dirs += 1,
            EntryKind::Symlink => self.counts.links += 1,
            EntryKind::Special => {}
        }
    }

    pub(super) fn record(&mut self, stat: &Stat) {
        self.versions.insert(stat.identity(), stat.version());
    }
}

/// Whether the entry `name` in `dir` is still, entry for entry, what `copied` read of it: every
/// entry one it read and as it was then, none that appeared since, none gone (a mount point met
/// inside is not). What a move across file systems checks of its source, set aside, before the
/// commit point.
pub fn unchanged_since_copied(dir: BorrowedDir<'_>, name: &OsStr, copied: &Copied) -> bool {
    let beneath = copied.counts.files + copied.counts.dirs + copied.counts.links;
    matches!(entries_as_copied(dir, name, copied), Ok(Some(seen)) if seen == beneath)
}

/// How many entries beneath `name` in `dir` there are, all as `copied` read them; `None` as
/// soon as one is not.
fn entries_as_copied(
    dir: BorrowedDir<'_>,
    name: &OsStr,
    copied: &Copied,
) -> io::Result<Option<u64>> {
    let as_copied = |dir: BorrowedDir<'_>, name: &OsStr| -> io::Result<Option<Stat>> {
        Ok(fsops::lstat_at(dir, name)?.filter(|stat| copied.unchanged(stat)))
    };
    let Some(root) = as_copied(dir, name)? else {
        return Ok(None);
    };
    if EntryKind::of(&root) != EntryKind::Directory {
        return Ok(Some(0));
    }
    let mut seen = 0u64;
    let mut pending = vec![fsops::open_subdir(dir, name)?];
    while let Some(here) = pending.pop() {
        let mount = fsops::DirMount::of(here.as_dir())?;
        for child in fsops::list_names(here.as_dir())? {
            let Some(stat) = as_copied(here.as_dir(), &child)? else {
                return Ok(None);
            };
            if mount.holds_mount_point(here.as_dir(), &child, fsops::identity(&stat).0)? {
                return Ok(None);
            }
            seen += 1;
            if EntryKind::of(&stat) == EntryKind::Directory {
                let sub = fsops::open_subdir(here.as_dir(), &child)?;
                if fsops::fstat(&sub)?.identity() != stat.identity() {
                    return Ok(None);
                }
                pending.push(sub);
            }
        }
    }
    Ok(Some(seen))
}
