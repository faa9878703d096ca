//! A userspace `realpath` that also works for paths that do not exist yet and for dangling
//! symlinks: containment must be decided on where a write would really land (../../docs/paths-and-sandbox.md#containment).
//!
//! Each existing component is written as the volume stores it, not as it was typed: on a case-
//! (or normalization-) insensitive volume, APFS's default, `/Users/me/PROJ/.Agent-FS-Tools`
//! finds `/Users/me/proj/.agent-fs-tools`, and its canonical path is the latter. So one existing
//! directory has one canonical path, and every comparison made on canonical paths (containment,
//! the hidden data directory, the workspace root and its ancestors, locks) is a comparison of
//! entries, never of what the model typed. (Linux's names are exact; macOS tells the stored name,
//! see `platform::stored_name`.)

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

use super::platform;
use crate::paths::os_error::{self, Cause};
use crate::paths::FileId;
#[cfg(unix)]
use crate::paths::Stat;

/// Where the stored name of an existing entry comes from ([`platform::stored_name`]; tests give
/// their own).
type StoredName<'a> = &'a dyn Fn(&Path) -> Option<OsString>;

/// `candidate` (an existing entry, not a symlink to follow) spelled with the name its volume
/// stores it under.
fn as_stored(candidate: PathBuf, stored_name: StoredName<'_>) -> PathBuf {
    match (stored_name(&candidate), candidate.parent()) {
        (Some(name), Some(parent)) if candidate.file_name() != Some(name.as_os_str()) => {
            parent.join(name)
        }
        _ => candidate,
    }
}

/// Linux's own limit on symlinks followed in one resolution.
const MAX_SYMLINKS: usize = 40;

/// A canonical absolute path: no `.`/`..`, no symlinks in the part that exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Canonical {
    pub path: PathBuf,
    /// Whether the whole path exists (after following a final symlink).
    pub exists: bool,
    /// The device and inode number of each existing entry of `path` below `/`, outermost first:
    /// which directories it is in, whatever names reach them (a bind mount, a macOS firmlink).
    pub identities: Vec<FileId>,
}

/// Which entry `meta` (read for `path`, not following a final link) describes. Windows: std's
/// metadata has no stable file id, so the entry is asked again through a handle.
fn identity(path: &Path, meta: &std::fs::Metadata) -> Result<FileId, Unresolvable> {
    #[cfg(unix)]
    {
        let _ = path;
        Ok(Stat::from(meta).id())
    }
    #[cfg(windows)]
    {
        let _ = meta;
        platform::lstat_path(path)
            .map(|stat| stat.id())
            .map_err(|error| Unresolvable {
                error,
                at: path.to_owned(),
            })
    }
}

/// `std::fs::canonicalize` of an existing path (every link followed), in this crate's canonical
/// form: on Windows without the verbatim prefix std gives it (`\\?\C:\x` is `C:\x`,
/// `\\?\UNC\server\share` is `\\server\share`), as [`root_of`] starts a path.
pub fn canonicalize_existing(path: &Path) -> io::Result<PathBuf> {
    let canonical = std::fs::canonicalize(path)?;
    #[cfg(windows)]
    {
        let below: PathBuf = canonical
            .components()
            .filter(|c| matches!(c, Component::Normal(_)))
            .collect();
        Ok(root_of(&canonical).join(below))
    }
    #[cfg(unix)]
    {
        Ok(canonical)
    }
}

/// Where the absolute `path` starts, the anchor of a walk down to it: `/` on Unix; on Windows its drive (`C:\`, upper case) or share
/// (`\\server\share\`), the verbatim prefix (`\\?\`) left out
/// (../../docs/windows.md#names-case-drive-letters-unc-reserved-names).
pub fn root_of(path: &Path) -> PathBuf {
    #[cfg(unix)]
    {
        let _ = path;
        PathBuf::from("/")
    }
    #[cfg(windows)]
    {
        use std::path::Prefix;
        let Some(Component::Prefix(prefix)) = path.components().next() else {
            return PathBuf::from("\\");
        };
        let mut root = match prefix.kind() {
            Prefix::Disk(letter) | Prefix::VerbatimDisk(letter) => {
                OsString::from(format!("{}:", char::from(letter.to_ascii_uppercase())))
            }
            Prefix::UNC(server, share) | Prefix::VerbatimUNC(server, share) => {
                let mut unc = OsString::from("\\\\");
                unc.push(server);
                unc.push("\\");
                unc.push(share);
                unc
            }
            Prefix::Verbatim(_) | Prefix::DeviceNS(_) => prefix.as_os_str().to_owned(),
        };
        root.push("\\");
        PathBuf::from(root)
    }
}

