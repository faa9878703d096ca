//! The placement of chunks as it was before the lines were indexed (issue 26, item 6), kept as
//! a reference model: the same rules, written the plain way — every candidate of every chunk by
//! a scan of the rest of the file, anchors by a scan. Quadratic, and obviously what the docs
//! say (../../../../docs/tools.md#apply_patch); the property below checks the indexed placement against it.

use proptest::prelude::*;

use super::super::apply::{self, place_all, Miss, Place, Unplaced};
use super::super::seek::{Haystack, MatchLevel};
use super::super::{Chunk, ChunkLine, Hint};
use crate::cancel::CancelToken;

/// A file's lines, searched by scanning.
struct Plain<'t> {
    lines: Vec<&'t str>,
}

impl Plain<'_> {
    fn len(&self) -> usize {
        self.lines.len()
    }

    fn matches_at(&self, pattern: &[&str], level: MatchLevel, at: usize) -> bool {
        at + pattern.len() <= self.len()
            && pattern
                .iter()
                .zip(&self.lines[at..])
                .all(|(p, line)| level.normalize(p) == level.normalize(line))
    }

    fn occurrences(&self, pattern: &[&str], level: MatchLevel, from: usize) -> Vec<usize> {
        (from..self.len())
            .filter(|&i| self.matches_at(pattern, level, i))
            .collect()
    }
}

fn hint_index(start: usize, len: usize) -> usize {
    if len == 0 {
        start
    } else {
        start.saturating_sub(1)
    }
}

fn shifted(index: usize, drift: isize) -> usize {
    index.saturating_add_signed(drift)
}

/// Where every chunk goes, or the first that has no place (its index, why, and the cursor).
fn reference_place_all(hay: &Plain, chunks: &[Chunk]) -> Result<Vec<Place>, Unplaced> {
    let mut placed = Vec::new();
    let mut cursor = 0;
    let mut drift = 0isize;
    for (index, chunk) in chunks.iter().enumerate() {
        let old = chunk.old_lines();
        let hinted = chunk
            .hint
            .map(|h| shifted(hint_index(h.old_start, h.old_len), drift));
        let unplaced = |miss| Unplaced {
            index,
            miss,
            cursor,
        };
        let place = find_place(hay, chunk, &old, hinted, cursor).map_err(unplaced)?;
        // An end-of-file chunk found away from the end whose new lines end the file is applied.
        let new = chunk.new_lines();
        let new_at_end = !new.is_empty()
            && new.len() <= hay.len()
            && hay.matches_at(&new, MatchLevel::Exact, hay.len() - new.len());
        if chunk.end_of_file && !old.is_empty() && place.start + place.len < hay.len() && new_at_end
        {
            return Err(unplaced(Miss::NotFound));
        }
        if let (Some(h), false) = (chunk.hint, old.is_empty()) {
            drift = place.start as isize - hint_index(h.old_start, h.old_len) as isize;
        }
        cursor = place.start + place.len;
        placed.push(place);
    }
    Ok(placed)
}

fn reference_is_applied(hay: &Plain, chunks: &[Chunk]) -> bool {
    let mut cursor = 0;
    let mut drift = 0isize;
    for chunk in chunks {
        let (old, new) = (chunk.old_lines(), chunk.new_lines());
        if old == new {
            continue;
        }
        let Ok((from, anchor)) = resolve_anchors(hay, chunk, cursor) else {
            return false;
        };
        let old_found: Vec<usize> = MatchLevel::ladder_for(&old)
            .iter()
            .copied()
            .filter(|_| !old.is_empty())
            .map(|level| hay.occurrences(&old, level, from))
            .find(|found| !found.is_empty())
            .unwrap_or_default();
        if new.is_empty() {
            if !old_found.is_empty() {
                return false;
            }
            cursor = from;
            continue;
        }
        let hinted = chunk
            .hint
            .map(|h| shifted(hint_index(h.new_start, h.new_len), drift));
        let place = if old.is_empty() {
            let start = match (hinted, anchor) {
                (Some(h), _) => h.clamp(from, hay.len()),
                (None, Some(line)) => (line + 1).max(from),
                (None, None) => hay.len().saturating_sub(new.len()),
            };
            match MatchLevel::ladder_for(&new)
                .iter()
                .copied()
                .find(|&level| hay.matches_at(&new, level, start))
            {
                Some(level) => Place {
                    start,
                    len: new.len(),
                    level,
                },
                None => return false,
            }
        } else {
            match find_place(hay, chunk, &new, hinted, cursor) {
                Ok(place) => place,
                Err(_) => return false,
            }
        };
        let outside_new =
            |start: &usize| *start < place.start || start + old.len() > place.start + place.len;
        if old_found.iter().any(outside_new) {
            return false;
        }
        if let Some(h) = chunk.hint {
            drift = place.start as isize - hint_index(h.new_start, h.new_len) as isize;
        }
        cursor = place.start + place.len;
    }
    true
}

