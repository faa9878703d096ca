//! After the commit point: removing what the steps displaced.

use std::ffi::{OsStr, OsString};
use std::fs::File;

use super::undo::{remove_aside, settle_doomed};
use super::{PlannedFile, StepAction, StepRecord};
use crate::paths::fsops::race_point::{self, RacePoint};
use crate::paths::fsops::{self, Snapshot};
use crate::paths::BorrowedDir;
use crate::paths::{trees, Version};

/// After the commit point: removes what a step displaced (in the trash already, or taken
/// back by the history's delta); a file a put displaced is let go without losing a late write
/// into it ([`let_go_displaced`]; `planned` is its content as planned, when known in process).
/// Returns what a removal could not remove (see [`super::LeftInPlace`]).
pub(super) fn clean_up(
    dir: BorrowedDir<'_>,
    step: &StepRecord,
    planned: Option<&PlannedFile>,
) -> Option<std::io::Error> {
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
    dir: BorrowedDir<'_>,
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
        Some(planned) => planned.held_by(file),
        None => fsops::fstat(&*file).map(|s| displaced.is(&s)),
    };
    fsops::keep_late_bytes(dir, name, file, &unchanged)
}
