//! One extraction of an archive under a temp name: every entry created through the
//! directories this extraction made (never through a path string or a planted link), files
//! hashed as they are written, the result checked against the metadata, directories finished
//! deepest first, then renamed into place or removed again (see the checks in `restore.rs`).

use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read};

use sha2::{Digest, Sha256};
use tar::{Entries, Entry};

use crate::paths::fsops;
use crate::paths::trees::{remove_tree_at, Removal};
use crate::paths::xattrs::{self, Xattr};
use crate::paths::EntryKind;
use crate::paths::{AsDir, BorrowedDir, Dir, FileId};
use crate::progress::{self, Unit};
use crate::trash::digest::TreeDigest;
use crate::trash::entry::{self, Decoding, EntryInfo};
use crate::trash::error::TrashError;
use crate::trash::metadata::Metadata;
use crate::trash::naming;
use crate::trash::read;
use crate::trash::stream::{write_restored, CHUNK};

/// A directory whose extended attributes, mode and mtime are applied once it is filled.
struct PendingDir {
    sub: Vec<u8>,
    mode: u32,
    mtime: (i64, u32),
    owner: Option<(u32, u32)>,
    xattrs: Vec<Xattr>,
}

/// The directories this extraction created, reachable from its root fd, and the regular files
/// it created beneath them (what a hard-link entry may name).
#[derive(Default)]
pub(super) struct Places {
    root: Option<Dir>,
    dirs: HashSet<Vec<u8>>,
    files: HashMap<Vec<u8>, Created>,
}

/// A regular file this extraction created.
struct Created {
    /// A hard link to it must be this very file.
    id: FileId,
    mode: u32,
}

impl Places {
    /// Open the created directory at `sub` (`""` = the root), walking down with `O_NOFOLLOW`.
    pub(super) fn open(&self, sub: &[u8]) -> io::Result<Dir> {
        let root = self
            .root
            .as_ref()
            .expect("the root exists before anything under it");
        let mut fd = root.try_clone()?;
        for part in sub.split(|b| *b == b'/').filter(|p| !p.is_empty()) {
            fd = fsops::open_subdir(fd.as_dir(), crate::paths::names::from_bytes(part))?;
        }
        Ok(fd)
    }
}

/// What was extracted, for the final comparison with the metadata.
#[derive(Default)]
struct Tally {
    tree: TreeDigest,
    single: Option<[u8; 32]>,
    size: u64,
    files: u64,
}

/// One extraction in progress.
pub(super) struct Extraction<'a> {
    parent: BorrowedDir<'a>,
    meta: &'a Metadata,
    cancel: &'a dyn Fn() -> bool,
    /// The name to extract the root under; `temp` is set once it exists.
    temp_name: &'a OsStr,
    temp: Option<OsString>,
    committed: bool,
    pub(super) places: Places,
    tally: Tally,
    pending: Vec<PendingDir>,
    buf: Vec<u8>,
}

impl<'a> Extraction<'a> {
    pub(super) fn new(
        parent: BorrowedDir<'a>,
        meta: &'a Metadata,
        temp_name: &'a OsStr,
        cancel: &'a dyn Fn() -> bool,
    ) -> Self {
        Extraction {
            parent,
            meta,
            cancel,
            temp_name,
            temp: None,
            committed: false,
            places: Places::default(),
            tally: Tally::default(),
            pending: Vec::new(),
            buf: vec![0; CHUNK],
        }
    }

    /// Extract every entry, check the result, and put it in place.
    pub(super) fn run<R: Read>(
        &mut self,
        entries: &mut Entries<'_, R>,
        target_name: &OsStr,
    ) -> Result<(), TrashError> {
        self.stage(entries)?;
        self.commit(target_name)
    }

    /// Extract every entry under the temp name, check the result and make it durable.
    pub(super) fn stage<R: Read>(
        &mut self,
        entries: &mut Entries<'_, R>,
    ) -> Result<(), TrashError> {
        for entry in entries {
            let mut entry = entry.map_err(read::unreadable)?;
            self.extract(&mut entry)?;
        }
        if self.temp.is_none() {
            return Err(TrashError::corrupt("it holds no content"));
        }
        self.verify()?;
        self.finish_dirs()
    }

