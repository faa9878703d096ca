//! Reading the original (a file, a symlink or a whole tree) into the content tar stream.
//!
//! The walk goes through directory fds only (`openat`/`fstatat` with `O_NOFOLLOW`), depth first,
//! children in bytewise name order, with an explicit stack (no recursion, so a deep tree cannot
//! overflow a small thread stack). Every entry is `lstat`ed when listed and re-checked when opened
//! and when done: a file must keep its inode, size, mtime and ctime while it is read; a directory
//! must keep its mtime/ctime (any entry added, removed or renamed in it changes them) from the
//! moment it is listed until its last child is archived. Any difference is a conflict.
//!
//! A file with several names inside the tree is archived once, at its first name in that order;
//! each later name is a tar hard-link entry naming the first (as GNU tar writes them), and must
//! show the very same inode, size and times as the first did once it was read. A name of the file
//! outside the tree is not the archive's business: inside, that file is a file like any other.
//!
//! A mount point (the entry itself or anything inside it: another file system, a bind mount) stops
//! the walk before anything is removed: a tree is never trashed across one.
//!
//! What was seen is returned as a preorder list of [`Observed`] entries, which is exactly what
//! [`super::remove`] later verifies and removes — never anything else.

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use tar::{Builder, EntryType};

use super::digest::{child_path, TreeDigest};
use super::error::{changed, TrashError};
use super::item::TrashItem;
use super::observed::Observed;
use super::stream::SourceReader;
use super::tarx;
use crate::paths::fsops::{self, Snapshot};
use crate::paths::os_error::{cause, Cause};
use crate::paths::{names, EntryKind};
use crate::paths::{AsDir, BorrowedDir, Dir, FileId};

use crate::paths::shown::Shown;
use crate::paths::xattrs::{self, Xattr};
use crate::progress::{self, Unit};

/// What archiving the original produced (everything the metadata needs, plus what was seen).
pub(crate) struct Summary {
    pub kind: EntryKind,
    pub sha256: [u8; 32],
    pub size: u64,
    pub mode: u32,
    pub file_count: Option<u64>,
    pub observed: Vec<Observed>,
}

/// Append the item's content to `builder` at `item.relative_path`.
pub(crate) fn archive_source<W: Write>(
    builder: &mut Builder<W>,
    item: &TrashItem<'_>,
    cancel: &dyn Fn() -> bool,
) -> Result<Summary, TrashError> {
    let before = fsops::snapshot_at(item.parent, item.name)?;
    if fsops::is_mount_point(item.parent, item.name)? {
        return Err(TrashError::MountPoint(
            item.original_path.shown().into_owned(),
        ));
    }
    let mut walker = Walker {
        builder,
        cancel,
        display_dir: item.display_dir(),
        digest: TreeDigest::default(),
        observed: Vec::new(),
        size: 0,
        files: 0,
        linked: HashMap::new(),
    };
    let rel = PathBuf::from(item.name);
    let tar_path = PathBuf::from(item.relative_path);
    let (kind, sha256, size) = match before.kind() {
        EntryKind::File => {
            let sha = walker.add_file(item.parent, &rel, &tar_path, b"", before)?;
            (EntryKind::File, sha, before.size)
        }
        EntryKind::Symlink => {
            let (sha, len) = walker.add_symlink(item.parent, &rel, &tar_path, b"", before)?;
            (EntryKind::Symlink, sha, len)
        }
        EntryKind::Directory => {
            walker.walk_dir(item.parent, rel, tar_path, before)?;
            let sha = std::mem::take(&mut walker.digest).finish();
            (EntryKind::Directory, sha, walker.size)
        }
        EntryKind::Special => {
            return Err(TrashError::Unsupported(
                item.original_path.shown().into_owned(),
            ))
        }
    };
    Ok(Summary {
        kind,
        sha256,
        size,
        mode: before.permissions(),
        file_count: (kind == EntryKind::Directory).then_some(walker.files),
        observed: walker.observed,
    })
}

/// A directory being walked.
struct Frame {
    fd: Dir,
    /// The mount it is on, to tell entries that are mount points.
    mount: fsops::DirMount,
    names: std::vec::IntoIter<std::ffi::OsString>,
    snapshot: Snapshot,
    rel: PathBuf,
    tar_path: PathBuf,
    digest_path: Vec<u8>,
}

/// The first name of a file that has other names, as archived.
struct FirstName {
    tar_path: Vec<u8>,
    digest_path: Vec<u8>,
    /// What it looked like once it was read: its other names must look the same.
    snapshot: Snapshot,
}

