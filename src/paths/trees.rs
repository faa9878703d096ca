//! Whole trees through descriptors: removing one (permanent `remove_dir`, our own temp trees, the
//! source of a move between file systems) and copying one to another file system (`move_file`,
//! when `rename` cannot cross). Neither ever follows a symlink, a removal never crosses into
//! another mount, and both keep their place in a
//! stack of open directories rather than on the call stack, so a deep tree cannot overflow it.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Mode, OFlags, Timespec, Timestamps};

use crate::paths::{Stat, Version};

use super::fsops::{self, Snapshot};
use super::{file_copy, platform, xattrs};
use crate::paths::os_error::libc_codes;
use crate::paths::EntryKind;

/// How [`remove_tree_at`] treats what it finds.
#[derive(Clone, Copy)]
pub struct Removal<'a> {
    /// Give each directory mode 0700 before emptying it. Only for our own temp trees, which a
    /// restore or a copy may already have made read-only; a user's tree keeps its modes.
    pub make_writable: bool,
    /// Non-directories for which this returns true are left in place, and so are their
    /// directories; a directory that gained entries meanwhile is left too instead of failing.
    pub keep: Option<&'a dyn Fn(&Stat) -> bool>,
}

impl Removal<'_> {
    /// A user's tree, removed as `rm -r` would: everything, modes respected.
    pub const EVERYTHING: Removal<'static> = Removal {
        make_writable: false,
        keep: None,
    };
    /// One of our own temp trees (a copy or restore in progress, or left by a crash).
    pub const OWN_TEMP: Removal<'static> = Removal {
        make_writable: true,
        keep: None,
    };
}

/// One directory being emptied or filled: its descriptor and the names still to visit.
struct Frame {
    fd: OwnedFd,
    name: OsString,
    pending: std::vec::IntoIter<OsString>,
    kept: bool,
    mount: fsops::DirMount,
}

/// A mount point met in a tree being removed, by its path from the removed entry's directory: a
/// tree is never removed across one, so it and the directories holding it stay. The error of
/// [`remove_tree_at`] carries it (`io::Error::get_ref`).
#[derive(Debug)]
pub struct MountPointInside(pub PathBuf);

impl std::fmt::Display for MountPointInside {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} is a mount point", self.0.display())
    }
}

impl std::error::Error for MountPointInside {}

impl MountPointInside {
    /// The mount point an error of [`remove_tree_at`] is about, if it is one.
    pub fn of(e: &io::Error) -> Option<&Path> {
        let inner = e.get_ref()?.downcast_ref::<MountPointInside>()?;
        Some(&inner.0)
    }
}

/// Removes `name` in `dir` (a file, a symlink or a whole tree) as `how` says; returns how many
/// entries were kept. Like `rm -r`, it goes on past an entry it cannot remove (that entry and its
/// directories stay) and then returns the first such error. Unlike `rm -r`, it never crosses into
/// another mount ([`fsops::is_mount_point`]): a mount point stays, with what is mounted there, as
/// an entry it cannot remove ([`MountPointInside`]). `NotFound` if `name` is not there.
pub fn remove_tree_at(dir: BorrowedFd<'_>, name: &OsStr, how: Removal<'_>) -> io::Result<u64> {
    remove_checked(dir, name, how, None).map(|kept| kept.unwrap_or(0))
}

/// As [`remove_tree_at`], only if `expected` accepts the entry, checked through what is then
/// removed: a directory by the descriptor its contents are removed through (all that is left
/// to do by name is `rmdir`, which removes nothing but an empty directory), anything else once
/// renamed aside to a fresh temp name ([`fsops::remove_exact`]; a kill right then leaves it
/// under that hidden name). `Ok(None)`: not the expected entry, left where it was.
pub fn remove_tree_if(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    how: Removal<'_>,
    expected: &dyn Fn(&Stat) -> bool,
) -> io::Result<Option<u64>> {
    remove_checked(dir, name, how, Some(expected))
}