    /// Create one entry.
    fn extract<R: Read>(&mut self, entry: &mut Entry<'_, R>) -> Result<(), TrashError> {
        if (self.cancel)() {
            return Err(TrashError::Aborted);
        }
        let info = entry::entry_info(entry, &self.meta.relative_path)?;
        if info.sub.is_empty() {
            self.create_root(&info, entry)?;
        } else {
            self.create_child(&info, entry)?;
        }
        progress::advance(Unit::Entries, 1);
        Ok(())
    }

    /// Create the archived entry itself under a fresh temp name in the target's directory.
    fn create_root<R: Read>(
        &mut self,
        info: &EntryInfo,
        entry: &mut Entry<'_, R>,
    ) -> Result<(), TrashError> {
        if self.temp.is_some() {
            return Err(TrashError::corrupt("it holds the archived entry twice"));
        }
        if info.hard_link.is_some() {
            return Err(TrashError::corrupt(
                "the archived entry itself is a hard link",
            ));
        }
        if info.kind != self.meta.kind || info.mode != self.meta.mode {
            return Err(TrashError::corrupt(format!(
                "its content is a {} with mode {:o}, but the metadata says a {} with mode {:o}",
                info.kind.as_str(),
                info.mode,
                self.meta.kind.as_str(),
                self.meta.mode
            )));
        }
        let file = self.create_root_node(info)?;
        match info.kind {
            EntryKind::File => {
                let file = file.expect("a file root was created");
                let (sha, len) = self.fill_file(file, entry, info)?;
                self.tally.single = Some(sha);
                self.tally.size = len;
            }
            EntryKind::Symlink => {
                let link = info.link.as_deref().expect("symlinks carry a target");
                let name = self.temp.clone().expect("just created");
                give_link_owner(self.parent, &name, info.owner)?;
                fsops::set_link_mtime_at(self.parent, &name, info.mtime)?;
                self.tally.single = Some(Sha256::digest(link).into());
                self.tally.size = link.len() as u64;
            }
            EntryKind::Directory => {
                let name = self.temp.clone().expect("just created");
                self.places.root = Some(fsops::open_subdir(self.parent, &name)?);
                self.add_dir(info);
            }
            EntryKind::Special => unreachable!("create_root_node refuses a special entry"),
        }
        Ok(())
    }

    /// Create the root node (file, directory or symlink) under the temp name.
    fn create_root_node(&mut self, info: &EntryInfo) -> Result<Option<File>, TrashError> {
        let name = self.temp_name;
        let file = match (info.kind, info.link.as_deref()) {
            (EntryKind::File, _) => fsops::create_file_at(self.parent, name).map(Some)?,
            (EntryKind::Directory, _) => fsops::mkdir_at(self.parent, name).map(|()| None)?,
            (EntryKind::Symlink, Some(link)) => {
                fsops::symlink_at(crate::paths::names::from_bytes(link), self.parent, name)
                    .map(|()| None)?
            }
            (EntryKind::Symlink, None) => unreachable!("symlink entries always carry a target"),
            (EntryKind::Special, _) => {
                return Err(TrashError::corrupt("it holds a device or FIFO entry"))
            }
        };
        self.temp = Some(name.to_owned());
        Ok(file)
    }

