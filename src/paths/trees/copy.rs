//! Copying a whole tree to another place, another file system included (`move_file` when
//! `rename` cannot cross, `copy_file`): never following a symlink, names of one file kept links
//! of one copy, its place kept in a stack of open directories rather than on the call stack.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};

use super::copied::Copied;
use super::metadata::give_metadata;
use crate::paths::file_copy;
use crate::paths::fsops::{self, Snapshot};
use crate::paths::{AsDir, BorrowedDir, Dir, EntryKind, Stat};

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

/// How much of a file is copied between two checks for an abort.
const COPY_CHUNK: u64 = 64 << 20;

/// One directory being copied: the source's descriptor and names left, the copy's descriptor,
/// and the source's own stat, whose mode and times the copy gets once it is filled.
struct CopyFrame {
    source: Dir,
    copy: Dir,
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
    src_dir: BorrowedDir<'_>,
    src_name: &OsStr,
    dst_dir: BorrowedDir<'_>,
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
            let (source, copy) = (top.source.as_dir(), top.copy.as_dir());
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
    root_copy: Option<Dir>,
    aborted: &'a dyn Fn() -> bool,
}

impl Copier<'_> {
    /// Copies one entry; a directory is only created, and returned to be filled.
    fn copy_entry(
        &mut self,
        src_dir: BorrowedDir<'_>,
        src_name: &OsStr,
        dst_dir: BorrowedDir<'_>,
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
                fsops::symlink_at(target.as_os_str(), dst_dir, dst_name).map_err(io_at)?;
                fsops::give_link_owner(dst_dir, dst_name, stat.uid, stat.gid).map_err(io_at)?;
                fsops::set_link_times_at(dst_dir, dst_name, stat.atime, stat.mtime)
                    .map_err(io_at)?;
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
                fsops::mkdir_at(dst_dir, dst_name).map_err(io_at)?;
                let copy = fsops::open_subdir(dst_dir, dst_name).map_err(io_at)?;
                let names = fsops::list_names(source.as_dir()).map_err(io_at)?;
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
    fn link_to(&self, first: &Path, dir: BorrowedDir<'_>, name: &OsStr) -> io::Result<()> {
        let root = self.root_copy.as_ref().ok_or(io::ErrorKind::NotFound)?;
        let (parent, file) = match (first.parent(), first.file_name()) {
            (Some(parent), Some(file)) => (parent, file),
            _ => return Err(io::ErrorKind::InvalidInput.into()),
        };
        let parent = fsops::open_dir_beneath(root.as_dir(), parent, false)?;
        fsops::hard_link_at(parent.as_dir(), file, dir, name)
    }
}

/// Copies a regular file's bytes (in the kernel where it can: `copy_file_range`/`sendfile`),
/// mode and times; returns the source's stat, checked unchanged over the copy.
fn copy_file(
    (src_dir, src_name): (BorrowedDir<'_>, &OsStr),
    (dst_dir, dst_name): (BorrowedDir<'_>, &OsStr),
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
    let mut copy = fsops::create_file_at(dst_dir, dst_name).map_err(io_at)?;
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
    give_metadata(source.as_dir(), copy.as_dir(), &before).map_err(io_at)?;
    fsops::sync_written(copy.as_dir()).map_err(io_at)?;
    Ok(before)
}

/// The copied directory gets the source's metadata last: filling it changed its mtime, and a
/// read-only mode would have stopped the filling.
fn finish_directory(frame: &CopyFrame) -> io::Result<()> {
    give_metadata(frame.source.as_dir(), frame.copy.as_dir(), &frame.stat)?;
    fsops::sync_written(frame.copy.as_dir())
}
