//! What follows a change's commit point: its sequel (performed here or left to recovery),
//! what recovery does besides putting entries back, and what the clean-up could not remove.

use std::ffi::OsStr;
use std::io;

use serde_json::Value;

/// What recovery does besides putting entries back or finishing them.
pub trait Aftermath {
    /// Performs the sequel of a change recovery finishes (see the module docs).
    fn perform(&self, sequel: &Value) -> io::Result<()>;
    /// Discards the trash archive `name` made for a change recovery undoes.
    fn discard_archive(&self, name: &OsStr);
}

/// A performer of sequels alone discards no archive (for journals of changes that trash
/// nothing, as in tests).
impl<F: Fn(&Value) -> io::Result<()>> Aftermath for F {
    fn perform(&self, sequel: &Value) -> io::Result<()> {
        self(sequel)
    }

    fn discard_archive(&self, _name: &OsStr) {}
}

/// Whether a change's sequel was performed by [`Commit::apply_then`](super::Commit::apply_then).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sequel {
    /// The change had none.
    None,
    /// Performed; the record is gone.
    Performed,
    /// Performing it failed: the record stays, and the next `Workspace`'s recovery performs it.
    LeftToRecovery,
}

/// What the clean-up after the commit point could not remove of an entry a removal step set
/// aside (an entry the system refused to remove, a mount point met inside): the change stands,
/// and what is left is back at the entry's name if that was free.
#[derive(Debug)]
pub struct LeftInPlace {
    /// The step (in the order added).
    pub step: usize,
    /// The first removal that failed ([`MountPointInside`](crate::paths::trees::MountPointInside) for a mount point, by its
    /// path from the step's directory, beginning with the temp name the entry was set aside as).
    pub error: io::Error,
}
