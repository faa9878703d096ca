//! Building entries for a plan before its commit: each is made under a journaled temp name
//! beside its place, so a kill before the commit record leaves nothing the next recovery does
//! not remove, and the commit only renames it into place.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::Path;

use crate::hashing::sha256_reader;
use crate::journal::{Entry, Journal, MadeDirRecord};
use crate::paths::trees::{CopyCounts, CopyError};
use crate::paths::{fsops, trees, EntryKind, Stat};

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

/// What a copy built, besides its temp name.
#[derive(Debug, Clone)]
pub struct CopyMade {
    /// What the copy holds beneath its root.
    pub counts: CopyCounts,
    /// The SHA-256 of a copied regular file, read back from the copy (streamed; `None` for a
    /// link or a tree).
    pub sha256: Option<String>,
}

/// Why a copy was not built (nothing of it is left).
#[derive(Debug)]
pub struct CopyFailed(pub CopyError);

impl std::fmt::Display for CopyFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            CopyError::Special(at) => write!(f, "{} is a FIFO, socket or device", at.display()),
            CopyError::Changed(at) => write!(f, "{} changed while it was copied", at.display()),
            CopyError::Aborted => f.write_str("aborted"),
            CopyError::Io(e, at) => write!(f, "{}: {e}", at.display()),
        }
    }
}

impl std::error::Error for CopyFailed {}

impl CopyFailed {
    /// The copy's failure an `io::Error` carries (the executor reports a staging failure as
    /// one), if it is one.
    pub fn of(e: &io::Error) -> Option<&CopyError> {
        e.get_ref()?.downcast_ref::<CopyFailed>().map(|f| &f.0)
    }
}

/// Where a copy comes from: `name` in `dir`, which must still be the entry `stat` describes.
pub struct CopySource<'a> {
    pub dir: BorrowedFd<'a>,
    pub name: &'a OsStr,
    pub stat: &'a Stat,
}

/// Copies `from` (a file, a symlink as a link, or a whole tree: through descriptors only, never
/// following a link; see [`trees::copy_tree_at`]) beside `name` in `dir` (canonical path
/// `dir_path`, in the directories `made_above` made for the change), synced, under a journaled
/// temp name. A failure (also a FIFO, socket or device found inside, or an entry other than
/// `from.stat` at its name) removes the partial copy and is an `io::Error` carrying
/// [`CopyFailed`].
pub fn copy(
    journal: &Journal,
    (dir, dir_path, name): (BorrowedFd<'_>, &Path, &OsStr),
    made_above: Vec<MadeDirRecord>,
    from: CopySource<'_>,
    aborted: &dyn Fn() -> bool,
) -> io::Result<(Built, CopyMade)> {
    let aside = fsops::temp_name(name);
    let temp = journal.begin_temp_in_made_dirs(dir_path, dir, &aside, made_above);
    let built = copy_aside(dir, &aside, &from, aborted);
    match built {
        Ok(made) => Ok((Built { aside, temp }, made)),
        Err(e) => {
            let _ = trees::remove_tree_at(dir, &aside, trees::Removal::OWN_TEMP);
            if let Some(temp) = temp {
                temp.finish();
            }
            Err(io::Error::other(CopyFailed(e)))
        }
    }
}

fn copy_aside(
    dir: BorrowedFd<'_>,
    aside: &OsStr,
    from: &CopySource<'_>,
    aborted: &dyn Fn() -> bool,
) -> Result<CopyMade, CopyError> {
    let root = std::path::PathBuf::new();
    let copied = trees::copy_tree_at(from.dir, from.name, dir, aside, aborted)?;
    // The name held another entry by the time it was copied (or none).
    if !copied.read(from.stat.identity()) {
        return Err(CopyError::Changed(root));
    }
    fsops::sync_new_tree(dir).map_err(|e| CopyError::Io(e, root.clone()))?;
    let sha256 = match EntryKind::of(from.stat) {
        EntryKind::File => {
            let copy =
                fsops::open_for_read(dir, aside).map_err(|e| CopyError::Io(e, root.clone()))?;
            Some(sha256_reader(copy).map_err(|e| CopyError::Io(e, root))?)
        }
        _ => None,
    };
    Ok(CopyMade {
        counts: copied.counts,
        sha256,
    })
}
