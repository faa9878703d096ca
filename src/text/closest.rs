//! Finding where an `oldString` that was not found probably was meant to be.
//!
//! Lines are compared with all whitespace removed and blank lines skipped, since
//! the commonest miss is an indentation or spacing difference. If no window
//! matches that way, a bounded set of candidate windows (anchored on lines that
//! match exactly, or resembling the needle's most distinctive line) is scored
//! with a similarity ratio.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use similar::{capture_diff_slices_deadline, Algorithm, TextDiff};

/// The region of a text most similar to an `oldString` that was not found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClosestMatch {
    /// 1-based number of the region's first line.
    pub start_line: usize,
    /// The region's lines as they are in the text (tabs kept; only a CRLF
    /// line ending's `\r` is dropped).
    pub lines: Vec<String>,
    /// True when the region equals the `oldString` once whitespace is ignored.
    pub whitespace_only: bool,
}

impl ClosestMatch {
    /// 1-based number of the region's last line.
    pub fn end_line(&self) -> usize {
        self.start_line + self.lines.len().saturating_sub(1)
    }
}

/// Minimum similarity ratio (0..=1) for a fuzzy match to be reported.
const MIN_RATIO: f32 = 0.7;
/// Needle lines shorter than this (normalised) are too common to anchor on.
const MIN_ANCHOR_LEN: usize = 4;
/// Text lines matching one needle line more often than this are ignored as anchors.
const MAX_ANCHOR_HITS: usize = 64;
const MAX_VOTED_CANDIDATES: usize = 32;
const MAX_PROBE_CANDIDATES: usize = 16;
const MIN_PROBE_DICE: f32 = 0.4;
/// Above this many bytes, windows are compared line by line instead of char by char.
const MAX_CHAR_RATIO_BYTES: usize = 16 * 1024;
/// Hint lines shown at most in a not-found message.
const MAX_HINT_LINES: usize = 60;
/// Characters shown at most per hint line.
const MAX_HINT_LINE_CHARS: usize = 500;
const RATIO_TIMEOUT: Duration = Duration::from_millis(20);
const SCORING_BUDGET: Duration = Duration::from_millis(150);

/// Formats one line as `read_file` does: the 1-based number right-aligned to
/// 4 columns, ` | `, then the line.
pub fn numbered_line(n: usize, line: &str) -> String {
    format!("{n:>4} | {line}")
}

impl ClosestMatch {
    /// Where the region is and its lines in `read_file`'s format, for a not-found
    /// message: `The closest match is at lines 3-5 (…):` then the numbered lines
    /// (at most 60, each cut after 500 characters).
    pub fn describe(&self) -> String {
        let (start, end) = (self.start_line, self.end_line());
        let place = if start == end {
            format!("line {start}")
        } else {
            format!("lines {start}-{end}")
        };
        let mut hint = if self.whitespace_only {
            format!("The closest match is at {place} (whitespace or indentation differs):")
        } else {
            format!("The closest match is at {place} (similar, not identical):")
        };
        for (n, line) in (start..).zip(self.lines.iter().take(MAX_HINT_LINES)) {
            hint.push('\n');
            hint.push_str(&numbered_line(
                n,
                &truncate_chars(line, MAX_HINT_LINE_CHARS),
            ));
        }
        if self.lines.len() > MAX_HINT_LINES {
            let more = self.lines.len() - MAX_HINT_LINES;
            hint.push_str(&format!("\n… ({more} more lines)"));
        }
        hint
    }
}

fn truncate_chars(line: &str, max: usize) -> String {
    match line.char_indices().nth(max) {
        None => line.to_owned(),
        Some((cut, _)) => {
            let more = line[cut..].chars().count();
            format!("{}… ({more} more characters)", &line[..cut])
        }
    }
}

/// Finds the region of `text` most similar to `needle`, if one is plausible.
pub(crate) fn find_closest(text: &str, needle: &str) -> Option<ClosestMatch> {
    let needle = NormLines::new(needle);
    if needle.is_empty() {
        return None;
    }
    let hay = NormLines::new(text);
    if hay.is_empty() {
        return None;
    }
    let (start, whitespace_only) = match whitespace_insensitive_match(&hay, &needle) {
        Some(start) => (start, true),
        None => (best_fuzzy_window(&hay, &needle)?, false),
    };
    let end = (start + needle.len()).min(hay.len());
    Some(extract(
        text,
        hay.line_no[start],
        hay.line_no[end - 1],
        whitespace_only,
    ))
}

