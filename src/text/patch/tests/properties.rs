//! Properties over random texts `a` and `b`: the unified diff of a → b (as `text::diff`
//! prints it) and the same change in Codex's format (written by [`codex_patch`]) applied to `a`
//! give `b`, with LF and CRLF line endings, a BOM, and with or without a final newline; and a
//! retried patch is never applied twice.

use proptest::prelude::*;
use similar::{capture_diff_slices, group_diff_ops, Algorithm, ChangeTag};

use super::super::*;
use crate::cancel::CancelToken;
use crate::text::decode::TextFile;
use crate::text::diff::{unified_diff, unified_diff_within, LineSpan};

/// A text as lines plus whether its last line ends with a newline.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Doc {
    lines: Vec<String>,
    final_newline: bool,
}

impl Doc {
    fn render(&self, ending: &str) -> String {
        let mut text = self.lines.join(ending);
        if self.final_newline && !self.lines.is_empty() {
            text.push_str(ending);
        }
        text
    }

    /// True when the rendered text has at least one line ending.
    fn has_ending(&self) -> bool {
        self.lines.len() > 1 || (self.lines.len() == 1 && self.final_newline)
    }
}

/// The change a → b in Codex's format, chunks of 3 context lines as models write them, with
/// `*** End of File` on a chunk that ends the file.
fn codex_patch(a: &Doc, b: &Doc) -> String {
    let ops = capture_diff_slices(Algorithm::Myers, &a.lines, &b.lines);
    let mut out = String::from("*** Begin Patch\n*** Update File: f.txt\n");
    for group in group_diff_ops(ops, 3) {
        out.push_str("@@\n");
        for op in &group {
            for change in op.iter_changes(&a.lines, &b.lines) {
                out.push(match change.tag() {
                    ChangeTag::Equal => ' ',
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                });
                out.push_str(&change.value());
                out.push('\n');
            }
        }
        if group
            .last()
            .is_some_and(|op| op.old_range().end == a.lines.len() && !a.lines.is_empty())
        {
            out.push_str("*** End of File\n");
        }
    }
    out.push_str("*** End Patch\n");
    out
}

/// What a Codex patch of a → b gives on `a` rendered with `ending`: b's lines, ending as `a`'s
/// lines do, with `a`'s final-newline state (Codex's format cannot change it).
fn codex_expected(a: &Doc, b: &Doc, ending: &str) -> String {
    let ending = if a.has_ending() { ending } else { "\n" };
    let final_newline = a.lines.is_empty() || a.final_newline;
    Doc {
        lines: b.lines.clone(),
        final_newline,
    }
    .render(ending)
}

fn unified_patch(a: &str, b: &str) -> String {
    unified_diff(
        a,
        b,
        "a/f.txt",
        "b/f.txt",
        std::time::Duration::from_secs(5),
    )
    .text
}

/// Parses a one-file patch and applies it to `text`.
fn apply_patch_text(patch: &str, text: &str) -> Result<(String, Vec<Chunk>), PatchError> {
    let parsed = parse(patch)?;
    let PatchChange::Update { path, chunks, .. } = &parsed.files[0].change else {
        panic!("not an update: {parsed:?}")
    };
    apply(path, text, chunks, &CancelToken::new()).map(|applied| (applied.text, chunks.clone()))
}

/// True when `old` and `new` have the same lines outside `spans` (lines split after `\n`), and
/// as many of them: what [`unified_diff_within`] takes as given.
fn equal_outside(old: &str, new: &str, spans: &[LineSpan]) -> bool {
    let old: Vec<&str> = old.split_inclusive('\n').collect();
    let new: Vec<&str> = new.split_inclusive('\n').collect();
    let (mut o, mut n) = (0, 0);
    for span in spans {
        if span.old.start < o
            || span.new.start < n
            || span.old.end > old.len()
            || span.new.end > new.len()
        {
            return false;
        }
        if old[o..span.old.start] != new[n..span.new.start] {
            return false;
        }
        (o, n) = (span.old.end, span.new.end);
    }
    old[o..] == new[n..]
}

/// Lines from a tiny alphabet: repeats everywhere, so ambiguity is common.
fn repetitive_doc() -> impl Strategy<Value = Doc> {
    (
        proptest::collection::vec("[ab ]{0,2}", 0..12),
        any::<bool>(),
    )
        .prop_map(|(lines, final_newline)| Doc {
            // An empty last line without a newline is no line at all: say it has one.
            final_newline: final_newline || lines.last().is_some_and(|l| l.is_empty()),
            lines,
        })
}

