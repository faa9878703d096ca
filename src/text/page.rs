//! One page of a text file as `read_file` shows it: the lines of a range, numbered like
//! `  12 | text`, within a line and a byte limit, with a note saying how to continue.
//!
//! The source is streamed, so the cost follows what is shown, not the file's size: only the
//! requested lines are kept, a line longer than a page is cut (with the column that reads on
//! from the cut, so every byte can be reached), and after the range the remaining lines
//! are counted only up to a scan budget ([`COUNT_BUDGET_BYTES`]). When the known size says more
//! than the budget is left, the rest is not read at all, and the total is a lower bound. Reading
//! the first lines of a 1 GB log then costs about what it costs for a small file.
//!
//! The engine reads any [`Read`] and knows no paths; [`PageError::into_tool_error`] is the one
//! place its failures become error codes.

use std::borrow::Cow;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use super::decode::looks_binary;
use super::edit::numbered_line;
use super::quantity::{bytes, quantity};
use crate::error::{ErrorCode, ToolError};
use crate::paths::shown::Shown as _;

/// After the shown lines, how many more bytes are scanned to count the remaining lines. When
/// more than this is left (known from the file size), the rest is not read at all.
pub const COUNT_BUDGET_BYTES: u64 = 4 * 1024 * 1024;

/// The source is read in chunks of this size.
const READ_BUFFER_BYTES: usize = 64 * 1024;

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// How much room a cut line leaves for the notes after it (at most half the page).
const CUT_NOTE_ROOM: usize = 256;

/// The lines asked for: 1-based, inclusive; without an `end`, up to the end of the file.
/// `column` is the 1-based byte offset in the line `start` where the page begins (1: the whole
/// line), for reading on in a line longer than a page. Columns count the line's bytes without
/// a BOM and without the `\r` of a CRLF.
#[derive(Debug, Clone, Copy)]
pub struct LineRange {
    pub start: u64,
    pub end: Option<u64>,
    pub column: u64,
}

impl LineRange {
    /// Lines `start` to `end`, from the beginning of line `start`.
    pub fn lines(start: u64, end: Option<u64>) -> Self {
        Self {
            start,
            end,
            column: 1,
        }
    }

    fn contains(&self, line: u64) -> bool {
        line >= self.start && self.end.is_none_or(|end| line <= end)
    }

    fn ends_before(&self, line: u64) -> bool {
        self.end.is_some_and(|end| line > end)
    }

    /// Whether the range ends at or before `line`.
    fn ends_by(&self, line: u64) -> bool {
        self.end.is_some_and(|end| line >= end)
    }
}

/// The most a page may hold.
#[derive(Debug, Clone, Copy)]
pub struct PageLimits {
    pub max_lines: u64,
    pub max_bytes: usize,
}

/// How many lines the file has, as far as we looked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineTotal {
    Exact(u64),
    /// The scan budget ran out after this many lines.
    AtLeast(u64),
}

/// A rendered page.
#[derive(Debug)]
pub struct Page {
    /// The numbered lines, then the notes (continuation, invalid UTF-8).
    pub text: String,
    /// The first and last line shown (both 0 for an empty file).
    pub first: u64,
    pub last: u64,
    pub total: LineTotal,
    /// Lines of the range were left out for the limits.
    pub truncated: bool,
    /// Some shown line is not valid UTF-8 (its invalid bytes are shown as U+FFFD).
    pub lossy: bool,
}

/// Why a page could not be rendered.
#[derive(Debug)]
pub enum PageError {
    /// The beginning of the source has a NUL byte.
    Binary,
    /// The range starts after the last line.
    PastEnd {
        start: u64,
        total: u64,
    },
    /// The column starts after the end of its line (`length` bytes).
    PastLineEnd {
        line: u64,
        column: u64,
        length: u64,
    },
    Io(io::Error),
}

impl PageError {
    /// The tool error for a page of the file at `path` that failed this way; `tool` is the
    /// host's name of the reading tool.
    pub fn into_tool_error(self, path: &Path, tool: &str) -> ToolError {
        match self {
            PageError::Binary => ToolError::new(
                ErrorCode::BinaryFile,
                format!("{} is a binary file (it contains NUL bytes), and only text files can be read; leave it as it is, or read a text file that describes it", path.shown()),
            ),
            PageError::PastEnd { start, total } => ToolError::invalid(format!(
                "{tool}: startLine {start} is past the end of {}, which has {}; use a startLine from 1 to {total}",
                path.shown(),
                quantity(total, "line", "lines")
            )),
            PageError::PastLineEnd {
                line,
                column,
                length,
            } => ToolError::invalid(format!(
                "{tool}: startColumn {column} is past the end of line {line} of {}, which has {}; use a startColumn from 1 to {}",
                path.shown(),
                bytes(length),
                length + 1
            )),
            PageError::Io(e) => ToolError::io(&e, "read", path),
        }
    }
}

