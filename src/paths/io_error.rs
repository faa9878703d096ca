//! An OS error met while acting on a path, as a tool reports it: the code and what it means,
//! naming the path in its shown form. Here rather than in `error.rs`, which every module stands
//! on: writing a path is this layer's business ([`super::shown`]).

use std::io;
use std::path::Path;

use super::shown::Shown;
use crate::error::{describe_io, ToolError};

impl ToolError {
    /// Maps an OS error met while acting on `path` to a code and a message naming the path.
    /// `doing` is a short verb phrase such as "read" or "create directory".
    pub fn io(err: &io::Error, doing: &str, path: &Path) -> Self {
        let (code, why) = describe_io(err);
        Self::new(code, format!("cannot {doing} {}: {why}", path.shown()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{libc_codes, ErrorCode};

    /// The code is the one mapping's, and the path is shown as any output shows it.
    #[test]
    fn an_io_error_names_the_path_as_shown() {
        let e = io::Error::from_raw_os_error(libc_codes::EACCES);
        let error = ToolError::io(&e, "read", Path::new("/w/a\nb"));
        assert_eq!(error.code, ErrorCode::OsPermission);
        assert_eq!(
            error.message,
            "cannot read /w/a\\nb: the operating system denied permission; check the file's owner and mode, or use another path"
        );
    }
}
