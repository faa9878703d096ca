//! What `move_file` and `restore_file` share: the place an entry goes. Planning looks at what is
//! there now; replacing a whole directory tree asks like a recursive `remove_dir` does, and says
//! so. (What is there goes to the trash first in the tool's plan, on the change engine.)

use std::path::Path;

use super::{blast_radius, files};
use crate::cancel::CancelToken;
use crate::error::{ErrorCode, ToolError};
use crate::paths::fsops;
use crate::paths::shown::Shown;
use crate::paths::tree_count::TreeCount;
use crate::paths::AsDir;
use crate::paths::EntryKind;
use crate::paths::Target;
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
    let stat = fsops::lstat_at(parent.as_dir(), &name)
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
    blast_radius::count_tree(parent.as_dir(), &name, &target.path, cancel).map(Some)
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
