//! Counting a tree before it goes: what a recursive `remove_dir`, or a move or restore that
//! replaces a directory, would put in the trash (the blast radius the prompt shows).
//!
//! The walk goes through directory descriptors only (`openat` with `O_NOFOLLOW`), never follows
//! a symlink, keeps its place in a stack rather than on the call stack, and takes entry types
//! from the directory listing, so only regular files are `lstat`ed (for their size). It stops at
//! a [`Budget`] (a deadline, a number of entries) or when cancelled, and then says that what it
//! counted is a floor ([`TreeCount::complete`] false), never a guess.

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::PathBuf;
use std::time::Instant;

use super::fsops;
use crate::paths::{AsDir, BorrowedDir, Dir, EntryKind};

/// How many of the largest files a count keeps.
pub const LARGEST: usize = 3;

/// What a tree holds (the directory itself not included).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TreeCount {
    /// Regular files (and the odd FIFO or device) beneath it.
    pub files: u64,
    /// Directories beneath it.
    pub dirs: u64,
    /// Symbolic links beneath it (counted as links, never followed).
    pub links: u64,
    /// The regular files' sizes, summed.
    pub bytes: u64,
    /// The regular files' allocated bytes (512-byte blocks), summed: what a copy of them takes
    /// (holes take nothing).
    pub allocated: u64,
    /// The first FIFO, socket or device met (by path relative to the tree), which a copy
    /// refuses.
    pub special: Option<PathBuf>,
    /// The largest regular files, biggest first, by path relative to the tree.
    pub largest: Vec<(PathBuf, u64)>,
    /// Everything was counted. `false`: the budget ran out, the count was cancelled, or a
    /// directory could not be read, so the numbers are a floor ("at least").
    pub complete: bool,
}

impl TreeCount {
    /// Entries of any kind.
    pub fn entries(&self) -> u64 {
        self.files + self.dirs + self.links
    }

    fn add_file(&mut self, rel: PathBuf, size: u64, allocated: u64) {
        self.files += 1;
        self.bytes += size;
        self.allocated += allocated;
        let at = self.largest.partition_point(|(_, s)| *s >= size);
        if at < LARGEST {
            self.largest.insert(at, (rel, size));
            self.largest.truncate(LARGEST);
        }
    }
}

/// When a count stops.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Stop at this time.
    pub deadline: Instant,
    /// Stop after this many entries.
    pub max_entries: u64,
}

/// A directory being counted: its descriptor, its entries still to look at, its path.
struct Frame {
    fd: Dir,
    pending: std::vec::IntoIter<(OsString, Option<EntryKind>)>,
    rel: PathBuf,
}

/// Counts the tree `name` in `dir` (which must be a directory), within `budget`; stops early,
/// with `complete: false`, when `cancelled` says so. An error only if the directory itself
/// cannot be opened or listed; an unreadable directory beneath it makes the count incomplete.
pub fn count_tree_at(
    dir: BorrowedDir<'_>,
    name: &OsStr,
    budget: Budget,
    cancelled: &dyn Fn() -> bool,
) -> io::Result<TreeCount> {
    let mut buffer = Vec::new();
    let mut count = TreeCount {
        complete: true,
        ..TreeCount::default()
    };
    let mut stack = vec![open_frame(dir, name, PathBuf::new(), &mut buffer)?];
    while let Some(top) = stack.last_mut() {
        let Some((child, kind)) = top.pending.next() else {
            stack.pop();
            continue;
        };
        if count.entries() >= budget.max_entries || Instant::now() >= budget.deadline || cancelled()
        {
            count.complete = false;
            break;
        }
        let rel = top.rel.join(&child);
        let parent = top.fd.as_dir();
        // The listing's type, or the entry's own when the file system does not say; regular
        // files are looked at anyway, for their size.
        let stat = match kind {
            Some(EntryKind::Directory | EntryKind::Symlink) => None,
            _ => match fsops::lstat_at(parent, &child) {
                Ok(Some(stat)) => Some(stat),
                Ok(None) => continue, // gone meanwhile: nothing to count
                Err(_) => {
                    count.complete = false;
                    continue;
                }
            },
        };
        match stat.as_ref().map_or(kind, |s| Some(EntryKind::of(s))) {
            Some(EntryKind::Directory) => {
                count.dirs += 1;
                match open_frame(parent, &child, rel, &mut buffer) {
                    Ok(frame) => stack.push(frame),
                    Err(_) => count.complete = false,
                }
            }
            Some(EntryKind::Symlink) => count.links += 1,
            Some(EntryKind::File) => {
                let (size, blocks) = stat.map_or((0, 0), |s| (s.size, s.blocks));
                count.add_file(rel, size, blocks.saturating_mul(512));
            }
            Some(EntryKind::Special) => {
                count.files += 1;
                count.special.get_or_insert(rel);
            }
            None => count.files += 1,
        }
    }
    Ok(count)
}

