//! Applying one file's chunks to its text (../../../docs/tools.md#apply_patch, "Finding a
//! chunk"): each placed, then the new text built around them.
//!
//! Where each chunk goes is [`super::place`]; the error for one that has no place,
//! [`super::explain`]; whether a file already has the change, [`super::already_applied`].

use super::error::PatchError;
use super::explain::explain_miss;
use super::lines::FileLines;
use super::model::{Chunk, ChunkLine};
use super::place::anchors_of;
#[cfg(not(test))]
use super::place::{place_all, Place};
use super::seek::{Haystack, MatchLevel};
use crate::cancel::CancelToken;
use crate::text::diff::LineSpan;
// The reference tests (tests/reference.rs) reach the placing through this module.
#[cfg(test)]
pub(super) use super::place::{enclosing_anchor, place_all, Miss, Place, Unplaced};

/// A file's new text after its chunks were applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The whole new text (without a BOM: the caller keeps the file's, as `TextFile` does).
    pub text: String,
    /// Every chunk that matched at a level other than exact, in chunk order.
    pub fuzzy: Vec<FuzzyMatch>,
    /// The lines each chunk replaced and the lines that replaced them, in order: around them
    /// the text is unchanged (but for a last line that lost or gained its newline), so a diff
    /// needs to compare only these ([`crate::text::diff::unified_diff_within`]).
    pub spans: Vec<LineSpan>,
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
    let (text, spans) = rebuild(&file, chunks, &placed);
    Ok(Applied { text, fuzzy, spans })
}

/// The new text: the file's lines outside the chunks, and for each chunk its context lines as
/// the file has them and its added lines with the file's usual ending; then the final newline
/// as the file had it (or as a unified diff's `\ No newline at end of file` says). With it, the
/// lines each chunk replaced and the lines that replaced them.
fn rebuild(file: &FileLines, chunks: &[Chunk], placed: &[Place]) -> (String, Vec<LineSpan>) {
    let ending = file.usual_ending();
    let mut lines: Vec<(&str, &str)> = Vec::with_capacity(file.len());
    let mut missing_final_newline = file.missing_final_newline();
    let mut spans = Vec::with_capacity(chunks.len());
    let mut next = 0;
    for (chunk, place) in chunks.iter().zip(placed) {
        lines.extend(
            file.lines[next..place.start]
                .iter()
                .map(|l| (l.text, l.ending)),
        );
        let new_start = lines.len();
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
        spans.push(LineSpan {
            old: place.start..at,
            new: new_start..lines.len(),
        });
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
    (out, spans)
}
