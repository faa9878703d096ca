//! A journaled commit with the change's history record inside it (`journal::commit`).

use std::io;
use std::path::PathBuf;

use super::outcome::Recorded;
use crate::change::FileChange;
use crate::history::Heading;
use crate::journal::commit::{Commit, CommitError, LeftInPlace, Sequel};
use crate::workspace::{AfterCommit, Workspace};

/// Makes `commit` (`journal::commit`) and records it in the history as one step, also under a
/// kill: `files` — called once every step is made, the entries in place — says what changed;
/// the record of `heading` and those files (its deltas stored) goes into the commit's journal
/// record at the commit point and is appended after it, or by the next `Workspace`'s recovery
/// should the process die before. A change of no file that undoes nothing is not recorded.
pub fn commit_recorded(
    ws: &Workspace,
    commit: Commit<'_>,
    heading: &Heading,
    files: impl FnOnce() -> Vec<FileChange>,
) -> Result<(Vec<FileChange>, Recorded), CommitError> {
    commit_consuming(ws, commit, heading, Vec::new(), files)
        .map(|(made, recorded, _)| (made, recorded))
}

/// [`commit_recorded`], deleting after the commit point the archives `consume` names (in the
/// workspace's bucket: a restore's source), also by recovery should the process die before;
/// also says what removals left in place ([`LeftInPlace`]).
pub fn commit_consuming(
    ws: &Workspace,
    commit: Commit<'_>,
    heading: &Heading,
    consume: Vec<PathBuf>,
    files: impl FnOnce() -> Vec<FileChange>,
) -> Result<(Vec<FileChange>, Recorded, Vec<LeftInPlace>), CommitError> {
    let mut made = Vec::new();
    // What is consumed once the change is made, should the sequel not carry it.
    let mut consume_now = Vec::new();
    let (sequel, left) = commit.apply_reporting(
        || {
            made = files();
            if made.is_empty() && heading.undoes.is_empty() && consume.is_empty() {
                return Ok(None);
            }
            let record = ws.history().prepare(heading, &made)?;
            let after = AfterCommit { record, consume };
            match serde_json::to_value(&after) {
                Ok(sequel) => Ok(Some(sequel)),
                // A record that cannot be written (a path that is not UTF-8) does not stop the
                // change, as for a change recorded after it is made: it stands unrecorded, and
                // what it consumes is deleted right after it (not by recovery after a kill).
                Err(_) => {
                    consume_now = after.consume;
                    Ok(None)
                }
            }
        },
        |sequel| {
            let after =
                AfterCommit::read(sequel).ok_or_else(|| io::Error::other("not a sequel"))?;
            after.consume(ws.bucket());
            ws.history().append(&after.record)
        },
    )?;
    for name in &consume_now {
        ws.bucket().discard_named(name.as_os_str());
    }
    let recorded = match sequel {
        Sequel::Performed => Recorded::Written {
            id: heading.id.clone(),
        },
        Sequel::None | Sequel::LeftToRecovery => Recorded::Not,
    };
    Ok((made, recorded, left))
}
