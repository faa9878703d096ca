//! Building entries for a plan before its commit: each is made under a journaled temp name
//! beside its place, so a kill before the commit record leaves nothing the next recovery does
//! not remove, and the commit only renames it into place.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::Path;

use crate::cancel::CancelToken;
use crate::journal::{Entry, Journal, MadeDirRecord};
use crate::paths::{fsops, trees};
use crate::trash::{Archived, TrashError};
use crate::workspace::Workspace;

/// An entry built under `aside`, with the temp record that answers for it until the commit
/// record takes over (`None` when the data directory could not record it).
pub struct Built {
    pub aside: OsString,
    pub temp: Option<Entry>,
}

/// Makes a directory beside `name` in `dir` (canonical path `dir_path`): `mode` exactly, or,
/// without one, as any new directory is made (0777 less the umask); then the directories
/// `below` inside it, each as a new directory is made.
pub fn new_dir(
    journal: &Journal,
    dir: BorrowedFd<'_>,
    dir_path: &Path,
    name: &OsStr,
    mode: Option<u32>,
    below: &Path,
) -> io::Result<Built> {
    let aside = fsops::temp_name(name);
    let temp = journal.begin_temp(dir_path, dir, &aside);
    let made = match mode {
        None => fsops::mkdir_umasked_at(dir, &aside, 0o777),
        Some(mode) => fsops::mkdir_at(dir, &aside).and_then(|()| {
            let made = fsops::open_subdir(dir, &aside)?;
            fsops::set_mode_fd(&made, mode)
        }),
    };
    let made = made.and_then(|()| {
        let mut inner = fsops::open_subdir(dir, &aside)?;
        for part in below.iter() {
            fsops::mkdir_umasked_at(inner.as_fd(), part, 0o777)?;
            inner = fsops::open_subdir(inner.as_fd(), part)?;
        }
        Ok(())
    });
    match made {
        Ok(()) => Ok(Built { aside, temp }),
        Err(e) => {
            let _ = trees::remove_tree_at(dir, &aside, trees::Removal::OWN_TEMP);
            if let Some(temp) = temp {
                temp.finish();
            }
            Err(e)
        }
    }
}

/// Extracts the entry `archive` (in `ws`'s trash) holds in `dir` (canonical path `dir_path`),
/// beside where it goes, verified against the archive and durable, under a journaled temp name. The
/// returned [`Archived`] holds the archive (no other call restores or clears it) until dropped.
/// `made_above`: the directories made for it, which recovery removes with the temp name.
pub fn restored(
    ws: &Workspace,
    dir: BorrowedFd<'_>,
    dir_path: &Path,
    archive: &Path,
    made_above: Vec<MadeDirRecord>,
    cancel: &CancelToken,
) -> Result<(Built, Archived), TrashError> {
    // Named as any restore's temp root (`.restore-<hex>.partial`), whatever the target's name.
    let aside = crate::trash::restore_temp_name();
    let temp = ws
        .journal()
        .begin_temp_in_made_dirs(dir_path, dir, &aside, made_above);
    match ws
        .bucket()
        .stage(archive, dir, &aside, &|| cancel.is_aborted())
    {
        Ok(held) => Ok((Built { aside, temp }, held)),
        Err(e) => {
            // The extraction removes what it made; the temp record goes with it.
            let _ = trees::remove_tree_at(dir, &aside, trees::Removal::OWN_TEMP);
            if let Some(temp) = temp {
                temp.finish();
            }
            Err(e)
        }
    }
}
