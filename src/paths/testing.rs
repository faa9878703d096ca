//! What tests ask of the operating system beyond the crate's own API (making links, setting
//! modes, owners, times and extended attributes, swapping entries), so that test code outside
//! `paths/` names no platform type either. Test builds only.

use std::fs;
use std::io;
use std::path::Path;

/// A permission set from Unix mode bits, and back: `std`'s `PermissionsExt`, named here.
pub trait Modes {
    /// The permissions whose mode bits are `mode`.
    fn from_mode(mode: u32) -> Self;
    /// The whole `st_mode` these permissions were read with (kind and permission bits).
    fn mode(&self) -> u32;
}

impl Modes for fs::Permissions {
    fn from_mode(mode: u32) -> Self {
        std::os::unix::fs::PermissionsExt::from_mode(mode)
    }

    fn mode(&self) -> u32 {
        std::os::unix::fs::PermissionsExt::mode(self)
    }
}

/// Makes `link` a symbolic link to `target`.
pub fn symlink(target: impl AsRef<Path>, link: impl AsRef<Path>) -> io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

/// Gives `path` (followed if a link) the owner `uid` and group `gid` where given.
pub fn chown(path: impl AsRef<Path>, uid: Option<u32>, gid: Option<u32>) -> io::Result<()> {
    std::os::unix::fs::chown(path, uid, gid)
}

/// Gives `path` itself (a link is not followed) the owner `uid` and group `gid` where given.
pub fn lchown(path: impl AsRef<Path>, uid: Option<u32>, gid: Option<u32>) -> io::Result<()> {
    std::os::unix::fs::lchown(path, uid, gid)
}

/// Swaps the entries `a` and `b` atomically (`RENAME_EXCHANGE`).
pub fn exchange(a: &Path, b: &Path) {
    rustix::fs::renameat_with(
        rustix::fs::CWD,
        a,
        rustix::fs::CWD,
        b,
        rustix::fs::RenameFlags::EXCHANGE,
    )
    .unwrap();
}

/// Sets the access and modification times of `path` itself (a link is not followed).
pub fn set_times(path: &Path, secs: i64, nanos: u32) {
    let at = rustix::fs::Timespec {
        tv_sec: secs,
        tv_nsec: nanos.into(),
    };
    let times = rustix::fs::Timestamps {
        last_access: at,
        last_modification: at,
    };
    rustix::fs::utimensat(
        rustix::fs::CWD,
        path,
        &times,
        rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
    )
    .unwrap();
}

/// Sets the extended attribute `name` of `path` (followed if a link) to `value`.
pub fn set_xattr(path: &Path, name: &str, value: &[u8]) -> io::Result<()> {
    rustix::fs::setxattr(path, name, value, rustix::fs::XattrFlags::empty())?;
    Ok(())
}

/// The extended attribute `name` of `path` itself (a link is not followed), if it has it (up
/// to 4 KiB of it).
pub fn xattr(path: &Path, name: &str) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; 4096];
    let n = rustix::fs::lgetxattr(path, name, &mut buf[..]).ok()?;
    buf.truncate(n);
    Some(buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::{EntryKind, Stat};

    /// Each helper does what it says, seen through the crate's own `Stat`.
    #[test]
    fn the_helpers_change_what_they_say() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        fs::write(&a, b"a").unwrap();
        fs::create_dir(&b).unwrap();
        fs::set_permissions(&a, fs::Permissions::from_mode(0o640)).unwrap();
        assert_eq!(
            fs::metadata(&a).unwrap().permissions().mode() & 0o7777,
            0o640
        );
        set_times(&a, 1_000_000, 5);
        assert_eq!(Stat::from(&fs::metadata(&a).unwrap()).mtime, (1_000_000, 5));
        exchange(&a, &b);
        assert!(fs::metadata(&a).unwrap().is_dir());
        symlink("b", dir.path().join("l")).unwrap();
        let link = fs::symlink_metadata(dir.path().join("l")).unwrap();
        assert_eq!(Stat::from(&link).kind(), EntryKind::Symlink);
        let me = crate::paths::process::effective_user();
        lchown(dir.path().join("l"), Some(me), None).unwrap();
        chown(&b, Some(me), None).unwrap();
        assert_eq!(Stat::from(&fs::metadata(&b).unwrap()).uid, me);
        if set_xattr(&b, "user.t", b"v").is_ok() {
            assert_eq!(xattr(&b, "user.t").as_deref(), Some(&b"v"[..]));
        }
        assert_eq!(xattr(&b, "user.none"), None);
    }
}
