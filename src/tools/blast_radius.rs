//! The blast radius of a call, shown before the user says yes: what a recursive `remove_dir`, or
//! a `move_file` / `restore_file` that replaces a directory, puts in the trash (files,
//! directories, links, bytes, the largest files), and what an `apply_patch` does to how many
//! files and lines. Each goes in the prompt's `detail` (a phrase) and its `summary` (numbers).

use std::ffi::OsStr;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::cancel::CancelToken;
use crate::confirm::{FilesSummary, LargestFile, Summary, TreeSummary};
use crate::error::ToolError;
use crate::paths::shown::Shown;
use crate::paths::tree_count::{count_tree_at, Budget, TreeCount};
use crate::paths::BorrowedDir;
use crate::progress::{Meter, Progress, Unit};
use crate::text::quantity::{human_bytes, quantity};

/// The longest a count may take before the prompt shows what it has ("at least …").
pub const COUNT_TIME: Duration = Duration::from_secs(1);
/// The most entries a count looks at.
pub const COUNT_ENTRIES: u64 = 1_000_000;

/// Counts the directory `name` in `parent` (at `path`, for messages), bounded by
/// [`COUNT_TIME`] and [`COUNT_ENTRIES`], stopping early on an abort.
pub fn count_tree(
    parent: BorrowedDir<'_>,
    name: &OsStr,
    path: &Path,
    cancel: &CancelToken,
) -> Result<TreeCount, ToolError> {
    let budget = Budget {
        deadline: Instant::now() + COUNT_TIME,
        max_entries: COUNT_ENTRIES,
    };
    count_tree_at(parent, name, budget, &|| cancel.is_aborted())
        .map_err(|e| ToolError::io(&e, "look into", path))
}

/// The prompt's numbers for the tree at `path`.
pub fn tree_summary(path: &Path, count: &TreeCount) -> Summary {
    Summary::Tree(TreeSummary {
        path: path.shown().into_owned(),
        files: count.files,
        dirs: count.dirs,
        links: count.links,
        bytes: count.bytes,
        complete: count.complete,
        largest: count
            .largest
            .iter()
            .map(|(rel, bytes)| LargestFile {
                path: path.join(rel).shown().into_owned(),
                bytes: *bytes,
            })
            .collect(),
    })
}

/// The tree in words, for the prompt's detail: `3 files and 2 directories, 12.0 KiB (largest:
/// a/big.bin 10.0 KiB, b.txt 2.0 KiB)`; `nothing in it`; or, when counting stopped early,
/// `at least 120000 files and 3000 directories, at least 4.2 GiB (counting stopped before the end)`.
pub fn describe_tree(count: &TreeCount) -> String {
    let mut parts = Vec::new();
    if count.files > 0 {
        parts.push(quantity(count.files, "file", "files"));
    }
    if count.dirs > 0 {
        parts.push(quantity(count.dirs, "directory", "directories"));
    }
    if count.links > 0 {
        parts.push(quantity(count.links, "link", "links"));
    }
    let floor = if count.complete { "" } else { "at least " };
    if parts.is_empty() {
        return if count.complete {
            "nothing in it".to_owned()
        } else {
            "not counted (counting stopped before the end)".to_owned()
        };
    }
    let last = parts.pop().unwrap_or_default();
    let listed = if parts.is_empty() {
        last
    } else {
        format!("{} and {last}", parts.join(", "))
    };
    let mut text = format!("{floor}{listed}, {floor}{}", human_bytes(count.bytes));
    if !count.largest.is_empty() && count.files > 1 {
        let largest: Vec<String> = count
            .largest
            .iter()
            .map(|(rel, bytes)| format!("{} {}", rel.shown(), human_bytes(*bytes)))
            .collect();
        text.push_str(&format!(" (largest: {})", largest.join(", ")));
    }
    if !count.complete {
        text.push_str(" (counting stopped before the end)");
    }
    text
}

