//! What tests ask of the operating system beyond the crate's own API (making links, setting
//! modes, owners, times and extended attributes, swapping entries), so that test code outside
//! `paths/` names no platform type either. Test builds only.
//!
//! On Windows: modes are the read-only bit, owners are not set (there are none to give, as
//! `fsops::give_owner` says; tests that give one are Unix tests), extended attributes do not
//! exist (their tests are Unix tests), and entries are swapped by three renames, not atomically
//! (a test that needs an atomic exchange is a Unix test).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// A permission set from Unix mode bits, and back: `std`'s `PermissionsExt`, named here.
pub trait Modes {
    /// The permissions whose mode bits are `mode`.
    fn from_mode(mode: u32) -> Self;
    /// The whole `st_mode` these permissions were read with (kind and permission bits).
    fn mode(&self) -> u32;
}

#[cfg(unix)]
impl Modes for fs::Permissions {
    fn from_mode(mode: u32) -> Self {
        std::os::unix::fs::PermissionsExt::from_mode(mode)
    }

    fn mode(&self) -> u32 {
        std::os::unix::fs::PermissionsExt::mode(self)
    }
}

/// Windows: read-only when no write bit is set; the mode read back is the synthesised one.
#[cfg(windows)]
impl Modes for fs::Permissions {
    fn from_mode(mode: u32) -> Self {
        // `Permissions` has no constructor: one is read and given the read-only bit.
        let mut permissions = fs::metadata(std::env::temp_dir())
            .expect("the temp directory exists")
            .permissions();
        permissions.set_readonly(mode & 0o222 == 0);
        permissions
    }

    fn mode(&self) -> u32 {
        if self.readonly() {
            0o100444
        } else {
            0o100666
        }
    }
}

/// The permission bits of a file set to `mode`, as [`Modes::mode`] reads them back on this
/// platform: all of them on Unix; on Windows, which keeps only whether it may be written,
/// `0o666` or `0o444`.
pub fn kept_mode(mode: u32) -> u32 {
    if cfg!(windows) {
        if mode & 0o222 == 0 {
            0o444
        } else {
            0o666
        }
    } else {
        mode & 0o7777
    }
}

/// `rel` (`/` between its names) below `base`, joined as the crate joins paths, with this
/// system's separator: on Windows a path joined with a `/` in it is not in its normal form.
pub fn below(base: &Path, rel: &str) -> PathBuf {
    rel.split('/')
        .fold(base.to_owned(), |path, name| path.join(name))
}

/// `path` below `base`, with `/` between its names on every platform: what a test lists.
pub fn slashed_below(path: &Path, base: &Path) -> String {
    let rel = path.strip_prefix(base).expect("a path below the base");
    let names: Vec<_> = rel.iter().map(|name| name.to_string_lossy()).collect();
    names.join("/")
}

/// Every name below `root` (a link not followed), `/` between names, sorted: temp names
/// included, so that a test sees none left.
pub fn names_below(root: &Path) -> Vec<String> {
    let mut names = Vec::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            names.push(slashed_below(&path, root));
            if path.is_dir() && !path.is_symlink() {
                stack.push(path);
            }
        }
    }
    names.sort();
    names
}

/// The permission bits of a file set to `mode`, as the crate's `Stat` (and so an archive)
/// records them: all of them on Unix; on Windows `0o644`, or `0o444` when read-only.
pub fn recorded_mode(mode: u32) -> u32 {
    match kept_mode(mode) {
        0o666 if cfg!(windows) => 0o644,
        kept => kept,
    }
}

/// The entry at `path` itself (a link is not followed), as the crate's `Stat` describes it.
pub fn lstat(path: &Path) -> io::Result<crate::paths::Stat> {
    #[cfg(unix)]
    {
        fs::symlink_metadata(path).map(|meta| crate::paths::Stat::from(&meta))
    }
    #[cfg(windows)]
    {
        crate::paths::platform::lstat_path(path)
    }
}

/// The entry at `path`, a link followed, as the crate's `Stat` describes it.
pub fn stat(path: &Path) -> io::Result<crate::paths::Stat> {
    #[cfg(unix)]
    {
        fs::metadata(path).map(|meta| crate::paths::Stat::from(&meta))
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        use windows_sys::Win32::Storage::FileSystem::{
            FILE_FLAG_BACKUP_SEMANTICS, FILE_READ_ATTRIBUTES,
        };
        // Opened only to read its attributes (a directory too: backup semantics).
        let file = fs::OpenOptions::new()
            .access_mode(FILE_READ_ATTRIBUTES)
            .share_mode(crate::paths::platform::nt::SHARE_ALL)
            .custom_flags(FILE_FLAG_BACKUP_SEMANTICS)
            .open(path)?;
        crate::paths::fsops::fstat(&file)
    }
}

/// Makes `link` a symbolic link to `target`.
#[cfg(unix)]
pub fn symlink(target: impl AsRef<Path>, link: impl AsRef<Path>) -> io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

/// Makes `link` a symbolic link to `target`: a directory link when `target` (relative to the
/// link's directory) is a directory now.
#[cfg(windows)]
pub fn symlink(target: impl AsRef<Path>, link: impl AsRef<Path>) -> io::Result<()> {
    let (target, link) = (target.as_ref(), link.as_ref());
    let seen = link
        .parent()
        .map_or(target.to_owned(), |dir| dir.join(target));
    if seen.is_dir() {
        std::os::windows::fs::symlink_dir(target, link)
    } else {
        std::os::windows::fs::symlink_file(target, link)
    }
}

/// Windows: no owner to give (see the module docs).
#[cfg(windows)]
pub fn lchown(path: impl AsRef<Path>, uid: Option<u32>, gid: Option<u32>) -> io::Result<()> {
    let _ = (path.as_ref(), uid, gid);
    Ok(())
}

