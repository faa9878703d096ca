//! Race-free filesystem operations (SPEC §3.3): every directory is opened beneath its allowed
//! tree with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` (or, on kernels without it, a
//! component walk with `O_NOFOLLOW`), and every file operation is an `*at` call on such a
//! descriptor. A symlink or directory swapped in after the sandbox check makes the operation fail
//! (`ELOOP`/`EXDEV`), it never redirects it.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, FileType, Gid, Mode, OFlags, ResolveFlags, Stat, Uid};

use super::xattrs;
use crate::error::libc_codes;

fn errno(e: rustix::io::Errno) -> io::Error {
    io::Error::from(e)
}

/// The kind of a directory entry, from `lstat` (symlinks are never followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Directory,
    Symlink,
    /// FIFO, socket or device: refused by every tool.
    Special,
}

impl EntryKind {
    pub fn of(stat: &Stat) -> Self {
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::RegularFile => Self::File,
            FileType::Directory => Self::Directory,
            FileType::Symlink => Self::Symlink,
            _ => Self::Special,
        }
    }
}

fn open_anchor(anchor: &Path) -> io::Result<OwnedFd> {
    rustix::fs::open(
        anchor,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(errno)
}

fn relative<'a>(anchor: &Path, dir: &'a Path) -> io::Result<&'a Path> {
    dir.strip_prefix(anchor)
        .map_err(|_| io::Error::from_raw_os_error(libc_codes::EXDEV))
}

/// Opens the directory `dir` (canonical, inside `anchor`) without following any symlink on the
/// way. `readable` gives a descriptor that can be listed and fsynced; otherwise an `O_PATH` one.
pub fn open_dir(anchor: &Path, dir: &Path, readable: bool) -> io::Result<OwnedFd> {
    let rel = relative(anchor, dir)?;
    let anchor_fd = open_anchor(anchor)?;
    let access = if readable {
        OFlags::RDONLY
    } else {
        OFlags::PATH
    };
    let flags = access | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let rel_arg: &Path = if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    };
    match rustix::fs::openat2(
        &anchor_fd,
        rel_arg,
        flags,
        Mode::empty(),
        ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
    ) {
        Err(e) if e.raw_os_error() == libc_codes::ENOSYS => {
            walk_without_openat2(anchor_fd, rel, flags)
        }
        other => other.map_err(errno),
    }
}

/// The fallback for kernels before 5.6: one `openat(O_NOFOLLOW | O_DIRECTORY)` per component.
fn walk_without_openat2(anchor_fd: OwnedFd, rel: &Path, flags: OFlags) -> io::Result<OwnedFd> {
    let mut current = anchor_fd;
    let parts: Vec<&OsStr> = rel
        .components()
        .map(|c| match c {
            Component::Normal(n) => Ok(n),
            _ => Err(io::Error::from_raw_os_error(libc_codes::EXDEV)),
        })
        .collect::<io::Result<_>>()?;
    if parts.is_empty() {
        return rustix::fs::openat(&current, ".", flags, Mode::empty()).map_err(errno);
    }
    for (i, part) in parts.iter().enumerate() {
        let step = if i + 1 == parts.len() {
            flags
        } else {
            OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
        };
        current = rustix::fs::openat(&current, *part, step, Mode::empty()).map_err(errno)?;
    }
    Ok(current)
}