fn resolve_anchors(
    hay: &Plain,
    chunk: &Chunk,
    cursor: usize,
) -> Result<(usize, Option<usize>), Miss> {
    let mut from = cursor;
    let mut anchor_line = None;
    for (index, anchor) in chunk.anchors.iter().enumerate() {
        let line = match seek_anchor(hay, anchor, from) {
            Some(line) => line,
            None if index == 0 => {
                enclosing_anchor(hay, anchor, cursor).ok_or_else(|| Miss::Anchor(anchor.clone()))?
            }
            None => return Err(Miss::Anchor(anchor.clone())),
        };
        anchor_line = Some(line);
        from = (line + 1).max(from);
    }
    Ok((
        anchor_line.map_or(cursor, |line| line.max(cursor)),
        anchor_line,
    ))
}

fn enclosing_anchor(hay: &Plain, anchor: &str, cursor: usize) -> Option<usize> {
    let mut last = None;
    let mut from = 0;
    while let Some(line) = seek_anchor(hay, anchor, from).filter(|&line| line < cursor) {
        last = Some(line);
        from = line + 1;
    }
    last
}

fn seek_anchor(hay: &Plain, anchor: &str, from: usize) -> Option<usize> {
    let levels = [MatchLevel::Whitespace, MatchLevel::Punctuation];
    levels
        .into_iter()
        .find_map(|level| hay.occurrences(&[anchor], level, from).first().copied())
        .or_else(|| {
            let wanted = MatchLevel::Punctuation.normalize(anchor);
            (from..hay.len()).find(|&i| {
                MatchLevel::Punctuation
                    .normalize(hay.lines[i])
                    .contains(wanted.as_ref())
            })
        })
}

fn find_place(
    hay: &Plain,
    chunk: &Chunk,
    pattern: &[&str],
    hinted: Option<usize>,
    cursor: usize,
) -> Result<Place, Miss> {
    let (from, anchor) = resolve_anchors(hay, chunk, cursor)?;
    let n = hay.len();
    if pattern.is_empty() {
        let start = match (hinted, anchor) {
            (Some(h), _) => h.clamp(from, n),
            (None, Some(line)) => (line + 1).max(from),
            (None, None) => n,
        };
        return Ok(Place {
            start,
            len: 0,
            level: MatchLevel::Exact,
        });
    }
    let m = pattern.len();
    if chunk.end_of_file && n >= m && n - m >= from {
        let at_end = MatchLevel::ladder_for(pattern)
            .iter()
            .copied()
            .find(|&level| hay.matches_at(pattern, level, n - m));
        if let Some(level) = at_end {
            return Ok(Place {
                start: n - m,
                len: m,
                level,
            });
        }
    }
    for &level in MatchLevel::ladder_for(pattern) {
        let candidates = hay.occurrences(pattern, level, from);
        let place = |start| Place {
            start,
            len: m,
            level,
        };
        match candidates.as_slice() {
            [] => continue,
            [first, ..] if anchor.is_some() => return Ok(place(*first)),
            _ if level == MatchLevel::Exact && hinted.is_some_and(|h| candidates.contains(&h)) => {
                return Ok(place(hinted.expect("checked")))
            }
            [only] => return Ok(place(*only)),
            _ => return Err(Miss::Ambiguous(candidates)),
        }
    }
    Err(Miss::NotFound)
}

