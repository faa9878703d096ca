//! Unified diffs as `git diff` and `diff -u` print them, and as models write them by hand.
//!
//! A file section is optional `diff --git a/p b/p` and extended header lines (`index`, modes,
//! `new file mode`, `deleted file mode`, `rename from` / `rename to`, `similarity index`), then
//! `--- a/p` / `+++ b/p` (`/dev/null` for an added or deleted file; a tab and a timestamp may
//! follow the path), then hunks `@@ -l,n +l,n @@` of ` `, `-`, `+` lines and
//! `\ No newline at end of file`.
//!
//! A hunk's counts say where it ends, which matters when a removed line looks like a header
//! (`--- x` removes `-- x`). Models miscount, so a hunk also goes on past its counts while its
//! lines are plainly hunk lines, and ends early at a line that can only start something else
//! (`@@`, `diff `, a `---`/`+++`/`@@` triple). A bare empty line is an empty context line when
//! more hunk lines follow. A bare `@@` (no numbers) starts a hunk without a hint.

use super::error::PatchError;
use super::model::{Chunk, ChunkLine, FilePatch, PatchChange};
use super::parse_line::{excerpt, parse_hunk_header, Line};

/// True when `first` (the patch's first non-blank line) starts a unified diff.
pub(super) fn begins(first: &str) -> bool {
    first.starts_with("diff ") || first.starts_with("--- ") || first.starts_with("Index: ")
}

/// Parses every file section of a unified diff.
pub(super) fn parse(lines: &[Line]) -> Result<Vec<FilePatch>, PatchError> {
    let mut files = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].is_blank() {
            i += 1;
            continue;
        }
        let (section, next) = parse_section(lines, i)?;
        if let Some(file) = section.into_file_patch()? {
            files.push(file);
        }
        i = next;
    }
    Ok(files)
}

/// What one file section said.
#[derive(Default)]
struct Section {
    line: usize,
    git_paths: Option<(String, String)>,
    old_path: Option<String>,
    new_path: Option<String>,
    rename_from: Option<String>,
    rename_to: Option<String>,
    new_file: bool,
    deleted_file: bool,
    hunks: Vec<Chunk>,
}

fn parse_section(lines: &[Line], start: usize) -> Result<(Section, usize), PatchError> {
    let first = lines[start];
    if !begins(first.text) {
        return Err(PatchError::syntax(
            first.no,
            format!(
                "expected a file header (`diff --git a/<path> b/<path>` or `--- a/<path>` then `+++ b/<path>`) or a hunk line, found `{}`",
                excerpt(first.text)
            ),
        ));
    }
    let mut section = Section {
        line: first.no,
        ..Section::default()
    };
    let mut i = start;
    while i < lines.len() {
        let line = lines[i];
        let text = line.text;
        let opens_section = text.starts_with("diff ") || text.starts_with("Index: ");
        if opens_section && i > start {
            break;
        }
        if let Some(rest) = text.strip_prefix("diff --git ") {
            section.git_paths = git_header_paths(rest);
        } else if let Some(old_path) = text.strip_prefix("--- ") {
            if section.old_path.is_some() {
                break;
            }
            let Some(plus) = lines.get(i + 1).and_then(|l| l.text.strip_prefix("+++ ")) else {
                return Err(PatchError::syntax(
                    line.no,
                    "`--- <path>` must be followed by a `+++ <path>` line",
                ));
            };
            section.old_path = Some(header_path(old_path));
            section.new_path = Some(header_path(plus));
            i += 2;
            continue;
        } else if text.starts_with("@@") {
            break;
        } else if let Some(path) = text.strip_prefix("rename from ") {
            section.rename_from = Some(unquote(path));
        } else if let Some(path) = text.strip_prefix("rename to ") {
            section.rename_to = Some(unquote(path));
        } else if text.starts_with("new file mode ") {
            section.new_file = true;
        } else if text.starts_with("deleted file mode ") {
            section.deleted_file = true;
        } else if text.starts_with("copy from ") || text.starts_with("copy to ") {
            return Err(PatchError::syntax(
                line.no,
                "file copies are not supported; write the copy as a new file (`--- /dev/null`, `+++ b/<path>`, every line with `+`)",
            ));
        } else if text.starts_with("Binary files ") || text.starts_with("GIT binary patch") {
            return Err(PatchError::syntax(
                line.no,
                "binary patches are not supported; apply_patch changes text files only",
            ));
        } else if opens_section
            || text.starts_with("index ")
            || text.starts_with("old mode ")
            || text.starts_with("new mode ")
            || text.starts_with("similarity index ")
            || text.starts_with("dissimilarity index ")
            || text.starts_with("====")
        {
            // Nothing to apply: modes are not changed, hashes not checked.
        } else {
            break;
        }
        i += 1;
    }
    while i < lines.len() && lines[i].text.starts_with("@@") {
        let (hunk, next) = parse_hunk(lines, i)?;
        section.hunks.push(hunk);
        i = next;
        let after_blanks = (i..lines.len())
            .find(|&k| !lines[k].is_blank())
            .unwrap_or(lines.len());
        if lines
            .get(after_blanks)
            .is_some_and(|l| l.text.starts_with("@@"))
        {
            i = after_blanks;
        }
    }
    Ok((section, i))
}

