//! Codex's patch format, as OpenAI's models write it:
//!
//! ```text
//! *** Begin Patch
//! *** Add File: <path>          then `+` lines
//! *** Delete File: <path>
//! *** Update File: <path>
//! *** Move to: <path>           optional
//! @@ <a line of the file>       optional before the first chunk; may repeat to narrow down
//!  context / -removed / +added  lines
//! *** End of File               optional: the chunk ends the file
//! *** End Patch
//! ```
//!
//! Leniencies (../../../docs/tools.md#apply_patch): spaces around the `***` markers (and any letter case in their
//! names), no `@@` before a file's first chunk, a bare empty line inside a chunk read as an
//! empty context line, an empty line without `+` inside an added file's lines, a unified hunk
//! header (`@@ -12,5 +12,6 @@`) read as a line-number hint, `\ No newline at end of file`.

use super::error::PatchError;
use super::model::{Chunk, ChunkLine, FilePatch, PatchChange};
use super::parse_line::{excerpt, parse_hunk_header, Line};

/// True when `first` (the patch's first non-blank line) is `*** Begin Patch`.
pub(super) fn begins(first: &str) -> bool {
    matches!(marker(first), Some(Marker::Begin))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marker<'a> {
    Begin,
    End,
    Add(&'a str),
    Delete(&'a str),
    Update(&'a str),
    MoveTo(&'a str),
    EndOfFile,
}

/// Reads a `*** …` marker line, with spaces around it and its words in any case.
fn marker(text: &str) -> Option<Marker<'_>> {
    let rest = text.trim().strip_prefix("***")?.trim_start();
    let named = |name: &str| {
        rest.get(..name.len())
            .filter(|head| head.eq_ignore_ascii_case(name))
            .map(|_| rest[name.len()..].trim())
    };
    if named("begin patch") == Some("") {
        Some(Marker::Begin)
    } else if named("end patch") == Some("") {
        Some(Marker::End)
    } else if named("end of file") == Some("") {
        Some(Marker::EndOfFile)
    } else if let Some(path) = named("add file:") {
        Some(Marker::Add(path))
    } else if let Some(path) = named("delete file:") {
        Some(Marker::Delete(path))
    } else if let Some(path) = named("update file:") {
        Some(Marker::Update(path))
    } else {
        named("move to:").map(Marker::MoveTo)
    }
}

/// Parses a whole Codex-format patch; `lines` start with `*** Begin Patch` (after blank lines).
pub(super) fn parse(lines: &[Line]) -> Result<Vec<FilePatch>, PatchError> {
    let begin = lines
        .iter()
        .position(|line| !line.is_blank())
        .expect("the caller found *** Begin Patch");
    let end = lines
        .iter()
        .rposition(|line| !line.is_blank())
        .expect("the caller found *** Begin Patch");
    if end == begin || marker(lines[end].text) != Some(Marker::End) {
        return Err(PatchError::syntax(
            lines[end].no,
            "the patch does not end with `*** End Patch`; it may have been cut short. Send the whole patch again, ending with `*** End Patch`",
        ));
    }
    let body = &lines[begin + 1..end];
    let mut files = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let line = body[i];
        if line.is_blank() {
            i += 1;
            continue;
        }
        let (file, next) = match marker(line.text) {
            Some(Marker::Add(path)) => parse_add(body, i, path)?,
            Some(Marker::Delete(path)) => (
                FilePatch {
                    line: line.no,
                    change: PatchChange::Delete {
                        path: required_path(line, path, "*** Delete File:")?,
                    },
                },
                i + 1,
            ),
            Some(Marker::Update(path)) => parse_update(body, i, path)?,
            Some(Marker::End) => return Err(PatchError::syntax(line.no, "`*** End Patch` before the end of the input; send one patch, ending with `*** End Patch`")),
            Some(Marker::Begin) => return Err(PatchError::syntax(line.no, "a second `*** Begin Patch`; put every file's section in one patch between one `*** Begin Patch` and one `*** End Patch`")),
            Some(Marker::MoveTo(_)) => return Err(PatchError::syntax(line.no, "`*** Move to: <path>` must come right after the `*** Update File: <path>` line of the file to move")),
            Some(Marker::EndOfFile) => return Err(PatchError::syntax(line.no, "`*** End of File` outside a chunk; put it after the last line of a file's last chunk")),
            None => return Err(PatchError::syntax(line.no, format!(
                "expected `*** Add File: <path>`, `*** Update File: <path>`, `*** Delete File: <path>` or `*** End Patch`, found `{}`",
                excerpt(line.text)
            ))),
        };
        files.push(file);
        i = next;
    }
    Ok(files)
}

fn required_path(line: Line, path: &str, marker: &str) -> Result<String, PatchError> {
    if path.is_empty() {
        return Err(PatchError::syntax(
            line.no,
            format!("`{marker}` needs a path after the colon"),
        ));
    }
    Ok(path.to_owned())
}

/// An added file's `+` lines, from the line after `*** Add File:`.
fn parse_add(body: &[Line], at: usize, path: &str) -> Result<(FilePatch, usize), PatchError> {
    let header = body[at];
    let path = required_path(header, path, "*** Add File:")?;
    let mut text = String::new();
    let mut i = at + 1;
    while i < body.len() {
        let line = body[i];
        if line.text.starts_with('+') {
            text.push_str(&line.content_after_marker());
            text.push('\n');
            i += 1;
        } else if line.is_blank() {
            // Empty lines written without their `+`: content if more `+` lines follow.
            let next = next_non_blank(body, i);
            if !body.get(next).is_some_and(|l| l.text.starts_with('+')) {
                break;
            }
            for _ in i..next {
                text.push('\n');
            }
            i = next;
        } else if marker(line.text).is_some() {
            break;
        } else {
            return Err(PatchError::syntax(
                line.no,
                format!(
                    "every line of an added file starts with `+` (a lone `+` for an empty line), found `{}`",
                    excerpt(line.text)
                ),
            ));
        }
    }
    let file = FilePatch {
        line: header.no,
        change: PatchChange::Add { path, text },
    };
    Ok((file, i))
}

fn next_non_blank(body: &[Line], from: usize) -> usize {
    (from..body.len())
        .find(|&i| !body[i].is_blank())
        .unwrap_or(body.len())
}

/// An updated file: an optional `*** Move to:` line, then chunks until the next marker.
fn parse_update(body: &[Line], at: usize, path: &str) -> Result<(FilePatch, usize), PatchError> {
    let header = body[at];
    let path = required_path(header, path, "*** Update File:")?;
    let mut i = at + 1;
    let mut move_to = None;
    let next = next_non_blank(body, i);
    if let Some(Marker::MoveTo(to)) = body.get(next).and_then(|line| marker(line.text)) {
        move_to = Some(required_path(body[next], to, "*** Move to:")?);
        i = next + 1;
    }
    let mut chunks: Vec<Chunk> = Vec::new();
    let mut current: Option<Chunk> = None;
    while i < body.len() {
        let line = body[i];
        let text = line.text;
        if let Some(rest) = text.strip_prefix("@@") {
            if current.as_ref().is_some_and(|c| !c.lines.is_empty()) {
                chunks.push(current.take().expect("checked"));
            }
            let chunk = current.get_or_insert_with(|| Chunk {
                line: line.no,
                ..Chunk::default()
            });
            if let Some(hint) = parse_hunk_header(text) {
                chunk.hint = Some(hint);
            } else if !rest.trim().is_empty() {
                chunk.anchors.push(rest.trim().to_owned());
            }
            i += 1;
            continue;
        }
        if text.starts_with('*') {
            match marker(text) {
                Some(Marker::EndOfFile) => {
                    let Some(mut chunk) = current.take().filter(|c| !c.lines.is_empty()) else {
                        return Err(PatchError::syntax(
                            line.no,
                            "`*** End of File` must follow the lines of a chunk",
                        ));
                    };
                    chunk.end_of_file = true;
                    chunks.push(chunk);
                    i += 1;
                    continue;
                }
                Some(_) => break,
                None => {}
            }
        }
        if text.starts_with('\\') {
            if let Some(chunk) = current.as_mut() {
                chunk.mark_missing_newline();
            }
            i += 1;
            continue;
        }
        if text.is_empty() {
            // Blank lines are empty context lines when more chunk lines follow; otherwise they
            // only separate this chunk from what comes next.
            let next = (i..body.len())
                .find(|&k| !body[k].text.is_empty())
                .unwrap_or(body.len());
            if body
                .get(next)
                .is_some_and(|l| l.text.starts_with([' ', '-', '+']))
            {
                let chunk = current.get_or_insert_with(|| Chunk {
                    line: line.no,
                    ..Chunk::default()
                });
                for _ in i..next {
                    chunk.lines.push(ChunkLine::Context(String::new()));
                }
            }
            i = next;
            continue;
        }
        let mut chars = text.chars();
        let kind = chars.next();
        let content = chars.as_str();
        let chunk_line = match kind {
            Some(' ') => ChunkLine::Context(content.to_owned()),
            Some('-') => ChunkLine::Remove(content.to_owned()),
            Some('+') => ChunkLine::Add(content.to_owned()),
            _ => {
                return Err(PatchError::syntax(
                    line.no,
                    format!(
                        "`{}` is not a chunk line of {path}: each line starts with ` ` (context, a space), `-` (removed) or `+` (added), and a chunk starts with `@@`",
                        excerpt(text)
                    ),
                ))
            }
        };
        current
            .get_or_insert_with(|| Chunk {
                line: line.no,
                ..Chunk::default()
            })
            .lines
            .push(chunk_line);
        i += 1;
    }
    if let Some(chunk) = current {
        if chunk.lines.is_empty() {
            return Err(PatchError::syntax(
                chunk.line,
                "this `@@` chunk has no lines; follow it with context (` `), removed (`-`) and added (`+`) lines, or remove it",
            ));
        }
        chunks.push(chunk);
    }
    if chunks.is_empty() && move_to.is_none() {
        return Err(PatchError::syntax(
            header.no,
            format!("`*** Update File: {path}` has no chunks; add `@@` chunks with the lines to change, or remove the section"),
        ));
    }
    let file = FilePatch {
        line: header.no,
        change: PatchChange::Update {
            path,
            move_to,
            chunks,
        },
    };
    Ok((file, i))
}

impl Chunk {
    /// Records a `\ No newline at end of file` line: it is about the line before it.
    pub(super) fn mark_missing_newline(&mut self) {
        match self.lines.last() {
            Some(ChunkLine::Context(_)) => {
                self.old_missing_newline = true;
                self.new_missing_newline = true;
            }
            Some(ChunkLine::Remove(_)) => self.old_missing_newline = true,
            Some(ChunkLine::Add(_)) => self.new_missing_newline = true,
            None => {}
        }
    }
}
