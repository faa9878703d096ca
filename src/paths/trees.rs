//! Whole trees through descriptors: removing one (permanent `remove_dir`, our own temp trees, the
//! source of a move between file systems) and copying one to another file system (`move_file`,
//! when `rename` cannot cross). Neither ever follows a symlink, a removal never crosses into
//! another mount, and both keep their place in a
//! stack of open directories rather than on the call stack, so a deep tree cannot overflow it.
//!
//! Removal is `remove`; the copy is `copy`, with what it read of its source in `copied`
//! and the metadata it gives each entry in `metadata`.

mod copied;
mod copy;
mod metadata;
mod remove;
#[cfg(all(test, unix))]
mod tests;

pub use copied::{unchanged_since_copied, Copied, CopyCounts};
pub use copy::{copy_tree_at, CopyError};
pub use remove::{remove_tree_at, remove_tree_if, MountPointInside, Removal};
