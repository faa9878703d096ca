//! The error vocabulary of every tool: the documented error codes (../docs/tools.md#error-codes) and a coded, actionable message.

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

    // `ToolError::io`, which names a path in its shown form, and the mapping of OS errors to
    // codes are the paths layer's (`paths/io_error.rs`): only it knows the OS's error numbers.
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {}

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
}
