//! The `edit_file` engine: batched exact-string replacements, applied in order
//! and all-or-nothing.

use std::fmt;

use super::closest::find_closest;
pub use super::closest::{numbered_line, ClosestMatch};
use super::decode::has_crlf;
use super::occurrences::{count_matches, has_bare_lf, lf_to_crlf, match_starts, replace_all};
use crate::error::{ErrorCode, ToolError};

/// One requested replacement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// Exact text to find; must not be empty.
    pub old_string: String,
    /// Literal replacement text (`$&`, `$1` are not special).
    pub new_string: String,
    /// Replace every non-overlapping occurrence instead of requiring exactly one.
    pub replace_all: bool,
}

/// The result of a successful batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditOutcome {
    /// The text after all edits.
    pub text: String,
    /// How many occurrences each edit replaced, in edit order.
    pub replacements: Vec<usize>,
}

/// Why a batch failed. `edit` is the failing edit's 1-based number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditError {
    /// `old_string` was empty.
    EmptyOldString { edit: usize },
    /// `old_string` and `new_string` were equal.
    Identical { edit: usize },
    /// `old_string` occurs nowhere in the text as it was when the edit ran;
    /// `closest` is the most similar region, when there is a plausible one.
    NotFound {
        edit: usize,
        closest: Option<ClosestMatch>,
    },
    /// `replace_all` was false and `old_string` occurs `count` times
    /// (overlapping occurrences included), starting at `lines` (1-based, the
    /// first [`MAX_LISTED_LINES`] of them).
    MultipleMatches {
        edit: usize,
        count: usize,
        lines: Vec<usize>,
    },
}

/// How many of the lines where an ambiguous `old_string` occurs are named.
pub const MAX_LISTED_LINES: usize = 10;

impl EditError {
    /// The 1-based number of the edit that failed.
    pub fn edit_number(&self) -> usize {
        match self {
            EditError::EmptyOldString { edit }
            | EditError::Identical { edit }
            | EditError::NotFound { edit, .. }
            | EditError::MultipleMatches { edit, .. } => *edit,
        }
    }

    /// The message for the model. Its first line is the exact documented text; a
    /// not-found error with a closest match continues with that region in
    /// `read_file`'s line format.
    pub fn message(&self) -> String {
        match self {
            EditError::EmptyOldString { edit } => {
                format!("edit {edit}: oldString must not be empty")
            }
            EditError::Identical { edit } => {
                format!("edit {edit}: oldString and newString are identical")
            }
            EditError::NotFound { edit, closest } => {
                let mut message = format!("edit {edit}: oldString not found in file");
                if let Some(closest) = closest {
                    message.push('\n');
                    message.push_str(&closest.describe());
                }
                message
            }
            EditError::MultipleMatches { edit, count, lines } => {
                let mut message = format!(
                    "edit {edit}: oldString found {count} times — set replaceAll: true or add surrounding context to disambiguate"
                );
                if let Some((last, rest)) = lines.split_last() {
                    let listed = if rest.is_empty() {
                        format!("line {last}")
                    } else {
                        let rest: Vec<String> = rest.iter().map(usize::to_string).collect();
                        format!("lines {} and {last}", rest.join(", "))
                    };
                    let more = match count.saturating_sub(MAX_LISTED_LINES) {
                        0 => String::new(),
                        n => format!(", and {n} more times after"),
                    };
                    let of = if *edit > 1 {
                        " of the file as the earlier edits left it"
                    } else {
                        ""
                    };
                    message.push_str(&format!("\nIt occurs at {listed}{more}{of}."));
                }
                message
            }
        }
    }
}

impl fmt::Display for EditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for EditError {}

/// The one mapping of an edit failure to its error code (../../docs/tools.md#error-codes), with [`EditError::message`].
impl From<EditError> for ToolError {
    fn from(e: EditError) -> Self {
        let code = match e {
            EditError::EmptyOldString { .. } => ErrorCode::InvalidArguments,
            EditError::Identical { .. } => ErrorCode::IdenticalStrings,
            EditError::NotFound { .. } => ErrorCode::NoMatch,
            EditError::MultipleMatches { .. } => ErrorCode::MultipleMatches,
        };
        ToolError::new(code, e.message())
    }
}

