//! `read_file`: text with numbered lines, an optional line range, and bounded output.
//!
//! The file is streamed: only the requested lines are kept, a very long line is cut, and after
//! the shown range the remaining lines are counted only up to a scan budget, so reading the first
//! lines of a 1 GB log costs about as much as reading them from a small file.

use std::io::{BufRead, BufReader, Read};

use serde::Deserialize;
use serde_json::{json, Value};

use super::files::{self, file_not_found};
use super::{at_least_one, object_schema, parse_args, ToolSpec};
use crate::call::{Authorization, BoxFuture, Call, Outcome, Success};
use crate::error::{ErrorCode, ToolError};
use crate::options::Limits;
use crate::paths::sandbox::FinalLink;
use crate::permissions::Operation;
use crate::text::decode::{looks_binary, BINARY_SNIFF_BYTES};
use crate::text::edit::numbered_line;

pub static SPEC: ToolSpec = ToolSpec {
    name: "read_file",
    description: "Read a text file. Returns its lines numbered like `  12 | text` (the numbers are not part of the file). \
Large files are returned in pages: without a range at most the first lines are shown, followed by a note with the total \
line count and the startLine to continue from. Use startLine/endLine to read a specific part. Binary files are refused. \
Relative paths are resolved against the current working directory (see cwd_get).",
    schema,
    mutates: false,
    destructive: false,
    format_call,
    run,
};

fn schema() -> Value {
    object_schema(
        json!({
            "path": { "type": "string", "minLength": 1, "description": "The file to read, absolute or relative to the current working directory." },
            "startLine": { "type": "integer", "minimum": 1, "description": "First line to show (1-based, inclusive). Default 1." },
            "endLine": { "type": "integer", "minimum": 1, "description": "Last line to show (1-based, inclusive). Default: as many lines as the output limit allows." },
        }),
        &["path"],
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Args {
    path: String,
    start_line: Option<u64>,
    end_line: Option<u64>,
}

fn format_call(args: &Value) -> String {
    let path = super::format_path(args);
    match (
        args.get("startLine").and_then(Value::as_u64),
        args.get("endLine").and_then(Value::as_u64),
    ) {
        (None, None) => path,
        (s, e) => format!(
            "{path}:{}-{}",
            s.unwrap_or(1),
            e.map(|e| e.to_string()).unwrap_or_default()
        ),
    }
}

fn run(call: &Call, args: Value) -> BoxFuture<'_, Outcome> {
    Box::pin(async move {
        let args: Args = parse_args("read_file", args)?;
        at_least_one("read_file", "startLine", args.start_line)?;
        at_least_one("read_file", "endLine", args.end_line)?;
        if let (Some(s), Some(e)) = (args.start_line, args.end_line) {
            if e < s {
                return Err(ToolError::invalid(format!(
                    "read_file: invalid arguments: endLine ({e}) is before startLine ({s})"
                ))
                .into());
            }
        }
        let target = call.resolve(&args.path, "path", FinalLink::Follow)?;
        crate::paths::resolve::file_path_not_directory_syntax(&args.path, "path", &target.path)?;
        let auth = Authorization::of(
            Operation::Read,
            &target,
            "Read file?",
            "The user denied this read.",
        );
        let open = {
            let planned = target.clone();
            move || {
                files::open_existing(&planned, "read")?.ok_or_else(|| file_not_found(&planned.path))
            }
        };
        let range = LineRange {
            start: args.start_line.unwrap_or(1),
            end: args.end_line,
        };
        let (limits, path) = (call.limits().clone(), target.path.clone());
        let read = move |opened: files::OpenedFile| {
            let size = opened.stat.st_size as u64;
            render(opened.file, range, &limits, Some(size)).map_err(|e| e.into_tool_error(&path))
        };
        // The lock is taken after any prompt: a read never holds one across it (see `locks`).
        let page = if call.is_granted(&auth) {
            // Opened and read in one task, so that a call waiting for a thread holds no
            // descriptor (16,000 reads at once ran out of them).
            call.check_abort()?;
            let _lock = call.lock_for_read(&[&target.path]).await;
            call.blocking(move || read(open()?)).await?
        } else {
            let opened = call.blocking(open).await?;
            call.authorize(auth).await?;
            let _lock = call.lock_for_read(&[&target.path]).await;
            call.blocking(move || read(opened)).await?
        };
        let mut success = Success::text(page.text)
            .with_data("path", target.path.display().to_string())
            .with_data("startLine", page.first)
            .with_data("endLine", page.last)
            .with_data("truncated", page.truncated);
        if let LineTotal::Exact(n) = page.total {
            success = success.with_data("totalLines", n);
        }
        success.path = Some(target.path);
        Ok(success)
    })
}

#[derive(Debug, Clone, Copy)]
struct LineRange {
    start: u64,
    end: Option<u64>,
}

/// How many lines the file has, as far as we looked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineTotal {
    Exact(u64),
    /// The scan budget ran out after this many lines.
    AtLeast(u64),
}