/// Gives `path` (followed if a link) the owner `uid` and group `gid` where given.
#[cfg(unix)]
pub fn chown(path: impl AsRef<Path>, uid: Option<u32>, gid: Option<u32>) -> io::Result<()> {
    std::os::unix::fs::chown(path, uid, gid)
}

/// Gives `path` itself (a link is not followed) the owner `uid` and group `gid` where given.
#[cfg(unix)]
pub fn lchown(path: impl AsRef<Path>, uid: Option<u32>, gid: Option<u32>) -> io::Result<()> {
    std::os::unix::fs::lchown(path, uid, gid)
}

/// Swaps the entries `a` and `b` atomically (`RENAME_EXCHANGE`).
#[cfg(unix)]
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

/// Swaps the entries `a` and `b` by three renames through a free name beside `a`: Windows has
/// no atomic exchange, and a test's swap needs none, since it runs at a race point while the
/// code under test waits (a racer that needs atomicity is a Unix test).
#[cfg(windows)]
pub fn exchange(a: &Path, b: &Path) {
    let mut aside = a.file_name().expect("a names an entry").to_owned();
    aside.push(".exchanging");
    let aside = a.with_file_name(aside);
    fs::rename(a, &aside).unwrap();
    fs::rename(b, a).unwrap();
    fs::rename(&aside, b).unwrap();
}

/// Sets the access and modification times of `path` itself (a link is not followed).
#[cfg(unix)]
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

/// Sets the access and modification times of `path` itself (a link is not followed).
#[cfg(windows)]
pub fn set_times(path: &Path, secs: i64, nanos: u32) {
    use std::os::windows::fs::OpenOptionsExt;
    use windows_sys::Win32::Storage::FileSystem::{
        FILE_FLAG_BACKUP_SEMANTICS, FILE_FLAG_OPEN_REPARSE_POINT, FILE_WRITE_ATTRIBUTES,
    };
    let at = if secs >= 0 {
        std::time::UNIX_EPOCH + std::time::Duration::new(secs as u64, nanos)
    } else {
        std::time::UNIX_EPOCH - std::time::Duration::from_secs(secs.unsigned_abs())
            + std::time::Duration::from_nanos(nanos.into())
    };
    let file = fs::OpenOptions::new()
        .access_mode(FILE_WRITE_ATTRIBUTES)
        .custom_flags(FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT)
        .open(path)
        .unwrap();
    file.set_times(fs::FileTimes::new().set_accessed(at).set_modified(at))
        .unwrap();
}

/// Sets the extended attribute `name` of `path` (followed if a link) to `value`.
#[cfg(unix)]
pub fn set_xattr(path: &Path, name: &str, value: &[u8]) -> io::Result<()> {
    rustix::fs::setxattr(path, name, value, rustix::fs::XattrFlags::empty())?;
    Ok(())
}

/// The extended attribute `name` of `path` itself (a link is not followed), if it has it (up
/// to 4 KiB of it).
#[cfg(unix)]
pub fn xattr(path: &Path, name: &str) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; 4096];
    let n = rustix::fs::lgetxattr(path, name, &mut buf[..]).ok()?;
    buf.truncate(n);
    Some(buf)
}

/// A handle of the directory at `path` (Windows opens a directory only with backup semantics).
pub fn open_dir(path: &Path) -> crate::paths::Dir {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(windows)]
    std::os::windows::fs::OpenOptionsExt::custom_flags(
        &mut options,
        windows_sys::Win32::Storage::FileSystem::FILE_FLAG_BACKUP_SEMANTICS,
    );
    crate::paths::Dir::from(options.open(path).expect("the directory opens"))
}

/// The crate's own handle of the directory at the canonical `path`, opened one component at a
/// time from its root (`/`, or its drive or share on Windows) without following a link.
pub fn open_dir_from_root(path: &Path) -> crate::paths::Dir {
    let root = crate::paths::canonical::root_of(path);
    crate::paths::fsops::open_dir(&root, path, false).expect("the directory opens")
}

/// How many of this process's descriptors are open on `path` (`/proc/self/fd`): what proves that
/// nothing of the data directory stays held between calls.
#[cfg(target_os = "linux")]
pub fn descriptors_on(path: &Path) -> usize {
    fs::read_dir("/proc/self/fd")
        .expect("/proc is mounted")
        .filter_map(|entry| fs::read_link(entry.ok()?.path()).ok())
        .filter(|target| target == path)
        .count()
}

#[cfg(all(test, unix))]
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
        let link = lstat(&dir.path().join("l")).unwrap();
        assert_eq!(link.kind(), EntryKind::Symlink);
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

/// Runs `work` on a thread of its own whose file-system identity is the user `uid` (Linux's
/// `setfsuid`, which changes the calling thread only; threads it starts inherit it): its opens
/// are checked as that user's, and a process running as root loses, on that thread, the
/// privileges of using others' files as its own (`CAP_FOWNER`, `CAP_DAC_OVERRIDE`). `None` if
/// the identity could not be taken (only root may take any).
#[cfg(target_os = "linux")]
pub fn as_file_system_user<T: Send>(uid: u32, work: impl FnOnce() -> T + Send) -> Option<T> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                // SAFETY: `setfsuid` takes integers and changes this thread's credentials only;
                // `-1` (invalid) changes nothing and returns the identity in force.
                let now = unsafe {
                    libc::syscall(libc::SYS_setfsuid, uid);
                    libc::syscall(libc::SYS_setfsuid, -1)
                };
                (now == i64::from(uid)).then(work)
            })
            .join()
            .expect("the work does not panic")
    })
}
