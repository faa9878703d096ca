//! Unified diffs with a time bound.
//!
//! Lines are split on `\n` only, as `patch` and `git apply` do: a `\r` (of a
//! CRLF ending or a stray one) is part of the line's content and is kept.

use std::fmt::Write as _;
use std::ops::Range;
use std::time::{Duration, Instant};

use similar::udiff::UnifiedHunkHeader;
use similar::{
    capture_diff_deadline, capture_diff_slices_deadline, group_diff_ops, Algorithm, ChangeTag,
    DiffOp,
};

use super::delta::Delta;

/// Lines of unchanged context around each change.
const CONTEXT_LINES: usize = 3;

/// A rendered unified diff and its line counts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UnifiedDiff {
    /// `--- old`, `+++ new`, then `@@` hunks; empty when nothing changed.
    pub text: String,
    /// Number of `+` lines.
    pub added: usize,
    /// Number of `-` lines.
    pub removed: usize,
}

/// Diffs `old` against `new` line by line with 3 lines of context.
///
/// The line matching gives up refining after about `timeout` and falls back
/// to a coarser (larger, still correct) diff, so pathological inputs never
/// hang. Applying the hunks to `old` always yields `new`.
pub fn unified_diff(
    old: &str,
    new: &str,
    old_label: &str,
    new_label: &str,
    timeout: Duration,
) -> UnifiedDiff {
    diff_and_maybe_delta(old, new, old_label, new_label, timeout, None).0
}

/// [`unified_diff`], and the [`Delta`] that turns `new` back into `old`, from the same line
/// matching (for undo; no second diff). The delta's byte positions are shifted by `offset`, for
/// text that follows a prefix in the file (a BOM).
pub fn diff_with_delta(
    old: &str,
    new: &str,
    old_label: &str,
    new_label: &str,
    timeout: Duration,
    offset: usize,
) -> (UnifiedDiff, Delta) {
    let (diff, delta) = diff_and_maybe_delta(old, new, old_label, new_label, timeout, Some(offset));
    (diff, delta.unwrap_or_default())
}

/// The diff, and with a delta `offset` the delta too (see [`diff_with_delta`]); a diff alone
/// copies nothing of `old` for a delta it would drop.
fn diff_and_maybe_delta(
    old: &str,
    new: &str,
    old_label: &str,
    new_label: &str,
    timeout: Duration,
    delta_offset: Option<usize>,
) -> (UnifiedDiff, Option<Delta>) {
    if old == new {
        return (UnifiedDiff::default(), None);
    }
    let deadline = Instant::now().checked_add(timeout);
    let old_lines = split_lines(old);
    let new_lines = split_lines(new);
    let ops = capture_diff_slices_deadline(Algorithm::Myers, &old_lines, &new_lines, deadline);
    let delta = delta_offset.map(|offset| delta_of(old, &old_lines, &new_lines, &ops, offset));
    let diff = render(&old_lines, &new_lines, ops, old_label, new_label);
    (diff, delta)
}

/// A run of lines that may differ between two texts: the `old` lines of the old text stand
/// where the `new` lines of the new one are. Lines count from 0, split after each `\n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineSpan {
    /// The lines of the old text.
    pub old: Range<usize>,
    /// The lines of the new text.
    pub new: Range<usize>,
}

/// [`unified_diff`] of two texts that differ only within `spans` (in order, apart): each span
/// is diffed alone and the lines between spans, once checked equal, are context, so a file of
/// many small changes costs what its changes do rather than a diff of the whole file (how
/// `apply_patch` diffs what its chunks changed). Where the texts do not agree outside the spans
/// (a last line that lost or gained its newline outside them), the whole texts are diffed.
pub fn unified_diff_within(
    old: &str,
    new: &str,
    spans: &[LineSpan],
    old_label: &str,
    new_label: &str,
    timeout: Duration,
) -> UnifiedDiff {
    diff_within_and_maybe_delta(old, new, spans, old_label, new_label, timeout, false).0
}

