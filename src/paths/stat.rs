//! What the rest of the crate knows of an entry without naming the operating system's types:
//! its [`Stat`] (what `lstat`/`fstat` said) and its [`EntryKind`] (the one enum for it: the
//! trash's metadata, the history's entry facts and every `lstat` use it).

#[cfg(unix)]
use rustix::fs::Stat as OsStat;
use serde::{Deserialize, Serialize};

/// The kind bits of an `st_mode` (the same numbers on every Unix; Windows' [`Stat`] is made
/// with them too).
const S_IFMT: u32 = 0o170_000;
const S_IFREG: u32 = 0o100_000;
const S_IFDIR: u32 = 0o040_000;
const S_IFLNK: u32 = 0o120_000;

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

/// Which entry it is, whatever its name: the device it is on and its number there (a hard link
/// is the same entry under another name). A record that keeps one (flattened) stores `dev` and
/// `ino` as fields of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct FileId {
    pub dev: u64,
    pub ino: u64,
}

/// What `lstat` or `fstat` said of an entry, in the same units on every platform.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    /// The device the entry is on; with `ino`, which entry it is, whatever its name.
    pub dev: u64,
    pub ino: u64,
    /// The whole `st_mode`: the kind and the permission bits.
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    /// Bytes (a symlink: its target's length).
    pub size: u64,
    /// 512-byte blocks allocated.
    pub blocks: u64,
    /// How many names (hard links) the entry has.
    pub nlink: u64,
    /// Seconds and nanoseconds since the epoch.
    pub atime: (i64, u32),
    pub mtime: (i64, u32),
    pub ctime: (i64, u32),
}

impl Stat {
    /// The operating system's `stat` result, in these units.
    // `stat`'s field types differ between platforms (macOS: `dev_t` i32, `mode_t` u16,
    // `nlink_t` u16; 64-bit Arm Linux: `nlink_t` u32).
    #[allow(clippy::unnecessary_cast)]
    #[cfg(unix)]
    pub(crate) fn of(stat: &OsStat) -> Self {
        Stat {
            dev: stat.st_dev as u64,
            ino: stat.st_ino as u64,
            mode: stat.st_mode as u32,
            uid: stat.st_uid,
            gid: stat.st_gid,
            size: stat.st_size as u64,
            blocks: stat.st_blocks as u64,
            nlink: stat.st_nlink as u64,
            atime: (stat.st_atime as i64, stat.st_atime_nsec as u32),
            mtime: (stat.st_mtime as i64, stat.st_mtime_nsec as u32),
            ctime: (stat.st_ctime as i64, stat.st_ctime_nsec as u32),
        }
    }

    /// The entry's kind.
    pub fn kind(&self) -> EntryKind {
        EntryKind::of_mode(self.mode)
    }

    /// Permission bits only.
    pub fn permissions(&self) -> u32 {
        self.mode & 0o7777
    }

    /// Which entry it is, whatever its name.
    pub fn id(&self) -> FileId {
        FileId {
            dev: self.dev,
            ino: self.ino,
        }
    }

    /// [`Stat::id`] as a pair (device, inode).
    pub fn identity(&self) -> (u64, u64) {
        (self.dev, self.ino)
    }

    /// Which entry, and which version of it ([`Version`]).
    pub fn version(&self) -> Version {
        Version {
            dev: self.dev,
            ino: self.ino,
            size: self.size,
            mtime: self.mtime,
        }
    }
}

/// Which entry, and which version of it: what tells an entry from any other, also across a
/// rename (which keeps all of these) and a freed inode number given to a new file (which has
/// its own size and times). Stored in journal records as `{ dev, ino, size, mtime }`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Version {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime: (i64, u32),
}

impl Version {
    /// Which entry it is.
    pub fn id(&self) -> FileId {
        FileId {
            dev: self.dev,
            ino: self.ino,
        }
    }

    /// Whether `stat` is this entry as it was. A directory is known by its device and inode
    /// alone: its size and times change with its entries.
    pub fn is(&self, stat: &Stat) -> bool {
        if stat.kind() == EntryKind::Directory {
            stat.identity() == (self.dev, self.ino)
        } else {
            stat.version() == *self
        }
    }
}

// Unix only: on Windows the standard library's metadata has no stable file id, so identity comes
// from a handle (`fsops::fstat`).
#[cfg(unix)]
impl From<&std::fs::Metadata> for Stat {
    /// What the standard library's metadata (`stat` or `lstat`) says, in these units.
    fn from(meta: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        // Nanoseconds are below 10⁹ on every platform.
        let nanos = |n: i64| n as u32;
        Stat {
            dev: meta.dev(),
            ino: meta.ino(),
            mode: meta.mode(),
            uid: meta.uid(),
            gid: meta.gid(),
            size: meta.size(),
            blocks: meta.blocks(),
            nlink: meta.nlink(),
            atime: (meta.atime(), nanos(meta.atime_nsec())),
            mtime: (meta.mtime(), nanos(meta.mtime_nsec())),
            ctime: (meta.ctime(), nanos(meta.ctime_nsec())),
        }
    }
}

impl EntryKind {
    /// The kind a `stat` result describes.
    pub fn of(stat: &Stat) -> Self {
        stat.kind()
    }

    /// The kind of a raw `st_mode`.
    pub fn of_mode(mode: u32) -> Self {
        match mode & S_IFMT {
            S_IFREG => Self::File,
            S_IFDIR => Self::Directory,
            S_IFLNK => Self::Symlink,
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

    /// The kind bits are the system's own, so every `st_mode` reads as before.
    #[cfg(any(target_os = "linux", target_os = "macos"))]
    #[test]
    #[allow(clippy::unnecessary_cast)]
    fn kind_bits_are_the_systems() {
        assert_eq!(S_IFMT, libc::S_IFMT as u32);
        assert_eq!(S_IFREG, libc::S_IFREG as u32);
        assert_eq!(S_IFDIR, libc::S_IFDIR as u32);
        assert_eq!(S_IFLNK, libc::S_IFLNK as u32);
        assert_eq!(
            EntryKind::of_mode(libc::S_IFIFO as u32 | 0o644),
            EntryKind::Special
        );
        assert_eq!(
            EntryKind::of_mode(libc::S_IFSOCK as u32),
            EntryKind::Special
        );
    }

    /// A version is stored as the journal's records have always stored an entry's identity.
    #[test]
    fn a_version_is_stored_as_before() {
        let version = Version {
            dev: 1,
            ino: 2,
            size: 3,
            mtime: (4, 5),
        };
        let text = r#"{"dev":1,"ino":2,"size":3,"mtime":[4,5]}"#;
        assert_eq!(serde_json::to_string(&version).unwrap(), text);
        assert_eq!(serde_json::from_str::<Version>(text).unwrap(), version);
    }

    /// `lstat` through a directory handle and the standard library's metadata say the same,
    /// in the same units.
    #[cfg(unix)]
    #[test]
    fn a_stat_is_the_same_whichever_way_it_was_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"four").unwrap();
        let handle = std::fs::File::open(dir.path()).unwrap();
        let read = crate::paths::fsops::lstat_at(std::os::fd::AsFd::as_fd(&handle), "f".as_ref())
            .unwrap()
            .unwrap();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        assert_eq!(read, Stat::from(&meta));
        assert_eq!(
            (read.kind(), read.size, read.nlink),
            (EntryKind::File, 4, 1)
        );
        assert_eq!(read.permissions(), read.mode & 0o7777);
    }
}
