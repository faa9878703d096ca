//! Directories a plan builds whole ([`Act::Build`] of anything but bytes): which moves go into
//! one or out of one, and how: each once the directory is placed, so that taking the change back
//! takes the move back first, while the directory is still there.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use super::dirs::Dirs;
use super::failure::Failure;
use crate::call::plan::{Act, Expect, Place, Source, Step};
use crate::call::stage;
use crate::journal::commit::Commit;
use crate::paths::fsops::Snapshot;
use crate::paths::AsDir;

/// The steps that build a directory whole (an [`Act::Build`] of anything but bytes), with the
/// path each builds.
fn trees_built(steps: &[Step]) -> Vec<(usize, PathBuf)> {
    steps
        .iter()
        .enumerate()
        .filter(|(_, step)| {
            matches!(&step.act, Act::Build(source) if !matches!(source, Source::Bytes { .. }))
        })
        .map(|(index, step)| (index, step.at.path()))
        .collect()
}

/// For each step, if it is a move into a directory the plan builds whole (an
/// [`Act::Build`] of anything but bytes, at or above the move's destination directory): that
/// step, and the destination directory's path inside the built one.
pub(super) fn into_built(steps: &[Step]) -> Vec<Option<(usize, PathBuf)>> {
    let builds = trees_built(steps);
    steps
        .iter()
        .map(|step| {
            let Act::Move { to } = &step.act else {
                return None;
            };
            builds.iter().find_map(|(index, path)| {
                let rel = to.dir.strip_prefix(path).ok()?;
                Some((*index, rel.to_owned()))
            })
        })
        .collect()
}

/// For each step, if it is a move out of a directory an earlier step builds whole (an
/// [`Act::Build`] of anything but bytes, above the entry moved; [`Expect::Built`]): that
/// step, and the entry's directory's path inside the built one. The entry is the plan's own,
/// moved out once the directory has taken its place, so that a failure after takes the move
/// back first, into the directory still there (a move out of a directory not placed yet could
/// not go back into it once the placing is taken back: the directory is gone).
pub(super) fn out_of_built(steps: &[Step]) -> Vec<Option<(usize, PathBuf)>> {
    let builds = trees_built(steps);
    steps
        .iter()
        .map(|step| {
            if !matches!((&step.act, &step.expect), (Act::Move { .. }, Expect::Built)) {
                return None;
            }
            builds.iter().find_map(|(index, path)| {
                let rel = step.at.dir.strip_prefix(path).ok()?;
                Some((*index, rel.to_owned()))
            })
        })
        .enumerate()
        .map(|(index, out)| out.filter(|(build, _)| *build < index))
        .collect()
}

/// The directory `rel` inside `tree`, built by the plan (and placed), which a move out of it
/// moves from.
pub(super) fn dir_in(tree: &stage::StagedTree, rel: &Path) -> io::Result<crate::paths::Dir> {
    let root = tree
        .root
        .as_ref()
        .ok_or_else(|| io::Error::from(io::ErrorKind::NotADirectory))?;
    stage::in_tree(root.as_dir(), Some(rel))
}

/// For the move out of a built tree at `index`, whose destination is inside another directory
/// the plan builds, placed by an earlier step: that destination directory, opened beneath the
/// built one (whose name it does not need).
pub(super) fn into_placed(
    into: &[Option<(usize, PathBuf)>],
    built: &[Option<stage::StagedTree>],
    index: usize,
) -> io::Result<Option<crate::paths::Dir>> {
    match &into[index] {
        Some((tree, rel)) if *tree < index => {
            let tree = built[*tree]
                .as_ref()
                .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
            dir_in(tree, rel).map(Some)
        }
        _ => Ok(None),
    }
}

/// Adds a move out of a tree built by the plan and placed by an earlier step: the entry in its
/// directory `rel` inside it (`dirs.at`, opened beneath it; at the step's place) to the move's
/// destination.
pub(super) fn add_move_out(
    commit: &mut Commit<'_>,
    step: Step,
    dirs: Dirs,
    rel: &Path,
) -> Result<(), Failure> {
    let Act::Move { to } = &step.act else {
        unreachable!("only a move moves out of a built tree")
    };
    let name = &step.at.name;
    // Ours, just built: it is known by what the staging left there.
    let now = crate::paths::fsops::lstat_at(dirs.at.as_dir(), name).map_err(Failure::Io)?;
    let now = now.ok_or(Failure::NotAsExpected(crate::call::plan::Found::Gone))?;
    debug_assert!(step.at.dir.ends_with(rel));
    let to_dir = dirs.to.expect("a move's destination was opened");
    commit
        .rename(
            dirs.at,
            &step.at.dir,
            name,
            Snapshot::of(&now),
            to_dir,
            &to.dir,
            &to.name,
        )
        .map_err(Failure::Io)
}

/// A move into a tree the plan builds, halfway: the entry set aside beside the tree's place (in
/// the directory the tree is built in), to go on into the tree once the tree is placed
/// ([`add_moved_in`]).
pub(super) struct MovingIn {
    /// Its temp name beside the tree's place.
    temp: OsString,
    expected: Snapshot,
    /// Its destination directory inside the tree, and its name there.
    rel: PathBuf,
    name: OsString,
    /// The plan's step of the move.
    pub(super) step: usize,
}

/// Adds the first half of a move into `tree`, built by the plan and not yet placed: the entry
/// set aside beside the tree's place, which frees its name for the steps that follow. It goes
/// on into the tree once the tree is placed ([`add_moved_in`]), so that a failure after, or a
/// kill before the commit point, takes it out of the tree before the tree is taken away (and
/// removed: it must hold nothing but what the plan built).
pub(super) fn add_move_into(
    commit: &mut Commit<'_>,
    step: Step,
    dirs: Dirs,
    tree: &stage::StagedTree,
    rel: &Path,
    index: usize,
) -> io::Result<MovingIn> {
    let (Act::Move { to }, Expect::File { stat, .. } | Expect::Entry { stat }) =
        (&step.act, &step.expect)
    else {
        unreachable!("refused by check: a move expects an entry")
    };
    let Place { dir, name, .. } = &step.at;
    let expected = Snapshot::of(stat);
    let temp = crate::paths::fsops::temp_name(name);
    commit.rename(
        dirs.at,
        dir,
        name,
        expected,
        tree.parent()?,
        &tree.dir_path,
        &temp,
    )?;
    Ok(MovingIn {
        temp,
        expected,
        rel: rel.to_owned(),
        name: to.name.clone(),
        step: index,
    })
}

/// Adds the second half of a move into `tree` ([`add_move_into`]), placed at `at` by the step
/// just added: the entry from beside it into its directory inside it.
pub(super) fn add_moved_in(
    commit: &mut Commit<'_>,
    tree: &stage::StagedTree,
    at: &Place,
    moving: MovingIn,
) -> io::Result<()> {
    let to_dir = dir_in(tree, &moving.rel)?;
    // A plain path, with no `/` at its end (a journal record refuses any other).
    let mut to_dir_path = at.path();
    if !moving.rel.as_os_str().is_empty() {
        to_dir_path.push(&moving.rel);
    }
    commit.rename(
        tree.parent()?,
        &tree.dir_path,
        &moving.temp,
        moving.expected,
        to_dir,
        &to_dir_path,
        &moving.name,
    )
}

/// A built entry that could not be built, as the executor reports it.
pub(super) fn built_failure(e: stage::BuildError) -> Failure {
    match e {
        stage::BuildError::Trash(e) => Failure::Trash(e),
        stage::BuildError::Io(e) => Failure::Io(e),
    }
}