/// The non-blank lines of a text with all whitespace removed, stored in one
/// buffer, with the 0-based number of the raw line each came from.
struct NormLines {
    buf: String,
    ends: Vec<usize>,
    line_no: Vec<usize>,
}

impl NormLines {
    fn new(text: &str) -> Self {
        let mut lines = NormLines {
            buf: String::with_capacity(text.len()),
            ends: Vec::new(),
            line_no: Vec::new(),
        };
        for (no, line) in text.split('\n').enumerate() {
            let before = lines.buf.len();
            lines
                .buf
                .extend(line.chars().filter(|c| !c.is_whitespace()));
            if lines.buf.len() > before {
                lines.ends.push(lines.buf.len());
                lines.line_no.push(no);
            }
        }
        lines
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.buf[start..self.ends[i]]
    }

    fn range(&self, start: usize, end: usize) -> Vec<&str> {
        (start..end).map(|i| self.get(i)).collect()
    }
}

/// First window of `hay` equal to `needle` ignoring whitespace. The needle's
/// first line may be the tail of a text line and its last line the head of
/// one, since an `oldString` need not start or end at a line boundary.
fn whitespace_insensitive_match(hay: &NormLines, needle: &NormLines) -> Option<usize> {
    let m = needle.len();
    if m > hay.len() {
        return None;
    }
    let first = needle.get(0);
    let last = needle.get(m - 1);
    (0..=hay.len() - m).find(|&i| {
        if m == 1 {
            return hay.get(i).contains(first);
        }
        hay.get(i).ends_with(first)
            && (1..m - 1).all(|j| hay.get(i + j) == needle.get(j))
            && hay.get(i + m - 1).starts_with(last)
    })
}

/// The best-scoring candidate window start (index into `hay`), if its
/// similarity to the needle reaches [`MIN_RATIO`].
fn best_fuzzy_window(hay: &NormLines, needle: &NormLines) -> Option<usize> {
    let candidates = candidate_starts(hay, needle);
    let needle_lines = needle.range(0, needle.len());
    let started = Instant::now();
    let mut best: Option<(f32, usize)> = None;
    for start in candidates {
        if started.elapsed() > SCORING_BUDGET {
            break;
        }
        let end = (start + needle.len()).min(hay.len());
        let ratio = similarity(&needle_lines, &hay.range(start, end));
        let better = match best {
            None => true,
            Some((best_ratio, best_start)) => {
                ratio > best_ratio || (ratio == best_ratio && start < best_start)
            }
        };
        if better {
            best = Some((ratio, start));
        }
    }
    best.filter(|(ratio, _)| *ratio >= MIN_RATIO)
        .map(|(_, start)| start)
}

/// Window starts worth scoring: those where several needle lines match text
/// lines exactly, then those whose line at the needle's most distinctive
/// line's position resembles it.
fn candidate_starts(hay: &NormLines, needle: &NormLines) -> Vec<usize> {
    let mut starts = anchored_starts(hay, needle);
    starts.truncate(MAX_VOTED_CANDIDATES);
    for start in probe_starts(hay, needle) {
        if !starts.contains(&start) {
            starts.push(start);
        }
    }
    starts
}

fn anchored_starts(hay: &NormLines, needle: &NormLines) -> Vec<usize> {
    let mut positions: HashMap<&str, Vec<usize>> = HashMap::new();
    for j in 0..needle.len() {
        let line = needle.get(j);
        if line.len() >= MIN_ANCHOR_LEN {
            positions.entry(line).or_default().push(j);
        }
    }
    let mut hits: HashMap<&str, usize> = HashMap::new();
    let mut votes: HashMap<usize, usize> = HashMap::new();
    for i in 0..hay.len() {
        let Some(needle_positions) = positions.get(hay.get(i)) else {
            continue;
        };
        let seen = hits.entry(hay.get(i)).or_default();
        *seen += 1;
        if *seen > MAX_ANCHOR_HITS {
            continue;
        }
        for &j in needle_positions.iter().take(MAX_ANCHOR_HITS) {
            *votes.entry(i.saturating_sub(j)).or_default() += 1;
        }
    }
    let mut ranked: Vec<(usize, usize)> = votes.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked.into_iter().map(|(start, _)| start).collect()
}