/// [`unified_diff_within`], and the [`Delta`] that turns `new` back into `old`, from the same
/// line matching (for undo of a patched file, as [`diff_with_delta`] for an edit).
pub fn diff_within_with_delta(
    old: &str,
    new: &str,
    spans: &[LineSpan],
    old_label: &str,
    new_label: &str,
    timeout: Duration,
) -> (UnifiedDiff, Delta) {
    let (diff, delta) =
        diff_within_and_maybe_delta(old, new, spans, old_label, new_label, timeout, true);
    (diff, delta.unwrap_or_default())
}

fn diff_within_and_maybe_delta(
    old: &str,
    new: &str,
    spans: &[LineSpan],
    old_label: &str,
    new_label: &str,
    timeout: Duration,
    with_delta: bool,
) -> (UnifiedDiff, Option<Delta>) {
    if old == new {
        return (UnifiedDiff::default(), None);
    }
    let (old_split, new_split) = (Split::new(old), Split::new(new));
    let ops = line_ops_within(&old_split, &new_split, spans, timeout);
    let (old_lines, new_lines) = (&old_split.lines, &new_split.lines);
    let delta = with_delta.then(|| delta_of(old, old_lines, new_lines, &ops, 0));
    (
        render(old_lines, new_lines, ops, old_label, new_label),
        delta,
    )
}

/// The [`Delta`] of [`diff_within_with_delta`] alone, without rendering a diff (for a patched
/// file whose new content is derived again at the commit).
pub fn delta_within(old: &str, new: &str, spans: &[LineSpan], timeout: Duration) -> Delta {
    if old == new {
        return Delta::default();
    }
    let (old_split, new_split) = (Split::new(old), Split::new(new));
    let ops = line_ops_within(&old_split, &new_split, spans, timeout);
    delta_of(old, &old_split.lines, &new_split.lines, &ops, 0)
}

/// The line ops of two texts that differ only within `spans`, or of the whole texts where they
/// do not.
fn line_ops_within(old: &Split, new: &Split, spans: &[LineSpan], timeout: Duration) -> Vec<DiffOp> {
    let deadline = Instant::now().checked_add(timeout);
    ops_within(old, new, spans, deadline).unwrap_or_else(|| {
        capture_diff_slices_deadline(Algorithm::Myers, &old.lines, &new.lines, deadline)
    })
}

/// A text and its lines, split after each `\n`: slices of it, one after the other.
struct Split<'t> {
    text: &'t str,
    lines: Vec<&'t str>,
}

impl<'t> Split<'t> {
    fn new(text: &'t str) -> Self {
        Split {
            text,
            lines: split_lines(text),
        }
    }

    /// The bytes of `lines` together: a run of lines compares with one `memcmp` rather than
    /// one a line.
    fn bytes(&self, lines: Range<usize>) -> &'t [u8] {
        let offset = |line: usize| match self.lines.get(line) {
            Some(start) => start.as_ptr() as usize - self.text.as_ptr() as usize,
            None => self.text.len(),
        };
        &self.text.as_bytes()[offset(lines.start)..offset(lines.end)]
    }
}

