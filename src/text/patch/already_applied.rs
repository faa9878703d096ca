//! Whether a file already has a patch's change, so that a retried patch is answered as applied
//! instead of being applied twice.

use super::lines::FileLines;
use super::model::Chunk;
use super::place::{anchors_of, find_place, hint_index, resolve_anchors, shifted, Place};
use super::seek::{Haystack, MatchLevel};
use crate::cancel::CancelToken;

/// True when `text` already has the change of `chunks`: every chunk's new lines are where its
/// old lines would be (found the way [`apply`](super::apply()) finds old lines), and its old lines are not
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
