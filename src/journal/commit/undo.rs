//! Taking a step back, as far as it was done: in process when a later step fails, and by
//! recovery of a change cut short before its commit point.

use std::ffi::OsStr;
use std::io::{self, Read};

use super::splice::{splice_out, ForeignCopies, Splice, MAX_OURS};
use super::{HoldName, StepAction, StepRecord};
use crate::paths::fsops::race_point::{self, RacePoint};
use crate::paths::fsops::{self, Snapshot};
use crate::paths::BorrowedDir;
use crate::paths::{trees, Stat, Version};

/// Takes back an append: the file `name` in `dir`, if it is still the recorded one, is cut back
/// to its old size when what follows it is a prefix of ours (`appended`) or all of it, and
/// nothing else; when all of ours is followed by someone else's bytes, ours are cut out from
/// between (see `splice.rs`; `foreign` keeps their copy meanwhile, as step `index`). Anything
/// else is left as it is (see `tail::roll_back_if_ours`). Safe to run again: a file cut back
/// already has nothing of ours after its old end. Returns whether it is settled: `false` when
/// the file is still the recorded one but could not be opened, read, cut or spliced (its record
/// must stay, for recovery to try again).
fn undo_append(
    dir: BorrowedDir<'_>,
    step: &StepRecord,
    appended: Option<&mut dyn Read>,
    foreign: Option<(&ForeignCopies<'_>, usize)>,
) -> bool {
    let StepAction::Append {
        file_dev,
        file_ino,
        old_size,
        len,
        ..
    } = &step.action
    else {
        return true;
    };
    let Some(appended) = appended else {
        return true;
    };
    let is_ours = |s: &Stat| {
        s.kind() == crate::paths::EntryKind::File && s.identity() == (*file_dev, *file_ino)
    };
    let name = step.name.as_os_str();
    let file = match fsops::open_in_place(dir, name) {
        Ok(file) => file,
        // Gone, or another entry now: nothing of ours to cut; still ours: to try again.
        Err(_) => {
            let found = fsops::lstat_at(dir, name);
            return matches!(found, Ok(found) if !found.is_some_and(|s| is_ours(&s)));
        }
    };
    match fsops::fstat(&file) {
        Ok(stat) if is_ours(&stat) => {
            let roll_back = |ours: &mut dyn Read| {
                crate::journal::tail::roll_back_if_ours(&file, *old_size, ours, *len, false).is_ok()
            };
            let Some((copies, index)) = foreign.filter(|_| *len <= MAX_OURS) else {
                return roll_back(appended);
            };
            let mut ours = Vec::new();
            if appended.read_to_end(&mut ours).is_err() {
                return false;
            }
            match splice_out(&file, *old_size, &ours, index, copies) {
                Ok(Splice::Settled) => true,
                Ok(Splice::NotOurs) => roll_back(&mut &ours[..]),
                Err(_) => false,
            }
        }
        Ok(_) => true,
        Err(_) => false,
    }
}

/// Takes back a step, as far as it was done: judged by identities (and a staged file by its
/// content too), so only what is ours moves. Safe to run again on a step taken back wholly or
/// in part (by a recovery that was itself killed): each move is made only from the state it
/// undoes, and checked after it (a swap in between is moved back). An append is taken back
/// with its bytes, `appended` (none: it is left as it is), and `foreign` (see [`undo_append`]).
/// Returns whether the step is settled: `false` only for an append that could not be taken
/// back yet.
pub(super) fn undo_step(
    dir: BorrowedDir<'_>,
    to_dir: Option<BorrowedDir<'_>>,
    step: &StepRecord,
    appended: Option<&mut dyn Read>,
    foreign: Option<(&ForeignCopies<'_>, usize)>,
) -> bool {
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
            ..
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
            hold,
        } => {
            let swapped =
                is_staged(dir, name, staged, sha256) && at(aside).is_some_and(|s| old.is(&s));
            match hold {
                None => {
                    if swapped {
                        race_point::reached(RacePoint::BeforeReplace, name);
                        exchange_checked(dir, aside, name, staged, old);
                    }
                }
                Some(HoldName(hold)) => {
                    undo_put_by_renames(dir, name, aside, hold.as_os_str(), swapped, staged, old)
                }
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
            let Some(to_dir) = to_dir else { return true };
            let there = fsops::lstat_at(to_dir, to_name.as_os_str()).ok().flatten();
            if there.is_some_and(|s| moves.is(&s)) && at(name).is_none() {
                move_checked(to_dir, to_name.as_os_str(), dir, name, moves);
            }
        }
        StepAction::Append { .. } => return undo_append(dir, step, appended, foreign),
    }
    true
}

/// Takes back a put by three renames (`fsops::put_by_renames`), as far as it went: the staged
/// file `staged` is under `aside` (not begun), `hold` (moved out of the way), or `name` (done,
/// `swapped`); the planned file `old` under `name` or, once moved, `aside`. Without an exchange,
/// the way back is renames too: ours from `name` to `hold`, then the planned file from `aside`
/// to the name now free — a kill between them leaves a state this starts from again. Should
/// the name be taken by something else while it was free, the planned file is kept under a
/// visible name rather than under our temp name. The staged file is removed from `hold` last
/// (the caller removes it from `aside`).
fn undo_put_by_renames(
    dir: BorrowedDir<'_>,
    name: &OsStr,
    aside: &OsStr,
    hold: &OsStr,
    swapped: bool,
    staged: &Version,
    old: &Version,
) {
    let at = |n: &OsStr| fsops::lstat_at(dir, n).ok().flatten();
    if swapped && at(hold).is_none() {
        race_point::reached(RacePoint::BeforeReplace, name);
        move_checked(dir, name, dir, hold, staged);
    }
    if at(aside).is_some_and(|s| old.is(&s)) {
        if at(name).is_none() {
            move_checked(dir, aside, dir, name, old);
        } else if !at(name).is_some_and(|s| staged.is(&s)) {
            let _ = fsops::keep_visible(dir, aside, name);
        }
    }
    remove_staged(dir, hold, staged);
}

/// Moves `from` to the free name `to`; should what arrived not be `ident` (the name was swapped
/// between the caller's check and the move), moves it back.
pub(super) fn move_checked(
    from_dir: BorrowedDir<'_>,
    from: &OsStr,
    to_dir: BorrowedDir<'_>,
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
    dir: BorrowedDir<'_>,
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
pub(super) fn remove_aside(
    dir: BorrowedDir<'_>,
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
pub(super) fn settle_doomed(
    dir: BorrowedDir<'_>,
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

/// Whether `name` is the staged file `staged` with the content hashing to `sha256`.
fn is_staged(dir: BorrowedDir<'_>, name: &OsStr, staged: &Version, sha256: &str) -> bool {
    let Ok(file) = fsops::open_for_read(dir, name) else {
        return false;
    };
    fsops::fstat(&file).is_ok_and(|s| staged.is(&s))
        && crate::hashing::sha256_reader(file).is_ok_and(|hash| hash == sha256)
}

/// Removes the staged file `staged` from our temp name `aside`, if it is there.
pub(super) fn remove_staged(dir: BorrowedDir<'_>, aside: &OsStr, staged: &Version) {
    remove_aside(dir, aside, *staged, trees::Removal::OWN_TEMP);
}
