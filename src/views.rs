//! What the model has seen (../docs/tools.md#stale-views): per file, the version the model last saw — what
//! `read_file` returned, or what one of its own successful changes left. A version is the
//! file's identity and state as `stat` gives them (device, inode, size, modification and change
//! times), so remembering one costs no extra read.
//!
//! This is state only: the tools record what the model saw; the one check that compares a file
//! with the model's view, and decides what follows from it, is `call::Call::check_view`.
//! At most [`REMEMBERED_FILES`] files are remembered, the most recently seen; a file forgotten
//! counts as not seen.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use crate::paths::Stat;

/// How many files a workspace remembers the model's view of (../docs/tools.md#stale-views).
pub const REMEMBERED_FILES: usize = 10_000;

/// One version of a file: who it is (device, inode) and its state (size, times).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileVersion {
    dev: u64,
    ino: u64,
    size: i64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl FileVersion {
    /// The version `stat` describes.
    #[allow(clippy::unnecessary_cast)] // the field types differ between platforms
    pub fn of(stat: &Stat) -> Self {
        Self {
            dev: stat.dev,
            ino: stat.ino,
            size: stat.size as i64,
            mtime: (stat.mtime.0, stat.mtime.1 as i64),
            ctime: (stat.ctime.0, stat.ctime.1 as i64),
        }
    }
}

/// When a file's state was looked at, in the order of all such looks: taken just before the
/// `stat`, so that of two calls that ran at once (a read and a write of one file), the later
/// look wins — a read that opened the file before a write replaced it does not make the model's
/// view older than the write it made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Moment(u64);

impl Moment {
    /// Now, before looking.
    pub fn now() -> Self {
        static CLOCK: AtomicU64 = AtomicU64::new(0);
        Self(CLOCK.fetch_add(1, Ordering::SeqCst))
    }
}

/// A file's state as seen at a [`Moment`].
#[derive(Debug, Clone, Copy)]
pub struct Seen {
    pub stat: Stat,
    pub at: Moment,
}

/// A file as it is now, compared with the model's view of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// The model saw this very version.
    Current,
    /// The model has not seen the file (or it was forgotten).
    Unseen,
    /// The model saw an earlier version: someone changed (or replaced) the file since.
    Changed,
}

/// The versions the model saw, by canonical path, the least recently seen forgotten first.
#[derive(Debug, Default)]
pub struct SeenFiles {
    inner: Mutex<Lru>,
}

#[derive(Debug, Default)]
struct Lru {
    /// Path → what was seen, and when it was recorded.
    by_path: HashMap<PathBuf, (Remembered, u64)>,
    /// When recorded → path: the oldest first, for forgetting.
    by_age: BTreeMap<u64, PathBuf>,
    clock: u64,
}

/// One file's version the model saw, and when it was looked at.
#[derive(Debug, Clone, Copy)]
struct Remembered {
    version: FileVersion,
    at: Moment,
}

impl Lru {
    /// Remembers `seen` for `path`, unless what is remembered was looked at later.
    fn insert(&mut self, path: PathBuf, seen: Remembered) {
        if self
            .by_path
            .get(&path)
            .is_some_and(|(known, _)| known.at > seen.at)
        {
            return;
        }
        self.clock += 1;
        if let Some((_, age)) = self.by_path.insert(path.clone(), (seen, self.clock)) {
            self.by_age.remove(&age);
        }
        self.by_age.insert(self.clock, path);
        while self.by_path.len() > REMEMBERED_FILES {
            let Some((_, oldest)) = self.by_age.pop_first() else {
                break;
            };
            self.by_path.remove(&oldest);
        }
    }

    fn remove(&mut self, path: &Path) -> Option<Remembered> {
        let (seen, age) = self.by_path.remove(path)?;
        self.by_age.remove(&age);
        Some(seen)
    }
}

impl SeenFiles {
    fn lock(&self) -> std::sync::MutexGuard<'_, Lru> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The model saw `path` as `seen` describes it (unless it has seen it since).
    pub fn saw(&self, path: &Path, seen: &Seen) {
        let remembered = Remembered {
            version: FileVersion::of(&seen.stat),
            at: seen.at,
        };
        self.lock().insert(path.to_owned(), remembered);
    }

    /// How the file at `path`, now as `stat` describes it, compares with the model's view.
    pub fn view(&self, path: &Path, stat: &Stat) -> View {
        match self.lock().by_path.get(path) {
            None => View::Unseen,
            Some((seen, _)) if seen.version == FileVersion::of(stat) => View::Current,
            Some(_) => View::Changed,
        }
    }

