//! The one executor: every [`ChangePlan`] is made the same way, all or nothing, on the journal's
//! commit (`journal::commit`): open each step's directory (one still missing is a free name)
//! → verify every step's [`Expect`] (the readable refusal: nothing is kept or staged yet) →
//! trash first (each [`Keep::Archive`] step's entry archived, kept in place, the archive
//! checked against what was expected) → stage (missing parents of what is put or built made
//! just before, removed again unless the change is made; new bytes, built entries, under
//! journaled temp names) → commit (one fsynced record;
//! each step checks again as it is applied, and a step that fails takes back the ones before
//! it) with the history's record of the change in it ([`commit_recorded`]).
//!
//! Not yet here (issue 27, later steps): the lock and the question, which the call flow does
//! before; the tools still make their changes themselves.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};

use super::plan::{Act, ChangePlan, Expect, Found, Keep, Place, Source, Step};
use super::{commit_consuming, stage, Recorded};
use crate::cancel::CancelToken;
use crate::change::FileChange;
use crate::history::Heading;
use crate::journal::commit::{holds, Commit, CommitError, LeftInPlace, PlannedFile, StepFailure};
use crate::journal::Journal;
use crate::paths::fsops::{self, DirMount, Snapshot};
use crate::paths::os_error::{cause, Cause};
use crate::paths::trees::{self, CopyError};
use crate::paths::{process, AsDir, BorrowedDir};
use crate::paths::{EntryKind, Stat};
use crate::trash::{archive_relative_path, Archived, Bucket, Observed, TrashError, TrashItem};
use crate::workspace::Workspace;
pub use stage::{CopyFailed, CopyMade};

/// Why a plan was not made; nothing of it was.
#[derive(Debug)]
pub struct ExecuteError {
    /// The step (in the plan's order) that was refused or failed.
    pub step: usize,
    pub failure: Failure,
}

