//! A change of many entries, all or nothing — also when the process is killed at any point
//! (../../docs/tools.md#apply_patch for `apply_patch`; undo uses it too).
//!
//! 1. **Stage** (nothing visible changes): each new file is written and fsynced under a temp name
//!    beside its target ([`fsops::stage`], journaled like any temp file). What the change destroys
//!    was put in the trash by the caller before. An append in place ([`Commit::append`]) is the
//!    one step not staged: its bytes go through the caller's checked handle when it is applied,
//!    and a copy of them is kept beside the record (written and fsynced before it), so that an
//!    append made or cut short is taken back — only what is provably ours ([`super::tail`]).
//! 2. **Record**: one fsynced journal record, state `applying`, lists every step: its directory
//!    (path, dev, ino), its name, its temp name (`aside`), and the identities that tell ours from
//!    anything else — the inode of each staged file and its SHA-256, the dev and ino of what each
//!    step replaces or removes. From here on the record answers for the temp names.
//! 3. **Apply**, step by step: a staged file takes a free name (`RENAME_NOREPLACE`) or is
//!    exchanged with the planned file (`RENAME_EXCHANGE`, then checked, [`fsops::swap_in`]), which
//!    stays under the temp name; an entry to remove is renamed aside and checked
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
use std::io::{self, Read, Seek, SeekFrom, Write as _};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use serde_json::Value;

pub use super::commit_record::{ArchiveName, CommitRecord, StepAction, StepRecord};
use super::made_dirs::{self, MadeDirRecord};
use super::{Entry, Journal, Record, Recovered};
use crate::hashing::{sha256_hex, sha256_reader};
use crate::paths::fsops::race_point::{self, RacePoint};
use crate::paths::fsops::{self, RemoveError, ReplaceError, Replacing, Snapshot};
use crate::paths::{process, trees, Sandbox, Stat, Version};

/// The [`Version`] a snapshot describes.
fn version_of_snapshot(snap: &Snapshot) -> Version {
    Version {
        dev: snap.dev,
        ino: snap.ino,
        size: snap.size,
        mtime: snap.mtime,
    }
}

/// What recovery does besides putting entries back or finishing them.
pub trait Aftermath {
    /// Performs the sequel of a change recovery finishes (see the module docs).
    fn perform(&self, sequel: &Value) -> io::Result<()>;
    /// Discards the trash archive `name` made for a change recovery undoes.
    fn discard_archive(&self, name: &OsStr);
}

/// A performer of sequels alone discards no archive (for journals of changes that trash
/// nothing, as in tests).
impl<F: Fn(&Value) -> io::Result<()>> Aftermath for F {
    fn perform(&self, sequel: &Value) -> io::Result<()> {
        self(sequel)
    }

    fn discard_archive(&self, _name: &OsStr) {}
}

/// Whether a change's sequel was performed by [`Commit::apply_then`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sequel {
    /// The change had none.
    None,
    /// Performed; the record is gone.
    Performed,
    /// Performing it failed: the record stays, and the next `Workspace`'s recovery performs it.
    LeftToRecovery,
}

/// What the clean-up after the commit point could not remove of an entry a removal step set
/// aside (an entry the system refused to remove, a mount point met inside): the change stands,
/// and what is left is back at the entry's name if that was free.
#[derive(Debug)]
pub struct LeftInPlace {
    /// The step (in the order added).
    pub step: usize,
    /// The first removal that failed ([`trees::MountPointInside`] for a mount point, by its
    /// path from the step's directory, beginning with the temp name the entry was set aside as).
    pub error: io::Error,
}

/// A file as planned: the stat it had and the SHA-256 of the bytes that were read (to tell an
/// in-place write without keeping the bytes).
pub struct PlannedFile {
    pub stat: Stat,
    pub sha256: String,
}

impl PlannedFile {
    /// The file `stat` describes, read as `bytes`.
    pub fn new(stat: Stat, bytes: &[u8]) -> Self {
        Self {
            stat,
            sha256: sha256_hex(bytes),
        }
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
    dir: OwnedFd,
    record: StepRecord,
    /// For a put: the planned file it replaces (its new content is staged, known by the
    /// record's identity and SHA-256).
    replaces: Option<PlannedFile>,
    /// For a remove: what the entry must still be.
    removes: Option<Snapshot>,
    /// For a rename: the directory the entry goes to.
    to_dir: Option<OwnedFd>,
    /// The temp record answering for the staged file until the commit record does.
    temp_entry: Option<Entry>,
    /// For a remove: what the entry set aside under the temp name must pass before the change
    /// goes on (a tree: every entry as archived); else it is put back and the change stopped.
    check_aside: Option<AsideCheck>,
    /// For an append: the file, opened and checked by the caller, and the bytes that go at its
    /// end (a copy of them is kept beside the record).
    append: Option<(File, Vec<u8>)>,
}

/// A check of an entry set aside as `aside` in `dir`: `true` if it may be removed.
pub type AsideCheck = Box<dyn Fn(BorrowedFd<'_>, &OsStr) -> bool + Send + Sync>;

/// Why a change was not made.
#[derive(Debug)]
pub struct CommitError {
    /// The step (in the order added) that failed.
    pub step: usize,
    pub reason: StepFailure,
}

/// What went wrong with a step.
#[derive(Debug)]
pub enum StepFailure {
    /// The entry was not what was planned on (the message says how: replaced, written to, open
    /// for writing elsewhere); `kept` names a visible copy of something that took its place.
    Changed {
        being_written: bool,
        kept: Option<OsString>,
    },
    Io(io::Error),
}

impl From<ReplaceError> for StepFailure {
    fn from(e: ReplaceError) -> Self {
        match e {
            ReplaceError::Changed {
                kept,
                being_written,
            } => StepFailure::Changed {
                being_written,
                kept,
            },
            ReplaceError::Io(e) => StepFailure::Io(e),
        }
    }
}

impl From<RemoveError> for StepFailure {
    fn from(e: RemoveError) -> Self {
        match e {
            RemoveError::NotExpected { kept } => StepFailure::Changed {
                being_written: false,
                kept,
            },
            RemoveError::Io { error, .. } => StepFailure::Io(error),
        }
    }
}

/// A change being prepared: steps are staged one by one, then [`Commit::apply`] makes them all.
pub struct Commit<'a> {
    journal: &'a Journal,
    steps: Vec<Staged>,
    /// Directories made for the change, shallowest first, with a handle of each one's parent;
    /// removed again (if empty) unless the change is made.
    made: Vec<(MadeDirRecord, OwnedFd)>,
    /// The record naming the directories made until the commit record does (see
    /// [`made_dirs::make_dirs`]).
    made_record: Option<Entry>,
    archives: Vec<ArchiveName>,
}

impl Journal {
    /// A new change of many entries (see the module docs).
    pub fn commit(&self) -> Commit<'_> {
        Commit {
            journal: self,
            steps: Vec::new(),
            made: Vec::new(),
            made_record: None,
            archives: Vec::new(),
        }
    }
}

