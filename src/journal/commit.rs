//! A change of many entries, all or nothing — also when the process is killed at any point
//! (../../docs/tools.md#apply_patch for `apply_patch`; undo uses it too).
//!
//! 1. **Stage** (nothing visible changes): each new file has a temp name beside its target,
//!    journaled like any temp file before anything has it; when the change is applied the files
//!    are written under those names and fsynced, several at once (`Commit::stage_puts`), before
//!    the record is written. What the change destroys was put in the trash by the caller before.
//!    An append in place ([`Commit::append`]) is the one step not staged: its bytes go through
//!    the caller's checked handle when it is applied, and a copy of them is kept beside the
//!    record (written and fsynced before it), so that an append made or cut short is taken back
//!    — only what is provably ours ([`super::tail`]); one made whole and followed by someone
//!    else's append is cut out from before it (`commit/splice.rs`), so our bytes never stand
//!    without the record.
//! 2. **Record**: one fsynced journal record, state `applying`, lists every step: its directory
//!    (path, dev, ino), its name, its temp name (`aside`), and the identities that tell ours from
//!    anything else — the inode of each staged file and its SHA-256, the dev and ino of what each
//!    step replaces or removes. From here on the record answers for the temp names.
//! 3. **Apply**, step by step: a staged file takes a free name (`RENAME_NOREPLACE`) or is
//!    exchanged with the planned file (`RENAME_EXCHANGE`, then checked, [`fsops::swap_in`]), which
//!    stays under the temp name — where names cannot be exchanged (Windows), three no-replace
//!    renames end in the same state, through a hold name the record names
//!    ([`fsops::put_by_renames`]; for an instant the name is free); an entry to remove is renamed
//!    aside and checked
//!    ([`fsops::set_aside`]). A step that finds anything but what was planned undoes the steps
//!    before it (exchanged back, renamed back), and the change fails with nothing changed.
//! 4. **Applied**: every directory touched is fsynced and the record becomes `applied` (a sealed
//!    section appended to it and `fdatasync`'d, see `store.rs`: a section cut short reads as
//!    `applying`). This is the commit point.
//! 5. **Clean up**: what each step displaced (kept under its temp name until now) is removed —
//!    it is in the trash — then the change's **sequel** is performed, if it has one, and the
//!    record goes.
//!
//! A sequel is what must follow the change once it is made — for undo and `apply_patch`, the
//! history's record of the change ([`Commit::apply_then`]). It is prepared once every step is
//! made, before the commit point, and written into the record with `applied`, so it exists
//! exactly when the change will stand: recovery that finishes a change performs its sequel too
//! (the performer is told it may already have been done, by a kill after it and before the
//! record's removal); a change undone has none.
//!
//! Recovery of a record left by a crash: `applying` → every step is undone as far as it was done
//! (judged by the recorded identities, never by names alone), staged files are removed; `applied`
//! → the clean-up is finished and the sequel performed. Either way, afterwards every entry is as
//! before the change or every one as the change says. An entry that is neither ours nor the
//! planned one (the user changed it after the crash) is left where it is. Recovery does all of a
//! record or none of it: a sandbox that does not reach every directory it lists leaves it whole.
//! It is safe to run again on a record it recovered wholly or in part: every move is made only
//! from the state it undoes and checked after it, and what is removed is removed through what
//! was checked — a directory through its descriptor, anything else once moved from its temp name
//! to the doomed name derived from it ([`fsops::doomed_name`]), where a removal a kill cut short
//! is found and finished.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use super::commit_record::{ArchiveName, CommitRecord, HoldName, StepAction, StepRecord};
use super::made_dirs::{self, MadeDirRecord};
use super::{Journal, WrittenRecord};
use crate::hashing::{sha256_hex, sha256_reader};
use crate::paths::fsops::{self, Snapshot};
use crate::paths::{AsDir, BorrowedDir, Dir};
use crate::paths::{Stat, Version};

