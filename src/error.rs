//! The error vocabulary of every tool: the documented error codes (../docs/tools.md#error-codes) and a coded, actionable message.

use std::io;

use serde::Serialize;

/// The `ToolResult.code` values (../docs/tools.md#error-codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    InvalidArguments,
    NotFound,
    NotAFile,
    NotADirectory,
    NotARegularFile,
    NotEmpty,
    AlreadyExists,
    PathNotAllowed,
    ReadOnly,
    ToolDisabled,
    UnknownTool,
    TooLarge,
    NoMatch,
    MultipleMatches,
    IdenticalStrings,
    BinaryFile,
    Encoding,
    Conflict,
    DangerousPath,
    StackOverflow,
    TrashCorrupt,
    Aborted,
    OsPermission,
    IoError,
    /// `write_file` over a file the model has not seen as it is now (../docs/tools.md#stale-views).
    Stale,
}

/// A tool-level failure: the code a host can branch on and the message a model can act on
/// (the fact first, then what to do next).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    pub code: ErrorCode,
    pub message: String,
}

impl ToolError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidArguments, message)
    }

    pub fn not_allowed(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::PathNotAllowed, message)
    }

    pub fn aborted() -> Self {
        Self::new(
            ErrorCode::Aborted,
            "The call was aborted before any change was made.",
        )
    }

    // `ToolError::io`, which names a path in its shown form, is the paths layer's
    // (`paths/io_error.rs`).
}

/// The code of an OS error (the one mapping from errno to [`ErrorCode`]).
pub fn io_error_code(err: &io::Error) -> ErrorCode {
    describe_io(err).0
}

/// The code of an OS error and what it means for the model, with what to do next.
pub(crate) fn describe_io(err: &io::Error) -> (ErrorCode, String) {
    // A refusal that explains itself (a data directory that is not private to the user).
    if err.kind() == io::ErrorKind::PermissionDenied && err.get_ref().is_some() {
        return (ErrorCode::OsPermission, err.to_string());
    }
    let (code, why) = match err.raw_os_error() {
        Some(libc_codes::ENOENT) => (ErrorCode::NotFound, "it (or a parent directory) does not exist"),
        Some(libc_codes::EACCES) | Some(libc_codes::EPERM) => (
            ErrorCode::OsPermission,
            "the operating system denied permission; check the file's owner and mode, or use another path",
        ),
        Some(libc_codes::ENOTDIR) => (ErrorCode::NotADirectory, "a component of the path is not a directory"),
        Some(libc_codes::EEXIST) => (ErrorCode::AlreadyExists, "it already exists"),
        Some(libc_codes::ENOTEMPTY) => (ErrorCode::NotEmpty, "the directory is not empty"),
        Some(libc_codes::ELOOP) | Some(libc_codes::EXDEV) => (
            ErrorCode::PathNotAllowed,
            "the path changed into a symbolic link or left the allowed directories while it was being used; nothing was done",
        ),
        Some(libc_codes::EROFS) => (
            ErrorCode::OsPermission,
            "the file system is read-only; choose a path on a writable file system",
        ),
        Some(libc_codes::ENOSPC) => (ErrorCode::IoError, "no space left on the device; free some space and retry"),
        _ if err.kind() == io::ErrorKind::PermissionDenied => (
            ErrorCode::OsPermission,
            "the operating system denied permission; check the file's owner and mode, or use another path",
        ),
        _ => return (ErrorCode::IoError, err.to_string()),
    };
    (code, why.to_owned())
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {}

/// The few errno values we branch on, named (rustix exposes them as `Errno`, but
/// `std::io::Error` carries the raw number, which differs between Linux and macOS).
pub(crate) mod libc_codes {
    use rustix::io::Errno;

    pub const EPERM: i32 = Errno::PERM.raw_os_error();
    pub const ENXIO: i32 = Errno::NXIO.raw_os_error();
    pub const ENOENT: i32 = Errno::NOENT.raw_os_error();
    pub const EACCES: i32 = Errno::ACCESS.raw_os_error();
    pub const EEXIST: i32 = Errno::EXIST.raw_os_error();
    pub const EXDEV: i32 = Errno::XDEV.raw_os_error();
    pub const ENOTDIR: i32 = Errno::NOTDIR.raw_os_error();
    pub const ENOSPC: i32 = Errno::NOSPC.raw_os_error();
    pub const EROFS: i32 = Errno::ROFS.raw_os_error();
    pub const ELOOP: i32 = Errno::LOOP.raw_os_error();
    pub const ENOTEMPTY: i32 = Errno::NOTEMPTY.raw_os_error();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_serialise_as_the_spec_spells_them() {
        let codes = [
            (ErrorCode::NotAFile, "NOT_A_FILE"),
            (ErrorCode::NotARegularFile, "NOT_A_REGULAR_FILE"),
            (ErrorCode::IoError, "IO_ERROR"),
            (ErrorCode::OsPermission, "OS_PERMISSION"),
            (ErrorCode::PathNotAllowed, "PATH_NOT_ALLOWED"),
            (ErrorCode::TrashCorrupt, "TRASH_CORRUPT"),
            (ErrorCode::Stale, "STALE"),
        ];
        for (code, text) in codes {
            assert_eq!(serde_json::to_value(code).unwrap(), text);
        }
    }

    #[test]
    fn io_errors_map_to_codes() {
        let e = io::Error::from_raw_os_error(libc_codes::ENOENT);
        assert_eq!(io_error_code(&e), ErrorCode::NotFound);
        let e = io::Error::from_raw_os_error(libc_codes::EACCES);
        assert_eq!(io_error_code(&e), ErrorCode::OsPermission);
        let e = io::Error::from_raw_os_error(libc_codes::ELOOP);
        assert_eq!(io_error_code(&e), ErrorCode::PathNotAllowed);
    }
}