fn push_components(queue: &mut VecDeque<OsString>, path: &Path) {
    let parts: Vec<OsString> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_owned()),
            Component::ParentDir => Some(OsString::from("..")),
            _ => None,
        })
        .collect();
    for part in parts.into_iter().rev() {
        queue.push_front(part);
    }
}

/// A path that could not be resolved: the error, and the path (resolved so far) of the entry
/// where it happened, so that an error met outside the allowed trees can be kept from the model.
#[derive(Debug)]
pub struct Unresolvable {
    pub error: io::Error,
    pub at: PathBuf,
}

impl From<Unresolvable> for io::Error {
    fn from(e: Unresolvable) -> Self {
        e.error
    }
}

/// Resolves every symlink in the absolute `path`, including a final one and one whose target is
/// missing; the first missing component and everything after it are appended lexically.
/// A non-directory in the middle gives `ENOTDIR`; a symlink loop gives `ELOOP`.
pub fn canonicalize_lenient(path: &Path) -> io::Result<Canonical> {
    Ok(resolve(path)?)
}

/// [`canonicalize_lenient`], saying where an error happened.
pub fn resolve(path: &Path) -> Result<Canonical, Unresolvable> {
    resolve_with(path, &platform::stored_name)
}

fn resolve_with(path: &Path, stored_name: StoredName<'_>) -> Result<Canonical, Unresolvable> {
    debug_assert!(path.is_absolute());
    let mut pending = VecDeque::new();
    push_components(&mut pending, path);
    let mut out = root_of(path);
    // Components in `out`, and how many of them existed when the first missing one was added:
    // a `..` that climbs back out of the missing tail lands on an existing directory again, and
    // what follows it must be resolved (symlinks followed) like any existing path. Appending it
    // lexically would call `missing/../link` a plain, not-yet-existing `link`, hiding where the
    // link points (found by fuzz/path_resolution).
    let mut depth = 0usize;
    let mut existing_depth: Option<usize> = None;
    // The identities of the existing components of `out` (all of them until the first missing).
    let mut identities = Vec::new();
    let mut links = 0;
    while let Some(part) = pending.pop_front() {
        if part == ".." {
            if out.pop() {
                depth -= 1;
                identities.truncate(depth);
            }
            if existing_depth.is_some_and(|d| depth <= d) {
                existing_depth = None;
            }
            continue;
        }
        let candidate = out.join(&part);
        if existing_depth.is_some() {
            out = candidate;
            depth += 1;
            continue;
        }
        match std::fs::symlink_metadata(&candidate) {
            Ok(meta) if meta.file_type().is_symlink() => {
                links += 1;
                if links > MAX_SYMLINKS {
                    return Err(Unresolvable {
                        error: os_error::error(Cause::Loop),
                        at: candidate,
                    });
                }
                let target = std::fs::read_link(&candidate).map_err(|error| Unresolvable {
                    error,
                    at: candidate.clone(),
                })?;
                if target.is_absolute() {
                    out = root_of(&target);
                    depth = 0;
                    identities.clear();
                }
                push_components(&mut pending, &target);
            }
            Ok(meta) => {
                if !meta.is_dir() && pending.iter().any(|p| p != "..") {
                    return Err(Unresolvable {
                        error: os_error::error(Cause::NotADirectory),
                        at: candidate,
                    });
                }
                identities.push(identity(&candidate, &meta)?);
                out = as_stored(candidate, stored_name);
                depth += 1;
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                existing_depth = Some(depth);
                out = candidate;
                depth += 1;
            }
            Err(error) => {
                return Err(Unresolvable {
                    error,
                    at: candidate,
                })
            }
        }
    }
    let exists = existing_depth.is_none();
    Ok(Canonical {
        path: out,
        exists,
        identities,
    })
}

/// Like [`canonicalize_lenient`] but the final component is kept as it is (not followed), for
/// tools that act on a symlink itself (delete, move, listing). `exists` is whether that final
/// entry exists (as anything, including a dangling link).
pub fn canonicalize_parent(path: &Path) -> io::Result<Canonical> {
    Ok(resolve_parent(path)?)
}

/// [`canonicalize_parent`], saying where an error happened.
pub fn resolve_parent(path: &Path) -> Result<Canonical, Unresolvable> {
    resolve_parent_with(path, &platform::stored_name)
}

