//! Directories a change made for its new files (`mkdir -p` of their parents): when the change
//! is not made — it failed, or a kill cut it short and recovery undoes it — they go again,
//! deepest first, each only while it is still the directory that was made and empty. Each is
//! answered for before it has its name ([`make_dirs`]): by the change's made-dirs record (a
//! temp record) until the commit record names them, and by the temp record of each file staged
//! in them.

use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::record_names::{check_dir, path_bytes, RefusedName};
use super::{open_recorded_dir, Journal, WrittenRecord};
use crate::paths::{fsops, process, Sandbox};
use crate::paths::{AsDir, BorrowedDir, Dir};

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

/// Opens the directory `dir` (canonical, beneath `anchor`), making the missing ones after
/// `made_before` (the change's directories made so far): each under a temp name its own temp
/// record names, then, with its identity, in a made-dirs record naming all of them, and only
/// then renamed to its name. A kill at any point leaves none behind: recovery removes the
/// temp name, or the named directory while it is still the one made and empty. `record` is
/// the made-dirs record when any was made: the caller keeps it until the commit record names
/// the directories or they are removed again.
pub fn make_dirs(
    journal: &Journal,
    anchor: &Path,
    dir: &Path,
    made_before: Vec<MadeDirRecord>,
) -> io::Result<MadeDirs> {
    let mut named = made_before;
    let mut record = None;
    let opened = fsops::ensure_dir_made_with(anchor, dir, |parent, path, name| {
        let Some((made, entry)) = make_dir(journal, parent, path, name, &named)? else {
            return Ok(false);
        };
        named.push(made);
        if let Some(old) = record.replace(entry) {
            old.finish();
        }
        Ok(true)
    });
    match opened {
        Ok((dir, made)) => Ok(MadeDirs { dir, made, record }),
        Err(e) => {
            // What was made went again (`ensure_dir_made_with`).
            if let Some(record) = record {
                record.finish();
            }
            Err(e)
        }
    }
}

/// What [`make_dirs`] opened and made.
pub struct MadeDirs {
    pub dir: Dir,
    /// The directories made, shallowest first.
    pub made: Vec<fsops::MadeDir>,
    /// The made-dirs record naming them (and those made before), when any was made.
    pub record: Option<WrittenRecord>,
}

/// Makes the directory `name` of `parent` (canonical path `path`) as [`make_dirs`] says: its
/// record and the new made-dirs record naming it after `named`, or `None` when another
/// process made it meanwhile.
fn make_dir(
    journal: &Journal,
    parent: BorrowedDir<'_>,
    path: &Path,
    name: &OsStr,
    named: &[MadeDirRecord],
) -> io::Result<Option<(MadeDirRecord, WrittenRecord)>> {
    let parent_path = path.parent().unwrap_or(path);
    let unjournaled = || io::Error::other("cannot journal a directory about to be made");
    let aside = fsops::temp_name(name);
    let making = journal
        .begin_temp_in_made_dirs(parent_path, parent, &aside, named.to_vec())
        .ok_or_else(unjournaled)?;
    let made = fsops::mkdir_umasked_at(parent, &aside, 0o777).and_then(|()| {
        let stat = fsops::lstat_at(parent, &aside)?
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
        let (parent_dev, parent_ino) = fsops::identity(&fsops::fstat(parent)?);
        let (dev, ino) = fsops::identity(&stat);
        Ok(MadeDirRecord {
            path: path.to_owned(),
            parent_dev,
            parent_ino,
            dev,
            ino,
        })
    });
    let made = match made {
        Ok(made) => made,
        Err(e) => {
            let _ = fsops::rmdir_at(parent, &aside);
            making.finish();
            return Err(e);
        }
    };
    let all: Vec<MadeDirRecord> = named.iter().cloned().chain([made.clone()]).collect();
    let Some(record) = journal.begin_temp_in_made_dirs(parent_path, parent, &aside, all) else {
        let _ = fsops::rmdir_at(parent, &aside);
        making.finish();
        return Err(unjournaled());
    };
    making.finish();
    process::crash_point("dir-made-aside");
    match fsops::rename_noreplace(parent, &aside, parent, name) {
        Ok(()) => {
            process::crash_point("dir-made");
            Ok(Some((made, record)))
        }
        Err(e) => {
            let _ = fsops::rmdir_at(parent, &aside);
            record.finish();
            if e.kind() == io::ErrorKind::AlreadyExists {
                Ok(None)
            } else {
                Err(e)
            }
        }
    }
}

