//! What a journal record says, and reading it back. A record is read as a stream
//! ([`Record::read`]): one the product wrote is readable whatever its size, in memory in
//! proportion to what it lists. Every name in it is checked where it is parsed
//! ([`Record::check`]): a directory is an absolute path of plain components, an entry's name is
//! one plain component (not empty, not `.` or `..`, no `/`, no NUL), and a temp name is one of
//! ours. A record that fails the check is never acted on, whoever sealed it.

use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use super::commit_record::CommitRecord;
use super::made_dirs::{check_made_dirs, MadeDirRecord};
pub use super::record_names::RefusedName;
use super::record_names::{check_dir, check_file_path, check_name, check_ours, path_bytes};
use crate::paths::fsops;

/// An in-place append in flight (kind `append`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct AppendRecord {
    #[serde(with = "path_bytes")]
    pub path: PathBuf,
    pub dev: u64,
    pub ino: u64,
    pub old_size: u64,
    pub append_len: u64,
    pub append_sha256: String,
    pub pid: u32,
    /// Whether the appended bytes are kept beside the record (`<record>.bytes`); records
    /// written before they were have none and never roll back.
    #[serde(default)]
    pub kept_bytes: bool,
}

/// A removal entry by entry in flight (kind `removal`): each entry is renamed aside to a temp
/// name and checked before it is unlinked (`fsops::remove_exact`), so a kill can leave one under
/// its temp name; recovery finishes those (they were archived or copied before).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct RemovalRecord {
    /// The canonical path of the directory holding the entry being removed.
    #[serde(with = "path_bytes")]
    pub dir: PathBuf,
    pub dir_dev: u64,
    pub dir_ino: u64,
    /// The entry (a file, or a tree) whose removal is in flight.
    #[serde(with = "path_bytes")]
    pub name: PathBuf,
    pub pid: u32,
}

/// A temp file of an atomic write, about to be created (kind `temp`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct TempRecord {
    /// The canonical path of the directory the temp file is created in.
    #[serde(with = "path_bytes")]
    pub dir: PathBuf,
    /// The device of that directory, checked before anything in it is removed.
    pub dir_dev: u64,
    /// The inode of that directory, checked before anything in it is removed.
    pub dir_ino: u64,
    /// The temp file's name in `dir`.
    #[serde(with = "path_bytes")]
    pub name: PathBuf,
    pub pid: u32,
    /// Directories made for it (its parents, made by the change it is staged for): removed
    /// with it, if still empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub made_dirs: Vec<MadeDirRecord>,
    /// With it, the temp entries `pid` numbered after `name` in `dir`, up to this counter (not
    /// included; see `fsops::numbered_temp_name`): one record answers for every file a change
    /// stages in one directory, from a block of counters reserved for them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters_below: Option<u64>,
}

impl TempRecord {
    /// Whether the record answers for the entry `name` in the directory `dir` (canonical path).
    pub fn answers_for(&self, dir: &Path, name: &OsStr) -> bool {
        if dir != self.dir {
            return false;
        }
        let Some(below) = self.counters_below else {
            return name == self.name.as_os_str();
        };
        let counter = |name: &OsStr| fsops::temp_counter_of(name, self.pid);
        match (counter(self.name.as_os_str()), counter(name)) {
            (Some(first), Some(n)) => (first..below).contains(&n),
            _ => false,
        }
    }
}

/// One journal record, as stored: `{"kind": "append" | "temp" | "commit" | "removal", …fields}`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Record {
    Append(AppendRecord),
    Temp(TempRecord),
    Commit(CommitRecord),
    Removal(RemovalRecord),
}

/// The kinds of record, as their `kind` names them.
const KINDS: &[&str] = &["append", "temp", "commit", "removal"];

/// What a record that starts with the kind of a change of many entries starts with (records are
/// written with their `kind` first).
pub const COMMIT_HEAD: &[u8] = br#"{"kind":"commit""#;