impl Commit<'_> {
    /// Stages `data` as the new content of `name` in `dir` (canonical path `dir_path`), with the
    /// metadata of `metadata_of` (the file it replaces, or the one it moves); `replaces` is the
    /// file there now, as planned (`None`: the name must be free).
    pub fn put(
        &mut self,
        dir: OwnedFd,
        dir_path: &Path,
        name: &OsStr,
        data: Vec<u8>,
        metadata_of: Option<&Stat>,
        replaces: Option<PlannedFile>,
    ) -> io::Result<()> {
        let aside = fsops::temp_name(name);
        let made_above = self
            .made
            .iter()
            .filter(|(made, _)| made.holds(dir_path))
            .map(|(made, _)| made.clone())
            .collect();
        let temp_entry =
            self.journal
                .begin_temp_in_made_dirs(dir_path, dir.as_fd(), &aside, made_above);
        if let Err(e) = fsops::stage(dir.as_fd(), name, &aside, &data, metadata_of) {
            if let Some(entry) = temp_entry {
                entry.finish();
            }
            return Err(e);
        }
        let staged = fsops::lstat_at(dir.as_fd(), &aside)?
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
        let record = StepRecord::in_dir(
            &dir,
            dir_path,
            name,
            &aside,
            StepAction::Put {
                staged: Stat::version(&staged),
                sha256: sha256_hex(&data),
                replaces: replaces.as_ref().map(|p| Stat::version(&p.stat)),
            },
        )?;
        self.steps.push(Staged {
            dir,
            record,
            replaces,
            removes: None,
            to_dir: None,
            temp_entry,
            append: None,
            check_aside: None,
        });
        Ok(())
    }

    /// Opens the directory `dir` (canonical, beneath `anchor`) for the change's files, making
    /// the missing ones, each answered for in the journal before it has its name (see
    /// [`made_dirs::make_dirs`]): unless the change is made, they are removed again if they are
    /// still empty — also by recovery after a kill. Before the files staged in them.
    pub fn make_dirs(&mut self, anchor: &Path, dir: &Path) -> io::Result<OwnedFd> {
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
        dir: OwnedFd,
        dir_path: &Path,
        aside: &OsStr,
        name: &OsStr,
        temp_entry: Option<Entry>,
    ) -> io::Result<()> {
        let staged = Snapshot::of(
            &fsops::lstat_at(dir.as_fd(), aside)?
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
        dir: OwnedFd,
        dir_path: &Path,
        name: &OsStr,
        expected: Snapshot,
        to_dir: OwnedFd,
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
        dir: OwnedFd,
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

    fn push_plain(&mut self, dir: OwnedFd, record: StepRecord, to_dir: Option<OwnedFd>) {
        self.steps.push(Staged {
            dir,
            record,
            replaces: None,
            removes: None,
            to_dir,
            temp_entry: None,
            append: None,
            check_aside: None,
        });
    }

    /// Hands the temp record `temp` (of what the last step added needs: its staged entry, or
    /// the directories made for it) to the commit record, which answers for it once written.
    pub fn hand_over(&mut self, temp: Option<Entry>) {
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
        dir: OwnedFd,
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
        dir: OwnedFd,
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
        dir: OwnedFd,
        dir_path: &Path,
        name: &OsStr,
        expected: Snapshot,
    ) -> io::Result<()> {
        let removes = version_of_snapshot(&expected);
        let action = StepAction::RemoveEmptyDir { removes };
        let still_empty: AsideCheck = Box::new(|dir, aside| {
            fsops::open_subdir(dir, aside)
                .and_then(|d| fsops::list_names(d.as_fd()))
                .is_ok_and(|names| names.is_empty())
        });
        self.add_removal(dir, dir_path, name, expected, action, Some(still_empty))
    }

    /// Adds a removal step (`action`) of `name` in `dir`, set aside under a temp name and, if
    /// given, checked there by `check_aside`.
    fn add_removal(
        &mut self,
        dir: OwnedFd,
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
        });
        Ok(())
    }

    /// Makes every step, or none (see the module docs). Staged files are gone either way.
    pub fn apply(self) -> Result<(), CommitError> {
        self.apply_then(|| Ok(None), |_| Ok(())).map(|_| ())
    }

    /// As [`Commit::apply`], followed by a sequel (see the module docs): `prepare` makes it once
    /// every step is made, before the commit point (`None`: there is none; an error undoes the
    /// change); it is written into the record with the commit point; `perform` does it after the
    /// clean-up, and only then does the record go. Should `perform` fail, the record stays for
    /// the next recovery to perform it.
    pub fn apply_then(
        self,
        prepare: impl FnOnce() -> io::Result<Option<Value>>,
        perform: impl FnOnce(&Value) -> io::Result<()>,
    ) -> Result<Sequel, CommitError> {
        self.apply_reporting(prepare, perform)
            .map(|(sequel, _)| sequel)
    }

    /// As [`Commit::apply_then`], also saying what the clean-up after the commit point could
    /// not remove of what removal steps set aside (the change stands; see [`LeftInPlace`]).
    pub fn apply_reporting(
        mut self,
        prepare: impl FnOnce() -> io::Result<Option<Value>>,
        perform: impl FnOnce(&Value) -> io::Result<()>,
    ) -> Result<(Sequel, Vec<LeftInPlace>), CommitError> {
        let failed = |step, reason| CommitError { step, reason };
        let mut record = CommitRecord {
            applied: false,
            steps: self.steps.iter().map(|s| s.record.clone()).collect(),
            pid: std::process::id(),
            sequel: None,
            made_dirs: self.made.iter().map(|(made, _)| made.clone()).collect(),
            archives: self.archives.clone(),
        };
        let kept: Vec<&[u8]> = self
            .steps
            .iter()
            .filter_map(|step| step.append.as_ref())
            .map(|(_, bytes)| bytes.as_slice())
            .collect();
        let entry = match self
            .journal
            .write_with_kept(&Record::Commit(record.clone()), &kept)
        {
            Ok(entry) => entry,
            Err(e) => {
                self.discard();
                return Err(failed(0, StepFailure::Io(e)));
            }
        };
        // The commit record answers for the temp names and the directories made from here on.
        for step in &mut self.steps {
            if let Some(temp) = step.temp_entry.take() {
                temp.finish();
            }
        }
        if let Some(made) = self.made_record.take() {
            made.finish();
        }
        process::crash_point("recorded");
        for index in 0..self.steps.len() {
            if let Err(reason) = apply_step(&self.steps[index]) {
                self.undo_steps(index);
                self.discard();
                sync_dirs(&self.steps);
                entry.finish();
                return Err(failed(index, reason));
            }
        }
        sync_dirs(&self.steps);
        process::crash_point("made");
        record.applied = true;
        // The commit point, with the sequel. Should the record not be rewritten, recovery undoes
        // the change, so the call must not report it done: undo it now.
        let committed = prepare().and_then(|sequel| {
            record.sequel = sequel;
            self.journal
                .rewrite_durable(&entry, &Record::Commit(record.clone()))
        });
        if let Err(e) = committed {
            self.undo_steps(self.steps.len());
            sync_dirs(&self.steps);
            entry.finish();
            return Err(failed(0, StepFailure::Io(e)));
        }
        // The directories made hold the change's files now: they stay.
        self.made.clear();
        process::crash_point("applied");
        let mut left = Vec::new();
        for (step, staged) in self.steps.iter().enumerate() {
            let error = clean_up(staged.dir.as_fd(), &staged.record, staged.replaces.as_ref());
            if let Some(error) = error {
                left.push(LeftInPlace { step, error });
            }
        }
        process::crash_point("cleaned");
        let outcome = match &record.sequel {
            None => Sequel::None,
            Some(sequel) => match perform(sequel) {
                Ok(()) => {
                    process::crash_point("sequel");
                    Sequel::Performed
                }
                // The record stays: the next recovery finds the change applied and performs it.
                Err(_) => return Ok((Sequel::LeftToRecovery, left)),
            },
        };
        entry.finish();
        Ok((outcome, left))
    }

    /// Takes back the first `done` steps, newest first.
    fn undo_steps(&self, done: usize) {
        for step in self.steps[..done].iter().rev() {
            let mut appended = step.append.as_ref().map(|(_, bytes)| bytes.as_slice());
            undo_step(
                step.dir.as_fd(),
                step.to_dir.as_ref().map(|d| d.as_fd()),
                &step.record,
                appended.as_mut().map(|bytes| bytes as &mut dyn Read),
            );
        }
    }

    /// Removes the staged files of steps not applied, then the directories made for them that
    /// are empty.
    fn discard(&mut self) {
        for step in &mut self.steps {
            let aside = step.record.aside.as_os_str();
            match &step.record.action {
                StepAction::Put { staged, .. } => remove_staged(step.dir.as_fd(), aside, staged),
                StepAction::Place { staged } => {
                    let _ =
                        remove_aside(step.dir.as_fd(), aside, *staged, trees::Removal::OWN_TEMP);
                }
                _ => {}
            }
            if let Some(temp) = step.temp_entry.take() {
                temp.finish();
            }
        }
        for (made, parent) in self.made.drain(..).rev() {
            made_dirs::remove_if_empty(parent.as_fd(), &made);
        }
        if let Some(made) = self.made_record.take() {
            made.finish();
        }
    }
}