/// Removes `made` from its `parent` if it is still that directory and empty.
pub fn remove_if_empty(parent: BorrowedDir<'_>, made: &MadeDirRecord) {
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
            remove_if_empty(parent.as_dir(), made);
        }
    }
}

/// `Ok` if every directory a change made is a plain absolute path.
pub(super) fn check_made_dirs(made: &[MadeDirRecord]) -> Result<(), RefusedName> {
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

    /// A canonical `root` to make directories in, and a journal beside it.
    fn setup() -> (tempfile::TempDir, std::path::PathBuf, Journal) {
        let tmp = tempfile::tempdir().unwrap();
        let base = crate::paths::canonical::canonicalize_existing(tmp.path()).unwrap();
        let root = base.join("root");
        fs::create_dir(&root).unwrap();
        let journal = Journal::new(Arc::new(DataDir::new(base.join("data"))), "journal/x");
        (tmp, root, journal)
    }

    /// A kill while a file was being staged in directories made for it: recovery removes the
    /// temp file and then the directories, deepest first, but never one that holds something
    /// else.
    #[test]
    fn a_temp_record_takes_the_directories_made_for_it_along() {
        for someone_elses_file in [false, true] {
            let (_tmp, root, journal) = setup();
            let sub = root.join("new").join("sub");
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
                .begin_temp_in_made_dirs(&sub, dir.as_dir(), &temp, records)
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

    /// The made-dirs record names every directory made, with its identity, once it has its
    /// name: a writer that dies then leaves none of them behind, and none that holds something.
    #[test]
    fn make_dirs_leaves_one_record_naming_every_directory_made() {
        for someone_elses_file in [false, true] {
            let (_tmp, root, journal) = setup();
            let sub = root.join("new").join("sub");
            let made = make_dirs(&journal, &root, &sub, Vec::new()).unwrap();
            let entry = made.record.expect("a record for what was made");
            let mut record = Record::parse(&journal.read(&entry.path()).unwrap()).unwrap();
            let Record::Temp(temp) = &mut record else {
                panic!("not a temp record")
            };
            let named: Vec<_> = temp.made_dirs.iter().map(|m| m.path.clone()).collect();
            assert_eq!(named, [root.join("new"), sub.clone()]);
            assert_eq!(
                temp.made_dirs,
                made.made.iter().map(MadeDirRecord::of).collect::<Vec<_>>()
            );
            // Only the last record is left, and no temp name.
            assert_eq!(
                fs::read_dir(entry.path().parent().unwrap())
                    .unwrap()
                    .count(),
                1
            );
            assert_eq!(fs::read_dir(root.join("new")).unwrap().count(), 1);
            if someone_elses_file {
                fs::write(root.join("new/theirs.txt"), "theirs").unwrap();
            }
            // The writer dies.
            temp.pid = u32::MAX - 1;
            journal.rewrite(&entry.path(), &serde_json::to_vec(&record).unwrap());
            std::mem::forget(entry);
            journal.recover(&Sandbox::new(root.clone(), None, vec![]), &no_sequel);
            assert!(!sub.exists());
            assert_eq!(root.join("new").exists(), someone_elses_file);
        }
    }

    #[test]
    fn only_the_directory_that_was_made_and_is_empty_goes() {
        let tmp = tempfile::tempdir().unwrap();
        let root = crate::paths::canonical::canonicalize_existing(tmp.path()).unwrap();
        let (_, made) = fsops::ensure_dir_made(&root, &root.join("a")).unwrap();
        let record = MadeDirRecord::of(&made[0]);
        // Replaced by another directory of the same name (the one made still exists, so the
        // new one has another inode): left.
        fs::rename(root.join("a"), root.join("made")).unwrap();
        fs::create_dir(root.join("a")).unwrap();
        remove_if_empty(made[0].parent.as_dir(), &record);
        assert!(root.join("a").exists());
        // Nothing was made where a directory existed.
        let (_, made) = fsops::ensure_dir_made(&root, &root.join("a")).unwrap();
        assert!(made.is_empty());
    }
}