impl Record {
    /// Parses a stored record; one without a `kind` (written before temp records existed) is an
    /// append record.
    pub fn parse(bytes: &[u8]) -> serde_json::Result<Self> {
        Self::read(bytes)
    }

    /// Reads a stored record from `reader`, and checks its names ([`Record::check`]). A record
    /// whose `kind` comes first (every one this version writes) is read as it streams by; one
    /// whose fields come in another order, or that has no `kind`, is gathered first.
    pub fn read(reader: impl Read) -> serde_json::Result<Self> {
        let mut de = serde_json::Deserializer::from_reader(reader);
        let record = de.deserialize_map(RecordVisitor)?;
        de.end()?;
        record.check().map_err(de::Error::custom)?;
        Ok(record)
    }

    /// Whether every path and name the record holds is one recovery may act on (see the module
    /// docs); the error says which is not.
    pub fn check(&self) -> Result<(), RefusedName> {
        match self {
            Record::Append(r) => check_file_path(&r.path),
            Record::Temp(r) => {
                check_dir(&r.dir)?;
                check_made_dirs(&r.made_dirs)?;
                check_ours(&r.name)?;
                // A block's first name must tell the counter the block starts from.
                let numbered = fsops::temp_counter_of(r.name.as_os_str(), r.pid).is_some();
                match r.counters_below {
                    Some(_) if !numbered => Err(RefusedName::NotOurs(r.name.clone())),
                    _ => Ok(()),
                }
            }
            Record::Removal(r) => {
                check_dir(&r.dir)?;
                check_name(&r.name)
            }
            Record::Commit(r) => r.check(),
        }
    }

    /// The process that wrote the record.
    pub fn pid(&self) -> u32 {
        match self {
            Record::Append(r) => r.pid,
            Record::Temp(r) => r.pid,
            Record::Commit(r) => r.pid,
            Record::Removal(r) => r.pid,
        }
    }

    /// Every directory recovery of the record acts in.
    pub fn dirs(&self) -> Vec<&Path> {
        match self {
            Record::Append(r) => r.path.parent().into_iter().collect(),
            Record::Temp(r) => vec![&r.dir],
            Record::Removal(r) => vec![&r.dir],
            Record::Commit(r) => r.dirs(),
        }
    }

    /// The paths of the entries the record covers: what a change of them could find half done.
    pub fn paths(&self) -> Vec<PathBuf> {
        match self {
            Record::Append(r) => vec![r.path.clone()],
            Record::Temp(r) => vec![r.dir.join(&r.name)],
            Record::Removal(r) => vec![r.dir.join(&r.name)],
            Record::Commit(r) => r.paths(),
        }
    }
}

/// Reads a record field by field when its `kind` comes first; gathers it otherwise.
struct RecordVisitor;

impl<'de> Visitor<'de> for RecordVisitor {
    type Value = Record;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a journal record")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Record, A::Error> {
        let first: Option<String> = map.next_key()?;
        if first.as_deref() == Some("kind") {
            let kind: String = map.next_value()?;
            let rest = MapAccessDeserializer::new(map);
            return match kind.as_str() {
                "append" => AppendRecord::deserialize(rest).map(Record::Append),
                "temp" => TempRecord::deserialize(rest).map(Record::Temp),
                "commit" => CommitRecord::deserialize(rest).map(Record::Commit),
                "removal" => RemovalRecord::deserialize(rest).map(Record::Removal),
                other => Err(de::Error::unknown_variant(other, KINDS)),
            };
        }
        let mut fields = serde_json::Map::new();
        if let Some(key) = first {
            fields.insert(key, map.next_value()?);
        }
        while let Some((key, value)) = map.next_entry::<String, serde_json::Value>()? {
            fields.insert(key, value);
        }
        fields.entry("kind").or_insert_with(|| "append".into());
        Record::deserialize(serde_json::Value::Object(fields)).map_err(de::Error::custom)
    }
}
