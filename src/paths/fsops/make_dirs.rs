//! Making missing directories beneath an anchor or a held directory, one component at a time,
//! on every platform: each component is made relative to the handle of the one before and
//! opened without following a link (a link on the way is refused, never followed), and what a
//! failed call made goes again. The primitives (open the anchor, open one component, make one,
//! remove one made) are the platform's, in `open.rs` / `open_windows.rs`.

use std::ffi::OsStr;
use std::io;
use std::path::{Component, Path, PathBuf};

use super::open::{
    cross_device, make_dir, open_anchor, open_dir, open_handle_at, relative, remove_made_dir,
};
use crate::paths::{AsDir, BorrowedDir, Dir};

/// `mkdir -p dir` beneath `anchor`, creating each missing component (mode 0777 minus umask on
/// Unix) and descending without following a link. Returns a handle of `dir` and whether
/// anything was created. An existing non-directory component → `ENOTDIR` (`ERROR_DIRECTORY`).
pub fn ensure_dir(anchor: &Path, dir: &Path) -> io::Result<(Dir, bool)> {
    ensure_dir_mode(anchor, dir, 0o777)
}

/// [`ensure_dir`] creating missing directories with `mode` (minus umask; no meaning on
/// Windows, where a new directory takes the access control list its parent passes on).
pub fn ensure_dir_mode(anchor: &Path, dir: &Path, mode: u32) -> io::Result<(Dir, bool)> {
    // Fast path: it already exists.
    match open_dir(anchor, dir, false) {
        Ok(handle) => return Ok((handle, false)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    make_dirs_beneath(open_anchor(anchor)?, relative(anchor, dir)?, mode)
}

/// `mkdir -p` of the relative path `rel` beneath the directory `start`, one component at a time
/// (made with `mode`, then opened without following a link): a symlink on the way is
/// `ELOOP`/`ENOTDIR`, never followed. Returns a handle of the last directory and whether
/// anything was created.
pub fn make_dirs_beneath(start: Dir, rel: &Path, mode: u32) -> io::Result<(Dir, bool)> {
    let mut current = start;
    let mut created = false;
    for component in rel.components() {
        let Component::Normal(part) = component else {
            return Err(cross_device());
        };
        created |= make_dir(current.as_dir(), part, mode)?;
        current = open_handle_at(current.as_dir(), part)?;
    }
    Ok((current, created))
}

/// A directory [`ensure_dir_made`] made: its path, a handle of its parent, and the identity
/// (device and inode; volume and file id) of both, so that it can be removed again, only if it
/// is still this one and empty.
#[derive(Debug)]
pub struct MadeDir {
    pub path: PathBuf,
    pub parent: Dir,
    pub parent_identity: (u64, u64),
    pub identity: (u64, u64),
}

/// [`ensure_dir`], telling which directories it made (shallowest first): only those its own
/// call made, not one that another process made meanwhile.
pub fn ensure_dir_made(anchor: &Path, dir: &Path) -> io::Result<(Dir, Vec<MadeDir>)> {
    ensure_dir_made_with(anchor, dir, |parent, _, name| make_dir(parent, name, 0o777))
}

/// [`ensure_dir_made`], each missing directory made by `make(parent, path, name)` (never
/// called for one that exists): `Ok(true)` when it made the directory `name` of `parent`
/// (canonical path `path`), `Ok(false)` when one was there already (made by someone else
/// meanwhile).
pub fn ensure_dir_made_with(
    anchor: &Path,
    dir: &Path,
    mut make: impl FnMut(BorrowedDir<'_>, &Path, &OsStr) -> io::Result<bool>,
) -> io::Result<(Dir, Vec<MadeDir>)> {
    match open_dir(anchor, dir, false) {
        Ok(handle) => return Ok((handle, Vec::new())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut made = Vec::new();
    let result = make_dirs_reporting(anchor, dir, &mut made, &mut make);
    if result.is_err() {
        // Nothing half made: what was made before the error goes again (if still empty).
        for dir in made.iter().rev() {
            if let Some(name) = dir.path.file_name() {
                let _ = remove_made_dir(dir.parent.as_dir(), name, dir.identity);
            }
        }
    }
    result.map(|handle| (handle, made))
}

/// The work of [`ensure_dir_made_with`]: each directory made is pushed to `made` as it is.
fn make_dirs_reporting(
    anchor: &Path,
    dir: &Path,
    made: &mut Vec<MadeDir>,
    make: &mut impl FnMut(BorrowedDir<'_>, &Path, &OsStr) -> io::Result<bool>,
) -> io::Result<Dir> {
    let mut current = open_anchor(anchor)?;
    let mut path = anchor.to_path_buf();
    for component in relative(anchor, dir)?.components() {
        let Component::Normal(part) = component else {
            return Err(cross_device());
        };
        path.push(part);
        match open_handle_at(current.as_dir(), part) {
            Ok(next) => {
                current = next;
                continue;
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        let created = make(current.as_dir(), &path, part)?;
        let next = open_handle_at(current.as_dir(), part)?;
        if created {
            made.push(MadeDir {
                path: path.clone(),
                parent_identity: super::identity(&super::fstat(&current)?),
                identity: super::identity(&super::fstat(&next)?),
                parent: current,
            });
        }
        current = next;
    }
    Ok(current)
}