    /// Create an entry beneath the root, inside a directory this extraction created.
    fn create_child<R: Read>(
        &mut self,
        info: &EntryInfo,
        entry: &mut Entry<'_, R>,
    ) -> Result<(), TrashError> {
        let shown = String::from_utf8_lossy(&info.sub).into_owned();
        if self.meta.kind != EntryKind::Directory {
            return Err(TrashError::corrupt(format!(
                "entry {shown:?} lies beneath a {}",
                self.meta.kind.as_str()
            )));
        }
        let (parent_sub, name) = match info.sub.iter().rposition(|b| *b == b'/') {
            Some(at) => (&info.sub[..at], &info.sub[at + 1..]),
            None => (&info.sub[..0], &info.sub[..]),
        };
        if self.places.root.is_none() || !self.places.dirs.contains(parent_sub) {
            return Err(TrashError::corrupt(format!(
                "entry {shown:?} is not inside a directory of the archive \
                 (it would pass through a symlink, a file, or a missing directory)"
            )));
        }
        let dir = self.places.open(parent_sub)?;
        let name = crate::paths::names::from_bytes(name);
        let duplicate = |e: io::Error| duplicate_or_io(e, &shown);
        match (info.kind, &info.hard_link) {
            (EntryKind::File, Some(first)) => {
                let mode = self.link_child(dir.as_dir(), name, first, &shown)?;
                self.tally.tree.add_hard_link(&info.sub, mode, first);
                self.tally.files += 1;
            }
            (EntryKind::File, None) => {
                let file = fsops::create_file_at(dir.as_dir(), name).map_err(duplicate)?;
                let id = fsops::fstat(&file)?.id();
                let (sha, len) = self.fill_file(file, entry, info)?;
                self.tally
                    .tree
                    .add(&info.sub, EntryKind::File, info.mode, sha);
                self.tally.size += len;
                self.tally.files += 1;
                let created = Created {
                    id,
                    mode: info.mode,
                };
                self.places.files.insert(info.sub.clone(), created);
            }
            (EntryKind::Directory, _) => {
                fsops::mkdir_at(dir.as_dir(), name).map_err(duplicate)?;
                self.add_dir(info);
            }
            (EntryKind::Symlink, _) => {
                let link = info.link.as_deref().expect("symlinks carry a target");
                fsops::symlink_at(crate::paths::names::from_bytes(link), dir.as_dir(), name)
                    .map_err(duplicate)?;
                give_link_owner(dir.as_dir(), name, info.owner)?;
                fsops::set_link_mtime_at(dir.as_dir(), name, info.mtime)?;
                let sha = Sha256::digest(link).into();
                self.tally.tree.add(&info.sub, EntryKind::Symlink, 0, sha);
            }
            (EntryKind::Special, _) => {
                return Err(TrashError::corrupt("it holds a device or FIFO entry"))
            }
        }
        Ok(())
    }

    /// Give the regular file this extraction created at `first` the new name `name` in `dir`;
    /// returns its mode. Anything else `first` could name is corrupt: nothing created yet, a
    /// directory, a symlink, another hard link, the root, a path outside.
    fn link_child(
        &self,
        dir: BorrowedDir<'_>,
        name: &OsStr,
        first: &[u8],
        shown: &str,
    ) -> Result<u32, TrashError> {
        let Some(created) = self.places.files.get(first) else {
            return Err(TrashError::corrupt(format!(
                "its hard link {shown:?} points at {:?}, which is not a file extracted before it",
                String::from_utf8_lossy(first)
            )));
        };
        let (first_dir, first_name) = match first.iter().rposition(|b| *b == b'/') {
            Some(at) => (&first[..at], &first[at + 1..]),
            None => (&first[..0], first),
        };
        let first_dir = self.places.open(first_dir)?;
        let first_name = crate::paths::names::from_bytes(first_name);
        fsops::hard_link_at(first_dir.as_dir(), first_name, dir, name)
            .map_err(|e| duplicate_or_io(e, shown))?;
        let linked = fsops::lstat_at(dir, name)?.map(|stat| stat.id());
        if linked != Some(created.id) {
            return Err(TrashError::Conflict(format!(
                "{shown:?} is not the file it was linked to: something changed the files being \
                 restored"
            )));
        }
        Ok(created.mode)
    }

    /// Record a created directory: reachable for children, finished later.
    fn add_dir(&mut self, info: &EntryInfo) {
        self.places.dirs.insert(info.sub.clone());
        self.tally
            .tree
            .add(&info.sub, EntryKind::Directory, info.mode, [0; 32]);
        self.pending.push(PendingDir {
            sub: info.sub.clone(),
            mode: info.mode,
            mtime: info.mtime,
            owner: info.owner,
            xattrs: info.xattrs.clone(),
        });
    }

    /// Stream an entry's bytes into a freshly created file (chunks of zeros become holes, see
    /// [`write_restored`]); give it its owner, extended attributes, mode and mtime. (Durability
    /// comes on Linux from one `syncfs` before the commit, not an fsync per file: a tree of
    /// thousands of files restores several times faster, and nothing is visible at the target
    /// before then. Elsewhere `fsops::sync_written` fsyncs each file here.)
    fn fill_file<R: Read>(
        &mut self,
        mut file: File,
        entry: &mut Entry<'_, R>,
        info: &EntryInfo,
    ) -> Result<([u8; 32], u64), TrashError> {
        let expected = entry.size();
        let mut hasher = Sha256::new();
        let mut source = Decoding(entry);
        let copied = write_restored(
            &mut source,
            &mut file,
            &mut self.buf,
            &mut hasher,
            self.cancel,
        )?;
        if copied != expected {
            return Err(TrashError::corrupt("it is truncated"));
        }
        give_owner(&file, info.owner)?;
        xattrs::write_all(&file, &info.xattrs)?;
        fsops::set_mode_fd(&file, info.mode)?;
        fsops::set_mtime_fd(&file, info.mtime)?;
        fsops::sync_written(&file)?;
        Ok((hasher.finalize().into(), copied))
    }