/// What went wrong with a step.
#[derive(Debug)]
pub enum Failure {
    /// Before anything was staged, the place was not as the plan expected (at a move's
    /// destination: `Taken`).
    NotAsExpected(Found),
    /// As the step was applied, the entry was not the one planned on (the journal's check);
    /// `kept` names a visible copy of something that took its place.
    Changed {
        being_written: bool,
        kept: Option<OsString>,
    },
    /// A step that cannot do what the plan says with what it expects (a plan's own mistake).
    Invalid(&'static str),
    /// What the step finds could not be put in the trash (nothing was changed).
    Trash(TrashError),
    Io(io::Error),
}

impl From<CommitError> for ExecuteError {
    fn from(e: CommitError) -> Self {
        let failure = match e.reason {
            StepFailure::Changed {
                being_written,
                kept,
            } => Failure::Changed {
                being_written,
                kept,
            },
            StepFailure::Io(e) => Failure::Io(e),
        };
        ExecuteError {
            step: e.step,
            failure,
        }
    }
}

/// What the commit made, for the result and the history.
#[derive(Default)]
pub struct Done {
    /// Each step's archive (trash-first), in the plan's order; held (`trashClear` leaves it
    /// alone) until the call has reported it.
    pub archives: Vec<Option<Archived>>,
    /// Each step's copy (an [`Act::Copy`] step's), in the plan's order.
    pub copies: Vec<Option<stage::CopyMade>>,
}

/// A plan made and recorded.
pub struct Executed {
    pub done: Done,
    /// What the history lists, as the plan's `files` said once every step was made.
    pub files: Vec<FileChange>,
    pub recorded: Recorded,
    /// What removals could not remove after the commit point (the system refused it, or a
    /// mount point inside), by the plan's step: the change stands, what is left is back at its
    /// name. See [`LeftInPlace`].
    pub left: Vec<(usize, io::Error)>,
}

/// Makes every step of `plan`, or none, with its record in the history as `heading` (see the
/// module docs): `files` says, once every step is made, what the history lists; the record
/// rides in the commit's journal record, so a kill leaves the change with its record or
/// neither. Archives made for a change that is not made are discarded.
///
/// A move between two directories an entry cannot be renamed between (another file system, or
/// another mount of it) is made as a copy: the entry copied beside its destination under a
/// journaled temp name and placed there, and the source set aside, checked to be, entry for
/// entry, what was copied (else [`Failure::Io`] carrying [`CopyFailed`]`(`[`CopyError::Changed`]`)`
/// and nothing is moved), and removed after the commit point. A rename that fails with `EXDEV`
/// as it is applied (two bind mounts the check could not tell apart) is made that way, once.
pub fn execute(
    ws: &Workspace,
    plan: ChangePlan,
    heading: &Heading,
    cancel: &CancelToken,
    files: impl FnOnce(&Done) -> Vec<FileChange>,
) -> Result<Executed, ExecuteError> {
    let again = plan
        .steps
        .iter()
        .any(|step| matches!(step.act, Act::Move { .. }))
        .then(|| plan.clone());
    let mut files = Some(files);
    match make(ws, plan, heading, cancel, &mut files, false) {
        Err(e) if crosses_mounts(&e) => match (again, files.is_some()) {
            (Some(plan), true) => make(ws, plan, heading, cancel, &mut files, true),
            _ => Err(e),
        },
        made => made,
    }
}

/// Whether a change failed only because a rename crossed file systems (or mounts).
fn crosses_mounts(e: &ExecuteError) -> bool {
    matches!(&e.failure, Failure::Io(io) if cause(io) == Cause::CrossDevice)
}

/// [`execute`], every move by copy when `by_copy`.
fn make<F: FnOnce(&Done) -> Vec<FileChange>>(
    ws: &Workspace,
    plan: ChangePlan,
    heading: &Heading,
    cancel: &CancelToken,
    files: &mut Option<F>,
    by_copy: bool,
) -> Result<Executed, ExecuteError> {
    let mut commit = ws.journal().commit();
    let into = into_built(&plan.steps);
    let opened = open_and_verify(&plan.steps, &into)?;
    let ChangePlan { steps, consume } = plan;
    let mut done = Done::default();
    let failed = |done: &mut Done, step, failure| {
        for archived in done.archives.drain(..).flatten() {
            ws.bucket().discard(archived);
        }
        ExecuteError { step, failure }
    };
    let mut trees = Vec::with_capacity(steps.len());
    for (index, (step, dirs)) in steps.iter().zip(&opened).enumerate() {
        let (archived, tree) = match step.keep {
            Keep::Nothing => (None, None),
            Keep::Archive if removes_tree(step) => match archive_tree(ws, step, dirs, cancel) {
                Ok((archived, tree)) => (Some(archived), Some(tree)),
                Err(failure) => return Err(failed(&mut done, index, failure)),
            },
            Keep::Archive => match archive(ws, step, dirs, cancel) {
                Ok(archived) => (Some(archived), None),
                Err(failure) => return Err(failed(&mut done, index, failure)),
            },
        };
        if let Some(name) = archived.as_ref().and_then(|a| a.archive_path.file_name()) {
            commit.archived(name);
        }
        done.archives.push(archived);
        trees.push(tree);
    }
    process::crash_point("archived");
    let journal = ws.journal();
    // The archives restored from, held (no other call restores or clears one) until the
    // commit is done.
    let mut held = Vec::new();
    // The plan's step of each of the commit's (a move by copy adds two), and the commit's
    // steps that remove a moved source once checked against its copy.
    let mut of_step = Vec::with_capacity(steps.len());
    let mut copied_sources = Vec::new();
    // Directories built whole (an archive's tree, a tree built of pieces), before any step is
    // added: what moves into one moves in while it is under its temp name.
    let mut opened: Vec<Option<Opened>> = opened.into_iter().map(Some).collect();
    let mut made: Vec<Option<Dirs>> = steps.iter().map(|_| None).collect();
    let mut built: Vec<Option<stage::StagedTree>> = steps.iter().map(|_| None).collect();
    for (index, step) in steps.iter().enumerate() {
        let Act::Build(source) = &step.act else {
            continue;
        };
        if matches!(source, Source::Bytes { .. }) {
            continue;
        }
        let opened = opened[index].take().expect("opened once");
        let staged = opened
            .made(&mut commit, step, false)
            .map_err(Failure::Io)
            .and_then(|dirs| {
                let readable = fsops::reopen_readable(dirs.at.as_dir()).map_err(Failure::Io)?;
                let above = commit.made_above(&step.at.dir);
                let dir = &step.at.dir;
                let tree = stage::tree(ws, readable.as_dir(), dir, source, above, cancel);
                Ok((dirs, tree.map_err(built_failure)?))
            });
        match staged {
            Ok((dirs, tree)) => {
                made[index] = Some(dirs);
                built[index] = Some(tree);
            }
            Err(failure) => {
                drop(commit);
                return Err(failed(&mut done, index, failure));
            }
        }
    }
    for (index, ((step, opened), tree)) in steps.into_iter().zip(opened).zip(trees).enumerate() {
        let dirs = match (made[index].take(), opened) {
            (Some(dirs), _) => Ok(dirs),
            (None, Some(opened)) => opened.made(&mut commit, &step, into[index].is_some()),
            (None, None) => unreachable!("every step's directories are opened once"),
        };
        let dirs = match dirs {
            Ok(dirs) => dirs,
            Err(e) => {
                drop(commit);
                return Err(failed(&mut done, index, Failure::Io(e)));
            }
        };
        let into_tree = into[index]
            .as_ref()
            .and_then(|(tree, rel)| Some((built[*tree].as_ref()?, rel.as_path())));
        let across = matches!(step.act, Act::Move { .. })
            && into_tree.is_none()
            && (by_copy || !same_mount(&dirs));
        let added = match (tree, &step.act) {
            (Some(tree), _) => add_tree_removal(&mut commit, step, dirs, tree)
                .map(|()| None)
                .map_err(Failure::Io),
            (None, Act::Archive) => Ok(None),
            (None, Act::Build(source)) if !matches!(source, Source::Bytes { .. }) => {
                let tree = built[index].as_mut().expect("built before");
                held.append(&mut tree.held);
                let placed = tree.take();
                let Place { dir, name, .. } = &step.at;
                commit
                    .place(dirs.at, dir, &placed.aside, name, placed.temp)
                    .map(|()| None)
                    .map_err(Failure::Io)
            }
            (None, Act::Move { .. }) if into_tree.is_some() => {
                let (tree, rel) = into_tree.expect("matched");
                add_move_into(&mut commit, step, dirs, tree, rel)
                    .map(|()| None)
                    .map_err(Failure::Io)
            }
            (None, Act::Restore { .. }) => {
                add_restore(ws, &mut commit, step, dirs, cancel).map(|archive| {
                    held.push(archive);
                    None
                })
            }
            (None, Act::Copy { .. }) => add_copy(journal, &mut commit, step, dirs, cancel)
                .map(Some)
                .map_err(Failure::Io),
            (None, Act::Append { .. }) => add_append(&mut commit, step, dirs).map(|()| None),
            (None, Act::Move { .. }) if across => {
                let copied = add_move_by_copy(journal, &mut commit, step, dirs, cancel);
                copied_sources.push(commit.len().saturating_sub(1));
                copied.map(Some).map_err(Failure::Io)
            }
            (None, _) => add(journal, &mut commit, step, dirs)
                .map(|()| None)
                .map_err(Failure::Io),
        };
        match added {
            Ok(copy) => done.copies.push(copy),
            Err(failure) => {
                drop(commit);
                return Err(failed(&mut done, index, failure));
            }
        }
        of_step.resize(commit.len(), index);
    }
    process::crash_point("staged");
    let consume = consume
        .iter()
        .filter_map(|archive| archive.file_name().map(PathBuf::from))
        .collect();
    let files = files.take().expect("a plan is recorded once");
    let committed = commit_consuming(ws, commit, heading, consume, || files(&done));
    drop(held);
    let plan_step = |step: usize| of_step.get(step).copied().unwrap_or(step);
    match committed {
        Ok((files, recorded, left)) => Ok(Executed {
            done,
            files,
            recorded,
            left: left
                .into_iter()
                .map(|LeftInPlace { step, error }| (plan_step(step), error))
                .collect(),
        }),
        Err(e) => {
            let commit_step = e.step;
            let mut e = ExecuteError::from(e);
            e.step = plan_step(commit_step);
            if copied_sources.contains(&commit_step) && matches!(e.failure, Failure::Changed { .. })
            {
                let changed = CopyFailed(CopyError::Changed(PathBuf::new()));
                e.failure = Failure::Io(io::Error::other(changed));
            }
            Err(failed(&mut done, e.step, e.failure))
        }
    }
}

/// Whether a move's entry can be renamed from its directory to its destination's (if that
/// cannot be told, the rename tries).
fn same_mount(dirs: &Dirs) -> bool {
    let to = dirs.to.as_ref().expect("a move's destination was opened");
    DirMount::same(dirs.at.as_dir(), to.as_dir()).unwrap_or(true)
}

/// Opens every step's directories and checks what each step expects, before anything is kept
/// or staged.
fn open_and_verify(
    steps: &[Step],
    into: &[Option<(usize, PathBuf)>],
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
        let dirs = open(step, into_built).map_err(|e| fail(Failure::Io(e)))?;
        verify(step, &dirs, &earlier, into_built).map_err(fail)?;
        earlier.note(step);
        opened.push(dirs);
    }
    Ok(opened)
}

