//! Where each of one file's chunks goes in its text (../../../docs/tools.md#apply_patch, "Finding
//! a chunk"), or why one has no place.
//!
//! Chunks are placed in order, each at or after the end of the one before (the cursor), so no
//! chunk can land in lines an earlier chunk wrote; searching the file as it was after the cursor
//! is searching it as the earlier chunks left it, and line numbers in messages are the file's
//! own (it is unchanged when a chunk fails). Where a chunk may be:
//! - after its `@@` anchors (each the first line at or after the previous one that matches):
//!   the first match at or after the last anchor line, so that naming the enclosing function
//!   or class picks the nearest of repeated lines;
//! - with a unified hunk's line numbers: a match exactly at the hinted line (shifted by how
//!   far the previous hunk landed from its own hint, as `patch` does) wins; otherwise it must
//!   be the only one;
//! - otherwise it must be the only one after the cursor.
//!
//! The ladder of [`MatchLevel`]s is tried in order and the first level with any candidate
//! decides. A chunk without old lines (only `+` lines) goes after its last anchor, at its
//! hinted line, or at the end of the file.

use super::model::Chunk;
use super::seek::{Haystack, MatchLevel};
use crate::cancel::CancelToken;

/// Every `@@` anchor of `chunks`.
pub(super) fn anchors_of(chunks: &[Chunk]) -> impl Iterator<Item = &str> {
    chunks
        .iter()
        .flat_map(|chunk| chunk.anchors.iter().map(String::as_str))
}

/// A chunk without a place: which, why, and where the cursor was.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Unplaced {
    pub index: usize,
    pub miss: Miss,
    pub cursor: usize,
}