/// The line ops of two texts that differ only within `spans`, or `None` when they do not
/// (a line outside the spans differs, or the spans do not fit the texts).
fn ops_within(
    old: &Split,
    new: &Split,
    spans: &[LineSpan],
    deadline: Option<Instant>,
) -> Option<Vec<DiffOp>> {
    let (old_lines, new_lines) = (&old.lines, &new.lines);
    let ends = LineSpan {
        old: old_lines.len()..old_lines.len(),
        new: new_lines.len()..new_lines.len(),
    };
    let mut ops: Vec<DiffOp> = Vec::with_capacity(4 * spans.len() + 1);
    let mut push = |op: DiffOp| match (ops.last_mut(), op) {
        (Some(DiffOp::Equal { len, .. }), DiffOp::Equal { len: more, .. }) => *len += more,
        (_, DiffOp::Equal { len: 0, .. }) => {}
        (_, op) => ops.push(op),
    };
    let (mut old_at, mut new_at) = (0, 0);
    for span in spans.iter().chain([&ends]) {
        let fits = old_at <= span.old.start
            && span.old.start <= span.old.end
            && span.old.end <= old_lines.len()
            && new_at <= span.new.start
            && span.new.start <= span.new.end
            && span.new.end <= new_lines.len()
            && span.old.start - old_at == span.new.start - new_at;
        if !fits || old.bytes(old_at..span.old.start) != new.bytes(new_at..span.new.start) {
            return None;
        }
        push(DiffOp::Equal {
            old_index: old_at,
            new_index: new_at,
            len: span.old.start - old_at,
        });
        if !(span.old.is_empty() && span.new.is_empty()) {
            let (old_range, new_range) = (span.old.clone(), span.new.clone());
            for op in capture_diff_deadline(
                Algorithm::Myers,
                old_lines,
                old_range,
                new_lines,
                new_range,
                deadline,
            ) {
                push(op);
            }
        }
        (old_at, new_at) = (span.old.end, span.new.end);
    }
    Some(ops)
}

/// The unified diff of line `ops`, three lines of context around each change.
fn render(
    old_lines: &[&str],
    new_lines: &[&str],
    ops: Vec<DiffOp>,
    old_label: &str,
    new_label: &str,
) -> UnifiedDiff {
    let mut out = DiffWriter::new(old_label, new_label);
    for hunk in group_diff_ops(ops, CONTEXT_LINES) {
        if hunk.is_empty() {
            continue;
        }
        out.hunk_header(&hunk);
        for op in &hunk {
            for (tag, lines) in op.iter_slices(old_lines, new_lines) {
                out.lines(tag, lines);
            }
        }
    }
    out.finish()
}

/// The reverse delta of line ops: every op that is not `Equal` becomes a replacement of its new
/// bytes by its old ones.
fn delta_of(
    old: &str,
    old_lines: &[&str],
    new_lines: &[&str],
    ops: &[DiffOp],
    offset: usize,
) -> Delta {
    let starts = |lines: &[&str]| -> Vec<usize> {
        let mut at = offset;
        let mut out = Vec::with_capacity(lines.len() + 1);
        for line in lines {
            out.push(at);
            at += line.len();
        }
        out.push(at);
        out
    };
    let (old_at, new_at) = (starts(old_lines), starts(new_lines));
    // Positions past a prefix index the old text as if the prefix were before it.
    let padded: std::borrow::Cow<[u8]> = if offset == 0 {
        old.as_bytes().into()
    } else {
        [vec![0u8; offset].as_slice(), old.as_bytes()]
            .concat()
            .into()
    };
    let ranges = ops
        .iter()
        .filter(|op| op.tag() != similar::DiffTag::Equal)
        .map(|op| {
            let (o, n) = (op.old_range(), op.new_range());
            (
                old_at[o.start]..old_at[o.end],
                new_at[n.start]..new_at[n.end],
            )
        });
    Delta::from_ranges(&padded, ranges)
}

/// The diff of a new file: every line of `new` added, against `/dev/null`.
/// Empty when `new` is empty.
pub fn all_added(new: &str, label: &str) -> UnifiedDiff {
    if new.is_empty() {
        return UnifiedDiff::default();
    }
    let lines = split_lines(new);
    let mut out = DiffWriter::new("/dev/null", label);
    let _ = writeln!(out.diff.text, "@@ -0,0 +{} @@", hunk_range(1, lines.len()));
    out.lines(ChangeTag::Insert, &lines);
    out.finish()
}

/// Splits after each `\n`; the last line may lack one.
fn split_lines(text: &str) -> Vec<&str> {
    super::line_split::lines_inclusive(text).collect()
}

/// Renders a hunk range as in `@@ -start,len`, where a single line omits `,1`.
fn hunk_range(start: usize, len: usize) -> String {
    if len == 1 {
        start.to_string()
    } else {
        format!("{start},{len}")
    }
}