/// Archives what the step finds (kept in place) if it is the entry the step expects (its
/// identity, size and times), and checks the archive holds what the step expects: the bytes
/// read (by SHA-256) or an entry of the kind planned on.
fn archive(
    ws: &Workspace,
    step: &Step,
    dirs: &Opened,
    cancel: &CancelToken,
) -> Result<Archived, Failure> {
    let path = step.at.path();
    let relative = archive_relative_path(ws.sandbox().root(), &path);
    let item = TrashItem {
        parent: dirs.found_at()?,
        name: &step.at.name,
        original_path: &path,
        relative_path: &relative,
    };
    let expected = match &step.expect {
        Expect::File { stat, .. } | Expect::Entry { stat } | Expect::Tree { stat, .. } => {
            Snapshot::of(stat)
        }
        Expect::Nothing | Expect::EmptyDir { .. } => {
            unreachable!(
                "refused by check: nothing to keep at a free name or of an empty directory"
            )
        }
    };
    let archived = ws
        .bucket()
        .archive_expected(&item, &expected, &|| cancel.is_aborted())
        .map_err(Failure::Trash)?;
    let differs = match &step.expect {
        Expect::File { sha256, .. } => {
            (archived.metadata.original_sha256 != *sha256).then_some(Found::Changed)
        }
        Expect::Entry { stat } => {
            (archived.metadata.kind != stat.kind()).then_some(Found::Replaced)
        }
        Expect::Tree { sha256, .. } => {
            if archived.metadata.kind != EntryKind::Directory {
                Some(Found::Replaced)
            } else {
                // The tree's digest: something inside it changed.
                sha256
                    .as_ref()
                    .filter(|digest| **digest != archived.metadata.original_sha256)
                    .map(|_| Found::Changed)
            }
        }
        Expect::Nothing | Expect::EmptyDir { .. } => None,
    };
    match differs {
        None => Ok(archived),
        Some(found) => {
            ws.bucket().discard(archived);
            Err(Failure::NotAsExpected(found))
        }
    }
}