    /// The entry at `from` (a file, or a directory with the files in it) is now at `to`: the
    /// versions seen move with it (a rename changes no file's content; a moved file's own
    /// change time, which a rename may touch, is recorded again by the tool that moved it).
    pub fn moved(&self, from: &Path, to: &Path) {
        let mut lru = self.lock();
        let below: Vec<PathBuf> = lru
            .by_path
            .keys()
            .filter(|p| p.starts_with(from))
            .cloned()
            .collect();
        for path in below {
            if let Some(seen) = lru.remove(&path) {
                let rest = path.strip_prefix(from).unwrap_or(Path::new(""));
                let moved = if rest.as_os_str().is_empty() {
                    to.to_owned()
                } else {
                    to.join(rest)
                };
                lru.insert(moved, seen);
            }
        }
    }

    /// How many files are remembered.
    pub fn len(&self) -> usize {
        self.lock().by_path.len()
    }

    /// Whether no file is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat_of(path: &Path) -> Stat {
        crate::paths::testing::stat(path).unwrap()
    }

    /// `path` as it is now, looked at now.
    fn look(path: &Path) -> Seen {
        Seen {
            at: Moment::now(),
            stat: stat_of(path),
        }
    }

    #[test]
    fn a_file_is_current_until_it_changes_and_unseen_until_read() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("a.txt");
        std::fs::write(&path, "one\n").unwrap();
        let store = SeenFiles::default();
        assert_eq!(store.view(&path, &stat_of(&path)), View::Unseen);
        store.saw(&path, &look(&path));
        assert_eq!(store.view(&path, &stat_of(&path)), View::Current);
        // A change of size: told apart whatever the clock's resolution.
        std::fs::write(&path, "one\ntwo\n").unwrap();
        assert_eq!(store.view(&path, &stat_of(&path)), View::Changed);
        // Another file put in its place (another inode), same size and content.
        store.saw(&path, &look(&path));
        let other = tmp.path().join("other.txt");
        std::fs::write(&other, "one\ntwo\n").unwrap();
        std::fs::rename(&other, &path).unwrap();
        assert_eq!(store.view(&path, &stat_of(&path)), View::Changed);
    }

    /// Of two looks at one file recorded out of order (a read that opened the file before a
    /// write replaced it, and finished after), the later look is the model's view.
    #[test]
    fn an_earlier_look_recorded_later_does_not_replace_a_later_one() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("a.txt");
        std::fs::write(&path, "old\n").unwrap();
        let read = look(&path);
        std::fs::write(&path, "written\n").unwrap();
        let store = SeenFiles::default();
        store.saw(&path, &look(&path));
        store.saw(&path, &read);
        assert_eq!(store.view(&path, &stat_of(&path)), View::Current);
    }

    #[test]
    fn at_most_the_most_recently_seen_files_are_remembered() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("a.txt");
        std::fs::write(&path, "x").unwrap();
        let stat = stat_of(&path);
        let store = SeenFiles::default();
        let see = |name: String| store.saw(&tmp.path().join(name), &look(&path));
        for i in 0..REMEMBERED_FILES + 5 {
            see(format!("f{i}"));
        }
        assert_eq!(store.len(), REMEMBERED_FILES);
        assert_eq!(store.view(&tmp.path().join("f0"), &stat), View::Unseen);
        assert_eq!(store.view(&tmp.path().join("f4"), &stat), View::Unseen);
        assert_eq!(store.view(&tmp.path().join("f5"), &stat), View::Current);
        // Seeing a file again makes it the most recent: it outlives those seen after it once.
        see("f5".to_owned());
        for i in 0..REMEMBERED_FILES - 1 {
            see(format!("g{i}"));
        }
        assert_eq!(store.view(&tmp.path().join("f5"), &stat), View::Current);
        assert_eq!(store.view(&tmp.path().join("f6"), &stat), View::Unseen);
    }

    #[test]
    fn a_move_carries_the_versions_of_a_file_and_of_a_tree() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("f");
        std::fs::write(&file, "x").unwrap();
        let stat = stat_of(&file);
        let store = SeenFiles::default();
        let (dir, other) = (tmp.path().join("d"), tmp.path().join("dx"));
        store.saw(&dir.join("a/b.txt"), &look(&file));
        store.saw(&other.join("c.txt"), &look(&file));
        store.saw(&file, &look(&file));
        store.moved(&dir, &tmp.path().join("e"));
        store.moved(&file, &tmp.path().join("g"));
        assert_eq!(store.view(&dir.join("a/b.txt"), &stat), View::Unseen);
        assert_eq!(
            store.view(&tmp.path().join("e/a/b.txt"), &stat),
            View::Current
        );
        // Compared by whole components: `dx` is not inside `d`.
        assert_eq!(store.view(&other.join("c.txt"), &stat), View::Current);
        assert_eq!(store.view(&file, &stat), View::Unseen);
        assert_eq!(store.view(&tmp.path().join("g"), &stat), View::Current);
    }
}
