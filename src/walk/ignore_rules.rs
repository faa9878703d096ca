//! Which `.gitignore` rules apply during a walk, read through directory descriptors.
//!
//! The rules are those ripgrep's `ignore` crate applies with `git_ignore`, `git_exclude`,
//! `require_git(false)` and no parent lookup: in each directory, its `.gitignore`, then its
//! `.git/info/exclude` (a `.git` directory only; a worktree's `.git` file is not followed), the
//! nearest directory's match winning; then the ancestors' `.gitignore` files that apply to the
//! walked directory ([`outer_gitignores`]), nearest first. Like git (≥ 2.32), an ignore file
//! that is a symlink is not read. The matching itself is the `ignore` crate's.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::paths::fsops;
use crate::paths::project::find_project_root;
use crate::paths::EntryKind;
use crate::paths::Target;
use crate::paths::{AsDir, BorrowedDir, Dir};

/// The ignore rules in force in one directory of a walk: its own and its ancestors'.
#[derive(Clone, Default)]
pub struct IgnoreRules {
    /// The nearest directory with an ignore file of its own, linked to the next one up.
    nearest: Option<Arc<Frame>>,
    /// The ancestors' `.gitignore` files above the walked directory, farthest first.
    outer: Arc<[Gitignore]>,
}

/// One directory's ignore files.
struct Frame {
    gitignore: Option<Gitignore>,
    exclude: Option<Gitignore>,
    parent: Option<Arc<Frame>>,
}

impl IgnoreRules {
    /// The rules at the top of a walk of `walked`: the `.gitignore` files of its ancestors that
    /// apply to it (read without following symlinks; one that cannot be read is skipped, as git
    /// does).
    pub fn for_walk(walked: &Target, workspace_root: &Path) -> Self {
        let outer: Vec<Gitignore> = outer_gitignores(walked, workspace_root)
            .iter()
            .filter_map(|file| outer_matcher(&walked.anchor, file))
            .collect();
        IgnoreRules {
            nearest: None,
            outer: outer.into(),
        }
    }

    /// The rules inside the directory `dir` (open, at `abs`), given whether its listing holds a
    /// `.gitignore` and a `.git`: these rules plus its own files, if it has any.
    pub fn enter(&self, dir: BorrowedDir<'_>, abs: &Path, gitignore: bool, git: bool) -> Self {
        let gitignore = gitignore
            .then(|| read_ignore_file(dir, &[".gitignore"]))
            .flatten()
            .map(|text| matcher(abs, &abs.join(".gitignore"), &text));
        let exclude = git
            .then(|| read_ignore_file(dir, &[".git", "info", "exclude"]))
            .flatten()
            .map(|text| matcher(abs, &abs.join(".git/info/exclude"), &text));
        if gitignore.is_none() && exclude.is_none() {
            return self.clone();
        }
        IgnoreRules {
            nearest: Some(Arc::new(Frame {
                gitignore,
                exclude,
                parent: self.nearest.clone(),
            })),
            outer: self.outer.clone(),
        }
    }

    /// Whether the entry at `abs` is ignored: the nearest `.gitignore` match, else the nearest
    /// `.git/info/exclude` match, else the nearest outer file's match (a whitelist `!` rule
    /// counts as a match that keeps it).
    pub fn is_ignored(&self, abs: &Path, is_dir: bool) -> bool {
        if self.nearest.is_none() && self.outer.is_empty() {
            return false;
        }
        // Some(true) for an ignore rule, Some(false) for a whitelist rule, None for no match.
        let verdict = |m: &Gitignore| {
            let matched = m.matched(abs, is_dir);
            (!matched.is_none()).then(|| matched.is_ignore())
        };
        let frames =
            || std::iter::successors(self.nearest.as_deref(), |frame| frame.parent.as_deref());
        frames()
            .filter_map(|f| f.gitignore.as_ref())
            .find_map(verdict)
            .or_else(|| {
                frames()
                    .filter_map(|f| f.exclude.as_ref())
                    .find_map(verdict)
            })
            .or_else(|| self.outer.iter().rev().find_map(verdict))
            .unwrap_or(false)
    }
}

/// The `.gitignore` files of the ancestors of a walked directory that apply to it, as git would
/// apply them: up to the repository root (the nearest ancestor holding `.git`), or, outside any
/// repository, up to the workspace root. Never above the allowed tree. Farthest first.
///
/// The `ignore` crate's own parent lookup (with `require_git(false)`) reads every `.gitignore` up
/// to `/`, so a stray `~/.gitignore` or `/tmp/.gitignore` would hide files of an unrelated tree.
pub fn outer_gitignores(walked: &Target, workspace_root: &Path) -> Vec<PathBuf> {
    let dir = walked.path.as_path();
    let boundary = match find_project_root(dir) {
        Some(repo) => repo,
        None if dir.starts_with(workspace_root) => workspace_root.to_path_buf(),
        None => return Vec::new(),
    };
    let mut files: Vec<PathBuf> = dir
        .ancestors()
        .skip(1)
        .take_while(|a| a.starts_with(&boundary) && a.starts_with(&walked.anchor))
        .map(|a| a.join(".gitignore"))
        .filter(|f| f.is_file())
        .collect();
    files.reverse();
    files
}

