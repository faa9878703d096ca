//! The names a journal record holds: how paths are stored (bytes when they are not UTF-8),
//! and the checks every name passes before recovery acts on it (see `record.rs`).

use std::fmt;
use std::path::{Component, Path, PathBuf};

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

/// Whether `dir` is an absolute path of plain components in its normal form, as canonical paths
/// are: `/a/b`; on Windows `C:\a\b` or `\\server\share\a` (a `/` there is not normal).
pub fn is_plain_dir(dir: &Path) -> bool {
    let mut components = dir.components();
    let anchored = match components.next() {
        Some(Component::RootDir) => cfg!(unix),
        Some(Component::Prefix(_)) => {
            cfg!(windows) && components.next() == Some(Component::RootDir)
        }
        _ => false,
    };
    // `components` passes over a `.` inside and repeated separators: the path must be what its
    // components make again.
    anchored
        && components
            .all(|c| matches!(c, Component::Normal(part) if fsops::is_single_component(part)))
        && dir.components().collect::<PathBuf>().as_os_str() == dir.as_os_str()
}

/// A path or name in a record that recovery must never act on (see `record.rs`); its text says
/// which one and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefusedName {
    /// A directory that is not an absolute path of plain components.
    Dir(PathBuf),
    /// An entry's name that is not one plain component.
    Name(PathBuf),
    /// A temp name that is not one of ours.
    NotOurs(PathBuf),
    /// An append's file path that is not an absolute path of plain components below `/`.
    FilePath(PathBuf),
}

impl fmt::Display for RefusedName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RefusedName::Dir(dir) => write!(f, "directory {dir:?} is not a plain absolute path"),
            RefusedName::Name(name) => write!(f, "name {name:?} is not one plain component"),
            RefusedName::NotOurs(name) => write!(f, "name {name:?} is not one of our temp names"),
            RefusedName::FilePath(path) => write!(f, "path {path:?} is not a plain file path"),
        }
    }
}

impl std::error::Error for RefusedName {}

/// `Ok` if `dir` is a plain absolute directory path.
pub fn check_dir(dir: &Path) -> Result<(), RefusedName> {
    if is_plain_dir(dir) {
        Ok(())
    } else {
        Err(RefusedName::Dir(dir.to_owned()))
    }
}

/// `Ok` if `name` is one plain component.
pub fn check_name(name: &Path) -> Result<(), RefusedName> {
    if fsops::is_single_component(name.as_os_str()) {
        Ok(())
    } else {
        Err(RefusedName::Name(name.to_owned()))
    }
}

/// `Ok` if `name` is one plain component and one of our temp names (an atomic write's, a
/// move's copy, a restore's temp root): the only names recovery removes things under.
pub fn check_ours(name: &Path) -> Result<(), RefusedName> {
    check_name(name)?;
    let plain = name.as_os_str();
    if fsops::is_temp_name(plain) || crate::trash::is_restore_temp_name(plain) {
        Ok(())
    } else {
        Err(RefusedName::NotOurs(name.to_owned()))
    }
}

/// `Ok` if `path` is a file's absolute path of plain components (not a root itself).
pub fn check_file_path(path: &Path) -> Result<(), RefusedName> {
    if is_plain_dir(path) && path.parent().is_some() {
        Ok(())
    } else {
        Err(RefusedName::FilePath(path.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The texts say which name and why, as they did when they were plain strings.
    #[cfg(unix)]
    #[test]
    fn a_refused_name_says_which_and_why() {
        let refusals = [
            (
                check_dir(Path::new("a/b")),
                r#"directory "a/b" is not a plain absolute path"#,
            ),
            (
                check_dir(Path::new("/a/../b")),
                r#"directory "/a/../b" is not a plain absolute path"#,
            ),
            (
                check_name(Path::new("a/b")),
                r#"name "a/b" is not one plain component"#,
            ),
            (
                check_ours(Path::new("..")),
                r#"name ".." is not one plain component"#,
            ),
            (
                check_ours(Path::new("notes.txt")),
                r#"name "notes.txt" is not one of our temp names"#,
            ),
            (
                check_file_path(Path::new("/")),
                r#"path "/" is not a plain file path"#,
            ),
            (
                check_file_path(Path::new("f.txt")),
                r#"path "f.txt" is not a plain file path"#,
            ),
        ];
        for (refused, text) in refusals {
            assert_eq!(refused.unwrap_err().to_string(), text);
        }
        assert_eq!(check_dir(Path::new("/a/b")), Ok(()));
        assert_eq!(
            check_ours(Path::new(".f.txt.1.2.agent-fs-tools.tmp")),
            Ok(())
        );
        assert_eq!(check_file_path(Path::new("/a/f.txt")), Ok(()));
        for not_normal in ["/a/./b", "/a//b", "/a/b/", "//a"] {
            assert!(check_dir(Path::new(not_normal)).is_err(), "{not_normal}");
        }
    }

    /// Windows: a drive or share, then plain components, `\` only.
    #[cfg(windows)]
    #[test]
    fn windows_paths_are_plain_from_their_drive_or_share() {
        for plain in [r"C:\", r"C:\a\b", r"\\server\share\a"] {
            assert_eq!(check_dir(Path::new(plain)), Ok(()), "{plain}");
        }
        for not_plain in [
            r"a\b",
            r"\a\b",
            r"C:a",
            "C:/a",
            r"C:\a\..\b",
            r"C:\a\.\b",
            "/a/b",
        ] {
            assert!(check_dir(Path::new(not_plain)).is_err(), "{not_plain}");
        }
        assert_eq!(check_file_path(Path::new(r"C:\a\f.txt")), Ok(()));
        assert!(check_file_path(Path::new(r"C:\")).is_err());
        assert!(check_name(Path::new(r"a\b")).is_err());
    }
}