    /// The extracted content must be what the metadata promises.
    fn verify(&mut self) -> Result<(), TrashError> {
        let actual = match self.meta.kind {
            EntryKind::Directory => std::mem::take(&mut self.tally.tree).finish(),
            _ => self.tally.single.expect("root extracted"),
        };
        let actual = naming::hex(&actual);
        if actual != self.meta.original_sha256 {
            return Err(TrashError::corrupt(format!(
                "its content does not match the recorded sha256 (recorded {}, found {actual})",
                self.meta.original_sha256
            )));
        }
        if self.tally.size != self.meta.size {
            return Err(TrashError::corrupt(
                "its content size differs from the metadata",
            ));
        }
        if self.meta.kind == EntryKind::Directory && self.meta.file_count != Some(self.tally.files)
        {
            return Err(TrashError::corrupt(
                "its file count differs from the metadata",
            ));
        }
        Ok(())
    }

    /// Give directories their owners, extended attributes, modes and mtimes, deepest first;
    /// then make everything extracted (files and directories alike) durable
    /// ([`fsops::sync_new_tree`]).
    fn finish_dirs(&mut self) -> Result<(), TrashError> {
        for dir in self.pending.iter().rev() {
            let fd = self.places.open(&dir.sub)?;
            give_owner(fd.as_dir(), dir.owner)?;
            xattrs::write_all(fd.as_dir(), &dir.xattrs)?;
            fsops::set_mode_fd(&fd, dir.mode)?;
            fsops::set_mtime_fd(&fd, dir.mtime)?;
            fsops::sync_written(fd.as_dir())?;
        }
        fsops::sync_new_tree(self.parent)?;
        Ok(())
    }

    /// Rename the temp root to the target without replacing anything; make it durable.
    fn commit(&mut self, target_name: &OsStr) -> Result<(), TrashError> {
        let temp = self.temp.as_deref().expect("root extracted");
        fsops::rename_noreplace(self.parent, temp, self.parent, target_name).map_err(|e| {
            if e.kind() == io::ErrorKind::AlreadyExists {
                TrashError::AlreadyExists
            } else {
                e.into()
            }
        })?;
        self.committed = true;
        if let (Some(root), Some(first)) = (&self.places.root, self.pending.first()) {
            fsops::set_mtime_fd(root, first.mtime)?;
        }
        fsops::sync_fd(self.parent)?;
        Ok(())
    }

    /// Remove whatever this extraction created (it failed before the commit): a file, a symlink
    /// or a whole tree, never following a link; directories it already made read-only are made
    /// writable first.
    pub(super) fn discard(&mut self) {
        self.places.root = None;
        if let (false, Some(temp)) = (self.committed, &self.temp) {
            let _ = remove_tree_at(self.parent, temp, Removal::OWN_TEMP);
        }
    }
}

/// Gives a restored file or directory its archived owner, as far as we may
/// ([`fsops::give_owner`]: as root, the user who owned it; otherwise at least its group, where
/// it is one of ours).
fn give_owner(entry: impl AsDir, owner: Option<(u32, u32)>) -> io::Result<()> {
    match owner {
        Some((uid, gid)) => fsops::give_owner(entry.as_dir(), uid, gid),
        None => Ok(()),
    }
}

/// [`give_owner`] for a restored symlink itself.
fn give_link_owner(
    dir: BorrowedDir<'_>,
    name: &OsStr,
    owner: Option<(u32, u32)>,
) -> io::Result<()> {
    match owner {
        Some((uid, gid)) => fsops::give_link_owner(dir, name, uid, gid),
        None => Ok(()),
    }
}

/// `EEXIST` while creating an entry means the archive names it twice.
fn duplicate_or_io(e: io::Error, shown: &str) -> TrashError {
    if e.kind() == io::ErrorKind::AlreadyExists {
        TrashError::corrupt(format!("entry {shown:?} appears twice"))
    } else {
        e.into()
    }
}
