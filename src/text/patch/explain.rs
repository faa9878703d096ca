//! The error for a chunk that has no place in its file, with what helps the model fix it: the
//! closest lines, or where its lines are when they are out of order or already there.

use super::error::PatchError;
use super::model::Chunk;
use super::place::Miss;
use super::seek::{Haystack, MatchLevel};
use crate::text::closest::find_closest;

/// The error for a chunk without a place, with what helps the model fix it.
pub(super) fn explain_miss(
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
