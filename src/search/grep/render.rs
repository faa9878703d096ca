//! `grep`'s output: `path:line: text` for a match, `path-line- text` for context, `--` between
//! groups, as `rg` prints them (the format models know), in path order and within the bounds;
//! then a note saying which bound cut it and how to narrow the search, or, when nothing
//! matched, what was skipped.

use std::path::Path;

use super::collected::{Collected, Line};
use super::Bounds;
use crate::paths::shown::{echo, Shown};

/// Which bound cut the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    Matches,
    Bytes,
}

/// The output of a search.
#[derive(Debug)]
pub struct Rendered {
    pub text: String,
    /// The matching lines shown.
    pub matches: usize,
    /// The files with lines shown.
    pub files: usize,
    /// Matches were left out, for this bound.
    pub cut: Option<Cut>,
}

/// What was searched, for the message when nothing matched.
pub struct Searched<'a> {
    pub pattern: &'a str,
    pub path: &'a Path,
    /// A tree was searched without `includeIgnored`, so ignored (and binary) files were skipped.
    pub ignored_skipped: bool,
}

/// The search's output as the model reads it: the lines, or why there are none, and the note
/// on what was left out.
pub fn output(collected: &Collected, bounds: &Bounds, searched: &Searched<'_>) -> Rendered {
    let mut rendered = render(collected, bounds);
    if rendered.matches == 0 {
        rendered.text = no_matches(searched);
    }
    if let Some(cut) = rendered.cut {
        rendered.text.push('\n');
        rendered
            .text
            .push_str(&truncation_note(cut, rendered.matches, bounds));
    }
    rendered
}

fn no_matches(searched: &Searched<'_>) -> String {
    let mut text = format!(
        "No matches for `{}` in {}.",
        echo(searched.pattern),
        searched.path.shown()
    );
    if searched.ignored_skipped {
        text.push_str(" Binary files and files ignored by .gitignore were skipped; set includeIgnored: true to search ignored files.");
    }
    text
}

/// The bytes `line` takes in the output, newline included.
pub(super) fn rendered_len(label_len: usize, line: &Line) -> usize {
    match line {
        Line::Match(n, text) | Line::Context(n, text) => {
            label_len + 1 + n.to_string().len() + 2 + text.len() + 1
        }
        Line::Break => 3,
    }
}

/// The collected files in path order, within the bounds.
fn render(collected: &Collected, bounds: &Bounds) -> Rendered {
    let mut out: Vec<String> = Vec::new();
    let mut size = 0;
    let mut matches = 0;
    let mut files = 0;
    let mut cut = None;
    'files: for (rel, hits) in &collected.files {
        let label = rel.shown();
        let mut started = false;
        // After the last allowed match, only its trailing context is still shown.
        let mut trailing = bounds.context;
        for line in &hits.lines {
            let text = match line {
                Line::Match(..) | Line::Break if matches == bounds.max_matches => {
                    cut = Some(Cut::Matches);
                    break 'files;
                }
                Line::Context(..) if matches == bounds.max_matches && trailing == 0 => {
                    cut = Some(Cut::Matches);
                    break 'files;
                }
                Line::Match(n, text) => format!("{label}:{n}: {text}"),
                Line::Context(n, text) => format!("{label}-{n}- {text}"),
                Line::Break => "--".to_owned(),
            };
            let separator = !started && files > 0 && bounds.context > 0;
            let needed = text.len() + 1 + if separator { 3 } else { 0 };
            if size + needed > bounds.max_bytes {
                cut = Some(Cut::Bytes);
                break 'files;
            }
            if separator {
                out.push("--".to_owned());
            }
            if !started {
                started = true;
                files += 1;
            }
            size += needed;
            match line {
                Line::Match(..) => matches += 1,
                Line::Context(..) if matches == bounds.max_matches => trailing -= 1,
                _ => {}
            }
            out.push(text);
        }
    }
    if cut.is_none() && collected.more {
        cut = Some(if matches >= bounds.max_matches {
            Cut::Matches
        } else {
            Cut::Bytes
        });
    }
    Rendered {
        text: out.join("\n"),
        matches,
        files,
        cut,
    }
}

fn truncation_note(cut: Cut, shown: usize, bounds: &Bounds) -> String {
    match cut {
        Cut::Matches => format!(
            "[Showing the first {shown} matches (maxMatches: {}); there are more. Narrow the search with a more specific pattern, include (e.g. \"*.ts\") or a subdirectory as path, or raise maxMatches.]",
            bounds.max_matches
        ),
        Cut::Bytes => format!(
            "[Output truncated at {} bytes after {shown} matches; there are more. Narrow the search with a more specific pattern, include (e.g. \"*.ts\") or a subdirectory as path{}.]",
            bounds.max_bytes,
            if bounds.context > 0 { ", or use fewer contextLines" } else { "" }
        ),
    }
}

