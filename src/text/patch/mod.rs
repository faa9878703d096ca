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
pub use parse::parse;
pub use seek::MatchLevel;

#[cfg(doc)]
use crate::error::ToolError;

/// A parsed patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    /// Which format the patch was written in.
    pub format: PatchFormat,
    /// The files it changes, in patch order; never empty, no path named twice.
    pub files: Vec<FilePatch>,
}

/// The two patch formats (../../../docs/tools.md#apply_patch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchFormat {
    /// `*** Begin Patch` … `*** End Patch`.
    Codex,
    /// `--- a/p` / `+++ b/p` with `@@ -l,n +l,n @@` hunks, as `git diff` and `diff -u` print.
    Unified,
}

/// One file's part of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePatch {
    /// The 1-based line of the patch where this file's section starts (for messages).
    pub line: usize,
    /// What happens to the file.
    pub change: FileChange,
}

/// What a patch does to one file. Paths are as the patch wrote them (a unified diff's `a/` and
/// `b/` prefixes removed), not resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileChange {
    /// Create `path` with `text` (LF line endings; a final newline unless a unified diff said
    /// `\ No newline at end of file`).
    Add { path: String, text: String },
    /// Remove `path`.
    Delete { path: String },
    /// Change `path` by `chunks` (possibly none, for a pure move), then move it to `move_to`
    /// when given.
    Update {
        path: String,
        move_to: Option<String>,
        chunks: Vec<Chunk>,
    },
}

impl FilePatch {
    /// The path the section names first (the source of a move).
    pub fn path(&self) -> &str {
        match &self.change {
            FileChange::Add { path, .. }
            | FileChange::Delete { path }
            | FileChange::Update { path, .. } => path,
        }
    }
}

/// One chunk (Codex) or hunk (unified diff): a run of context, removed and added lines.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Chunk {
    /// The 1-based line of the patch where the chunk starts (for messages).
    pub line: usize,
    /// Codex `@@ <line>` anchors, outermost first: each is sought after the previous one, and
    /// the chunk at or after the last.
    pub anchors: Vec<String>,
    /// A unified diff hunk's `@@ -l,n +l,n @@` numbers: where the chunk probably is.
    pub hint: Option<Hint>,
    /// The chunk's lines, in order.
    pub lines: Vec<ChunkLine>,
    /// Codex `*** End of File`: the chunk's old text ends the file.
    pub end_of_file: bool,
    /// `\ No newline at end of file` followed the last line of the old side.
    pub old_missing_newline: bool,
    /// `\ No newline at end of file` followed the last line of the new side.
    pub new_missing_newline: bool,
}

/// The line numbers of a unified diff hunk header, `@@ -old_start,old_len +new_start,new_len @@`.
/// A zero-length side's start is the line *after which* the hunk goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hint {
    pub old_start: usize,
    pub old_len: usize,
    pub new_start: usize,
    pub new_len: usize,
}

/// One line of a chunk, without its marker and line ending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChunkLine {
    /// ` line`: in the file before and after.
    Context(String),
    /// `-line`: in the file before only.
    Remove(String),
    /// `+line`: in the file after only.
    Add(String),
}

impl Chunk {
    /// The text the chunk expects in the file: its context and removed lines.
    fn old_lines(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter_map(|line| match line {
                ChunkLine::Context(text) | ChunkLine::Remove(text) => Some(text.as_str()),
                ChunkLine::Add(_) => None,
            })
            .collect()
    }

    /// The text the chunk leaves in the file: its context and added lines.
    fn new_lines(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter_map(|line| match line {
                ChunkLine::Context(text) | ChunkLine::Add(text) => Some(text.as_str()),
                ChunkLine::Remove(_) => None,
            })
            .collect()
    }
}
