//! The data directory (SPEC §7): the trash, the audit log and the crash journal of every
//! workspace. It is ours alone, so it is reached the way nothing else is trusted to be:
//!
//! - its path is canonical (symlinks the user set up are resolved once, when the options are
//!   read), and it is opened — and created where missing, private (0700) — one component at a
//!   time from `/` without following a symlink, then held by descriptor;
//! - everything in it is opened relative to that descriptor, also without following links, so
//!   a symlink put in its place or inside it later redirects nothing we write or read;
//! - the tools cannot reach it at all (the sandbox hides it, and a missing folder that is to
//!   hold it, see `paths::sandbox`).
//!
//! The directory is opened on first use, not when the workspace is created: a read-only host
//! never creates it, and one whose data directory cannot be created learns it from the call that
//! needed it.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::paths::fsops;

/// Mode of the directories we create in the data directory (and of the data directory itself).
const PRIVATE_DIR: u32 = 0o700;

/// One data directory, opened lazily and then held.
#[derive(Debug)]
pub struct DataDir {
    path: PathBuf,
    fd: Mutex<Option<Arc<OwnedFd>>>,
}

impl DataDir {
    /// The data directory at the canonical `path` (not opened yet).
    pub fn new(path: PathBuf) -> Self {
        Self {
            path,
            fd: Mutex::new(None),
        }
    }

    /// Its canonical path (for messages, and for the sandbox to hide).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The held descriptor of the data directory, opened (and, with `create`, created) on first
    /// use. `NotFound` when it does not exist and `create` is false.
    fn root(&self, create: bool) -> io::Result<Arc<OwnedFd>> {
        let mut slot = self.fd.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(fd) = slot.as_ref() {
            return Ok(fd.clone());
        }
        let fd = if create {
            fsops::ensure_dir_mode(Path::new("/"), &self.path, PRIVATE_DIR)?.0
        } else {
            fsops::open_dir(Path::new("/"), &self.path, false)?
        };
        let fd = Arc::new(fd);
        *slot = Some(fd.clone());
        Ok(fd)
    }

    /// A descriptor (`O_PATH`) of `<data dir>/<sub>`, `sub` being plain relative components
    /// such as `trash/<hash>`; with `create`, what is missing is created private (0700).
    /// `NotFound` when it does not exist and `create` is false.
    pub fn open(&self, sub: &Path, create: bool) -> io::Result<OwnedFd> {
        let root = self.root(create)?;
        if create {
            let start = fsops::open_dir_beneath(root.as_fd(), Path::new(""), false)?;
            Ok(fsops::make_dirs_beneath(start, sub, PRIVATE_DIR)?.0)
        } else {
            fsops::open_dir_beneath(root.as_fd(), sub, false)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::{symlink, PermissionsExt};

    #[test]
    fn it_is_created_private_and_held_by_descriptor() {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        let data = DataDir::new(base.join("data"));
        assert_eq!(
            data.open(Path::new("trash/abc"), false).unwrap_err().kind(),
            io::ErrorKind::NotFound,
            "nothing is created without asking"
        );
        assert!(!base.join("data").exists());
        let fd = data.open(Path::new("trash/abc"), true).unwrap();
        for dir in ["data", "data/trash", "data/trash/abc"] {
            let mode = fs::metadata(base.join(dir)).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "{dir} is private");
        }
        // Moved away and replaced by a link: what we hold still is the directory we opened.
        fs::rename(base.join("data"), base.join("moved")).unwrap();
        fs::create_dir(base.join("elsewhere")).unwrap();
        symlink(base.join("elsewhere"), base.join("data")).unwrap();
        let again = data.open(Path::new("audit"), true).unwrap();
        drop((fd, again));
        assert!(base.join("moved/audit").is_dir());
        assert!(fs::read_dir(base.join("elsewhere"))
            .unwrap()
            .next()
            .is_none());
    }

    #[test]
    fn a_symlink_in_its_place_is_never_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        fs::create_dir(base.join("outside")).unwrap();
        // Planted before the data directory was ever created.
        symlink(base.join("outside"), base.join("data")).unwrap();
        let data = DataDir::new(base.join("data"));
        assert!(data.open(Path::new("trash"), true).is_err());
        // A link below it is refused as well.
        let real = DataDir::new(base.join("real"));
        real.open(Path::new(""), true).unwrap();
        symlink(base.join("outside"), base.join("real/journal")).unwrap();
        assert!(real.open(Path::new("journal/x"), true).is_err());
        assert!(fs::read_dir(base.join("outside")).unwrap().next().is_none());
    }
}
