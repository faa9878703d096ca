//! Shared test helpers.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use flate2::write::GzEncoder;
use flate2::Compression;
use sha2::{Digest, Sha256};
use tar::{EntryType, Header};

use crate::paths::testing::{symlink, Modes};
use crate::paths::{AsDir, Dir, EntryKind};
use crate::trash::{
    archive_relative_path, Archived, Bucket, Identity, Metadata, TrashError, TrashItem,
};

/// What a call reports of an archive once it is done with it: an [`Archived`] whose lock was
/// let go (so the archive can be restored or cleared like any other).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reported {
    pub archive_path: PathBuf,
    pub metadata: Metadata,
}

impl From<Archived> for Reported {
    fn from(archived: Archived) -> Self {
        Reported {
            archive_path: archived.archive_path.clone(),
            metadata: archived.metadata.clone(),
        }
    }
}

/// A workspace root and a data dir inside one temp dir.
pub struct Env {
    pub _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub data: PathBuf,
    pub outside: PathBuf,
    pub bucket: Bucket,
}

/// A cancel callback that never cancels.
pub fn never() -> bool {
    false
}

/// Test identity.
pub fn identity() -> Identity {
    Identity {
        session_id: "session-0123456789".into(),
        run_id: "run/ABCDEFGH-xyz".into(),
        agent_name: "tester".into(),
    }
}

impl Env {
    pub fn new() -> Env {
        Env::with_level(6)
    }

    pub fn with_level(level: u32) -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let base = crate::paths::canonical::canonicalize_existing(tmp.path()).unwrap();
        let root = base.join("ws");
        let data = base.join("data");
        let outside = base.join("outside");
        fs::create_dir_all(&root).unwrap();
        fs::create_dir_all(&outside).unwrap();
        let bucket = Bucket::new(
            std::sync::Arc::new(crate::datadir::DataDir::new(data.clone())),
            &root,
            identity(),
            level,
        );
        Env {
            _tmp: tmp,
            root,
            data,
            outside,
            bucket,
        }
    }

    /// Absolute path of a workspace-relative path.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// Trash `rel` (relative to the root).
    pub fn trash(&self, rel: &str) -> Result<Reported, TrashError> {
        self.trash_with(&self.path(rel), &never)
    }

    /// Trash an absolute path, polling `cancel`.
    pub fn trash_with(
        &self,
        path: &Path,
        cancel: &dyn Fn() -> bool,
    ) -> Result<Reported, TrashError> {
        self.with_item(path, |item| self.bucket.trash(item, cancel))
            .map(Reported::from)
    }

    /// Archive `rel` without removing it.
    pub fn archive(&self, rel: &str) -> Result<Reported, TrashError> {
        self.with_item(&self.path(rel), |item| self.bucket.archive(item, &never))
            .map(Reported::from)
    }

    /// Build the item the tools would build for `path`, and run `f` on it.
    pub fn with_item<T>(&self, path: &Path, f: impl FnOnce(&TrashItem<'_>) -> T) -> T {
        let parent = open_dir(path.parent().unwrap());
        let relative = archive_relative_path(&self.root, path);
        let item = TrashItem {
            parent: parent.as_dir(),
            name: path.file_name().unwrap(),
            original_path: path,
            relative_path: &relative,
        };
        f(&item)
    }

    /// Restore `archive` to the absolute `target`.
    pub fn restore_to(&self, archive: &Path, target: &Path) -> Result<Metadata, TrashError> {
        self.restore_with(archive, target, &never)
    }

    /// Restore `archive` to `target`, polling `cancel`.
    pub fn restore_with(
        &self,
        archive: &Path,
        target: &Path,
        cancel: &dyn Fn() -> bool,
    ) -> Result<Metadata, TrashError> {
        let parent = open_dir(target.parent().unwrap());
        self.bucket.restore(
            archive,
            parent.as_dir(),
            target.file_name().unwrap(),
            &crate::trash::restore_temp_name(),
            cancel,
        )
    }

    /// Put back what a trash that stopped halfway removed; the error it reports. The parent is
    /// a path handle (`O_PATH`), as the tools hold it.
    pub fn put_back_removed(&self, partly: crate::trash::PartlyRemoved) -> TrashError {
        let holder = partly.original().parent().unwrap();
        let parent = crate::paths::testing::open_dir_from_root(holder);
        let temp = crate::trash::restore_temp_name();
        self.bucket.put_back_removed(partly, parent.as_dir(), &temp)
    }

    /// Names in the bucket (sorted), or none if it does not exist.
    pub fn bucket_names(&self) -> Vec<String> {
        names_in(self.bucket.dir())
    }
}

