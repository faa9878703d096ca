//! Paths: how a string the model gave becomes a checked location, and how that location is
//! acted on without a window for a swapped symlink or directory (../../docs/paths-and-sandbox.md).
//!
//! Outside this layer a directory is a [`Dir`] (lent as a [`BorrowedDir`]), an entry's facts a
//! [`Stat`] and its kind an [`EntryKind`]; OS errors are read through [`os_error`], names as bytes
//! through [`names`]: nothing else names the operating system's types.
//!
//! The pipeline is: [`resolve`] (cwd, `~/`, literal bytes) → [`canonical`] (symlinks resolved,
//! including dangling links and a not-yet-existing tail) → [`sandbox`] (containment by whole
//! components, hidden trash) → [`fsops`] (every open, create, rename and unlink goes through a
//! directory file descriptor opened beneath the allowed root without following a symlink, so
//! anything swapped in after the check is refused, never followed); [`tree_count`] counts what a
//! tree holds before it is removed or replaced; [`trees`] removes and
//! copies whole trees the same way, with [`file_copy`] (holes kept) and [`xattrs`] (extended
//! attributes and ACLs) for what a copy to another file system must carry. [`shown`] is how a
//! name is written in any output (control characters and bytes that are not UTF-8 escaped,
//! reversibly), and [`resolve::prefer_shown_names`] reads a shown name back. [`platform`] is the
//! one place that knows which operating system this is: Linux's fast paths and the portable
//! ways macOS takes, with the same guarantees.

pub mod canonical;
mod dir;
pub mod file_copy;
pub mod fsops;
pub mod io;
mod io_error;
pub mod names;
pub mod os_error;
#[cfg_attr(windows, path = "platform/windows/mod.rs")]
pub mod platform;
pub mod process;
pub mod project;
pub mod resolve;
pub mod sandbox;
pub mod shown;
mod stat;
#[cfg(test)]
pub(crate) mod test_mounts;
#[cfg(test)]
pub(crate) mod testing;
pub mod tree_count;
pub mod trees;
pub mod xattrs;

pub use dir::{AsDir, BorrowedDir, Dir};
pub use io_error::io_error_code;
pub use sandbox::{Sandbox, Target};
pub use shown::Shown;
pub use stat::{EntryKind, FileId, Stat, Version};