/// A pair of repetitive documents.
fn repetitive_pair() -> impl Strategy<Value = (Doc, Doc)> {
    (repetitive_doc(), repetitive_doc()).prop_filter("a change", |(a, b)| a != b)
}

/// `a` with distinct lines, and `b` made from it by deleting, replacing and inserting lines
/// (new lines distinct too), so every chunk's lines occur once.
fn unique_pair() -> impl Strategy<Value = (Doc, Doc)> {
    proptest::collection::vec("[a-z]{0,6}", 0..16)
        .prop_flat_map(|words| {
            let n = words.len();
            (
                Just(words),
                proptest::collection::vec(0u8..12, n),
                proptest::collection::vec("[A-Z]{0,6}", n + 1),
                any::<bool>(),
                any::<bool>(),
                any::<bool>(),
            )
        })
        .prop_map(|(words, ops, fresh, append, a_final, b_final)| {
            let old: Vec<String> = words
                .iter()
                .enumerate()
                .map(|(i, w)| format!("line {i} {w}"))
                .collect();
            let fresh: Vec<String> = fresh
                .iter()
                .enumerate()
                .map(|(i, w)| format!("NEW {i} {w}"))
                .collect();
            let mut new = Vec::new();
            for (i, line) in old.iter().enumerate() {
                match ops[i] {
                    0..=6 => new.push(line.clone()),
                    7 => {}
                    8 => new.push(fresh[i].clone()),
                    9 => new.extend([line.clone(), fresh[i].clone()]),
                    10 => new.extend([fresh[i].clone(), line.clone()]),
                    _ => new.push(format!("{line} changed")),
                }
            }
            if append || old.is_empty() {
                new.push(fresh[old.len()].clone());
            }
            let a = Doc {
                lines: old,
                final_newline: a_final,
            };
            let b = Doc {
                lines: new,
                final_newline: b_final,
            };
            (a, b)
        })
        .prop_filter("a change", |(a, b)| a != b)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    /// The unified diff of a → b applied to a gives b exactly: the hunks' line numbers are
    /// right, so an exact match at the hinted line always wins, however repetitive the text.
    #[test]
    fn unified_diff_of_a_to_b_applied_to_a_gives_b(
        (a, b) in repetitive_pair(),
        crlf in any::<bool>(),
    ) {
        // A file without any line ending has none for added lines to take: they get LF.
        prop_assume!(!crlf || a.has_ending());
        let ending = if crlf { "\r\n" } else { "\n" };
        let (a, b) = (a.render(ending), b.render(ending));
        prop_assume!(a != b);
        let patch = unified_patch(&a, &b);
        let (out, _) = apply_patch_text(&patch, &a).map_err(|e| TestCaseError::fail(e.message()))?;
        prop_assert_eq!(out, b, "patch:\n{}", patch);
    }

    /// An LF diff (as a model writes it after reading the file) applied to the CRLF copy of a
    /// gives the CRLF copy of b.
    #[test]
    fn lf_unified_diff_on_a_crlf_file_gives_crlf((a, b) in repetitive_pair()) {
        prop_assume!(a.has_ending());
        let patch = unified_patch(&a.render("\n"), &b.render("\n"));
        let (out, _) = apply_patch_text(&patch, &a.render("\r\n")).map_err(|e| TestCaseError::fail(e.message()))?;
        prop_assert_eq!(out, b.render("\r\n"), "patch:\n{}", patch);
    }

    /// With a BOM: the diff of the decoded texts (what a model sees), and the diff of the raw
    /// texts (what `git diff` shows, the BOM on line 1), both keep the BOM and give b.
    #[test]
    fn bom_files_keep_their_bom((a, b) in repetitive_pair(), crlf in any::<bool>()) {
        prop_assume!(!crlf || a.has_ending());
        let ending = if crlf { "\r\n" } else { "\n" };
        let (a, b) = (a.render(ending), b.render(ending));
        prop_assume!(!a.is_empty());
        let file = TextFile { bom: true, text: a.clone() };
        let expected = TextFile { bom: true, text: b.clone() }.to_bytes();
        for patch in [unified_patch(&a, &b), unified_patch(&format!("\u{FEFF}{a}"), &format!("\u{FEFF}{b}"))] {
            let (out, _) = apply_patch_text(&patch, &file.text).map_err(|e| TestCaseError::fail(e.message()))?;
            prop_assert_eq!(TextFile { bom: file.bom, text: out }.to_bytes(), expected.clone(), "patch:\n{}", patch);
        }
    }

    /// The same change in Codex's format gives b (with a's final-newline state, which the
    /// format cannot change) when every chunk's lines occur once.
    #[test]
    fn codex_patch_of_a_to_b_applied_to_a_gives_b((a, b) in unique_pair(), crlf in any::<bool>()) {
        prop_assume!(a.lines != b.lines);
        let ending = if crlf { "\r\n" } else { "\n" };
        let patch = codex_patch(&a, &b);
        let (out, chunks) = apply_patch_text(&patch, &a.render(ending)).map_err(|e| TestCaseError::fail(e.message()))?;
        prop_assert_eq!(&out, &codex_expected(&a, &b, ending), "patch:\n{}", patch);
        prop_assert!(is_applied(&out, &chunks, &CancelToken::new()), "not seen as applied:\n{}", patch);
        prop_assert!(!is_applied(&a.render(ending), &chunks, &CancelToken::new()), "seen as applied before:\n{}", patch);
    }

    /// On repetitive text a Codex patch either gives b or stops at an ambiguity; it never
    /// applies a chunk in the wrong place.
    #[test]
    fn codex_patch_on_repetitive_text_is_right_or_ambiguous((a, b) in repetitive_pair()) {
        prop_assume!(a.lines != b.lines);
        let patch = codex_patch(&a, &b);
        match apply_patch_text(&patch, &a.render("\n")) {
            Ok((out, _)) => prop_assert_eq!(out, codex_expected(&a, &b, "\n"), "patch:\n{}", patch),
            Err(PatchError::MultipleMatches { .. }) => {}
            Err(other) => prop_assert!(false, "{}\npatch:\n{}", other.message(), patch),
        }
    }

    /// A patch applied once is seen as applied, or fails when sent again, or (whitespace-only
    /// lines matched loosely) changes nothing the second time: a retry never applies it twice. (One edge is left out: a file without a final newline that gains an
    /// empty last line reads the same as one that gains a final newline.)
    #[test]
    fn a_retry_never_applies_twice(
        (a, b) in prop_oneof![unique_pair(), repetitive_pair()],
        unified in any::<bool>(),
    ) {
        prop_assume!(unified || a.lines != b.lines);
        if !a.final_newline && b.lines.last().is_some_and(|l| l.is_empty()) {
            return Ok(());
        }
        let (a_text, b_text) = (a.render("\n"), b.render("\n"));
        let patch = if unified { unified_patch(&a_text, &b_text) } else { codex_patch(&a, &b) };
        let Ok((once, chunks)) = apply_patch_text(&patch, &a_text) else {
            return Ok(()); // ambiguous on repetitive text: nothing was applied
        };
        let parsed = parse(&patch).unwrap();
        let path = parsed.files[0].path();
        let again = apply(path, &once, &chunks, &CancelToken::new()).map(|applied| applied.text);
        prop_assert!(
            is_applied(&once, &chunks, &CancelToken::new()) || again.is_err() || again == Ok(once.clone()),
            "applied twice:\n{}\nonce: {:?}\nagain: {:?}", patch, once, again
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// The diff `apply_patch` shows, made from the lines its chunks changed (each span diffed
    /// alone), is a true diff of a → the result: parsed and applied to a, it gives the result.
    /// The spans are exact (the texts agree outside them) when both texts end with a newline;
    /// where a last line without one is involved they may not be, and the whole texts are
    /// diffed.
    #[test]
    fn the_diff_of_what_the_chunks_changed_gives_the_result(
        (a, b) in prop_oneof![unique_pair(), repetitive_pair()],
        unified in any::<bool>(),
        crlf in any::<bool>(),
    ) {
        prop_assume!(!crlf || a.has_ending());
        prop_assume!(unified || a.lines != b.lines);
        let ending = if crlf { "\r\n" } else { "\n" };
        let (a_text, b_text) = (a.render(ending), b.render(ending));
        prop_assume!(a_text != b_text);
        let patch = if unified { unified_patch(&a_text, &b_text) } else { codex_patch(&a, &b) };
        let parsed = parse(&patch).map_err(|e| TestCaseError::fail(e.message()))?;
        let PatchChange::Update { chunks, .. } = &parsed.files[0].change else {
            panic!("not an update: {parsed:?}")
        };
        let Ok(applied) = apply("f.txt", &a_text, chunks, &CancelToken::new()) else {
            return Ok(()); // ambiguous on repetitive text: nothing was applied
        };
        let out = applied.text;
        if a_text.ends_with('\n') && out.ends_with('\n') {
            prop_assert!(equal_outside(&a_text, &out, &applied.spans), "spans {:?}\npatch:\n{}", applied.spans, patch);
        }
        let shown = unified_diff_within(&a_text, &out, &applied.spans, "a/f.txt", "b/f.txt", std::time::Duration::from_secs(5));
        if out == a_text {
            prop_assert!(shown.text.is_empty());
        } else {
            let (again, _) = apply_patch_text(&shown.text, &a_text).map_err(|e| TestCaseError::fail(format!("{}\nshown:\n{}", e.message(), shown.text)))?;
            prop_assert_eq!(again, out, "shown:\n{}\npatch:\n{}", shown.text, patch);
        }
    }
}

/// Lines from both grammars, well-formed or not, to build patch-shaped input from.
const FRAGMENTS: &[&str] = &[
    "*** Begin Patch",
    "*** End Patch",
    " *** End Patch ",
    "*** Add File: f",
    "*** Update File: f",
    "*** Update File: g",
    "*** Delete File: g",
    "*** Move to: h",
    "*** End of File",
    "@@",
    "@@ a",
    "@@ -1,2 +1,3 @@",
    "@@ -0,0 +1 @@",
    "@@ -9 +1,0 @@ x",
    "@@ -x @@",
    " a",
    " ",
    "-a",
    "-b",
    "+a",
    "+",
    "a",
    "",
    "\\ No newline at end of file",
    "--- a/f",
    "+++ b/f",
    "--- /dev/null",
    "+++ /dev/null",
    "diff --git a/f b/h",
    "rename from f",
    "rename to h",
    "new file mode 100644",
    "<<'EOF'",
    "EOF",
    "```",
    "\u{FEFF}a",
    " “a” — b",
];

/// Lines that are valid inside a chunk of either format.
const CHUNK_LINES: &[&str] = &[
    " a",
    " b",
    " ",
    "-a",
    "-b",
    "- ",
    "+a",
    "+b",
    "+",
    "",
    "@@",
    "@@ a",
    "@@ -1,2 +1,3 @@",
    "@@ -2 +2 @@",
    "\\ No newline at end of file",
    " “a” — b",
    "-\u{FEFF}a",
    " \ta",
];

fn body_line() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        9 => proptest::sample::select(CHUNK_LINES),
        1 => proptest::sample::select(FRAGMENTS),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// Whatever the input, parsing and applying return a result (and its message) without
    /// panicking.
    #[test]
    fn never_panics(
        frame in 0..3usize,
        body in proptest::collection::vec(body_line(), 0..16),
        crlf in any::<bool>(),
        text in "[ab \t\r\n]{0,30}",
    ) {
        let newline = if crlf { "\r\n" } else { "\n" };
        let (head, tail): (&[&str], &[&str]) = match frame {
            0 => (&["*** Begin Patch", "*** Update File: f"], &["*** End Patch"]),
            1 => (&["--- a/f", "+++ b/f"], &[]),
            _ => (&[], &[]),
        };
        let input: Vec<&str> = head
            .iter()
            .copied()
            .chain(body.iter().copied())
            .chain(tail.iter().copied())
            .collect();
        match parse(&input.join(newline)) {
            Err(e) => prop_assert!(!e.message().is_empty()),
            Ok(patch) => {
                for file in &patch.files {
                    if let PatchChange::Update { path, chunks, .. } = &file.change {
                        let _ = is_applied(&text, chunks, &CancelToken::new());
                        match apply(path, &text, chunks, &CancelToken::new()) {
                            Ok(applied) => {
                                for fuzzy in &applied.fuzzy {
                                    prop_assert!(!fuzzy.describe(path).is_empty());
                                }
                            }
                            Err(e) => prop_assert!(!e.message().is_empty()),
                        }
                    }
                }
            }
        }
    }
}
