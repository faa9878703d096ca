//! The pure text engine behind the file tools: no filesystem access, only bytes
//! and strings in and out.
//!
//! - [`decode`]: binary detection, strict UTF-8 decoding with BOM round trip
//!   (for `edit_file`), lossy decoding (for `read_file`).
//! - [`edit`]: `edit_file`'s batched exact-string replacement, its error
//!   messages and the closest-match hint for an `oldString` that was not found.
//! - [`diff`]: time-bounded unified diffs for write, edit and append.
//! - [`page`]: `read_file`'s pages: numbered lines of a range, bounded, streamed.
//! - [`quantity`]: counts with their unit, as the messages write them.
//! - [`patch`]: `apply_patch`'s parser (Codex format, unified diff) and matcher.

mod closest;
pub mod decode;
pub mod delta;
pub mod diff;
pub mod edit;
mod occurrences;
pub mod page;
pub mod patch;
pub mod quantity;