#[derive(Debug)]
struct Page {
    text: String,
    first: u64,
    last: u64,
    total: LineTotal,
    truncated: bool,
}

#[derive(Debug)]
enum RenderError {
    Binary,
    PastEnd { start: u64, total: u64 },
    Io(std::io::Error),
}

impl RenderError {
    fn into_tool_error(self, path: &std::path::Path) -> ToolError {
        match self {
            RenderError::Binary => ToolError::new(
                ErrorCode::BinaryFile,
                format!("{} is a binary file (it contains NUL bytes); read_file shows text files only", path.display()),
            ),
            RenderError::PastEnd { start, total } => ToolError::invalid(format!(
                "read_file: startLine {start} is past the end of {}, which has {total} lines; use a startLine from 1 to {total}",
                path.display()
            )),
            RenderError::Io(e) => ToolError::io(&e, "read", path),
        }
    }
}

impl From<std::io::Error> for RenderError {
    fn from(e: std::io::Error) -> Self {
        RenderError::Io(e)
    }
}

/// After the shown lines, how many more bytes we scan to count the remaining lines. When more
/// than this is left (known from the file size), the rest is not read at all: reading the first
/// page of a 1 GB log then costs what it costs for a small file.
const COUNT_BUDGET_BYTES: u64 = 4 * 1024 * 1024;

/// A reader that counts the bytes taken from its source.
struct Counting<R> {
    inner: R,
    taken: u64,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.taken += n as u64;
        Ok(n)
    }
}

/// Renders the requested page of `source`, whose total size is `size` when known.
fn render(
    source: impl Read,
    range: LineRange,
    limits: &Limits,
    size: Option<u64>,
) -> Result<Page, RenderError> {
    let mut reader = BufReader::with_capacity(
        64 * 1024,
        Counting {
            inner: source,
            taken: 0,
        },
    );
    let prefix = reader.fill_buf()?;
    if looks_binary(&prefix[..prefix.len().min(BINARY_SNIFF_BYTES)]) {
        return Err(RenderError::Binary);
    }
    let max_bytes = limits.read_max_bytes as usize;
    let max_lines = limits.read_max_lines;
    let mut text = String::new();
    let mut line = Vec::new();
    let mut line_no: u64 = 0;
    let mut shown: u64 = 0;
    let mut lossy = false;
    let mut cut_line = false;
    let mut truncated = false;
    loop {
        line.clear();
        let in_range = line_no + 1 >= range.start && range.end.is_none_or(|e| line_no < e);
        let keep = if in_range && !truncated {
            max_bytes + 4
        } else {
            0
        };
        if !next_line(&mut reader, &mut line, keep)? {
            break;
        }
        line_no += 1;
        if !in_range {
            if range.end.is_some_and(|e| line_no > e) {
                break;
            }
            continue;
        }
        if line_no == 1 && line.starts_with(b"\xEF\xBB\xBF") {
            line.drain(..3);
        }
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        let (content, valid) = match std::str::from_utf8(&line) {
            Ok(s) => (std::borrow::Cow::Borrowed(s), true),
            Err(_) => (String::from_utf8_lossy(&line), false),
        };
        let rendered = numbered_line(line_no as usize, &content);
        if shown == max_lines || text.len() + rendered.len() + 1 > max_bytes {
            if shown == 0 {
                // One line longer than the whole budget: show its beginning.
                let mut cut = max_bytes.saturating_sub(64).max(1).min(rendered.len());
                while !rendered.is_char_boundary(cut) {
                    cut -= 1;
                }
                text.push_str(&rendered[..cut]);
                text.push_str(" … [line cut: it is longer than the output limit]\n");
                shown = 1;
                cut_line = true;
                lossy |= !valid;
            }
            truncated = true;
            break;
        }
        lossy |= !valid;
        text.push_str(&rendered);
        text.push('\n');
        shown += 1;
    }
    let first = range.start;
    let last = if cut_line {
        first
    } else {
        first + shown.saturating_sub(1)
    };
    let total = if truncated || range.end.is_some_and(|e| line_no >= e) {
        let left =
            size.map(|s| s.saturating_sub(reader.get_ref().taken) + reader.buffer().len() as u64);
        if left.is_some_and(|left| left > COUNT_BUDGET_BYTES) {
            LineTotal::AtLeast(line_no)
        } else {
            count_remaining(&mut reader, line_no)?
        }
    } else {
        LineTotal::Exact(line_no)
    };
    if let LineTotal::Exact(n) = total {
        if n > 0 && range.start > n {
            return Err(RenderError::PastEnd {
                start: range.start,
                total: n,
            });
        }
    }
    if shown == 0 && line_no == 0 {
        return Ok(Page {
            text: "(empty file)".into(),
            first: 0,
            last: 0,
            total,
            truncated: false,
        });
    }
    if truncated {
        let of = match total {
            LineTotal::Exact(n) => n.to_string(),
            LineTotal::AtLeast(n) => match size {
                Some(size) => format!("more than {n} (the file is {})", super::bytes(size)),
                None => format!("more than {n}"),
            },
        };
        text.push_str(&format!(
            "\n[Showing lines {first}-{last} of {of}. Continue with startLine: {}.]",
            last + 1
        ));
    }
    if lossy {
        text.push_str(
            "\n[Note: this file is not valid UTF-8; invalid bytes are shown as U+FFFD, and edit_file will refuse to edit it.]",
        );
    }
    Ok(Page {
        text: text.trim_end_matches('\n').to_owned(),
        first,
        last,
        total,
        truncated,
    })
}

