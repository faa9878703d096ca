//! What the searched files contributed, kept only as far as it can be shown.
//!
//! Files finish in any order on the walk's threads, but the output is in path order and
//! bounded; so after each file, the files at the end (in path order) that can no longer be
//! shown are dropped. Memory then stays within the bounds whatever the size of the tree, and
//! the search knows when a file sorts after everything that can be shown.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::Bounds;

/// One line of a file's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Line {
    Match(u64, String),
    Context(u64, String),
    /// `--` between non-adjacent groups of context.
    Break,
}

/// What one file contributed.
#[derive(Debug, Default, Clone)]
pub(super) struct FileHits {
    pub(super) lines: Vec<Line>,
    pub(super) matches: usize,
    /// The size of `lines` as rendered (approximately).
    pub(super) bytes: usize,
    /// The search stopped before the end of the file: it has more matches than kept.
    pub(super) more: bool,
}

/// The files that can still be shown, by path, and whether anything was left out.
#[derive(Debug, Default)]
pub struct Collected {
    pub(super) files: BTreeMap<PathBuf, FileHits>,
    matches: usize,
    bytes: usize,
    /// Some matches were found that will not be shown.
    pub(super) more: bool,
}

impl Collected {
    /// Whether the bounds are reached (a full result stays full: see [`Self::add`]).
    pub(super) fn is_full(&self, bounds: &Bounds) -> bool {
        self.matches >= bounds.max_matches || self.bytes >= bounds.max_bytes
    }

    /// Whether a file at `rel` would sort after everything that can be shown.
    pub(super) fn is_past_the_end(&self, rel: &Path, bounds: &Bounds) -> bool {
        self.is_full(bounds)
            && self
                .files
                .last_key_value()
                .is_some_and(|(last, _)| rel > last.as_path())
    }

    /// Adds a file with matches, then drops the files at the end that can no longer be shown
    /// (only while the rest still reach the bounds: a full result stays full).
    pub(super) fn add(&mut self, rel: PathBuf, hits: FileHits, bounds: &Bounds) {
        self.matches += hits.matches;
        self.bytes += hits.bytes;
        self.more |= hits.more;
        self.files.insert(rel, hits);
        while self.files.len() > 1 {
            let Some((_, last)) = self.files.last_key_value() else {
                break;
            };
            if self.matches - last.matches < bounds.max_matches
                && self.bytes - last.bytes < bounds.max_bytes
            {
                break;
            }
            let (_, last) = self.files.pop_last().expect("not empty");
            self.matches -= last.matches;
            self.bytes -= last.bytes;
            self.more = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::bounds;
    use super::*;

    #[test]
    fn collected_keeps_only_what_can_be_shown() {
        let b = bounds(2, 65536, 0);
        let mut c = Collected::default();
        let one = || FileHits {
            lines: vec![Line::Match(1, "x".into())],
            matches: 1,
            bytes: 8,
            more: false,
        };
        c.add("m".into(), one(), &b);
        assert!(!c.is_past_the_end(Path::new("z"), &b));
        c.add("z".into(), one(), &b);
        assert!(c.is_past_the_end(Path::new("zz"), &b));
        assert!(!c.is_past_the_end(Path::new("a"), &b));
        c.add("a".into(), one(), &b);
        assert_eq!(
            c.files.keys().collect::<Vec<_>>(),
            [Path::new("a"), Path::new("m")]
        );
        assert!(c.more);
    }
}
