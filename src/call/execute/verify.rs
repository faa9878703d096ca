//! Verifying a plan before anything is kept or staged: each step's act paired with what it
//! expects, and the place (and a move's destination, a copy's source) as the plan expects once
//! the steps before it are made.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::dirs::{open, Opened};
use super::failure::{ExecuteError, Failure};
use crate::call::plan::{Act, Expect, Found, Keep, Step};
use crate::paths::fsops;
use crate::paths::AsDir;

/// Opens every step's directories and checks what each step expects, before anything is kept
/// or staged.
pub(super) fn open_and_verify(
    steps: &[Step],
    into: &[Option<(usize, PathBuf)>],
    out: &[Option<(usize, PathBuf)>],
) -> Result<Vec<Opened>, ExecuteError> {
    let mut opened = Vec::with_capacity(steps.len());
    let mut earlier = Earlier::default();
    for (index, step) in steps.iter().enumerate() {
        let fail = |failure| ExecuteError {
            step: index,
            failure,
        };
        check(step).map_err(|why| fail(Failure::Invalid(why)))?;
        let into_built = into[index].is_some();
        let out_of_built = out[index].is_some();
        let dirs = open(step, into_built, out_of_built).map_err(|e| fail(Failure::Io(e)))?;
        if !out_of_built {
            verify(step, &dirs, &earlier, into_built).map_err(fail)?;
        } else {
            // Out of a tree the plan builds: the entry is the plan's own, checked as it is
            // moved (`add_move_out`); its destination is checked as any move's.
            verify_destination(step, &dirs, &earlier, into_built).map_err(fail)?;
        }
        earlier.note(step);
        opened.push(dirs);
    }
    Ok(opened)
}

/// A plan's steps pair what they do with what they expect: a put replaces a file read (or
/// takes a free name), a removal or a move needs an entry, a directory is built at a free name.
pub(super) fn check(step: &Step) -> Result<(), &'static str> {
    match (&step.act, &step.expect) {
        (Act::Put { .. }, Expect::Nothing | Expect::File { .. }) => Ok(()),
        (Act::Put { .. }, Expect::Entry { .. }) => {
            Err("a put replaces a file whose bytes were read")
        }
        (Act::Remove | Act::Move { .. }, Expect::File { .. } | Expect::Entry { .. }) => Ok(()),
        (Act::Remove, Expect::EmptyDir { .. }) => Ok(()),
        (Act::Move { .. }, Expect::Built) => Ok(()),
        (_, Expect::Built) => {
            Err("only a move out of a directory the plan builds expects its entry")
        }
        (Act::Remove, Expect::Tree { .. }) if step.keep == Keep::Archive => Ok(()),
        (_, Expect::Tree { .. }) => Err("a tree is expected only where it is kept and removed"),
        (_, Expect::EmptyDir { .. }) => Err("only a removal expects an empty directory"),
        (Act::Remove | Act::Move { .. }, Expect::Nothing) => {
            Err("there is nothing to remove or move")
        }
        (Act::MakeDir { .. }, Expect::Nothing) => Ok(()),
        (Act::MakeDir { .. }, _) => Err("a directory is built at a free name"),
        (Act::Copy { .. }, Expect::Nothing) => Ok(()),
        (Act::Copy { .. }, _) => Err("a copy is built at a free name"),
        (Act::Restore { .. }, Expect::Nothing) => Ok(()),
        (Act::Restore { .. }, _) => Err("an archive's entry is restored at a free name"),
        (Act::Build(_), Expect::Nothing) => Ok(()),
        (Act::Archive, Expect::File { .. } | Expect::Entry { .. })
            if step.keep == Keep::Archive =>
        {
            Ok(())
        }
        (Act::Archive, _) => Err("an entry is kept alone only in the trash"),
        (Act::Build(_), _) => Err("an entry is built at a free name"),
        (Act::Append { .. }, Expect::File { .. }) => Ok(()),
        (Act::Append { .. }, _) => Err("an append adds to a file whose bytes were read"),
    }?;
    match (step.keep, &step.expect) {
        (Keep::Archive, _) if matches!(step.act, Act::Append { .. }) => {
            Err("an append destroys nothing to keep")
        }
        (Keep::Archive, Expect::Nothing) => Err("there is nothing to keep at a free name"),
        (Keep::Archive, Expect::EmptyDir { .. }) => Err("an empty directory is not archived"),
        (Keep::Archive, Expect::Built) => Err("what the plan builds is not archived"),
        _ => Ok(()),
    }
}

