//! Applying a change: each step made in order, the commit point, the clean-up and the sequel;
//! the steps made taken back when one fails (see the module docs of `commit`).

use std::fs::File;
use std::io::{self, Read, Write as _};

use serde_json::Value;

use super::clean_up::clean_up;
use super::failure::{changed, taken};
use super::failure::{CommitError, LeftAtEnd, StepFailure};
use super::splice::ForeignCopies;
use super::undo::{move_checked, remove_aside, remove_staged, undo_step};
use super::StepAction;
use super::{holds, made_dirs, Commit, CommitRecord, HoldName, LeftInPlace, Sequel, Staged};
use crate::journal::Record;
use crate::journal::WrittenRecord;
use crate::parallel::{self, FILES_AT_ONCE};
use crate::paths::fsops::{self, Replacing, Snapshot};
use crate::paths::AsDir;
use crate::paths::{process, trees};

impl Commit<'_> {
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
        if let Err((step, e)) = self.stage_puts() {
            self.discard();
            return Err(failed(step, StepFailure::Io(e)));
        }
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
        self.finish_temp_records();
        if let Some(made) = self.made_record.take() {
            made.finish();
        }
        process::crash_point("recorded");
        for index in 0..self.steps.len() {
            process::crash_point_before_step(index);
            if let Err(reason) = apply_step(&self.steps[index]) {
                // An append that failed while writing may have left part of its bytes: taken
                // back with the steps before it (a failed check wrote nothing).
                let wrote = matches!(reason, StepFailure::Io(_))
                    && matches!(self.steps[index].record.action, StepAction::Append { .. });
                let settled = self.undo_steps(index + usize::from(wrote), &entry);
                self.discard();
                sync_dirs(&self.steps);
                finish_if_settled(entry, settled);
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
            let settled = self.undo_steps(self.steps.len(), &entry);
            sync_dirs(&self.steps);
            finish_if_settled(entry, settled);
            return Err(failed(0, StepFailure::Io(e)));
        }
        // The directories made hold the change's files now: they stay.
        self.made.clear();
        process::crash_point("applied");
        let clean = |staged: &Staged| {
            clean_up(
                staged.dir.as_dir(),
                &staged.record,
                staged.replaces.as_ref(),
            )
        };
        // A put's clean-up lets go of the file it displaced, under a name of its own: a change
        // of puts only (a patch, a write) lets them go side by side, their waits for the disk
        // overlapping (an unlink may wait for a discard); any other change in its steps' order.
        let puts_only = self
            .steps
            .iter()
            .all(|staged| matches!(staged.record.action, StepAction::Put { .. }));
        let threads = if puts_only { FILES_AT_ONCE } else { 1 };
        let left: Vec<LeftInPlace> = parallel::map(&self.steps, threads, clean)
            .into_iter()
            .enumerate()
            .filter_map(|(step, error)| {
                Some(LeftInPlace {
                    step,
                    error: error?,
                })
            })
            .collect();
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

    /// Takes back the first `done` steps, newest first; whether every one is settled (see
    /// [`undo_step`]).
    /// `entry` is the change's record, beside which a splice keeps its copies.
    fn undo_steps(&self, done: usize, entry: &WrittenRecord) -> bool {
        let copies = ForeignCopies::new(&entry.store, &entry.name);
        let mut settled = true;
        for (index, step) in self.steps[..done].iter().enumerate().rev() {
            let mut appended = step.append.as_ref().map(|(_, bytes)| bytes.as_slice());
            settled &= undo_step(
                step.dir.as_dir(),
                step.to_dir.as_ref().map(|d| d.as_dir()),
                &step.record,
                appended.as_mut().map(|bytes| bytes as &mut dyn Read),
                Some((&copies, index)),
            );
        }
        settled
    }

    /// Removes the temp records of the staged entries: what they answered for is answered for
    /// by the commit record, or gone.
    fn finish_temp_records(&mut self) {
        let steps = self
            .steps
            .iter_mut()
            .filter_map(|step| step.temp_entry.take());
        let blocks = self
            .temp_blocks
            .iter_mut()
            .filter_map(|block| block.record.take());
        for record in steps.chain(blocks) {
            record.finish();
        }
    }

    /// Removes the staged files of steps not applied, then the directories made for them that
    /// are empty.
    fn discard(&mut self) {
        // A put not staged has nothing under its temp name.
        for step in self.steps.iter_mut().filter(|step| step.pending.is_none()) {
            let aside = step.record.aside.as_os_str();
            match &step.record.action {
                StepAction::Put { staged, .. } => remove_staged(step.dir.as_dir(), aside, staged),
                StepAction::Place { staged } => {
                    let _ =
                        remove_aside(step.dir.as_dir(), aside, *staged, trees::Removal::OWN_TEMP);
                }
                _ => {}
            }
        }
        self.finish_temp_records();
        for (made, parent) in self.made.drain(..).rev() {
            made_dirs::remove_if_empty(parent.as_dir(), &made);
        }
        if let Some(made) = self.made_record.take() {
            made.finish();
        }
    }
}

