//! Finding a run of lines in a file, with apply_patch's ladder (../../../docs/tools.md#apply_patch): exact, then ignoring trailing
//! whitespace, then ignoring leading and trailing whitespace, then also reading typographic
//! punctuation as ASCII. Each level includes the ones before it.
//!
//! Per level, every distinct file line is interned to a number once and the lines of each
//! number are listed ([`Haystack`]); a run of lines is found from there ([`Candidates`]).

use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::HashMap;

use aho_corasick::AhoCorasick;
use foldhash::fast::RandomState;

use super::candidates::Candidates;

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
///
/// Each level's index is built once, on first use: every line's normalised form interned to a
/// number, and for each number the lines that have it. A run of lines is then found by checking
/// the lines where its rarest line is (or, when that line is everywhere, by Knuth–Morris–Pratt
/// over the numbers): a chunk costs about what it could match, not the rest of the file, so a
/// patch of many chunks stays near-linear.
pub(super) struct Haystack<'t> {
    lines: Vec<&'t str>,
    levels: [OnceCell<LevelIndex<'t>>; 4],
    /// The anchors (`@@ <line>`) of the chunks, as [`MatchLevel::Punctuation`] reads them, and
    /// (built once, on first use) the lines that contain each.
    anchors: Vec<String>,
    containing: OnceCell<HashMap<String, Vec<u32>>>,
}

/// The lines of a file at one level, as numbers: equal numbers, equal normalized lines.
struct LevelIndex<'t> {
    ids: Vec<u32>,
    table: HashMap<Cow<'t, str>, u32, RandomState>,
    /// The lines of number `id` are `lines_of[starts[id]..starts[id + 1]]`, in order.
    starts: Vec<u32>,
    lines_of: Vec<u32>,
}

impl<'t> LevelIndex<'t> {
    fn build(lines: &[&'t str], level: MatchLevel) -> Self {
        let mut table: HashMap<Cow<'t, str>, u32, RandomState> =
            HashMap::with_capacity_and_hasher(lines.len(), RandomState::default());
        let ids: Vec<u32> = lines
            .iter()
            .map(|line| {
                let next = table.len() as u32;
                *table.entry(level.normalize(line)).or_insert(next)
            })
            .collect();
        let mut starts = vec![0u32; table.len() + 1];
        for &id in &ids {
            starts[id as usize + 1] += 1;
        }
        for i in 1..starts.len() {
            starts[i] += starts[i - 1];
        }
        let mut filled = starts.clone();
        let mut lines_of = vec![0u32; ids.len()];
        for (line, &id) in ids.iter().enumerate() {
            lines_of[filled[id as usize] as usize] = line as u32;
            filled[id as usize] += 1;
        }
        LevelIndex {
            ids,
            table,
            starts,
            lines_of,
        }
    }

    fn id_of(&self, line: &str, level: MatchLevel) -> Option<u32> {
        self.table.get(level.normalize(line).as_ref()).copied()
    }

    /// The lines whose number is `id`, in order.
    fn lines_of(&self, id: u32) -> &[u32] {
        let id = id as usize;
        &self.lines_of[self.starts[id] as usize..self.starts[id + 1] as usize]
    }
}

impl<'t> Haystack<'t> {
    /// The file's `lines`; `anchors` are the `@@` lines its chunks name (any other anchor is
    /// found too, by a scan of the file).
    pub fn new<'a>(lines: Vec<&'t str>, anchors: impl IntoIterator<Item = &'a str>) -> Self {
        let mut normalized: Vec<String> = anchors
            .into_iter()
            .map(|a| MatchLevel::Punctuation.normalize(a).into_owned())
            .collect();
        normalized.sort_unstable();
        normalized.dedup();
        Haystack {
            lines,
            levels: Default::default(),
            anchors: normalized,
            containing: OnceCell::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether any level's index has been built.
    #[cfg(test)]
    pub fn is_indexed(&self) -> bool {
        self.levels.iter().any(|level| level.get().is_some())
    }

    fn level(&self, level: MatchLevel) -> &LevelIndex<'t> {
        self.levels[level.index()].get_or_init(|| LevelIndex::build(&self.lines, level))
    }

    /// The start of every occurrence of a non-empty `pattern` at `level` that starts at or
    /// after `from`, overlapping ones included, in order, found lazily: taking the first few
    /// costs about what checking them costs.
    pub fn candidates(&self, pattern: &[&str], level: MatchLevel, from: usize) -> Candidates<'_> {
        debug_assert!(!pattern.is_empty());
        let n = self.len();
        if from >= n || pattern.len() > n - from {
            return Candidates::none();
        }
        let index = self.level(level);
        let Some(needle) = pattern
            .iter()
            .map(|line| index.id_of(line, level))
            .collect::<Option<Vec<u32>>>()
        else {
            return Candidates::none();
        };
        Candidates::new(&index.ids, needle, from, |id| index.lines_of(id))
    }

    /// The first occurrence of `pattern` at `level` at or after `from`.
    pub fn first(&self, pattern: &[&str], level: MatchLevel, from: usize) -> Option<usize> {
        self.candidates(pattern, level, from).next()
    }