impl Drop for Commit<'_> {
    /// A change dropped before it was applied leaves nothing staged behind.
    fn drop(&mut self) {
        self.discard();
    }
}

fn changed() -> StepFailure {
    StepFailure::Changed {
        being_written: false,
        kept: None,
    }
}

/// A name taken meanwhile is a change; anything else an I/O error.
fn taken(e: io::Error) -> StepFailure {
    if e.kind() == io::ErrorKind::AlreadyExists {
        changed()
    } else {
        StepFailure::Io(e)
    }
}

fn apply_step(step: &Staged) -> Result<(), StepFailure> {
    let (dir, name, aside) = (
        step.dir.as_fd(),
        step.record.name.as_os_str(),
        step.record.aside.as_os_str(),
    );
    match (&step.record.action, &step.replaces, &step.removes) {
        (StepAction::Put { staged, sha256, .. }, None, _) => {
            let ours = |file: &mut File| holds(file, staged.size, sha256);
            fsops::swap_in(dir, aside, name, &ours, Replacing::Nothing)?
        }
        (StepAction::Put { staged, sha256, .. }, Some(planned), _) => {
            let ours = |file: &mut File| holds(file, staged.size, sha256);
            let same_content = |file: &mut File| holds(file, planned.stat.size, &planned.sha256);
            fsops::swap_in(
                dir,
                aside,
                name,
                &ours,
                Replacing::File {
                    stat: &planned.stat,
                    same_content: &same_content,
                },
            )?
        }
        (
            StepAction::Remove { removes } | StepAction::RemoveEmptyDir { removes },
            _,
            Some(expected),
        ) => {
            let expected = *expected;
            fsops::set_aside(dir, name, aside, &|found| {
                let found = Snapshot::of(found);
                found.same_except_ctime(&expected)
                    || found == expected
                    || (found.kind() == crate::paths::EntryKind::Directory
                        && (found.dev, found.ino) == (expected.dev, expected.ino))
            })?;
            if let Some(check) = &step.check_aside {
                if !check(dir, aside) {
                    move_checked(dir, aside, dir, name, removes);
                    return Err(changed());
                }
            }
        }
        (StepAction::Remove { .. } | StepAction::RemoveEmptyDir { .. }, _, None) => {
            unreachable!("a remove step knows what it removes")
        }
        (StepAction::Place { staged }, _, _) => {
            let here = fsops::lstat_at(dir, aside).map_err(StepFailure::Io)?;
            if !here.is_some_and(|s| staged.is(&s)) {
                return Err(changed());
            }
            fsops::rename_noreplace(dir, aside, dir, name).map_err(taken)?;
        }
        (StepAction::Append { old_size, len, .. }, _, _) => {
            let Some((file, data)) = &step.append else {
                return Err(changed());
            };
            apply_append(file, *old_size, data, *len)?
        }
        (StepAction::Rename { moves, to_name, .. }, _, _) => {
            let to_dir = step
                .to_dir
                .as_ref()
                .expect("a rename knows where to")
                .as_fd();
            let here = fsops::lstat_at(dir, name).map_err(StepFailure::Io)?;
            if !here.is_some_and(|s| moves.is(&s)) {
                return Err(changed());
            }
            fsops::rename_noreplace(dir, name, to_dir, to_name.as_os_str()).map_err(taken)?;
            // What moved must be what was checked (a swap in between is moved back).
            let moved = fsops::lstat_at(to_dir, to_name.as_os_str()).map_err(StepFailure::Io)?;
            if !moved.is_some_and(|s| moves.is(&s)) {
                let _ = fsops::rename_noreplace(to_dir, to_name.as_os_str(), dir, name);
                return Err(changed());
            }
        }
    }
    Ok(())
}

/// Appends `data` (`len` bytes) through `file`, which must still be `old_size` bytes long
/// (the step's own check, race-free on the handle), and syncs it. An append that fails is taken
/// back at once if what follows the old end is provably ours (see `tail::roll_back_if_ours`).
fn apply_append(file: &File, old_size: u64, data: &[u8], len: u64) -> Result<(), StepFailure> {
    if fsops::fstat(file).map_err(StepFailure::Io)?.size != old_size {
        return Err(changed());
    }
    let mut through = file;
    let written = through.write_all(data).and_then(|()| file.sync_data());
    if let Err(e) = written {
        let rolled_back = super::tail::roll_back_if_ours(file, old_size, data, len, false);
        if matches!(rolled_back, Ok(super::Tail::Other)) {
            return Err(StepFailure::Io(io::Error::new(e.kind(), LeftAtEnd(e))));
        }
        return Err(StepFailure::Io(e));
    }
    Ok(())
}

/// An append that failed partway and was not taken back, because the file also changed
/// meanwhile: whatever part of the bytes went through is left at its end. Carried by the
/// step's `io::Error` (the OS error inside).
#[derive(Debug)]
pub struct LeftAtEnd(pub io::Error);

impl LeftAtEnd {
    /// The OS error of an append left at the file's end, if `e` carries one.
    pub fn of(e: &io::Error) -> Option<&io::Error> {
        e.get_ref()?.downcast_ref::<LeftAtEnd>().map(|left| &left.0)
    }
}

impl std::fmt::Display for LeftAtEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for LeftAtEnd {}

