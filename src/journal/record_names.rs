//! The names a journal record holds: how paths are stored (bytes when they are not UTF-8),
//! and the checks every name passes before recovery acts on it (see `record.rs`).

use std::ffi::OsStr;
use std::path::Path;

use crate::paths::fsops;

/// Paths as records store them: JSON text when they are UTF-8 (readable, and all that older
/// records hold), else an array of bytes, since a Linux path is bytes and a record must not fail
/// to be written (or a write go unjournaled) for a name that is not UTF-8.
pub mod path_bytes {
    use std::path::{Path, PathBuf};

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(path: &Path, serializer: S) -> Result<S::Ok, S::Error> {
        match path.to_str() {
            Some(text) => serializer.serialize_str(text),
            None => serializer.collect_seq(path.as_os_str().as_encoded_bytes()),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<PathBuf, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Stored {
            Text(String),
            Bytes(Vec<u8>),
        }
        Ok(match Stored::deserialize(deserializer)? {
            Stored::Text(text) => PathBuf::from(text),
            Stored::Bytes(bytes) => PathBuf::from(crate::paths::names::from_bytes(&bytes)),
        })
    }
}

/// Whether `name` is one plain path component: not empty, not `.` or `..`, no `/`, no NUL.
pub fn is_plain_name(name: &OsStr) -> bool {
    let bytes = name.as_encoded_bytes();
    !bytes.is_empty()
        && bytes != b"."
        && bytes != b".."
        && !bytes.contains(&b'/')
        && !bytes.contains(&0)
}

/// Whether `dir` is an absolute path of plain components (as canonical paths are).
pub fn is_plain_dir(dir: &Path) -> bool {
    let bytes = dir.as_os_str().as_encoded_bytes();
    bytes == b"/"
        || (bytes.starts_with(b"/")
            && bytes[1..]
                .split(|&b| b == b'/')
                .all(|part| is_plain_name(crate::paths::names::from_bytes(part))))
}

/// `Ok` if `dir` is a plain absolute directory path.
pub fn check_dir(dir: &Path) -> Result<(), String> {
    if is_plain_dir(dir) {
        Ok(())
    } else {
        Err(format!("directory {dir:?} is not a plain absolute path"))
    }
}

/// `Ok` if `name` is one plain component.
pub fn check_name(name: &Path) -> Result<(), String> {
    if is_plain_name(name.as_os_str()) {
        Ok(())
    } else {
        Err(format!("name {name:?} is not one plain component"))
    }
}

/// `Ok` if `name` is one plain component and one of our temp names (an atomic write's, a
/// move's copy, a restore's temp root): the only names recovery removes things under.
pub fn check_ours(name: &Path) -> Result<(), String> {
    check_name(name)?;
    let name = name.as_os_str();
    if fsops::is_temp_name(name) || crate::trash::is_restore_temp_name(name) {
        Ok(())
    } else {
        Err(format!("name {name:?} is not one of our temp names"))
    }
}
