//! The sandbox: which canonical paths the tools may reach (../../docs/paths-and-sandbox.md#containment, ../../docs/paths-and-sandbox.md#the-data-directory).
//! Deny-by-default when `allowedPaths` is set; the data directory (trash, audit log, journal) is
//! never reachable, nor is a missing folder that is to hold it (only we create it, so nothing the
//! model made can stand in for it); containment is compared by whole path components, never by
//! string prefix.
//!
//! A directory can have more than one path: a bind mount, a macOS firmlink (`/Users` is also
//! `/System/Volumes/Data/Users`). Canonical paths spell one name per entry (see
//! [`super::canonical`]) but cannot know every mount, so what must never be reached or replaced
//! — the data directory, the workspace root and its ancestors — is also recognised by device and
//! inode number, whatever path reaches it.

use std::path::{Path, PathBuf};

use super::canonical::{resolve, resolve_parent, Canonical};
use super::resolve::{absolute_input, check_name_lengths, prefer_shown_names};
use super::shown::{echo, Shown};
use crate::error::ToolError;

/// Whether a path's final symlink is followed (most tools) or is the entry acted on
/// (`delete_file`, `move_file`, listing a link).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinalLink {
    Follow,
    Keep,
}

/// A checked location: canonical, inside an allowed tree, with the tree it is anchored in
/// (every filesystem operation on it goes through a descriptor opened beneath `anchor`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The canonical absolute path; shown to the model as `<abs>`.
    pub path: PathBuf,
    /// The allowed tree containing `path` (`/` without a sandbox).
    pub anchor: PathBuf,
    /// Inside the workspace root: the `cwd*` permission scope.
    pub inside_root: bool,
    pub exists: bool,
}

impl Target {
    /// The parent directory and the final name. Every target has both: the anchor itself is never
    /// a target for an operation that needs a parent (see `fsops`).
    pub fn split(&self) -> Option<(&Path, &std::ffi::OsStr)> {
        Some((self.path.parent()?, self.path.file_name()?))
    }
}

/// The set of reachable trees.
#[derive(Debug, Clone)]
pub struct Sandbox {
    root: PathBuf,
    allowed: Option<Vec<PathBuf>>,
    hidden: Vec<PathBuf>,
}

