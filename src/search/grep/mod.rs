//! `grep`'s engine: a regex search of file contents with ripgrep's own crates (`grep-regex`,
//! `grep-searcher`), over the same walk as `glob` ([`crate::walk`]: parallel, gitignore-aware,
//! through directory descriptors, never following a symlink).
//!
//! The output is bounded twice, by a match count and by a byte size, and is in path order
//! whatever order the walk's threads finish in. So that memory stays bounded on a huge tree,
//! only the files that can still be shown are kept while searching (the first ones in path
//! order, [`Collected`]), and a file that sorts after a full result is searched at most until
//! its first match (to know that there is more).
//!
//! - this file: the matcher, the bounds, and the search of a tree or of one file;
//! - `file`: the search of one file, the sinks that keep its lines, and how a line is shown;
//! - `whole`: a small file read whole, in one system call where it can be;
//! - `collected`: what the files contributed, trimmed to what can be shown;
//! - `render`: the `path:line: text` output and its notes.

mod collected;
mod file;
mod render;
mod whole;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use grep_matcher::LineTerminator;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};

use super::glob::PathGlob;
use crate::cancel::CancelToken;
use crate::error::{ErrorCode, ToolError};
use crate::paths::fsops;
use crate::paths::shown::{echo, Shown};
use crate::paths::Dir;
use crate::paths::EntryKind;
use crate::paths::{Sandbox, Target};
use crate::progress::Meter;
use crate::walk::{self, WalkOptions};
pub use collected::Collected;
use file::{has_match, search_file, OpenFile};
pub use render::{output, Cut, Rendered, Searched};

/// A line longer than this makes the file unsearchable (it is skipped).
const HEAP_LIMIT: usize = 64 * 1024 * 1024;

/// The regex, line-oriented (it never matches across lines; `$` also matches before `\r\n`).
/// `tool` is the host's name of the searching tool, for the message of a bad pattern.
pub fn build_matcher(
    pattern: &str,
    case_insensitive: bool,
    tool: &str,
) -> Result<RegexMatcher, ToolError> {
    RegexMatcherBuilder::new()
        .case_insensitive(case_insensitive)
        .crlf(true)
        .ban_byte(Some(0))
        .build(pattern)
        .map_err(|e| {
            let literal = echo(&escape_regex(pattern)).into_owned();
            let next = if literal.len() <= MAX_LITERAL_SHOWN {
                format!("escape its special characters: pattern `{literal}`")
            } else {
                "escape ( ) [ ] { } . * + ? | ^ $ \\ with a backslash".to_owned()
            };
            ToolError::invalid(format!(
                "{tool}: invalid arguments: pattern: not a valid regular expression ({}); to search for the text as written, {next}",
                regex_problem(&e.to_string())
            ))
        })
}

/// The longest literal form of a bad pattern quoted back.
const MAX_LITERAL_SHOWN: usize = 300;

/// What is wrong with a regex, in a few words, from the parser's multi-line error (which shows
/// the pattern as the search compiles it, not as the model wrote it).
fn regex_problem(error: &str) -> String {
    let problem = error
        .lines()
        .rev()
        .find_map(|line| line.trim().strip_prefix("error: "))
        .unwrap_or_else(|| error.lines().next().unwrap_or_default().trim());
    echo(problem).chars().take(200).collect()
}

/// `text` with every regex metacharacter escaped, so that it matches itself.
pub fn escape_regex(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

/// The output bounds of one search.
#[derive(Debug, Clone)]
pub struct Bounds {
    /// The most matching lines shown.
    pub max_matches: usize,
    /// The most bytes of output.
    pub max_bytes: usize,
    /// Lines shown before and after each match.
    pub context: usize,
}

impl Bounds {
    fn searcher(&self) -> Searcher {
        SearcherBuilder::new()
            .line_terminator(LineTerminator::crlf())
            .line_number(true)
            .binary_detection(BinaryDetection::quit(0))
            .before_context(self.context)
            .after_context(self.context)
            .heap_limit(Some(HEAP_LIMIT))
            .build()
    }
}

/// The directory being searched.
pub struct Tree<'a> {
    pub target: &'a Target,
    /// Only files matching this are searched.
    pub include: Option<&'a PathGlob>,
    pub include_ignored: bool,
}

/// A searcher, its matcher and the buffer files are read into: each of the walk's threads has
/// its own.
struct Worker {
    searcher: Searcher,
    matcher: RegexMatcher,
    buffer: Vec<u8>,
}

