//! The `apply_patch` engine (../../../docs/tools.md#apply_patch): parses a patch in Codex's format or as a unified diff, and
//! applies one file's chunks to that file's text. Pure: no filesystem, no paths resolved.
//!
//! # Pipeline
//!
//! 1. [`parse`] reads the whole `input` into a [`Patch`]: a list of [`FilePatch`]es (add, delete,
//!    update, update with a move), in patch order. The format is told by the first non-blank line
//!    (`*** Begin Patch` or a `diff`/`---` header); a heredoc wrapper (`<<'EOF'` … `EOF`,
//!    `apply_patch <<'EOF'`) or a Markdown fence around the patch is dropped first. It fails with
//!    a line-numbered [`PatchError::Syntax`], [`PatchError::Empty`] or
//!    [`PatchError::DuplicatePath`].
//! 2. For each update, [`apply`] matches the file's [`Chunk`]s against its current text, in
//!    order (a forward cursor; `@@ <line>` anchors; unified hunks' line numbers as hints) with
//!    the ladder exact → trailing whitespace → leading and trailing whitespace → typographic
//!    punctuation read as ASCII, and builds the new text: `-` lines replaced by `+` lines as
//!    given, context lines kept as the file has them, line endings and the final-newline state
//!    kept, added lines ending as the file's lines do. [`Applied::fuzzy`] names every chunk
//!    matched at a level other than exact.
//! 3. [`is_applied`] tells whether a file already has a chunk list's change, so a retried patch
//!    is answered `Patch already applied; nothing changed.` instead of being applied twice.
//!
//! # How the `apply_patch` tool drives it
//!
//! 1. `parse(input)`; a [`PatchError`] converts to its [`ToolError`] (`INVALID_ARGUMENTS`).
//! 2. Resolve every path of every [`FilePatch`] (an update's `path` and `move_to`) through the
//!    sandbox, and refuse two that resolve to the same file: `parse` only compares spellings.
//! 3. Read each existing file and decode it with `text::decode::decode_for_edit`
//!    (`DecodeError::into_tool_error(path, "apply_patch", write_file)` for binary or non-UTF-8 files).
//! 4. Already applied? When every file is as the patch says (an added file exists with its
//!    `text`; a deleted file is gone; an update's file — for a move, the destination once the
//!    source is gone — satisfies [`is_applied`]), answer `Patch already applied; nothing
//!    changed.` and change nothing.
//! 5. Otherwise, for each update, `apply(display_path, &file.text, chunks)` gives the new text
//!    (write `TextFile { bom: file.bom, text }`, which keeps the BOM) and the chunks that
//!    matched loosely (`FuzzyMatch::describe` words the note); `NO_MATCH` and
//!    `MULTIPLE_MATCHES` convert the same way as parse errors.
//!
//! An added file's `text` has LF line endings (there is no file whose endings it could take).

mod already_applied;
mod apply;
mod candidates;
mod error;
mod explain;
mod lines;
mod model;
mod parse;
mod parse_codex;
mod parse_line;
mod parse_unified;
mod place;
mod seek;
#[cfg(test)]
mod tests;

pub use already_applied::is_applied;
pub use apply::{apply, Applied, FuzzyMatch};
pub use error::PatchError;
pub use model::{Chunk, ChunkLine, FilePatch, Hint, Patch, PatchChange, PatchFormat};
pub use parse::parse;
pub use seek::MatchLevel;

#[cfg(doc)]
use crate::error::ToolError;