/// Whether the step removes a directory kept in the trash first: a tree, removed only as
/// archived ([`archive_tree`], [`add_tree_removal`]).
fn removes_tree(step: &Step) -> bool {
    matches!(
        (&step.act, &step.expect),
        (Act::Remove, Expect::Entry { stat }) if stat.kind() == EntryKind::Directory
    )
}

/// What archiving a tree saw of it, which its removal checks it against once set aside.
struct ArchivedTree {
    observed: Vec<Observed>,
    /// The directory messages show paths in.
    base: PathBuf,
}

/// [`archive`] for a tree a step removes: archived whole, kept in place,
/// and checked that every entry of it may be removed (refused, nothing is archived or
/// removed: the trash's words, naming the entry that could not be).
fn archive_tree(
    ws: &Workspace,
    step: &Step,
    dirs: &Opened,
    cancel: &CancelToken,
) -> Result<(Archived, ArchivedTree), Failure> {
    let path = step.at.path();
    let relative = archive_relative_path(ws.sandbox().root(), &path);
    let item = TrashItem {
        parent: dirs.found_at()?,
        name: &step.at.name,
        original_path: &path,
        relative_path: &relative,
    };
    let Expect::Entry { stat } = &step.expect else {
        unreachable!("removes_tree checked the step")
    };
    let (archived, observed) = ws
        .bucket()
        .archive_for_removal(&item, &Snapshot::of(stat), &|| cancel.is_aborted())
        .map_err(Failure::Trash)?;
    if archived.metadata.kind != EntryKind::Directory {
        ws.bucket().discard(archived);
        return Err(Failure::NotAsExpected(Found::Replaced));
    }
    let base = item.display_dir().to_owned();
    Ok((archived, ArchivedTree { observed, base }))
}