/// The places earlier steps of the plan free or fill: a later step expects what they leave
/// (an overwrite removes the old entry, then puts, builds or moves at its free name; an entry
/// moved aside to a temp name moves on from there).
#[derive(Default)]
pub(super) struct Earlier {
    /// By canonical path: `true` filled, `false` freed, by the latest step there.
    left: HashMap<PathBuf, bool>,
    /// Places the latest step there moved an entry to: its identity.
    moved_in: HashMap<PathBuf, (u64, u64)>,
}

impl Earlier {
    fn note(&mut self, step: &Step) {
        if matches!(step.act, Act::Archive) {
            return;
        }
        let filled = !matches!(step.act, Act::Remove | Act::Move { .. });
        let at = step.at.path();
        self.moved_in.remove(&at);
        self.left.insert(at, filled);
        if let Act::Move { to } = &step.act {
            self.left.insert(to.path(), true);
            match &step.expect {
                Expect::File { stat, .. } | Expect::Entry { stat } | Expect::Tree { stat, .. } => {
                    self.moved_in.insert(to.path(), stat.identity())
                }
                Expect::Nothing | Expect::EmptyDir { .. } | Expect::Built => None,
            };
        }
    }

    /// Whether the place at `path` is free once the earlier steps are made (`None`: they do not
    /// touch it, the disk says).
    fn free(&self, path: &Path) -> Option<bool> {
        self.left.get(path).map(|filled| !filled)
    }

    /// Whether an earlier step moved the entry `step` expects to its place (and nothing came
    /// there after it): the step finds it there.
    fn moved_here(&self, step: &Step) -> bool {
        let identity = match (&step.act, &step.expect) {
            (
                Act::Remove | Act::Move { .. },
                Expect::Entry { stat } | Expect::Tree { stat, .. },
            ) => stat.identity(),
            _ => return false,
        };
        self.moved_in.get(&step.at.path()) == Some(&identity)
    }
}

/// The step's place (and a move's destination) as the plan expects, once the steps before it
/// are made.
pub(super) fn verify(
    step: &Step,
    dirs: &Opened,
    earlier: &Earlier,
    into_built: bool,
) -> Result<(), Failure> {
    match earlier.free(&step.at.path()) {
        Some(true) if matches!(step.expect, Expect::Nothing) => {}
        Some(false) if earlier.moved_here(step) => {}
        Some(_) => {
            return Err(Failure::Invalid(
                "an earlier step of the plan changes this place",
            ))
        }
        None => {
            let now = match &dirs.at {
                Some(at) => fsops::lstat_at(at.as_dir(), &step.at.name).map_err(Failure::Io)?,
                None => None,
            };
            let found = match (&step.act, &step.expect) {
                // Its bytes are checked through the handle they go through ([`add_append`]).
                (Act::Append { .. }, Expect::File { stat, .. }) => {
                    Expect::Entry { stat: *stat }.mismatch(now.as_ref())
                }
                _ => step.expect.mismatch(now.as_ref()),
            };
            if let Some(found) = found {
                return Err(Failure::NotAsExpected(found));
            }
        }
    }
    verify_destination(step, dirs, earlier, into_built)?;
    verify_copy_source(step, dirs)
}

/// A move's destination is free (into a directory the plan builds: the journal's step checks
/// the name is free there).
fn verify_destination(
    step: &Step,
    dirs: &Opened,
    earlier: &Earlier,
    into_built: bool,
) -> Result<(), Failure> {
    if let (Act::Move { to }, false) = (&step.act, into_built) {
        let free = match (earlier.free(&to.path()), &dirs.to) {
            (Some(free), _) => free,
            (None, Some(to_dir)) => fsops::lstat_at(to_dir.as_dir(), &to.name)
                .map_err(Failure::Io)?
                .is_none(),
            (None, None) => true,
        };
        if !free {
            return Err(Failure::NotAsExpected(Found::Taken));
        }
    }
    Ok(())
}

/// A copy's source is still the entry planned on (its identity and kind; a tree's content is
/// read as it is when copied).
pub(super) fn verify_copy_source(step: &Step, dirs: &Opened) -> Result<(), Failure> {
    let (Act::Copy { from, source, .. }, Some(from_dir)) = (&step.act, &dirs.from) else {
        return Ok(());
    };
    let now = fsops::lstat_at(from_dir.as_dir(), &from.name).map_err(Failure::Io)?;
    let expected = Expect::Entry { stat: *source };
    match expected.mismatch(now.as_ref()) {
        None => Ok(()),
        Some(found) => Err(Failure::NotAsExpected(found)),
    }
}
