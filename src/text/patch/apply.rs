//! Placing one file's chunks in its text and building the new text (../../../docs/tools.md#apply_patch, "Finding a
//! chunk"), and telling whether a file already has a patch's change.
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

use super::error::PatchError;
use super::lines::FileLines;
use super::seek::{Haystack, MatchLevel};
use super::{Chunk, ChunkLine};
use crate::cancel::CancelToken;
use crate::text::closest::find_closest;

/// A file's new text after its chunks were applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The whole new text (without a BOM: the caller keeps the file's, as `TextFile` does).
    pub text: String,
    /// Every chunk that matched at a level other than exact, in chunk order.
    pub fuzzy: Vec<FuzzyMatch>,
}

/// A chunk matched at a level other than [`MatchLevel::Exact`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FuzzyMatch {
    /// 1-based chunk number within the file.
    pub chunk: usize,
    /// 1-based line of the file (before the patch) where the chunk's old lines start.
    pub line: usize,
    /// How loosely they matched.
    pub level: MatchLevel,
}

impl FuzzyMatch {
    /// A note for the result: `src/a.rs: chunk 2 matched at line 14 ignoring trailing whitespace`.
    pub fn describe(&self, path: &str) -> String {
        format!(
            "{path}: chunk {} matched at line {} {}",
            self.chunk,
            self.line,
            self.level.describe()
        )
    }
}

/// Applies `chunks` to `text` (one file's text, BOM removed). `path` only names the file in
/// error messages.
///
/// Fails with [`PatchError::NoMatch`] when a chunk's lines (or an anchor's line) are not where
/// the chunk may be, [`PatchError::MultipleMatches`] when they are there more than once, and
/// [`PatchError::Aborted`] once `cancel` is aborted (checked before each chunk).
pub fn apply(
    path: &str,
    text: &str,
    chunks: &[Chunk],
    cancel: &CancelToken,
) -> Result<Applied, PatchError> {
    let file = FileLines::new(text);
    let hay = Haystack::new(file.texts(), anchors_of(chunks));
    let placed = place_all(&hay, chunks, cancel).map_err(|unplaced| {
        explain_miss(
            unplaced.miss,
            path,
            text,
            &hay,
            chunks,
            unplaced.index,
            unplaced.cursor,
        )
    })?;
    let fuzzy = placed
        .iter()
        .enumerate()
        .filter(|(_, place)| place.level != MatchLevel::Exact)
        .map(|(index, place)| FuzzyMatch {
            chunk: index + 1,
            line: place.start + 1,
            level: place.level,
        })
        .collect();
    Ok(Applied {
        text: rebuild(&file, chunks, &placed),
        fuzzy,
    })
}

/// Every `@@` anchor of `chunks`.
fn anchors_of(chunks: &[Chunk]) -> impl Iterator<Item = &str> {
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
        if let (Some(h), false) = (chunk.hint, old.is_empty()) {
            drift = place.start as isize - hint_index(h.old_start, h.old_len) as isize;
        }
        cursor = place.start + place.len;
        placed.push(place);
    }
    Ok(placed)
}