fn resolve_parent_with(
    path: &Path,
    stored_name: StoredName<'_>,
) -> Result<Canonical, Unresolvable> {
    let (Some(parent), Some(Component::Normal(name))) =
        (path.parent(), path.components().next_back())
    else {
        return resolve_with(path, stored_name);
    };
    let Canonical {
        path: parent,
        exists: parent_exists,
        mut identities,
    } = resolve_with(parent, stored_name)?;
    let full = parent.join(name);
    let entry = parent_exists
        .then(|| std::fs::symlink_metadata(&full).ok())
        .flatten();
    let exists = entry.is_some();
    let full = match entry {
        Some(meta) => {
            identities.push(identity(&full, &meta)?);
            as_stored(full, stored_name)
        }
        None => full,
    };
    Ok(Canonical {
        path: full,
        exists,
        identities,
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::paths::os_error::libc_codes;
    use std::os::unix::fs::symlink;

    fn real(p: &Path) -> PathBuf {
        std::fs::canonicalize(p).unwrap()
    }

    #[test]
    fn existing_paths_match_the_kernels_realpath() {
        let dir = tempfile::tempdir().unwrap();
        let root = real(dir.path());
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        symlink("a/b", root.join("l")).unwrap();
        symlink(root.join("l"), root.join("chain")).unwrap();
        for p in ["a/b", "l", "chain", "a/../l", "a/./b/.."] {
            let c = canonicalize_lenient(&root.join(p)).unwrap();
            assert_eq!(c.path, real(&root.join(p)), "{p}");
            assert!(c.exists);
        }
    }

    #[test]
    fn missing_tails_and_dangling_links_resolve_to_where_a_write_would_land() {
        let dir = tempfile::tempdir().unwrap();
        let root = real(dir.path());
        std::fs::create_dir(root.join("d")).unwrap();
        symlink(root.join("d/new.txt"), root.join("dangling")).unwrap();
        symlink("/nonexistent-outside/x", root.join("out")).unwrap();
        let c = canonicalize_lenient(&root.join("d/x/y")).unwrap();
        assert_eq!((c.path, c.exists), (root.join("d/x/y"), false));
        let c = canonicalize_lenient(&root.join("dangling")).unwrap();
        assert_eq!((c.path, c.exists), (root.join("d/new.txt"), false));
        let c = canonicalize_lenient(&root.join("out")).unwrap();
        assert_eq!(c.path, Path::new("/nonexistent-outside/x"));
    }

    #[test]
    fn dot_dot_climbs_from_the_resolved_directory_like_the_kernel() {
        let dir = tempfile::tempdir().unwrap();
        let root = real(dir.path());
        std::fs::create_dir_all(root.join("x/deep")).unwrap();
        symlink(root.join("x/deep"), root.join("link")).unwrap();
        // link/.. is x, not root.
        let c = canonicalize_lenient(&root.join("link/../f")).unwrap();
        assert_eq!(c.path, root.join("x/f"));
    }

    #[test]
    fn climbing_out_of_a_missing_tail_resolves_what_follows() {
        let dir = tempfile::tempdir().unwrap();
        let root = real(dir.path());
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        symlink("a/b", root.join("l")).unwrap();
        symlink("/nonexistent-outside/x", root.join("out")).unwrap();
        let c = canonicalize_lenient(&root.join("missing/../l")).unwrap();
        assert_eq!((c.path, c.exists), (root.join("a/b"), true));
        let c = canonicalize_lenient(&root.join("m1/m2/../../out")).unwrap();
        assert_eq!(c.path, Path::new("/nonexistent-outside/x"));
        // Still inside the missing tail: lexical.
        let c = canonicalize_lenient(&root.join("m1/m2/../l")).unwrap();
        assert_eq!((c.path, c.exists), (root.join("m1/l"), false));
    }

    #[test]
    fn loops_and_files_in_the_middle_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let root = real(dir.path());
        symlink("b", root.join("a")).unwrap();
        symlink("a", root.join("b")).unwrap();
        assert_eq!(
            canonicalize_lenient(&root.join("a"))
                .unwrap_err()
                .raw_os_error(),
            Some(libc_codes::ELOOP)
        );
        std::fs::write(root.join("f"), "").unwrap();
        assert_eq!(
            canonicalize_lenient(&root.join("f/x"))
                .unwrap_err()
                .raw_os_error(),
            Some(libc_codes::ENOTDIR)
        );
    }

    /// A volume that finds an entry under another name than it stores (APFS, case-insensitive:
    /// `Src` finds `src`) cannot be made here; this one says that `typed` is stored as `stored`,
    /// both real directories, so that what follows the substitution still exists.
    #[test]
    fn components_are_spelled_as_the_volume_stores_them() {
        let dir = tempfile::tempdir().unwrap();
        let root = real(dir.path());
        std::fs::create_dir_all(root.join("typed/sub")).unwrap();
        std::fs::create_dir_all(root.join("stored/sub")).unwrap();
        std::fs::write(root.join("stored/sub/file"), "").unwrap();
        symlink("stored/sub", root.join("link")).unwrap();
        symlink("file", root.join("stored/sub/here")).unwrap();
        let typed = root.join("typed");
        let volume = move |path: &Path| (path == typed).then(|| OsString::from("stored"));
        let c = resolve_with(&root.join("typed/sub/file"), &volume).unwrap();
        assert_eq!((c.path, c.exists), (root.join("stored/sub/file"), true));
        let c = resolve_with(&root.join("typed/sub/new/deeper"), &volume).unwrap();
        assert_eq!(
            (c.path, c.exists),
            (root.join("stored/sub/new/deeper"), false)
        );
        // The final entry kept as it is (a link, or what a move names) is spelled as stored too.
        let c = resolve_parent_with(&root.join("typed"), &volume).unwrap();
        assert_eq!((c.path, c.exists), (root.join("stored"), true));
        let c = resolve_parent_with(&root.join("typed/sub/here"), &volume).unwrap();
        assert_eq!((c.path, c.exists), (root.join("stored/sub/here"), true));
        // A name the volume stores as it was given is left alone.
        let c = resolve_with(&root.join("link/file"), &volume).unwrap();
        assert_eq!(c.path, root.join("stored/sub/file"));
    }

    #[test]
    fn identities_are_those_of_the_existing_entries_of_the_canonical_path() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let root = real(dir.path());
        std::fs::create_dir_all(root.join("x/deep")).unwrap();
        symlink(root.join("x/deep"), root.join("link")).unwrap();
        symlink("x", root.join("rel")).unwrap();
        let ids_of = |path: &Path| -> Vec<FileId> {
            path.ancestors()
                .filter(|a| a.parent().is_some())
                .map(|a| std::fs::symlink_metadata(a).unwrap())
                .map(|m| FileId {
                    dev: m.dev(),
                    ino: m.ino(),
                })
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect()
        };
        for (typed, existing) in [
            ("link/../deep", "x/deep"),
            ("rel/deep/new/more", "x/deep"),
            ("missing/../rel", "x"),
        ] {
            let c = canonicalize_lenient(&root.join(typed)).unwrap();
            assert_eq!(c.identities, ids_of(&root.join(existing)), "{typed}");
        }
        let c = canonicalize_parent(&root.join("link")).unwrap();
        assert_eq!(c.identities, ids_of(&root.join("link")));
    }

    #[test]
    fn parent_mode_keeps_the_final_link() {
        let dir = tempfile::tempdir().unwrap();
        let root = real(dir.path());
        symlink("/etc/passwd", root.join("l")).unwrap();
        let c = canonicalize_parent(&root.join("l")).unwrap();
        assert_eq!((c.path, c.exists), (root.join("l"), true));
    }
}

/// Windows only: type-checked by `check:targets`, run where the crate's tests run on Windows.
#[cfg(all(test, windows))]
mod windows_tests {
    use super::*;

    /// A walk starts at the drive (upper case) or the share, the verbatim prefix left out.
    #[test]
    fn a_path_starts_at_its_drive_or_share() {
        assert_eq!(root_of(Path::new(r"c:\Users\me")), PathBuf::from(r"C:\"));
        assert_eq!(root_of(Path::new(r"\\?\d:\x")), PathBuf::from(r"D:\"));
        assert_eq!(
            root_of(Path::new(r"\\?\UNC\server\share\x")),
            PathBuf::from(r"\\server\share\")
        );
        assert_eq!(
            root_of(Path::new(r"\\server\share\x")),
            PathBuf::from(r"\\server\share\")
        );
    }

    /// std's canonical form of an existing path loses its verbatim prefix.
    #[test]
    fn an_existing_path_is_canonical_without_the_verbatim_prefix() {
        let tmp = tempfile::tempdir().unwrap();
        let canonical = canonicalize_existing(tmp.path()).unwrap();
        assert!(!canonical.as_os_str().to_string_lossy().starts_with(r"\\?\"));
        assert!(canonical.is_dir());
    }
}