struct DiffWriter {
    diff: UnifiedDiff,
}

impl DiffWriter {
    fn new(old_label: &str, new_label: &str) -> Self {
        let mut text = String::new();
        let _ = write!(text, "--- {old_label}\n+++ {new_label}\n");
        DiffWriter {
            diff: UnifiedDiff {
                text,
                added: 0,
                removed: 0,
            },
        }
    }

    fn hunk_header(&mut self, ops: &[DiffOp]) {
        let _ = writeln!(self.diff.text, "{}", UnifiedHunkHeader::new(ops));
    }

    fn lines(&mut self, tag: ChangeTag, lines: &[&str]) {
        let marker = match tag {
            ChangeTag::Equal => ' ',
            ChangeTag::Delete => {
                self.diff.removed += lines.len();
                '-'
            }
            ChangeTag::Insert => {
                self.diff.added += lines.len();
                '+'
            }
        };
        for line in lines {
            self.diff.text.push(marker);
            self.diff.text.push_str(line);
            if !line.ends_with('\n') {
                self.diff.text.push_str("\n\\ No newline at end of file\n");
            }
        }
    }

    fn finish(self) -> UnifiedDiff {
        self.diff
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const TIMEOUT: Duration = Duration::from_secs(1);

    proptest! {
        /// The delta from the diff's own matching gives the old text back exactly, also after a
        /// prefix (a BOM) and when the deadline makes the diff coarse.
        #[test]
        fn the_reverse_delta_gives_the_old_text_back(
            old in "(a|b|c|\\r|\\n){0,60}",
            new in "(a|b|c|\\r|\\n){0,60}",
            bom in any::<bool>(),
            coarse in any::<bool>(),
        ) {
            let prefix: &[u8] = if bom { b"\xEF\xBB\xBF" } else { b"" };
            let timeout = if coarse { Duration::ZERO } else { TIMEOUT };
            let (_, delta) = diff_with_delta(&old, &new, "a", "b", timeout, prefix.len());
            let whole = |text: &str| [prefix, text.as_bytes()].concat();
            prop_assert_eq!(delta.apply(&whole(&new)).unwrap(), whole(&old));
        }

        /// Runs of lines between the spans compare as bytes exactly as line by line would: two
        /// texts built to agree outside their spans, then (maybe) one letter of the new one
        /// flipped, inside a span or not.
        #[test]
        fn runs_between_spans_compare_as_their_lines_do(
            parts in proptest::collection::vec(
                (
                    proptest::collection::vec("(a|b|\\r){0,2}\n", 0..3),
                    proptest::collection::vec("(a|b)\n", 0..2),
                    proptest::collection::vec("(a|b)\n", 0..2),
                ),
                0..4,
            ),
            tail in "(a|b){0,2}",
            flip in proptest::option::of(any::<proptest::sample::Index>()),
        ) {
            let (mut old, mut new, mut spans) = (String::new(), String::new(), Vec::new());
            for (shared, old_only, new_only) in &parts {
                let (o, n) = (split_lines(&old).len(), split_lines(&new).len());
                old.extend(shared.iter().map(String::as_str));
                new.extend(shared.iter().map(String::as_str));
                let (o, n) = (o + shared.len(), n + shared.len());
                old.extend(old_only.iter().map(String::as_str));
                new.extend(new_only.iter().map(String::as_str));
                spans.push(span(o..o + old_only.len(), n..n + new_only.len()));
            }
            old.push_str(&tail);
            new.push_str(&tail);
            if let Some(at) = flip.filter(|_| !new.is_empty()).map(|i| i.index(new.len())) {
                let flipped = match new.as_bytes()[at] {
                    b'a' => "b",
                    b'b' => "a",
                    _ => "",
                };
                if !flipped.is_empty() {
                    new.replace_range(at..at + 1, flipped);
                }
            }
            let (old, new) = (Split::new(&old), Split::new(&new));
            let lines_agree = {
                let ends = span(old.lines.len()..old.lines.len(), new.lines.len()..new.lines.len());
                let (mut o, mut n) = (0, 0);
                let agree = spans.iter().chain([&ends]).all(|s| {
                    let agree = old.lines[o..s.old.start] == new.lines[n..s.new.start];
                    (o, n) = (s.old.end, s.new.end);
                    agree
                });
                agree
            };
            prop_assert_eq!(ops_within(&old, &new, &spans, None).is_some(), lines_agree);
        }
    }

    /// Applies a unified diff produced by this module to `old`, checking that
    /// every context and removed line matches and that headers agree with hunks.
    fn apply_patch(old: &str, diff: &str) -> String {
        let old_lines = split_lines(old);
        let mut rows: Vec<&str> = diff.split_inclusive('\n').collect();
        assert!(rows.len() >= 3, "diff too short: {diff:?}");
        assert!(rows[0].starts_with("--- ") && rows[1].starts_with("+++ "));
        rows.drain(..2);
        let mut out = String::new();
        let mut next_old = 0; // 0-based index of the next unconsumed old line
        let mut i = 0;
        while i < rows.len() {
            let (old_start, old_len, new_len) = parse_hunk_header(rows[i]);
            i += 1;
            let hunk_old_start = if old_len == 0 {
                old_start
            } else {
                old_start - 1
            };
            assert!(hunk_old_start >= next_old, "hunks overlap or go backwards");
            for line in &old_lines[next_old..hunk_old_start] {
                out.push_str(line);
            }
            next_old = hunk_old_start;
            let (mut seen_old, mut seen_new) = (0, 0);
            while i < rows.len() && !rows[i].starts_with("@@") {
                let (marker, mut body) = rows[i].split_at(1);
                i += 1;
                let body_owned;
                if rows.get(i).is_some_and(|r| r.starts_with('\\')) {
                    i += 1;
                    body_owned = body.strip_suffix('\n').unwrap().to_owned();
                    body = &body_owned;
                }
                if marker != "+" {
                    assert_eq!(old_lines[next_old], body, "context/removed line mismatch");
                    next_old += 1;
                    seen_old += 1;
                }
                if marker != "-" {
                    out.push_str(body);
                    seen_new += 1;
                }
            }
            assert_eq!(
                (seen_old, seen_new),
                (old_len, new_len),
                "hunk header counts"
            );
        }
        for line in &old_lines[next_old..] {
            out.push_str(line);
        }
        out
    }

    fn parse_hunk_header(row: &str) -> (usize, usize, usize) {
        let inner = row
            .strip_prefix("@@ -")
            .and_then(|r| r.strip_suffix(" @@\n"))
            .unwrap_or_else(|| panic!("bad hunk header {row:?}"));
        let (old, new) = inner.split_once(" +").unwrap();
        let range = |r: &str| match r.split_once(',') {
            Some((s, l)) => (s.parse::<usize>().unwrap(), l.parse::<usize>().unwrap()),
            None => (r.parse::<usize>().unwrap(), 1),
        };
        let ((old_start, old_len), (_, new_len)) = (range(old), range(new));
        (old_start, old_len, new_len)
    }

    fn assert_round_trip(old: &str, new: &str) -> UnifiedDiff {
        let diff = unified_diff(old, new, "a/f", "b/f", TIMEOUT);
        if old == new {
            assert_eq!(diff, UnifiedDiff::default());
        } else {
            assert_eq!(apply_patch(old, &diff.text), new, "diff:\n{}", diff.text);
        }
        diff
    }

    #[test]
    fn identical_inputs_give_empty_diff() {
        assert_eq!(
            unified_diff("a\n", "a\n", "x", "y", TIMEOUT),
            UnifiedDiff::default()
        );
    }

    #[test]
    fn simple_change_has_context_and_counts() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
        let new = "1\n2\n3\n4\nFIVE\n6\n7\n8\n9\n";
        let diff = assert_round_trip(old, new);
        assert_eq!(
            diff.text,
            "--- a/f\n+++ b/f\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+FIVE\n 6\n 7\n 8\n"
        );
        assert_eq!((diff.added, diff.removed), (1, 1));
    }