/// True when `text` already has the change of `chunks`: every chunk's new lines are where its
/// old lines would be (found the way [`apply`] finds old lines), and its old lines are not
/// found (at the first level of the ladder that finds them at all) except inside those new
/// lines. A chunk that changes nothing counts as applied; so does an empty list. `false` once
/// `cancel` is aborted (the caller reports the abort).
pub fn is_applied(text: &str, chunks: &[Chunk], cancel: &CancelToken) -> bool {
    let file = FileLines::new(text);
    let hay = Haystack::new(file.texts(), anchors_of(chunks));
    let mut cursor = 0;
    let mut drift = 0isize;
    for chunk in chunks {
        if cancel.is_aborted() {
            return false;
        }
        let (old, new) = (chunk.old_lines(), chunk.new_lines());
        if old == new {
            continue;
        }
        let Ok((from, anchor)) = resolve_anchors(&hay, chunk, cursor) else {
            return false;
        };
        // Where apply would find the old lines: the first level that finds any.
        let old_level = MatchLevel::ladder_for(&old)
            .iter()
            .copied()
            .filter(|_| !old.is_empty())
            .find(|&level| hay.first(&old, level, from).is_some());
        if new.is_empty() {
            // Only `-` lines: applied when they are gone.
            if old_level.is_some() {
                return false;
            }
            cursor = from;
            continue;
        }
        let hinted = chunk
            .hint
            .map(|h| shifted(hint_index(h.new_start, h.new_len), drift));
        let place = if old.is_empty() {
            // Only `+` lines: they must be exactly where apply would have put them.
            let start = match (hinted, anchor) {
                (Some(h), _) => h.clamp(from, hay.len()),
                // After its anchor, unless the anchor is behind the cursor (an enclosing scope an
                // earlier chunk went past): then at the cursor.
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
            match find_place(&hay, chunk, &new, hinted, cursor) {
                Ok(place) => place,
                Err(_) => return false,
            }
        };
        let outside_new =
            |start: usize| start < place.start || start + old.len() > place.start + place.len;
        if let Some(level) = old_level {
            if hay.candidates(&old, level, from).any(outside_new) {
                return false;
            }
        }
        if let Some(h) = chunk.hint {
            drift = place.start as isize - hint_index(h.new_start, h.new_len) as isize;
        }
        cursor = place.start + place.len;
    }
    true
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

/// Seeks the chunk's anchors from `cursor`: returns where its lines may start (the last
/// anchor's line, which the chunk may repeat as its first context line) and that line.
fn resolve_anchors(
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
fn find_place(
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
        if let Some(h) = hinted.filter(|&h| {
            level == MatchLevel::Exact && h >= from && hay.matches_at(pattern, level, h)
        }) {
            return Ok(place(h));
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

/// The error for a chunk without a place, with what helps the model fix it.
fn explain_miss(
    miss: Miss,
    path: &str,
    text: &str,
    hay: &Haystack,
    chunks: &[Chunk],
    index: usize,
    cursor: usize,
) -> PatchError {
    let chunk = &chunks[index];
    let number = index + 1;
    match miss {
        Miss::Aborted => PatchError::Aborted,
        Miss::Anchor(anchor) => PatchError::NoMatch {
            path: path.to_owned(),
            chunk: number,
            closest: find_closest(text, &anchor),
            anchor: Some(anchor),
            note: None,
        },
        Miss::Ambiguous(starts) => PatchError::MultipleMatches {
            path: path.to_owned(),
            chunk: number,
            lines: starts.into_iter().map(|start| start + 1).collect(),
            unified: chunk.hint.is_some(),
        },
        Miss::NotFound => {
            let old = chunk.old_lines();
            let first_anywhere = |pattern: &[&str]| {
                MatchLevel::LADDER
                    .into_iter()
                    .find_map(|level| hay.first(pattern, level, 0))
            };
            let note = match first_anywhere(&old) {
                Some(start) if !chunk.anchors.is_empty() => Some(format!(
                    "they are at line {}, above the line its `@@` names",
                    start + 1
                )),
                Some(start) if start < cursor => Some(format!(
                    "they are at line {}, above the lines of chunk {}: chunks must follow the order of the file",
                    start + 1,
                    number - 1
                )),
                _ => {
                    let new = chunk.new_lines();
                    (!new.is_empty())
                        .then(|| first_anywhere(&new))
                        .flatten()
                        .map(|start| {
                            format!(
                                "its new lines are already at line {}; was the chunk applied already?",
                                start + 1
                            )
                        })
                }
            };
            PatchError::NoMatch {
                path: path.to_owned(),
                chunk: number,
                anchor: None,
                note,
                closest: find_closest(text, &old.join("\n")),
            }
        }
    }
}

/// The new text: the file's lines outside the chunks, and for each chunk its context lines as
/// the file has them and its added lines with the file's usual ending; then the final newline
/// as the file had it (or as a unified diff's `\ No newline at end of file` says).
fn rebuild(file: &FileLines, chunks: &[Chunk], placed: &[Place]) -> String {
    let ending = file.usual_ending();
    let mut lines: Vec<(&str, &str)> = Vec::with_capacity(file.len());
    let mut missing_final_newline = file.missing_final_newline();
    let mut next = 0;
    for (chunk, place) in chunks.iter().zip(placed) {
        lines.extend(
            file.lines[next..place.start]
                .iter()
                .map(|l| (l.text, l.ending)),
        );
        let mut at = place.start;
        for line in &chunk.lines {
            match line {
                ChunkLine::Context(_) if place.len > 0 => {
                    let kept = file.lines[at];
                    lines.push((kept.text, kept.ending));
                    at += 1;
                }
                ChunkLine::Context(text) => lines.push((text, ending)),
                ChunkLine::Remove(_) => at += 1,
                ChunkLine::Add(text) => lines.push((text, ending)),
            }
        }
        next = at;
        let reaches_end = place.start + place.len == file.len();
        if reaches_end && (chunk.old_missing_newline || chunk.new_missing_newline) {
            missing_final_newline = chunk.new_missing_newline;
        }
    }
    lines.extend(file.lines[next..].iter().map(|l| (l.text, l.ending)));
    let last = lines.len().saturating_sub(1);
    let mut out = String::with_capacity(file.lines.iter().map(|l| l.text.len() + 2).sum());
    for (i, (text, line_ending)) in lines.into_iter().enumerate() {
        out.push_str(text);
        if i < last || !missing_final_newline {
            out.push_str(if line_ending.is_empty() {
                ending
            } else {
                line_ending
            });
        }
    }
    out
}
