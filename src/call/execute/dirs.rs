//! The directories a step acts in: opened beneath their anchors to verify the step (one still
//! missing is a free name), the missing ones made just before the step is staged.

use std::io;

use super::failure::Failure;
use crate::call::plan::{Act, Found, Place, Step};
use crate::journal::commit::Commit;
use crate::paths::fsops;
use crate::paths::{AsDir, BorrowedDir};

/// The directories a step acts in, as opened to verify it: a directory the step makes is
/// `None` until it is made ([`Opened::made`]), just before the step is staged, so that no
/// directory is made before the entries that answer for it (a kill while what the plan keeps
/// is archived leaves none).
pub(super) struct Opened {
    pub(super) at: Option<crate::paths::Dir>,
    /// A move's destination directory.
    pub(super) to: Option<crate::paths::Dir>,
    pub(super) from: Option<crate::paths::Dir>,
}

impl Opened {
    /// The step's directory, which holds the entry the step expects.
    pub(super) fn found_at(&self) -> Result<BorrowedDir<'_>, Failure> {
        let at = self
            .at
            .as_ref()
            .ok_or(Failure::NotAsExpected(Found::Gone))?;
        Ok(at.as_dir())
    }

    /// The step's directories, the missing ones made (handed to the commit, which removes
    /// them again unless the change is made).
    /// `into_built`: a move's destination is inside a directory the plan builds (see
    /// [`into_built`](super::built::into_built)), which is not made here.
    pub(super) fn made(
        self,
        commit: &mut Commit<'_>,
        step: &Step,
        into_built: bool,
    ) -> io::Result<Dirs> {
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

impl Opened {
    /// The directories of a move out of a directory the plan builds: `at`, its source's
    /// directory inside it, and the destination's: `into`, inside another directory the plan
    /// builds and placed before, or the missing ones made.
    pub(super) fn made_out_of_built(
        self,
        commit: &mut Commit<'_>,
        step: &Step,
        at: crate::paths::Dir,
        into: Option<crate::paths::Dir>,
    ) -> io::Result<Dirs> {
        let Act::Move { to } = &step.act else {
            unreachable!("only a move moves out of a built tree")
        };
        let to = match (into, self.to) {
            (Some(dir), _) | (None, Some(dir)) => dir,
            (None, None) => commit.make_dirs(&to.anchor, &to.dir)?,
        };
        Ok(Dirs {
            at,
            to: Some(to),
            from: None,
        })
    }
}

/// The directories a step acts in, made.
pub(super) struct Dirs {
    pub(super) at: crate::paths::Dir,
    pub(super) to: Option<crate::paths::Dir>,
    /// A copy's source directory.
    pub(super) from: Option<crate::paths::Dir>,
}

/// Opens the step's directory beneath its anchor. That of a put, a built directory or a
/// restored entry, and a move's destination, may be missing (its parents are made later,
/// [`Opened::made`]): then the name is free.
/// `out_of_built`: a move's source is inside a directory the plan builds, opened once it is.
pub(super) fn open(step: &Step, into_built: bool, out_of_built: bool) -> io::Result<Opened> {
    let at = match step.act {
        Act::Move { .. } if out_of_built => None,
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
