//! `glob`'s engine: the files below a directory whose path matches a [`PathGlob`], and the
//! listing of them, newest first.
//!
//! Every match is found before any is shown, because the most recently modified files are the
//! ones shown (what a model looking for "the file I just changed" wants), and that order is only
//! known at the end. Each match is `lstat`ed once, for its date; the walk itself takes entry
//! types from the directory listing.

use std::path::{Path, PathBuf};

use super::glob::PathGlob;
use crate::cancel::CancelToken;
use crate::error::ToolError;
use crate::paths::fsops;
use crate::paths::shown::{echo, Shown};
use crate::paths::Dir;
use crate::paths::EntryKind;
use crate::paths::{Sandbox, Target};
use crate::progress::Meter;
use crate::text::bounded::{bounded, lines_within, NOTE_ROOM};
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
    dir: Dir,
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
            mtime: i128::from(stat.mtime.0) * 1_000_000_000 + i128::from(stat.mtime.1),
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
    /// The output limit (`readMaxBytes`): deep paths are listed only up to it.
    pub max_bytes: usize,
}

/// The newest `max` of `found` (fewer when their paths reach the output limit), one relative
/// path a line, or why there are none, and a note saying how to narrow the search when more
/// were found.
pub fn listing(mut found: Vec<Found>, max: usize, searched: &Searched<'_>) -> Listing {
    let total = found.len();
    sort_newest_first(&mut found);
    let mut shown: Vec<String> = found
        .iter()
        .take(max)
        .map(|f| f.rel.shown().into_owned())
        .collect();
    let fit = lines_within(&shown, searched.max_bytes.saturating_sub(NOTE_ROOM));
    let by_bytes = fit < shown.len();
    shown.truncate(fit);
    let limit = if by_bytes {
        format!(" (the output limit of {} bytes)", searched.max_bytes)
    } else {
        String::new()
    };
    let text = render(&shown, total, &limit, searched);
    let text = bounded(&text, searched.max_bytes, |left| {
        format!("[… {} more bytes not shown]", left.bytes)
    });
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

/// The listing of `shown` (of `total` found), or why nothing matched; `limit` says what cut it
/// short when it is not `listMaxEntries`.
fn render(shown: &[String], total: usize, limit: &str, searched: &Searched<'_>) -> String {
    if shown.is_empty() {
        let mut text = format!(
            "No files match `{}` in {}.",
            echo(searched.pattern),
            searched.dir.shown()
        );
        if !searched.include_ignored {
            text.push_str(" Files ignored by .gitignore were skipped; set includeIgnored: true to include them.");
        }
        return text;
    }
    let mut text = shown.join("\n");
    if total > shown.len() {
        text.push_str(&format!(
            "\n[Found {total} files; showing the {} most recently modified{limit}. Use a more specific pattern or a subdirectory as path to narrow the search.]",
            shown.len()
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

    fn searched(pattern: &str, include_ignored: bool) -> Searched<'_> {
        Searched {
            pattern,
            dir: Path::new("/w"),
            include_ignored,
            max_bytes: 65536,
        }
    }

    #[test]
    fn render_says_how_to_narrow() {
        let all = searched("*", false);
        assert_eq!(render(&["a".into(), "b".into()], 2, "", &all), "a\nb");
        let cut = render(&["a".into(), "b".into()], 7, "", &all);
        assert_eq!(
            cut,
            "a\nb\n[Found 7 files; showing the 2 most recently modified. Use a more specific pattern or a subdirectory as path to narrow the search.]"
        );
        let none = render(&[], 0, "", &searched("*.zig", false));
        assert!(
            none.starts_with("No files match `*.zig` in /w.") && none.contains("includeIgnored")
        );
        assert!(!render(&[], 0, "", &searched("*.zig", true)).contains("includeIgnored"));
    }

    /// Deep paths: the listing stops near the output limit and says so.
    #[test]
    fn deep_paths_are_listed_up_to_the_output_limit() {
        let deep = format!("{}/", "d".repeat(3000));
        let found: Vec<Found> = (0..500).map(|i| f(&format!("{deep}{i}"), i)).collect();
        let listed = listing(found, 500, &searched("**/*", false));
        assert!(listed.text.len() <= 65536, "{}", listed.text.len());
        assert_eq!(listed.total, 500);
        assert!(listed.shown < 500 && listed.text.lines().count() == listed.shown + 1);
        assert!(listed.text.ends_with(&format!(
            "\n[Found 500 files; showing the {} most recently modified (the output limit of 65536 bytes). Use a more specific pattern or a subdirectory as path to narrow the search.]",
            listed.shown
        )));
    }

    #[test]
    fn names_are_shown_escaped_one_a_line() {
        let searched = Searched {
            pattern: "*\n",
            dir: Path::new("/w\r"),
            include_ignored: true,
            max_bytes: 65536,
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
            max_bytes: 65536,
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
