//! The one error type of the trash, with texts a model (or a person) can act on.
//!
//! Work deep inside the archive writer runs behind `std::io::Read`/`Write` adapters owned by
//! `tar` and `flate2`, which can only return `io::Error`. Cancellation and "the original changed
//! under us" therefore travel as an `io::Error` carrying a private [`Signal`] payload and are turned
//! back into [`TrashError::Aborted`] / [`TrashError::Conflict`] by the `From<io::Error>` impl.

use std::collections::HashSet;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use super::hold::ArchiveHold;
use super::observed::Observed;
use crate::error::ErrorCode;
use crate::paths::io_error_code;
use crate::paths::shown::Shown;

/// Why a trash operation did not complete. Whatever the variant, the original entry is untouched
/// unless the message says otherwise, and no temporary file is left behind.
#[derive(Debug)]
pub enum TrashError {
    /// The entry to archive (or the archive to restore) does not exist.
    NotFound,
    /// The original changed while it was being archived or removed; the text says what and where.
    Conflict(String),
    /// The archive is not a valid trash archive (tampered, truncated, foreign); the text says why.
    Corrupt(String),
    /// The restore target already exists.
    AlreadyExists,
    /// The archive named for a restore or an inspection is not directly inside this bucket.
    NotInBucket,
    /// The caller's cancel callback asked to stop.
    Aborted,
    /// The entry (or something inside the tree) is a FIFO, socket or device; the text names it.
    Unsupported(String),
    /// The entry, or something inside the tree, is a mount point (another file system, or a bind
    /// mount): a tree is never trashed across one. The text names it.
    MountPoint(String),
    /// An operating-system error (permissions, disk full, ...).
    Io(io::Error),
    /// A removal stopped after it had removed part of a tree, all of which is in the archive it
    /// names; hand it to [`crate::trash::Bucket::put_back_removed`].
    PartlyRemoved(Box<PartlyRemoved>),
    /// A removal that stopped, as [`crate::trash::Bucket::put_back_removed`] left it: the text says what
    /// could not be removed and whether the entry is whole again or how to get it back; the code
    /// is the cause's.
    Stopped { code: ErrorCode, why: String },
}

impl TrashError {
    /// The error code (../../docs/tools.md#error-codes) of this error: the one mapping, used by the tools' messages.
    pub fn error_code(&self) -> ErrorCode {
        match self {
            TrashError::NotFound => ErrorCode::NotFound,
            TrashError::Conflict(_) => ErrorCode::Conflict,
            TrashError::Corrupt(_) => ErrorCode::TrashCorrupt,
            TrashError::AlreadyExists => ErrorCode::AlreadyExists,
            TrashError::NotInBucket => ErrorCode::PathNotAllowed,
            TrashError::Aborted => ErrorCode::Aborted,
            TrashError::Unsupported(_) => ErrorCode::NotARegularFile,
            TrashError::MountPoint(_) => ErrorCode::DangerousPath,
            TrashError::Io(e) => io_error_code(e),
            TrashError::PartlyRemoved(partly) => partly.error().error_code(),
            TrashError::Stopped { code, .. } => *code,
        }
    }

    pub(crate) fn corrupt(why: impl Into<String>) -> Self {
        TrashError::Corrupt(why.into())
    }
}

impl fmt::Display for TrashError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrashError::NotFound => f.write_str(
                "the entry does not exist (it may have been moved or removed already); \
                 check the path and try again",
            ),
            TrashError::Conflict(why) => write!(
                f,
                "{why}; nothing was removed that is not in the trash. \
                 Retry once nothing else is changing it"
            ),
            TrashError::Corrupt(why) => write!(
                f,
                "the trash archive is corrupt: {why}. Nothing was restored and the archive was \
                 left in place; pick another archive from trash_list"
            ),
            TrashError::AlreadyExists => f.write_str(
                "the restore target already exists; pass overwrite: true to move it to the \
                 trash first, or choose another targetPath",
            ),
            TrashError::NotInBucket => f.write_str(
                "that file is not an archive in this workspace's trash; use trash_list to see \
                 the archives that can be restored",
            ),
            TrashError::Aborted => f.write_str("the operation was cancelled; nothing was changed"),
            TrashError::Unsupported(what) => write!(
                f,
                "{what} is not a regular file, directory or symlink (a FIFO, socket or device); \
                 nothing was trashed. Remove or move that entry first"
            ),
            TrashError::MountPoint(what) => write!(f, "{}; nothing was trashed", mount_point(what)),
            TrashError::Io(e) => write!(f, "{e}"),
            TrashError::PartlyRemoved(partly) => write!(
                f,
                "{} could not be removed ({}); part of {} was removed, and all of it is in the \
                 trash at {}",
                partly.stopped_at().shown(),
                partly.error(),
                partly.original().shown(),
                partly.archive_path().shown()
            ),
            TrashError::Stopped { why, .. } => f.write_str(why),
        }
    }
}