fn remove_checked(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    how: Removal<'_>,
    expected: Option<&dyn Fn(&Stat) -> bool>,
) -> io::Result<Option<u64>> {
    let stat =
        fsops::lstat_at(dir, name)?.ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
    if expected.is_some_and(|expected| !expected(&stat)) {
        return Ok(None);
    }
    if fsops::is_mount_point(dir, name)? {
        return Err(mount_point_inside(&[], name));
    }
    let keeps = |stat: &Stat| how.keep.is_some_and(|keep| keep(stat));
    if EntryKind::of(&stat) != EntryKind::Directory {
        if keeps(&stat) {
            return Ok(Some(1));
        }
        let Some(expected) = expected else {
            return remove_leaf(dir, name, how).map(|kept| Some(u64::from(kept)));
        };
        return match fsops::remove_exact(dir, name, expected) {
            Ok(()) => Ok(Some(0)),
            Err(fsops::RemoveError::NotExpected { .. }) => Ok(None),
            Err(fsops::RemoveError::Io { error, .. }) => Err(error),
        };
    }
    let mut kept = 0;
    let mut first_error = None;
    let Some(top) = open_for_removal(dir, name, how, expected)? else {
        return Ok(None);
    };
    let mut stack = vec![top];
    while let Some(top) = stack.last_mut() {
        if let Some(child) = top.pending.next() {
            let parent = top.fd.as_fd();
            let found = fsops::lstat_at(parent, &child);
            let mounted = match &found {
                Ok(Some(stat)) => {
                    let dev = fsops::identity(stat).0;
                    top.mount.holds_mount_point(parent, &child, dev)
                }
                _ => Ok(false),
            };
            if !matches!(mounted, Ok(false)) {
                top.kept = true;
                let e = mounted.err();
                first_error
                    .get_or_insert_with(|| e.unwrap_or_else(|| mount_point_inside(&stack, &child)));
                continue;
            }
            let removed = match found {
                Ok(None) => Ok(()),
                Ok(Some(stat)) if EntryKind::of(&stat) == EntryKind::Directory => {
                    match open_for_removal(parent, &child, how, None) {
                        Ok(Some(frame)) => {
                            stack.push(frame);
                            continue;
                        }
                        Ok(None) => Ok(()),
                        Err(e) => Err(e),
                    }
                }
                Ok(Some(stat)) if keeps(&stat) => {
                    kept += 1;
                    top.kept = true;
                    Ok(())
                }
                Ok(Some(_)) => match remove_leaf(parent, &child, how) {
                    Ok(true) => {
                        kept += 1;
                        top.kept = true;
                        Ok(())
                    }
                    Ok(false) => Ok(()),
                    Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                    Err(e) => Err(e),
                },
                Err(e) => Err(e),
            };
            if let Err(e) = removed {
                top.kept = true;
                first_error.get_or_insert(e);
            }
            continue;
        }
        let done = stack.pop().expect("loop checked non-empty");
        let parent = stack.last().map_or(dir, |f| f.fd.as_fd());
        let left_in_place = done.kept
            || match fsops::rmdir_at(parent, &done.name) {
                Ok(()) => false,
                Err(e) => {
                    if how.keep.is_some() && e.raw_os_error() == Some(libc_codes::ENOTEMPTY) {
                        kept += 1;
                    } else {
                        first_error.get_or_insert(e);
                    }
                    true
                }
            };
        if let (true, Some(parent)) = (left_in_place, stack.last_mut()) {
            parent.kept = true;
        }
    }
    first_error.map_or(Ok(Some(kept)), Err)
}

/// The error for the mount point `name` inside the directories `open` (outermost first).
fn mount_point_inside(open: &[Frame], name: &OsStr) -> io::Error {
    let mut path: PathBuf = open.iter().map(|frame| frame.name.as_os_str()).collect();
    path.push(name);
    io::Error::other(MountPointInside(path))
}

/// Removes the file or symlink `name` of `dir`; returns whether it was kept instead. With a
/// `keep` rule, the entry is checked again once renamed aside (`fsops::remove_exact`): one
/// swapped in under the name after the caller's check is kept, never removed.
fn remove_leaf(dir: BorrowedFd<'_>, name: &OsStr, how: Removal<'_>) -> io::Result<bool> {
    let Some(keep) = how.keep else {
        return fsops::unlink_at(dir, name).map(|()| false);
    };
    match fsops::remove_exact(dir, name, &|now| !keep(now)) {
        Ok(()) => Ok(false),
        Err(fsops::RemoveError::NotExpected { .. }) => Ok(true),
        Err(fsops::RemoveError::Io { error, .. }) => Err(error),
    }
}

/// The directory `name` of `dir`, opened to be emptied; `None` if `expected` does not accept
/// what was opened.
fn open_for_removal(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    how: Removal<'_>,
    expected: Option<&dyn Fn(&Stat) -> bool>,
) -> io::Result<Option<Frame>> {
    let fd = fsops::open_subdir(dir, name)?;
    if let Some(expected) = expected {
        if !expected(&fsops::fstat(&fd)?) {
            return Ok(None);
        }
    }
    if how.make_writable {
        rustix::fs::fchmod(&fd, Mode::from_raw_mode(0o700))?;
    }
    let names = fsops::list_names(fd.as_fd())?;
    Ok(Some(Frame {
        mount: fsops::DirMount::of(fd.as_fd())?,
        fd,
        name: name.to_owned(),
        pending: names.into_iter(),
        kept: false,
    }))
}

/// Why a copy stopped; the partial copy is left for the caller to remove.
#[derive(Debug)]
pub enum CopyError {
    /// A FIFO, socket or device (at this path, relative to the source), which is never copied.
    Special(PathBuf),
    /// This file changed while it was being copied, so the copy would be torn.
    Changed(PathBuf),
    Aborted,
    Io(io::Error, PathBuf),
}

/// The version of every source entry a copy read, keyed by device and inode, so that removing the
/// source afterwards can leave alone whatever changed since: its size and modification time (to
/// the nanosecond), which every write changes. Not its change time: removing one name of a file
/// with several changes that, and the other names are still the copied file.
#[derive(Debug, Default)]
pub struct Copied {
    versions: HashMap<(u64, u64), Version>,
    /// What the copy holds beneath its root (the root itself not counted).
    pub counts: CopyCounts,
}