/// `mkdir -p dir` beneath `anchor`, creating each missing component with `mkdirat` and
/// descending with `O_NOFOLLOW`. Returns an `O_PATH` descriptor of `dir` and whether anything was
/// created. An existing non-directory component → `ENOTDIR`.
pub fn ensure_dir(anchor: &Path, dir: &Path) -> io::Result<(OwnedFd, bool)> {
    // Fast path: it already exists.
    match open_dir(anchor, dir, false) {
        Ok(fd) => return Ok((fd, false)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let rel = relative(anchor, dir)?;
    let mut current = open_anchor(anchor)?;
    let mut created = false;
    let step = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    for component in rel.components() {
        let Component::Normal(part) = component else {
            return Err(io::Error::from_raw_os_error(libc_codes::EXDEV));
        };
        match rustix::fs::mkdirat(&current, part, Mode::from_raw_mode(0o777)) {
            Ok(()) => created = true,
            Err(e) if e == rustix::io::Errno::EXIST => {}
            Err(e) => return Err(errno(e)),
        }
        current = rustix::fs::openat(&current, part, step, Mode::empty()).map_err(errno)?;
    }
    Ok((current, created))
}

/// `lstat` of `name` in `dir`; `None` if it does not exist.
pub fn lstat_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<Option<Stat>> {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => Ok(Some(stat)),
        Err(e) if e == rustix::io::Errno::NOENT => Ok(None),
        Err(e) => Err(errno(e)),
    }
}

/// Opens `name` in `dir` for reading without following a symlink and without blocking on a FIFO;
/// the caller checks the type with `fstat` before reading.
pub fn open_for_read(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<File> {
    let flags =
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    rustix::fs::openat(dir, name, flags, Mode::empty())
        .map(File::from)
        .map_err(errno)
}

/// Opens `name` in `dir` for appending (creating it, mode 0666 minus umask, when `create`).
pub fn open_for_append(dir: BorrowedFd<'_>, name: &OsStr, create: bool) -> io::Result<File> {
    let mut flags = OFlags::WRONLY
        | OFlags::APPEND
        | OFlags::NOFOLLOW
        | OFlags::NONBLOCK
        | OFlags::NOCTTY
        | OFlags::CLOEXEC;
    if create {
        flags |= OFlags::CREATE | OFlags::EXCL;
    }
    rustix::fs::openat(dir, name, flags, Mode::from_raw_mode(0o666))
        .map(File::from)
        .map_err(errno)
}

/// Opens the existing `name` in `dir` for reading and appending through one descriptor, without
/// following a symlink and without blocking on a FIFO: the caller checks (with `fstat` and reads
/// on this very descriptor) that it is the file it planned on, then appends through it, so
/// nothing swapped in under the name between the check and the write can receive the bytes.
pub fn open_for_update(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<File> {
    let flags = OFlags::RDWR
        | OFlags::APPEND
        | OFlags::NOFOLLOW
        | OFlags::NONBLOCK
        | OFlags::NOCTTY
        | OFlags::CLOEXEC;
    rustix::fs::openat(dir, name, flags, Mode::empty())
        .map(File::from)
        .map_err(errno)
}

/// The file's type and size as `fstat` sees them.
pub fn fstat(file: &File) -> io::Result<Stat> {
    rustix::fs::fstat(file).map_err(errno)
}

/// Marker in the names of our temporary files, so a later run can recognise leftovers.
pub const TEMP_MARKER: &str = ".agent-fs-tools.tmp";

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Whether `name` is one of our temporary files (an atomic write in flight, or one a crash left
/// behind): listings and searches skip them, as they are not the user's files.
pub fn is_temp_name(name: &OsStr) -> bool {
    name.as_bytes().ends_with(TEMP_MARKER.as_bytes())
}

/// A fresh, recognisable temporary name next to `name` (≤ 255 bytes).
pub fn temp_name(name: &OsStr) -> OsString {
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let suffix = format!(".{}.{n}{TEMP_MARKER}", std::process::id());
    let bytes = name.as_bytes();
    let keep = bytes.len().min(255 - 1 - suffix.len());
    let mut out = Vec::with_capacity(keep + suffix.len() + 1);
    out.push(b'.');
    out.extend_from_slice(&bytes[..keep]);
    out.extend_from_slice(suffix.as_bytes());
    std::ffi::OsStr::from_bytes(&out).to_owned()
}

/// fsyncs a directory given an `O_PATH` descriptor of it (best effort: a directory we may not
/// read cannot be fsynced, and the rename is still atomic).
pub fn fsync_dir(dir: BorrowedFd<'_>) {
    if let Ok(fd) = rustix::fs::openat(
        dir,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        let _ = rustix::fs::fsync(&fd);
    }
}

/// Replaces (or creates) `name` in `dir` atomically: the temp file `temp` (a [`temp_name`] of
/// `name`, which the caller may journal first) in the same directory, written, given what the
/// file it replaces had (`replaced`, its stat; see [`keep_metadata_of`]), fsynced, renamed over
/// `name`, and the directory fsynced. A new file gets mode 0666 minus umask. On any failure the
/// temp file is removed and `name` is untouched.
pub fn write_atomic(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    temp: &OsStr,
    data: &[u8],
    replaced: Option<&Stat>,
) -> io::Result<()> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(dir, temp, flags, Mode::from_raw_mode(0o666)).map_err(errno)?;
    let result = (|| {
        let mut file = File::from(fd);
        file.write_all(data)?;
        if let Some(old) = replaced {
            keep_metadata_of(dir, name, old, &file)?;
        }
        file.sync_all()?;
        rustix::fs::renameat(dir, temp, dir, name).map_err(errno)
    })();
    if result.is_err() {
        let _ = rustix::fs::unlinkat(dir, temp, AtFlags::empty());
    } else {
        fsync_dir(dir);
    }
    result
}

/// Gives `new` (the next version of `name` in `dir`, whose stat was `old`) what a rewrite must
/// not take from the user: the owner and group (where we may, see [`give_owner`]), extended
/// attributes and ACLs (read from `name` if it is still that file and readable; not file
/// capabilities: new content does not inherit privileges), then the permission bits.
fn keep_metadata_of(dir: BorrowedFd<'_>, name: &OsStr, old: &Stat, new: &File) -> io::Result<()> {
    give_owner(new.as_fd(), old.st_uid, old.st_gid)?;
    if let Ok(current) = open_for_read(dir, name) {
        if fstat(&current).is_ok_and(|now| (now.st_dev, now.st_ino) == (old.st_dev, old.st_ino)) {
            let mut kept = xattrs::read_all(current.as_fd())?;
            kept.retain(|x| x.name != b"security.capability");
            xattrs::write_all(new.as_fd(), &kept)?;
        }
    }
    rustix::fs::fchmod(new, Mode::from_raw_mode(old.st_mode & 0o7777)).map_err(errno)
}

/// Gives `fd` the owner `uid` and group `gid`, as far as we may: only a privileged process may
/// give a file away (`EPERM`), but an owner may still set the group to one of theirs. What we may
/// not set stays ours, as with `mv`, `cp -p` and `tar -x`; any other failure is an error.
pub fn give_owner(fd: BorrowedFd<'_>, uid: u32, gid: u32) -> io::Result<()> {
    as_far_as_we_may(uid, gid, |uid, gid| rustix::fs::fchown(fd, uid, gid))
}

/// [`give_owner`] for the symlink `name` in `dir` itself.
pub fn give_link_owner(dir: BorrowedFd<'_>, name: &OsStr, uid: u32, gid: u32) -> io::Result<()> {
    as_far_as_we_may(uid, gid, |uid, gid| {
        rustix::fs::chownat(dir, name, uid, gid, AtFlags::SYMLINK_NOFOLLOW)
    })
}

fn as_far_as_we_may(
    uid: u32,
    gid: u32,
    chown: impl Fn(Option<Uid>, Option<Gid>) -> rustix::io::Result<()>,
) -> io::Result<()> {
    let (uid, gid) = (Uid::from_raw(uid), Gid::from_raw(gid));
    match chown(Some(uid), Some(gid)) {
        Err(rustix::io::Errno::PERM) => match chown(None, Some(gid)) {
            Ok(()) | Err(rustix::io::Errno::PERM) => Ok(()),
            Err(e) => Err(e.into()),
        },
        other => other.map_err(errno),
    }
}

/// Reads a symlink's target.
pub fn read_link_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<OsString> {
    let target = rustix::fs::readlinkat(dir, name, Vec::new()).map_err(errno)?;
    Ok(OsStr::from_bytes(target.as_bytes()).to_owned())
}

/// Borrow helper so callers can pass an `OwnedFd` where a `BorrowedFd` is wanted.
pub fn borrow(fd: &OwnedFd) -> BorrowedFd<'_> {
    fd.as_fd()
}

/// Renames `from_name` in `from_dir` to `to_name` in `to_dir` without replacing an existing
/// destination (`RENAME_NOREPLACE`: an existing one → `EEXIST`).
pub fn rename_noreplace(
    from_dir: BorrowedFd<'_>,
    from_name: &OsStr,
    to_dir: BorrowedFd<'_>,
    to_name: &OsStr,
) -> io::Result<()> {
    rustix::fs::renameat_with(
        from_dir,
        from_name,
        to_dir,
        to_name,
        rustix::fs::RenameFlags::NOREPLACE,
    )
    .map_err(errno)
}

/// A readable descriptor of the same directory as the (`O_PATH`) `dir`, for operations that
/// need one (listing, fsync, `futimens` beneath it).
pub fn reopen_readable(dir: BorrowedFd<'_>) -> io::Result<OwnedFd> {
    rustix::fs::openat(
        dir,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(errno)
}

/// Unlinks a file or symlink `name` in `dir`.
pub fn unlink_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    rustix::fs::unlinkat(dir, name, AtFlags::empty()).map_err(errno)
}

/// Removes the empty directory `name` in `dir`.
pub fn rmdir_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR).map_err(errno)
}

