//! What went wrong with a plan: the step that was refused or failed, and why (nothing of the
//! plan was made).

use std::ffi::OsString;
use std::io;

use crate::call::plan::Found;
use crate::journal::commit::{CommitError, StepFailure};
use crate::trash::TrashError;

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