/// The staged identity in a put's record until its file is staged (no file has it).
const UNSTAGED: Version = Version {
    dev: 0,
    ino: 0,
    size: 0,
    mtime: (0, 0),
};

mod after;
mod apply;
mod clean_up;
mod failure;
mod recovery;
mod splice;
mod staging;
mod undo;

pub use after::{Aftermath, LeftInPlace, Sequel};
pub use failure::{CommitError, LeftAtEnd, StepFailure};
pub use recovery::recover;
#[cfg(test)]
pub use recovery::{kill_before_commit_point, left_by_a_dead_process};
pub(super) use splice::{copy_of, ForeignCopies};

/// The [`Version`] a snapshot describes.
fn version_of_snapshot(snap: &Snapshot) -> Version {
    Version {
        dev: snap.dev,
        ino: snap.ino,
        size: snap.size,
        mtime: snap.mtime,
    }
}

/// A file as planned: the stat it had and the SHA-256 of the bytes that were read (to tell an
/// in-place write without keeping the bytes), and those bytes when the plan kept them.
pub struct PlannedFile {
    pub stat: Stat,
    pub sha256: String,
    pub bytes: Option<BytesRead>,
}

impl PlannedFile {
    /// The file `stat` describes, read as `bytes`.
    pub fn new(stat: Stat, bytes: &[u8]) -> Self {
        Self {
            stat,
            sha256: sha256_hex(bytes),
            bytes: None,
        }
    }

    /// Whether `file` (open at its start) holds what was planned on: compared with the bytes
    /// read when the plan kept them, else hashed (the exchange checks the file it displaces so,
    /// and the clean-up once more before letting it go: two passes of SHA-256, ~1.4 GB/s here,
    /// over every file a change replaces, where a read and a comparison take a fraction).
    pub fn held_by(&self, file: &mut File) -> io::Result<bool> {
        match &self.bytes {
            Some(BytesRead(bytes)) => reads_as(file, bytes),
            None => holds(file, self.stat.size, &self.sha256),
        }
    }
}

/// The bytes a file held when a plan read it, shared with the plan that keeps them.
#[derive(Clone)]
pub struct BytesRead(pub Arc<Vec<u8>>);

impl std::fmt::Debug for BytesRead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BytesRead({} bytes)", self.0.len())
    }
}