/// Adds the removal of a tree archived as `tree`: set aside by one rename, then checked there
/// against what was archived (every entry as it was, no other), else put back and the change
/// stopped; removed after the commit point.
fn add_tree_removal(
    commit: &mut Commit<'_>,
    step: Step,
    dirs: Dirs,
    tree: ArchivedTree,
) -> io::Result<()> {
    let Expect::Entry { stat } = step.expect else {
        unreachable!("removes_tree checked the step")
    };
    let ArchivedTree { observed, base } = tree;
    let check = Box::new(move |dir: BorrowedDir<'_>, aside: &OsStr| {
        Bucket::unchanged_under(dir, aside, &observed, &base)
    });
    let Place { dir, name, .. } = &step.at;
    commit.remove_checked(dirs.at, dir, name, Snapshot::of(&stat), check)
}

/// Adds a restore: the archive's entry extracted under a journaled temp name beside the place
/// ([`stage::restored`]), then placed by the commit. Returns the archive, held.
fn add_restore(
    ws: &Workspace,
    commit: &mut Commit<'_>,
    step: Step,
    dirs: Dirs,
    cancel: &CancelToken,
) -> Result<Archived, Failure> {
    let Act::Restore { archive } = &step.act else {
        unreachable!("the caller matched a restore")
    };
    let Place { dir, name, .. } = &step.at;
    // Readable: the extraction syncs the directory it builds in.
    let readable = fsops::reopen_readable(dirs.at.as_dir()).map_err(Failure::Io)?;
    let made_above = commit.made_above(dir);
    let (built, held) = stage::restored(ws, readable.as_dir(), dir, archive, made_above, cancel)
        .map_err(Failure::Trash)?;
    commit
        .place(dirs.at, dir, &built.aside, name, built.temp)
        .map_err(Failure::Io)?;
    Ok(held)
}

/// The directories a step acts in, as opened to verify it: a directory the step makes is
/// `None` until it is made ([`Opened::made`]), just before the step is staged, so that no
/// directory is made before the entries that answer for it (a kill while what the plan keeps
/// is archived leaves none).
struct Opened {
    at: Option<crate::paths::Dir>,
    /// A move's destination directory.
    to: Option<crate::paths::Dir>,
    from: Option<crate::paths::Dir>,
}