/// `diff --git a/p b/p` paths (with their prefixes): split where both halves name the same
/// path, else at ` b/`.
fn git_header_paths(rest: &str) -> Option<(String, String)> {
    if rest.starts_with('"') {
        let (old, tail) = quoted_prefix(rest)?;
        return Some((old, unquote(tail.trim_start())));
    }
    let same = rest.match_indices(' ').find_map(|(at, _)| {
        let (old, new) = (&rest[..at], &rest[at + 1..]);
        (old.strip_prefix("a/").is_some() && old.strip_prefix("a/") == new.strip_prefix("b/"))
            .then(|| (old.to_owned(), new.to_owned()))
    });
    same.or_else(|| {
        let (old, new) = rest.split_once(" b/")?;
        Some((old.to_owned(), format!("b/{new}")))
    })
}

/// The path of a `---` / `+++` line: quotes undone, a tab and what follows (a timestamp)
/// dropped.
fn header_path(text: &str) -> String {
    let text = text.trim_end();
    if text.starts_with('"') {
        return unquote(text);
    }
    text.split('\t')
        .next()
        .unwrap_or(text)
        .trim_end()
        .to_owned()
}

/// Undoes git's C-style quoting of a path (`"a/tab\there"`); other text is returned as is.
fn unquote(text: &str) -> String {
    match quoted_prefix(text) {
        Some((path, rest)) if rest.trim().is_empty() => path,
        _ => text.to_owned(),
    }
}