    #[test]
    fn missing_final_newline_is_marked() {
        let diff = assert_round_trip("a\nb", "a\nc");
        assert_eq!(
            diff.text,
            "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"
        );
        let diff = assert_round_trip("a\n", "a");
        assert_eq!(
            diff.text,
            "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+a\n\\ No newline at end of file\n"
        );
    }

    #[test]
    fn crlf_lines_keep_their_carriage_returns() {
        let diff = assert_round_trip("a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\n");
        assert!(diff.text.contains("-b\r\n+B\r\n"), "{:?}", diff.text);
        // A line-ending-only change is a change.
        let diff = assert_round_trip("a\r\nb\r\n", "a\r\nb\n");
        assert_eq!((diff.added, diff.removed), (1, 1));
        // A lone `\r` does not end a line.
        let diff = assert_round_trip("a\rb\n", "a\rc\n");
        assert_eq!(diff.text, "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\rb\n+a\rc\n");
    }

    #[test]
    fn from_and_to_empty() {
        let diff = assert_round_trip("", "x\ny\n");
        assert!(diff.text.contains("@@ -0,0 +1,2 @@\n+x\n+y\n"));
        let diff = assert_round_trip("x\ny\n", "");
        assert!(diff.text.contains("@@ -1,2 +0,0 @@\n-x\n-y\n"));
    }