/// Whether `file` (open at its start) holds exactly `expected`, read a block at a time (and no
/// further than one block past it, however much is written to it meanwhile).
fn reads_as(file: &mut File, expected: &[u8]) -> io::Result<bool> {
    if fsops::fstat(&*file)?.size != expected.len() as u64 {
        return Ok(false);
    }
    let mut block = vec![0; 64 * 1024];
    let mut at = 0;
    loop {
        let read = match file.read(&mut block) {
            Ok(0) => return Ok(at == expected.len()),
            Ok(read) => read,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if expected.get(at..at + read) != Some(&block[..read]) {
            return Ok(false);
        }
        at += read;
    }
}

/// Whether `file` (open at its start) holds `len` bytes hashing to `sha256`.
pub fn holds(file: &mut File, len: u64, sha256: &str) -> io::Result<bool> {
    if fsops::fstat(&*file)?.size != len {
        return Ok(false);
    }
    Ok(sha256_reader(Read::by_ref(file).take(len + 1))? == sha256)
}

/// One step, staged.
struct Staged {
    dir: Dir,
    record: StepRecord,
    /// For a put: the planned file it replaces (its new content is staged, known by the
    /// record's identity and SHA-256).
    replaces: Option<PlannedFile>,
    /// For a remove: what the entry must still be.
    removes: Option<Snapshot>,
    /// For a rename: the directory the entry goes to.
    to_dir: Option<Dir>,
    /// The temp record answering for the staged file until the commit record does.
    temp_entry: Option<WrittenRecord>,
    /// For a remove: what the entry set aside under the temp name must pass before the change
    /// goes on (a tree: every entry as archived); else it is put back and the change stopped.
    check_aside: Option<AsideCheck>,
    /// For an append: the file, opened and checked by the caller, and the bytes that go at its
    /// end (a copy of them is kept beside the record).
    append: Option<(File, Vec<u8>)>,
    /// For a put not staged yet: its bytes. Until [`Commit::stage_puts`] writes them, nothing
    /// has the step's temp name, and its record's staged identity (and the SHA-256, when the
    /// caller gave none) is not known.
    pending: Option<PendingPut>,
}

/// A put's new content, written under its temp name when the change is applied.
struct PendingPut {
    data: Vec<u8>,
    /// Whether the record's SHA-256 is still to be computed (the caller gave none).
    unhashed: bool,
    /// The file whose metadata the staged file takes.
    metadata_of: Option<Stat>,
    /// The block of temp names its name was taken from (see [`TempBlock`]).
    block: usize,
}

/// A check of an entry set aside as `aside` in `dir`: `true` if it may be removed.
pub type AsideCheck = Box<dyn Fn(BorrowedDir<'_>, &OsStr) -> bool + Send + Sync>;

/// A change being prepared: steps are staged one by one, then [`Commit::apply`] makes them all.
pub struct Commit<'a> {
    journal: &'a Journal,
    steps: Vec<Staged>,
    /// Directories made for the change, shallowest first, with a handle of each one's parent;
    /// removed again (if empty) unless the change is made.
    made: Vec<(MadeDirRecord, Dir)>,
    /// The record naming the directories made until the commit record does (see
    /// [`made_dirs::make_dirs`]).
    made_record: Option<WrittenRecord>,
    /// The blocks of temp names of the files staged, a directory each.
    temp_blocks: Vec<TempBlock>,
    archives: Vec<ArchiveName>,
    /// Whether a staged file takes the planned file's name by three renames rather than an
    /// exchange ([`fsops::put_by_renames`]: where names cannot be exchanged).
    by_renames: bool,
}

/// How many files a change stages in one directory under one temp record.
const TEMPS_A_RECORD: u64 = 256;

/// The counters of temp names reserved for the files a change stages in one directory, and the
/// one temp record that answers for them ([`Journal::begin_temps`]) until the commit record
/// does: a change of many files writes a record per directory, not per file.
struct TempBlock {
    /// The directory's canonical path and identity (dev, ino).
    path: PathBuf,
    identity: (u64, u64),
    /// The next counter to take, and the end of the block.
    next: u64,
    below: u64,
    /// `None` when it could not be written (a read-only data directory: the change goes on
    /// without one), or once what it answers for is left to recovery.
    record: Option<WrittenRecord>,
}

impl Journal {
    /// A new change of many entries (see the module docs).
    pub fn commit(&self) -> Commit<'_> {
        Commit {
            journal: self,
            steps: Vec::new(),
            made: Vec::new(),
            made_record: None,
            temp_blocks: Vec::new(),
            archives: Vec::new(),
            by_renames: !fsops::exchanges_names(),
        }
    }
}