impl std::error::Error for TrashError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TrashError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for TrashError {
    fn from(e: io::Error) -> Self {
        match e.get_ref().and_then(|inner| inner.downcast_ref::<Signal>()) {
            Some(Signal::Aborted) => TrashError::Aborted,
            Some(Signal::Changed(why)) => TrashError::Conflict(why.clone()),
            Some(Signal::Corrupt(why)) => TrashError::Corrupt(why.clone()),
            None if e.kind() == io::ErrorKind::NotFound => TrashError::NotFound,
            None => TrashError::Io(e),
        }
    }
}

/// A non-I/O outcome smuggled through `io::Error` out of `Read`/`Write` adapters.
#[derive(Debug)]
pub(crate) enum Signal {
    /// The cancel callback returned true.
    Aborted,
    /// The original changed while being read; the text says what.
    Changed(String),
    /// An archive being read is damaged; the text says how.
    Corrupt(String),
}

impl Signal {
    /// Wrap this signal in an `io::Error` so it can cross `Read`/`Write` boundaries.
    pub(crate) fn into_io(self) -> io::Error {
        io::Error::other(self)
    }
}

impl fmt::Display for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Signal::Aborted => f.write_str("cancelled"),
            Signal::Changed(why) | Signal::Corrupt(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for Signal {}

/// The conflict text for an entry that changed while we worked on it.
pub(crate) fn changed(path: &std::path::Path, what: &str) -> TrashError {
    TrashError::Conflict(format!("{} {what}", path.shown()))
}

/// `io::Error` form of [`changed`], for use inside `Read` adapters.
pub(crate) fn changed_io(path: &std::path::Path, what: &str) -> io::Error {
    Signal::Changed(format!("{} {what}", path.shown())).into_io()
}

/// What a mount point in a tree to remove means, and what to do: for [`TrashError::MountPoint`].
pub fn mount_point(what: &str) -> String {
    format!(
        "{what} is a mount point (another file system, or a bind mount, is mounted there), and a \
         tree is never removed across one. Unmount it first, or remove the entries around it"
    )
}

/// A removal that stopped after it had removed part of a tree: what was archived, what was
/// removed, and why it stopped. [`crate::trash::Bucket::put_back_removed`] puts the removed part
/// back.
#[derive(Debug)]
pub struct PartlyRemoved {
    pub(crate) archive: PathBuf,
    pub(crate) hold: ArchiveHold,
    /// The removed entry's absolute path, for messages.
    pub(crate) original: PathBuf,
    /// The directory holding it, for messages.
    pub(crate) base: PathBuf,
    pub(crate) observed: Vec<Observed>,
    pub(crate) removed: HashSet<PathBuf>,
    /// The entry the removal stopped at (its `rel`).
    pub(crate) stopped_at: PathBuf,
    pub(crate) error: TrashError,
}

impl PartlyRemoved {
    /// The archive, which holds all of the entry as it was.
    pub fn archive_path(&self) -> &Path {
        &self.archive
    }

    /// Why the removal stopped.
    pub fn error(&self) -> &TrashError {
        &self.error
    }

    /// Absolute path of the entry the removal stopped at.
    pub fn stopped_at(&self) -> PathBuf {
        self.base.join(&self.stopped_at)
    }

    /// Absolute path of the entry that was being removed.
    pub fn original(&self) -> &Path {
        &self.original
    }
}
