//! What the rest of the crate knows of an entry without naming the operating system's types:
//! its [`EntryKind`] (the one enum for it: the trash's metadata, the history's entry facts and
//! every `lstat` use it).

use rustix::fs::{FileType, Stat as OsStat};
use serde::{Deserialize, Serialize};

/// The kind of a directory entry, from `lstat` (symlinks are never followed).
///
/// Stored as `"file"`, `"directory"` or `"symlink"` (an archive's `metadata.json`, a history
/// record's entry facts); [`EntryKind::Special`] never reaches a stored form: the trash and the
/// history refuse such entries, and reading one back fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory (in the trash: a directory and everything beneath it).
    Directory,
    /// A symbolic link, kept as a link (its target is never followed).
    Symlink,
    /// FIFO, socket or device: refused by every tool.
    #[serde(skip)]
    Special,
}

impl EntryKind {
    /// The kind a `stat` result describes.
    // `mode_t` is u16 on macOS.
    #[allow(clippy::unnecessary_cast)]
    pub(crate) fn of(stat: &OsStat) -> Self {
        Self::of_mode(stat.st_mode as u32)
    }

    /// The kind of a raw `st_mode`.
    pub fn of_mode(mode: u32) -> Self {
        match FileType::from_raw_mode(mode as _) {
            FileType::RegularFile => Self::File,
            FileType::Directory => Self::Directory,
            FileType::Symlink => Self::Symlink,
            _ => Self::Special,
        }
    }

    /// The word stored and used in messages: `file`, `directory`, `symlink` (`special` for
    /// what is never stored).
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::File => "file",
            EntryKind::Directory => "directory",
            EntryKind::Symlink => "symlink",
            EntryKind::Special => "special",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stored forms are the ones the trash's metadata and the history's records have always
    /// had, and a special file has none.
    #[test]
    fn entry_kinds_are_stored_as_before() {
        for (kind, word) in [
            (EntryKind::File, "file"),
            (EntryKind::Directory, "directory"),
            (EntryKind::Symlink, "symlink"),
        ] {
            assert_eq!(serde_json::to_string(&kind).unwrap(), format!("\"{word}\""));
            assert_eq!(kind.as_str(), word);
            let back: EntryKind = serde_json::from_str(&format!("\"{word}\"")).unwrap();
            assert_eq!(back, kind);
        }
        assert!(serde_json::to_string(&EntryKind::Special).is_err());
        assert!(serde_json::from_str::<EntryKind>("\"special\"").is_err());
        assert!(serde_json::from_str::<EntryKind>("\"File\"").is_err());
    }
}