impl Opened {
    /// The step's directory, which holds the entry the step expects.
    fn found_at(&self) -> Result<BorrowedDir<'_>, Failure> {
        let at = self
            .at
            .as_ref()
            .ok_or(Failure::NotAsExpected(Found::Gone))?;
        Ok(at.as_dir())
    }

    /// The step's directories, the missing ones made (handed to the commit, which removes
    /// them again unless the change is made).
    /// `into_built`: a move's destination is inside a directory the plan builds (see
    /// [`into_built`]), which is not made here.
    fn made(self, commit: &mut Commit<'_>, step: &Step, into_built: bool) -> io::Result<Dirs> {
        let mut ensure = |place: &Place, opened: Option<crate::paths::Dir>| match opened {
            Some(dir) => Ok(dir),
            None => commit.make_dirs(&place.anchor, &place.dir),
        };
        let at = ensure(&step.at, self.at)?;
        let to = match &step.act {
            Act::Move { .. } if into_built => None,
            Act::Move { to } => Some(ensure(to, self.to)?),
            _ => None,
        };
        Ok(Dirs {
            at,
            to,
            from: self.from,
        })
    }
}

/// The directories a step acts in, made.
struct Dirs {
    at: crate::paths::Dir,
    to: Option<crate::paths::Dir>,
    /// A copy's source directory.
    from: Option<crate::paths::Dir>,
}

/// A plan's steps pair what they do with what they expect: a put replaces a file read (or
/// takes a free name), a removal or a move needs an entry, a directory is built at a free name.
fn check(step: &Step) -> Result<(), &'static str> {
    match (&step.act, &step.expect) {
        (Act::Put { .. }, Expect::Nothing | Expect::File { .. }) => Ok(()),
        (Act::Put { .. }, Expect::Entry { .. }) => {
            Err("a put replaces a file whose bytes were read")
        }
        (Act::Remove | Act::Move { .. }, Expect::File { .. } | Expect::Entry { .. }) => Ok(()),
        (Act::Remove, Expect::EmptyDir { .. }) => Ok(()),
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
        _ => Ok(()),
    }
}

/// Opens the step's directory beneath its anchor. That of a put, a built directory or a
/// restored entry, and a move's destination, may be missing (its parents are made later,
/// [`Opened::made`]): then the name is free.
fn open(step: &Step, into_built: bool) -> io::Result<Opened> {
    let at = match step.act {
        Act::Put { .. }
        | Act::MakeDir { .. }
        | Act::Copy { .. }
        | Act::Restore { .. }
        | Act::Build(_) => open_if_there(&step.at)?,
        Act::Remove | Act::Move { .. } | Act::Append { .. } | Act::Archive => {
            Some(fsops::open_dir(&step.at.anchor, &step.at.dir, false)?)
        }
    };
    let to = match &step.act {
        Act::Move { .. } if into_built => None,
        Act::Move { to } => open_if_there(to)?,
        _ => None,
    };
    let from = match &step.act {
        Act::Copy { from, .. } => Some(fsops::open_dir(&from.anchor, &from.dir, false)?),
        _ => None,
    };
    Ok(Opened { at, to, from })
}

