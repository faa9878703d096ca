//! `temp` records (see the journal's docs): the temp entry of an atomic write, a move between
//! file systems or a restore, answered for until it is renamed into place or removed, and its
//! removal by recovery.

use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};

use super::{
    made_dirs, open_recorded_dir, Durability, Journal, MadeDirRecord, Record, WrittenRecord,
};
use super::{Recovered, TempRecord};
use crate::paths::{fsops, trees, Sandbox};
use crate::paths::{AsDir, BorrowedDir};

impl Journal {
    /// Records (not fsynced) that the temp file `temp` is about to be created in the directory
    /// `dir` (canonical path `dir_path`). `None` when the record cannot be written (read-only
    /// data dir): the write goes on without one.
    pub fn begin_temp(
        &self,
        dir_path: &Path,
        dir: BorrowedDir<'_>,
        temp: &OsStr,
    ) -> Option<WrittenRecord> {
        self.begin_temp_in_made_dirs(dir_path, dir, temp, Vec::new())
    }

    /// [`Journal::begin_temp`] for a temp file in directories made for it (`made_dirs`), which
    /// recovery removes too, if they are still empty.
    pub fn begin_temp_in_made_dirs(
        &self,
        dir_path: &Path,
        dir: BorrowedDir<'_>,
        temp: &OsStr,
        made_dirs: Vec<MadeDirRecord>,
    ) -> Option<WrittenRecord> {
        self.begin_temps(dir_path, dir, temp, None, made_dirs)
    }

    /// [`Journal::begin_temp_in_made_dirs`] for the temp entries numbered from `first` (a
    /// [`fsops::numbered_temp_name`]) up to the counter `counters_below`, when given: one
    /// record for every file a change stages in one directory.
    pub fn begin_temps(
        &self,
        dir_path: &Path,
        dir: BorrowedDir<'_>,
        first: &OsStr,
        counters_below: Option<u64>,
        made_dirs: Vec<MadeDirRecord>,
    ) -> Option<WrittenRecord> {
        let (dir_dev, dir_ino) = fsops::identity(&fsops::fstat(dir).ok()?);
        let record = Record::Temp(TempRecord {
            dir: dir_path.to_owned(),
            dir_dev,
            dir_ino,
            name: PathBuf::from(first),
            pid: std::process::id(),
            made_dirs,
            counters_below,
        });
        self.write(&record, Durability::PageCache).ok()
    }

    /// Runs `work`, which creates the temp file `temp` in `dir` (canonical path `dir_path`) and
    /// then renames it away or removes it, under a temp record (see [`Journal::begin_temp`]).
    /// The record is removed afterwards unless the temp file is still there (its removal failed:
    /// the next `Workspace` removes it).
    pub fn with_temp<T, E>(
        &self,
        dir_path: &Path,
        dir: BorrowedDir<'_>,
        temp: &OsStr,
        work: impl FnOnce() -> Result<T, E>,
    ) -> Result<T, E> {
        let entry = self.begin_temp(dir_path, dir, temp);
        let result = work();
        if let Some(entry) = entry {
            if result.is_ok() || matches!(fsops::lstat_at(dir, temp), Ok(None)) {
                entry.finish();
            }
        }
        result
    }
}

/// Removes the temp entry a crashed write, copy or restore left behind, if it is still ours: a
/// temp name (one component: an atomic write's or a cross-file-system move's temp file or tree,
/// or a restore's temp root) in the recorded directory, opened from `/` without following any
/// symlink and still the same dev and ino. It goes as our own temp trees do (see
/// [`trees::Removal::OWN_TEMP`]): never following a link, read-only directories made writable
/// first. `Err` only for an I/O failure worth retrying next time.
pub fn remove_temp(record: &TempRecord, sandbox: &Sandbox) -> io::Result<Recovered> {
    let name = record.name.as_os_str();
    let ours = crate::trash::is_restore_temp_name(name) || fsops::is_temp_name(name);
    if name.as_encoded_bytes().contains(&b'/') || !ours {
        return Ok(Recovered::LeftAlone);
    }
    let Some(dir) = open_recorded_dir(sandbox, &record.dir, record.dir_dev, record.dir_ino)? else {
        return Ok(Recovered::LeftAlone);
    };
    // What a checked removal of it moved to its doomed name is ours too (see `commit.rs`); a
    // block's names (and their doomed names, which keep their counters) are found by listing.
    let names = match record.counters_below {
        None => vec![name.to_owned(), fsops::doomed_name(name)],
        Some(_) => fsops::list_names(dir.as_dir())?
            .into_iter()
            .filter(|found| record.answers_for(&record.dir, found))
            .collect(),
    };
    let mut removed = false;
    for name in names {
        match trees::remove_tree_at(dir.as_dir(), &name, trees::Removal::OWN_TEMP) {
            Ok(_) => removed = true,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    made_dirs::remove_recorded(&record.made_dirs, sandbox);
    Ok(if removed {
        Recovered::TempRemoved
    } else {
        Recovered::LeftAlone
    })
}