impl From<io::Error> for PageError {
    fn from(e: io::Error) -> Self {
        PageError::Io(e)
    }
}

/// Renders the lines of `range` of `source`, whose total size is `size` when known.
pub fn render_page(
    source: impl Read,
    range: LineRange,
    limits: PageLimits,
    size: Option<u64>,
) -> Result<Page, PageError> {
    let mut reader = BufReader::with_capacity(
        READ_BUFFER_BYTES,
        Counting {
            inner: source,
            taken: 0,
        },
    );
    if looks_binary(reader.fill_buf()?) {
        return Err(PageError::Binary);
    }
    let shown = read_range(&mut reader, range, limits)?;
    if let Some((line, length)) = shown.short_line {
        return Err(PageError::PastLineEnd {
            line,
            column: range.column,
            length,
        });
    }
    let total = total_lines(&mut reader, &shown, range, size)?;
    if let LineTotal::Exact(n) = total {
        if n > 0 && range.start > n {
            return Err(PageError::PastEnd {
                start: range.start,
                total: n,
            });
        }
    }
    Ok(shown.into_page(range, total, size))
}

/// The lines of a range as rendered so far, and what reading them found.
#[derive(Default)]
struct Shown {
    /// Numbered lines, each ending in `\n`.
    text: String,
    /// The lines in `text` (a cut line counts as one).
    count: u64,
    /// The whole lines consumed from the source: those before the range, the shown ones, and
    /// one past the range when it ends before the file does.
    read: u64,
    /// Some shown line is not valid UTF-8.
    lossy: bool,
    /// Lines of the range were left out for the limits.
    truncated: bool,
    /// The first line of the range is shorter than the column asked for: (line, its length).
    short_line: Option<(u64, u64)>,
}

/// Reads up to the end of `range` (or until the limits are reached), rendering its lines.
fn read_range(
    reader: &mut impl BufRead,
    range: LineRange,
    limits: PageLimits,
) -> io::Result<Shown> {
    let mut shown = Shown::default();
    let mut line = Vec::new();
    loop {
        line.clear();
        let number = shown.read + 1;
        let wanted = range.contains(number);
        let bom = if wanted && number == 1 && reader.fill_buf()?.starts_with(UTF8_BOM) {
            UTF8_BOM.len()
        } else {
            0
        };
        // The first line may start at a column: the bytes before it are skipped (a BOM too).
        let first_column = if number == range.start {
            range.column
        } else {
            1
        };
        let skip = if first_column > 1 {
            bom + (first_column - 1) as usize
        } else {
            0
        };
        // A wanted line is kept up to just over the byte limit: enough to show, or to know
        // that it does not fit.
        let keep = if wanted { limits.max_bytes + 4 } else { 0 };
        let Some(read) = next_line(reader, &mut line, skip, keep)? else {
            break;
        };
        shown.read = number;
        if !wanted {
            if range.ends_before(number) {
                break;
            }
            continue;
        }
        let length = (read.length - usize::from(read.crlf) - bom) as u64;
        if first_column > length + 1 {
            shown.short_line = Some((number, length));
            break;
        }
        let whole = skip + line.len() >= read.length;
        strip_line(
            &mut line,
            if skip > 0 { 0 } else { bom },
            read.crlf && whole,
        );
        let (content, valid) = decode(&line);
        let rendered = numbered_line(number as usize, &content);
        if !shown.fits(rendered.len(), limits) {
            if shown.count == 0 {
                shown.push_cut(number, &line, first_column, length, limits.max_bytes);
            }
            shown.truncated = true;
            break;
        }
        shown.push(&rendered, valid);
    }
    Ok(shown)
}

/// Removes a BOM of `bom` bytes from the start of a kept line, and its `\r` (when `crlf` and
/// the line was kept whole).
fn strip_line(line: &mut Vec<u8>, bom: usize, crlf: bool) {
    line.drain(..bom);
    if crlf && line.last() == Some(&b'\r') {
        line.pop();
    }
}

/// A line's text, with invalid UTF-8 replaced, and whether it was valid.
fn decode(line: &[u8]) -> (Cow<'_, str>, bool) {
    match std::str::from_utf8(line) {
        Ok(text) => (Cow::Borrowed(text), true),
        Err(_) => (String::from_utf8_lossy(line), false),
    }
}