fn probe_starts(hay: &NormLines, needle: &NormLines) -> Vec<usize> {
    let (probe_index, probe) = (0..needle.len())
        .map(|j| (j, needle.get(j)))
        .max_by_key(|(j, line)| (line.len(), std::cmp::Reverse(*j)))
        .expect("needle is not empty");
    let probe = Bigrams::new(probe);
    let mut scored: Vec<(f32, usize)> = (0..hay.len())
        .filter_map(|i| {
            let dice = probe.dice(hay.get(i))?;
            (dice >= MIN_PROBE_DICE).then(|| (dice, i.saturating_sub(probe_index)))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.dedup_by_key(|(_, start)| *start);
    scored
        .into_iter()
        .take(MAX_PROBE_CANDIDATES)
        .map(|(_, start)| start)
        .collect()
}

/// Byte bigrams of a line, as a bitmap, for a cheap approximate Dice
/// coefficient against other lines.
struct Bigrams {
    bits: Vec<u64>,
    count: usize,
    len: usize,
}

impl Bigrams {
    fn new(line: &str) -> Self {
        let mut bits = vec![0u64; 1 << 10];
        let bytes = line.as_bytes();
        for pair in bytes.windows(2) {
            let key = bigram_key(pair);
            bits[key >> 6] |= 1 << (key & 63);
        }
        Bigrams {
            bits,
            count: bytes.len().saturating_sub(1),
            len: bytes.len(),
        }
    }

    fn contains(&self, pair: &[u8]) -> bool {
        let key = bigram_key(pair);
        self.bits[key >> 6] & (1 << (key & 63)) != 0
    }

    /// Approximate Dice coefficient, or `None` when the lengths alone rule the
    /// line out.
    fn dice(&self, line: &str) -> Option<f32> {
        let bytes = line.as_bytes();
        if bytes.len() * 3 < self.len || bytes.len() > self.len * 3 + 8 {
            return None;
        }
        let other = bytes.len().saturating_sub(1);
        if self.count + other == 0 {
            return Some(if bytes == b"" { 1.0 } else { 0.0 });
        }
        let shared = bytes.windows(2).filter(|p| self.contains(p)).count();
        Some(2.0 * shared.min(self.count) as f32 / (self.count + other) as f32)
    }
}

fn bigram_key(pair: &[u8]) -> usize {
    (usize::from(pair[0]) << 8) | usize::from(pair[1])
}

/// Similarity ratio of two runs of normalised lines: by chars when small
/// enough, by whole lines otherwise; bounded in time either way.
fn similarity(a: &[&str], b: &[&str]) -> f32 {
    let (a_len, b_len) = (joined_len(a), joined_len(b));
    if a_len + b_len <= MAX_CHAR_RATIO_BYTES {
        TextDiff::configure()
            .algorithm(Algorithm::Myers)
            .timeout(RATIO_TIMEOUT)
            .diff_chars(a.join("\n").as_str(), b.join("\n").as_str())
            .ratio()
    } else {
        let deadline = Instant::now() + RATIO_TIMEOUT;
        let ops = capture_diff_slices_deadline(Algorithm::Myers, a, b, Some(deadline));
        similar::diff_ratio(&ops, a.len(), b.len())
    }
}

fn joined_len(lines: &[&str]) -> usize {
    lines.iter().map(|l| l.len() + 1).sum()
}

/// Builds the match from raw lines `first..=last` (0-based) of `text`.
fn extract(text: &str, first: usize, last: usize, whitespace_only: bool) -> ClosestMatch {
    let lines = text
        .split('\n')
        .skip(first)
        .take(last - first + 1)
        .map(|line| line.strip_suffix('\r').unwrap_or(line).to_owned())
        .collect();
    ClosestMatch {
        start_line: first + 1,
        lines,
        whitespace_only,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const SOURCE: &str = "fn main() {\n\tlet x = 1;\n\tif x > 0 {\n\t\tprintln!(\"positive\");\n\t}\n}\n\nfn helper(a: u32) -> u32 {\n\ta * 2\n}\n";

    #[test]
    fn hint_truncates_long_lines_and_many_lines() {
        let closest = ClosestMatch {
            start_line: 9,
            lines: vec!["é".repeat(MAX_HINT_LINE_CHARS + 3); MAX_HINT_LINES + 2],
            whitespace_only: true,
        };
        let message = format!(
            "edit 1: oldString not found in file\n{}",
            closest.describe()
        );
        let lines: Vec<&str> = message.lines().collect();
        assert_eq!(lines.len(), 2 + MAX_HINT_LINES + 1);
        assert!(lines[2].starts_with("   9 | éé"));
        assert!(lines[2].ends_with("é… (3 more characters)"));
        assert_eq!(lines.last().unwrap(), &"… (2 more lines)");
    }

    #[test]
    fn numbered_line_matches_read_file_format() {
        assert_eq!(numbered_line(7, "\tx"), "   7 | \tx");
        assert_eq!(numbered_line(12345, ""), "12345 | ");
    }

    #[test]
    fn indentation_mismatch_is_whitespace_only() {
        let needle = "    if x > 0 {\n        println!(\"positive\");\n    }";
        let found = find_closest(SOURCE, needle).unwrap();
        assert_eq!(found.start_line, 3);
        assert_eq!(found.end_line(), 5);
        assert_eq!(
            found.lines,
            ["\tif x > 0 {", "\t\tprintln!(\"positive\");", "\t}"]
        );
        assert!(found.whitespace_only);
    }

    #[test]
    fn blank_lines_and_partial_lines_are_tolerated() {
        let needle = "x = 1;\n\n\n  if x>0 {";
        let found = find_closest(SOURCE, needle).unwrap();
        assert_eq!((found.start_line, found.end_line()), (2, 3));
        assert!(found.whitespace_only);
    }

    #[test]
    fn typo_is_a_fuzzy_match() {
        let needle = "fn helper(a: u32) -> u32 {\n    a * 3\n}";
        let found = find_closest(SOURCE, needle).unwrap();
        assert_eq!(found.start_line, 8);
        assert_eq!(found.lines, ["fn helper(a: u32) -> u32 {", "\ta * 2", "}"]);
        assert!(!found.whitespace_only);
    }

    #[test]
    fn wrong_first_line_still_found_via_anchors() {
        let needle = "fn mian() -> Result<()> {\n    let x = 1;\n    if x > 0 {";
        let found = find_closest(SOURCE, needle).unwrap();
        assert_eq!((found.start_line, found.end_line()), (1, 3));
    }

    #[test]
    fn garbage_has_no_match() {
        assert_eq!(
            find_closest(SOURCE, "qwertyuiop zxcvbnm\nlorem ipsum"),
            None
        );
        assert_eq!(find_closest(SOURCE, "   \n\t"), None);
        assert_eq!(find_closest("", "abc"), None);
    }

    #[test]
    fn crlf_line_endings_are_not_shown() {
        let found = find_closest("a\r\n  bb\r\nc\r\n", "bb\nc").unwrap();
        assert_eq!(found.lines, ["  bb", "c"]);
    }

    #[test]
    fn large_text_stays_fast_enough() {
        let line = "    let value = compute(input, 42); // some comment here\n";
        let mut text = line.repeat(40_000);
        text.push_str("    let unique = other_thing(7);\n");
        let found = find_closest(&text, "let unique = other_thing(8);").unwrap();
        assert_eq!(found.start_line, 40_001);
        assert_eq!(find_closest(&text, "completely unrelated words"), None);
    }

    proptest! {
        #[test]
        fn reported_lines_are_the_texts_lines(text in "[ab \t\r\né]{0,40}", needle in "[ab \t\r\né]{1,12}") {
            if let Some(found) = find_closest(&text, &needle) {
                let lines: Vec<&str> = text.split('\n').collect();
                prop_assert!(found.start_line >= 1 && found.end_line() <= lines.len());
                for (offset, line) in found.lines.iter().enumerate() {
                    let raw = lines[found.start_line - 1 + offset];
                    prop_assert_eq!(line.as_str(), raw.strip_suffix('\r').unwrap_or(raw));
                }
            }
        }
    }
}