/// The meter of putting the counted tree in the trash: in bytes of content (entries for a tree
/// with none), out of what was counted when the count is complete.
pub fn trash_meter(progress: &Progress, count: &TreeCount) -> Meter {
    let complete = |total| count.complete.then_some(total);
    if count.bytes > 0 {
        progress.meter(Unit::Bytes, complete(count.bytes))
    } else {
        // The trash counts the directory itself too.
        progress.meter(Unit::Entries, complete(count.entries() + 1))
    }
}

/// The meter of a restore of `size` bytes, which first puts the directory it replaces (if any,
/// counted) in the trash: in bytes of content, out of both when both are known.
pub fn restore_meter(progress: &Progress, size: u64, replaced: Option<&TreeCount>) -> Meter {
    let total = match replaced {
        Some(count) => count.complete.then_some(size + count.bytes),
        None => Some(size),
    };
    match total {
        Some(0) => progress.meter(Unit::Entries, None),
        total => progress.meter(Unit::Bytes, total),
    }
}

/// A patch's files and lines in words, for the prompt's detail: `2 files updated, 1 added: +12 -3 lines`.
pub fn describe_files(summary: &FilesSummary) -> String {
    let parts: Vec<String> = [
        (summary.added, "added"),
        (summary.updated, "updated"),
        (summary.moved, "moved"),
        (summary.deleted, "deleted"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{} {what}", quantity(*n, "file", "files")))
    .collect();
    format!(
        "{}: +{} -{} lines",
        parts.join(", "),
        summary.lines_added,
        summary.lines_removed
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn count(files: u64, dirs: u64, links: u64, bytes: u64, complete: bool) -> TreeCount {
        TreeCount {
            files,
            dirs,
            links,
            bytes,
            largest: Vec::new(),
            complete,
            ..TreeCount::default()
        }
    }

    #[test]
    fn a_tree_in_words() {
        assert_eq!(describe_tree(&count(0, 0, 0, 0, true)), "nothing in it");
        assert_eq!(describe_tree(&count(1, 0, 0, 5, true)), "1 file, 5 bytes");
        assert_eq!(
            describe_tree(&count(3, 2, 1, 3 << 20, true)),
            "3 files, 2 directories and 1 link, 3.0 MiB"
        );
        let mut big = count(2, 1, 0, 6000, true);
        big.largest = vec![
            (PathBuf::from("a/big.bin"), 5000),
            (PathBuf::from("b.txt"), 1000),
        ];
        assert_eq!(
            describe_tree(&big),
            "2 files and 1 directory, 5.9 KiB (largest: a/big.bin 4.9 KiB, b.txt 1000 bytes)"
        );
    }

    #[test]
    fn a_count_that_stopped_says_at_least() {
        assert_eq!(
            describe_tree(&count(120_000, 3000, 0, 4 << 30, false)),
            "at least 120000 files and 3000 directories, at least 4.0 GiB (counting stopped before the end)"
        );
        assert_eq!(
            describe_tree(&count(0, 0, 0, 0, false)),
            "not counted (counting stopped before the end)"
        );
    }

    #[test]
    fn a_patch_in_words() {
        let summary = FilesSummary {
            added: 1,
            updated: 2,
            deleted: 0,
            moved: 1,
            lines_added: 12,
            lines_removed: 3,
        };
        assert_eq!(
            describe_files(&summary),
            "1 file added, 2 files updated, 1 file moved: +12 -3 lines"
        );
    }

    #[test]
    fn the_summary_names_the_largest_files_by_their_absolute_paths() {
        let mut counted = count(2, 0, 0, 6, true);
        counted.largest = vec![(Path::new("x").join("y.bin"), 5)];
        let Summary::Tree(tree) = tree_summary(Path::new("/w/build"), &counted) else {
            panic!("a tree")
        };
        assert_eq!(tree.path, "/w/build");
        let largest = Path::new("/w/build").join("x").join("y.bin");
        assert_eq!(tree.largest[0].path, largest.to_str().unwrap());
        let json = serde_json::to_value(Summary::Tree(tree)).unwrap();
        assert_eq!(json["kind"], "tree");
        assert_eq!(json["largest"][0]["bytes"], 5);
    }
}
