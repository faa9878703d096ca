//! What the tools that put new content in a file through the executor share (write_file,
//! edit_file): the file as its step expects it, checked once more after "yes", and a failed
//! put in their words.

use std::ffi::OsStr;
use std::io;

use super::files;
use crate::call::execute::Failure;
use crate::call::plan::Expect;
use crate::call::trashing::trash_error;
use crate::error::ToolError;
use crate::hashing::sha256_reader;
use crate::paths::fsops;
use crate::paths::{AsDir, Dir};
use crate::paths::{Stat, Target};

/// The file `name` in `parent` as its put step expects it, if it is still the one read when
/// the change was planned (`planned`): the same file, with the bytes read (`read`, hashing to
/// `sha256`), or — one too large to hold (`read` is `None`) — the same size and times. The
/// step gets the file's stat now and the SHA-256 of its content, which the journal checks
/// again as the step is applied. `CONFLICT` ("changed while waiting for confirmation")
/// otherwise.
pub fn expect_as_planned(
    parent: &Dir,
    name: &OsStr,
    target: &Target,
    planned: &Stat,
    read: Option<(&[u8], &str)>,
) -> Result<Expect, ToolError> {
    let path = &target.path;
    let changed = || files::changed_since_planned(path);
    let mut file = match fsops::open_for_read(parent.as_dir(), name) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(changed()),
        Err(e) => return Err(ToolError::io(&e, "check", path)),
    };
    let now = fsops::fstat(&file).map_err(|e| ToolError::io(&e, "check", path))?;
    if now.id() != planned.id() {
        return Err(changed());
    }
    let sha256 = match read {
        Some((bytes, sha256)) => {
            let found = files::read_at_most(&mut file, bytes.len() as u64, "check", path)?;
            if found.as_deref() != Some(bytes) {
                return Err(changed());
            }
            sha256.to_owned()
        }
        None => {
            if !files::same_version(planned, &now) {
                return Err(changed());
            }
            sha256_reader(&mut file).map_err(|e| ToolError::io(&e, "check", path))?
        }
    };
    Ok(Expect::File {
        stat: now,
        sha256,
        bytes: None,
    })
}

/// A put that failed, as the model reads it (nothing was written): what it found instead is a
/// `CONFLICT` in the write's words; an OS error is the write's, or `opening`'s
/// ("cannot <opening> <path>: …") when the file's directory cannot be opened (or made) now.
pub fn failed(target: &Target, failure: Failure, opening: &str) -> ToolError {
    let path = &target.path;
    match failure {
        Failure::NotAsExpected(_) => files::changed_since_planned(path),
        Failure::Changed {
            being_written,
            kept,
        } => files::write_conflict(target, being_written, kept),
        Failure::Trash(e) => trash_error(e, "trash", path),
        // Directories made for the put are gone again: one that cannot be opened now is what
        // failed.
        Failure::Io(e) if files::open_parent(target, opening).is_err() => {
            ToolError::io(&e, opening, path)
        }
        Failure::Io(e) => ToolError::io(&e, "write", path),
        Failure::Invalid(why) => ToolError::io(&io::Error::other(why), "write", path),
    }
}
