//! The edit engine (`text::edit::apply_edits`) never panics, and agrees with the naive reference
//! model of edit_file (../../docs/tools.md#edit_file) that its proptests use (`text::edit::model`, compiled in under
//! `cfg(fuzzing)`): edits in order, exactly one (overlapping) occurrence unless `replaceAll`,
//! non-overlapping left-to-right replacement, literal replacement text, CRLF retry, no match
//! splitting a CRLF pair.
#![no_main]

use agent_fs_tools::text::edit::model::{self, without_hint};
use agent_fs_tools::text::edit::{apply_edits, Edit};
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
