//! Staging a change's puts: every new file written under its temp name and made durable, up to
//! [`FILES_AT_ONCE`] at a time, when the change is applied and before its record is written.
//!
//! The names were taken (and journaled) as the puts were added; the bytes wait until here so
//! that the files of a change are written side by side — their writes, metadata and syncs
//! overlapping — rather than one after the other as the caller adds them. No descriptor is held
//! per file meanwhile: each is closed once synced.

use std::io;

use super::undo::remove_staged;
use super::{Commit, PendingPut, Staged, StepAction};
use crate::hashing::sha256_hex;
use crate::parallel::{self, FILES_AT_ONCE};
use crate::paths::fsops;
use crate::paths::{AsDir, Stat, Version};

/// Why a put could not be staged.
struct NotStaged {
    error: io::Error,
    /// Whether a file may be left under the temp name that the step cannot tell as its own (it
    /// was written, then could not be found): its block's record answers for it, for recovery.
    left: bool,
}

impl Commit<'_> {
    /// Writes and syncs the bytes of every put not staged yet (see the module docs), and
    /// completes each one's record with the identity of its staged file (and the SHA-256 of its
    /// bytes, when the caller gave none). The first step (in the change's order) that could
    /// not be staged, and why; the others are staged all the same, for the discard to remove.
    pub(super) fn stage_puts(&mut self) -> Result<(), (usize, io::Error)> {
        let pending: Vec<(usize, &Staged)> = self
            .steps
            .iter()
            .enumerate()
            .filter(|(_, staged)| staged.pending.is_some())
            .collect();
        let results = parallel::map(&pending, FILES_AT_ONCE, |(step, staged)| {
            (*step, stage_put(staged))
        });
        let mut first_failure = None;
        for (step, result) in results {
            let staged = &mut self.steps[step];
            match result {
                Ok((version, hashed)) => {
                    staged.pending = None;
                    let StepAction::Put {
                        staged: identity,
                        sha256,
                        ..
                    } = &mut staged.record.action
                    else {
                        unreachable!("only a put waits to be staged")
                    };
                    *identity = version;
                    if let Some(hashed) = hashed {
                        *sha256 = hashed;
                    }
                }
                // Still pending: the discard leaves its temp name alone.
                Err(NotStaged { error, left }) => {
                    if left {
                        // Left to recovery: the block's record is not finished with the others.
                        let block = staged.pending.as_ref().expect("a put not staged").block;
                        self.temp_blocks[block].record.take();
                    }
                    first_failure.get_or_insert((step, error));
                }
            }
        }
        first_failure.map_or(Ok(()), Err)
    }
}

/// Writes a put's bytes under its temp name and syncs them: the staged file's identity, and the
/// SHA-256 of the bytes when the caller gave none. Nothing is left under the name on failure,
/// but where the file written cannot be found again (see [`NotStaged::left`]).
fn stage_put(step: &Staged) -> Result<(Version, Option<String>), NotStaged> {
    let PendingPut {
        data,
        unhashed,
        metadata_of,
        ..
    } = step.pending.as_ref().expect("a put not staged");
    let (dir, name, aside) = (
        step.dir.as_dir(),
        step.record.name.as_os_str(),
        step.record.aside.as_os_str(),
    );
    let not_staged = |error| NotStaged { error, left: false };
    let file =
        fsops::stage_unsynced(dir, name, aside, data, metadata_of.as_ref()).map_err(not_staged)?;
    let version = fsops::lstat_at(dir, aside)
        .and_then(|found| found.ok_or_else(|| io::Error::from(io::ErrorKind::NotFound)))
        .map(|staged| Stat::version(&staged))
        .map_err(|error| NotStaged { error, left: true })?;
    if let Err(error) = file.sync_all() {
        remove_staged(dir, aside, &version);
        return Err(not_staged(error));
    }
    let hashed = unhashed.then(|| sha256_hex(data));
    Ok((version, hashed))
}
