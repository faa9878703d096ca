//! `glob`'s engine: the files below a directory whose path matches a [`PathGlob`], and the
//! listing of them, newest first.
//!
//! Every match is found before any is shown, because the most recently modified files are the
//! ones shown (what a model looking for "the file I just changed" wants), and that order is only
//! known at the end. Each match is `lstat`ed once, for its date; the walk itself takes entry
//! types from the directory listing.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use super::glob::PathGlob;
use crate::cancel::CancelToken;
use crate::error::ToolError;
use crate::paths::fsops::{self, EntryKind};
use crate::paths::shown::{echo, Shown};
use crate::paths::{Sandbox, Target};
use crate::progress::Meter;
use crate::walk::{self, WalkOptions};

/// A file the glob matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Its path relative to the searched directory.
    pub rel: PathBuf,
    /// Modification time in nanoseconds since the epoch.
    pub mtime: i128,
}

/// Every matching regular file below `dir` (open, at `target`), in walk order. `progress`
/// counts the files looked at.
pub fn find_files(
    dir: OwnedFd,
    target: &Target,
    sandbox: &Sandbox,
    include_ignored: bool,
    matcher: &PathGlob,
    cancel: &CancelToken,
    progress: &Meter,
) -> Result<Vec<Found>, ToolError> {
    let options = WalkOptions {
        sandbox,
        include_ignored,
        limit: None, // all of them: the newest are shown
        cancel,
    };
    let walked = walk::walk(dir, target, &options, |entry| {
        if entry.kind != EntryKind::File {
            return None;
        }
        progress.advance(1);
        if !matcher.is_match(entry.rel) {
            return None;
        }
        let stat = fsops::lstat_at(entry.dir, entry.name).ok()??;
        (EntryKind::of(&stat) == EntryKind::File).then(|| Found {
            rel: entry.rel.to_path_buf(),
            mtime: i128::from(stat.st_mtime) * 1_000_000_000 + i128::from(stat.st_mtime_nsec),
        })
    })?;
    Ok(walked.items)
}

/// What a search found, as the model reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    pub text: String,
    /// The files shown.
    pub shown: usize,
    /// The files found.
    pub total: usize,
}

/// What was searched, for the listing's messages.
pub struct Searched<'a> {
    pub pattern: &'a str,
    pub dir: &'a Path,
    pub include_ignored: bool,
}

/// The newest `max` of `found`, one relative path a line, or why there are none, and a note
/// saying how to narrow the search when more were found.
pub fn listing(mut found: Vec<Found>, max: usize, searched: &Searched<'_>) -> Listing {
    let total = found.len();
    sort_newest_first(&mut found);
    let shown: Vec<String> = found
        .iter()
        .take(max)
        .map(|f| f.rel.shown().into_owned())
        .collect();
    let text = render(
        &shown,
        total,
        max,
        searched.pattern,
        searched.dir,
        searched.include_ignored,
    );
    Listing {
        text,
        shown: shown.len(),
        total,
    }
}

/// Newest first; equal times by path, so the output is deterministic.
fn sort_newest_first(found: &mut [Found]) {
    found.sort_unstable_by(|a, b| b.mtime.cmp(&a.mtime).then_with(|| a.rel.cmp(&b.rel)));
}

fn render(
    shown: &[String],
    total: usize,
    max: usize,
    pattern: &str,
    dir: &Path,
    include_ignored: bool,
) -> String {
    if shown.is_empty() {
        let mut text = format!("No files match `{}` in {}.", echo(pattern), dir.shown());
        if !include_ignored {
            text.push_str(" Files ignored by .gitignore were skipped; set includeIgnored: true to include them.");
        }
        return text;
    }
    let mut text = shown.join("\n");
    if total > max {
        text.push_str(&format!(
            "\n[Found {total} files; showing the {max} most recently modified. Use a more specific pattern or a subdirectory as path to narrow the search.]"
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(rel: &str, mtime: i128) -> Found {
        Found {
            rel: PathBuf::from(rel),
            mtime,
        }
    }

    #[test]
    fn newest_first_then_by_path() {
        let mut found = vec![f("b", 1), f("a", 1), f("c", 5), f("d", 0)];
        sort_newest_first(&mut found);
        let order: Vec<_> = found.iter().map(|f| f.rel.display().to_string()).collect();
        assert_eq!(order, ["c", "a", "b", "d"]);
    }

    #[test]
    fn render_says_how_to_narrow() {
        let dir = Path::new("/w");
        assert_eq!(
            render(&["a".into(), "b".into()], 2, 2, "*", dir, false),
            "a\nb"
        );
        let cut = render(&["a".into(), "b".into()], 7, 2, "*", dir, false);
        assert_eq!(
            cut,
            "a\nb\n[Found 7 files; showing the 2 most recently modified. Use a more specific pattern or a subdirectory as path to narrow the search.]"
        );
        let none = render(&[], 0, 2, "*.zig", dir, false);
        assert!(
            none.starts_with("No files match `*.zig` in /w.") && none.contains("includeIgnored")
        );
        assert!(!render(&[], 0, 2, "*.zig", dir, true).contains("includeIgnored"));
    }

    #[test]
    fn names_are_shown_escaped_one_a_line() {
        let searched = Searched {
            pattern: "*\n",
            dir: Path::new("/w\r"),
            include_ignored: true,
        };
        let listed = listing(vec![f("x\u{1b}[2J\ny", 1)], 5, &searched);
        assert_eq!(listed.text, "x\\x1b[2J\\ny");
        let none = listing(vec![], 5, &searched);
        assert_eq!(none.text, "No files match `*\\n` in /w\\r.");
    }

    #[test]
    fn the_listing_shows_the_newest_and_counts_all() {
        let searched = Searched {
            pattern: "*",
            dir: Path::new("/w"),
            include_ignored: false,
        };
        let found = vec![f("old", 1), f("new", 9), f("mid", 5)];
        let listed = listing(found, 2, &searched);
        assert_eq!((listed.shown, listed.total), (2, 3));
        assert!(
            listed.text.starts_with("new\nmid\n[Found 3 files;"),
            "{}",
            listed.text
        );
    }
}