    /// Every occurrence of `pattern` at `level` at or after `from`, in order.
    #[cfg(test)]
    pub fn occurrences(&self, pattern: &[&str], level: MatchLevel, from: usize) -> Vec<usize> {
        self.candidates(pattern, level, from).collect()
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

    /// The lines equal to `line` at `level`, in order.
    pub fn lines_equal_to(&self, line: &str, level: MatchLevel) -> &[u32] {
        let index = self.level(level);
        index
            .id_of(line, level)
            .map_or(&[], |id| index.lines_of(id))
    }

    /// The lines that contain `anchor`, both read as [`MatchLevel::Punctuation`] reads them, in
    /// order.
    pub fn lines_containing(&self, anchor: &str) -> Cow<'_, [u32]> {
        let wanted = MatchLevel::Punctuation.normalize(anchor);
        match self.containing().get(wanted.as_ref()) {
            Some(found) => Cow::Borrowed(found),
            None => Cow::Owned(
                (0..self.len())
                    .filter(|&i| {
                        MatchLevel::Punctuation
                            .normalize(self.lines[i])
                            .contains(wanted.as_ref())
                    })
                    .map(|i| i as u32)
                    .collect(),
            ),
        }
    }

    /// For every anchor given to [`Haystack::new`], the lines containing it: one pass of
    /// Aho–Corasick over the file's distinct lines, however many anchors there are.
    fn containing(&self) -> &HashMap<String, Vec<u32>> {
        self.containing.get_or_init(|| {
            let index = self.level(MatchLevel::Punctuation);
            let mut found: HashMap<String, Vec<u32>> = HashMap::new();
            let (empty, patterns): (Vec<&String>, Vec<&String>) =
                self.anchors.iter().partition(|a| a.is_empty());
            if !empty.is_empty() {
                found.insert(String::new(), (0..self.len() as u32).collect());
            }
            let Ok(automaton) = AhoCorasick::new(&patterns) else {
                return found;
            };
            // The distinct lines holding each pattern, then their lines in the file.
            let mut ids_of: Vec<Vec<u32>> = vec![Vec::new(); patterns.len()];
            for (text, &id) in &index.table {
                for hit in automaton.find_overlapping_iter(text.as_ref()) {
                    let ids = &mut ids_of[hit.pattern().as_usize()];
                    if ids.last() != Some(&id) {
                        ids.push(id);
                    }
                }
            }
            for (pattern, ids) in patterns.into_iter().zip(ids_of) {
                let mut lines: Vec<u32> = ids
                    .into_iter()
                    .flat_map(|id| index.lines_of(id).iter().copied())
                    .collect();
                lines.sort_unstable();
                found.insert(pattern.clone(), lines);
            }
            found
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const NONE: [usize; 0] = [];
    const NONE32: [u32; 0] = [];

    fn hay<'a>(lines: &[&'a str]) -> Haystack<'a> {
        Haystack::new(lines.to_vec(), [])
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
        let h = Haystack::new(lines.clone(), []);
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

    #[test]
    fn lines_equal_to_and_containing_an_anchor() {
        let lines = [
            "fn main() {",
            "  fn main() {",
            "fn main_loop() {",
            "x",
            "say \u{201C}fn main\u{201D}",
        ];
        let h = Haystack::new(lines.to_vec(), ["fn main", "\"fn main\"", "nowhere"]);
        assert_eq!(h.lines_equal_to("fn main() {", MatchLevel::Exact), [0]);
        assert_eq!(
            h.lines_equal_to("fn main() {", MatchLevel::Whitespace),
            [0, 1]
        );
        assert_eq!(h.lines_equal_to("y", MatchLevel::Whitespace), NONE32);
        assert_eq!(&*h.lines_containing("fn main"), [0, 1, 2, 4]);
        assert_eq!(&*h.lines_containing("\u{201C}fn main\u{201D}"), [4]);
        assert_eq!(&*h.lines_containing("nowhere"), NONE32);
        // An anchor not given up front is found by a scan, the same way.
        assert_eq!(&*h.lines_containing("main_"), [2]);
        assert_eq!(&*h.lines_containing(""), [0, 1, 2, 3, 4]);
    }

    proptest! {
        #[test]
        fn lines_containing_agree_with_a_scan(
            lines in proptest::collection::vec("[ab\u{2019}' ]{0,4}", 0..20),
            anchors in proptest::collection::vec("[ab\u{2019}' ]{0,3}", 0..4),
        ) {
            let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
            let h = Haystack::new(lines.clone(), anchors.iter().map(String::as_str));
            for anchor in &anchors {
                let wanted = MatchLevel::Punctuation.normalize(anchor);
                let scan: Vec<u32> = (0..lines.len() as u32)
                    .filter(|&i| MatchLevel::Punctuation.normalize(lines[i as usize]).contains(wanted.as_ref()))
                    .collect();
                prop_assert_eq!(&*h.lines_containing(anchor), &scan[..]);
            }
        }

        #[test]
        fn occurrences_agree_with_a_naive_scan(
            lines in proptest::collection::vec("[ab ]{0,3}", 0..20),
            pattern in proptest::collection::vec("[ab ]{0,3}", 1..4),
            from in 0usize..22,
            level in proptest::sample::select(MatchLevel::LADDER.to_vec()),
        ) {
            let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
            let pattern: Vec<&str> = pattern.iter().map(String::as_str).collect();
            let h = Haystack::new(lines.clone(), []);
            let naive: Vec<usize> = (from..lines.len())
                .filter(|&i| h.matches_at(&pattern, level, i))
                .collect();
            prop_assert_eq!(h.occurrences(&pattern, level, from), naive);
        }
    }
}
