//! What a patch is once parsed: files, each added, deleted or updated by chunks of lines.

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
    pub change: PatchChange,
}

/// What a patch does to one file. Paths are as the patch wrote them (a unified diff's `a/` and
/// `b/` prefixes removed), not resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatchChange {
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
            PatchChange::Add { path, .. }
            | PatchChange::Delete { path }
            | PatchChange::Update { path, .. } => path,
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
    pub(super) fn old_lines(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter_map(|line| match line {
                ChunkLine::Context(text) | ChunkLine::Remove(text) => Some(text.as_str()),
                ChunkLine::Add(_) => None,
            })
            .collect()
    }

    /// The text the chunk leaves in the file: its context and added lines.
    pub(super) fn new_lines(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter_map(|line| match line {
                ChunkLine::Context(text) | ChunkLine::Add(text) => Some(text.as_str()),
                ChunkLine::Remove(_) => None,
            })
            .collect()
    }
}
