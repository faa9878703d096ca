//! Finding a run of lines in a file, with the ladder of SPEC §12: exact, then ignoring trailing
//! whitespace, then ignoring leading and trailing whitespace, then also reading typographic
//! punctuation as ASCII. Each level includes the ones before it.
//!
//! Per level, every distinct file line is interned to a number once, and a run of lines is
//! found with Knuth–Morris–Pratt over those numbers: linear in the file and the run, however
//! repetitive the file is.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::HashMap;

/// How loosely a chunk's lines matched the file's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MatchLevel {
    /// Byte for byte (line endings aside).
    Exact,
    /// Ignoring trailing whitespace.
    TrailingWhitespace,
    /// Ignoring leading and trailing whitespace.
    Whitespace,
    /// Ignoring leading and trailing whitespace, with curly quotes, dashes and odd spaces read
    /// as their ASCII counterparts.
    Punctuation,
}

impl MatchLevel {
    /// Every level, strictest first.
    pub(super) const LADDER: [MatchLevel; 4] = [
        MatchLevel::Exact,
        MatchLevel::TrailingWhitespace,
        MatchLevel::Whitespace,
        MatchLevel::Punctuation,
    ];

    /// The levels for `pattern`, strictest first. Lines that are all whitespace are matched
    /// exactly only: read loosely, any run of blank lines would match them, and a retried patch
    /// could not tell it was applied already.
    pub(super) fn ladder_for(pattern: &[&str]) -> &'static [MatchLevel] {
        if pattern.iter().all(|line| line.trim().is_empty()) {
            &Self::LADDER[..1]
        } else {
            &Self::LADDER
        }
    }

    /// How the lines differed, for a note: `ignoring trailing whitespace`.
    pub fn describe(self) -> &'static str {
        match self {
            MatchLevel::Exact => "exactly",
            MatchLevel::TrailingWhitespace => "ignoring trailing whitespace",
            MatchLevel::Whitespace => "ignoring leading and trailing whitespace",
            MatchLevel::Punctuation => {
                "ignoring whitespace at the ends and reading typographic punctuation as ASCII"
            }
        }
    }

    fn index(self) -> usize {
        self as usize
    }

    /// A line as this level compares it.
    pub(super) fn normalize(self, line: &str) -> Cow<'_, str> {
        match self {
            MatchLevel::Exact => Cow::Borrowed(line),
            MatchLevel::TrailingWhitespace => Cow::Borrowed(line.trim_end()),
            MatchLevel::Whitespace => Cow::Borrowed(line.trim()),
            MatchLevel::Punctuation => {
                let trimmed = line.trim();
                if trimmed.chars().any(|c| ascii_for(c).is_some()) {
                    Cow::Owned(
                        trimmed
                            .chars()
                            .map(|c| ascii_for(c).unwrap_or(c))
                            .collect::<String>()
                            .trim()
                            .to_owned(),
                    )
                } else {
                    Cow::Borrowed(trimmed)
                }
            }
        }
    }
}

/// The ASCII character a typographic one stands for, if it is one of them.
fn ascii_for(c: char) -> Option<char> {
    Some(match c {
        // Hyphens, dashes, the minus sign.
        '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
        // Single quotes and apostrophes.
        '\u{2018}'..='\u{201B}' | '\u{2032}' => '\'',
        // Double quotes.
        '\u{201C}'..='\u{201F}' | '\u{2033}' => '"',
        // No-break, fixed-width and other odd spaces.
        '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
        _ => return None,
    })
}

/// A file's lines, searchable at every level.
pub(super) struct Haystack<'t> {
    lines: Vec<&'t str>,
    interned: [OnceCell<Interned<'t>>; 4],
}

/// The lines of a file at one level, as numbers: equal numbers, equal normalized lines.
struct Interned<'t> {
    ids: Vec<u32>,
    table: HashMap<Cow<'t, str>, u32>,
}

impl<'t> Haystack<'t> {
    pub fn new(lines: Vec<&'t str>) -> Self {
        Haystack {
            lines,
            interned: Default::default(),
        }
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn line(&self, index: usize) -> &'t str {
        self.lines[index]
    }

    fn interned(&self, level: MatchLevel) -> &Interned<'t> {
        self.interned[level.index()].get_or_init(|| {
            let mut table: HashMap<Cow<'t, str>, u32> = HashMap::new();
            let ids = self
                .lines
                .iter()
                .map(|line| {
                    let next = table.len() as u32;
                    *table.entry(level.normalize(line)).or_insert(next)
                })
                .collect();
            Interned { ids, table }
        })
    }

    /// The pattern as numbers of this level, or `None` when one of its lines is in no file line.
    fn pattern_ids(&self, pattern: &[&str], level: MatchLevel) -> Option<Vec<u32>> {
        let table = &self.interned(level).table;
        pattern
            .iter()
            .map(|line| table.get(level.normalize(line).as_ref()).copied())
            .collect()
    }

    /// The start of every occurrence of a non-empty `pattern` at `level` that starts at or
    /// after `from`, overlapping ones included, in order.
    pub fn occurrences(&self, pattern: &[&str], level: MatchLevel, from: usize) -> Vec<usize> {
        debug_assert!(!pattern.is_empty());
        if from >= self.len() || pattern.len() > self.len() - from {
            return Vec::new();
        }
        let Some(needle) = self.pattern_ids(pattern, level) else {
            return Vec::new();
        };
        let hay = &self.interned(level).ids[from..];
        kmp_all(hay, &needle)
            .into_iter()
            .map(|i| i + from)
            .collect()
    }

    /// True when `pattern` occurs at `at` at `level`.
    pub fn matches_at(&self, pattern: &[&str], level: MatchLevel, at: usize) -> bool {
        at.checked_add(pattern.len())
            .is_some_and(|end| end <= self.len())
            && pattern
                .iter()
                .zip(&self.lines[at..])
                .all(|(p, line)| level.normalize(p) == level.normalize(line))
    }
}

