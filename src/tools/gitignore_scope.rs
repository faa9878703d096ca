//! Which ancestor `.gitignore` files apply to a walk that starts below the repository root
//! (shared by `list_directory`, `glob` and `grep`).

use std::path::{Path, PathBuf};

use crate::paths::Target;
use crate::workspace::find_project_root;

/// The `.gitignore` files of the ancestors of a listed or searched directory that apply to it, as git
/// would apply them: up to the repository root (the nearest ancestor holding `.git`), or, outside
/// any repository, up to the workspace root. Never above the allowed tree. Farthest first.
///
/// The `ignore` crate's own parent lookup (with `require_git(false)`) reads every `.gitignore` up
/// to `/`, so a stray `~/.gitignore` or `/tmp/.gitignore` would hide files of an unrelated tree.
pub fn outer_gitignores(listed: &Target, workspace_root: &Path) -> Vec<PathBuf> {
    let dir = listed.path.as_path();
    let boundary = match find_project_root(dir) {
        Some(repo) => repo,
        None if dir.starts_with(workspace_root) => workspace_root.to_path_buf(),
        None => return Vec::new(),
    };
    let mut files: Vec<PathBuf> = dir
        .ancestors()
        .skip(1)
        .take_while(|a| a.starts_with(&boundary) && a.starts_with(&listed.anchor))
        .map(|a| a.join(".gitignore"))
        .filter(|f| f.is_file())
        .collect();
    files.reverse();
    files
}