impl Shown {
    /// Whether a rendered line of `len` bytes still fits on the page.
    fn fits(&self, len: usize, limits: PageLimits) -> bool {
        self.count < limits.max_lines && self.text.len() + len < limits.max_bytes
    }

    fn push(&mut self, rendered: &str, valid: bool) {
        self.lossy |= !valid;
        self.text.push_str(rendered);
        self.text.push('\n');
        self.count += 1;
    }

    /// Shows the beginning of `line` (line `number`, kept from column `first_column`, `length`
    /// columns in all), which alone is longer than the page, and the column that reads on.
    fn push_cut(
        &mut self,
        number: u64,
        line: &[u8],
        first_column: u64,
        length: u64,
        max_bytes: usize,
    ) {
        let prefix = numbered_line(number as usize, "").len();
        let mut cut = max_bytes
            .saturating_sub(prefix + CUT_NOTE_ROOM.min(max_bytes / 2))
            .max(1)
            .min(line.len());
        // Back to the start of a UTF-8 sequence, so that the next page starts on a character.
        while cut > 1 && line.get(cut).is_some_and(|b| b & 0xC0 == 0x80) {
            cut -= 1;
        }
        let (content, valid) = decode(&line[..cut]);
        self.push(&numbered_line(number as usize, &content), valid);
        let last = first_column + cut as u64 - 1;
        self.text.push_str(&format!(
            "[Line {number} is {} long; this shows columns {first_column}-{last} of it. Read on in it with startLine: {number}, startColumn: {}.]\n",
            bytes(length),
            last + 1
        ));
    }

    /// The page, with its notes.
    fn into_page(mut self, range: LineRange, total: LineTotal, size: Option<u64>) -> Page {
        if self.count == 0 && self.read == 0 {
            return Page {
                text: "(empty file)".into(),
                first: 0,
                last: 0,
                total,
                truncated: false,
                lossy: false,
            };
        }
        let first = range.start;
        let last = first + self.count.saturating_sub(1);
        if self.truncated {
            self.text
                .push_str(&continuation_note(first, last, total, size));
        }
        Page {
            text: self.text.trim_end_matches('\n').to_owned(),
            first,
            last,
            total,
            truncated: self.truncated,
            lossy: self.lossy,
        }
    }
}

/// How many lines the source has: known when the range ran to its end, else counted on from
/// where the range stopped, within the scan budget.
fn total_lines<R: Read>(
    reader: &mut BufReader<Counting<R>>,
    shown: &Shown,
    range: LineRange,
    size: Option<u64>,
) -> io::Result<LineTotal> {
    if !shown.truncated && !range.ends_by(shown.read) {
        return Ok(LineTotal::Exact(shown.read));
    }
    let unread =
        size.map(|s| s.saturating_sub(reader.get_ref().taken) + reader.buffer().len() as u64);
    if unread.is_some_and(|unread| unread > COUNT_BUDGET_BYTES) {
        Ok(LineTotal::AtLeast(shown.read))
    } else {
        count_remaining(reader, shown.read)
    }
}

/// `[Showing lines 1-500 of 1234. Continue with startLine: 501.]`, on a line of its own.
fn continuation_note(first: u64, last: u64, total: LineTotal, size: Option<u64>) -> String {
    let of = match total {
        LineTotal::Exact(n) => n.to_string(),
        LineTotal::AtLeast(n) => match size {
            Some(size) => format!("more than {n} (the file is {})", bytes(size)),
            None => format!("more than {n}"),
        },
    };
    format!(
        "\n[Showing lines {first}-{last} of {of}. Continue with startLine: {}.]",
        last + 1
    )
}

/// A reader that counts the bytes taken from its source.
struct Counting<R> {
    inner: R,
    taken: u64,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.taken += n as u64;
        Ok(n)
    }
}

/// What [`next_line`] consumed.
struct LineRead {
    /// The line's bytes, without its `\n`.
    length: usize,
    /// It ended in `\r\n`.
    crlf: bool,
}

