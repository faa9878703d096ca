//! `removal` records (see the journal's docs): removing an entry entry by entry once it is
//! archived or copied, and recovery's finishing of one a kill cut short.

use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};

use super::{open_recorded_dir, Durability, Journal, Record, Recovered, RemovalRecord};
use crate::paths::{fsops, trees, Sandbox};
use crate::paths::{AsDir, BorrowedDir};

impl Journal {
    /// Runs `work`, which removes the entry `name` of `dir` (canonical path `dir_path`) entry
    /// by entry after it was archived or copied, under a removal record: should the process be
    /// killed meanwhile, the next `Workspace` removes what it left under its temp names.
    pub fn with_removal<T>(
        &self,
        dir_path: &Path,
        dir: BorrowedDir<'_>,
        name: &OsStr,
        work: impl FnOnce() -> T,
    ) -> T {
        let entry = fsops::fstat(dir).ok().and_then(|stat| {
            let (dir_dev, dir_ino) = fsops::identity(&stat);
            let record = Record::Removal(RemovalRecord {
                dir: dir_path.to_owned(),
                dir_dev,
                dir_ino,
                name: PathBuf::from(name),
                pid: std::process::id(),
            });
            self.write(&record, Durability::PageCache).ok()
        });
        let result = work();
        if let Some(entry) = entry {
            entry.finish();
        }
        result
    }
}

/// Finishes a removal a kill cut short: what its process left under its temp names — in the
/// recorded directory (the entry itself, set aside) and anywhere in what is left of the entry's
/// tree — is removed (it was archived or copied before it was set aside). Nothing else is
/// touched; links are never followed.
pub fn finish_removal(record: &RemovalRecord, sandbox: &Sandbox) -> io::Result<Recovered> {
    let Some(dir) = open_recorded_dir(sandbox, &record.dir, record.dir_dev, record.dir_ino)? else {
        return Ok(Recovered::LeftAlone);
    };
    let mut removed = false;
    let mut prefix = b".".to_vec();
    prefix.extend_from_slice(record.name.as_os_str().as_encoded_bytes());
    prefix.push(b'.');
    for found in fsops::list_names(dir.as_dir())? {
        let ours = fsops::is_temp_name_of(&found, record.pid)
            && found.as_encoded_bytes().starts_with(&prefix);
        if ours && trees::remove_tree_at(dir.as_dir(), &found, trees::Removal::OWN_TEMP).is_ok() {
            removed = true;
        }
    }
    if let Ok(tree) = fsops::open_subdir(dir.as_dir(), record.name.as_os_str()) {
        removed |= sweep_temps(tree, record.pid, 0);
    }
    Ok(if removed {
        Recovered::TempRemoved
    } else {
        Recovered::LeftAlone
    })
}

/// Removes the temp entries process `pid` left in `dir` and the directories beneath it (never
/// through a link); whether any went.
fn sweep_temps(dir: crate::paths::Dir, pid: u32, depth: usize) -> bool {
    let Ok(names) = fsops::list_names(dir.as_dir()) else {
        return false;
    };
    let mut removed = false;
    for name in names {
        if fsops::is_temp_name_of(&name, pid) {
            removed |= trees::remove_tree_at(dir.as_dir(), &name, trees::Removal::OWN_TEMP).is_ok();
        } else if depth < 4096 {
            if let Ok(sub) = fsops::open_subdir(dir.as_dir(), &name) {
                removed |= sweep_temps(sub, pid, depth + 1);
            }
        }
    }
    removed
}
