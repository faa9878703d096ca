//! The project a directory belongs to: the nearest ancestor holding `.git` (`cwd_get`, ../../docs/tools.md#cwd_get-cwd_push-cwd_pop),
//! which is also where gitignore rules stop.

use std::path::{Path, PathBuf};

/// The nearest ancestor of `dir` (itself included) holding `.git` (file or directory).
pub fn find_project_root(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| std::fs::symlink_metadata(d.join(".git")).is_ok())
        .map(Path::to_path_buf)
}