// --- The property ---------------------------------------------------------------------------

/// Lines that repeat and differ only by whitespace or typographic punctuation, so that every
/// level of the ladder, ambiguity and anchors by containment all come up.
const VOCABULARY: [&str; 14] = [
    "a",
    "a ",
    "  a",
    "b",
    "}",
    "",
    "  ",
    "say \u{201C}q\u{201D}",
    "say \"q\"",
    "fn x() {",
    "  fn x() {",
    "fn xy() {",
    "c\u{a0}d",
    "c d",
];

/// Anchors: whole lines, shortened ones, and ones that are nowhere.
const ANCHORS: [&str; 8] = [
    "fn x() {",
    "fn x",
    "fn",
    "a",
    "say \"q\"",
    "c d",
    "}",
    "zzz",
];

fn file_lines() -> impl Strategy<Value = Vec<&'static str>> {
    proptest::collection::vec(proptest::sample::select(VOCABULARY.to_vec()), 0..40)
}

/// A line as a model might misquote it: the same at a looser level of the ladder.
fn variant(line: &str) -> &str {
    match line {
        "a" => "a ",
        "a " => "  a",
        "  a" => "a",
        "say \u{201C}q\u{201D}" => "say \"q\"",
        "fn x() {" => "  fn x() {",
        "c\u{a0}d" => "c d",
        other => other,
    }
}