    #[test]
    fn all_added_matches_a_diff_against_empty() {
        let new = "one\ntwo\r\nthree";
        let diff = all_added(new, "b/new.txt");
        assert_eq!(
            diff.text,
            "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,3 @@\n+one\n+two\r\n+three\n\\ No newline at end of file\n"
        );
        assert_eq!((diff.added, diff.removed), (3, 0));
        assert_eq!(
            diff,
            unified_diff("", new, "/dev/null", "b/new.txt", TIMEOUT)
        );
        assert_eq!(
            all_added("x\n", "n").text,
            "--- /dev/null\n+++ n\n@@ -0,0 +1 @@\n+x\n"
        );
        assert_eq!(all_added("", "n"), UnifiedDiff::default());
    }

    #[test]
    fn separate_hunks_for_distant_changes() {
        let old: String = (0..30).map(|i| format!("{i}\n")).collect();
        let new = old
            .replacen("\n3\n", "\nthree\n", 1)
            .replacen("\n25\n", "\nx\n", 1);
        let diff = assert_round_trip(&old, &new);
        assert_eq!(diff.text.matches("\n@@ ").count(), 2);
    }

    #[test]
    fn pathological_input_is_bounded_and_correct() {
        // ~1 MB where every line changes but lines repeat a lot, which makes
        // an exact edit script expensive.
        let old: String = (0..60_000)
            .map(|i| format!("line {}\n", (i * 7) % 101))
            .collect();
        let new: String = (0..60_000)
            .map(|i| format!("line {}\n", (i * 13) % 97))
            .collect();
        let started = Instant::now();
        let diff = unified_diff(&old, &new, "a", "b", Duration::from_millis(200));
        eprintln!("pathological diff took {:?}", started.elapsed());
        assert_eq!(apply_patch(&old, &diff.text), new);
    }

    #[test]
    fn long_single_lines() {
        let old = "x".repeat(1 << 20);
        let new = format!("{}y", "x".repeat(1 << 20));
        let diff = assert_round_trip(&old, &new);
        assert_eq!((diff.added, diff.removed), (1, 1));
    }

    #[test]
    fn zero_timeout_still_correct() {
        let old: String = (0..2_000).map(|i| format!("{}\n", i % 17)).collect();
        let new: String = (0..2_000).map(|i| format!("{}\n", i % 13)).collect();
        let diff = unified_diff(&old, &new, "a", "b", Duration::ZERO);
        assert_eq!(apply_patch(&old, &diff.text), new);
    }

    fn span(old: Range<usize>, new: Range<usize>) -> LineSpan {
        LineSpan { old, new }
    }