/// Applies `edits` in order, each to the result of the previous one. Fails on
/// the first edit that cannot be applied, leaving nothing half-done (the input
/// is not modified).
///
/// A match never starts or ends between the `\r` and the `\n` of a CRLF pair:
/// `"\n## Title"` does not match inside `"\r\n## Title"`, nor `"a\r"` inside
/// `"a\r\n"`. If the text has CRLF line endings and an `old_string` with bare
/// `\n`s has no match, it is retried with those converted to `\r\n`; when that
/// matches, the `new_string`'s bare `\n`s are converted too. In a text whose
/// every line ends with CRLF, a `new_string`'s bare `\n`s are always converted.
/// So an edit never leaves a lone `\r` or `\n` in a CRLF file that neither the
/// file nor the `new_string` had.
pub fn apply_edits(text: &str, edits: &[Edit]) -> Result<EditOutcome, EditError> {
    let mut current = text.to_owned();
    let mut replacements = Vec::with_capacity(edits.len());
    for (index, edit) in edits.iter().enumerate() {
        replacements.push(apply_one(&mut current, edit, index + 1)?);
    }
    Ok(EditOutcome {
        text: current,
        replacements,
    })
}

fn apply_one(text: &mut String, edit: &Edit, number: usize) -> Result<usize, EditError> {
    if edit.old_string.is_empty() {
        return Err(EditError::EmptyOldString { edit: number });
    }
    if edit.old_string == edit.new_string {
        return Err(EditError::Identical { edit: number });
    }
    let Some(target) = locate(text, edit) else {
        return Err(EditError::NotFound {
            edit: number,
            closest: find_closest(text, &edit.old_string),
        });
    };
    if edit.replace_all {
        let (replaced, count) = replace_all(text, &target.old, &target.new);
        *text = replaced;
        return Ok(count);
    }
    match (target.occurrences, target.first) {
        (1, Some(pos)) => {
            text.replace_range(pos..pos + target.old.len(), &target.new);
            Ok(1)
        }
        (count, _) => Err(EditError::MultipleMatches {
            edit: number,
            count,
            lines: line_numbers(text, &target.old),
        }),
    }
}

/// The 1-based lines where the first [`MAX_LISTED_LINES`] occurrences of `needle` start.
fn line_numbers(text: &str, needle: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    let (mut line, mut counted) = (1, 0);
    let mut lines = Vec::new();
    for start in match_starts(bytes, needle.as_bytes(), MAX_LISTED_LINES) {
        line += memchr::memchr_iter(b'\n', &bytes[counted..start]).count();
        counted = start;
        if lines.last() != Some(&line) {
            lines.push(line);
        }
    }
    lines
}

/// The strings an edit actually uses (possibly converted to CRLF) and where
/// the old one occurs.
struct Target<'e> {
    old: std::borrow::Cow<'e, str>,
    new: std::borrow::Cow<'e, str>,
    occurrences: usize,
    first: Option<usize>,
}

/// Finds the edit's `old_string` in `text`, retrying with CRLF line endings
/// when the text uses them. `None` when neither form occurs.
fn locate<'e>(text: &str, edit: &'e Edit) -> Option<Target<'e>> {
    let found = count_matches(text.as_bytes(), edit.old_string.as_bytes());
    if found.count > 0 {
        let pure_crlf = has_bare_lf(&edit.new_string) && has_crlf(text) && !has_bare_lf(text);
        return Some(Target {
            old: edit.old_string.as_str().into(),
            new: if pure_crlf {
                lf_to_crlf(&edit.new_string).into()
            } else {
                edit.new_string.as_str().into()
            },
            occurrences: found.count,
            first: found.first,
        });
    }
    if !has_bare_lf(&edit.old_string) || !has_crlf(text) {
        return None;
    }
    let old = lf_to_crlf(&edit.old_string);
    let found = count_matches(text.as_bytes(), old.as_bytes());
    (found.count > 0).then(|| Target {
        old: old.into(),
        new: lf_to_crlf(&edit.new_string).into(),
        occurrences: found.count,
        first: found.first,
    })
}