/// What a chunk is made of before it meets the file: per line, its kind (context, removed,
/// added), whether it is quoted loosely, and a line of the vocabulary used when it is not taken
/// from the file.
#[derive(Debug, Clone)]
struct Sketch {
    lines: Vec<(u8, bool, &'static str)>,
    /// How many lines after the previous chunk's window this one's starts (or none: its lines
    /// are the vocabulary's).
    skip: Option<usize>,
    /// Its `@@` lines; [`SAME_SCOPE`]: the previous chunk's (a later chunk in the same function).
    anchors: Vec<&'static str>,
    hint: Option<(isize, usize, usize)>,
    end_of_file: bool,
}

/// Stands for the previous chunk's anchors in a [`Sketch`].
const SAME_SCOPE: &str = "(same)";

fn sketch() -> impl Strategy<Value = Sketch> {
    (
        proptest::collection::vec(
            (
                0u8..4,
                proptest::bool::weighted(0.2),
                proptest::sample::select(VOCABULARY.to_vec()),
            ),
            0..6,
        ),
        proptest::option::weighted(0.8, 0usize..8),
        prop_oneof![
            3 => Just(Vec::new()),
            2 => Just(vec![SAME_SCOPE]),
            2 => proptest::collection::vec(proptest::sample::select(ANCHORS.to_vec()), 1..3),
        ],
        proptest::option::weighted(0.4, (-12isize..12, 0usize..6, 0usize..6)),
        proptest::bool::weighted(0.2),
    )
        .prop_map(|(lines, skip, anchors, hint, end_of_file)| Sketch {
            lines,
            skip,
            anchors,
            hint,
            end_of_file,
        })
}

/// A file and chunks for it: most chunks quote windows of the file in order (some lines
/// loosely), so that they are placed, found twice, or missed in every way the rules allow.
fn case() -> impl Strategy<Value = (Vec<&'static str>, Vec<Chunk>)> {
    (file_lines(), proptest::collection::vec(sketch(), 0..6)).prop_map(|(file, sketches)| {
        let mut window = 0;
        let mut scope: Vec<String> = Vec::new();
        let chunks = sketches
            .into_iter()
            .map(|sketch| {
                let start = sketch.skip.map(|skip| window + skip);
                let mut at = start.unwrap_or(0);
                let lines = sketch
                    .lines
                    .iter()
                    .map(|&(kind, loose, vocabulary)| {
                        let from_file = |at: &mut usize| {
                            let line = match start {
                                Some(_) => file.get(*at).copied().unwrap_or(vocabulary),
                                None => vocabulary,
                            };
                            *at += 1;
                            if loose { variant(line) } else { line }.to_owned()
                        };
                        match kind {
                            0 | 1 => ChunkLine::Context(from_file(&mut at)),
                            2 => ChunkLine::Remove(from_file(&mut at)),
                            _ => ChunkLine::Add(vocabulary.to_owned()),
                        }
                    })
                    .collect();
                if start.is_some() {
                    window = at;
                }
                let near = start.unwrap_or(window) as isize + 1;
                if sketch.anchors != [SAME_SCOPE] {
                    scope = sketch.anchors.iter().map(|a| a.to_string()).collect();
                }
                Chunk {
                    anchors: scope.clone(),
                    hint: sketch.hint.map(|(delta, old_len, new_len)| {
                        let start = (near + delta).max(0) as usize;
                        Hint {
                            old_start: start,
                            old_len,
                            new_start: start,
                            new_len,
                        }
                    }),
                    end_of_file: sketch.end_of_file,
                    lines,
                    ..Chunk::default()
                }
            })
            .collect();
        (file, chunks)
    })
}

fn anchors_of(chunks: &[Chunk]) -> impl Iterator<Item = &str> {
    chunks
        .iter()
        .flat_map(|c| c.anchors.iter().map(String::as_str))
}

/// A hunk that matches exactly at its hinted line is placed without indexing the file's lines
/// (building that index was most of placing the hunks of a diff made from the file); one that
/// does not is still found, through the index.
#[test]
fn a_hunk_at_its_hinted_line_needs_no_index() {
    let file = vec!["x", "a", "b", "x", "a", "b"];
    let hunk = |old_start| Chunk {
        hint: Some(Hint {
            old_start,
            old_len: 2,
            new_start: old_start,
            new_len: 2,
        }),
        lines: vec![
            ChunkLine::Context("a".into()),
            ChunkLine::Remove("b".into()),
            ChunkLine::Add("c".into()),
        ],
        ..Chunk::default()
    };
    let exact = Place {
        start: 4,
        len: 2,
        level: MatchLevel::Exact,
    };
    let hay = Haystack::new(file.clone(), []);
    assert_eq!(
        place_all(&hay, &[hunk(5)], &CancelToken::new()),
        Ok(vec![exact])
    );
    assert!(!hay.is_indexed());
    let hay = Haystack::new(file, []);
    let ambiguous = place_all(&hay, &[hunk(4)], &CancelToken::new());
    assert!(
        matches!(ambiguous, Err(Unplaced { miss: Miss::Ambiguous(ref at), .. }) if at == &[1, 4])
    );
    assert!(hay.is_indexed());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn indexed_placement_agrees_with_the_reference((file, chunks) in case()) {
        let plain = Plain { lines: file.clone() };
        let hay = Haystack::new(file.clone(), anchors_of(&chunks));
        let indexed = place_all(&hay, &chunks, &CancelToken::new());
        prop_assert_eq!(indexed, reference_place_all(&plain, &chunks));
    }

    /// The scope a later chunk's anchor names, for every line the cursor may be at (also where
    /// the tool never asks: the rule must be the same everywhere).
    #[test]
    fn enclosing_anchor_agrees_with_the_reference(
        file in file_lines(),
        anchor in proptest::sample::select(ANCHORS.to_vec()),
    ) {
        let plain = Plain { lines: file.clone() };
        let hay = Haystack::new(file.clone(), [anchor]);
        for cursor in 0..=file.len() + 1 {
            prop_assert_eq!(
                apply::enclosing_anchor(&hay, anchor, cursor),
                enclosing_anchor(&plain, anchor, cursor),
                "cursor {}", cursor
            );
        }
    }

    #[test]
    fn is_applied_agrees_with_the_reference((file, chunks) in case()) {
        let plain = Plain { lines: file.clone() };
        let text: String = file.iter().map(|l| format!("{l}\n")).collect();
        prop_assert_eq!(
            super::super::is_applied(&text, &chunks, &CancelToken::new()),
            reference_is_applied(&plain, &chunks)
        );
    }
}