/// Searches the text files below `dir` (open, at `tree.target`). Files that cannot be read or
/// change while searched are skipped, like `rg` does. `progress` counts the files searched.
pub fn search_tree(
    dir: Dir,
    tree: &Tree<'_>,
    sandbox: &Sandbox,
    matcher: &RegexMatcher,
    bounds: &Bounds,
    cancel: &CancelToken,
    progress: &Meter,
) -> Result<Collected, ToolError> {
    let collected = Mutex::new(Collected::default());
    let lock = || collected.lock().unwrap_or_else(|e| e.into_inner());
    // Set once the output is full (it then stays full): until then no file is past the end, and
    // the threads need not take the lock to know it.
    let full = AtomicBool::new(false);
    let options = WalkOptions {
        sandbox,
        include_ignored: tree.include_ignored,
        limit: None, // the first files in path order are kept as they are found
        cancel,
    };
    let opener = fsops::SearchOpener::default();
    let new_worker = || Worker {
        searcher: bounds.searcher(),
        matcher: matcher.clone(),
        buffer: Vec::new(),
    };
    walk::walk_with(dir, tree.target, &options, new_worker, |worker, entry| {
        let rel = entry.rel;
        if entry.kind != EntryKind::File || tree.include.is_some_and(|g| !g.is_match(rel)) {
            return None::<()>;
        }
        let (past_the_end, more_known) = if full.load(Ordering::Relaxed) {
            let c = lock();
            (c.is_past_the_end(rel, bounds), c.more)
        } else {
            (false, false)
        };
        if past_the_end && more_known {
            return None;
        }
        let Ok(file) = open_regular(&opener, entry) else {
            return None; // unreadable or changed since the walk saw it: skipped, like rg
        };
        progress.advance(1);
        let Worker {
            searcher,
            matcher,
            buffer,
        } = worker;
        if past_the_end {
            if has_match(searcher, matcher, file, buffer, cancel) {
                lock().more = true;
            }
        } else {
            let hits = search_file(searcher, matcher, file, buffer, rel, bounds, cancel);
            if let Ok(Some(hits)) = hits {
                if hits.matches > 0 {
                    let mut c = lock();
                    c.add(rel.to_path_buf(), hits, bounds);
                    if c.is_full(bounds) {
                        full.store(true, Ordering::Relaxed);
                    }
                }
            }
        }
        None
    })?;
    Ok(collected.into_inner().unwrap_or_else(|e| e.into_inner()))
}

/// Searches the one file `file` (a regular file `size` bytes long when it was `fstat`ed), open
/// at `path`; its lines are labelled with its name.
pub fn search_single_file(
    file: std::fs::File,
    size: u64,
    path: &Path,
    matcher: &RegexMatcher,
    bounds: &Bounds,
    cancel: &CancelToken,
) -> Result<Collected, ToolError> {
    let name = Path::new(path.file_name().unwrap_or_default());
    let mut searcher = bounds.searcher();
    let mut collected = Collected::default();
    let file = OpenFile { file, size };
    match search_file(&mut searcher, matcher, file, &mut Vec::new(), name, bounds, cancel) {
        _ if cancel.is_aborted() => Err(ToolError::aborted()),
        Ok(Some(hits)) => {
            if hits.matches > 0 {
                collected.add(PathBuf::from(name), hits, bounds);
            }
            Ok(collected)
        }
        Ok(None) => Err(ToolError::new(
            ErrorCode::BinaryFile,
            format!(
                "{} is a binary file, and only text files are searched; search a text file or a directory",
                path.shown()
            ),
        )),
        Err(e) => Err(ToolError::io(&e, "search", path)),
    }
}

/// Opens the entry if it is (still) a regular file, through its directory's descriptor and
/// without following a symlink; never blocks on a FIFO.
fn open_regular(opener: &fsops::SearchOpener, entry: &walk::WalkEntry<'_>) -> io::Result<OpenFile> {
    let file = opener.open(entry.dir, entry.name)?;
    let stat = fsops::fstat(&file)?;
    if EntryKind::of(&stat) != EntryKind::File {
        return Err(io::Error::other("not a regular file"));
    }
    Ok(OpenFile {
        file,
        size: stat.size,
    })
}

/// Shared by the tests of the engine's parts: searching strings as files.
#[cfg(test)]
mod testing {
    use std::path::{Path, PathBuf};

    use super::collected::{Collected, FileHits};
    use super::file::Collect;
    use super::{build_matcher, Bounds};

    pub fn bounds(max_matches: usize, max_bytes: usize, context: usize) -> Bounds {
        Bounds {
            max_matches,
            max_bytes,
            context,
        }
    }

    /// Searches `text` as a file with a one-byte label; `None` if it is binary.
    pub fn hits(text: &str, pattern: &str, b: &Bounds) -> Option<FileHits> {
        let matcher = build_matcher(pattern, false, "grep").unwrap();
        let mut searcher = b.searcher();
        let mut sink = Collect::new(&matcher, b, Path::new("x"));
        searcher
            .search_reader(&matcher, text.as_bytes(), &mut sink)
            .unwrap();
        sink.into_hits()
    }