/// Takes back an append: the file `name` in `dir`, if it is still the recorded one, is cut back
/// to its old size when what follows it is a prefix of ours (`appended`) or all of it, and
/// nothing else; anything else is left as it is (see `tail::roll_back_if_ours`). Safe to run
/// again: a file cut back already has nothing after its old end.
fn undo_append(dir: BorrowedFd<'_>, step: &StepRecord, appended: Option<&mut dyn Read>) {
    let StepAction::Append {
        file_dev,
        file_ino,
        old_size,
        len,
        ..
    } = &step.action
    else {
        return;
    };
    let Some(ours) = appended else { return };
    let Ok(file) = fsops::open_for_update(dir, step.name.as_os_str()) else {
        return;
    };
    let ours_now = fsops::fstat(&file).is_ok_and(|s| {
        s.kind() == crate::paths::EntryKind::File && s.identity() == (*file_dev, *file_ino)
    });
    if ours_now {
        let _ = super::tail::roll_back_if_ours(&file, *old_size, ours, *len, false);
    }
}

/// Takes back a step, as far as it was done: judged by identities (and a staged file by its
/// content too), so only what is ours moves. Safe to run again on a step taken back wholly or
/// in part (by a recovery that was itself killed): each move is made only from the state it
/// undoes, and checked after it (a swap in between is moved back). An append is taken back
/// with its bytes, `appended` (none: it is left as it is).
fn undo_step(
    dir: BorrowedFd<'_>,
    to_dir: Option<BorrowedFd<'_>>,
    step: &StepRecord,
    appended: Option<&mut dyn Read>,
) {
    let (name, aside) = (step.name.as_os_str(), step.aside.as_os_str());
    let at = |n: &OsStr| fsops::lstat_at(dir, n).ok().flatten();
    // What a removal of the staged entry cut short left is settled before anything is judged.
    if let StepAction::Put { staged, .. } | StepAction::Place { staged } = &step.action {
        let doomed = fsops::doomed_name(aside);
        settle_doomed(dir, aside, &doomed, *staged, trees::Removal::OWN_TEMP);
    }
    match &step.action {
        StepAction::Put {
            staged,
            sha256,
            replaces: None,
        } => {
            // Ours took the free name: it leaves it (aside, then removed).
            if is_staged(dir, name, staged, sha256) && at(aside).is_none() {
                move_checked(dir, name, dir, aside, staged);
            }
            remove_staged(dir, aside, staged);
        }
        StepAction::Put {
            staged,
            sha256,
            replaces: Some(old),
        } => {
            let swapped =
                is_staged(dir, name, staged, sha256) && at(aside).is_some_and(|s| old.is(&s));
            if swapped {
                race_point::reached(RacePoint::BeforeReplace, name);
                exchange_checked(dir, aside, name, staged, old);
            }
            remove_staged(dir, aside, staged);
        }
        StepAction::Remove { removes } | StepAction::RemoveEmptyDir { removes } => {
            if at(aside).is_some_and(|s| removes.is(&s)) && at(name).is_none() {
                move_checked(dir, aside, dir, name, removes);
            }
        }
        StepAction::Place { staged } => {
            if at(name).is_some_and(|s| staged.is(&s)) && at(aside).is_none() {
                move_checked(dir, name, dir, aside, staged);
            }
            remove_aside(dir, aside, *staged, trees::Removal::OWN_TEMP);
        }
        StepAction::Rename { moves, to_name, .. } => {
            let Some(to_dir) = to_dir else { return };
            let there = fsops::lstat_at(to_dir, to_name.as_os_str()).ok().flatten();
            if there.is_some_and(|s| moves.is(&s)) && at(name).is_none() {
                move_checked(to_dir, to_name.as_os_str(), dir, name, moves);
            }
        }
        StepAction::Append { .. } => undo_append(dir, step, appended),
    }
}

/// Moves `from` to the free name `to`; should what arrived not be `ident` (the name was swapped
/// between the caller's check and the move), moves it back.
fn move_checked(
    from_dir: BorrowedFd<'_>,
    from: &OsStr,
    to_dir: BorrowedFd<'_>,
    to: &OsStr,
    ident: &Version,
) {
    if fsops::rename_noreplace(from_dir, from, to_dir, to).is_err() {
        return;
    }
    let arrived = fsops::lstat_at(to_dir, to).ok().flatten();
    if !arrived.is_some_and(|s| ident.is(&s)) {
        let _ = fsops::rename_noreplace(to_dir, to, from_dir, from);
    }
}

/// Exchanges `aside` (holding `old`) and `name` (holding `staged`); should either not hold what
/// it should afterwards (one was swapped between the caller's check and the exchange), exchanges
/// them back.
fn exchange_checked(
    dir: BorrowedFd<'_>,
    aside: &OsStr,
    name: &OsStr,
    staged: &Version,
    old: &Version,
) {
    if fsops::rename_exchange(dir, aside, dir, name).is_err() {
        return;
    }
    let at = |n: &OsStr| fsops::lstat_at(dir, n).ok().flatten();
    let as_planned =
        at(name).is_some_and(|s| old.is(&s)) && at(aside).is_some_and(|s| staged.is(&s));
    if !as_planned {
        let _ = fsops::rename_exchange(dir, aside, dir, name);
    }
}

/// Removes what our temp name `aside` holds if it is `ident`, acting only on what was checked:
/// a directory is emptied through the descriptor its identity was checked on (by name, only the
/// empty directory goes: [`trees::remove_tree_if`]); anything else is first moved to its doomed
/// name ([`fsops::doomed_name`]), checked there and removed — or put back. What a removal cut
/// short by a kill left is settled first ([`settle_doomed`]), so running this again is safe.
/// Returns the first removal that failed, if one did.
fn remove_aside(
    dir: BorrowedFd<'_>,
    aside: &OsStr,
    ident: Version,
    how: trees::Removal<'_>,
) -> Option<io::Error> {
    let doomed = fsops::doomed_name(aside);
    settle_doomed(dir, aside, &doomed, ident, how);
    let stat = fsops::lstat_at(dir, aside).ok().flatten()?;
    if !ident.is(&stat) {
        return None;
    }
    if Snapshot::of(&stat).kind() == crate::paths::EntryKind::Directory {
        trees::remove_tree_if(dir, aside, how, &|found| ident.is(found)).err()
    } else if fsops::set_aside(dir, aside, &doomed, &|found| ident.is(found)).is_ok() {
        fsops::unlink_at(dir, &doomed).err()
    } else {
        None
    }
}

/// Finishes a removal from `aside` that a kill cut short: what it left under its doomed name
/// `doomed` (a name nothing but such a removal uses) is removed if it is `ident`, else put back
/// under `aside`.
fn settle_doomed(
    dir: BorrowedFd<'_>,
    aside: &OsStr,
    doomed: &OsStr,
    ident: Version,
    how: trees::Removal<'_>,
) {
    match fsops::lstat_at(dir, doomed).ok().flatten() {
        Some(found) if ident.is(&found) => {
            let _ = trees::remove_tree_at(dir, doomed, how);
        }
        Some(_) => {
            let _ = fsops::rename_noreplace(dir, doomed, dir, aside);
        }
        None => {}
    }
}

