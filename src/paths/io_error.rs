//! An OS error met while acting on a path, as a tool reports it: the code and what it means,
//! naming the path in its shown form. Here rather than in `error.rs`, which every module stands
//! on: writing a path is this layer's business ([`super::shown`]), and so is knowing what an
//! OS error means ([`super::os_error`]).

use std::io;
use std::path::Path;

use super::os_error::{cause, Cause};
use super::shown::Shown;
use crate::error::{ErrorCode, ToolError};

impl ToolError {
    /// Maps an OS error met while acting on `path` to a code and a message naming the path.
    /// `doing` is a short verb phrase such as "read" or "create directory".
    pub fn io(err: &io::Error, doing: &str, path: &Path) -> Self {
        let (code, why) = describe_io(err);
        Self::new(code, format!("cannot {doing} {}: {why}", path.shown()))
    }
}

/// The code of an OS error (the one mapping from an OS error to [`ErrorCode`]).
pub fn io_error_code(err: &io::Error) -> ErrorCode {
    describe_io(err).0
}

/// The code of an OS error and what it means for the model, with what to do next.
fn describe_io(err: &io::Error) -> (ErrorCode, String) {
    // A refusal that explains itself (a data directory that is not private to the user).
    if err.kind() == io::ErrorKind::PermissionDenied && err.get_ref().is_some() {
        return (ErrorCode::OsPermission, err.to_string());
    }
    let (code, why) = match cause(err) {
        Cause::NotFound => (ErrorCode::NotFound, "it (or a parent directory) does not exist"),
        Cause::Permission => (
            ErrorCode::OsPermission,
            "the operating system denied permission; check the file's owner and mode, or use another path",
        ),
        Cause::NotADirectory => (ErrorCode::NotADirectory, "a component of the path is not a directory"),
        Cause::Exists => (ErrorCode::AlreadyExists, "it already exists"),
        Cause::NotEmpty => (ErrorCode::NotEmpty, "the directory is not empty"),
        Cause::Loop | Cause::CrossDevice => (
            ErrorCode::PathNotAllowed,
            "the path changed into a symbolic link or left the allowed directories while it was being used; nothing was done",
        ),
        Cause::ReadOnly => (
            ErrorCode::OsPermission,
            "the file system is read-only; choose a path on a writable file system",
        ),
        Cause::NoSpace => (ErrorCode::IoError, "no space left on the device; free some space and retry"),
        #[cfg(windows)]
        Cause::InUse => (
            ErrorCode::OsPermission,
            "it is open in another program that does not let it be changed; close it there and retry",
        ),
        _ if err.kind() == io::ErrorKind::PermissionDenied => (
            ErrorCode::OsPermission,
            "the operating system denied permission; check the file's owner and mode, or use another path",
        ),
        _ => return (ErrorCode::IoError, err.to_string()),
    };
    (code, why.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::os_error::error;

    /// The code is the one mapping's, and the path is shown as any output shows it.
    #[test]
    fn an_io_error_names_the_path_as_shown() {
        let e = error(Cause::Permission);
        let error = ToolError::io(&e, "read", Path::new("/w/a\nb"));
        assert_eq!(error.code, ErrorCode::OsPermission);
        assert_eq!(
            error.message,
            "cannot read /w/a\\nb: the operating system denied permission; check the file's owner and mode, or use another path"
        );
    }

    #[test]
    fn io_errors_map_to_codes() {
        assert_eq!(io_error_code(&error(Cause::NotFound)), ErrorCode::NotFound);
        assert_eq!(
            io_error_code(&error(Cause::Permission)),
            ErrorCode::OsPermission
        );
        assert_eq!(
            io_error_code(&error(Cause::Loop)),
            ErrorCode::PathNotAllowed
        );
    }
}