/// Sorted names in `dir` (empty if missing).
pub fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = match fs::read_dir(dir) {
        Ok(entries) => entries
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => Vec::new(),
    };
    names.sort();
    names
}

/// An fd for a directory.
pub fn open_dir(path: &Path) -> Dir {
    crate::paths::testing::open_dir(path)
}

/// Write `content` to `path` with `mode`.
pub fn write_file(path: &Path, content: &[u8], mode: u32) {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).unwrap();
    }
    fs::write(path, content).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

/// Set the mtime of `path` itself (a symlink is not followed).
pub fn set_mtime(path: &Path, secs: i64, nanos: u32) {
    crate::paths::testing::set_times(path, secs, nanos);
}

/// What a tree entry is, for comparisons.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    File {
        mode: u32,
        mtime: (i64, i64),
        owner: (u32, u32),
        bytes: Vec<u8>,
    },
    Dir {
        mode: u32,
        mtime: (i64, i64),
        owner: (u32, u32),
    },
    Link {
        mtime: (i64, i64),
        owner: (u32, u32),
        target: PathBuf,
    },
}

/// Everything at and under `path`, keyed by path relative to `path` ("" for itself).
pub fn snapshot(path: &Path) -> BTreeMap<PathBuf, Node> {
    let mut out = BTreeMap::new();
    collect(path, Path::new(""), &mut out);
    out
}

fn collect(path: &Path, rel: &Path, out: &mut BTreeMap<PathBuf, Node>) {
    let meta = crate::paths::testing::lstat(path).unwrap();
    let mtime = (meta.mtime.0, i64::from(meta.mtime.1));
    let mode = meta.permissions();
    let owner = (meta.uid, meta.gid);
    let node = if meta.kind() == EntryKind::Symlink {
        Node::Link {
            mtime,
            owner,
            target: fs::read_link(path).unwrap(),
        }
    } else if meta.kind() == EntryKind::Directory {
        for entry in fs::read_dir(path).unwrap() {
            let entry = entry.unwrap();
            collect(&entry.path(), &rel.join(entry.file_name()), out);
        }
        Node::Dir { mode, mtime, owner }
    } else {
        Node::File {
            mode,
            mtime,
            owner,
            bytes: fs::read(path).unwrap(),
        }
    };
    out.insert(rel.to_path_buf(), node);
}

/// Build a sample tree under `dir`: nested dirs, an empty dir, a relative symlink, a dangling
/// symlink, an executable, a private file, odd modes and explicit nanosecond mtimes everywhere
/// (directories last, after they are filled).
pub fn build_tree(dir: &Path) {
    fs::create_dir_all(dir.join("src/nested/deeper")).unwrap();
    fs::create_dir_all(dir.join("empty")).unwrap();
    write_file(&dir.join("README.md"), b"# hello\n", 0o644);
    write_file(&dir.join("src/main.rs"), b"fn main() {}\n", 0o644);
    write_file(
        &dir.join("src/nested/run.sh"),
        b"#!/bin/sh\necho hi\n",
        0o755,
    );
    write_file(
        &dir.join("src/nested/deeper/secret"),
        &[0u8, 1, 2, 255],
        0o600,
    );
    write_file(&dir.join("src/nested/deeper/a.b"), b"dots", 0o644);
    symlink("../README.md", dir.join("src/readme-link")).unwrap();
    symlink("nowhere/at/all", dir.join("dangling")).unwrap();
    fs::set_permissions(dir.join("src/nested"), fs::Permissions::from_mode(0o750)).unwrap();
    let mut all: Vec<PathBuf> = snapshot(dir).keys().map(|k| dir.join(k)).collect();
    all.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    for (i, path) in all.iter().enumerate() {
        set_mtime(
            path,
            1_600_000_000 + i as i64 * 1000,
            123_456_789 + i as u32,
        );
    }
}

/// SHA-256 hex of bytes.
pub fn sha_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// An entry of a hand-built (possibly hostile) archive.
pub struct RawEntry {
    pub path: Vec<u8>,
    pub kind: EntryType,
    pub data: Vec<u8>,
    pub link: Vec<u8>,
    pub mode: u32,
}