/// The entries a copy made beneath its root, by kind (each name of a file with several counts).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CopyCounts {
    pub files: u64,
    pub dirs: u64,
    pub links: u64,
}

impl Copied {
    /// Whether `stat` is an entry this copy read, as it was when read.
    pub fn unchanged(&self, stat: &Stat) -> bool {
        self.versions.get(&stat.identity()) == Some(&stat.version())
    }

    /// Whether the entry `identity` (device, inode) is one this copy read.
    pub fn read(&self, identity: (u64, u64)) -> bool {
        self.versions.contains_key(&identity)
    }

    fn count(&mut self, kind: EntryKind, relative: &Path) {
        if relative.as_os_str().is_empty() {
            return;
        }
        match kind {
            EntryKind::File => self.counts.files += 1,
            EntryKind::Directory => self.counts.dirs += 1,
            EntryKind::Symlink => self.counts.links += 1,
            EntryKind::Special => {}
        }
    }

    fn record(&mut self, stat: &Stat) {
        self.versions.insert(stat.identity(), stat.version());
    }
}

/// Whether the entry `name` in `dir` is still, entry for entry, what `copied` read of it: every
/// entry one it read and as it was then, none that appeared since, none gone (a mount point met
/// inside is not). What a move across file systems checks of its source, set aside, before the
/// commit point.
pub fn unchanged_since_copied(dir: BorrowedFd<'_>, name: &OsStr, copied: &Copied) -> bool {
    let beneath = copied.counts.files + copied.counts.dirs + copied.counts.links;
    matches!(entries_as_copied(dir, name, copied), Ok(Some(seen)) if seen == beneath)
}

/// How many entries beneath `name` in `dir` there are, all as `copied` read them; `None` as
/// soon as one is not.
fn entries_as_copied(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    copied: &Copied,
) -> io::Result<Option<u64>> {
    let as_copied = |dir: BorrowedFd<'_>, name: &OsStr| -> io::Result<Option<Stat>> {
        Ok(fsops::lstat_at(dir, name)?.filter(|stat| copied.unchanged(stat)))
    };
    let Some(root) = as_copied(dir, name)? else {
        return Ok(None);
    };
    if EntryKind::of(&root) != EntryKind::Directory {
        return Ok(Some(0));
    }
    let mut seen = 0u64;
    let mut pending = vec![fsops::open_subdir(dir, name)?];
    while let Some(here) = pending.pop() {
        let mount = fsops::DirMount::of(here.as_fd())?;
        for child in fsops::list_names(here.as_fd())? {
            let Some(stat) = as_copied(here.as_fd(), &child)? else {
                return Ok(None);
            };
            if mount.holds_mount_point(here.as_fd(), &child, fsops::identity(&stat).0)? {
                return Ok(None);
            }
            seen += 1;
            if EntryKind::of(&stat) == EntryKind::Directory {
                let sub = fsops::open_subdir(here.as_fd(), &child)?;
                if fsops::fstat(&sub)?.identity() != stat.identity() {
                    return Ok(None);
                }
                pending.push(sub);
            }
        }
    }
    Ok(Some(seen))
}

/// How much of a file is copied between two checks for an abort.
const COPY_CHUNK: u64 = 64 << 20;

/// One directory being copied: the source's descriptor and names left, the copy's descriptor,
/// and the source's own stat, whose mode and times the copy gets once it is filled.
struct CopyFrame {
    source: OwnedFd,
    copy: OwnedFd,
    stat: Stat,
    relative: PathBuf,
    pending: std::vec::IntoIter<OsString>,
}

/// Copies `src_name` in `src_dir` (a file, a symlink or a whole tree) to the new name `dst_name`
/// in `dst_dir`: contents (holes kept), owner (where we may), extended attributes of files and
/// directories (where the destination takes them; a symlink's are not copied), permission bits
/// (without set-user/group-ID) and modification times; names of one file inside the tree stay
/// hard links of one copy. The caller makes the copy durable with [`fsops::sync_new_tree`] before
/// publishing it (each file and directory went through [`fsops::sync_written`]).
pub fn copy_tree_at(
    src_dir: BorrowedFd<'_>,
    src_name: &OsStr,
    dst_dir: BorrowedFd<'_>,
    dst_name: &OsStr,
    aborted: &dyn Fn() -> bool,
) -> Result<Copied, CopyError> {
    let mut copier = Copier {
        copied: Copied::default(),
        first_copies: HashMap::new(),
        root_copy: None,
        aborted,
    };
    let mut stack: Vec<CopyFrame> = Vec::new();
    let root = PathBuf::new();
    if let Some(frame) = copier.copy_entry(src_dir, src_name, dst_dir, dst_name, &root)? {
        let dup = frame
            .copy
            .try_clone()
            .map_err(|e| CopyError::Io(e, root.clone()))?;
        copier.root_copy = Some(dup);
        stack.push(frame);
    }
    while let Some(top) = stack.last_mut() {
        if aborted() {
            return Err(CopyError::Aborted);
        }
        if let Some(child) = top.pending.next() {
            let relative = top.relative.join(&child);
            let (source, copy) = (top.source.as_fd(), top.copy.as_fd());
            if let Some(frame) = copier.copy_entry(source, &child, copy, &child, &relative)? {
                stack.push(frame);
            }
            continue;
        }
        let done = stack.pop().expect("loop checked non-empty");
        finish_directory(&done).map_err(|e| CopyError::Io(e, done.relative.clone()))?;
    }
    Ok(copier.copied)
}

