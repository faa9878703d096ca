//! Recovery of a commit record a crash left: undone before its commit point, finished after.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use super::clean_up::clean_up;
use super::splice::ForeignCopies;
use super::undo::undo_step;
use super::{made_dirs, Aftermath, ArchiveName, CommitRecord, StepAction, StepRecord};
use crate::hashing::sha256_reader;
use crate::journal::Recovered;
#[cfg(test)]
use crate::journal::{Journal, Record};
use crate::paths::fsops::{self};
use crate::paths::AsDir;
use crate::paths::Sandbox;
#[cfg(test)]
use std::{ffi::OsStr, path::PathBuf};

/// Recovery of a commit record a crash left: undone while `applying` — the directories made
/// for it removed if empty and its trash archives discarded through `aftermath` — finished once
/// `applied` — its sequel performed by `aftermath`, which must tell whether it was done already
/// (see the module docs). All or nothing, like the change it finishes: unless `sandbox` reaches
/// every directory the steps act in, nothing is touched and the record stays, whole, for a
/// workspace that can ([`Recovered::Deferred`]). A directory that is gone or another one now is
/// skipped (what was in it is out of anyone's reach). An error (the sequel could not be
/// performed, or an append still ours could not be cut back) keeps the record for the next
/// recovery. Running it again on a record it already recovered, wholly or in part, changes
/// nothing more.
pub fn recover(
    record: &CommitRecord,
    kept: Option<File>,
    copies: &ForeignCopies<'_>,
    sandbox: &Sandbox,
    aftermath: &dyn Aftermath,
) -> io::Result<Recovered> {
    if record
        .dirs()
        .into_iter()
        .any(|dir| !crate::journal::reaches(sandbox, dir))
    {
        return Ok(Recovered::Deferred);
    }
    // Each step's directory (and a rename's other one), if still the recorded one.
    let open = |path: &Path, dev: u64, ino: u64| {
        crate::journal::open_recorded_dir(sandbox, path, dev, ino)
    };
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
    if record.applied {
        for (step, dir) in record.steps.iter().zip(&dirs) {
            if let Some(dir) = dir {
                let _ = clean_up(dir.as_dir(), step, None);
            }
        }
        if let Some(sequel) = &record.sequel {
            aftermath.perform(sequel)?;
        }
        Ok(Recovered::CommitFinished)
    } else {
        let mut kept = kept;
        let mut settled = true;
        for index in (0..record.steps.len()).rev() {
            let step = &record.steps[index];
            // A directory a later step removed (set aside) or moved is at its path again once
            // that step is undone: opened now (an entry moved out of it goes back into it).
            if dirs[index].is_none() {
                dirs[index] = open(&step.dir, step.dir_dev, step.dir_ino)?;
            }
            if let (
                None,
                StepAction::Rename {
                    to_dir,
                    to_dir_dev,
                    to_dir_ino,
                    ..
                },
            ) = (&to_dirs[index], &step.action)
            {
                to_dirs[index] = open(to_dir, *to_dir_dev, *to_dir_ino)?;
            }
            let (dir, to_dir) = (&dirs[index], &to_dirs[index]);
            if let Some(dir) = dir {
                let mut appended = kept.as_mut().and_then(|kept| kept_for(kept, step));
                settled &= undo_step(
                    dir.as_dir(),
                    to_dir.as_ref().map(|d| d.as_dir()),
                    step,
                    appended.as_mut().map(|bytes| bytes as &mut dyn Read),
                    Some((copies, index)),
                );
            }
        }
        for dir in dirs.iter().flatten() {
            fsops::fsync_dir(dir.as_dir());
        }
        if !settled {
            // An append still ours could not be cut back: the record stays for the next try.
            return Err(io::Error::other("an append could not be taken back yet"));
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
pub fn kill_before_commit_point(journal: &Journal, commit: super::Commit<'_>) -> PathBuf {
    let run = std::panic::AssertUnwindSafe(|| {
        let _ = commit.apply_then(|| panic!("killed before the commit point"), |_| Ok(()));
    });
    assert!(std::panic::catch_unwind(run).is_err(), "the kill came");
    left_by_a_dead_process(journal)
}

/// Makes the one commit record in `journal` a dead process's (and names it for that process),
/// as the next process finds the record of one killed; returns its path.
#[cfg(test)]
pub fn left_by_a_dead_process(journal: &Journal) -> PathBuf {
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
    let body = &stored[..stored.len() - crate::journal::seal::TRAILER_LEN];
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
