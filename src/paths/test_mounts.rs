//! Mounts for tests (root only; a test without one says it skipped): a bind mount gives a tree a
//! second path on the same file system, a tmpfs is another file system.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A mount at a directory, unmounted when dropped.
pub struct Mounted(PathBuf);

impl Mounted {
    /// Bind-mounts `from` at `at` (created), or `None` where mounting is not permitted.
    pub fn bind(from: &Path, at: &Path) -> Option<Self> {
        std::fs::create_dir_all(at).unwrap();
        Self::mount(&["--bind".as_ref(), from.as_os_str(), at.as_os_str()], at)
    }

    /// Mounts a small tmpfs at `at` (created), or `None` where mounting is not permitted.
    pub fn tmpfs(at: &Path) -> Option<Self> {
        std::fs::create_dir_all(at).unwrap();
        let args = ["-t", "tmpfs", "-o", "size=4m", "test-tmpfs"];
        let mut all: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
        all.push(at.as_os_str());
        Self::mount(&all, at)
    }

    fn mount(args: &[&std::ffi::OsStr], at: &Path) -> Option<Self> {
        let mounted = Command::new("mount")
            .args(args)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        mounted.then(|| Mounted(at.to_owned()))
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let done = Command::new("umount").arg(&self.0).status();
        if !done.is_ok_and(|s| s.success()) {
            let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        }
    }
}