    #[test]
    fn a_diff_within_spans_compares_only_them() {
        let old: String = (0..30).map(|i| format!("{i}\n")).collect();
        let new = old
            .replacen("\n3\n", "\nthree\n", 1)
            .replacen("\n25\n", "\nx\ny\n", 1);
        let spans = [span(2..5, 2..5), span(25..26, 25..27)];
        let ops = ops_within(&Split::new(&old), &Split::new(&new), &spans, None)
            .expect("the texts agree outside the spans");
        // Equal runs around the spans are merged with the spans' own equal lines.
        assert!(ops
            .windows(2)
            .all(|w| !(w[0].tag() == similar::DiffTag::Equal
                && w[1].tag() == similar::DiffTag::Equal)));
        let within = unified_diff_within(&old, &new, &spans, "a/f", "b/f", TIMEOUT);
        assert_eq!(within, unified_diff(&old, &new, "a/f", "b/f", TIMEOUT));
        assert_eq!(apply_patch(&old, &within.text), new);
        // The delta from the same matching takes the new text back, storing only changed lines.
        let (with_delta, delta) = diff_within_with_delta(&old, &new, &spans, "a/f", "b/f", TIMEOUT);
        assert_eq!(with_delta, within);
        assert_eq!(delta_within(&old, &new, &spans, TIMEOUT), delta);
        assert_eq!(delta.apply(new.as_bytes()).unwrap(), old.as_bytes());
        assert!(delta.encode().len() < 64, "{} bytes", delta.encode().len());
        // Where the spans do not hold, the delta still takes the whole texts back.
        let (old, new) = ("a\nb\nc\nd", "a\nB\nc\nd\n");
        let (_, delta) = diff_within_with_delta(old, new, &[span(1..2, 1..2)], "a", "b", TIMEOUT);
        assert_eq!(delta.apply(new.as_bytes()).unwrap(), old.as_bytes());
    }

    #[test]
    fn spans_that_do_not_hold_fall_back_to_the_whole_texts() {
        let old = "a\nb\nc\nd\n";
        let new = "a\nB\nc\nD\n";
        for spans in [
            vec![span(1..2, 1..2)],                   // `d` changed outside the span
            vec![span(1..2, 1..3)],                   // a different number of lines after it
            vec![span(3..4, 3..4), span(1..2, 1..2)], // out of order
            vec![span(1..9, 1..9)],                   // past the end
        ] {
            assert_eq!(
                ops_within(&Split::new(old), &Split::new(new), &spans, None),
                None,
                "{spans:?}"
            );
            let diff = unified_diff_within(old, new, &spans, "a/f", "b/f", TIMEOUT);
            assert_eq!(diff, unified_diff(old, new, "a/f", "b/f", TIMEOUT));
        }
        // A change of the final newline reaches the last line, wherever the span is.
        let diff =
            unified_diff_within("a\nb", "A\nb\n", &[span(0..1, 0..1)], "a/f", "b/f", TIMEOUT);
        assert_eq!(apply_patch("a\nb", &diff.text), "A\nb\n");
    }

    proptest! {
        #[test]
        fn patch_round_trip(old in "[ab\r\n]{0,40}", new in "[ab\r\n]{0,40}") {
            assert_round_trip(&old, &new);
        }

        #[test]
        fn patch_round_trip_line_edits(
            base in proptest::collection::vec("[abc]{0,2}\r?\n", 0..30),
            edits in proptest::collection::vec((0usize..30, "[abcd]{0,2}(\r?\n)?"), 0..6),
        ) {
            let old = base.concat();
            let mut new_lines = base.clone();
            for (at, line) in edits {
                let at = at.min(new_lines.len());
                if at < new_lines.len() && line.len() % 2 == 0 {
                    new_lines.remove(at);
                }
                new_lines.insert(at, line);
            }
            let diff = assert_round_trip(&old, &new_lines.concat());
            prop_assert!(diff.added + diff.removed > 0 || old == new_lines.concat());
        }
    }
}
