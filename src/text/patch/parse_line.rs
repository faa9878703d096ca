//! What both patch formats are read from and share: the numbered input line, a line cut to fit
//! in a message, and the `@@ -l,n +l,n @@` hunk header (a unified diff's, and a hint in Codex's).

use super::model::Hint;

/// One line of the patch input: its 1-based number and its text without the line ending (a
/// CRLF's `\r` is dropped too).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Line<'a> {
    pub no: usize,
    pub text: &'a str,
    /// The line ended in `\r\n` while the patch itself does not use CRLF: the `\r` is the
    /// content's (`git diff` of a CRLF file), which an added file keeps.
    pub content_cr: bool,
}

impl Line<'_> {
    pub fn is_blank(&self) -> bool {
        self.text.trim().is_empty()
    }

    /// The line's content after a one-byte marker (`+`, ` `, `-`), with a content `\r` kept.
    pub fn content_after_marker(&self) -> String {
        let mut content = self.text[1..].to_owned();
        if self.content_cr {
            content.push('\r');
        }
        content
    }
}

/// A line cut to a length that fits in a message.
pub(super) fn excerpt(text: &str) -> String {
    const MAX: usize = 80;
    match text.char_indices().nth(MAX) {
        None => text.to_owned(),
        Some((cut, _)) => format!("{}…", &text[..cut]),
    }
}

/// Reads `@@ -l[,n] +l[,n] @@[ section]`; `None` when the line is not such a header.
pub(super) fn parse_hunk_header(text: &str) -> Option<Hint> {
    let mut words = text.split_whitespace();
    if words.next()? != "@@" {
        return None;
    }
    let (old_start, old_len) = range(words.next()?.strip_prefix('-')?)?;
    let (new_start, new_len) = range(words.next()?.strip_prefix('+')?)?;
    if !words.next()?.starts_with("@@") {
        return None;
    }
    Some(Hint {
        old_start,
        old_len,
        new_start,
        new_len,
    })
}

fn range(text: &str) -> Option<(usize, usize)> {
    match text.split_once(',') {
        Some((start, len)) => Some((start.parse().ok()?, len.parse().ok()?)),
        None => Some((text.parse().ok()?, 1)),
    }
}
