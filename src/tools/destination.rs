//! What `move_file` and `restore_file` share: the place an entry goes. Planning looks at what is
//! there now; replacing a whole directory tree asks like a recursive `remove_dir` does, and says
//! so. Committing creates the parent directory if missing, checks that the destination is still
//! as planned (absent, or the same kind of entry when an overwrite was approved), and puts what
//! is there into the trash first.

use std::ffi::OsStr;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use super::{blast_radius, files};
use crate::call::trashing::put_in_trash;
use crate::cancel::CancelToken;
use crate::error::{ErrorCode, ToolError};
use crate::paths::fsops;
use crate::paths::shown::Shown;
use crate::paths::tree_count::TreeCount;
use crate::paths::EntryKind;
use crate::paths::Target;
use crate::trash::Archived;
use crate::workspace::Workspace;

/// Refuses (`DANGEROUS_PATH`, before anything is asked) a destination whose replacement would
/// take the workspace root or the data directory with it: the root, an ancestor of it, or a
/// path that is or holds the data directory.
pub fn refuse_dangerous(ws: &Workspace, path: &Path) -> Result<(), ToolError> {
    if ws.sandbox().holds_root(path) || ws.sandbox().contains_hidden(path) {
        return Err(ToolError::new(
            ErrorCode::DangerousPath,
            format!(
                "{} is the workspace root, an ancestor of it, or holds the agent-fs-tools data directory; nothing can be put in its place. Choose another destination",
                path.shown()
            ),
        ));
    }
    Ok(())
}

/// What is at `target` now (`None`: nothing, or its parent does not exist yet).
pub fn existing(target: &Target, doing: &str) -> Result<Option<EntryKind>, ToolError> {
    let (parent, name) = match files::open_parent(target, doing) {
        Ok(found) => found,
        Err(e) if e.code == ErrorCode::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let stat = fsops::lstat_at(parent.as_fd(), &name)
        .map_err(|e| ToolError::io(&e, doing, &target.path))?;
    Ok(stat.as_ref().map(EntryKind::of))
}

/// The directory tree a replacement of `target` would put in the trash, counted (bounded in
/// time, see [`blast_radius::count_tree`]); `None` unless what is there (`existing`) is a directory.
pub fn count_replaced(
    target: &Target,
    existing: Option<EntryKind>,
    cancel: &CancelToken,
) -> Result<Option<TreeCount>, ToolError> {
    if existing != Some(EntryKind::Directory) {
        return Ok(None);
    }
    let (parent, name) = files::open_parent(target, "look into")?;
    blast_radius::count_tree(parent.as_fd(), &name, &target.path, cancel).map(Some)
}

/// Replacing a directory tree (`replaced`, counted) at `path`: it goes to the trash as a
/// recursive `remove_dir` would, so the user is always asked, and told what goes (returns the
/// text for the prompt's detail). `None` when nothing or a single entry is replaced.
pub fn replaces_tree(replaced: Option<&TreeCount>, path: &Path) -> Option<String> {
    replaced.map(|count| {
        format!(
            " (replaces the directory {} and everything in it, which goes to the trash first: {})",
            path.shown(),
            blast_radius::describe_tree(count)
        )
    })
}

/// The destination, ready: its parent directory (readable), its name there, and the archive of
/// the entry it replaces, if any.
pub struct Destination<'a> {
    pub parent: OwnedFd,
    pub parent_path: &'a Path,
    pub name: &'a OsStr,
    pub replaced: Option<Archived>,
    /// The parent directories made for it (shallowest first).
    pub created_dirs: Vec<std::path::PathBuf>,
}

/// Makes `target` ready to receive an entry: creates its parent directories, checks that what is
/// there is what was planned on (`planned`, from [`existing`]; else `CONFLICT`), and puts it into
/// the trash.
pub fn prepare<'a>(
    ws: &Workspace,
    target: &'a Target,
    planned: Option<EntryKind>,
    cancel: &CancelToken,
) -> Result<Destination<'a>, ToolError> {
    let (parent_path, name) = target
        .split()
        .ok_or_else(|| files::is_a_directory(&target.path))?;
    let created_dirs = files::missing_parents(target);
    let parent = fsops::ensure_dir(&target.anchor, parent_path)
        .and_then(|(fd, _)| fsops::reopen_readable(fd.as_fd()))
        .map_err(|e| ToolError::io(&e, "create the parent directory of", &target.path))?;
    let now = fsops::lstat_at(parent.as_fd(), name)
        .map_err(|e| ToolError::io(&e, "check", &target.path))?;
    if now.as_ref().map(EntryKind::of) != planned {
        return Err(files::changed_since_planned(&target.path));
    }
    let replaced = if now.is_some() {
        Some(put_in_trash(
            ws,
            parent.as_fd(),
            name,
            &target.path,
            true,
            cancel,
        )?)
    } else {
        None
    };
    Ok(Destination {
        parent,
        parent_path,
        name,
        replaced,
        created_dirs,
    })
}
