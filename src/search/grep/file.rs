//! The search of one file: the sinks `grep-searcher` feeds (one keeps the lines to show within
//! the bounds, one only notes a first match), and how a matched or context line is shown.
//!
//! A small file is read whole ([`super::whole`]) and searched as one slice; a large one is
//! streamed through [`AbortRead`], so that an aborted call stops mid-file, not at its end. A
//! line far longer than a screen is shown as a window around its first match, so one minified
//! file cannot take the whole output.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use grep_matcher::Matcher;
use grep_regex::RegexMatcher;
use grep_searcher::{Searcher, Sink, SinkContext, SinkMatch};

use super::collected::{FileHits, Line};
use super::render::rendered_len;
use super::whole::{read_whole, Contents};
use super::Bounds;
use crate::cancel::CancelToken;
use crate::paths::shown::Shown;

/// Longer lines are shortened around their first match.
const LINE_CAP: usize = 500;

/// Files up to this size are read whole into the worker's buffer and searched as one slice;
/// larger ones are streamed.
const WHOLE_READ_MAX: usize = 1024 * 1024;

/// A regular file to search: open, with the size `fstat` gave it.
pub(super) struct OpenFile {
    pub(super) file: File,
    pub(super) size: u64,
}

/// Searches one file labelled in the output with the shown form of `label`; `None` if it is
/// binary. `buffer` is the worker's, reused from file to file.
pub(super) fn search_file(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    file: OpenFile,
    buffer: &mut Vec<u8>,
    label: &Path,
    bounds: &Bounds,
    cancel: &CancelToken,
) -> io::Result<Option<FileHits>> {
    let mut sink = Collect::new(matcher, bounds, label);
    search(searcher, matcher, file, buffer, cancel, &mut sink)?;
    Ok(sink.into_hits())
}

/// Whether a (text) file has any match at all.
pub(super) fn has_match(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    file: OpenFile,
    buffer: &mut Vec<u8>,
    cancel: &CancelToken,
) -> bool {
    let mut sink = First::default();
    let searched = search(searcher, matcher, file, buffer, cancel, &mut sink);
    searched.is_ok() && sink.found && !sink.binary
}

/// Feeds `sink` the file's lines: a small file read whole and searched as a slice, a large one
/// (or one that grew large while read) streamed through [`AbortRead`].
fn search(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    file: OpenFile,
    buffer: &mut Vec<u8>,
    cancel: &CancelToken,
    sink: &mut impl Sink<Error = io::Error>,
) -> io::Result<()> {
    if cancel.is_aborted() {
        return Err(io::Error::other("aborted"));
    }
    let OpenFile { mut file, size } = file;
    if size > WHOLE_READ_MAX as u64 {
        let inner = AbortRead {
            inner: file,
            cancel,
        };
        return searcher.search_reader(matcher, inner, sink);
    }
    match read_whole(&mut file, size, WHOLE_READ_MAX, buffer)? {
        Contents::Whole(n) => searcher.search_slice(matcher, &buffer[..n], sink),
        Contents::Begun(n) => {
            let inner = AbortRead {
                inner: (&buffer[..n]).chain(file),
                cancel,
            };
            searcher.search_reader(matcher, inner, sink)
        }
    }
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
    label: &'a Path,
    /// The length of the label's shown form, measured at the first line kept: most files
    /// searched have no match, and need no label.
    label_len: Option<usize>,
    hits: FileHits,
    binary: bool,
}

impl<'a> Collect<'a> {
    /// A sink for a file labelled in the output with the shown form of `label`.
    pub(super) fn new(matcher: &'a RegexMatcher, bounds: &'a Bounds, label: &'a Path) -> Self {
        Self {
            matcher,
            bounds,
            label,
            label_len: None,
            hits: FileHits::default(),
            binary: false,
        }
    }

    /// What the file contributed; `None` if it turned out to be binary.
    pub(super) fn into_hits(self) -> Option<FileHits> {
        (!self.binary).then_some(self.hits)
    }

    fn push(&mut self, line: Line) {
        let label = self.label;
        let label_len = *self.label_len.get_or_insert_with(|| label.shown().len());
        self.hits.bytes += rendered_len(label_len, &line);
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

    /// Searches a real file of `text`, as if `fstat` had said it was `size` bytes long: the
    /// line numbers of its matches of `NEEDLE`, or `None` if it is binary.
    fn search_on_disk(text: &[u8], size: u64) -> Option<Vec<u64>> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        std::fs::write(&path, text).unwrap();
        let b = bounds(100, 1 << 20, 0);
        let matcher = build_matcher("NEEDLE", false, "grep").unwrap();
        let file = OpenFile {
            file: File::open(&path).unwrap(),
            size,
        };
        let mut buffer = Vec::new();
        let hits = search_file(
            &mut b.searcher(),
            &matcher,
            file,
            &mut buffer,
            Path::new("f.txt"),
            &b,
            &CancelToken::new(),
        )
        .unwrap()?;
        let lines = hits.lines.iter().map(|line| match line {
            Line::Match(n, _) => *n,
            other => panic!("not a match: {other:?}"),
        });
        Some(lines.collect())
    }

    /// Lines of filler text, then `NEEDLE` on the last one, in more than `bytes` bytes.
    fn needle_after(bytes: usize) -> (Vec<u8>, u64) {
        let mut text = b"filler line\n".repeat(bytes / 12 + 1);
        let lines = text.len() as u64 / 12;
        text.extend_from_slice(b"the NEEDLE\n");
        (text, lines + 1)
    }

    #[test]
    fn small_large_and_grown_files_are_searched_to_their_end() {
        let (small, last) = needle_after(1000);
        let size = small.len() as u64;
        assert_eq!(search_on_disk(&small, size), Some(vec![last]));
        // Larger than what is read whole: streamed.
        let (large, last) = needle_after(WHOLE_READ_MAX + 5000);
        let size = large.len() as u64;
        assert_eq!(search_on_disk(&large, size), Some(vec![last]));
        // Grown past what is read whole since `fstat`: read whole as far as it goes, the rest
        // streamed after it.
        assert_eq!(search_on_disk(&large, 10), Some(vec![last]));
        // Grown, but still small.
        assert_eq!(search_on_disk(&small, 10), Some(vec![needle_after(1000).1]));
        let mut binary = large.clone();
        binary[WHOLE_READ_MAX + 100] = 0;
        assert_eq!(search_on_disk(&binary, 10), None);
        assert_eq!(search_on_disk(b"NEEDLE\0", 7), None);
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