/// Every start of `needle` in `hay` (both non-empty), overlapping ones included.
fn kmp_all(hay: &[u32], needle: &[u32]) -> Vec<usize> {
    let mut border = vec![0usize; needle.len()];
    let mut k = 0;
    for i in 1..needle.len() {
        while k > 0 && needle[i] != needle[k] {
            k = border[k - 1];
        }
        if needle[i] == needle[k] {
            k += 1;
        }
        border[i] = k;
    }
    let mut found = Vec::new();
    let mut k = 0;
    for (i, &id) in hay.iter().enumerate() {
        while k > 0 && id != needle[k] {
            k = border[k - 1];
        }
        if id == needle[k] {
            k += 1;
        }
        if k == needle.len() {
            found.push(i + 1 - k);
            k = border[k - 1];
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const NONE: [usize; 0] = [];

    fn hay<'a>(lines: &[&'a str]) -> Haystack<'a> {
        Haystack::new(lines.to_vec())
    }

    #[test]
    fn each_level_includes_the_ones_before() {
        let h = hay(&["  fn main() {  ", "\tlet s = “hi” — ok;", "}"]);
        assert_eq!(
            h.occurrences(&["  fn main() {"], MatchLevel::Exact, 0),
            NONE
        );
        assert_eq!(
            h.occurrences(&["  fn main() {"], MatchLevel::TrailingWhitespace, 0),
            [0]
        );
        assert_eq!(
            h.occurrences(&["fn main() {"], MatchLevel::TrailingWhitespace, 0),
            NONE
        );
        assert_eq!(
            h.occurrences(&["fn main() {"], MatchLevel::Whitespace, 0),
            [0]
        );
        let ascii = ["fn main() {", "let s = \"hi\" - ok;"];
        assert_eq!(h.occurrences(&ascii, MatchLevel::Whitespace, 0), NONE);
        assert_eq!(h.occurrences(&ascii, MatchLevel::Punctuation, 0), [0]);
        assert!(h.matches_at(&ascii, MatchLevel::Punctuation, 0));
        assert!(!h.matches_at(&ascii, MatchLevel::Whitespace, 0));
    }

    #[test]
    fn punctuation_level_maps_odd_spaces_and_quotes() {
        let normalize = |s| MatchLevel::Punctuation.normalize(s).into_owned();
        assert_eq!(
            normalize("\u{a0}it\u{2019}s\u{2009}a \u{2018}x\u{2019}\u{2003}"),
            "it's a 'x'"
        );
        assert_eq!(normalize("a \u{2013} b \u{2212} c"), "a - b - c");
        assert_eq!(normalize("say \u{201C}hi\u{201D}"), "say \"hi\"");
    }

    #[test]
    fn overlapping_and_from() {
        let h = hay(&["a", "a", "a", "b", "a", "a"]);
        assert_eq!(h.occurrences(&["a", "a"], MatchLevel::Exact, 0), [0, 1, 4]);
        assert_eq!(h.occurrences(&["a", "a"], MatchLevel::Exact, 1), [1, 4]);
        assert_eq!(h.occurrences(&["a", "a"], MatchLevel::Exact, 5), NONE);
        assert_eq!(h.occurrences(&["a", "a"], MatchLevel::Exact, 9), NONE);
        assert_eq!(h.occurrences(&["c"], MatchLevel::Exact, 0), NONE);
        assert!(!h.matches_at(&["a", "a"], MatchLevel::Exact, 5));
    }

    #[test]
    fn repetitive_file_and_long_pattern_stay_linear() {
        let lines = vec!["}"; 200_000];
        let h = Haystack::new(lines.clone());
        let mut pattern = vec!["}"; 5_000];
        pattern.push("{");
        assert_eq!(
            h.occurrences(&pattern, MatchLevel::Exact, 0),
            Vec::<usize>::new()
        );
        assert_eq!(
            h.occurrences(&lines[..5_000], MatchLevel::Exact, 0).len(),
            195_001
        );
    }

    proptest! {
        #[test]
        fn occurrences_agree_with_a_naive_scan(
            lines in proptest::collection::vec("[ab ]{0,3}", 0..20),
            pattern in proptest::collection::vec("[ab ]{0,3}", 1..4),
            from in 0usize..22,
            level in proptest::sample::select(MatchLevel::LADDER.to_vec()),
        ) {
            let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
            let pattern: Vec<&str> = pattern.iter().map(String::as_str).collect();
            let h = Haystack::new(lines.clone());
            let naive: Vec<usize> = (from..lines.len())
                .filter(|&i| h.matches_at(&pattern, level, i))
                .collect();
            prop_assert_eq!(h.occurrences(&pattern, level, from), naive);
        }
    }
}
