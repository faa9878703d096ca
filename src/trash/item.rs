//! What the caller hands the trash: who is acting, and which entry.

use std::ffi::OsStr;
use std::io;
use std::path::Path;

use super::metadata::is_safe_relative;

use crate::paths::BorrowedDir;

/// Who trashes: recorded in every archive's metadata and (shortened) in its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The host's session id.
    pub session_id: String,
    /// The host's run id.
    pub run_id: String,
    /// The agent's name.
    pub agent_name: String,
}

/// The entry to archive: `name` inside the directory `parent`, which the caller opened
/// race-free and checked. The trash touches the entry only through `parent`.
#[derive(Debug, Clone, Copy)]
pub struct TrashItem<'a> {
    /// The already-checked directory holding the entry.
    pub parent: BorrowedDir<'a>,
    /// The entry's name inside `parent` (one component).
    pub name: &'a OsStr,
    /// Absolute path of the entry (canonical parent + name), recorded in the metadata.
    pub original_path: &'a Path,
    /// Where the content goes inside the archive; see [`super::archive_relative_path`].
    pub relative_path: &'a str,
}

impl TrashItem<'_> {
    /// Reject a name that is not one plain component, or an unsafe relative path.
    pub(crate) fn validate(&self) -> io::Result<()> {
        if !is_single_component(self.name) {
            return Err(invalid(format!(
                "{:?} is not a single file name",
                self.name
            )));
        }
        if !is_safe_relative(self.relative_path) {
            return Err(invalid(format!(
                "{:?} is not a plain relative path",
                self.relative_path
            )));
        }
        Ok(())
    }

    /// The directory the original lived in, for messages about entries beneath it.
    pub(crate) fn display_dir(&self) -> &Path {
        self.original_path.parent().unwrap_or(Path::new("/"))
    }
}

/// One plain path component: not empty, no `/` or NUL, not `.` or `..`.
pub(crate) fn is_single_component(name: &OsStr) -> bool {
    crate::paths::fsops::is_single_component(name)
}

/// An `InvalidInput` I/O error with `why`.
pub(crate) fn invalid(why: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, why)
}