/// Consumes one whole line (its `\n` too), keeping at most `keep` of its bytes after the first
/// `skip`, without the `\n`. `None` at end of input.
fn next_line(
    reader: &mut impl BufRead,
    line: &mut Vec<u8>,
    skip: usize,
    keep: usize,
) -> io::Result<Option<LineRead>> {
    let mut length = 0usize;
    let mut last = None;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok((length > 0).then_some(LineRead {
                length,
                crlf: last == Some(b'\r'),
            }));
        }
        let (chunk, found) = match memchr::memchr(b'\n', buf) {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        let from = skip.saturating_sub(length).min(chunk.len());
        let room = keep.saturating_sub(line.len());
        let kept = &chunk[from..];
        line.extend_from_slice(&kept[..kept.len().min(room)]);
        length += chunk.len();
        last = chunk.last().copied().or(last);
        let used = found.unwrap_or(buf.len());
        reader.consume(used);
        if found.is_some() {
            return Ok(Some(LineRead {
                length,
                crlf: last == Some(b'\r'),
            }));
        }
    }
}

/// Counts the lines after the `seen` whole lines already consumed, up to the scan budget.
fn count_remaining(reader: &mut impl BufRead, seen: u64) -> io::Result<LineTotal> {
    let mut newlines = 0u64;
    let mut scanned = 0u64;
    let mut last_byte = None;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            let unterminated = u64::from(last_byte.is_some_and(|b| b != b'\n'));
            return Ok(LineTotal::Exact(seen + newlines + unterminated));
        }
        if scanned > COUNT_BUDGET_BYTES {
            return Ok(LineTotal::AtLeast(seen + newlines));
        }
        newlines += memchr::memchr_iter(b'\n', buf).count() as u64;
        last_byte = buf.last().copied();
        scanned += buf.len() as u64;
        let n = buf.len();
        reader.consume(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The documented default read limits (../../docs/tools.md#limits).
    const DEFAULT: PageLimits = PageLimits {
        max_lines: 500,
        max_bytes: 65_536,
    };

    fn page(text: &str, start: u64, end: Option<u64>, limits: PageLimits) -> Page {
        render_page(text.as_bytes(), LineRange::lines(start, end), limits, None).unwrap()
    }

    #[test]
    fn numbers_lines_like_the_spec() {
        let p = page("a\n\tb\r\nc", 1, None, DEFAULT);
        assert_eq!(p.text, "   1 | a\n   2 | \tb\n   3 | c");
        assert_eq!(p.total, LineTotal::Exact(3));
    }

    #[test]
    fn ranges_are_inclusive_and_clamped() {
        let p = page("1\n2\n3\n4\n", 2, Some(3), DEFAULT);
        assert_eq!(p.text, "   2 | 2\n   3 | 3");
        let p = page("1\n2\n", 2, Some(10), DEFAULT);
        assert_eq!(p.text, "   2 | 2");
        let e = render_page(&b"1\n2\n"[..], LineRange::lines(5, None), DEFAULT, None).unwrap_err();
        assert!(matches!(e, PageError::PastEnd { start: 5, total: 2 }));
    }

    #[test]
    fn line_limit_tells_how_to_continue() {
        let text: String = (1..=10).map(|i| format!("l{i}\n")).collect();
        let p = page(
            &text,
            1,
            None,
            PageLimits {
                max_lines: 4,
                ..DEFAULT
            },
        );
        assert!(
            p.text
                .ends_with("[Showing lines 1-4 of 10. Continue with startLine: 5.]"),
            "{}",
            p.text
        );
        assert!(p.truncated);
    }

    #[test]
    fn byte_limit_cuts_between_lines_and_inside_a_huge_line() {
        let text = format!("{}\nshort\n", "x".repeat(1000));
        let limits = PageLimits {
            max_bytes: 200,
            ..DEFAULT
        };
        let p = page(&text, 1, None, limits);
        assert!(p.text.len() <= 300, "{}", p.text);
        assert!(
            p.text.contains("[Line 1 is 1000 bytes long; this shows columns 1-93 of it. Read on in it with startLine: 1, startColumn: 94.]"),
            "{}",
            p.text
        );
        assert!(
            p.text.contains("of 2. Continue with startLine: 2."),
            "{}",
            p.text
        );
        // The column given reads on where the cut was, to the end of the line.
        let range = LineRange {
            column: 94,
            ..LineRange::lines(1, Some(1))
        };
        let rest = render_page(text.as_bytes(), range, limits, None).unwrap();
        assert!(
            rest.text
                .starts_with(&format!("   1 | {}\n[Line 1", "x".repeat(93))),
            "{}",
            rest.text
        );
        let range = LineRange {
            column: 94 + 93 * 9,
            ..LineRange::lines(1, Some(1))
        };
        let last = render_page(text.as_bytes(), range, limits, None).unwrap();
        assert_eq!(last.text, format!("   1 | {}", "x".repeat(1000 - 93 * 10)));
    }

    /// A column counts the bytes of the line without its BOM and without the `\r` of a CRLF;
    /// a cut never splits a character.
    #[test]
    fn columns_skip_the_bom_and_the_cr_and_cuts_keep_characters_whole() {
        let text = format!("\u{feff}{}\r\nnext\r\n", "é".repeat(100));
        let limits = PageLimits {
            max_bytes: 120,
            ..DEFAULT
        };
        let p = page(&text, 1, None, limits);
        assert!(
            p.text.starts_with(&format!(
                "   1 | {}\n[Line 1 is 200 bytes long; this shows columns 1-52 of it",
                "é".repeat(26)
            )),
            "{}",
            p.text
        );
        let range = LineRange {
            column: 53,
            ..LineRange::lines(1, Some(1))
        };
        let p = render_page(
            text.as_bytes(),
            range,
            PageLimits {
                max_bytes: 500,
                ..DEFAULT
            },
            None,
        )
        .unwrap();
        assert_eq!(p.text, format!("   1 | {}", "é".repeat(74)));
        let range = LineRange {
            column: 201,
            ..LineRange::lines(1, Some(1))
        };
        assert_eq!(
            render_page(text.as_bytes(), range, DEFAULT, None)
                .unwrap()
                .text,
            "   1 | "
        );
        let range = LineRange {
            column: 202,
            ..LineRange::lines(1, None)
        };
        assert!(matches!(
            render_page(text.as_bytes(), range, DEFAULT, None),
            Err(PageError::PastLineEnd {
                line: 1,
                column: 202,
                length: 200
            })
        ));
    }

    #[test]
    fn binary_bom_and_invalid_utf8() {
        assert!(matches!(
            render_page(&b"a\0b"[..], LineRange::lines(1, None), DEFAULT, None,),
            Err(PageError::Binary)
        ));
        let p = page("\u{feff}hello\n", 1, None, DEFAULT);
        assert_eq!(p.text, "   1 | hello");
        let p = render_page(
            &b"ok\n\xff\xfe bad\n"[..],
            LineRange::lines(1, None),
            DEFAULT,
            None,
        )
        .unwrap();
        assert!(p.text.contains("\u{fffd}") && p.lossy, "{}", p.text);
    }

    #[test]
    fn a_huge_rest_is_not_read_to_count_lines() {
        let text: String = (1..=10).map(|i| format!("l{i}\n")).collect();
        let limits = PageLimits {
            max_lines: 2,
            ..DEFAULT
        };
        // The size says far more follows than the budget: the count is a lower bound, unread.
        let p = render_page(
            text.as_bytes(),
            LineRange::lines(1, None),
            limits,
            Some(1 << 30),
        )
        .unwrap();
        assert_eq!(p.total, LineTotal::AtLeast(3));
        assert!(
            p.text
                .contains("of more than 3 (the file is 1073741824 bytes)"),
            "{}",
            p.text
        );
        let p = render_page(
            text.as_bytes(),
            LineRange::lines(1, None),
            limits,
            Some(text.len() as u64),
        )
        .unwrap();
        assert_eq!(p.total, LineTotal::Exact(10));
    }

    #[test]
    fn empty_file() {
        assert_eq!(page("", 1, None, DEFAULT).text, "(empty file)");
    }

    #[test]
    fn counting_stops_at_the_budget() {
        let mut r = std::io::Cursor::new(vec![b'\n'; (COUNT_BUDGET_BYTES as usize) * 2]);
        let mut reader = BufReader::new(&mut r);
        assert!(matches!(
            count_remaining(&mut reader, 0).unwrap(),
            LineTotal::AtLeast(_)
        ));
    }

    #[test]
    fn errors_map_to_their_codes_naming_the_file() {
        let path = Path::new("/w/log.txt");
        let binary = PageError::Binary.into_tool_error(path, "read_file");
        assert_eq!(binary.code, ErrorCode::BinaryFile);
        assert!(binary.message.starts_with("/w/log.txt is a binary file"));
        let past = PageError::PastEnd { start: 5, total: 2 }.into_tool_error(path, "read_file");
        assert_eq!(past.code, ErrorCode::InvalidArguments);
        assert!(
            past.message.ends_with("use a startLine from 1 to 2"),
            "{}",
            past.message
        );
        let denied = crate::paths::os_error::error(crate::paths::os_error::Cause::Permission);
        assert_eq!(
            PageError::Io(denied)
                .into_tool_error(path, "read_file")
                .code,
            ErrorCode::OsPermission
        );
    }
}
