//! A change of many entries as its journal record keeps it (kind `commit`): its steps, and what
//! follows it; `commit.rs` makes and recovers the change.

use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::made_dirs::{check_made_dirs, MadeDirRecord};
use super::record_names::{check_dir, check_name, check_ours, path_bytes, RefusedName};
use crate::paths::fsops::{self, Snapshot};
use crate::paths::Dir;
use crate::paths::Version;

/// One step of a change, as the record keeps it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct StepRecord {
    /// The canonical path of the directory, and its dev and ino.
    #[serde(with = "path_bytes")]
    pub dir: PathBuf,
    pub dir_dev: u64,
    pub dir_ino: u64,
    #[serde(with = "path_bytes")]
    pub name: PathBuf,
    /// The temp name: the staged file before the step, what it displaced after.
    #[serde(with = "path_bytes")]
    pub aside: PathBuf,
    pub action: StepAction,
}

impl StepRecord {
    /// A step on `name` in the directory `dir` (canonical path `dir_path`), known by its device
    /// and inode.
    pub(super) fn in_dir(
        dir: &Dir,
        dir_path: &Path,
        name: &OsStr,
        aside: &OsStr,
        action: StepAction,
    ) -> io::Result<Self> {
        let dir_stat = Snapshot::of(&fsops::fstat(dir)?);
        Ok(Self {
            dir: dir_path.to_owned(),
            dir_dev: dir_stat.dev,
            dir_ino: dir_stat.ino,
            name: PathBuf::from(name),
            aside: PathBuf::from(aside),
            action,
        })
    }
}

/// What a step does.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum StepAction {
    /// The staged file (`staged`, holding `sha256`) takes the name; `replaces` is the file it
    /// displaces, if any.
    #[serde(rename_all = "camelCase")]
    Put {
        staged: Version,
        sha256: String,
        replaces: Option<Version>,
        /// Where names cannot be exchanged (Windows): the name the staged file waits under while
        /// the file it replaces moves to the temp name ([`fsops::put_by_renames`]); a kill can
        /// leave it there.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hold: Option<HoldName>,
    },
    /// The entry `removes` leaves the name.
    #[serde(rename_all = "camelCase")]
    Remove { removes: Version },
    /// The empty directory `removes` leaves the name; after the commit point it is removed
    /// only while empty (`rmdir`): what appeared in it meanwhile is never removed with it.
    #[serde(rename_all = "camelCase")]
    RemoveEmptyDir { removes: Version },
    /// The entry staged under the temp name (a file, link or whole tree, `staged`) takes the free
    /// name.
    #[serde(rename_all = "camelCase")]
    Place { staged: Version },
    /// The entry `moves` goes from the name to `to_name` in the directory `to_dir`.
    #[serde(rename_all = "camelCase")]
    Rename {
        moves: Version,
        #[serde(with = "path_bytes")]
        to_dir: PathBuf,
        to_dir_dev: u64,
        to_dir_ino: u64,
        #[serde(with = "path_bytes")]
        to_name: PathBuf,
    },
    /// `len` bytes hashing to `sha256` go, in place, at the end of the file `fileDev`/`fileIno`
    /// (the name), of `old_size` bytes then. A copy of them is kept beside the record
    /// (`<record>.bytes`, from `kept_from`), written and fsynced before it, so that an append
    /// cut short can be told as ours and taken back (`tail::roll_back_if_ours`).
    #[serde(rename_all = "camelCase")]
    Append {
        file_dev: u64,
        file_ino: u64,
        old_size: u64,
        len: u64,
        sha256: String,
        kept_from: u64,
    },
}

/// A change of many entries in flight (kind `commit`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct CommitRecord {
    /// `applying` until every step is done and durable, then `applied`.
    pub applied: bool,
    pub steps: Vec<StepRecord>,
    pub pid: u32,
    /// What must follow the change once it is made (see the module docs); written with
    /// `applied`, opaque to the journal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequel: Option<Value>,
    /// Directories made for the change's files: removed, if still empty, when it is undone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub made_dirs: Vec<MadeDirRecord>,
    /// Trash archives made for the change (names in the workspace's trash): discarded when it
    /// is undone, since everything they hold is back where it was.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub archives: Vec<ArchiveName>,
}

/// The hold name of a put by renames (see [`StepAction::Put`]), one of our temp names.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct HoldName(#[serde(with = "path_bytes")] pub PathBuf);

/// The name of a trash archive in the workspace's trash, as a commit record keeps it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ArchiveName(#[serde(with = "path_bytes")] pub PathBuf);

impl CommitRecord {
    /// Whether every directory is a plain absolute path, every name one plain component and
    /// every temp name ours (see `record.rs`); the error says which is not.
    pub(super) fn check(&self) -> Result<(), RefusedName> {
        check_made_dirs(&self.made_dirs)?;
        for archive in &self.archives {
            check_name(&archive.0)?;
        }
        for step in &self.steps {
            check_dir(&step.dir)?;
            check_name(&step.name)?;
            check_ours(&step.aside)?;
            if let StepAction::Put {
                hold: Some(HoldName(hold)),
                ..
            } = &step.action
            {
                check_ours(hold)?;
            }
            if let StepAction::Rename {
                to_dir, to_name, ..
            } = &step.action
            {
                check_dir(to_dir)?;
                check_name(to_name)?;
            }
        }
        Ok(())
    }

    /// Every directory the steps act in.
    pub(super) fn dirs(&self) -> Vec<&Path> {
        let mut dirs = Vec::new();
        for step in &self.steps {
            dirs.push(step.dir.as_path());
            if let StepAction::Rename { to_dir, .. } = &step.action {
                dirs.push(to_dir.as_path());
            }
        }
        dirs
    }

    /// The paths of the entries the steps change.
    pub(super) fn paths(&self) -> Vec<PathBuf> {
        let mut paths = Vec::new();
        for step in &self.steps {
            paths.push(step.dir.join(&step.name));
            if let StepAction::Rename {
                to_dir, to_name, ..
            } = &step.action
            {
                paths.push(to_dir.join(to_name));
            }
        }
        paths
    }

    /// The temp names the steps use, by directory: what they hold answers to this record.
    pub(super) fn asides(&self) -> impl Iterator<Item = (&Path, &OsStr)> {
        self.steps
            .iter()
            .map(|step| (step.dir.as_path(), step.aside.as_os_str()))
    }
}
