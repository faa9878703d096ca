//! How an undo's failures are told: the undo's own words, naming the path the model knows.

use std::io;
use std::path::{Path, PathBuf};

use crate::call::execute::{ExecuteError, Failure};
use crate::call::plan::Found;
use crate::call::trashing::trash_error;
use crate::error::{ErrorCode, ToolError};
use crate::paths::shown::Shown;

/// How a failed step is told.
pub struct Told {
    /// The path a refusal before anything changed names (where the entry is now).
    checked: PathBuf,
    /// The path a failure as the step was applied names (the history's).
    applied: PathBuf,
    /// What a trash error was doing ("trash", "restore").
    trash: &'static str,
    /// The step removes a tree whose digest it checks: [`Found::Changed`] is a change inside.
    digest: bool,
}

/// How the failures of an undo plan's steps are told.
pub struct Words(Vec<Told>);

impl Told {
    /// A step's words: the paths a refusal and a failure name, what a trash error was doing,
    /// and whether a changed digest is a change inside a tree.
    pub fn new(checked: &Path, applied: &Path, trash: &'static str, digest: bool) -> Self {
        Told {
            checked: checked.to_owned(),
            applied: applied.to_owned(),
            trash,
            digest,
        }
    }

    /// The path a refusal of the step names.
    pub fn checked(&self) -> &Path {
        &self.checked
    }
}

impl Words {
    /// The words of a plan's steps, in its order.
    pub fn new(told: Vec<Told>) -> Self {
        Words(told)
    }

    /// The failure of the undo, in undo's words; nothing was undone.
    pub fn failed(&self, e: ExecuteError) -> ToolError {
        let Some(told) = self.0.get(e.step) else {
            let io = match e.failure {
                Failure::Io(io) => io,
                other => io::Error::other(format!("{other:?}")),
            };
            return ToolError::io(&io, "undo the change to", Path::new("/"));
        };
        match e.failure {
            Failure::NotAsExpected(Found::Changed) if told.digest => changed_inside(&told.checked),
            Failure::NotAsExpected(_) => changed(&told.checked),
            Failure::Changed { .. } => changed(&told.applied),
            Failure::Trash(e) => trash_error(e, told.trash, &told.checked),
            Failure::Io(e) if e.kind() == io::ErrorKind::NotFound => gone_above(&told.checked),
            Failure::Io(e) => ToolError::io(&e, "undo the change to", &told.applied),
            Failure::Invalid(why) => {
                ToolError::io(&io::Error::other(why), "undo the change to", &told.applied)
            }
        }
    }
}

/// The directory that held `path` is gone.
pub fn gone_above(path: &Path) -> ToolError {
    ToolError::new(
        ErrorCode::Conflict,
        format!(
            "cannot undo: the directory that held {} no longer exists. Nothing was undone; undo the change that removed it first",
            path.shown()
        ),
    )
}

/// A tree the undo would trash again holds something other than what the change left in it.
pub fn changed_inside(path: &Path) -> ToolError {
    ToolError::new(
        ErrorCode::Conflict,
        format!(
            "{} is not as the change left it: something inside it changed since. Nothing was undone; look at what changed inside it, or leave this change as it is",
            path.shown()
        ),
    )
}

/// An entry is not as the undo was planned on.
pub fn changed(path: &Path) -> ToolError {
    ToolError::new(
        ErrorCode::Conflict,
        format!(
            "{} changed while the undo was being prepared; nothing was undone. Look at it again and retry",
            path.shown()
        ),
    )
}