/// After the commit point: removes what a step displaced (in the trash already, or taken
/// back by the history's delta); a file a put displaced is let go without losing a late write
/// into it ([`let_go_displaced`]; `planned` is its content as planned, when known in process).
/// Returns what a removal could not remove (see [`LeftInPlace`]).
fn clean_up(
    dir: BorrowedFd<'_>,
    step: &StepRecord,
    planned: Option<&PlannedFile>,
) -> Option<io::Error> {
    let aside = step.aside.as_os_str();
    match &step.action {
        StepAction::Put {
            replaces: Some(displaced),
            ..
        } => {
            let name = step.name.as_os_str();
            let _ = let_go_displaced(dir, aside, name, *displaced, planned);
        }
        StepAction::Remove { removes } => {
            let failed = remove_aside(dir, aside, *removes, trees::Removal::EVERYTHING);
            // What a removed tree's clean-up could not remove (the system refused it after the
            // checks) goes back to the tree's name if it is free; what went is in the trash
            // (unless the removal was permanent).
            let left = fsops::lstat_at(dir, aside).ok().flatten();
            if left
                .is_some_and(|s| removes.is(&s) && s.kind() == crate::paths::EntryKind::Directory)
            {
                let _ = fsops::rename_noreplace(dir, aside, dir, step.name.as_os_str());
            }
            return failed;
        }
        StepAction::RemoveEmptyDir { removes } => {
            let ours = fsops::lstat_at(dir, aside)
                .ok()
                .flatten()
                .is_some_and(|s| removes.is(&s));
            if ours && fsops::rmdir_at(dir, aside).is_err() {
                // Only while empty: what appeared in it meanwhile stays, with it, at its name.
                let _ = fsops::rename_noreplace(dir, aside, dir, step.name.as_os_str());
            }
        }
        StepAction::Put { replaces: None, .. }
        | StepAction::Place { .. }
        | StepAction::Rename { .. }
        | StepAction::Append { .. } => {}
    }
    None
}

/// Unlinks the file a put displaced, kept under `aside` since the exchange, as `swap_in`'s
/// single-file write does (`fsops::write_atomic`): only if it is still the `displaced` version,
/// then checked once more through its descriptor (its bytes as `planned`, else its version):
/// bytes a writer that had it open from before the exchange wrote into it before its name went
/// (where no lease can tell such a writer) are kept in a new file beside `name`. A file under
/// `aside` that is another version already is given a visible name beside `name` rather than
/// removed. Returns the name anything was kept as. Safe to run again (the doomed name, as for
/// [`remove_aside`]).
fn let_go_displaced(
    dir: BorrowedFd<'_>,
    aside: &OsStr,
    name: &OsStr,
    displaced: Version,
    planned: Option<&PlannedFile>,
) -> Option<OsString> {
    let doomed = fsops::doomed_name(aside);
    settle_doomed(dir, aside, &doomed, displaced, trees::Removal::EVERYTHING);
    let stat = fsops::lstat_at(dir, aside).ok()??;
    if Snapshot::of(&stat).kind() != crate::paths::EntryKind::File {
        return None;
    }
    if !displaced.is(&stat) {
        return fsops::keep_visible(dir, aside, name).ok();
    }
    let file = fsops::open_for_read(dir, aside).ok()?;
    if !fsops::fstat(&file).is_ok_and(|s| displaced.is(&s)) {
        return fsops::keep_visible(dir, aside, name).ok();
    }
    race_point::reached(RacePoint::ReplacedChecked, name);
    if fsops::set_aside(dir, aside, &doomed, &|found| displaced.is(found)).is_err() {
        // Written into since: what `set_aside` put back under `aside` is kept visible.
        return fsops::keep_visible(dir, aside, name).ok();
    }
    fsops::unlink_at(dir, &doomed).ok()?;
    race_point::reached(RacePoint::ReplacedUnlinked, name);
    let unchanged = |file: &mut File| match planned {
        Some(planned) => holds(file, planned.stat.size, &planned.sha256),
        None => fsops::fstat(&*file).map(|s| displaced.is(&s)),
    };
    fsops::keep_late_bytes(dir, name, file, &unchanged)
}

/// Whether `name` is the staged file `staged` with the content hashing to `sha256`.
fn is_staged(dir: BorrowedFd<'_>, name: &OsStr, staged: &Version, sha256: &str) -> bool {
    let Ok(file) = fsops::open_for_read(dir, name) else {
        return false;
    };
    fsops::fstat(&file).is_ok_and(|s| staged.is(&s))
        && crate::hashing::sha256_reader(file).is_ok_and(|hash| hash == sha256)
}

/// Removes the staged file `staged` from our temp name `aside`, if it is there.
fn remove_staged(dir: BorrowedFd<'_>, aside: &OsStr, staged: &Version) {
    remove_aside(dir, aside, *staged, trees::Removal::OWN_TEMP);
}

/// fsyncs every directory the steps touch, once each.
fn sync_dirs(steps: &[Staged]) {
    let mut seen = Vec::new();
    for step in steps {
        for dir in [Some(&step.dir), step.to_dir.as_ref()]
            .into_iter()
            .flatten()
        {
            let Ok(stat) = fsops::fstat(dir) else {
                continue;
            };
            let key = (Snapshot::of(&stat).dev, Snapshot::of(&stat).ino);
            if !seen.contains(&key) {
                seen.push(key);
                fsops::fsync_dir(dir.as_fd());
            }
        }
    }
}

/// Recovery of a commit record a crash left: undone while `applying` — the directories made
/// for it removed if empty and its trash archives discarded through `aftermath` — finished once
/// `applied` — its sequel performed by `aftermath`, which must tell whether it was done already
/// (see the module docs). All or nothing, like the change it finishes: unless `sandbox` reaches
/// every directory the steps act in, nothing is touched and the record stays, whole, for a
/// workspace that can ([`Recovered::Deferred`]). A directory that is gone or another one now is
/// skipped (what was in it is out of anyone's reach). An error (the sequel could not be
/// performed) keeps the record for the next recovery. Running it again on a record it already
/// recovered, wholly or in part, changes nothing more.
pub fn recover(
    record: &CommitRecord,
    kept: Option<File>,
    sandbox: &Sandbox,
    aftermath: &dyn Aftermath,
) -> io::Result<Recovered> {
    if record
        .dirs()
        .into_iter()
        .any(|dir| !super::reaches(sandbox, dir))
    {
        return Ok(Recovered::Deferred);
    }
    // Each step's directory (and a rename's other one), if still the recorded one.
    let open = |path: &Path, dev: u64, ino: u64| super::open_recorded_dir(sandbox, path, dev, ino);
    let mut dirs = Vec::new();
    let mut to_dirs = Vec::new();
    for step in &record.steps {
        dirs.push(open(&step.dir, step.dir_dev, step.dir_ino)?);
        to_dirs.push(match &step.action {
            StepAction::Rename {
                to_dir,
                to_dir_dev,
                to_dir_ino,
                ..
            } => open(to_dir, *to_dir_dev, *to_dir_ino)?,
            _ => None,
        });
    }
    let steps = record.steps.iter().zip(&dirs);
    if record.applied {
        for (step, dir) in steps {
            if let Some(dir) = dir {
                let _ = clean_up(dir.as_fd(), step, None);
            }
        }
        if let Some(sequel) = &record.sequel {
            aftermath.perform(sequel)?;
        }
        Ok(Recovered::CommitFinished)
    } else {
        let mut kept = kept;
        for ((step, dir), to_dir) in steps.zip(&to_dirs).rev() {
            if let Some(dir) = dir {
                let mut appended = kept.as_mut().and_then(|kept| kept_for(kept, step));
                undo_step(
                    dir.as_fd(),
                    to_dir.as_ref().map(|d| d.as_fd()),
                    step,
                    appended.as_mut().map(|bytes| bytes as &mut dyn Read),
                );
            }
        }
        for dir in dirs.iter().flatten() {
            fsops::fsync_dir(dir.as_fd());
        }
        made_dirs::remove_recorded(&record.made_dirs, sandbox);
        for ArchiveName(name) in &record.archives {
            aftermath.discard_archive(name.as_os_str());
        }
        Ok(Recovered::CommitUndone)
    }
}