/// State of one archiving walk.
struct Walker<'b, 'c, W: Write> {
    builder: &'b mut Builder<W>,
    cancel: &'c dyn Fn() -> bool,
    display_dir: &'c Path,
    digest: TreeDigest,
    observed: Vec<Observed>,
    /// Bytes of file content archived (a file with several names counts once).
    size: u64,
    /// Names of regular files (a file with several names counts once per name).
    files: u64,
    /// Files archived so far that have more than one name, by which file they are.
    linked: HashMap<FileId, FirstName>,
}

impl<W: Write> Walker<'_, '_, W> {
    /// Archive the directory `rel` (inside `parent`) and everything beneath it.
    fn walk_dir(
        &mut self,
        parent: BorrowedDir<'_>,
        rel: PathBuf,
        tar_path: PathBuf,
        before: Snapshot,
    ) -> Result<(), TrashError> {
        let mut stack = vec![self.enter_dir(parent, rel, tar_path, Vec::new(), before)?];
        while let Some(top) = stack.last_mut() {
            self.poll_cancel()?;
            let Some(name) = top.names.next() else {
                let done = stack.pop().expect("loop checked non-empty");
                self.leave_dir(done)?;
                continue;
            };
            let rel = top.rel.join(&name);
            let tar_path = top.tar_path.join(&name);
            let digest_path = child_path(&top.digest_path, name.as_encoded_bytes());
            let dir = top.fd.as_dir();
            let snap = fsops::snapshot_at(dir, &name).map_err(|e| self.vanished(&rel, e))?;
            if top.mount.holds_mount_point(dir, &name, snap.dev)? {
                let path = self.display(&rel);
                return Err(TrashError::MountPoint(path.shown().into_owned()));
            }
            match snap.kind() {
                EntryKind::File if self.linked.contains_key(&snap.id()) => {
                    self.add_hard_link(&rel, &tar_path, &digest_path, snap)?;
                }
                EntryKind::File => {
                    self.add_file(dir, &rel, &tar_path, &digest_path, snap)?;
                }
                EntryKind::Symlink => {
                    self.add_symlink(dir, &rel, &tar_path, &digest_path, snap)?;
                }
                EntryKind::Directory => {
                    let frame = self.enter_dir(dir, rel, tar_path, digest_path, snap)?;
                    stack.push(frame);
                }
                EntryKind::Special => {
                    let path = self.display(&rel);
                    return Err(TrashError::Unsupported(path.shown().into_owned()));
                }
            }
        }
        Ok(())
    }

    /// Open and list a directory, append its header, and start its frame.
    fn enter_dir(
        &mut self,
        parent: BorrowedDir<'_>,
        rel: PathBuf,
        tar_path: PathBuf,
        digest_path: Vec<u8>,
        before: Snapshot,
    ) -> Result<Frame, TrashError> {
        let name = rel.file_name().expect("non-empty");
        let fd = fsops::open_subdir(parent, name).map_err(|e| self.vanished(&rel, e))?;
        self.expect_same(&rel, &before, &fsops::snapshot_fd(&fd)?)?;
        let names = fsops::list_names(fd.as_dir())?;
        let mut header = tarx::content_header(EntryType::Directory, &before);
        let xattrs = xattrs::read_all(fd.as_dir())?;
        self.append_pax(before.mtime, None, &xattrs)?;
        self.builder
            .append_data(&mut header, &tar_path, io::empty())?;
        let mode = before.permissions();
        self.digest
            .add(&digest_path, EntryKind::Directory, mode, [0; 32]);
        self.observed.push(Observed {
            rel: rel.clone(),
            snapshot: before,
            children: names.len(),
        });
        progress::advance(Unit::Entries, 1);
        Ok(Frame {
            mount: fsops::DirMount::of(fd.as_dir())?,
            fd,
            names: names.into_iter(),
            snapshot: before,
            rel,
            tar_path,
            digest_path,
        })
    }

    /// A directory is done: it must not have changed since it was listed.
    fn leave_dir(&mut self, frame: Frame) -> Result<(), TrashError> {
        let after = fsops::snapshot_fd(&frame.fd)?;
        self.expect_same(&frame.rel, &frame.snapshot, &after)
    }