#[cfg(test)]
mod tests {
    use grep_matcher::Matcher;

    use super::super::build_matcher;
    use super::super::testing::{bounds, collect, hits};
    use super::*;

    #[test]
    fn matches_are_path_line_text_sorted_by_path() {
        let b = bounds(100, 65536, 0);
        let c = collect(
            &[
                ("b.rs", "fn main() {}\nlet x = 1;\n"),
                ("a.rs", "x\nfn a() {}\r\n"),
            ],
            r"fn \w+\(\)",
            &b,
        );
        let r = render(&c, &b);
        assert_eq!(r.text, "a.rs:2: fn a() {}\nb.rs:1: fn main() {}");
        assert_eq!((r.matches, r.files, r.cut), (2, 2, None));
    }

    #[test]
    fn file_names_are_shown_escaped_and_text_as_it_is() {
        let b = bounds(100, 65536, 0);
        let c = collect(&[("a\nb\u{202e}.rs", "hit\tx\n")], "hit", &b);
        assert_eq!(render(&c, &b).text, "a\\nb\\u202e.rs:1: hit\tx");
    }

    #[test]
    fn context_lines_and_separators_look_like_rg() {
        let b = bounds(100, 65536, 1);
        let text = "1\nhit\n3\n4\n5\n6\nhit\n8\n";
        let c = collect(&[("f", text), ("g", "hit\n")], "hit", &b);
        assert_eq!(
            render(&c, &b).text,
            "f-1- 1\nf:2: hit\nf-3- 3\n--\nf-6- 6\nf:7: hit\nf-8- 8\n--\ng:1: hit"
        );
    }

    #[test]
    fn max_matches_cuts_in_path_order_with_trailing_context() {
        let b = bounds(2, 65536, 1);
        let c = collect(
            &[("c", "hit\n"), ("a", "hit\nx\ny\nhit\nz\n"), ("b", "hit\n")],
            "hit",
            &b,
        );
        // `b` and `c` sort after two matches: they were dropped while collecting.
        assert_eq!(c.files.len(), 1);
        let r = render(&c, &b);
        assert_eq!(r.text, "a:1: hit\na-2- x\na-3- y\na:4: hit\na-5- z");
        assert_eq!(r.cut, Some(Cut::Matches));
        assert!(truncation_note(Cut::Matches, 2, &b).contains("raise maxMatches"));
    }

    #[test]
    fn a_file_with_more_matches_than_the_bound_stops_early() {
        let b = bounds(3, 65536, 0);
        let h = hits(&"hit\n".repeat(1000), "hit", &b).unwrap();
        assert_eq!(h.matches, 3);
        assert!(h.more);
        let c = collect(&[("a", &"hit\n".repeat(10))], "hit", &b);
        let r = render(&c, &b);
        assert_eq!(r.text.lines().count(), 3);
        assert_eq!(r.cut, Some(Cut::Matches));
    }

    #[test]
    fn the_byte_bound_cuts_whole_lines() {
        let b = bounds(100, 30, 0);
        let c = collect(&[("a", "hit one\nhit two\nhit three\n")], "hit", &b);
        let r = render(&c, &b);
        assert_eq!(r.text, "a:1: hit one\na:2: hit two");
        assert_eq!(r.cut, Some(Cut::Bytes));
        let note = truncation_note(Cut::Bytes, r.matches, &b);
        assert!(
            note.starts_with("[Output truncated at 30 bytes after 2 matches"),
            "{note}"
        );
    }

    #[test]
    fn case_insensitive_and_crlf() {
        let m = build_matcher("HELLO$", true, "grep").unwrap();
        assert!(m.is_match(b"say hello").unwrap());
        let b = bounds(100, 65536, 0);
        let c = collect(&[("w", "end\r\nend\r\n")], "end$", &b);
        assert_eq!(render(&c, &b).text, "w:1: end\nw:2: end");
    }

    #[test]
    fn the_output_says_what_was_skipped_or_cut() {
        let searched = |ignored_skipped| Searched {
            pattern: "nope",
            path: Path::new("/w"),
            ignored_skipped,
        };
        let b = bounds(1, 65536, 0);
        let none = collect(&[("a", "hit\n")], "nope", &b);
        assert_eq!(
            output(&none, &b, &searched(false)).text,
            "No matches for `nope` in /w."
        );
        assert!(output(&none, &b, &searched(true))
            .text
            .ends_with("set includeIgnored: true to search ignored files."));
        let cut = collect(&[("a", "hit\nhit\n")], "hit", &b);
        let r = output(&cut, &b, &searched(true));
        assert_eq!(
            r.text,
            format!("a:1: hit\n{}", truncation_note(Cut::Matches, 1, &b))
        );
    }
}