/// The state of one [`copy_tree_at`].
struct Copier<'a> {
    copied: Copied,
    /// Where the first copy of each file with several names is, relative to the copy's root, so
    /// that its other names in the tree become links to that copy again.
    first_copies: HashMap<(u64, u64), PathBuf>,
    /// The copy's root directory, once there is one.
    root_copy: Option<OwnedFd>,
    aborted: &'a dyn Fn() -> bool,
}

impl Copier<'_> {
    /// Copies one entry; a directory is only created, and returned to be filled.
    fn copy_entry(
        &mut self,
        src_dir: BorrowedFd<'_>,
        src_name: &OsStr,
        dst_dir: BorrowedFd<'_>,
        dst_name: &OsStr,
        relative: &Path,
    ) -> Result<Option<CopyFrame>, CopyError> {
        let io_at = |e: io::Error| CopyError::Io(e, relative.to_owned());
        // Gone since its directory was listed: the source no longer has it, nor does the copy.
        let Some(stat) = fsops::lstat_at(src_dir, src_name).map_err(io_at)? else {
            return Ok(None);
        };
        let kind = EntryKind::of(&stat);
        fsops::race_point::reached(fsops::race_point::RacePoint::CopyLooked, src_name);
        if kind != EntryKind::Special {
            self.copied.count(kind, relative);
        }
        match kind {
            EntryKind::Special => return Err(CopyError::Special(relative.to_owned())),
            EntryKind::Symlink => {
                let target = fsops::read_link_at(src_dir, src_name).map_err(io_at)?;
                rustix::fs::symlinkat(target.as_os_str(), dst_dir, dst_name)
                    .map_err(|e| io_at(e.into()))?;
                fsops::give_link_owner(dst_dir, dst_name, stat.uid, stat.gid).map_err(io_at)?;
                let times = timestamps(&stat);
                rustix::fs::utimensat(dst_dir, dst_name, &times, AtFlags::SYMLINK_NOFOLLOW)
                    .map_err(|e| io_at(e.into()))?;
            }
            EntryKind::File => {
                let key = fsops::identity(&stat);
                if let Some(first) = self.first_copies.get(&key) {
                    if !self.copied.unchanged(&stat) {
                        return Err(CopyError::Changed(relative.to_owned()));
                    }
                    self.link_to(first, dst_dir, dst_name).map_err(io_at)?;
                    return Ok(None);
                }
                let (src, dst) = ((src_dir, src_name), (dst_dir, dst_name));
                let stat = copy_file(src, dst, &stat, relative, self.aborted)?;
                if fsops::link_count(&stat) > 1 {
                    self.first_copies.insert(key, relative.to_owned());
                }
                self.copied.record(&stat);
                return Ok(None);
            }
            EntryKind::Directory => {
                let source = fsops::open_subdir(src_dir, src_name).map_err(io_at)?;
                let stat = fsops::fstat(&source).map_err(io_at)?;
                rustix::fs::mkdirat(dst_dir, dst_name, Mode::from_raw_mode(0o700))
                    .map_err(|e| io_at(e.into()))?;
                let copy = fsops::open_subdir(dst_dir, dst_name).map_err(io_at)?;
                let names = fsops::list_names(source.as_fd()).map_err(io_at)?;
                self.copied.record(&stat);
                return Ok(Some(CopyFrame {
                    source,
                    copy,
                    stat,
                    relative: relative.to_owned(),
                    pending: names.into_iter(),
                }));
            }
        }
        self.copied.record(&stat);
        Ok(None)
    }

    /// Gives the copy at `first` (relative to the copy's root) the new name `name` in `dir`. The
    /// way to it is opened beneath the root without following links: it is our own copy, made of
    /// directories this copy created.
    fn link_to(&self, first: &Path, dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
        let root = self.root_copy.as_ref().ok_or(io::ErrorKind::NotFound)?;
        let (parent, file) = match (first.parent(), first.file_name()) {
            (Some(parent), Some(file)) => (parent, file),
            _ => return Err(io::ErrorKind::InvalidInput.into()),
        };
        let parent = fsops::open_dir_beneath(root.as_fd(), parent, false)?;
        rustix::fs::linkat(&parent, file, dir, name, AtFlags::empty())?;
        Ok(())
    }
}