/// Where each chunk goes, in order (see the module docs), or the first that has none.
pub(super) fn place_all(
    hay: &Haystack,
    chunks: &[Chunk],
    cancel: &CancelToken,
) -> Result<Vec<Place>, Unplaced> {
    let mut placed = Vec::with_capacity(chunks.len());
    let mut cursor = 0;
    let mut drift = 0isize;
    for (index, chunk) in chunks.iter().enumerate() {
        let unplaced = |miss| Unplaced {
            index,
            miss,
            cursor,
        };
        if cancel.is_aborted() {
            return Err(unplaced(Miss::Aborted));
        }
        let old = chunk.old_lines();
        let hinted = chunk
            .hint
            .map(|h| shifted(hint_index(h.old_start, h.old_len), drift));
        let place = find_place(hay, chunk, &old, hinted, cursor).map_err(unplaced)?;
        let away_from_the_end = !old.is_empty() && place.start + place.len < hay.len();
        if chunk.end_of_file && away_from_the_end && new_text_ends(hay, chunk) {
            // Its old text is only away from the end, and its new text already ends the file:
            // the chunk was applied there, and placing it higher up would apply it twice.
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

/// Whether `chunk`'s new lines (some) are exactly the last lines of `hay`.
fn new_text_ends(hay: &Haystack, chunk: &Chunk) -> bool {
    let new = chunk.new_lines();
    !new.is_empty()
        && hay
            .len()
            .checked_sub(new.len())
            .is_some_and(|at| hay.matches_at(&new, MatchLevel::Exact, at))
}

/// Where a chunk's lines were found (or, with no old lines, where its new lines go).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Place {
    pub start: usize,
    pub len: usize,
    pub level: MatchLevel,
}

/// Why a chunk has no place.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Miss {
    Anchor(String),
    NotFound,
    Ambiguous(Vec<usize>),
    /// The call was aborted before this chunk was placed.
    Aborted,
}

/// The 0-based index a hunk side's start names: its first line, or for an empty side the line
/// after which it goes.
pub(super) fn hint_index(start: usize, len: usize) -> usize {
    if len == 0 {
        start
    } else {
        start.saturating_sub(1)
    }
}

pub(super) fn shifted(index: usize, drift: isize) -> usize {
    index.saturating_add_signed(drift)
}

/// Seeks the chunk's anchors from `cursor`: returns where its lines may start (the last
/// anchor's line, which the chunk may repeat as its first context line) and that line.
pub(super) fn resolve_anchors(
    hay: &Haystack,
    chunk: &Chunk,
    cursor: usize,
) -> Result<(usize, Option<usize>), Miss> {
    let mut from = cursor;
    let mut anchor_line = None;
    for (index, anchor) in chunk.anchors.iter().enumerate() {
        let line = match seek_anchor(hay, anchor, from) {
            Some(line) => line,
            // The function or class an earlier chunk was in, named again for a later chunk
            // inside it: its line is behind the cursor already, and the chunk goes on from the
            // cursor (it never moves back).
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

/// The last line before `cursor` that `anchor` names, if it is the nearest such line (the scope
/// the cursor is in): where [`seek_anchor`], asked again and again from the top of the file
/// (each time after the line it gave), gives its last line before `cursor`. It gives every line
/// equal to the anchor once trimmed in order, then those equal with punctuation read as ASCII
/// after the last of them, then those containing it after the last of those.
pub(super) fn enclosing_anchor(hay: &Haystack, anchor: &str, cursor: usize) -> Option<usize> {
    let trimmed = hay.lines_equal_to(anchor, MatchLevel::Whitespace);
    let ascii = hay.lines_equal_to(anchor, MatchLevel::Punctuation);
    let containing = hay.lines_containing(anchor);
    let after = |lines: &'_ [u32], last: Option<u32>| -> (usize, Option<u32>) {
        let first = last.map_or(0, |last| lines.partition_point(|&line| line <= last));
        (first, lines[first..].last().copied().or(last))
    };
    let (ascii_from, last) = after(ascii, trimmed.last().copied());
    let (containing_from, _) = after(&containing, last);
    let last_before = |lines: &[u32]| {
        let before = lines.partition_point(|&line| (line as usize) < cursor);
        before.checked_sub(1).map(|i| lines[i] as usize)
    };
    last_before(&containing[containing_from..])
        .or_else(|| last_before(&ascii[ascii_from..]))
        .or_else(|| last_before(trimmed))
}

/// The first line at or after `from` that an anchor names: equal once trimmed, then with
/// punctuation read as ASCII, then containing it (models often shorten a signature).
fn seek_anchor(hay: &Haystack, anchor: &str, from: usize) -> Option<usize> {
    let first_from = |lines: &[u32]| {
        lines
            .get(lines.partition_point(|&line| (line as usize) < from))
            .map(|&line| line as usize)
    };
    first_from(hay.lines_equal_to(anchor, MatchLevel::Whitespace))
        .or_else(|| first_from(hay.lines_equal_to(anchor, MatchLevel::Punctuation)))
        .or_else(|| first_from(&hay.lines_containing(anchor)))
}

/// Where `pattern` (a chunk's old or new lines) is, by the rules in the module doc.
pub(super) fn find_place(
    hay: &Haystack,
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
            // After its anchor, unless the anchor is behind the cursor (an enclosing scope an
            // earlier chunk went past): then at the cursor.
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
    // Without anchors, a match exactly at the hinted line wins, whatever else matches. Checked
    // first, it needs no index of the file's lines: most hunks of a diff made from the file
    // land here.
    if let Some(h) = hinted
        .filter(|&h| anchor.is_none() && h >= from && hay.matches_at(pattern, MatchLevel::Exact, h))
    {
        return Ok(Place {
            start: h,
            len: m,
            level: MatchLevel::Exact,
        });
    }
    for &level in MatchLevel::ladder_for(pattern) {
        let mut candidates = hay.candidates(pattern, level, from);
        let Some(first) = candidates.next() else {
            continue;
        };
        let place = |start| Place {
            start,
            len: m,
            level,
        };
        if anchor.is_some() {
            return Ok(place(first));
        }
        return match candidates.next() {
            None => Ok(place(first)),
            Some(second) => Err(Miss::Ambiguous(
                [first, second].into_iter().chain(candidates).collect(),
            )),
        };
    }
    Err(Miss::NotFound)
}
