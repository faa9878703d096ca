//! Copies staged beside their place and placed by the commit: a copy step's, and a move's
//! between directories a rename cannot join (another file system or mount), whose source is
//! removed once checked against its copy.

use std::ffi::OsStr;
use std::io;
use std::path::Path;

use super::dirs::Dirs;
use crate::call::plan::{Act, Expect, Place, Step};
use crate::call::stage;
use crate::cancel::CancelToken;
use crate::journal::commit::Commit;
use crate::journal::Journal;
use crate::paths::fsops::{self, DirMount, Snapshot};
use crate::paths::trees;
use crate::paths::{AsDir, BorrowedDir, Stat};

/// Whether a move's entry can be renamed from its directory to its destination's (if that
/// cannot be told, the rename tries).
pub(super) fn same_mount(dirs: &Dirs) -> bool {
    let to = dirs.to.as_ref().expect("a move's destination was opened");
    DirMount::same(dirs.at.as_dir(), to.as_dir()).unwrap_or(true)
}

/// Stages by a copy a copy step's entry, or a move's that a rename cannot take (see
/// [`same_mount`]), beside its destination and adds placing it there to the commit (a move's,
/// then the removal of its source: [`add_copied_move`]); returns what was built. A copy that
/// fails is an `io::Error` carrying [`stage::CopyFailed`].
pub(super) fn add_by_copy(
    journal: &Journal,
    commit: &mut Commit<'_>,
    step: Step,
    dirs: Dirs,
    cancel: &CancelToken,
) -> io::Result<stage::CopyMade> {
    let Place { dir, name, .. } = &step.at;
    match (&step.act, &step.expect) {
        (
            Act::Copy {
                from,
                source,
                below,
            },
            _,
        ) => {
            let from_dir = dirs.from.expect("a copy's source directory was opened");
            copy_and_place(
                journal,
                commit,
                (from_dir.as_dir(), &from.name, source),
                (dirs.at, dir, name),
                below,
                cancel,
            )
        }
        (Act::Move { to }, Expect::File { stat, .. } | Expect::Entry { stat }) => {
            let to_dir = dirs.to.expect("a move's destination was opened");
            let into = (to_dir, to.dir.as_path(), to.name.as_os_str());
            add_copied_move(journal, commit, (dirs.at, dir, name, stat), into, cancel)
        }
        _ => unreachable!("given copy steps, and moves that expect an entry (refused by check)"),
    }
}

/// Stages a copy of the entry `stat` (`name` in `from`) beside `to_name` in `to` (canonical
/// path `to_path`), the directories `below` made inside it first (see [`stage::copy`]), and
/// adds placing it to the commit; returns what was built.
pub(super) fn copy_and_place(
    journal: &Journal,
    commit: &mut Commit<'_>,
    (from, name, stat): (BorrowedDir<'_>, &OsStr, &Stat),
    (to, to_path, to_name): (crate::paths::Dir, &Path, &OsStr),
    below: &Path,
    cancel: &CancelToken,
) -> io::Result<stage::CopyMade> {
    // Listed, read and synced through: readable handles of the directories checked.
    let from = fsops::reopen_readable(from)?;
    let into = fsops::reopen_readable(to.as_dir())?;
    let made_above = commit.made_above(to_path);
    let source = stage::CopySource {
        dir: from.as_dir(),
        name,
        stat,
    };
    let aborted = || cancel.is_aborted();
    let (built, made) = stage::copy(
        journal,
        (into.as_dir(), to_path, to_name),
        made_above,
        source,
        below,
        &aborted,
    )?;
    commit.place(into, to_path, &built.aside, to_name, built.temp)?;
    Ok(made)
}

/// Adds to `commit` the move of the entry `stat` (`name` in the directory `from`, canonical path
/// `from_path`) to the free name `to_name` in `to` (canonical path `to_path`), where a rename
/// cannot take it (another file system or mount): a copy built beside its destination under a
/// journaled temp name ([`stage::copy`]) and placed there, then the removal of the source: set
/// aside, checked to be what was copied ([`trees::unchanged_since_copied`]; else the change
/// stops), removed after the commit point. Two steps of the commit. A copy that fails is an
/// `io::Error` carrying [`CopyFailed`](stage::CopyFailed); nothing of it is left.
pub fn add_copied_move(
    journal: &Journal,
    commit: &mut Commit<'_>,
    (from, from_path, name, stat): (crate::paths::Dir, &Path, &OsStr, &Stat),
    (to, to_path, to_name): (crate::paths::Dir, &Path, &OsStr),
    cancel: &CancelToken,
) -> io::Result<stage::CopyMade> {
    let made = copy_and_place(
        journal,
        commit,
        (from.as_dir(), name, stat),
        (to, to_path, to_name),
        Path::new(""),
        cancel,
    )?;
    let copied = made.read.clone();
    let check = Box::new(move |dir: BorrowedDir<'_>, aside: &OsStr| {
        trees::unchanged_since_copied(dir, aside, &copied)
    });
    commit.remove_checked(from, from_path, name, Snapshot::of(stat), check)?;
    Ok(made)
}