    /// Searches each `(name, text)` as a file and collects those with matches.
    pub fn collect(files: &[(&str, &str)], pattern: &str, b: &Bounds) -> Collected {
        let mut c = Collected::default();
        for (name, text) in files {
            let h = hits(text, pattern, b).unwrap();
            if h.matches > 0 {
                c.add(PathBuf::from(name), h, b);
            }
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One line: what is wrong, and the pattern as the model wrote it, escaped to match itself.
    #[test]
    fn a_bad_regex_is_invalid_arguments_in_one_line_with_the_literal_form() {
        let e = build_matcher("fn (", false, "grep").unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArguments);
        assert_eq!(
            e.message,
            "grep: invalid arguments: pattern: not a valid regular expression (unclosed group); to search for the text as written, escape its special characters: pattern `fn \\(`"
        );
        let e = build_matcher("a[b", false, "grep").unwrap_err();
        assert!(!e.message.contains('\n'), "{}", e.message);
        assert!(e.message.ends_with("pattern `a\\[b`"), "{}", e.message);
        assert!(build_matcher(r"a\nb", false, "grep").is_err());
        assert_eq!(
            escape_regex(r"x.y*(z)|[a]{1}^$\"),
            r"x\.y\*\(z\)\|\[a\]\{1\}\^\$\\"
        );
    }

    /// Searches of real trees about how files are opened (Linux's `O_NOATIME`, `setfsuid`).
    #[cfg(target_os = "linux")]
    mod on_disk {
        use super::super::*;
        use crate::paths::testing;
        use std::fs;

        /// A tree of `(name, text)` files under a temporary directory, every one world-readable.
        fn tree(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
            let dir = tempfile::tempdir().unwrap();
            let root = crate::paths::canonical::canonicalize_existing(dir.path()).unwrap();
            for (name, text) in files {
                fs::write(root.join(name), text).unwrap();
            }
            fs::set_permissions(&root, testing::Modes::from_mode(0o755)).unwrap();
            (dir, root)
        }

        /// The files below `root` with a match of `NEEDLE`, in path order.
        fn files_with_needle(root: &Path) -> Vec<PathBuf> {
            let sandbox = Sandbox::new(root.to_path_buf(), Some(vec![root.to_path_buf()]), vec![]);
            let target = Target {
                path: root.to_path_buf(),
                anchor: root.to_path_buf(),
                inside_root: true,
                exists: true,
            };
            let tree = Tree {
                target: &target,
                include: None,
                include_ignored: false,
            };
            let dir = fsops::open_dir(root, root, true).unwrap();
            let matcher = build_matcher("NEEDLE", false, "grep").unwrap();
            let bounds = Bounds {
                max_matches: 100,
                max_bytes: 1 << 20,
                context: 0,
            };
            let collected = search_tree(
                dir,
                &tree,
                &sandbox,
                &matcher,
                &bounds,
                &CancelToken::new(),
                &Meter::none(),
            )
            .unwrap();
            collected.files.keys().cloned().collect()
        }

        /// A search does not update the access times of the files it reads where the system
        /// lets it (`O_NOATIME` on Linux, on the caller's own files).
        #[test]
        fn a_search_leaves_the_access_times_of_its_own_files_alone() {
            if crate::paths::platform::no_access_time().is_empty() {
                eprintln!("skipped: the portable way (macOS's) keeps no access times alone");
                return;
            }
            let (_dir, root) = tree(&[("a.txt", "one NEEDLE\n"), ("b.txt", "none\n")]);
            // An access time no later than the modification time: any read updates it, even
            // under `relatime`.
            for name in ["a.txt", "b.txt"] {
                testing::set_times(&root.join(name), 1_000_000_000, 0);
            }
            assert_eq!(files_with_needle(&root), [PathBuf::from("a.txt")]);
            for name in ["a.txt", "b.txt"] {
                let stat = testing::lstat(&root.join(name)).unwrap();
                assert_eq!(stat.atime, (1_000_000_000, 0), "{name}");
            }
        }

        /// Files the caller does not own (where `O_NOATIME` is refused) are searched all the
        /// same, and so are its own that come after them. Run as root, whose file-system
        /// identity can be another user's.
        #[test]
        fn a_search_reads_files_it_does_not_own() {
            const NOBODY: u32 = 65534;
            let (_dir, root) = tree(&[
                ("a.txt", "NEEDLE\n"),
                ("b.txt", "NEEDLE\n"),
                ("c.txt", "NEEDLE\n"),
            ]);
            if !made_by_root(&root) {
                eprintln!("skipped: only root can search as another user");
                return;
            }
            // As NOBODY: a.txt and c.txt are its own, b.txt is root's.
            for name in ["a.txt", "c.txt"] {
                testing::chown(root.join(name), Some(NOBODY), None).unwrap();
            }
            let found = testing::as_file_system_user(NOBODY, || files_with_needle(&root));
            let all = ["a.txt", "b.txt", "c.txt"].map(PathBuf::from);
            assert_eq!(found.expect("root takes any identity"), all);
            // The root-owned directory was walked and read as NOBODY (world-readable).
            assert_eq!(files_with_needle(&root), all);
        }

        /// Whether the files just made (by this process) belong to root.
        fn made_by_root(root: &Path) -> bool {
            testing::lstat(&root.join("a.txt")).unwrap().uid == 0
        }
    }
}
