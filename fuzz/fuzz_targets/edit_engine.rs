//! The edit engine (`text::edit::apply_edits`) never panics, and agrees with a naive reference
//! model of SPEC §5 edit_file (the same model as the engine's proptest, made safe for any
//! Unicode): edits in order, exactly one (overlapping) occurrence unless `replaceAll`,
//! non-overlapping left-to-right replacement, literal replacement text, CRLF retry.
#![no_main]

use agent_fs_tools::text::edit::{apply_edits, Edit, EditError, EditOutcome};
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    /// Text built from a small alphabet (so matches are frequent) or taken as it is.
    text: Piece,
    edits: Vec<(Piece, Piece, bool)>,
}

#[derive(Arbitrary, Debug)]
enum Piece {
    /// Indexes into an alphabet of ASCII, CRLF and multi-byte characters.
    Small(Vec<u8>),
    Any(String),
}

const ALPHABET: &[&str] = &[
    "a", "b", "\n", "\r", "\r\n", "é", "e\u{301}", "\u{feff}", "$&", "ab", " ", "\t", "🙂",
];

impl Piece {
    fn render(&self) -> String {
        match self {
            Piece::Small(ix) => ix
                .iter()
                .take(64)
                .map(|i| ALPHABET[*i as usize % ALPHABET.len()])
                .collect(),
            Piece::Any(s) => s.chars().take(256).collect(),
        }
    }
}

mod model {
    use super::*;

    fn boundaries(text: &str) -> impl Iterator<Item = usize> + '_ {
        (0..text.len()).filter(|&i| text.is_char_boundary(i))
    }

    fn occurrences(text: &str, needle: &str) -> Vec<usize> {
        boundaries(text)
            .filter(|&i| text[i..].starts_with(needle))
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
            if text[i..].starts_with(old) {
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

    /// Errors are compared without the closest-match hint.
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
                });
            }
        }
        Ok((text, counts))
    }
}

fn without_hint(result: Result<EditOutcome, EditError>) -> Result<(String, Vec<usize>), EditError> {
    match result {
        Ok(outcome) => Ok((outcome.text, outcome.replacements)),
        Err(EditError::NotFound { edit, .. }) => Err(EditError::NotFound {
            edit,
            closest: None,
        }),
        Err(other) => Err(other),
    }
}

fuzz_target!(|input: Input| {
    let text = input.text.render();
    let edits: Vec<Edit> = input
        .edits
        .iter()
        .take(6)
        .map(|(old, new, all)| Edit {
            old_string: old.render(),
            new_string: new.render(),
            replace_all: *all,
        })
        .collect();
    let actual = apply_edits(&text, &edits);
    // The messages (with the closest-match hint) are built for every error: never a panic.
    if let Err(e) = &actual {
        let _ = e.message();
    }
    let expected = model::apply(&text, &edits);
    assert_eq!(
        without_hint(actual),
        expected,
        "text {text:?}, edits {edits:?}"
    );
});