impl RawEntry {
    pub fn file(path: &str, data: &[u8]) -> RawEntry {
        RawEntry {
            path: path.as_bytes().to_vec(),
            kind: EntryType::Regular,
            data: data.to_vec(),
            link: Vec::new(),
            mode: 0o644,
        }
    }

    pub fn dir(path: &str) -> RawEntry {
        RawEntry {
            kind: EntryType::Directory,
            mode: 0o755,
            ..RawEntry::file(path, b"")
        }
    }

    pub fn link(path: &str, target: &str, kind: EntryType) -> RawEntry {
        RawEntry {
            kind,
            link: target.as_bytes().to_vec(),
            mode: 0o777,
            ..RawEntry::file(path, b"")
        }
    }
}

/// Metadata for a hand-built archive.
pub fn raw_metadata(relative_path: &str, kind: &str, sha: &str, size: u64, mode: u32) -> Vec<u8> {
    let mut value = serde_json::json!({
        "sessionId": "s", "runId": "r", "agentName": "evil",
        "trashedAt": "2026-01-01T00:00:00.000Z", "originalPath": "/nowhere",
        "relativePath": relative_path, "kind": kind, "originalSha256": sha,
        "size": size, "mode": mode,
    });
    if kind == "directory" {
        value["fileCount"] = serde_json::json!(0);
    }
    serde_json::to_vec(&value).unwrap()
}

/// A gzip'd tar with the given entries, written with raw headers (no path checks at all).
pub fn raw_archive(entries: &[RawEntry]) -> Vec<u8> {
    let mut tar = Vec::new();
    for entry in entries {
        let mut header = Header::new_gnu();
        let name = &mut header.as_old_mut().name;
        name[..entry.path.len()].copy_from_slice(&entry.path);
        let linkname = &mut header.as_old_mut().linkname;
        linkname[..entry.link.len()].copy_from_slice(&entry.link);
        header.set_entry_type(entry.kind);
        header.set_mode(entry.mode);
        header.set_mtime(1_600_000_000);
        header.set_size(entry.data.len() as u64);
        header.set_cksum();
        tar.extend_from_slice(header.as_bytes());
        tar.extend_from_slice(&entry.data);
        tar.resize(tar.len().div_ceil(512) * 512, 0);
    }
    tar.extend_from_slice(&[0; 1024]);
    let mut gz = GzEncoder::new(Vec::new(), Compression::default());
    gz.write_all(&tar).unwrap();
    gz.finish().unwrap()
}

/// Put a hand-built archive into the bucket under a valid archive name.
pub fn plant_archive(env: &Env, name: &str, bytes: &[u8]) -> PathBuf {
    fs::create_dir_all(env.bucket.dir()).unwrap();
    let path = env.bucket.dir().join(name);
    fs::write(&path, bytes).unwrap();
    path
}

/// (path, type, link name) of every entry of an archive, in order.
pub fn archive_entries(archive: &Path) -> Vec<(String, EntryType, String)> {
    let file = File::open(archive).unwrap();
    let mut archive = tar::Archive::new(flate2::read::MultiGzDecoder::new(file));
    let entries = archive.entries().unwrap();
    entries
        .map(|entry| {
            let entry = entry.unwrap();
            let path = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
            let link = entry
                .link_name_bytes()
                .map(|l| String::from_utf8_lossy(&l).into_owned())
                .unwrap_or_default();
            (path, entry.header().entry_type(), link)
        })
        .collect()
}

/// Let the filesystem clock tick past anything created so far (ctime granularity).
pub fn let_clock_tick() {
    std::thread::sleep(Duration::from_millis(50));
}

/// Is `name` a temp file of the trash?
pub fn is_temp(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(".partial")
}

/// Names under `dir` that look like restore temps.
pub fn restore_temps(dir: &Path) -> Vec<String> {
    names_in(dir).into_iter().filter(|n| is_temp(n)).collect()
}

/// Does `name` look like an archive name for basename `base`?
pub fn looks_like_archive(name: &OsStr, base: &str) -> bool {
    let name = name.to_string_lossy();
    name.ends_with(&format!("-{base}.tar.gz")) && name.contains("-session--run_ABCD-")
}
