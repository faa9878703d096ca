//! A failed copy as the model reads it: nothing was copied or replaced, and why.

use std::io;
use std::path::{Path, PathBuf};

use super::make::Copying;
use super::refusals::special;
use crate::call::execute::{CopyFailed, Failure};
use crate::call::plan::Found;
use crate::call::trashing::trash_error;
use crate::error::{ErrorCode, ToolError};
use crate::paths::shown::Shown;
use crate::paths::trees::CopyError;

impl Copying {
    /// The failure of the change as the model reads it (nothing was copied or replaced);
    /// `at_copy`: the copy step failed (else the removal of the old destination).
    pub(super) fn failed(&self, at_copy: bool, failure: Failure) -> ToolError {
        let (src, dst) = (&self.source.path, &self.destination.path);
        let changed = |path: &Path| {
            ToolError::new(
                ErrorCode::Conflict,
                format!(
                    "{} changed while waiting for confirmation; nothing was copied. Look at it again and retry",
                    path.shown()
                ),
            )
        };
        match failure {
            // At the copy step, a name taken is the destination's; anything else the source's.
            Failure::NotAsExpected(Found::Taken) => changed(dst),
            Failure::NotAsExpected(_) if at_copy => changed(src),
            Failure::NotAsExpected(_) | Failure::Changed { .. } => changed(dst),
            Failure::Trash(e) => trash_error(e, "trash", dst),
            Failure::Io(e) => match CopyFailed::of(&e) {
                Some(copy) => self.copy_error(copy),
                None => ToolError::io(&e, "copy to", dst),
            },
            Failure::Invalid(why) => ToolError::io(&io::Error::other(why), "copy", src),
        }
    }

    fn copy_error(&self, e: &CopyError) -> ToolError {
        let src = &self.source.path;
        let inside = |relative: &Path| -> PathBuf {
            if relative.as_os_str().is_empty() {
                src.to_owned()
            } else {
                src.join(relative)
            }
        };
        match e {
            CopyError::Aborted => ToolError::aborted(),
            CopyError::Special(relative) => special(src, &inside(relative)),
            CopyError::Changed(relative) => ToolError::new(
                ErrorCode::Conflict,
                format!(
                    "cannot copy {}: {} changed while it was being copied; nothing was written. Retry once nothing writes to it",
                    src.shown(),
                    inside(relative).shown()
                ),
            ),
            CopyError::Io(e, relative) => {
                let mut error = ToolError::io(e, "copy", &inside(relative));
                error.message.push_str("; nothing was written");
                error
            }
        }
    }
}