/// The largest ignore file read; the rest of a larger one is not applied.
const IGNORE_FILE_MAX_BYTES: u64 = 1024 * 1024;

/// The text of the regular file at `path` (components) beneath `dir`, reached without following
/// any symlink; `None` if it is missing, not a regular file or unreadable.
fn read_ignore_file(dir: BorrowedDir<'_>, path: &[&str]) -> Option<Vec<u8>> {
    let (file_name, dirs) = path.split_last()?;
    let mut holder: Option<Dir> = None;
    for part in dirs {
        let parent = holder.as_ref().map_or(dir, |fd| fd.as_dir());
        holder = Some(fsops::open_subdir(parent, OsStr::new(part)).ok()?);
    }
    let parent = holder.as_ref().map_or(dir, |fd| fd.as_dir());
    let mut file = fsops::open_for_read(parent, OsStr::new(file_name)).ok()?;
    if EntryKind::of(&fsops::fstat(&file).ok()?) != EntryKind::File {
        return None;
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(&mut file, IGNORE_FILE_MAX_BYTES),
        &mut bytes,
    )
    .ok()?;
    Some(bytes)
}

/// An outer `.gitignore` (an ancestor's, inside the anchor), read through a descriptor.
fn outer_matcher(anchor: &Path, file: &Path) -> Option<Gitignore> {
    let dir = file.parent()?;
    let fd = fsops::open_dir(anchor, dir, false).ok()?;
    let text = read_ignore_file(fd.as_dir(), &[file.file_name()?.to_str()?])?;
    Some(matcher(dir, file, &text))
}

/// The matcher of one ignore file's `text`, its patterns relative to `dir`, read line by line as
/// the `ignore` crate reads a file: a leading BOM dropped, reading stopping at the first line
/// that is not UTF-8, invalid patterns skipped.
fn matcher(dir: &Path, file: &Path, text: &[u8]) -> Gitignore {
    let mut builder = GitignoreBuilder::new(dir);
    for (i, line) in text.split(|b| *b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Ok(line) = std::str::from_utf8(line) else {
            break;
        };
        let line = if i == 0 {
            line.trim_start_matches('\u{feff}')
        } else {
            line
        };
        let _ = builder.add_line(Some(file.to_path_buf()), line);
    }
    builder.build().unwrap_or_else(|_| Gitignore::empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(dir: &Path, text: &str) -> IgnoreRules {
        IgnoreRules {
            nearest: Some(Arc::new(Frame {
                gitignore: Some(matcher(dir, &dir.join(".gitignore"), text.as_bytes())),
                exclude: None,
                parent: None,
            })),
            outer: Arc::new([]),
        }
    }

    #[test]
    fn the_nearest_file_wins_and_whitelists_keep() {
        let top = rules(Path::new("/r"), "*.log\nbuild/\n");
        let tmp = tempfile::tempdir().unwrap();
        let fd = crate::paths::testing::open_dir(tmp.path());
        // A directory without ignore files shares its parent's rules.
        let same = top.enter(fd.as_dir(), Path::new("/r/src"), false, false);
        assert!(same.is_ignored(Path::new("/r/src/a.log"), false));
        assert!(same.is_ignored(Path::new("/r/build"), true));
        assert!(!same.is_ignored(Path::new("/r/build"), false));
        assert!(!same.is_ignored(Path::new("/r/src/a.rs"), false));
        let nested = IgnoreRules {
            nearest: Some(Arc::new(Frame {
                gitignore: Some(matcher(
                    Path::new("/r/src"),
                    Path::new("/r/src/.gitignore"),
                    b"!keep.log\n",
                )),
                exclude: None,
                parent: top.nearest.clone(),
            })),
            outer: Arc::new([]),
        };
        assert!(!nested.is_ignored(Path::new("/r/src/keep.log"), false));
        assert!(nested.is_ignored(Path::new("/r/src/other.log"), false));
    }

    #[test]
    fn a_bom_is_dropped_and_reading_stops_at_invalid_utf8() {
        let m = matcher(
            Path::new("/r"),
            Path::new("/r/.gitignore"),
            b"\xef\xbb\xbfa.txt\r\nb.txt\n\xff\nc.txt\n",
        );
        assert!(m.matched("/r/a.txt", false).is_ignore());
        assert!(m.matched("/r/b.txt", false).is_ignore());
        assert!(m.matched("/r/c.txt", false).is_none());
    }
}