    /// Append a regular file, streaming and hashing it; returns the SHA-256 of its bytes.
    fn add_file(
        &mut self,
        dir: BorrowedDir<'_>,
        rel: &Path,
        tar_path: &Path,
        digest_path: &[u8],
        before: Snapshot,
    ) -> Result<[u8; 32], TrashError> {
        let name = rel.file_name().expect("non-empty");
        let mut file = fsops::open_for_read(dir, name).map_err(|e| self.vanished(rel, e))?;
        let stat = fsops::fstat(&file)?;
        let opened = Snapshot::of(&stat);
        self.expect_same(rel, &before, &opened)?;
        let mut header = tarx::content_header(EntryType::Regular, &opened);
        header.set_size(opened.size);
        let xattrs = xattrs::read_all(&file)?;
        self.append_pax(opened.mtime, None, &xattrs)?;
        let display = self.display(rel);
        let mut reader = SourceReader::new(&mut file, opened.size, self.cancel, &display);
        self.builder
            .append_data(&mut header, tar_path, &mut reader)?;
        let sha = reader.digest();
        self.expect_same(rel, &opened, &fsops::snapshot_fd(&file)?)?;
        let mode = opened.permissions();
        self.digest.add(digest_path, EntryKind::File, mode, sha);
        self.size += opened.size;
        self.files += 1;
        if fsops::link_count(&stat) > 1 {
            let first = FirstName {
                tar_path: tarx::member_path_bytes(tar_path),
                digest_path: digest_path.to_vec(),
                snapshot: opened,
            };
            self.linked.insert(opened.id(), first);
        }
        self.observe(rel, opened);
        Ok(sha)
    }

    /// Append another name of a file archived earlier in this walk as a hard-link entry to its
    /// first name. The file must be exactly as it was when its first name was read.
    fn add_hard_link(
        &mut self,
        rel: &Path,
        tar_path: &Path,
        digest_path: &[u8],
        now: Snapshot,
    ) -> Result<(), TrashError> {
        let first = &self.linked[&now.id()];
        self.expect_same(rel, &first.snapshot, &now)?;
        let target = first.tar_path.clone();
        self.digest
            .add_hard_link(digest_path, now.permissions(), &first.digest_path);
        let mut header = tarx::content_header(EntryType::Link, &now);
        tarx::set_link_target(&mut header, &target)?;
        self.append_pax(now.mtime, Some(&target), &[])?;
        self.builder
            .append_data(&mut header, tar_path, io::empty())?;
        self.files += 1;
        self.observe(rel, now);
        Ok(())
    }

    /// Append a symlink as a link; returns the SHA-256 and length of its target.
    fn add_symlink(
        &mut self,
        dir: BorrowedDir<'_>,
        rel: &Path,
        tar_path: &Path,
        digest_path: &[u8],
        before: Snapshot,
    ) -> Result<([u8; 32], u64), TrashError> {
        let name = rel.file_name().expect("non-empty");
        let target =
            names::into_vec(fsops::read_link_at(dir, name).map_err(|e| self.vanished(rel, e))?);
        let after = fsops::snapshot_at(dir, name).map_err(|e| self.vanished(rel, e))?;
        self.expect_same(rel, &before, &after)?;
        let mut header = tarx::content_header(EntryType::Symlink, &before);
        tarx::set_link_target(&mut header, &target)?;
        self.append_pax(before.mtime, Some(&target), &[])?;
        self.builder
            .append_data(&mut header, tar_path, io::empty())?;
        let sha: [u8; 32] = Sha256::digest(&target).into();
        self.digest.add(digest_path, EntryKind::Symlink, 0, sha);
        self.observe(rel, before);
        Ok((sha, target.len() as u64))
    }

    /// Append the PAX header that precedes an entry.
    fn append_pax(
        &mut self,
        mtime: (i64, u32),
        link: Option<&[u8]>,
        xattrs: &[Xattr],
    ) -> io::Result<()> {
        let records = tarx::pax_records(mtime, link, xattrs);
        self.builder
            .append_pax_extensions(records.iter().map(|(k, v)| (k.as_str(), v.as_slice())))
    }

    /// Record a non-directory entry as seen.
    fn observe(&mut self, rel: &Path, snapshot: Snapshot) {
        self.observed.push(Observed {
            rel: rel.to_path_buf(),
            snapshot,
            children: 0,
        });
        progress::advance(Unit::Entries, 1);
    }

    /// Conflict unless `now` is exactly `before`.
    fn expect_same(&self, rel: &Path, before: &Snapshot, now: &Snapshot) -> Result<(), TrashError> {
        if before == now {
            return Ok(());
        }
        Err(changed(
            &self.display(rel),
            "changed while it was being archived",
        ))
    }

    /// An entry that vanished or changed type between listing and opening is a conflict.
    fn vanished(&self, rel: &Path, e: io::Error) -> TrashError {
        let gone = e.kind() == io::ErrorKind::NotFound
            || matches!(
                cause(&e),
                Cause::Loop | Cause::NotADirectory | Cause::Invalid
            );
        if gone {
            changed(&self.display(rel), "changed while it was being archived")
        } else {
            TrashError::Io(e)
        }
    }

    /// Stop if the caller cancelled.
    fn poll_cancel(&self) -> Result<(), TrashError> {
        if (self.cancel)() {
            return Err(TrashError::Aborted);
        }
        Ok(())
    }

    /// Absolute path of `rel`, for messages.
    fn display(&self, rel: &Path) -> PathBuf {
        self.display_dir.join(rel)
    }
}
