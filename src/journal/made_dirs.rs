//! Directories a change made for its new files (`mkdir -p` of their parents): when the change
//! is not made — it failed, or a kill cut it short and recovery undoes it — they go again,
//! deepest first, each only while it is still the directory that was made and empty. Recorded
//! in the temp record of each file staged in them (a kill while staging) and in the commit
//! record (a kill while applying).

use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::open_recorded_dir;
use super::record_names::{check_dir, path_bytes};
use crate::paths::{fsops, Sandbox};

/// A directory a change made, as records keep it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct MadeDirRecord {
    /// Its canonical path.
    #[serde(with = "path_bytes")]
    pub path: PathBuf,
    /// The device and inode of its parent directory, then its own.
    pub parent_dev: u64,
    pub parent_ino: u64,
    pub dev: u64,
    pub ino: u64,
}

impl MadeDirRecord {
    pub fn of(made: &fsops::MadeDir) -> Self {
        Self {
            path: made.path.clone(),
            parent_dev: made.parent_identity.0,
            parent_ino: made.parent_identity.1,
            dev: made.identity.0,
            ino: made.identity.1,
        }
    }

    /// Whether it is `dir` or above it.
    pub fn holds(&self, dir: &Path) -> bool {
        dir.starts_with(&self.path)
    }
}

/// Removes `made` from its `parent` if it is still that directory and empty.
pub fn remove_if_empty(parent: BorrowedFd<'_>, made: &MadeDirRecord) {
    let Some(name) = made.path.file_name() else {
        return;
    };
    let still_it = fsops::lstat_at(parent, name)
        .ok()
        .flatten()
        .is_some_and(|stat| {
            crate::paths::EntryKind::of(&stat) == crate::paths::EntryKind::Directory
                && fsops::identity(&stat) == (made.dev, made.ino)
        });
    if still_it {
        // Fails, leaving it, when something is in it.
        let _ = fsops::rmdir_at(parent, name);
    }
}

/// Recovery: removes each of `made` that is still empty, deepest first, through parents that
/// are still the recorded ones inside the allowed trees.
pub fn remove_recorded(made: &[MadeDirRecord], sandbox: &Sandbox) {
    let mut deepest_first: Vec<&MadeDirRecord> = made.iter().collect();
    deepest_first.sort_by_key(|m| std::cmp::Reverse(m.path.components().count()));
    for made in deepest_first {
        let Some(parent_path) = made.path.parent() else {
            continue;
        };
        if let Ok(Some(parent)) =
            open_recorded_dir(sandbox, parent_path, made.parent_dev, made.parent_ino)
        {
            remove_if_empty(parent.as_fd(), made);
        }
    }
}

/// `Ok` if every directory a change made is a plain absolute path.
pub(super) fn check_made_dirs(made: &[MadeDirRecord]) -> Result<(), String> {
    made.iter().try_for_each(|dir| check_dir(&dir.path))
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;
    use std::fs;
    use std::sync::Arc;

    use super::*;
    use crate::datadir::DataDir;
    use crate::journal::{Journal, Record};

    fn no_sequel(_: &serde_json::Value) -> std::io::Result<()> {
        unreachable!("no sequel here")
    }

    /// A kill while a file was being staged in directories made for it: recovery removes the
    /// temp file and then the directories, deepest first, but never one that holds something
    /// else.
    #[test]
    fn a_temp_record_takes_the_directories_made_for_it_along() {
        for someone_elses_file in [false, true] {
            let tmp = tempfile::tempdir().unwrap();
            let base = fs::canonicalize(tmp.path()).unwrap();
            let root = base.join("root");
            fs::create_dir(&root).unwrap();
            let journal = Journal::new(Arc::new(DataDir::new(base.join("data"))), "journal/x");
            let sub = root.join("new/sub");
            let (dir, made) = fsops::ensure_dir_made(&root, &sub).unwrap();
            assert_eq!(
                made.iter().map(|m| m.path.clone()).collect::<Vec<_>>(),
                [root.join("new"), sub.clone()]
            );
            let temp = fsops::temp_name(OsStr::new("f.txt"));
            fs::write(sub.join(&temp), "staged").unwrap();
            if someone_elses_file {
                fs::write(root.join("new/theirs.txt"), "theirs").unwrap();
            }
            let records = made.iter().map(MadeDirRecord::of).collect();
            let entry = journal
                .begin_temp_in_made_dirs(&sub, dir.as_fd(), &temp, records)
                .unwrap();
            // The writer dies.
            let mut record = Record::parse(&journal.read(&entry.path()).unwrap()).unwrap();
            if let Record::Temp(r) = &mut record {
                r.pid = u32::MAX - 1;
            }
            journal.rewrite(&entry.path(), &serde_json::to_vec(&record).unwrap());
            std::mem::forget(entry);
            let sandbox = Sandbox::new(root.clone(), None, vec![]);
            journal.recover(&sandbox, &no_sequel);
            assert!(!sub.exists());
            assert_eq!(root.join("new").exists(), someone_elses_file);
        }
    }

    #[test]
    fn only_the_directory_that_was_made_and_is_empty_goes() {
        let tmp = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(tmp.path()).unwrap();
        let (_, made) = fsops::ensure_dir_made(&root, &root.join("a")).unwrap();
        let record = MadeDirRecord::of(&made[0]);
        // Replaced by another directory of the same name (the one made still exists, so the
        // new one has another inode): left.
        fs::rename(root.join("a"), root.join("made")).unwrap();
        fs::create_dir(root.join("a")).unwrap();
        remove_if_empty(made[0].parent.as_fd(), &record);
        assert!(root.join("a").exists());
        // Nothing was made where a directory existed.
        let (_, made) = fsops::ensure_dir_made(&root, &root.join("a")).unwrap();
        assert!(made.is_empty());
    }
}