/// The bytes an append step added, from the copy kept beside its record (`kept`), if that copy
/// holds them intact (their length and SHA-256 as recorded: a torn copy proves nothing).
fn kept_for<'k>(kept: &'k mut File, step: &StepRecord) -> Option<io::Take<&'k mut File>> {
    let StepAction::Append {
        len,
        sha256,
        kept_from,
        ..
    } = &step.action
    else {
        return None;
    };
    kept.seek(SeekFrom::Start(*kept_from)).ok()?;
    let mut part = Read::by_ref(kept).take(*len);
    let whole = sha256_reader(&mut part).ok()? == *sha256 && part.limit() == 0;
    if !whole {
        return None;
    }
    kept.seek(SeekFrom::Start(*kept_from)).ok()?;
    Some(kept.take(*len))
}

/// Applies `commit` and "kills" the process right before its commit point: every step is
/// made and the record still says `applying`. The record is then made a dead process's (and
/// named for it), as the next process finds it; returns its path.
#[cfg(test)]
pub fn kill_before_commit_point(journal: &Journal, commit: Commit<'_>) -> PathBuf {
    let run = std::panic::AssertUnwindSafe(|| {
        let _ = commit.apply_then(|| panic!("killed before the commit point"), |_| Ok(()));
    });
    assert!(std::panic::catch_unwind(run).is_err(), "the kill came");
    let names = journal.store.names().unwrap();
    let (records, kept): (Vec<_>, Vec<_>) = names
        .iter()
        .partition(|name| Path::new(name).extension() == Some(OsStr::new("json")));
    let [name] = &records[..] else {
        panic!("one record is left: {names:?}")
    };
    let path = journal.dir().join(name);
    // The bytes an append keeps beside the record, if any, go with it.
    let kept = kept.first().map(|kept| journal.dir().join(kept));
    // Read as stored (not through the journal's reader, which tests may be about).
    let stored = std::fs::read(&path).unwrap();
    let body = &stored[..stored.len() - super::seal::TRAILER_LEN];
    let Record::Commit(mut record) = Record::parse(body).unwrap() else {
        panic!("not a commit record")
    };
    record.pid = u32::MAX - 1;
    std::fs::remove_file(&path).unwrap();
    let path = journal.dir().join(format!("{}-0-0.json", record.pid));
    journal.rewrite(&path, &serde_json::to_vec(&Record::Commit(record)).unwrap());
    if let Some(kept) = kept {
        std::fs::rename(kept, path.with_extension("bytes")).unwrap();
    }
    path
}