/// Consumes one whole line (its `\n` too) keeping at most `keep` bytes of it, without the
/// `\n`. `false` at end of input.
fn next_line(reader: &mut impl BufRead, line: &mut Vec<u8>, keep: usize) -> std::io::Result<bool> {
    let mut read_any = false;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(read_any);
        }
        read_any = true;
        let (chunk, found) = match memchr::memchr(b'\n', buf) {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        let room = keep.saturating_sub(line.len());
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let used = found.unwrap_or(buf.len());
        reader.consume(used);
        if found.is_some() {
            return Ok(true);
        }
    }
}

/// Counts the lines after the `seen` whole lines already consumed, up to the scan budget.
fn count_remaining(reader: &mut impl BufRead, seen: u64) -> std::io::Result<LineTotal> {
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

    fn page(text: &str, start: u64, end: Option<u64>, limits: Limits) -> Page {
        render(text.as_bytes(), LineRange { start, end }, &limits, None).unwrap()
    }

    #[test]
    fn numbers_lines_like_the_spec() {
        let p = page("a\n\tb\r\nc", 1, None, Limits::default());
        assert_eq!(p.text, "   1 | a\n   2 | \tb\n   3 | c");
        assert_eq!(p.total, LineTotal::Exact(3));
    }

    #[test]
    fn ranges_are_inclusive_and_clamped() {
        let p = page("1\n2\n3\n4\n", 2, Some(3), Limits::default());
        assert_eq!(p.text, "   2 | 2\n   3 | 3");
        let p = page("1\n2\n", 2, Some(10), Limits::default());
        assert_eq!(p.text, "   2 | 2");
        let e = render(
            &b"1\n2\n"[..],
            LineRange {
                start: 5,
                end: None,
            },
            &Limits::default(),
            None,
        )
        .unwrap_err();
        assert!(matches!(e, RenderError::PastEnd { start: 5, total: 2 }));
    }

    #[test]
    fn line_limit_tells_how_to_continue() {
        let text: String = (1..=10).map(|i| format!("l{i}\n")).collect();
        let p = page(
            &text,
            1,
            None,
            Limits {
                read_max_lines: 4,
                ..Limits::default()
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
        let p = page(
            &text,
            1,
            None,
            Limits {
                read_max_bytes: 200,
                ..Limits::default()
            },
        );
        assert!(
            p.text.len() < 400 && p.text.contains("line cut"),
            "{}",
            p.text
        );
        assert!(
            p.text.contains("of 2. Continue with startLine: 2."),
            "{}",
            p.text
        );
    }

    #[test]
    fn binary_bom_and_invalid_utf8() {
        assert!(matches!(
            render(
                &b"a\0b"[..],
                LineRange {
                    start: 1,
                    end: None
                },
                &Limits::default(),
                None,
            ),
            Err(RenderError::Binary)
        ));
        let p = page("\u{feff}hello\n", 1, None, Limits::default());
        assert_eq!(p.text, "   1 | hello");
        let p = render(
            &b"ok\n\xff\xfe bad\n"[..],
            LineRange {
                start: 1,
                end: None,
            },
            &Limits::default(),
            None,
        )
        .unwrap();
        assert!(
            p.text.contains("\u{fffd}") && p.text.contains("edit_file will refuse"),
            "{}",
            p.text
        );
    }

    #[test]
    fn a_huge_rest_is_not_read_to_count_lines() {
        let text: String = (1..=10).map(|i| format!("l{i}\n")).collect();
        let limits = Limits {
            read_max_lines: 2,
            ..Limits::default()
        };
        // The size says far more follows than the budget: the count is a lower bound, unread.
        let p = render(
            text.as_bytes(),
            LineRange {
                start: 1,
                end: None,
            },
            &limits,
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
        let p = render(
            text.as_bytes(),
            LineRange {
                start: 1,
                end: None,
            },
            &limits,
            Some(text.len() as u64),
        )
        .unwrap();
        assert_eq!(p.total, LineTotal::Exact(10));
    }

    #[test]
    fn empty_file() {
        assert_eq!(page("", 1, None, Limits::default()).text, "(empty file)");
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
}
