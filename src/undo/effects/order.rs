//! The order an undo's steps are made in: every name freed before it is taken, entries that
//! trade places untied by a temp name.

use std::path::{Path, PathBuf};

use super::model::{Hop, Rename, Step};
use crate::paths::fsops;
use crate::undo::slot::Location;

/// Orders the removals and the (ordered) renames: each waits for the steps it must follow (see
/// [`Effects::order`](super::Effects::order)); otherwise removals come first, as listed.
pub(super) fn order_steps(removals: &[PathBuf], renames: &[Rename]) -> Vec<Step> {
    let must_precede = |first: Step, then: Step| match (first, then) {
        (Step::Rename(i), Step::Remove(j)) => {
            let source = renames[i].source();
            source != removals[j] && source.starts_with(&removals[j])
        }
        (Step::Remove(j), Step::Rename(i)) => match renames[i].destination() {
            (Location::Real(dir), name) => dir.join(name) == removals[j],
            (Location::Staged { .. }, _) => false,
        },
        (Step::Rename(i), Step::Rename(k)) => i < k,
        (Step::Remove(_), Step::Remove(_)) => false,
    };
    let mut pending: Vec<Step> = (0..removals.len())
        .map(Step::Remove)
        .chain((0..renames.len()).map(Step::Rename))
        .collect();
    let mut ordered = Vec::with_capacity(pending.len());
    while !pending.is_empty() {
        // Steps that wait on one another every way round keep the order listed.
        let ready = pending
            .iter()
            .position(|&step| {
                !pending
                    .iter()
                    .any(|&other| other != step && must_precede(other, step))
            })
            .unwrap_or(0);
        ordered.push(pending.remove(ready));
    }
    ordered
}

/// Orders renames so that an entry leaves a name before another takes it. Entries that trade
/// places (a cycle) are untied by a temp name: one of them moves aside first, the others follow
/// one another, and it moves on to its place last.
pub(super) fn order_renames(mut pending: Vec<Rename>) -> Vec<Rename> {
    let mut ordered = Vec::with_capacity(pending.len() + 1);
    while !pending.is_empty() {
        // (An entry may go back to its own path inside a directory that moves back there.)
        let frees_its_name = |r: &Rename| {
            !pending
                .iter()
                .any(|other| other != r && other.source() == r.to)
        };
        // An entry whose source or destination is beneath another that moves too goes first,
        // while its directory is where it was planned at (and the record names it there).
        let nothing_moves_inside = |r: &Rename| {
            let above = r.source();
            let beneath = |path: &Path| path != above && path.starts_with(&above);
            !pending.iter().any(|other| {
                let into = match other.destination() {
                    (Location::Real(dir), name) => Some(dir.join(name)),
                    (Location::Staged { .. }, _) => None,
                };
                other != r && (beneath(&other.source()) || into.is_some_and(|p| beneath(&p)))
            })
        };
        let ready = pending
            .iter()
            .position(|r| frees_its_name(r) && nothing_moves_inside(r))
            .or_else(|| pending.iter().position(frees_its_name));
        match ready {
            Some(index) => ordered.push(pending.remove(index)),
            None => {
                // Every destination is some other's source: a cycle. Its first entry steps aside.
                let stuck = pending.remove(0);
                let temp = fsops::temp_name(stuck.from.file_name().unwrap_or_default());
                ordered.push(Rename {
                    hop: Hop::Aside(temp.clone()),
                    ..stuck.clone()
                });
                pending.push(Rename {
                    hop: Hop::Back(temp),
                    ..stuck
                });
            }
        }
    }
    ordered
}
