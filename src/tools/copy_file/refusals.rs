//! The refusals of `copy_file` worded for the model: a copy onto itself or into itself, of a
//! FIFO, socket or device, or onto an existing directory it most likely meant to copy into.

use std::path::Path;

use crate::error::{ErrorCode, ToolError};
use crate::paths::shown::Shown;
use crate::paths::Target;

/// Refuses a copy whose destination is the source, or inside it (`tool` is the host's name of
/// `copy_file`).
pub(super) fn same_or_inside(
    tool: &str,
    source: &Target,
    destination: &Target,
) -> Result<(), ToolError> {
    if destination.path == source.path {
        return Err(ToolError::invalid(format!(
            "{}: invalid arguments: source and destination are the same path ({}); nothing to copy. Give the path of the copy as destination",
            tool,
            destination.path.shown()
        )));
    }
    if destination.path.starts_with(&source.path) {
        return Err(ToolError::invalid(format!(
            "{}: invalid arguments: destination {} is inside the source; a directory cannot be copied into itself. Choose a destination outside the source",
            tool,
            destination.path.shown()
        )));
    }
    Ok(())
}

/// A FIFO, socket or device at `entry` (the source itself, or inside it).
pub(super) fn special(source: &Path, entry: &Path) -> ToolError {
    let what = if entry == source {
        format!("{} is", source.shown())
    } else {
        format!("{} holds {}, which is", source.shown(), entry.shown())
    };
    ToolError::new(
        ErrorCode::NotARegularFile,
        format!(
            "cannot copy {}: {what} a FIFO, socket or device, which cannot be copied; nothing was written. Copy the regular files and directories around it instead",
            source.shown()
        ),
    )
}

/// A copy onto an existing directory without `overwrite`: the model most likely meant to copy
/// into it, which is not what `destination` means (see `move_file`'s twin).
pub(super) fn onto_a_directory(destination: &Path, given: &str, source: &Path) -> ToolError {
    let name = source
        .file_name()
        .map(|n| Path::new(n).shown().into_owned())
        .unwrap_or_default();
    let inside = format!("{}/{name}", given.trim_end_matches('/'));
    let inside = serde_json::to_string(&crate::paths::shown::echo(&inside)).unwrap_or_default();
    ToolError::new(
        ErrorCode::AlreadyExists,
        format!(
            "{} already exists and is a directory. destination is the path of the copy, not a directory to copy into: to copy into that directory, give destination {inside}. overwrite: true would replace the entire directory and everything in it (it goes to the trash)",
            destination.shown()
        ),
    )
}