fn open_frame(
    parent: BorrowedDir<'_>,
    name: &OsStr,
    rel: PathBuf,
    buffer: &mut Vec<u8>,
) -> io::Result<Frame> {
    let fd = fsops::open_subdir(parent, name)?;
    let mut entries = fsops::read_entries(fd.as_dir(), buffer)?;
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(Frame {
        fd,
        pending: entries.into_iter(),
        rel,
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::fs;
    use std::os::fd::{AsFd, OwnedFd};
    use std::time::Duration;

    fn generous() -> Budget {
        Budget {
            deadline: Instant::now() + Duration::from_secs(60),
            max_entries: u64::MAX,
        }
    }

    fn tree() -> (tempfile::TempDir, OwnedFd) {
        let tmp = tempfile::tempdir().unwrap();
        let t = tmp.path().join("t");
        fs::create_dir_all(t.join("a/b")).unwrap();
        fs::create_dir(t.join("empty")).unwrap();
        fs::write(t.join("small.txt"), "x").unwrap();
        fs::write(t.join("a/mid.bin"), vec![1u8; 300]).unwrap();
        fs::write(t.join("a/b/big.bin"), vec![2u8; 5000]).unwrap();
        fs::write(t.join("a/b/zero"), "").unwrap();
        fs::write(t.join("a/b/ten.txt"), "0123456789").unwrap();
        std::os::unix::fs::symlink("/etc", t.join("a/link")).unwrap();
        let dir = fsops::open_subdir(rustix::fs::CWD, tmp.path().as_os_str()).unwrap();
        (tmp, dir)
    }

    #[test]
    fn counts_files_directories_links_and_bytes_never_following_a_link() {
        let (_tmp, dir) = tree();
        let count = count_tree_at(dir.as_fd(), OsStr::new("t"), generous(), &|| false).unwrap();
        assert_eq!(
            count,
            TreeCount {
                files: 5,
                dirs: 3,
                links: 1,
                bytes: 1 + 300 + 5000 + 10,
                allocated: count.allocated,
                special: None,
                largest: vec![
                    (PathBuf::from("a/b/big.bin"), 5000),
                    (PathBuf::from("a/mid.bin"), 300),
                    (PathBuf::from("a/b/ten.txt"), 10),
                ],
                complete: true,
            }
        );
    }

    /// A FIFO deep inside is named (a copy refuses it before writing anything); files' allocated
    /// bytes are summed.
    #[test]
    fn the_first_special_entry_is_named_and_allocation_summed() {
        let (tmp, dir) = tree();
        crate::paths::platform::make_fifo(&tmp.path().join("t/a/b/pipe"));
        let count = count_tree_at(dir.as_fd(), OsStr::new("t"), generous(), &|| false).unwrap();
        assert_eq!(count.special, Some(PathBuf::from("a/b/pipe")));
        let allocated: u64 = [
            "small.txt",
            "a/mid.bin",
            "a/b/big.bin",
            "a/b/zero",
            "a/b/ten.txt",
        ]
        .iter()
        .map(|f| {
            std::os::unix::fs::MetadataExt::blocks(
                &fs::metadata(tmp.path().join("t").join(f)).unwrap(),
            ) * 512
        })
        .sum();
        assert_eq!(count.allocated, allocated);
    }

    #[test]
    fn a_spent_budget_gives_a_floor_marked_incomplete() {
        let (_tmp, dir) = tree();
        let budget = Budget {
            max_entries: 4,
            ..generous()
        };
        let count = count_tree_at(dir.as_fd(), OsStr::new("t"), budget, &|| false).unwrap();
        assert!(!count.complete);
        assert_eq!(count.entries(), 4);
        let past = Budget {
            deadline: Instant::now() - Duration::from_millis(1),
            ..generous()
        };
        let count = count_tree_at(dir.as_fd(), OsStr::new("t"), past, &|| false).unwrap();
        assert_eq!((count.entries(), count.complete), (0, false));
    }

    #[test]
    fn cancelled_counting_stops_incomplete() {
        let (_tmp, dir) = tree();
        let count = count_tree_at(dir.as_fd(), OsStr::new("t"), generous(), &|| true).unwrap();
        assert!(!count.complete);
    }

    #[test]
    fn an_empty_directory_counts_nothing_and_is_complete() {
        let (_tmp, dir) = tree();
        let t = fsops::open_subdir(dir.as_fd(), OsStr::new("t")).unwrap();
        let count = count_tree_at(t.as_fd(), OsStr::new("empty"), generous(), &|| false).unwrap();
        assert_eq!(
            count,
            TreeCount {
                complete: true,
                ..TreeCount::default()
            }
        );
    }
}