/// The place's directory, or `None` if it (or a directory above it) is missing.
fn open_if_there(place: &Place) -> io::Result<Option<crate::paths::Dir>> {
    match fsops::open_dir(&place.anchor, &place.dir, false) {
        Ok(dir) => Ok(Some(dir)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The places earlier steps of the plan free or fill: a later step expects what they leave
/// (an overwrite removes the old entry, then puts, builds or moves at its free name; an entry
/// moved aside to a temp name moves on from there).
#[derive(Default)]
struct Earlier {
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
                Expect::Nothing | Expect::EmptyDir { .. } => None,
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
fn verify(step: &Step, dirs: &Opened, earlier: &Earlier, into_built: bool) -> Result<(), Failure> {
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
    // Into a directory the plan builds: the journal's step checks the name is free there.
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
    verify_copy_source(step, dirs)
}

/// A copy's source is still the entry planned on (its identity and kind; a tree's content is
/// read as it is when copied).
fn verify_copy_source(step: &Step, dirs: &Opened) -> Result<(), Failure> {
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

/// Stages what the step needs and adds it to the commit.
fn add(journal: &Journal, commit: &mut Commit<'_>, step: Step, dirs: Dirs) -> io::Result<()> {
    let Step {
        at, expect, act, ..
    } = step;
    let Place { dir, name, .. } = &at;
    match (act, expect) {
        (Act::Put { data, like }, Expect::File { stat, sha256 }) => {
            let planned = PlannedFile { stat, sha256 };
            let metadata_of = like.unwrap_or(stat);
            commit.put(dirs.at, dir, name, data, Some(&metadata_of), Some(planned))
        }
        (Act::Put { data, like }, _) => commit.put(dirs.at, dir, name, data, like.as_ref(), None),
        (Act::Remove, Expect::File { stat, .. } | Expect::Entry { stat }) => {
            commit.remove(dirs.at, dir, name, Snapshot::of(&stat))
        }
        (Act::Remove, Expect::EmptyDir { stat }) => {
            commit.remove_empty_dir(dirs.at, dir, name, Snapshot::of(&stat))
        }
        // As it is when the step comes (see [`Expect::Tree`]): what it holds is in the trash.
        (Act::Remove, Expect::Tree { stat, .. }) => {
            commit.remove(dirs.at, dir, name, Snapshot::of(&stat))
        }
        (Act::Build(Source::Bytes { data, mode }), _) => {
            let made_above = commit.made_above(dir);
            let built = stage::bytes(
                journal,
                dirs.at.as_dir(),
                dir,
                name,
                &data,
                mode,
                made_above,
            )?;
            commit.place(dirs.at, dir, &built.aside, name, built.temp)
        }
        (Act::Move { to }, Expect::File { stat, .. } | Expect::Entry { stat }) => {
            let to_dir = dirs.to.expect("a move's destination was opened");
            // The directories made for the destination are answered for (removed by recovery
            // if still empty) until the commit record is written.
            let made_above = commit.made_above(&to.dir);
            let temp = (!made_above.is_empty())
                .then(|| {
                    let unused = fsops::temp_name(&to.name);
                    journal.begin_temp_in_made_dirs(&to.dir, to_dir.as_dir(), &unused, made_above)
                })
                .flatten();
            let expected = Snapshot::of(&stat);
            let added = commit.rename(dirs.at, dir, name, expected, to_dir, &to.dir, &to.name);
            match added {
                Ok(()) => commit.hand_over(temp),
                Err(e) => {
                    if let Some(temp) = temp {
                        temp.finish();
                    }
                    return Err(e);
                }
            }
            Ok(())
        }
        (Act::MakeDir { mode, below }, _) => {
            let built = stage::new_dir(journal, dirs.at.as_dir(), dir, name, mode, &below)?;
            commit.place(dirs.at, dir, &built.aside, name, built.temp)
        }
        (Act::Remove | Act::Move { .. }, Expect::Nothing)
        | (Act::Move { .. }, Expect::EmptyDir { .. } | Expect::Tree { .. }) => {
            unreachable!("refused by check before anything was opened")
        }
        (Act::Copy { .. }, _) => unreachable!("staged by add_copy, which returns what it built"),
        (Act::Append { .. }, _) => unreachable!("an append is added by add_append"),
        (Act::Restore { .. }, _) => unreachable!("a restore is added by add_restore"),
        (Act::Archive, _) => unreachable!("an entry kept alone adds no step"),
        (Act::Build(_), _) => unreachable!("a directory built whole is placed as built"),
    }
}

/// Adds an append step: the file opened for update, checked through that handle — the file
/// the step expects (its identity, still a regular file), a single link where the step says
/// so, and its bytes by their SHA-256 — then handed to the commit, which appends through it.
/// Nothing can be swapped in under the name between the check and the write: the bytes go
/// through the handle checked.
fn add_append(commit: &mut Commit<'_>, step: Step, dirs: Dirs) -> Result<(), Failure> {
    let (Act::Append { data, single_link }, Expect::File { stat, sha256 }) =
        (step.act, step.expect)
    else {
        unreachable!("refused by check: an append expects a file read")
    };
    let Place { dir, name, .. } = &step.at;
    let mut file = match fsops::open_for_update(dirs.at.as_dir(), name) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(Failure::NotAsExpected(Found::Gone))
        }
        Err(e) => return Err(Failure::Io(e)),
    };
    let now = fsops::fstat(&file).map_err(Failure::Io)?;
    if now.identity() != stat.identity() || now.kind() != EntryKind::File {
        return Err(Failure::NotAsExpected(Found::Replaced));
    }
    let links = fsops::link_count(&now);
    if single_link && links > 1 {
        return Err(Failure::NotAsExpected(Found::Linked(links)));
    }
    if !holds(&mut file, stat.size, &sha256).map_err(Failure::Io)? {
        return Err(Failure::NotAsExpected(Found::Changed));
    }
    commit
        .append(dirs.at, dir, name, file, data)
        .map_err(Failure::Io)
}

/// Stages a copy step's entry beside its place (see [`stage::copy`]) and adds placing it to
/// the commit; returns what was built. A copy that fails is an `io::Error` carrying
/// [`stage::CopyFailed`].
fn add_copy(
    journal: &Journal,
    commit: &mut Commit<'_>,
    step: Step,
    dirs: Dirs,
    cancel: &CancelToken,
) -> io::Result<stage::CopyMade> {
    let Act::Copy {
        from,
        source,
        below,
    } = step.act
    else {
        unreachable!("add_copy is given copy steps only")
    };
    let Place { dir, name, .. } = &step.at;
    let from_dir = dirs.from.expect("a copy's source directory was opened");
    copy_and_place(
        journal,
        commit,
        (from_dir.as_dir(), &from.name, &source),
        (dirs.at, dir, name),
        &below,
        cancel,
    )
}

/// Stages a copy of the entry `stat` (`name` in `from`) beside `to_name` in `to` (canonical
/// path `to_path`), the directories `below` made inside it first (see [`stage::copy`]), and
/// adds placing it to the commit; returns what was built.
fn copy_and_place(
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

/// Stages a move's entry as a copy beside its destination and adds placing it there, then the
/// removal of the source ([`add_copied_move`]). Returns what was built.
fn add_move_by_copy(
    journal: &Journal,
    commit: &mut Commit<'_>,
    step: Step,
    dirs: Dirs,
    cancel: &CancelToken,
) -> io::Result<stage::CopyMade> {
    let (Act::Move { to }, Expect::File { stat, .. } | Expect::Entry { stat }) =
        (&step.act, &step.expect)
    else {
        unreachable!("refused by check: a move expects an entry")
    };
    let to_dir = dirs.to.expect("a move's destination was opened");
    let from = (
        dirs.at,
        step.at.dir.as_path(),
        step.at.name.as_os_str(),
        stat,
    );
    let into = (to_dir, to.dir.as_path(), to.name.as_os_str());
    add_copied_move(journal, commit, from, into, cancel)
}

/// Adds to `commit` the move of the entry `stat` (`name` in the directory `from`, canonical path
/// `from_path`) to the free name `to_name` in `to` (canonical path `to_path`), where a rename
/// cannot take it (another file system or mount): a copy built beside its destination under a
/// journaled temp name ([`stage::copy`]) and placed there, then the removal of the source: set
/// aside, checked to be what was copied ([`trees::unchanged_since_copied`]; else the change
/// stops), removed after the commit point. Two steps of the commit. A copy that fails is an
/// `io::Error` carrying [`CopyFailed`]; nothing of it is left.
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

mod built;
use built::{add_move_into, built_failure, into_built};

#[cfg(test)]
#[path = "execute_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "execute_copy_tests.rs"]
mod copy_tests;

#[cfg(test)]
#[path = "execute_append_tests.rs"]
mod append_tests;

#[cfg(test)]
#[path = "execute_move_tests.rs"]
mod move_tests;

#[cfg(test)]
#[path = "execute_undo_tests.rs"]
mod undo_tests;