impl Commit<'_> {
    /// The same change, its files put in place by renames as where names cannot be exchanged
    /// (Windows), whatever this system can do: tests of that way.
    #[cfg(test)]
    pub fn by_renames(mut self) -> Self {
        self.by_renames = true;
        self
    }

    /// Puts `data` as the new content of `name` in `dir` (canonical path `dir_path`), with the
    /// metadata of `metadata_of` (the file it replaces, or the one it moves); `replaces` is the
    /// file there now, as planned (`None`: the name must be free). Its temp name is taken and
    /// journaled now; the bytes are written under it when the change is applied.
    pub fn put(
        &mut self,
        dir: Dir,
        dir_path: &Path,
        name: &OsStr,
        data: Vec<u8>,
        metadata_of: Option<&Stat>,
        replaces: Option<PlannedFile>,
    ) -> io::Result<()> {
        let data = (data, None);
        self.put_hashed(dir, dir_path, name, data, metadata_of, replaces)
    }

    /// [`Commit::put`] of `data` with its SHA-256, when the caller has it already (a pass over
    /// the bytes saved); hashed when the change is applied otherwise. The bytes are written then
    /// too, beside those of the change's other puts ([`Commit::stage_puts`]).
    pub fn put_hashed(
        &mut self,
        dir: Dir,
        dir_path: &Path,
        name: &OsStr,
        (data, sha256): (Vec<u8>, Option<String>),
        metadata_of: Option<&Stat>,
        replaces: Option<PlannedFile>,
    ) -> io::Result<()> {
        debug_assert!(
            sha256
                .as_ref()
                .is_none_or(|given| *given == sha256_hex(&data)),
            "the SHA-256 given with a put is that of its bytes"
        );
        let (block, aside) = self.staging_name(&dir, dir_path, name)?;
        let unhashed = sha256.is_none();
        let action = StepAction::Put {
            staged: UNSTAGED,
            sha256: sha256.unwrap_or_default(),
            replaces: replaces.as_ref().map(|p| Stat::version(&p.stat)),
            hold: (self.by_renames && replaces.is_some())
                .then(|| HoldName(PathBuf::from(fsops::hold_name(&aside)))),
        };
        let record = StepRecord::in_dir(&dir, dir_path, name, &aside, action)?;
        self.steps.push(Staged {
            dir,
            record,
            replaces,
            removes: None,
            to_dir: None,
            temp_entry: None,
            append: None,
            check_aside: None,
            pending: Some(PendingPut {
                data,
                unhashed,
                metadata_of: metadata_of.cloned(),
                block,
            }),
        });
        Ok(())
    }

    /// A temp name to stage `name` under in `dir` (canonical path `dir_path`), answered for in
    /// the journal before anything has it: numbered from the block of counters reserved for the
    /// directory, whose one record answers for them all, or from a new block and its record (see
    /// [`TempBlock`]). Also the block's index.
    fn staging_name(
        &mut self,
        dir: &Dir,
        dir_path: &Path,
        name: &OsStr,
    ) -> io::Result<(usize, OsString)> {
        let identity = fsops::identity(&fsops::fstat(dir)?);
        let open = self.temp_blocks.iter().position(|block| {
            block.identity == identity && block.path == dir_path && block.next < block.below
        });
        let index = match open {
            Some(index) => index,
            None => {
                let first = fsops::reserve_temp_counters(TEMPS_A_RECORD);
                let below = first + TEMPS_A_RECORD;
                let first_name = fsops::numbered_temp_name(name, first);
                let made_above = self.made_above(dir_path);
                let record = self.journal.begin_temps(
                    dir_path,
                    dir.as_dir(),
                    &first_name,
                    Some(below),
                    made_above,
                );
                self.temp_blocks.push(TempBlock {
                    path: dir_path.to_owned(),
                    identity,
                    next: first,
                    below,
                    record,
                });
                self.temp_blocks.len() - 1
            }
        };
        let block = &mut self.temp_blocks[index];
        let aside = fsops::numbered_temp_name(name, block.next);
        block.next += 1;
        Ok((index, aside))
    }

    /// Opens the directory `dir` (canonical, beneath `anchor`) for the change's files, making
    /// the missing ones, each answered for in the journal before it has its name (see
    /// [`made_dirs::make_dirs`]): unless the change is made, they are removed again if they are
    /// still empty — also by recovery after a kill. Before the files staged in them.
    pub fn make_dirs(&mut self, anchor: &Path, dir: &Path) -> io::Result<Dir> {
        let before = self.made.iter().map(|(made, _)| made.clone()).collect();
        let made = made_dirs::make_dirs(self.journal, anchor, dir, before)?;
        self.made.extend(
            made.made
                .into_iter()
                .map(|dir| (MadeDirRecord::of(&dir), dir.parent)),
        );
        if let Some(record) = made.record {
            if let Some(old) = self.made_record.replace(record) {
                old.finish();
            }
        }
        Ok(made.dir)
    }

    /// The directories made for the change (see [`Commit::make_dirs`]) that hold `dir_path`:
    /// what a temp record for an entry staged there names, so that recovery removes them too.
    pub fn made_above(&self, dir_path: &Path) -> Vec<MadeDirRecord> {
        self.made
            .iter()
            .filter(|(made, _)| made.holds(dir_path))
            .map(|(made, _)| made.clone())
            .collect()
    }

    /// Adds a trash archive made for the change (its name in the workspace's trash): recovery
    /// discards it if it undoes the change (the caller discards it itself when the change
    /// fails in process).
    pub fn archived(&mut self, name: &OsStr) {
        self.archives.push(ArchiveName(PathBuf::from(name)));
    }

    /// Adds putting the entry already staged as `aside` in `dir` (canonical path `dir_path`) —
    /// a file, symlink or tree, e.g. extracted from the trash — in place as `name`, which must be
    /// free then. `temp_entry` is the temp record that answered for `aside` while it was staged:
    /// the commit record takes over from it.
    pub fn place(
        &mut self,
        dir: Dir,
        dir_path: &Path,
        aside: &OsStr,
        name: &OsStr,
        temp_entry: Option<WrittenRecord>,
    ) -> io::Result<()> {
        let staged = Snapshot::of(
            &fsops::lstat_at(dir.as_dir(), aside)?
                .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?,
        );
        let record = StepRecord::in_dir(
            &dir,
            dir_path,
            name,
            aside,
            StepAction::Place {
                staged: version_of_snapshot(&staged),
            },
        )?;
        self.push_plain(dir, record, None);
        if let Some(step) = self.steps.last_mut() {
            step.temp_entry = temp_entry;
        }
        Ok(())
    }

    /// Adds moving the entry `expected` describes from `name` in `dir` to `to_name` in `to_dir`
    /// (canonical paths `dir_path`, `to_dir_path`), where nothing may be then.
    #[allow(clippy::too_many_arguments)]
    pub fn rename(
        &mut self,
        dir: Dir,
        dir_path: &Path,
        name: &OsStr,
        expected: Snapshot,
        to_dir: Dir,
        to_dir_path: &Path,
        to_name: &OsStr,
    ) -> io::Result<()> {
        let to_stat = Snapshot::of(&fsops::fstat(&to_dir)?);
        let record = StepRecord::in_dir(
            &dir,
            dir_path,
            name,
            &fsops::temp_name(name),
            StepAction::Rename {
                moves: version_of_snapshot(&expected),
                to_dir: to_dir_path.to_owned(),
                to_dir_dev: to_stat.dev,
                to_dir_ino: to_stat.ino,
                to_name: PathBuf::from(to_name),
            },
        )?;
        self.push_plain(dir, record, Some(to_dir));
        Ok(())
    }

    /// Adds appending `data`, in place, to `file`: the file `name` in `dir` (canonical path
    /// `dir_path`), opened for appending and checked by the caller (what it holds, its links).
    /// Its size now is what the step starts from: a file longer or shorter when the step comes
    /// stops the change. The only step not staged beside its target: the bytes go through the
    /// handle at the step, and a copy of them is kept beside the record so that an append cut
    /// short is taken back, by the change or by recovery (see [`StepAction::Append`]).
    pub fn append(
        &mut self,
        dir: Dir,
        dir_path: &Path,
        name: &OsStr,
        file: File,
        data: Vec<u8>,
    ) -> io::Result<()> {
        let stat = fsops::fstat(&file)?;
        let (file_dev, file_ino) = stat.identity();
        let kept_from = self
            .steps
            .iter()
            .filter_map(|step| step.append.as_ref())
            .map(|(_, bytes)| bytes.len() as u64)
            .sum();
        let record = StepRecord::in_dir(
            &dir,
            dir_path,
            name,
            &fsops::temp_name(name),
            StepAction::Append {
                file_dev,
                file_ino,
                old_size: stat.size,
                len: data.len() as u64,
                sha256: sha256_hex(&data),
                kept_from,
            },
        )?;
        self.push_plain(dir, record, None);
        if let Some(step) = self.steps.last_mut() {
            step.append = Some((file, data));
        }
        Ok(())
    }

    fn push_plain(&mut self, dir: Dir, record: StepRecord, to_dir: Option<Dir>) {
        self.steps.push(Staged {
            dir,
            record,
            replaces: None,
            removes: None,
            to_dir,
            temp_entry: None,
            append: None,
            check_aside: None,
            pending: None,
        });
    }

    /// Hands the temp record `temp` (of what the last step added needs: its staged entry, or
    /// the directories made for it) to the commit record, which answers for it once written.
    pub fn hand_over(&mut self, temp: Option<WrittenRecord>) {
        if let Some(step) = self.steps.last_mut() {
            if let Some(old) = std::mem::replace(&mut step.temp_entry, temp) {
                old.finish();
            }
        }
    }

    /// How many steps the change has so far (a step's index names it in a [`CommitError`]).
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// Whether the change has no step yet.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// Adds the removal of `name` in `dir` (canonical path `dir_path`), which must still be the
    /// entry `expected` describes (its contents already in the trash).
    pub fn remove(
        &mut self,
        dir: Dir,
        dir_path: &Path,
        name: &OsStr,
        expected: Snapshot,
    ) -> io::Result<()> {
        let removes = version_of_snapshot(&expected);
        let action = StepAction::Remove { removes };
        self.add_removal(dir, dir_path, name, expected, action, None)
    }

    /// As [`Commit::remove`], with `check` run on the entry once it is set aside (by one
    /// rename, so nothing reaches it by its name any more): a tree is removed only if it is
    /// still what was archived, which `check` says. Failing it, the entry goes back to its name
    /// and the change stops ([`StepFailure::Changed`]).
    pub fn remove_checked(
        &mut self,
        dir: Dir,
        dir_path: &Path,
        name: &OsStr,
        expected: Snapshot,
        check: AsideCheck,
    ) -> io::Result<()> {
        self.remove(dir, dir_path, name, expected)?;
        if let Some(step) = self.steps.last_mut() {
            step.check_aside = Some(check);
        }
        Ok(())
    }

    /// Adds the removal of the empty directory `name` in `dir` (canonical path `dir_path`),
    /// the one `expected` describes: set aside, checked empty there, and after the commit point
    /// removed only while empty ([`StepAction::RemoveEmptyDir`]).
    pub fn remove_empty_dir(
        &mut self,
        dir: Dir,
        dir_path: &Path,
        name: &OsStr,
        expected: Snapshot,
    ) -> io::Result<()> {
        let removes = version_of_snapshot(&expected);
        let action = StepAction::RemoveEmptyDir { removes };
        let still_empty: AsideCheck = Box::new(|dir, aside| {
            fsops::open_subdir(dir, aside)
                .and_then(|d| fsops::list_names(d.as_dir()))
                .is_ok_and(|names| names.is_empty())
        });
        self.add_removal(dir, dir_path, name, expected, action, Some(still_empty))
    }

    /// Adds a removal step (`action`) of `name` in `dir`, set aside under a temp name and, if
    /// given, checked there by `check_aside`.
    fn add_removal(
        &mut self,
        dir: Dir,
        dir_path: &Path,
        name: &OsStr,
        expected: Snapshot,
        action: StepAction,
        check_aside: Option<AsideCheck>,
    ) -> io::Result<()> {
        let record = StepRecord::in_dir(&dir, dir_path, name, &fsops::temp_name(name), action)?;
        self.steps.push(Staged {
            dir,
            record,
            replaces: None,
            removes: Some(expected),
            to_dir: None,
            temp_entry: None,
            append: None,
            check_aside,
            pending: None,
        });
        Ok(())
    }
}

#[cfg(test)]
mod append_tests;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod by_renames_tests;