/// Copies a regular file's bytes (in the kernel where it can: `copy_file_range`/`sendfile`),
/// mode and times; returns the source's stat, checked unchanged over the copy.
fn copy_file(
    (src_dir, src_name): (BorrowedFd<'_>, &OsStr),
    (dst_dir, dst_name): (BorrowedFd<'_>, &OsStr),
    listed: &Stat,
    relative: &Path,
    aborted: &dyn Fn() -> bool,
) -> Result<Stat, CopyError> {
    let io_at = |e: io::Error| CopyError::Io(e, relative.to_owned());
    let source = fsops::open_for_read(src_dir, src_name).map_err(io_at)?;
    let before = fsops::fstat(&source).map_err(io_at)?;
    if fsops::identity(&before) != fsops::identity(listed) {
        return Err(CopyError::Changed(relative.to_owned()));
    }
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut copy = rustix::fs::openat(dst_dir, dst_name, flags, Mode::from_raw_mode(0o600))
        .map(File::from)
        .map_err(|e| io_at(e.into()))?;
    let has_holes = fsops::may_have_holes(&before);
    let go_on = || !aborted();
    if !file_copy::copy_bytes(&source, &mut copy, has_holes, COPY_CHUNK, &go_on).map_err(io_at)? {
        return Err(CopyError::Aborted);
    }
    let after = fsops::fstat(&source).map_err(io_at)?;
    let ctime = |s: &Stat| Snapshot::of(s).ctime;
    if after.version() != before.version() || ctime(&after) != ctime(&before) {
        return Err(CopyError::Changed(relative.to_owned()));
    }
    give_metadata(source.as_fd(), copy.as_fd(), &before).map_err(io_at)?;
    fsops::sync_written(copy.as_fd()).map_err(io_at)?;
    Ok(before)
}

/// The copied directory gets the source's metadata last: filling it changed its mtime, and a
/// read-only mode would have stopped the filling.
fn finish_directory(frame: &CopyFrame) -> io::Result<()> {
    give_metadata(frame.source.as_fd(), frame.copy.as_fd(), &frame.stat)?;
    fsops::sync_written(frame.copy.as_fd())
}

/// Gives `copy` the metadata of `source` (whose stat is `stat`): its owner (where we may, see
/// [`fsops::give_owner`]), then its extended attributes (a change of owner clears file
/// capabilities), then its mode (after any ACL, which sets the group bits; see
/// [`mode_of_copy`]) and times.
fn give_metadata(source: BorrowedFd<'_>, copy: BorrowedFd<'_>, stat: &Stat) -> io::Result<()> {
    fsops::give_owner(copy, stat.uid, stat.gid)?;
    xattrs::copy(source, copy)?;
    platform::copy_acl(source, copy)?;
    let owned = fsops::fstat(copy)?;
    let mode = mode_of_copy(
        Snapshot::of(stat).mode,
        (stat.uid, stat.gid),
        (owned.uid, owned.gid),
    );
    fsops::set_mode_fd(copy, mode)?;
    rustix::fs::futimens(copy, &timestamps(stat))?;
    Ok(())
}

/// The permission bits a copy gets, as `mv` and `cp -p` decide: all of the source's, except that
/// set-user-ID survives only when the copy has the source's owner, and set-group-ID only when
/// it has the source's group (a program must not run as someone it does not belong to).
fn mode_of_copy(source_mode: u32, source_owner: (u32, u32), copy_owner: (u32, u32)) -> u32 {
    let mut mode = source_mode & 0o1777;
    if copy_owner.0 == source_owner.0 {
        mode |= source_mode & 0o4000;
    }
    if copy_owner.1 == source_owner.1 {
        mode |= source_mode & 0o2000;
    }
    mode
}

fn timestamps(stat: &Stat) -> Timestamps {
    Timestamps {
        last_access: Timespec {
            tv_sec: stat.atime.0,
            tv_nsec: stat.atime.1 as _,
        },
        last_modification: Timespec {
            tv_sec: stat.mtime.0,
            tv_nsec: stat.mtime.1 as _,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
    use std::path::Path;

    fn open(path: &Path) -> OwnedFd {
        fsops::open_dir(path, path, false).unwrap()
    }

    /// A fresh temp dir (kept alive by the guard) holding [`sample_tree`].
    fn with_sample_tree() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        sample_tree(&base);
        (dir, base)
    }

    /// Copies `base/t` to `base/c`.
    fn copy_t_to_c(base: &Path, aborted: &dyn Fn() -> bool) -> Result<Copied, CopyError> {
        let fd = open(base);
        copy_tree_at(
            fd.as_fd(),
            OsStr::new("t"),
            fd.as_fd(),
            OsStr::new("c"),
            aborted,
        )
    }

    fn sample_tree(base: &Path) {
        fs::create_dir_all(base.join("t/a/b")).unwrap();
        fs::create_dir(base.join("keep")).unwrap();
        fs::write(base.join("keep/precious"), "x").unwrap();
        fs::write(base.join("t/a/b/f"), "y").unwrap();
        fs::write(base.join("t/top.sh"), "#!/bin/sh\n").unwrap();
        fs::set_permissions(base.join("t/top.sh"), fs::Permissions::from_mode(0o751)).unwrap();
        symlink(base.join("keep"), base.join("t/a/link")).unwrap();
        symlink("missing", base.join("t/dangling")).unwrap();
    }

    #[test]
    fn removal_never_follows_links() {
        let (_dir, base) = with_sample_tree();
        let kept =
            remove_tree_at(open(&base).as_fd(), OsStr::new("t"), Removal::EVERYTHING).unwrap();
        assert_eq!(kept, 0);
        assert!(!base.join("t").exists());
        assert_eq!(fs::read(base.join("keep/precious")).unwrap(), b"x");
    }

    #[test]
    fn removal_of_a_file_or_a_missing_name() {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        fs::write(base.join("f"), "x").unwrap();
        remove_tree_at(open(&base).as_fd(), OsStr::new("f"), Removal::EVERYTHING).unwrap();
        assert!(!base.join("f").exists());
        let e =
            remove_tree_at(open(&base).as_fd(), OsStr::new("f"), Removal::EVERYTHING).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn own_temp_trees_go_even_when_read_only() {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        fs::create_dir_all(base.join("t/ro/inner")).unwrap();
        fs::write(base.join("t/ro/inner/f"), "y").unwrap();
        fs::set_permissions(base.join("t/ro/inner"), fs::Permissions::from_mode(0o555)).unwrap();
        fs::set_permissions(base.join("t/ro"), fs::Permissions::from_mode(0o555)).unwrap();
        remove_tree_at(open(&base).as_fd(), OsStr::new("t"), Removal::OWN_TEMP).unwrap();
        assert!(!base.join("t").exists());
    }

    #[test]
    fn kept_entries_stay_with_their_directories() {
        let (_dir, base) = with_sample_tree();
        let spared = fs::symlink_metadata(base.join("t/a/b/f")).unwrap().ino();
        let keep = move |s: &Stat| s.ino == spared;
        let how = Removal {
            make_writable: false,
            keep: Some(&keep),
        };
        let kept = remove_tree_at(open(&base).as_fd(), OsStr::new("t"), how).unwrap();
        assert_eq!(kept, 1);
        assert_eq!(fs::read(base.join("t/a/b/f")).unwrap(), b"y");
        assert!(!base.join("t/top.sh").exists());
        assert!(fs::symlink_metadata(base.join("t/a/link")).is_err());
        assert!(fs::symlink_metadata(base.join("t/dangling")).is_err());
    }

    /// With a keep rule (a moved source), an entry swapped in under a name after its check is
    /// checked again and kept: only what the rule lets go is removed.
    #[test]
    fn an_entry_swapped_in_after_its_check_is_kept() {
        use crate::paths::fsops::race_point::{self, RacePoint};
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        fs::create_dir_all(base.join("t")).unwrap();
        fs::write(base.join("t/tr-copied"), "copied").unwrap();
        fs::write(base.join("elsewhere"), "not copied").unwrap();
        let copied = fs::symlink_metadata(base.join("t/tr-copied"))
            .unwrap()
            .ino();
        let keep = move |s: &Stat| s.ino != copied;
        let (a, b) = (base.join("t/tr-copied"), base.join("elsewhere"));
        race_point::at(RacePoint::BeforeRemove, "tr-copied", move || {
            rustix::fs::renameat_with(
                rustix::fs::CWD,
                &a,
                rustix::fs::CWD,
                &b,
                rustix::fs::RenameFlags::EXCHANGE,
            )
            .unwrap()
        });
        let how = Removal {
            make_writable: false,
            keep: Some(&keep),
        };
        let kept = remove_tree_at(open(&base).as_fd(), OsStr::new("t"), how).unwrap();
        assert_eq!(kept, 1);
        assert_eq!(fs::read(base.join("t/tr-copied")).unwrap(), b"not copied");
        assert_eq!(fs::read(base.join("elsewhere")).unwrap(), b"copied");
    }

    #[test]
    fn removal_goes_on_past_what_it_cannot_remove() {
        let (_dir, base) = with_sample_tree();
        let stuck = base.join("t/a/b/f");
        let chattr = |flag: &str| {
            std::process::Command::new("chattr")
                .arg(flag)
                .arg(&stuck)
                .status()
                .is_ok_and(|s| s.success())
        };
        if !chattr("+i") {
            eprintln!("skipped: chattr +i is not possible here (not root, or no ext4)");
            return;
        }
        let result = remove_tree_at(open(&base).as_fd(), OsStr::new("t"), Removal::EVERYTHING);
        assert!(chattr("-i"));
        assert_eq!(result.unwrap_err().raw_os_error(), Some(libc_codes::EPERM));
        assert_eq!(fs::read(&stuck).unwrap(), b"y");
        assert!(!base.join("t/top.sh").exists() && !base.join("t/dangling").exists());
        assert_eq!(fs::read(base.join("keep/precious")).unwrap(), b"x");
    }

    /// A tree holding mount points (another file system; a bind mount of a directory outside
    /// it, where mounts of one file system are told apart): the removal removes everything
    /// around them, never what is mounted, and names the first; a removal of a mount point
    /// itself removes nothing.
    #[test]
    fn removal_never_crosses_into_another_mount() {
        use crate::paths::test_mounts::Mounted;
        let (_dir, base) = with_sample_tree();
        let Some(_tmpfs) = Mounted::tmpfs(&base.join("t/other")) else {
            eprintln!("skipped: mounting is not permitted here (not root)");
            return;
        };
        fs::write(base.join("t/other/data"), "on tmpfs").unwrap();
        let binds = platform::linux_fast_paths();
        let _bind = binds.then(|| Mounted::bind(&base.join("keep"), &base.join("t/a/bound")));
        let fd = open(&base);
        let e = remove_tree_at(fd.as_fd(), OsStr::new("t"), Removal::EVERYTHING).unwrap_err();
        let first = if binds { "t/a/bound" } else { "t/other" };
        assert_eq!(MountPointInside::of(&e), Some(Path::new(first)), "{e}");
        assert_eq!(fs::read(base.join("keep/precious")).unwrap(), b"x");
        assert_eq!(fs::read(base.join("t/other/data")).unwrap(), b"on tmpfs");
        assert!(!base.join("t/top.sh").exists() && !base.join("t/a/b").exists());
        let t = open(&base.join("t"));
        let e = remove_tree_at(t.as_fd(), OsStr::new("other"), Removal::EVERYTHING).unwrap_err();
        assert_eq!(MountPointInside::of(&e), Some(Path::new("other")));
        assert_eq!(fs::read(base.join("t/other/data")).unwrap(), b"on tmpfs");
    }

    fn describe(path: &Path) -> Vec<(String, u32, i64, Option<Vec<u8>>)> {
        let mut out = Vec::new();
        let mut walk = vec![path.to_owned()];
        while let Some(p) = walk.pop() {
            let meta = fs::symlink_metadata(&p).unwrap();
            let rel = p.strip_prefix(path).unwrap().display().to_string();
            let content = if meta.is_file() {
                Some(fs::read(&p).unwrap())
            } else if meta.file_type().is_symlink() {
                Some(
                    fs::read_link(&p)
                        .unwrap()
                        .into_os_string()
                        .into_encoded_bytes(),
                )
            } else {
                let mut children: Vec<_> = fs::read_dir(&p)
                    .unwrap()
                    .map(|e| e.unwrap().path())
                    .collect();
                children.sort();
                walk.extend(children);
                None
            };
            out.push((rel, meta.mode(), meta.mtime(), content));
        }
        out.sort();
        out
    }

    #[test]
    fn a_copy_has_the_same_entries_bytes_modes_and_times() {
        let (_dir, base) = with_sample_tree();
        fs::write(base.join("t/a/big"), vec![7u8; 3 << 20]).unwrap();
        fs::set_permissions(base.join("t/a"), fs::Permissions::from_mode(0o555)).unwrap();
        let copied = copy_t_to_c(&base, &|| false).unwrap();
        assert_eq!(describe(&base.join("t")), describe(&base.join("c")));
        let fd = open(&base);
        let stat_f = || {
            fsops::lstat_at(fd.as_fd(), OsStr::new("t/a/b/f"))
                .unwrap()
                .unwrap()
        };
        let original = fs::symlink_metadata(base.join("t/a/b/f")).unwrap();
        let stat = stat_f();
        assert!(copied.unchanged(&stat) && original.ino() == stat.ino);
        fs::write(base.join("t/a/b/f"), "changed").unwrap();
        let stat = stat_f();
        assert!(!copied.unchanged(&stat));
        fs::set_permissions(base.join("t/a"), fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn a_copy_to_another_file_system_keeps_holes_acls_and_extended_attributes() {
        let (_dir, base) = with_sample_tree();
        // /dev/shm is a tmpfs: another file system than the temp dir's, where there is one.
        let other = tempfile::tempdir_in("/dev/shm").or_else(|_| tempfile::tempdir());
        let other = other.unwrap();
        let sparse = fs::File::create(base.join("t/a/disk.img")).unwrap();
        sparse.set_len(256 << 20).unwrap();
        std::os::unix::fs::FileExt::write_all_at(&sparse, b"boot", 0).unwrap();
        let flags = rustix::fs::XattrFlags::empty();
        for path in ["t/top.sh", "t/a"] {
            let path = base.join(path);
            rustix::fs::setxattr(&path, "user.origin", b"bench", flags).unwrap();
            rustix::fs::setxattr(
                &path,
                "system.posix_acl_access",
                &xattrs::sample_access_acl(),
                flags,
            )
            .unwrap();
        }
        let mode_before = fs::metadata(base.join("t/top.sh")).unwrap().mode();
        let (src, dst) = (open(&base), open(other.path()));
        let (t, c) = (OsStr::new("t"), OsStr::new("c"));
        copy_tree_at(src.as_fd(), t, dst.as_fd(), c, &|| false).unwrap();
        let copy = other.path().join("c");
        let image = fs::metadata(copy.join("a/disk.img")).unwrap();
        assert_eq!(image.len(), 256 << 20);
        assert!(image.blocks() * 512 < 1 << 20, "{} blocks", image.blocks());
        assert_eq!(&fs::read(copy.join("a/disk.img")).unwrap()[..4], b"boot");
        let get = |path: &Path, name: &str| {
            let mut buf = vec![0u8; 4096];
            let n = rustix::fs::getxattr(path, name, &mut buf[..]).unwrap();
            buf.truncate(n);
            buf
        };
        for path in ["top.sh", "a"] {
            assert_eq!(get(&copy.join(path), "user.origin"), b"bench", "{path}");
            let acl = get(&copy.join(path), "system.posix_acl_access");
            assert_eq!(acl, xattrs::sample_access_acl(), "{path}");
        }
        assert_eq!(
            fs::metadata(copy.join("top.sh")).unwrap().mode(),
            mode_before
        );
    }

    #[test]
    fn names_of_one_file_stay_links_of_one_copy() {
        let (_dir, base) = with_sample_tree();
        fs::hard_link(base.join("t/a/b/f"), base.join("t/f-again")).unwrap();
        fs::hard_link(base.join("t/a/b/f"), base.join("t/a/f-third")).unwrap();
        fs::hard_link(base.join("t/top.sh"), base.join("keep/outside-link")).unwrap();
        copy_t_to_c(&base, &|| false).unwrap();
        let ino = |p: &str| fs::symlink_metadata(base.join(p)).unwrap().ino();
        assert_eq!(ino("c/a/b/f"), ino("c/f-again"));
        assert_eq!(ino("c/a/b/f"), ino("c/a/f-third"));
        assert_ne!(ino("c/a/b/f"), ino("t/a/b/f"));
        assert_eq!(
            fs::symlink_metadata(base.join("c/a/b/f")).unwrap().nlink(),
            3
        );
        // A link from outside the tree is not carried along: the copy has one name.
        assert_eq!(
            fs::symlink_metadata(base.join("c/top.sh")).unwrap().nlink(),
            1
        );
        assert_eq!(fs::read(base.join("c/f-again")).unwrap(), b"y");
    }

    #[test]
    fn owners_are_kept_where_we_may_give_files_away() {
        if !rustix::process::geteuid().is_root() {
            eprintln!("skipped: only root may give a copy another owner");
            return;
        }
        let (_dir, base) = with_sample_tree();
        for path in ["t", "t/a", "t/top.sh", "t/dangling"] {
            std::os::unix::fs::lchown(base.join(path), Some(1234), Some(5678)).unwrap();
        }
        copy_t_to_c(&base, &|| false).unwrap();
        for path in ["c", "c/a", "c/top.sh", "c/dangling"] {
            let meta = fs::symlink_metadata(base.join(path)).unwrap();
            assert_eq!((meta.uid(), meta.gid()), (1234, 5678), "{path}");
        }
        let ours = fs::symlink_metadata(base.join("c/a/b/f")).unwrap();
        assert_eq!(ours.uid(), 0);
        assert_eq!(
            fs::symlink_metadata(base.join("c/top.sh")).unwrap().mode() & 0o777,
            0o751
        );
    }

    #[test]
    fn set_id_bits_stay_only_with_the_owner_and_group_they_belong_to() {
        assert_eq!(mode_of_copy(0o104755, (7, 8), (7, 8)), 0o4755);
        assert_eq!(mode_of_copy(0o102755, (7, 8), (7, 8)), 0o2755);
        assert_eq!(mode_of_copy(0o106755, (7, 8), (9, 8)), 0o2755);
        assert_eq!(mode_of_copy(0o106755, (7, 8), (7, 9)), 0o4755);
        assert_eq!(mode_of_copy(0o101777, (7, 8), (9, 9)), 0o1777);
    }

    #[test]
    fn a_set_user_id_program_keeps_its_bit_when_its_owner_is_kept() {
        let (_d, base) = with_sample_tree();
        let program = base.join("t/tool");
        fs::write(&program, "#!/bin/sh\n").unwrap();
        fs::set_permissions(&program, fs::Permissions::from_mode(0o4755)).unwrap();
        copy_t_to_c(&base, &|| false).unwrap();
        let mode = fs::metadata(base.join("c/tool"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o7777, 0o4755);
    }

    #[test]
    fn a_fifo_stops_the_copy_and_names_itself() {
        let (_dir, base) = with_sample_tree();
        let fifo = base.join("t/a/pipe");
        crate::paths::platform::make_fifo(&fifo);
        let e = copy_t_to_c(&base, &|| false).unwrap_err();
        assert!(
            matches!(e, CopyError::Special(ref p) if p == Path::new("a/pipe")),
            "{e:?}"
        );
    }

    #[test]
    fn an_abort_stops_the_copy() {
        let (_dir, base) = with_sample_tree();
        let e = copy_t_to_c(&base, &|| true).unwrap_err();
        assert!(matches!(e, CopyError::Aborted));
    }
}