/// Opens the subdirectory `name` of `dir` for reading its entries, never following a symlink (a
/// link there is `ELOOP`/`ENOTDIR`).
pub fn open_subdir(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<OwnedFd> {
    rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(errno)
}

/// The names in a directory (without `.` and `..`), via a readable descriptor of it.
pub fn list_names(dir: BorrowedFd<'_>) -> io::Result<Vec<OsString>> {
    let readable = rustix::fs::openat(
        dir,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(errno)?;
    let mut names = Vec::new();
    for entry in rustix::fs::Dir::read_from(&readable).map_err(errno)? {
        let entry = entry.map_err(errno)?;
        let name = entry.file_name().to_bytes();
        if name != b"." && name != b".." {
            names.push(OsStr::from_bytes(name).to_owned());
        }
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn setup() -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(base.join("R/a")).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        (dir, base)
    }

    #[test]
    fn a_swapped_symlink_is_refused_not_followed() {
        let (_d, base) = setup();
        let r = base.join("R");
        std::fs::remove_dir(r.join("a")).unwrap();
        symlink(base.join("outside"), r.join("a")).unwrap();
        let e = open_dir(&r, &r.join("a"), false).unwrap_err();
        assert!(matches!(
            e.raw_os_error(),
            Some(libc_codes::ELOOP) | Some(libc_codes::ENOTDIR)
        ));
        let e = ensure_dir(&r, &r.join("a/b")).unwrap_err();
        assert!(matches!(
            e.raw_os_error(),
            Some(libc_codes::ELOOP) | Some(libc_codes::ENOTDIR)
        ));
        assert!(!base.join("outside/b").exists());
    }

    #[test]
    fn ensure_dir_creates_each_missing_component() {
        let (_d, base) = setup();
        let r = base.join("R");
        let (_fd, created) = ensure_dir(&r, &r.join("a/x/y")).unwrap();
        assert!(created && r.join("a/x/y").is_dir());
        let (_fd, created) = ensure_dir(&r, &r.join("a/x/y")).unwrap();
        assert!(!created);
    }

    /// A rewrite through temp file + rename must not strip what the user set on the file: owner
    /// and group (where we may), user attributes, ACLs. File capabilities are not carried to new
    /// content.
    #[test]
    fn write_atomic_keeps_owner_attributes_and_acls_but_not_capabilities() {
        use std::os::unix::fs::MetadataExt;
        let (_d, base) = setup();
        let r = base.join("R");
        let f = r.join("a/shared.txt");
        std::fs::write(&f, "old").unwrap();
        let flags = rustix::fs::XattrFlags::empty();
        let acl = xattrs::sample_access_acl();
        rustix::fs::setxattr(&f, "user.origin", b"kept", flags).unwrap();
        rustix::fs::setxattr(&f, "system.posix_acl_access", &acl, flags).unwrap();
        let root = rustix::process::geteuid().is_root();
        // Version 2 capabilities: CAP_NET_BIND_SERVICE permitted (only root may set them).
        let caps = [0x0200_0000u32, 1 << 10, 0, 0, 0]
            .map(u32::to_le_bytes)
            .concat();
        // (A change of owner clears capabilities: the owner first.)
        let with_caps = root
            && std::os::unix::fs::chown(&f, Some(1234), Some(5678)).is_ok()
            && rustix::fs::setxattr(&f, "security.capability", &caps, flags).is_ok();
        let dir = open_dir(&r, &r.join("a"), false).unwrap();
        let name = OsStr::new("shared.txt");
        let old = lstat_at(dir.as_fd(), name).unwrap().unwrap();
        write_atomic(dir.as_fd(), name, &temp_name(name), b"new", Some(&old)).unwrap();

        let get = |attr: &str| {
            let mut buf = vec![0u8; 256];
            let n = rustix::fs::getxattr(&f, attr, &mut buf[..]).ok()?;
            buf.truncate(n);
            Some(buf)
        };
        let meta = std::fs::metadata(&f).unwrap();
        assert_ne!(
            meta.ino(),
            old.st_ino,
            "it was replaced, not written in place"
        );
        assert_eq!(get("user.origin").as_deref(), Some(&b"kept"[..]));
        assert_eq!(get("system.posix_acl_access"), Some(acl));
        assert_eq!(meta.mode(), old.st_mode);
        if with_caps {
            assert_eq!((meta.uid(), meta.gid()), (1234, 5678));
            assert_eq!(get("security.capability"), None);
        } else {
            eprintln!("owner and capabilities not checked: only root may set them");
        }
    }

    #[test]
    fn write_atomic_replaces_keeps_mode_and_leaves_no_temp() {
        use std::os::unix::fs::PermissionsExt;
        let (_d, base) = setup();
        let r = base.join("R");
        let f = r.join("a/f.sh");
        std::fs::write(&f, "old").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o751)).unwrap();
        let dir = open_dir(&r, &r.join("a"), false).unwrap();
        let name = OsStr::new("f.sh");
        let old = lstat_at(dir.as_fd(), name).unwrap().unwrap();
        write_atomic(dir.as_fd(), name, &temp_name(name), b"new", Some(&old)).unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"new");
        assert_eq!(
            std::fs::metadata(&f).unwrap().permissions().mode() & 0o777,
            0o751
        );
        let names: Vec<_> = std::fs::read_dir(r.join("a"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![OsString::from("f.sh")]);
    }

    #[test]
    fn reading_a_fifo_does_not_block() {
        let (_d, base) = setup();
        let r = base.join("R");
        let fifo = r.join("a/fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            FileType::Fifo,
            Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
        let dir = open_dir(&r, &r.join("a"), false).unwrap();
        let file = open_for_read(dir.as_fd(), OsStr::new("fifo")).unwrap();
        assert_eq!(EntryKind::of(&fstat(&file).unwrap()), EntryKind::Special);
    }

    #[test]
    fn temp_names_fit_and_are_recognisable() {
        let long = "x".repeat(255);
        let t = temp_name(OsStr::new(&long));
        assert!(t.len() <= 255);
        assert!(t.to_string_lossy().ends_with(TEMP_MARKER));
        assert!(is_temp_name(&t) && !is_temp_name(OsStr::new("notes.tmp")));
    }
}