/// A leading `"…"` string with git's escapes undone, and the text after it.
fn quoted_prefix(text: &str) -> Option<(String, &str)> {
    let inner = text.strip_prefix('"')?;
    let mut bytes = Vec::new();
    let mut chars = inner.char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            '"' => {
                return Some((
                    String::from_utf8_lossy(&bytes).into_owned(),
                    &inner[at + 1..],
                ))
            }
            '\\' => {
                let (_, escaped) = chars.next()?;
                match escaped {
                    'n' => bytes.push(b'\n'),
                    't' => bytes.push(b'\t'),
                    'r' => bytes.push(b'\r'),
                    'a' => bytes.push(7),
                    'b' => bytes.push(8),
                    'f' => bytes.push(12),
                    'v' => bytes.push(11),
                    '0'..='7' => {
                        let mut value = escaped.to_digit(8)?;
                        for _ in 0..2 {
                            let (_, digit) = chars.next()?;
                            value = value * 8 + digit.to_digit(8)?;
                        }
                        bytes.push(u8::try_from(value).ok()?);
                    }
                    other => {
                        let mut buf = [0; 4];
                        bytes.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
                    }
                }
            }
            other => {
                let mut buf = [0; 4];
                bytes.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    None
}

/// True at a `--- …` line followed by `+++ …` (and, when `strict`, by an `@@` line or the end):
/// the start of the next file's headers rather than a removed line `-- …`.
fn starts_file_headers(lines: &[Line], at: usize, strict: bool) -> bool {
    lines[at].text.starts_with("--- ")
        && lines
            .get(at + 1)
            .is_some_and(|l| l.text.starts_with("+++ "))
        && (!strict || lines.get(at + 2).is_none_or(|l| l.text.starts_with("@@")))
}

/// A hunk from its `@@` line; returns it and the index of the first line after it.
fn parse_hunk(lines: &[Line], at: usize) -> Result<(Chunk, usize), PatchError> {
    let header = lines[at];
    let mut hunk = Chunk {
        line: header.no,
        ..Chunk::default()
    };
    let rest = header.text[2..].trim();
    if let Some(hint) = parse_hunk_header(header.text) {
        hunk.hint = Some(hint);
    } else if rest.starts_with('-') {
        return Err(PatchError::syntax(
            header.no,
            format!(
                "malformed hunk header `{}`; write `@@ -<old line>,<count> +<new line>,<count> @@`",
                excerpt(header.text)
            ),
        ));
    } else if !rest.is_empty() && rest != "@@" {
        hunk.anchors.push(rest.to_owned());
    }
    let (mut old_left, mut new_left) = hunk.hint.map_or((0, 0), |h| (h.old_len, h.new_len));
    // The end of a run of empty lines already known to be followed by hunk lines.
    let mut blank_run_end = 0;
    let mut i = at + 1;
    while i < lines.len() {
        let text = lines[i].text;
        let counting = old_left > 0 || new_left > 0;
        if text.starts_with('\\') {
            hunk.mark_missing_newline();
            i += 1;
            continue;
        }
        if text.starts_with("@@")
            || text.starts_with("diff ")
            || text.starts_with("Index: ")
            || starts_file_headers(lines, i, counting)
        {
            break;
        }
        let line = match text.as_bytes().first() {
            Some(b' ') => ChunkLine::Context(text[1..].to_owned()),
            Some(b'-') => ChunkLine::Remove(text[1..].to_owned()),
            // An added line keeps a content `\r` (an added file's text is written as given; an
            // update's added lines take the file's own line endings instead).
            Some(b'+') => ChunkLine::Add(lines[i].content_after_marker()),
            None if counting || i < blank_run_end => ChunkLine::Context(String::new()),
            None => match hunk_lines_after_blank_run(lines, i) {
                Some(end) => {
                    blank_run_end = end;
                    ChunkLine::Context(String::new())
                }
                None => break,
            },
            _ => break,
        };
        if !matches!(line, ChunkLine::Add(_)) {
            old_left = old_left.saturating_sub(1);
        }
        if !matches!(line, ChunkLine::Remove(_)) {
            new_left = new_left.saturating_sub(1);
        }
        hunk.lines.push(line);
        i += 1;
    }
    if hunk.lines.is_empty() {
        return Err(PatchError::syntax(
            header.no,
            "this hunk has no lines; follow `@@` with context (` `), removed (`-`) and added (`+`) lines, or remove it",
        ));
    }
    Ok((hunk, i))
}

/// When the empty lines from `at` on are followed by a hunk line (not a file header): where
/// that run of empty lines ends.
fn hunk_lines_after_blank_run(lines: &[Line], at: usize) -> Option<usize> {
    let next = (at..lines.len())
        .find(|&k| !lines[k].text.is_empty())
        .unwrap_or(lines.len());
    lines
        .get(next)
        .is_some_and(|l| {
            l.text.starts_with([' ', '-', '+', '\\']) && !starts_file_headers(lines, next, false)
        })
        .then_some(next)
}

impl Section {
    /// The file change this section describes; `None` for a section with nothing to apply
    /// (a mode change only).
    fn into_file_patch(mut self) -> Result<Option<FilePatch>, PatchError> {
        let (old, new) = match (self.old_path, self.new_path) {
            (Some(old), Some(new)) => (old, new),
            _ => match &self.git_paths {
                Some(paths) => paths.clone(),
                None => {
                    return Err(PatchError::syntax(
                        self.line,
                        "this file section has no `--- a/<path>` / `+++ b/<path>` lines",
                    ))
                }
            },
        };
        let (old, new) = without_git_prefixes(old, new);
        let change = if old == DEV_NULL || self.new_file {
            PatchChange::Add {
                text: added_text(&self.hunks, self.line)?,
                path: new,
            }
        } else if new == DEV_NULL || self.deleted_file {
            PatchChange::Delete { path: old }
        } else {
            // Only git says a file moves: `rename from` / `rename to`, or a `diff --git` header
            // naming two paths.
            let git_move = self.rename_from.is_some()
                || self.rename_to.is_some()
                || (self.git_paths.is_some() && old != new);
            if !git_move && old != new {
                return Err(PatchError::syntax(
                    self.line,
                    format!(
                        "the `---` and `+++` lines name different files ({old}, {new}); name the file to change on both (`--- a/<path>`, `+++ b/<path>`), or move a file with `diff --git a/<old> b/<new>`, `rename from <old>`, `rename to <new>`"
                    ),
                ));
            }
            let from = self.rename_from.unwrap_or(old);
            let to = self.rename_to.unwrap_or(new);
            // An update's added lines end as the file's lines do: a content `\r` is not theirs.
            for hunk in &mut self.hunks {
                for line in &mut hunk.lines {
                    if let ChunkLine::Add(text) = line {
                        if text.ends_with('\r') {
                            text.pop();
                        }
                    }
                }
            }
            if from != to {
                PatchChange::Update {
                    path: from,
                    move_to: Some(to),
                    chunks: self.hunks,
                }
            } else if self.hunks.is_empty() {
                return Ok(None);
            } else {
                PatchChange::Update {
                    path: from,
                    move_to: None,
                    chunks: self.hunks,
                }
            }
        };
        Ok(Some(FilePatch {
            line: self.line,
            change,
        }))
    }
}

const DEV_NULL: &str = "/dev/null";

/// Drops git's `a/` and `b/` prefixes: from both paths when both have them (or the other is
/// `/dev/null`), or from one when that makes it the other path.
fn without_git_prefixes(old: String, new: String) -> (String, String) {
    let old_bare = old.strip_prefix("a/").map(str::to_owned);
    let new_bare = new.strip_prefix("b/").map(str::to_owned);
    match (old_bare, new_bare) {
        (Some(o), Some(n)) => (o, n),
        (Some(o), None) if new == DEV_NULL || new == o => (o, new),
        (None, Some(n)) if old == DEV_NULL || old == n => (old, n),
        _ => (old, new),
    }
}

/// A new file's text from its hunks, which may hold only `+` lines.
fn added_text(hunks: &[Chunk], section_line: usize) -> Result<String, PatchError> {
    let mut text = String::new();
    for hunk in hunks {
        for line in &hunk.lines {
            let ChunkLine::Add(content) = line else {
                return Err(PatchError::syntax(
                    hunk.line,
                    format!("a new file's hunk (`--- /dev/null`, patch line {section_line}) may hold only `+` lines"),
                ));
            };
            text.push_str(content);
            text.push('\n');
        }
    }
    if hunks.last().is_some_and(|h| h.new_missing_newline) {
        text.pop();
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::patch::Hint;

    #[test]
    fn hunk_headers() {
        let hint = |old_start, old_len, new_start, new_len| {
            Some(Hint {
                old_start,
                old_len,
                new_start,
                new_len,
            })
        };
        assert_eq!(parse_hunk_header("@@ -3,7 +3,8 @@"), hint(3, 7, 3, 8));
        assert_eq!(
            parse_hunk_header("@@ -1 +1 @@ fn main() {"),
            hint(1, 1, 1, 1)
        );
        assert_eq!(parse_hunk_header("@@ -0,0 +1,2 @@"), hint(0, 0, 1, 2));
        assert_eq!(parse_hunk_header("@@  -3,7  +3,8  @@"), hint(3, 7, 3, 8));
        assert_eq!(parse_hunk_header("@@ -x +1 @@"), None);
        assert_eq!(parse_hunk_header("@@ fn main"), None);
        assert_eq!(parse_hunk_header("@@"), None);
    }

    #[test]
    fn a_long_run_of_empty_lines_is_read_once() {
        let blanks = "\n".repeat(400_000);
        let input = format!("--- a/f\n+++ b/f\n@@\n a\n{blanks}-b\n+c\n");
        let patch = super::super::parse(&input).unwrap();
        let super::super::PatchChange::Update { chunks, .. } = &patch.files[0].change else {
            panic!()
        };
        assert_eq!(chunks[0].lines.len(), 400_003);
    }

    #[test]
    fn git_paths_and_quoting() {
        assert_eq!(
            git_header_paths("a/src/x y.rs b/src/x y.rs"),
            Some(("a/src/x y.rs".into(), "b/src/x y.rs".into()))
        );
        assert_eq!(
            git_header_paths("a/old.rs b/new.rs"),
            Some(("a/old.rs".into(), "b/new.rs".into()))
        );
        assert_eq!(
            git_header_paths("\"a/t\\303\\251st\\tx\" \"b/t\\303\\251st\\tx\""),
            Some(("a/tést\tx".into(), "b/tést\tx".into()))
        );
        assert_eq!(header_path("a/f.c\t2024-01-01 10:00:00 +0100"), "a/f.c");
        assert_eq!(header_path("\"b/q\\\"uote\""), "b/q\"uote");
        assert_eq!(unquote("plain name"), "plain name");
    }
}
