//! What `move_file` and `restore_file` share: making ready the place an entry goes. The parent
//! directory is created if missing, the destination is checked to be as planned (absent, or
//! present when an overwrite was approved), and what is there goes to the trash first.

use std::ffi::OsStr;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use super::files;
use super::trashing::put_in_trash;
use crate::cancel::CancelToken;
use crate::error::{ErrorCode, ToolError};
use crate::paths::{fsops, Target};
use crate::trash::Archived;
use crate::workspace::Workspace;

/// Refuses (`DANGEROUS_PATH`, before anything is asked) a destination whose replacement would
/// take the workspace root or the data directory with it: the root, an ancestor of it, or a
/// path that is or holds the data directory.
pub fn refuse_dangerous(ws: &Workspace, path: &Path) -> Result<(), ToolError> {
    if ws.sandbox().root().starts_with(path) || ws.sandbox().contains_hidden(path) {
        return Err(ToolError::new(
            ErrorCode::DangerousPath,
            format!(
                "{} is the workspace root, an ancestor of it, or holds the agent-fs-tools data directory; nothing can be put in its place. Choose another destination",
                path.display()
            ),
        ));
    }
    Ok(())
}

/// The destination, ready: its parent directory (readable), its name there, and the archive of
/// the entry it replaces, if any.
pub struct Destination<'a> {
    pub parent: OwnedFd,
    pub parent_path: &'a Path,
    pub name: &'a OsStr,
    pub replaced: Option<Archived>,
}

/// Makes `target` ready to receive an entry: creates its parent directories, checks that an entry
/// is there exactly when `planned_present` says (else `CONFLICT`: it changed since it was planned
/// on), and puts that entry into the trash.
pub fn prepare<'a>(
    ws: &Workspace,
    target: &'a Target,
    planned_present: bool,
    cancel: &CancelToken,
) -> Result<Destination<'a>, ToolError> {
    let (parent_path, name) = target
        .split()
        .ok_or_else(|| files::is_a_directory(&target.path))?;
    let parent = fsops::ensure_dir(&target.anchor, parent_path)
        .and_then(|(fd, _)| fsops::reopen_readable(fd.as_fd()))
        .map_err(|e| ToolError::io(&e, "create the parent directory of", &target.path))?;
    let present = fsops::lstat_at(parent.as_fd(), name)
        .map_err(|e| ToolError::io(&e, "check", &target.path))?
        .is_some();
    if present != planned_present {
        return Err(files::changed_since_planned(&target.path));
    }
    let replaced = if present {
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
    })
}