/// A naive reference model of edit_file (../../docs/tools.md#edit_file), obviously following the rules, that the
/// engine's property tests and the `edit_engine` fuzz target compare the engine with. Safe
/// for any Unicode text.
#[cfg(any(test, fuzzing))]
#[doc(hidden)]
pub mod model {
    use super::{Edit, EditError, EditOutcome};

    fn boundaries(text: &str) -> impl Iterator<Item = usize> + '_ {
        (0..text.len()).filter(|&i| text.is_char_boundary(i))
    }

    /// True when byte offset `at` falls between the `\r` and the `\n` of a pair.
    fn inside_pair(text: &str, at: usize) -> bool {
        text[..at].ends_with('\r') && text[at..].starts_with('\n')
    }

    fn matches_at(text: &str, at: usize, needle: &str) -> bool {
        text[at..].starts_with(needle)
            && !inside_pair(text, at)
            && !inside_pair(text, at + needle.len())
    }

    fn occurrences(text: &str, needle: &str) -> Vec<usize> {
        boundaries(text)
            .filter(|&i| matches_at(text, i, needle))
            .collect()
    }

    fn crlf(s: &str) -> String {
        let mut out = String::new();
        let mut prev = None;
        for c in s.chars() {
            if c == '\n' && prev != Some('\r') {
                out.push('\r');
            }
            out.push(c);
            prev = Some(c);
        }
        out
    }

    fn replace_all_naive(text: &str, old: &str, new: &str) -> (String, usize) {
        let mut out = String::new();
        let (mut i, mut n) = (0, 0);
        while i < text.len() {
            if matches_at(text, i, old) {
                out.push_str(new);
                i += old.len();
                n += 1;
            } else {
                let c = text[i..].chars().next().expect("i is a char boundary");
                out.push(c);
                i += c.len_utf8();
            }
        }
        (out, n)
    }

    /// Applies `edits` the naive way. A not-found error carries no closest-match hint.
    pub fn apply(text: &str, edits: &[Edit]) -> Result<(String, Vec<usize>), EditError> {
        let mut text = text.to_owned();
        let mut counts = vec![];
        for (i, e) in edits.iter().enumerate() {
            let n = i + 1;
            if e.old_string.is_empty() {
                return Err(EditError::EmptyOldString { edit: n });
            }
            if e.old_string == e.new_string {
                return Err(EditError::Identical { edit: n });
            }
            let (mut old, mut new) = (e.old_string.clone(), e.new_string.clone());
            let mut found = occurrences(&text, &old);
            if !found.is_empty() && text.contains("\r\n") && crlf(&text) == text {
                new = crlf(&new);
            }
            let bare_lf = old != crlf(&old);
            if found.is_empty() && text.contains("\r\n") && bare_lf {
                let converted = occurrences(&text, &crlf(&old));
                if !converted.is_empty() {
                    (old, new, found) = (crlf(&old), crlf(&new), converted);
                }
            }
            if found.is_empty() {
                return Err(EditError::NotFound {
                    edit: n,
                    closest: None,
                });
            }
            if e.replace_all {
                let (out, k) = replace_all_naive(&text, &old, &new);
                text = out;
                counts.push(k);
            } else if found.len() == 1 {
                text = format!(
                    "{}{}{}",
                    &text[..found[0]],
                    new,
                    &text[found[0] + old.len()..]
                );
                counts.push(1);
            } else {
                return Err(EditError::MultipleMatches {
                    edit: n,
                    count: found.len(),
                    lines: Vec::new(),
                });
            }
        }
        Ok((text, counts))
    }

    /// The engine's result in the model's shape: the closest-match hint and the lines of an
    /// ambiguous match dropped.
    pub fn without_hint(
        result: Result<EditOutcome, EditError>,
    ) -> Result<(String, Vec<usize>), EditError> {
        match result {
            Ok(outcome) => Ok((outcome.text, outcome.replacements)),
            Err(EditError::NotFound { edit, .. }) => Err(EditError::NotFound {
                edit,
                closest: None,
            }),
            Err(EditError::MultipleMatches { edit, count, .. }) => {
                Err(EditError::MultipleMatches {
                    edit,
                    count,
                    lines: Vec::new(),
                })
            }
            Err(other) => Err(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::occurrences::has_bare_lf;
    use proptest::prelude::*;
    use std::time::Instant;

    fn edit(old: &str, new: &str) -> Edit {
        Edit {
            old_string: old.to_owned(),
            new_string: new.to_owned(),
            replace_all: false,
        }
    }

    fn edit_all(old: &str, new: &str) -> Edit {
        Edit {
            replace_all: true,
            ..edit(old, new)
        }
    }

    fn apply(text: &str, edits: &[Edit]) -> Result<String, EditError> {
        apply_edits(text, edits).map(|outcome| outcome.text)
    }

    #[test]
    fn a_consistently_crlf_file_gets_crlf_in_inserted_lines() {
        let out = apply("a\r\nb\r\n", &[edit("a", "a\nz")]).unwrap();
        assert_eq!(out, "a\r\nz\r\nb\r\n");
        // A mixed file is left as the model wrote it.
        let out = apply("a\r\nb\n", &[edit("a", "a\nz")]).unwrap();
        assert_eq!(out, "a\nz\r\nb\n");
    }

    #[test]
    fn an_old_string_starting_with_lf_never_matches_inside_a_crlf_pair() {
        let text = "# Notes\r\n## Sessions\r\nnone\r\n";
        let out = apply(text, &[edit("\n## Sessions", "\n## Sessions\nfirst")]).unwrap();
        assert_eq!(out, "# Notes\r\n## Sessions\r\nfirst\r\nnone\r\n");
    }

    #[test]
    fn an_old_string_ending_with_cr_never_matches_inside_a_crlf_pair() {
        let err = apply("a\r\nb\r\n", &[edit("a\r", "X")]).unwrap_err();
        assert!(
            matches!(err, EditError::NotFound { edit: 1, .. }),
            "{err:?}"
        );
        // A lone `\r` (not followed by `\n`) is matched as usual.
        assert_eq!(apply("a\rb\r\n", &[edit("a\r", "X")]).unwrap(), "Xb\r\n");
    }

    #[test]
    fn replace_all_of_lf_in_a_crlf_file_replaces_whole_pairs() {
        let out = apply("a\r\nb\r\n", &[edit_all("\n", "\n\n")]).unwrap();
        assert_eq!(out, "a\r\n\r\nb\r\n\r\n");
        // In a mixed file only the bare LF matches literally; the pair is left whole.
        let out = apply("a\r\nb\nc", &[edit_all("\n", "|")]).unwrap();
        assert_eq!(out, "a\r\nb|c");
    }

    #[test]
    fn a_match_may_start_at_a_lone_lf_after_a_pair() {
        // `\r\n\n`: the second `\n` is bare and may start a match.
        let out = apply("a\r\n\nb", &[edit("\nb", "c")]).unwrap();
        assert_eq!(out, "a\r\nc");
    }

    #[test]
    fn single_edit() {
        let outcome = apply_edits("let a = 1;\nlet b = 2;\n", &[edit("b = 2", "b = 3")]).unwrap();
        assert_eq!(outcome.text, "let a = 1;\nlet b = 3;\n");
        assert_eq!(outcome.replacements, [1]);
    }

    #[test]
    fn later_edit_sees_earlier_result() {
        let edits = [edit("alpha", "beta gamma"), edit("gamma", "delta")];
        assert_eq!(apply("x alpha y", &edits).unwrap(), "x beta delta y");
    }

    #[test]
    fn replace_all_replaces_every_occurrence() {
        let outcome = apply_edits("a.b.a.c.a", &[edit_all("a", "z")]).unwrap();
        assert_eq!(outcome.text, "z.b.z.c.z");
        assert_eq!(outcome.replacements, [3]);
        // Non-overlapping, left to right.
        assert_eq!(apply("aaaa a", &[edit_all("aa", "b")]).unwrap(), "bb a");
        assert_eq!(apply("aaa", &[edit_all("aa", "b")]).unwrap(), "ba");
    }

    #[test]
    fn replace_all_with_one_occurrence_is_fine() {
        let outcome = apply_edits("one two", &[edit_all("two", "2")]).unwrap();
        assert_eq!(
            (outcome.text.as_str(), outcome.replacements),
            ("one 2", vec![1])
        );
    }

    #[test]
    fn multiple_matches_without_replace_all() {
        let err = apply("x = 1; x = 1;", &[edit("x = 1", "x = 2")]).unwrap_err();
        assert_eq!(
            err,
            EditError::MultipleMatches {
                edit: 1,
                count: 2,
                lines: vec![1]
            }
        );
        assert_eq!(
            err.message(),
            "edit 1: oldString found 2 times — set replaceAll: true or add surrounding context to disambiguate\nIt occurs at line 1."
        );
        assert_eq!(ToolError::from(err).code, ErrorCode::MultipleMatches);
    }

    /// An ambiguous oldString names the lines it occurs at, as apply_patch does: every line for
    /// a few, the first ones and how many more for many; after earlier edits, lines of the text
    /// they left.
    #[test]
    fn multiple_matches_name_their_lines() {
        let text = "a\nfoo\nb\nfoo\nfoo\n";
        let err = apply(text, &[edit("foo", "bar")]).unwrap_err();
        assert!(
            err.message().ends_with("\nIt occurs at lines 2, 4 and 5."),
            "{}",
            err.message()
        );
        let many = "foo\n".repeat(25);
        let err = apply(&many, &[edit("foo", "bar")]).unwrap_err();
        assert!(
            err.message().ends_with(
                "\nIt occurs at lines 1, 2, 3, 4, 5, 6, 7, 8, 9 and 10, and 15 more times after."
            ),
            "{}",
            err.message()
        );
        let err = apply("x\ny\n", &[edit("x", "y"), edit("y", "z")]).unwrap_err();
        assert!(
            err.message().ends_with(
                "\nIt occurs at lines 1 and 2 of the file as the earlier edits left it."
            ),
            "{}",
            err.message()
        );
    }

    #[test]
    fn overlapping_occurrences_count() {
        let err = apply("aaa", &[edit("aa", "b")]).unwrap_err();
        assert!(matches!(
            err,
            EditError::MultipleMatches {
                edit: 1,
                count: 2,
                ..
            }
        ));
    }

    #[test]
    fn identical_is_checked_before_searching() {
        let err = apply("abc", &[edit("zzz", "zzz")]).unwrap_err();
        assert_eq!(err, EditError::Identical { edit: 1 });
        assert_eq!(
            err.message(),
            "edit 1: oldString and newString are identical"
        );
        assert_eq!(ToolError::from(err).code, ErrorCode::IdenticalStrings);
    }

    #[test]
    fn empty_old_string() {
        let err = apply("abc", &[edit("b", "c"), edit("", "x")]).unwrap_err();
        assert_eq!(err, EditError::EmptyOldString { edit: 2 });
        assert_eq!(err.message(), "edit 2: oldString must not be empty");
        assert_eq!(ToolError::from(err).code, ErrorCode::InvalidArguments);
    }

    #[test]
    fn not_found_names_the_edit() {
        let err = apply("abc", &[edit("a", "x"), edit("b", "y"), edit("nope", "z")]).unwrap_err();
        assert_eq!(err.edit_number(), 3);
        assert_eq!(err.message(), "edit 3: oldString not found in file");
        assert_eq!(ToolError::from(err).code, ErrorCode::NoMatch);
    }

    #[test]
    fn not_found_after_an_earlier_edit_removed_the_text() {
        let err = apply("abc", &[edit("abc", "xyz"), edit("abc", "q")]).unwrap_err();
        assert_eq!(err.edit_number(), 2);
    }

    #[test]
    fn replacement_is_literal() {
        let text = apply("price: 5", &[edit("5", "$& $$ $1 \\0")]).unwrap();
        assert_eq!(text, "price: $& $$ $1 \\0");
        assert_eq!(apply("a a", &[edit_all("a", "$&$&")]).unwrap(), "$&$& $&$&");
    }

    #[test]
    fn crlf_file_with_lf_old_string() {
        let text = "fn a() {\r\n    one();\r\n    two();\r\n}\r\n";
        let edits = [edit(
            "    one();\n    two();\n",
            "    one();\n    three();\n    two();\n",
        )];
        assert_eq!(
            apply(text, &edits).unwrap(),
            "fn a() {\r\n    one();\r\n    three();\r\n    two();\r\n}\r\n"
        );
    }

    #[test]
    fn crlf_file_with_crlf_old_string() {
        let text = "a\r\nb\r\nc\r\n";
        assert_eq!(
            apply(text, &[edit("a\r\nb", "x\r\ny")]).unwrap(),
            "x\r\ny\r\nc\r\n"
        );
    }

    #[test]
    fn crlf_conversion_counts_matches_of_the_converted_string() {
        let err = apply("a\r\nb a\r\nb", &[edit("a\nb", "c")]).unwrap_err();
        assert_eq!(
            err,
            EditError::MultipleMatches {
                edit: 1,
                count: 2,
                lines: vec![1, 2]
            }
        );
        let text = apply("a\r\nb a\r\nb", &[edit_all("a\nb", "c\nd")]).unwrap();
        assert_eq!(text, "c\r\nd c\r\nd");
    }

    #[test]
    fn crlf_conversion_keeps_existing_crlf_in_new_string() {
        let text = apply("a\r\nb\r\n", &[edit("a\nb", "x\r\ny\nz")]).unwrap();
        assert_eq!(text, "x\r\ny\r\nz\r\n");
    }

    #[test]
    fn literal_lf_match_wins_over_conversion() {
        // Mixed file: the LF part matches literally, so no conversion happens.
        let text = apply("a\r\nb\r\na\nb\n", &[edit("a\nb", "c\nd")]).unwrap();
        assert_eq!(text, "a\r\nb\r\nc\nd\n");
    }

    #[test]
    fn mixed_endings_untouched_outside_the_edit() {
        let text = "one\r\ntwo\nthree\r\nfour\rfive\n";
        assert_eq!(
            apply(text, &[edit("three", "3")]).unwrap(),
            "one\r\ntwo\n3\r\nfour\rfive\n"
        );
    }

    #[test]
    fn lf_file_is_not_converted() {
        let err = apply("a\nb\n", &[edit("a\r\nb", "x")]).unwrap_err();
        assert_eq!(err.edit_number(), 1);
        assert!(matches!(err, EditError::NotFound { .. }));
    }

    #[test]
    fn missing_final_newline_is_preserved() {
        assert_eq!(apply("a\nb", &[edit("a", "c")]).unwrap(), "c\nb");
        assert_eq!(apply("a\r\nb", &[edit("b", "d")]).unwrap(), "a\r\nd");
    }

    #[test]
    fn bom_survives_an_edit() {
        use crate::text::decode::decode_for_edit;
        let mut file = decode_for_edit(b"\xEF\xBB\xBFhello\r\nworld").unwrap();
        file.text = apply(&file.text, &[edit("hello", "goodbye")]).unwrap();
        assert_eq!(file.to_bytes(), b"\xEF\xBB\xBFgoodbye\r\nworld");
    }

    #[test]
    fn not_found_shows_closest_match_for_indentation_mismatch() {
        let text = "def f():\n\tif x:\n\t\treturn 1\n\treturn 2\n";
        let err = apply(text, &[edit("    if x:\n        return 1", "pass")]).unwrap_err();
        assert_eq!(
            err.message(),
            "edit 1: oldString not found in file\n\
             The closest match is at lines 2-3 (whitespace or indentation differs):\n   \
             2 | \tif x:\n   \
             3 | \t\treturn 1"
        );
    }

    #[test]
    fn not_found_hint_for_a_single_similar_line() {
        let text = "alpha\nlet total = compute(items);\nomega\n";
        let err = apply(text, &[edit("let total = compute(item);", "x")]).unwrap_err();
        assert_eq!(
            err.message(),
            "edit 1: oldString not found in file\n\
             The closest match is at line 2 (similar, not identical):\n   \
             2 | let total = compute(items);"
        );
    }

    #[test]
    fn not_found_without_plausible_match_has_no_hint() {
        let text = "def f():\n\tif x:\n\t\treturn 1\n";
        let err = apply(text, &[edit("SELECT * FROM users WHERE id = 7", "x")]).unwrap_err();
        assert_eq!(
            err,
            EditError::NotFound {
                edit: 1,
                closest: None
            }
        );
        assert_eq!(err.message(), "edit 1: oldString not found in file");
    }

    #[test]
    fn large_text_many_edits_is_fast() {
        let mut text = String::with_capacity(2 << 20);
        let mut i = 0;
        while text.len() < 2 << 20 {
            text.push_str(&format!("line {i}: some ordinary source text here;\n"));
            if i % 20 == 0 {
                text.push_str("    REPEATED_TOKEN();\n");
            }
            i += 1;
        }
        let mut edits: Vec<Edit> = (0..50)
            .map(|k| edit(&format!("line {}: ", k * 800 + 3), &format!("LINE {k}: ")))
            .collect();
        edits.push(edit_all("REPEATED_TOKEN", "renamed_token"));
        let started = Instant::now();
        let outcome = apply_edits(&text, &edits).unwrap();
        eprintln!("2 MB, 51 edits: {:?}", started.elapsed());
        assert_eq!(outcome.replacements[..50], [1; 50]);
        assert!(outcome.replacements[50] >= 2_000);
        assert!(!outcome.text.contains("REPEATED_TOKEN"));
    }

    fn arb_edit() -> impl Strategy<Value = Edit> {
        ("[ab\r\n]{0,4}", "[ab\r\n$&]{0,4}", any::<bool>()).prop_map(|(old, new, all)| Edit {
            old_string: old,
            new_string: new,
            replace_all: all,
        })
    }

    /// A `\r` not followed by `\n`.
    fn has_lone_cr(text: &str) -> bool {
        let bytes = text.as_bytes();
        (0..bytes.len()).any(|i| bytes[i] == b'\r' && bytes.get(i + 1) != Some(&b'\n'))
    }

    /// Every `\n` is part of a CRLF pair, and there is at least one.
    fn is_crlf_file(text: &str) -> bool {
        has_crlf(text) && !has_bare_lf(text)
    }

    /// Replacement text built of `a`, `b`, LF and whole CRLF pairs: no lone `\r`.
    fn new_without_lone_cr() -> impl Strategy<Value = String> {
        proptest::collection::vec(prop_oneof!["a", "b", "\n", "\r\n"], 0..4)
            .prop_map(|pieces| pieces.concat())
    }

    fn lf_edit() -> impl Strategy<Value = Edit> {
        ("[ab\n]{1,4}", "[ab\n]{0,4}", any::<bool>()).prop_map(|(old, new, all)| Edit {
            old_string: old,
            new_string: new,
            replace_all: all,
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// ../../docs/tools.md: an edit never leaves a lone `\r` or `\n` in a CRLF file that it did not have.
        #[test]
        fn an_edit_adds_no_lone_cr_or_lf(
            text in "[ab\r\n]{0,24}",
            old in "[ab\r\n]{1,4}",
            new in new_without_lone_cr(),
            all in any::<bool>(),
        ) {
            let edits = [Edit { old_string: old, new_string: new, replace_all: all }];
            if let Ok(outcome) = apply_edits(&text, &edits) {
                if !has_lone_cr(&text) {
                    prop_assert!(!has_lone_cr(&outcome.text), "lone CR in {:?}", outcome.text);
                }
                if is_crlf_file(&text) {
                    prop_assert!(!has_bare_lf(&outcome.text), "bare LF in {:?}", outcome.text);
                }
            }
        }

        /// An edit written with LF gives, on the CRLF copy of a file that has line breaks, the
        /// CRLF copy of what it gives on the LF file, or fails the same way.
        #[test]
        fn lf_edits_on_a_crlf_copy_give_the_crlf_copy(
            text in "[ab\n]{0,24}",
            edits in proptest::collection::vec(lf_edit(), 1..4),
        ) {
            let mut text = text;
            for edit in &edits {
                let edits = std::slice::from_ref(edit);
                let on_lf = model::without_hint(apply_edits(&text, edits));
                if text.contains('\n') {
                    let on_crlf = model::without_hint(apply_edits(&lf_to_crlf(&text), edits));
                    let expected = on_lf.clone().map(|(out, counts)| (lf_to_crlf(&out), counts));
                    prop_assert_eq!(on_crlf, expected);
                }
                match on_lf {
                    Ok((out, _)) => text = out,
                    Err(_) => break,
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn matches_reference_model(
            text in "[ab\r\n]{0,24}",
            edits in proptest::collection::vec(arb_edit(), 1..4),
        ) {
            let expected = model::apply(&text, &edits);
            prop_assert_eq!(model::without_hint(apply_edits(&text, &edits)), expected);
        }
    }
}
