//! Why a change was not made: the step that failed and how.

use std::ffi::OsString;
use std::io::{self};

use crate::paths::fsops::{RemoveError, ReplaceError};

/// Why a change was not made.
#[derive(Debug)]
pub struct CommitError {
    /// The step (in the order added) that failed.
    pub step: usize,
    pub reason: StepFailure,
}

/// What went wrong with a step.
#[derive(Debug)]
pub enum StepFailure {
    /// The entry was not what was planned on (the message says how: replaced, written to, open
    /// for writing elsewhere); `kept` names a visible copy of something that took its place.
    Changed {
        being_written: bool,
        kept: Option<OsString>,
    },
    Io(io::Error),
}

impl From<ReplaceError> for StepFailure {
    fn from(e: ReplaceError) -> Self {
        match e {
            ReplaceError::Changed {
                kept,
                being_written,
            } => StepFailure::Changed {
                being_written,
                kept,
            },
            ReplaceError::Io(e) => StepFailure::Io(e),
        }
    }
}

impl From<RemoveError> for StepFailure {
    fn from(e: RemoveError) -> Self {
        match e {
            RemoveError::NotExpected { kept } => StepFailure::Changed {
                being_written: false,
                kept,
            },
            RemoveError::Io { error, .. } => StepFailure::Io(error),
        }
    }
}

pub(super) fn changed() -> StepFailure {
    StepFailure::Changed {
        being_written: false,
        kept: None,
    }
}

/// A name taken meanwhile is a change; anything else an I/O error.
pub(super) fn taken(e: io::Error) -> StepFailure {
    if e.kind() == io::ErrorKind::AlreadyExists {
        changed()
    } else {
        StepFailure::Io(e)
    }
}

/// An append that failed partway and was not taken back, because the file also changed
/// meanwhile: whatever part of the bytes went through is left at its end. Carried by the
/// step's `io::Error` (the OS error inside).
#[derive(Debug)]
pub struct LeftAtEnd(pub io::Error);

impl LeftAtEnd {
    /// The OS error of an append left at the file's end, if `e` carries one.
    pub fn of(e: &io::Error) -> Option<&io::Error> {
        e.get_ref()?.downcast_ref::<LeftAtEnd>().map(|left| &left.0)
    }
}

impl std::fmt::Display for LeftAtEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for LeftAtEnd {}