#[cfg(test)]
impl Commit<'_> {
    /// What a kill leaves of a change being applied: nothing staged is discarded and no record
    /// finished, but every handle it held is closed, as the system closes a dead process's (a
    /// handle left open keeps a directory from going where deletes lack POSIX semantics).
    pub(crate) fn abandon(mut self) {
        self.temp_blocks.clear();
        self.steps.clear();
        self.made.clear();
        self.made_record = None;
    }
}

impl Drop for Commit<'_> {
    /// A change dropped before it was applied leaves nothing staged behind.
    fn drop(&mut self) {
        self.discard();
    }
}

pub(super) fn apply_step(step: &Staged) -> Result<(), StepFailure> {
    let (dir, name, aside) = (
        step.dir.as_dir(),
        step.record.name.as_os_str(),
        step.record.aside.as_os_str(),
    );
    match (&step.record.action, &step.replaces, &step.removes) {
        (StepAction::Put { staged, sha256, .. }, None, _) => {
            let ours = |file: &mut File| holds(file, staged.size, sha256);
            fsops::swap_in(dir, aside, name, &ours, Replacing::Nothing)?
        }
        (
            StepAction::Put {
                staged,
                sha256,
                hold,
                ..
            },
            Some(planned),
            _,
        ) => {
            let ours = |file: &mut File| holds(file, staged.size, sha256);
            let same_content = |file: &mut File| planned.held_by(file);
            let replacing = Replacing::File {
                stat: &planned.stat,
                same_content: &same_content,
            };
            match hold {
                Some(HoldName(hold)) => {
                    fsops::put_by_renames(dir, aside, hold.as_os_str(), name, replacing)?
                }
                None => fsops::swap_in(dir, aside, name, &ours, replacing)?,
            }
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
                        && found.id() == expected.id())
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
                .as_dir();
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
        let rolled_back = crate::journal::tail::roll_back_if_ours(file, old_size, data, len, false);
        if matches!(rolled_back, Ok(crate::journal::Tail::Other)) {
            return Err(StepFailure::Io(io::Error::new(e.kind(), LeftAtEnd(e))));
        }
        return Err(StepFailure::Io(e));
    }
    Ok(())
}

/// Removes the record of a change taken back, unless a step could not be taken back yet
/// (`settled` is `false`): then the record, with the copy of the appended bytes beside it,
/// stays for the next recovery to finish taking the change back.
fn finish_if_settled(entry: WrittenRecord, settled: bool) {
    if settled {
        entry.finish();
    }
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
            let key = stat.id();
            if !seen.contains(&key) {
                seen.push(key);
                fsops::fsync_dir(dir.as_dir());
            }
        }
    }
}