#[cfg(test)]
#[path = "commit_append_tests.rs"]
mod append_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datadir::DataDir;
    use serde::Deserialize;
    use std::fs;
    use std::sync::Arc;

    struct Setup {
        _tmp: tempfile::TempDir,
        root: PathBuf,
        journal: Journal,
    }

    fn setup() -> Setup {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        let root = base.join("root");
        fs::create_dir(&root).unwrap();
        fs::write(root.join("a.txt"), "a old\n").unwrap();
        fs::write(root.join("b.txt"), "b old\n").unwrap();
        fs::write(root.join("gone.txt"), "to remove\n").unwrap();
        let journal = Journal::new(Arc::new(DataDir::new(base.join("data"))), "journal/x");
        Setup {
            _tmp: tmp,
            root,
            journal,
        }
    }

    fn no_sequel(_: &Value) -> io::Result<()> {
        unreachable!("these records carry no sequel")
    }

    fn dir(root: &Path) -> OwnedFd {
        fsops::open_dir(root, root, false).unwrap()
    }

    fn planned(root: &Path, name: &str) -> PlannedFile {
        let stat = fsops::lstat_at(dir(root).as_fd(), OsStr::new(name))
            .unwrap()
            .unwrap();
        PlannedFile::new(stat, &fs::read(root.join(name)).unwrap())
    }

    /// a.txt and b.txt rewritten, c.txt added, gone.txt removed.
    fn stage_all<'a>(s: &'a Setup) -> Commit<'a> {
        let root = &s.root;
        let mut commit = s.journal.commit();
        for (name, data) in [("a.txt", "a new\n"), ("b.txt", "b new\n")] {
            let plan = planned(root, name);
            let stat = plan.stat;
            commit
                .put(
                    dir(root),
                    root,
                    OsStr::new(name),
                    data.into(),
                    Some(&stat),
                    Some(plan),
                )
                .unwrap();
        }
        commit
            .put(
                dir(root),
                root,
                OsStr::new("c.txt"),
                b"c new\n".to_vec(),
                None,
                None,
            )
            .unwrap();
        let gone = Snapshot::of(&planned(root, "gone.txt").stat);
        commit
            .remove(dir(root), root, OsStr::new("gone.txt"), gone)
            .unwrap();
        commit
    }

    fn tree(root: &Path) -> Vec<(String, String)> {
        let mut entries: Vec<_> = fs::read_dir(root)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let name = e.file_name().to_string_lossy().into_owned();
                (name, fs::read_to_string(e.path()).unwrap_or_default())
            })
            .collect();
        entries.sort();
        entries
    }

    fn before() -> Vec<(String, String)> {
        vec![
            ("a.txt".into(), "a old\n".into()),
            ("b.txt".into(), "b old\n".into()),
            ("gone.txt".into(), "to remove\n".into()),
        ]
    }

    fn after() -> Vec<(String, String)> {
        vec![
            ("a.txt".into(), "a new\n".into()),
            ("b.txt".into(), "b new\n".into()),
            ("c.txt".into(), "c new\n".into()),
        ]
    }

    #[test]
    fn every_step_is_made_and_nothing_is_left_behind() {
        let s = setup();
        assert_eq!(tree(&s.root), before());
        stage_all(&s).apply().unwrap();
        assert_eq!(tree(&s.root), after());
        assert_eq!(s.journal.store.names().unwrap(), Vec::<OsString>::new());
    }

    #[test]
    fn a_file_written_in_place_after_planning_stops_the_whole_change() {
        let s = setup();
        let commit = stage_all(&s);
        // An editor saves b.txt in place after it was planned on (same inode, other bytes).
        fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(s.root.join("b.txt"))
            .and_then(|mut f| std::io::Write::write_all(&mut f, b"b edited\n"))
            .unwrap();
        let error = commit.apply().unwrap_err();
        assert_eq!(error.step, 1);
        assert!(matches!(error.reason, StepFailure::Changed { .. }));
        let mut expected = before();
        expected[1].1 = "b edited\n".into();
        assert_eq!(
            tree(&s.root),
            expected,
            "a.txt is back, nothing staged is left"
        );
    }

    #[test]
    fn a_file_that_appears_at_an_added_name_stops_the_whole_change() {
        let s = setup();
        let commit = stage_all(&s);
        fs::write(s.root.join("c.txt"), "someone else's\n").unwrap();
        let error = commit.apply().unwrap_err();
        assert_eq!(error.step, 2);
        let mut expected = before();
        expected.insert(2, ("c.txt".into(), "someone else's\n".into()));
        assert_eq!(tree(&s.root), expected);
    }

    #[test]
    fn a_dropped_change_leaves_nothing_staged() {
        let s = setup();
        drop(stage_all(&s));
        assert_eq!(tree(&s.root), before());
    }

    /// A crash at every point of the apply: the next recovery leaves all as before, or all as
    /// the change says.
    #[test]
    fn a_crash_at_any_step_is_undone_or_finished_by_recovery() {
        for crash_after in 0..=5 {
            let s = setup();
            let mut commit = stage_all(&s);
            let mut record = CommitRecord {
                applied: false,
                steps: commit.steps.iter().map(|st| st.record.clone()).collect(),
                pid: u32::MAX - 1,
                sequel: None,
                made_dirs: Vec::new(),
                archives: Vec::new(),
            };
            for step in commit.steps.iter().take(crash_after.min(4)) {
                apply_step(step).unwrap();
            }
            if crash_after == 5 {
                record.applied = true;
            }
            // The process dies: nothing of `commit` runs any more.
            for step in &mut commit.steps {
                step.temp_entry = None;
            }
            std::mem::forget(commit);
            let outcome = recover(
                &record,
                None,
                &Sandbox::new(s.root.clone(), None, vec![]),
                &no_sequel,
            )
            .unwrap();
            if crash_after == 5 {
                assert_eq!(outcome, Recovered::CommitFinished);
                assert_eq!(tree(&s.root), after(), "finished after {crash_after}");
            } else {
                assert_eq!(outcome, Recovered::CommitUndone);
                assert_eq!(tree(&s.root), before(), "undone after {crash_after}");
            }
        }
    }

    /// A staged tree takes a free name, and an entry moves to another directory, in one change;
    /// a crash before the commit point takes both back.
    #[test]
    fn a_staged_tree_and_a_move_go_in_together_or_not_at_all() {
        for crash in [false, true] {
            let s = setup();
            fs::create_dir_all(s.root.join(".staged/sub")).unwrap();
            fs::write(s.root.join(".staged/sub/f.txt"), "tree\n").unwrap();
            fs::create_dir(s.root.join("to")).unwrap();
            let mut commit = s.journal.commit();
            commit
                .place(
                    dir(&s.root),
                    &s.root,
                    OsStr::new(".staged"),
                    OsStr::new("restored"),
                    None,
                )
                .unwrap();
            let moved = Snapshot::of(&planned(&s.root, "a.txt").stat);
            let to = s.root.join("to");
            commit
                .rename(
                    dir(&s.root),
                    &s.root,
                    OsStr::new("a.txt"),
                    moved,
                    dir(&to),
                    &to,
                    OsStr::new("a.txt"),
                )
                .unwrap();
            if !crash {
                commit.apply().unwrap();
                assert_eq!(
                    fs::read_to_string(s.root.join("restored/sub/f.txt")).unwrap(),
                    "tree\n"
                );
                assert_eq!(
                    fs::read_to_string(s.root.join("to/a.txt")).unwrap(),
                    "a old\n"
                );
                assert!(!s.root.join("a.txt").exists() && !s.root.join(".staged").exists());
                continue;
            }
            let record = CommitRecord {
                applied: false,
                steps: commit.steps.iter().map(|st| st.record.clone()).collect(),
                pid: u32::MAX - 1,
                sequel: None,
                made_dirs: Vec::new(),
                archives: Vec::new(),
            };
            for step in &commit.steps {
                apply_step(step).unwrap();
            }
            std::mem::forget(commit);
            recover(
                &record,
                None,
                &Sandbox::new(s.root.clone(), None, vec![]),
                &no_sequel,
            )
            .unwrap();
            assert!(
                !s.root.join("restored").exists(),
                "the staged tree is taken back and removed"
            );
            assert!(!s.root.join(".staged").exists());
            assert_eq!(fs::read_to_string(s.root.join("a.txt")).unwrap(), "a old\n");
            assert!(!s.root.join("to/a.txt").exists());
        }
    }

    /// The history the commit records to, beside the journal in the same data directory.
    fn history(s: &Setup) -> crate::history::History {
        let data = s.root.parent().unwrap().join("data");
        crate::history::History::new(Arc::new(DataDir::new(data)), "history/x")
    }

    fn heading() -> crate::history::Heading {
        crate::history::Heading::for_test("apply_patch", "apply_patch")
    }

    /// The change's history record: a.txt's edit, kept as a delta.
    fn files() -> Vec<crate::change::FileChange> {
        let mut edit = crate::change::FileChange::new("/w/a.txt", crate::change::Action::Modified);
        edit.undo.reverse = Some(Arc::new(b"delta".to_vec()));
        vec![edit]
    }

    /// How many records of `id` the history's log holds.
    fn logged(history: &crate::history::History, id: &str) -> usize {
        history
            .entries(&|_| true)
            .unwrap()
            .iter()
            .filter(|e| e.record.id == id)
            .count()
    }

    /// Applies `commit`, carrying `heading`'s record, and "kills" the process where `prepare`
    /// or `perform` panics (nothing after that point runs; the journal record stays as a kill
    /// leaves it). Then the record is made a dead process's, as the next process sees it.
    fn apply_and_kill(
        s: &Setup,
        commit: Commit<'_>,
        history: &crate::history::History,
        heading: &crate::history::Heading,
        kill: Kill,
    ) {
        let run = std::panic::AssertUnwindSafe(|| {
            let _ = commit.apply_then(
                || {
                    let record = history.prepare(heading, &files())?;
                    if kill == Kill::BeforeCommitPoint {
                        panic!("killed before the commit point");
                    }
                    Ok(Some(serde_json::to_value(record).unwrap()))
                },
                |sequel| {
                    if kill == Kill::AfterAppend {
                        append_once(history, sequel)?;
                    }
                    panic!("killed before the record's removal")
                },
            );
        });
        assert!(std::panic::catch_unwind(run).is_err(), "the kill came");
        let names = s.journal.store.names().unwrap();
        assert_eq!(names.len(), 1, "the commit's record is left: {names:?}");
        let path = s.journal.dir().join(&names[0]);
        let Record::Commit(mut record) = Record::parse(&s.journal.read(&path).unwrap()).unwrap()
        else {
            panic!("not a commit record")
        };
        record.pid = u32::MAX - 1;
        s.journal
            .rewrite(&path, &serde_json::to_vec(&Record::Commit(record)).unwrap());
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Kill {
        BeforeCommitPoint,
        AfterCommitPoint,
        AfterAppend,
    }

    /// What a workspace's recovery does with a finished change's sequel.
    fn append_once(history: &crate::history::History, sequel: &Value) -> io::Result<()> {
        let record = crate::history::ChangeRecord::deserialize(sequel).map_err(io::Error::other)?;
        history.append_once(&record).map(drop)
    }

    /// A change that stands after a kill has exactly one history record once recovered, however
    /// close to the end the kill came; a change recovery undoes has none.
    #[test]
    fn the_record_a_commit_carries_is_in_the_history_once_exactly_when_the_change_stands() {
        for kill in [
            Kill::BeforeCommitPoint,
            Kill::AfterCommitPoint,
            Kill::AfterAppend,
        ] {
            let s = setup();
            let history = history(&s);
            let heading = heading();
            apply_and_kill(&s, stage_all(&s), &history, &heading, kill);
            let expected_before = usize::from(kill == Kill::AfterAppend);
            assert_eq!(logged(&history, &heading.id), expected_before, "{kill:?}");
            let sandbox = Sandbox::new(s.root.clone(), None, vec![]);
            let perform = |sequel: &Value| append_once(&history, sequel);
            let outcome = s.journal.recover(&sandbox, &perform);
            if kill == Kill::BeforeCommitPoint {
                assert_eq!(outcome, vec![Recovered::CommitUndone]);
                assert_eq!(tree(&s.root), before());
                assert_eq!(logged(&history, &heading.id), 0, "{kill:?}");
            } else {
                assert_eq!(outcome, vec![Recovered::CommitFinished]);
                assert_eq!(tree(&s.root), after());
                assert_eq!(logged(&history, &heading.id), 1, "{kill:?}");
                let entries = history.entries(&|_| true).unwrap();
                let delta = entries[0].record.files[0].delta.as_ref().unwrap();
                assert_eq!(history.read_delta(delta).unwrap(), b"delta");
            }
            assert!(s.journal.store.names().unwrap().is_empty(), "{kill:?}");
            // A second recovery finds nothing more to do.
            assert!(s.journal.recover(&sandbox, &perform).is_empty());
            assert!(logged(&history, &heading.id) <= 1);
        }
    }

    /// Without a kill, the record is appended once and the journal is empty; a sequel that
    /// cannot be performed now is left to the next recovery.
    #[test]
    fn a_commit_performs_its_sequel_then_removes_its_record() {
        let s = setup();
        let history = history(&s);
        let heading = heading();
        let prepare = || {
            let record = history.prepare(&heading, &files())?;
            Ok(Some(serde_json::to_value(record).unwrap()))
        };
        let perform = |sequel: &Value| append_once(&history, sequel);
        let sequel = stage_all(&s).apply_then(prepare, perform).unwrap();
        assert_eq!(sequel, Sequel::Performed);
        assert_eq!(logged(&history, &heading.id), 1);
        assert!(s.journal.store.names().unwrap().is_empty());

        let s = setup();
        let history = crate::history::History::new(
            Arc::new(DataDir::new(s.root.parent().unwrap().join("data"))),
            "history/x",
        );
        let prepare = || Ok(Some(Value::from("the record")));
        let sequel = stage_all(&s)
            .apply_then(prepare, |_| Err(io::Error::other("the log is full")))
            .unwrap();
        assert_eq!(sequel, Sequel::LeftToRecovery);
        assert_eq!(tree(&s.root), after());
        assert_eq!(s.journal.store.names().unwrap().len(), 1);
        assert_eq!(history.entries(&|_| true).unwrap().len(), 0);
    }

    /// What the user put in place after the crash is never taken back.
    #[test]
    fn recovery_leaves_what_is_neither_ours_nor_planned() {
        let s = setup();
        let commit = stage_all(&s);
        let record = CommitRecord {
            applied: false,
            steps: commit.steps.iter().map(|st| st.record.clone()).collect(),
            pid: u32::MAX - 1,
            sequel: None,
            made_dirs: Vec::new(),
            archives: Vec::new(),
        };
        apply_step(&commit.steps[0]).unwrap();
        std::mem::forget(commit);
        // After the crash, the user replaces a.txt (which holds ours) with a new file.
        fs::remove_file(s.root.join("a.txt")).unwrap();
        fs::write(s.root.join("a.txt"), "user\n").unwrap();
        recover(
            &record,
            None,
            &Sandbox::new(s.root.clone(), None, vec![]),
            &no_sequel,
        )
        .unwrap();
        let found = tree(&s.root);
        assert!(
            found.contains(&("a.txt".into(), "user\n".into())),
            "{found:?}"
        );
    }

    /// The archives recovery was asked to discard.
    struct Discards(std::cell::RefCell<Vec<OsString>>);

    impl Aftermath for Discards {
        fn perform(&self, _: &Value) -> io::Result<()> {
            Ok(())
        }

        fn discard_archive(&self, name: &OsStr) {
            self.0.borrow_mut().push(name.to_owned());
        }
    }

    /// [`stage_all`], plus `new/sub/n.txt` in directories made for it and an archive.
    fn stage_in_made_dirs(s: &Setup) -> Commit<'_> {
        let mut commit = stage_all(s);
        let sub = s.root.join("new/sub");
        let handle = commit.make_dirs(&s.root, &sub).unwrap();
        let dir = fsops::reopen_readable(handle.as_fd()).unwrap();
        commit
            .put(dir, &sub, OsStr::new("n.txt"), b"n\n".to_vec(), None, None)
            .unwrap();
        commit.archived(OsStr::new("x-a.txt.tar.gz"));
        commit
    }

    /// A change that fails, or that a kill cut short and recovery undoes, leaves none of the
    /// directories made for it, and recovery discards its archives; one that is made keeps them.
    #[test]
    fn directories_made_and_archives_go_when_the_change_does_not_happen() {
        // Fails at its last step: c.txt appeared meanwhile.
        let s = setup();
        let commit = stage_in_made_dirs(&s);
        fs::write(s.root.join("c.txt"), "someone else's\n").unwrap();
        assert!(commit.apply().is_err());
        assert!(!s.root.join("new").exists());
        // Made.
        let s = setup();
        stage_in_made_dirs(&s).apply().unwrap();
        assert_eq!(fs::read(s.root.join("new/sub/n.txt")).unwrap(), b"n\n");
        // Killed after some steps; recovery undoes it.
        let s = setup();
        let mut commit = stage_in_made_dirs(&s);
        let record = CommitRecord {
            applied: false,
            steps: commit.steps.iter().map(|st| st.record.clone()).collect(),
            pid: u32::MAX - 1,
            sequel: None,
            made_dirs: commit.made.iter().map(|(m, _)| m.clone()).collect(),
            archives: commit.archives.clone(),
        };
        for step in &commit.steps {
            apply_step(step).unwrap();
        }
        for step in &mut commit.steps {
            step.temp_entry = None;
        }
        std::mem::forget(commit);
        let discards = Discards(Default::default());
        let sandbox = Sandbox::new(s.root.clone(), None, vec![]);
        assert_eq!(
            recover(&record, None, &sandbox, &discards).unwrap(),
            Recovered::CommitUndone
        );
        assert_eq!(tree(&s.root), before());
        assert_eq!(*discards.0.borrow(), [OsString::from("x-a.txt.tar.gz")]);
        // The record says what was made: parsed back as written.
        let bytes = serde_json::to_vec(&Record::Commit(record.clone())).unwrap();
        assert_eq!(Record::parse(&bytes).unwrap(), Record::Commit(record));
    }
}
