//! The search of one file: the sinks `grep-searcher` feeds (one keeps the lines to show within
//! the bounds, one only notes a first match), and how a matched or context line is shown.
//!
//! A file is read through [`AbortRead`] so that an aborted call stops mid-file, not at its end,
//! and a line far longer than a screen is shown as a window around its first match, so one
//! minified file cannot take the whole output.

use std::fs::File;
use std::io::{self, Read};

use grep_matcher::Matcher;
use grep_regex::RegexMatcher;
use grep_searcher::{Searcher, Sink, SinkContext, SinkMatch};

use super::collected::{FileHits, Line};
use super::render::rendered_len;
use super::Bounds;
use crate::cancel::CancelToken;

/// Longer lines are shortened around their first match.
const LINE_CAP: usize = 500;

/// Searches one file labelled `label` in the output; `None` if it is binary.
pub(super) fn search_file(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    file: File,
    label: &str,
    bounds: &Bounds,
    cancel: &CancelToken,
) -> io::Result<Option<FileHits>> {
    let mut sink = Collect::new(matcher, bounds, label.len());
    searcher.search_reader(
        matcher,
        AbortRead {
            inner: file,
            cancel,
        },
        &mut sink,
    )?;
    Ok(sink.into_hits())
}

/// Whether a (text) file has any match at all.
pub(super) fn has_match(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    file: File,
    cancel: &CancelToken,
) -> bool {
    let mut sink = First::default();
    let searched = searcher.search_reader(
        matcher,
        AbortRead {
            inner: file,
            cancel,
        },
        &mut sink,
    );
    searched.is_ok() && sink.found && !sink.binary
}

/// A reader that fails once the call is aborted, so a long search stops promptly.
struct AbortRead<'a, R> {
    inner: R,
    cancel: &'a CancelToken,
}

impl<R: Read> Read for AbortRead<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.cancel.is_aborted() {
            return Err(io::Error::other("aborted"));
        }
        self.inner.read(buf)
    }
}

/// Keeps a file's matches and context lines, up to the bounds.
pub(super) struct Collect<'a> {
    matcher: &'a RegexMatcher,
    bounds: &'a Bounds,
    label_len: usize,
    hits: FileHits,
    binary: bool,
}

impl<'a> Collect<'a> {
    /// A sink for a file whose label in the output is `label_len` bytes long.
    pub(super) fn new(matcher: &'a RegexMatcher, bounds: &'a Bounds, label_len: usize) -> Self {
        Self {
            matcher,
            bounds,
            label_len,
            hits: FileHits::default(),
            binary: false,
        }
    }

    /// What the file contributed; `None` if it turned out to be binary.
    pub(super) fn into_hits(self) -> Option<FileHits> {
        (!self.binary).then_some(self.hits)
    }

    fn push(&mut self, line: Line) {
        self.hits.bytes += rendered_len(self.label_len, &line);
        self.hits.lines.push(line);
    }
}

impl Sink for Collect<'_> {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        if self.hits.matches >= self.bounds.max_matches || self.hits.bytes >= self.bounds.max_bytes
        {
            self.hits.more = true;
            return Ok(false);
        }
        self.hits.matches += 1;
        let text = display_line(mat.bytes(), Some(self.matcher));
        self.push(Line::Match(mat.line_number().unwrap_or(0), text));
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, context: &SinkContext<'_>) -> Result<bool, io::Error> {
        let text = display_line(context.bytes(), None);
        self.push(Line::Context(context.line_number().unwrap_or(0), text));
        Ok(true)
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, io::Error> {
        if !self.hits.lines.is_empty() {
            self.push(Line::Break);
        }
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, io::Error> {
        self.binary = true;
        Ok(false)
    }
}

/// Stops at the first match.
#[derive(Default)]
struct First {
    found: bool,
    binary: bool,
}

impl Sink for First {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, _: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.found = true;
        Ok(false)
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, io::Error> {
        self.binary = true;
        Ok(false)
    }
}

/// A line as shown: without its line terminator, invalid UTF-8 replaced, and a line longer
/// than [`LINE_CAP`] bytes cut to a window starting a little before its first match.
fn display_line(bytes: &[u8], matcher: Option<&RegexMatcher>) -> String {
    let mut line = bytes;
    while let Some((b'\n' | b'\r', rest)) = line.split_last() {
        line = rest;
    }
    if line.len() <= LINE_CAP {
        return String::from_utf8_lossy(line).into_owned();
    }
    let first_match = matcher
        .and_then(|m| m.find(line).ok().flatten())
        .map_or(0, |m| m.start());
    let mut start = first_match.saturating_sub(LINE_CAP / 5);
    while start < line.len() && (line[start] & 0xC0) == 0x80 {
        start += 1;
    }
    let mut end = (start + LINE_CAP).min(line.len());
    while end < line.len() && end > start && (line[end] & 0xC0) == 0x80 {
        end -= 1;
    }
    format!(
        "{}{}{} [long line shortened: {} bytes]",
        if start > 0 { "… " } else { "" },
        String::from_utf8_lossy(&line[start..end]),
        if end < line.len() { " …" } else { "" },
        line.len()
    )
}

#[cfg(test)]
mod tests {
    use super::super::build_matcher;
    use super::super::testing::{bounds, hits};
    use super::*;

    #[test]
    fn binary_files_are_reported_as_binary() {
        let b = bounds(100, 65536, 0);
        assert!(hits("hit\0\n", "hit", &b).is_none());
        assert!(hits("hit\n", "hit", &b).is_some());
    }

    #[test]
    fn long_lines_are_shortened_around_the_match() {
        let m = build_matcher("NEEDLE", false, "grep").unwrap();
        let line = format!("{}NEEDLE{}\n", "a".repeat(5000), "b".repeat(5000));
        let shown = display_line(line.as_bytes(), Some(&m));
        assert!(
            shown.starts_with("… a") && shown.contains("NEEDLE"),
            "{shown}"
        );
        assert!(
            shown.ends_with(" … [long line shortened: 10006 bytes]"),
            "{shown}"
        );
        assert!(shown.len() < LINE_CAP + 100);
        let multibyte = "é".repeat(400);
        let shown = display_line(multibyte.as_bytes(), None);
        assert!(!shown.contains('\u{FFFD}'));
        assert_eq!(display_line(b"plain\r\n", None), "plain");
    }
}
