//! The pure text engine behind the file tools: no filesystem access, only bytes
//! and strings in and out.
//!
//! - [`bounded`]: every output cut near the output limit, with a note saying what was left out.
//! - [`decode`]: binary detection, strict UTF-8 decoding with BOM round trip
//!   (for `edit_file`), lossy decoding (for `read_file`).
//! - [`edit`]: `edit_file`'s batched exact-string replacement, its error
//!   messages and the closest-match hint for an `oldString` that was not found.
//! - [`line_split`]: a text's lines, each with its `\n`.
//! - [`diff`]: time-bounded unified diffs for write, edit and append; [`diff_cut`]: one cut to a
//!   size, still a valid diff.
//! - [`page`]: `read_file`'s pages: numbered lines of a range, bounded, streamed.
//! - [`quantity`]: counts with their unit, as the messages write them.
//! - [`patch`]: `apply_patch`'s parser (Codex format, unified diff) and matcher.

pub mod bounded;
mod closest;
pub mod decode;
pub mod delta;
pub mod diff;
pub mod diff_cut;
pub mod edit;
pub mod line_split;
mod occurrences;
pub mod page;
pub mod patch;
pub mod quantity;