impl Sandbox {
    /// `root` and `allowed` must be canonical; `hidden` are directories no tool may touch.
    pub fn new(root: PathBuf, allowed: Option<Vec<PathBuf>>, hidden: Vec<PathBuf>) -> Self {
        Self {
            root,
            allowed,
            hidden,
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The allowed tree containing `path`, or `None` if it is outside them all.
    pub fn anchor_of(&self, path: &Path) -> Option<PathBuf> {
        match &self.allowed {
            None => Some(super::canonical::root_of(path)),
            Some(trees) => trees
                .iter()
                .filter(|t| path.starts_with(t))
                .max_by_key(|t| t.as_os_str().len())
                .cloned(),
        }
    }

    /// Whether `path` is (inside) a directory the tools must not reach, by its name (cheap: for
    /// the entries of a directory already checked; [`Sandbox::check`] also compares identities).
    pub fn is_hidden(&self, path: &Path) -> bool {
        self.hidden.iter().any(|h| path.starts_with(h))
    }

    /// The device and inode number of each hidden directory that exists now (one `lstat` each:
    /// the data directory is made on first use, and may be made again).
    pub fn hidden_identities(&self) -> Vec<crate::paths::FileId> {
        self.hidden.iter().filter_map(|h| identity_of(h)).collect()
    }

    /// The final names of the hidden directories (a walk compares identities only for these).
    pub fn hidden_names(&self) -> Vec<std::ffi::OsString> {
        self.hidden
            .iter()
            .filter_map(|h| h.file_name().map(|n| n.to_owned()))
            .collect()
    }

    /// Whether `path` is or contains a hidden directory by name (cheap: a walk asks it of every
    /// directory it reads; see [`Sandbox::contains_hidden`]).
    pub fn may_hold_hidden(&self, path: &Path) -> bool {
        self.hidden.iter().any(|h| h.starts_with(path))
    }

    /// Whether `path` is or contains a hidden directory (removing, moving or replacing it would
    /// take the data directory with it), under this name or another one.
    pub fn contains_hidden(&self, path: &Path) -> bool {
        self.hidden.iter().any(|h| h.starts_with(path))
            || identity_of(path).is_some_and(|entry| {
                self.hidden
                    .iter()
                    .any(|h| resolve(h).is_ok_and(|h| h.identities.contains(&entry)))
            })
    }

    /// Whether `path` is the workspace root, under this name or another one.
    pub fn is_root(&self, path: &Path) -> bool {
        path == self.root || identity_of(path).is_some_and(|e| identity_of(&self.root) == Some(e))
    }

    /// Whether `path` is the workspace root or one of its ancestors, under this name or another
    /// one (removing or replacing it would take the root with it).
    pub fn holds_root(&self, path: &Path) -> bool {
        self.root.starts_with(path)
            || identity_of(path).is_some_and(|entry| {
                resolve(&self.root).is_ok_and(|root| root.identities.contains(&entry))
            })
    }

    /// Resolves the model's `raw` path (argument `field`) against `cwd` and checks it.
    pub fn resolve(
        &self,
        raw: &str,
        field: &str,
        cwd: &Path,
        home: Option<&Path>,
        final_link: FinalLink,
    ) -> Result<Target, ToolError> {
        let canonical = self.canonicalize(raw, field, cwd, home, final_link)?;
        self.check(raw, canonical)
    }

    /// Checks an absolute path we recorded ourselves (a trashed entry's original path), with no
    /// fallback to shown names: it is the exact name already.
    pub fn resolve_absolute(
        &self,
        path: &Path,
        field: &str,
        final_link: FinalLink,
    ) -> Result<Target, ToolError> {
        let shown = path.shown();
        if !path.is_absolute() {
            return Err(ToolError::invalid(format!(
                "{field}: {shown} is not an absolute path; give the path to use"
            )));
        }
        check_name_lengths(path, field)?;
        let canonical = self.canonicalize_absolute(&shown, path, final_link)?;
        self.check(&shown, canonical)
    }

    /// The canonical path of the model's `raw` path, not yet checked against the sandbox. A
    /// component given in its shown form names the entry it shows when nothing has that name
    /// literally ([`prefer_shown_names`], looking only into allowed directories).
    pub fn canonicalize(
        &self,
        raw: &str,
        field: &str,
        cwd: &Path,
        home: Option<&Path>,
        final_link: FinalLink,
    ) -> Result<Canonical, ToolError> {
        let mut absolute = absolute_input(raw, field, cwd, home)?;
        if let Some(named) = prefer_shown_names(&absolute, raw, |dir| {
            self.anchor_of(dir).is_some() && !self.is_hidden(dir)
        }) {
            absolute = named;
        }
        check_name_lengths(&absolute, field)?;
        self.canonicalize_absolute(raw, &absolute, final_link)
    }

    /// A path that cannot be resolved because of what lies outside the allowed trees (a file
    /// where a directory should be, a loop, a permission) gets the same answer as any outside
    /// path.
    fn canonicalize_absolute(
        &self,
        raw: &str,
        absolute: &Path,
        final_link: FinalLink,
    ) -> Result<Canonical, ToolError> {
        match final_link {
            FinalLink::Follow => resolve(absolute),
            FinalLink::Keep => resolve_parent(absolute),
        }
        .map_err(|e| {
            if self.anchor_of(&e.at).is_none() || self.is_hidden(&e.at) {
                self.outside(raw, absolute)
            } else {
                ToolError::io(&e.error, "resolve", absolute)
            }
        })
    }

    /// Checks an already canonical path (`raw` is the model's, for messages).
    pub fn check(&self, raw: &str, canonical: Canonical) -> Result<Target, ToolError> {
        let hidden = self.is_hidden(&canonical.path)
            || (!canonical.exists && self.contains_hidden(&canonical.path))
            || self
                .hidden_identities()
                .iter()
                .any(|h| canonical.identities.contains(h));
        let path = canonical.path;
        if hidden {
            return Err(ToolError::not_allowed(format!(
                "{} is the agent-fs-tools data directory (trash, audit log, journal), inside it, or a folder that is to hold it, which the file tools cannot reach; what was removed is listed and restored by the trash tools instead",
                path.shown()
            )));
        }
        let Some(anchor) = self.anchor_of(&path) else {
            return Err(self.outside(raw, &path));
        };
        Ok(Target {
            inside_root: path.starts_with(&self.root),
            path,
            anchor,
            exists: canonical.exists,
        })
    }

    /// The one answer for every path outside the allowed trees: it names the path as the model
    /// gave it and the allowed trees, and nothing the model did not already know — not where a
    /// link leads, not whether anything exists there.
    fn outside(&self, raw: &str, path: &Path) -> ToolError {
        let trees: Vec<String> = self
            .allowed
            .iter()
            .flatten()
            .map(|t| t.shown().into_owned())
            .collect();
        let named = if raw.is_empty() {
            path.shown()
        } else {
            echo(raw)
        };
        ToolError::not_allowed(format!(
            "{named} is outside the allowed directories ({}), or leads outside them through a symbolic link; use a path inside them",
            trees.join(", ")
        ))
    }
}

/// Which entry is at `path` (not following a final link), if any.
pub fn identity_of(path: &Path) -> Option<crate::paths::FileId> {
    #[cfg(unix)]
    let stat = crate::paths::Stat::from(&std::fs::symlink_metadata(path).ok()?);
    #[cfg(windows)]
    let stat = crate::paths::platform::lstat_path(path).ok()?;
    Some(stat.id())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use std::os::unix::fs::symlink;

    struct Fixture {
        _dir: tempfile::TempDir,
        base: PathBuf,
        sandbox: Sandbox,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let base = crate::paths::canonical::canonicalize_existing(dir.path()).unwrap();
        for d in [
            "R",
            "R_evil",
            "R-2",
            "R'",
            "R\"",
            "R ",
            "outside",
            "R/.data/trash",
        ] {
            std::fs::create_dir_all(base.join(d)).unwrap();
        }
        let sandbox = Sandbox::new(
            base.join("R"),
            Some(vec![base.join("R")]),
            vec![base.join("R/.data/trash")],
        );
        Fixture {
            _dir: dir,
            base,
            sandbox,
        }
    }

    fn resolve(f: &Fixture, raw: &str) -> Result<Target, ToolError> {
        f.sandbox
            .resolve(raw, "path", &f.base.join("R"), None, FinalLink::Follow)
    }

    #[test]
    fn containment_is_by_whole_components() {
        let f = fixture();
        for raw in [
            "../R_evil/x",
            "../R-2/x",
            "../R'/x",
            "../R\"/x",
            "../R /x",
            "../R/../R_evil/x",
        ] {
            let e = resolve(&f, raw).unwrap_err();
            assert_eq!(e.code, ErrorCode::PathNotAllowed, "{raw}");
        }
        let t = resolve(&f, "sub/../x").unwrap();
        assert_eq!(t.path, f.base.join("R/x"));
        assert!(t.inside_root && !t.exists);
    }

    #[test]
    fn symlinks_are_judged_by_their_final_target() {
        let f = fixture();
        let r = f.base.join("R");
        symlink(f.base.join("outside"), r.join("out_dir")).unwrap();
        symlink(f.base.join("outside/missing.txt"), r.join("dangling_out")).unwrap();
        symlink("inner", r.join("rel")).unwrap();
        std::fs::create_dir(r.join("inner")).unwrap();
        assert!(resolve(&f, "out_dir/file").is_err());
        let e = resolve(&f, "dangling_out").unwrap_err();
        assert!(
            e.message
                .starts_with("dangling_out is outside the allowed directories")
                && !e.message.contains("missing.txt"),
            "the answer does not say where the link leads: {}",
            e.message
        );
        assert_eq!(resolve(&f, "rel/a").unwrap().path, r.join("inner/a"));
        // A `..` out of a missing directory lands on the link again: still judged by its target.
        for raw in [
            "missing/../out_dir/file",
            "m/n/../../dangling_out",
            "m/../out_dir",
        ] {
            assert_eq!(
                resolve(&f, raw).unwrap_err().code,
                ErrorCode::PathNotAllowed,
                "{raw}"
            );
        }
        assert_eq!(resolve(&f, "m/../rel/a").unwrap().path, r.join("inner/a"));
        // Kept as an entry of its own, the link itself is inside.
        let t = f
            .sandbox
            .resolve("out_dir", "path", &r, None, FinalLink::Keep)
            .unwrap();
        assert_eq!(t.path, r.join("out_dir"));
    }

    #[test]
    fn shown_names_are_read_back_inside_the_allowed_trees_only() {
        let f = fixture();
        std::fs::write(f.base.join("R/a\nb"), "").unwrap();
        std::fs::write(f.base.join("outside/o\nb"), "").unwrap();
        let t = resolve(&f, "a\\nb").unwrap();
        assert_eq!(t.path, f.base.join("R/a\nb"));
        assert!(t.exists);
        let e = resolve(&f, "../outside/o\\nb").unwrap_err();
        assert_eq!(e.code, ErrorCode::PathNotAllowed);
        assert!(
            e.message.starts_with("../outside/o\\nb is outside"),
            "{}",
            e.message
        );
        // The model's own control characters are not echoed.
        let e = resolve(&f, "../outside/\u{1b}]0;x\u{7}").unwrap_err();
        assert!(!e.message.chars().any(char::is_control), "{}", e.message);
    }

    #[test]
    fn the_trash_is_hidden() {
        let f = fixture();
        let e = resolve(&f, ".data/trash/x.tar.gz").unwrap_err();
        assert!(e.message.contains("trash"));
        assert!(f.sandbox.contains_hidden(&f.base.join("R/.data")));
    }

    #[test]
    fn the_data_directory_and_the_root_are_known_under_another_name() {
        let f = fixture();
        let sandbox = Sandbox::new(f.base.join("R"), None, vec![f.base.join("R/.data/trash")]);
        std::fs::write(f.base.join("R/.data/trash/archive"), "").unwrap();
        // `base/alias` is a bind mount of `base`: every directory in it has a second path, as
        // macOS's firmlinks give `/Users` (`/System/Volumes/Data/Users`).
        let alias = f.base.join("outside/alias");
        let Some(_mount) = crate::paths::test_mounts::Mounted::bind(&f.base, &alias) else {
            eprintln!("skipped: a bind mount is not possible here (not root)");
            return;
        };
        let resolve =
            |p: &Path, link| sandbox.resolve(p.to_str().unwrap(), "path", &f.base, None, link);
        for hidden in [
            "R/.data/trash",
            "R/.data/trash/archive",
            "R/.data/trash/new",
        ] {
            for link in [FinalLink::Follow, FinalLink::Keep] {
                let e = resolve(&alias.join(hidden), link).unwrap_err();
                assert_eq!(e.code, ErrorCode::PathNotAllowed, "{hidden}");
            }
        }
        assert!(resolve(&alias.join("R/.data"), FinalLink::Keep).is_ok());
        assert!(sandbox.contains_hidden(&alias.join("R/.data")));
        assert!(sandbox.contains_hidden(&alias.join("R")));
        assert!(!sandbox.contains_hidden(&alias.join("R_evil")));
        assert!(sandbox.is_root(&alias.join("R")) && !sandbox.is_root(&alias));
        assert!(sandbox.holds_root(&alias) && sandbox.holds_root(&alias.join("R")));
        assert!(!sandbox.holds_root(&alias.join("R/.data")));
    }

    #[test]
    fn without_allowed_paths_everything_is_reachable() {
        let sandbox = Sandbox::new(PathBuf::from("/w"), None, vec![]);
        let t = sandbox
            .resolve("/etc", "path", Path::new("/w"), None, FinalLink::Follow)
            .unwrap();
        assert_eq!(t.anchor, Path::new("/"));
        assert!(!t.inside_root);
    }
}
