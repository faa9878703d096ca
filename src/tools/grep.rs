//! `grep`: regex search of file contents with ripgrep's own crates (`grep-regex`,
//! `grep-searcher`), over the same walk as `glob` ([`crate::walk`]: parallel, gitignore-aware,
//! through directory descriptors, never following a symlink).
//!
//! Output is `path:line: text` (context `path-line- text`, groups split by `--`), in path order
//! whatever order the worker threads finish in. It is bounded twice, by `maxMatches` and by
//! `readMaxBytes`: while searching, only the files that can still be shown are kept (the first
//! ones in path order), so memory stays bounded on a huge tree, and a file that sorts after a
//! full result is searched at most until its first match (to know that there is more).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use grep_matcher::{LineTerminator, Matcher};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use serde::Deserialize;
use serde_json::{json, Value};

use super::files::{self, OpenedFile};
use super::glob::open_search_dir;
use super::{at_least_one, object_schema, parse_args, ToolSpec};
use crate::call::{Authorization, BoxFuture, Call, Outcome, Success};
use crate::cancel::CancelToken;
use crate::error::{ErrorCode, ToolError};
use crate::paths::fsops::{self, EntryKind};
use crate::paths::sandbox::FinalLink;
use crate::paths::Target;
use crate::permissions::Operation;
use crate::search::glob::PathGlob;
use crate::walk::{self, WalkOptions};

/// `maxMatches` when the model gives none.
const DEFAULT_MAX_MATCHES: u64 = 100;
/// The most `contextLines` a call may ask for.
const MAX_CONTEXT_LINES: u64 = 100;
/// Longer lines are shortened around their first match.
const LINE_CAP: usize = 500;
/// A line longer than this makes the file unsearchable (it is skipped).
const HEAP_LIMIT: usize = 64 * 1024 * 1024;

pub static SPEC: ToolSpec = ToolSpec {
    name: "grep",
    description: "Search file contents with a regular expression (Rust regex syntax, as in ripgrep: `fn\\s+main`, \
`TODO|FIXME`, `\\bparse_\\w+`; escape `( ) [ ] { } . * + ? | \\` to match them literally). Searches every text file \
below path (default the current working directory), or the one file path names, a line at a time. Skips .git, binary \
files and files ignored by .gitignore (unless includeIgnored is true); symbolic links are not followed. Each match is \
a line `path:line: text`, path relative to the searched directory (for a single file, its name), sorted by path; with \
contextLines, the lines around a match appear as `path-line- text` and `--` separates groups. Output is capped \
(maxMatches, default 100, and a size limit); narrow it with a more specific pattern, include (e.g. `*.ts`) or a \
subdirectory as path. To find files by name, use glob.",
    schema,
    mutates: false,
    destructive: false,
    idempotent: true,
    path_argument: Some("path"),
    format_call,
    run,
};

fn schema() -> Value {
    object_schema(
        json!({
            "pattern": { "type": "string", "minLength": 1, "description": "The regular expression to search for (Rust regex syntax), matched against each line. Escape regex characters to search for them literally, e.g. `foo\\(` for `foo(`." },
            "path": { "type": "string", "minLength": 1, "description": "The directory to search recursively, or a single file to search, absolute or relative to the current working directory. Default: the current working directory." },
            "include": { "type": "string", "minLength": 1, "description": "Only search files matching this glob, e.g. `*.ts`, `*.{js,jsx}` or `src/**/*.rs`. Without a `/` it matches file names at any depth; with one, paths relative to the searched directory." },
            "caseInsensitive": { "type": "boolean", "description": "Match letters regardless of case. Default false." },
            "contextLines": { "type": "integer", "minimum": 0, "maximum": MAX_CONTEXT_LINES, "description": "How many lines to show before and after each match. Default 0." },
            "maxMatches": { "type": "integer", "minimum": 1, "description": "The most matching lines to return. Default 100." },
            "includeIgnored": { "type": "boolean", "description": "Also search files that .gitignore ignores (such as node_modules or build output). Default false." },
        }),
        &["pattern"],
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Args {
    pattern: String,
    path: Option<String>,
    include: Option<String>,
    #[serde(default)]
    case_insensitive: bool,
    context_lines: Option<u64>,
    max_matches: Option<u64>,
    #[serde(default)]
    include_ignored: bool,
}

/// `pattern`, `pattern in path`, plus ` (include)`.
fn format_call(args: &Value) -> String {
    let get = |k: &str| args.get(k).and_then(Value::as_str);
    let mut header = get("pattern").unwrap_or("").to_owned();
    if let Some(path) = get("path") {
        header.push_str(&format!(" in {path}"));
    }
    if let Some(include) = get("include") {
        header.push_str(&format!(" ({include})"));
    }
    header
}

fn run(call: &Call, args: Value) -> BoxFuture<'_, Outcome> {
    Box::pin(async move {
        let args: Args = parse_args("grep", args)?;
        at_least_one("grep", "maxMatches", args.max_matches)?;
        if args.pattern.is_empty() {
            return Err(ToolError::invalid(
                "grep: invalid arguments: pattern: must not be empty; give the text or regular expression to search for",
            )
            .into());
        }
        let context = args.context_lines.unwrap_or(0);
        if context > MAX_CONTEXT_LINES {
            return Err(ToolError::invalid(format!(
                "grep: invalid arguments: contextLines: must be at most {MAX_CONTEXT_LINES}"
            ))
            .into());
        }
        let matcher = build_matcher(&args.pattern, args.case_insensitive)?;
        let include = args
            .include
            .as_deref()
            .map(PathGlob::new)
            .transpose()
            .map_err(|e| e.for_field("grep", "include"))?;
        let target = call.resolve(
            args.path.as_deref().unwrap_or("."),
            "path",
            FinalLink::Follow,
        )?;
        let checked = target.clone();
        let scope = call.blocking(move || open_scope(&checked)).await?;
        call.authorize(Authorization::of(
            Operation::Read,
            &target,
            "Search files?",
            "The user denied this read.",
        ))
        .await?;
        let bounds = Bounds {
            max_matches: args.max_matches.unwrap_or(DEFAULT_MAX_MATCHES) as usize,
            max_bytes: call.limits().read_max_bytes as usize,
            context: context as usize,
        };
        let cancel = call.cancel.clone();
        let sandbox = call.ws.sandbox().clone();
        let searched = target.clone();
        let include_ignored = args.include_ignored;
        let single_file = matches!(scope, Scope::File(_));
        let limits = bounds.clone();
        let collected = call
            .blocking(move || match scope {
                Scope::File(opened) => search_one(opened, &searched, &matcher, &limits, &cancel),
                Scope::Dir(dir) => {
                    let tree = Tree {
                        target: &searched,
                        include: include.as_ref(),
                        include_ignored,
                    };
                    search_tree(dir, &tree, &sandbox, &matcher, &limits, &cancel)
                }
            })
            .await?;
        call.check_abort()?;
        let rendered = render(&collected, &bounds);
        let mut text = rendered.text;
        if rendered.matches == 0 {
            text = format!(
                "No matches for `{}` in {}.",
                args.pattern,
                target.path.display()
            );
            if !single_file && !include_ignored {
                text.push_str(" Binary files and files ignored by .gitignore were skipped; set includeIgnored: true to search ignored files.");
            }
        }
        if let Some(cut) = rendered.cut {
            text.push('\n');
            text.push_str(&truncation_note(cut, rendered.matches, &bounds));
        }
        let success = Success::text(text)
            .with_data("path", target.path.display().to_string())
            .with_data("matches", rendered.matches)
            .with_data("files", rendered.files)
            .with_data("truncated", rendered.cut.is_some());
        Ok(success)
    })
}

/// The regex, line-oriented (it never matches across lines; `$` also matches before `\r\n`).
fn build_matcher(pattern: &str, case_insensitive: bool) -> Result<RegexMatcher, ToolError> {
    RegexMatcherBuilder::new()
        .case_insensitive(case_insensitive)
        .crlf(true)
        .ban_byte(Some(0))
        .build(pattern)
        .map_err(|e| {
            ToolError::invalid(format!(
                "grep: invalid arguments: pattern: invalid regular expression: {}\nThe pattern is a Rust regex matched against one line at a time; escape ( ) [ ] {{ }} . * + ? | \\ with a backslash to match them literally.",
                e.to_string().trim_end()
            ))
        })
}

/// What the call searches: a directory tree or one file.
enum Scope {
    Dir(OwnedFd),
    File(OpenedFile),
}

fn open_scope(target: &Target) -> Result<Scope, ToolError> {
    match open_search_dir(target, "grep") {
        Ok(dir) => Ok(Scope::Dir(dir)),
        Err(e) if e.code == ErrorCode::NotADirectory => files::open_existing(target, "search")?
            .map(Scope::File)
            .ok_or_else(|| not_found(target)),
        Err(e) if e.code == ErrorCode::NotFound => Err(not_found(target)),
        Err(e) => Err(e),
    }
}

fn not_found(target: &Target) -> ToolError {
    ToolError::new(
        ErrorCode::NotFound,
        format!(
            "path not found: {}; check the path (list_directory or glob can show what exists)",
            target.path.display()
        ),
    )
}

/// The output bounds of one call.
#[derive(Debug, Clone)]
struct Bounds {
    max_matches: usize,
    max_bytes: usize,
    context: usize,
}

impl Bounds {
    fn searcher(&self) -> Searcher {
        SearcherBuilder::new()
            .line_terminator(LineTerminator::crlf())
            .line_number(true)
            .binary_detection(BinaryDetection::quit(0))
            .before_context(self.context)
            .after_context(self.context)
            .heap_limit(Some(HEAP_LIMIT))
            .build()
    }
}

/// One line of a file's result.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Line {
    Match(u64, String),
    Context(u64, String),
    /// `--` between non-adjacent groups of context.
    Break,
}

/// What one file contributed.
#[derive(Debug, Default, Clone)]
struct FileHits {
    lines: Vec<Line>,
    matches: usize,
    /// The size of `lines` as rendered (approximately).
    bytes: usize,
    /// The search stopped before the end of the file: it has more matches than kept.
    more: bool,
}

/// The files that can still be shown, by path, and whether anything was left out.
#[derive(Debug, Default)]
struct Collected {
    files: BTreeMap<PathBuf, FileHits>,
    matches: usize,
    bytes: usize,
    /// Some matches were found that will not be shown.
    more: bool,
}

impl Collected {
    fn is_full(&self, bounds: &Bounds) -> bool {
        self.matches >= bounds.max_matches || self.bytes >= bounds.max_bytes
    }

    /// Whether a file at `rel` would sort after everything that can be shown.
    fn is_past_the_end(&self, rel: &Path, bounds: &Bounds) -> bool {
        self.is_full(bounds)
            && self
                .files
                .last_key_value()
                .is_some_and(|(last, _)| rel > last.as_path())
    }

    /// Adds a file with matches, then drops the files at the end that can no longer be shown.
    fn add(&mut self, rel: PathBuf, hits: FileHits, bounds: &Bounds) {
        self.matches += hits.matches;
        self.bytes += hits.bytes;
        self.more |= hits.more;
        self.files.insert(rel, hits);
        while self.files.len() > 1 {
            let Some((_, last)) = self.files.last_key_value() else {
                break;
            };
            if self.matches - last.matches < bounds.max_matches
                && self.bytes - last.bytes < bounds.max_bytes
            {
                break;
            }
            let (_, last) = self.files.pop_last().expect("not empty");
            self.matches -= last.matches;
            self.bytes -= last.bytes;
            self.more = true;
        }
    }
}

/// The directory being searched.
struct Tree<'a> {
    target: &'a Target,
    include: Option<&'a PathGlob>,
    include_ignored: bool,
}

/// A searcher and its matcher, used by one thread at a time (the walk's threads share a pool).
struct Worker {
    searcher: Searcher,
    matcher: RegexMatcher,
}

fn search_tree(
    dir: OwnedFd,
    tree: &Tree<'_>,
    sandbox: &crate::paths::Sandbox,
    matcher: &RegexMatcher,
    bounds: &Bounds,
    cancel: &CancelToken,
) -> Result<Collected, ToolError> {
    let collected = Mutex::new(Collected::default());
    let lock = || collected.lock().unwrap_or_else(|e| e.into_inner());
    let idle: Mutex<Vec<Worker>> = Mutex::new(Vec::new());
    let options = WalkOptions {
        sandbox,
        include_ignored: tree.include_ignored,
        limit: None, // the first files in path order are kept as they are found
        cancel,
    };
    walk::walk(dir, tree.target, &options, |entry| {
        let rel = entry.rel;
        if entry.kind != EntryKind::File || tree.include.is_some_and(|g| !g.is_match(rel)) {
            return None::<()>;
        }
        let (past_the_end, more_known) = {
            let c = lock();
            (c.is_past_the_end(rel, bounds), c.more)
        };
        if past_the_end && more_known {
            return None;
        }
        let Ok(file) = open_regular(entry) else {
            return None; // unreadable or changed since the walk saw it: skipped, like rg
        };
        let pooled = idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut worker = pooled.unwrap_or_else(|| Worker {
            searcher: bounds.searcher(),
            matcher: matcher.clone(),
        });
        if past_the_end {
            if has_match(&mut worker.searcher, &worker.matcher, file, cancel) {
                lock().more = true;
            }
        } else {
            let label = rel.display().to_string();
            let hits = search_file(
                &mut worker.searcher,
                &worker.matcher,
                file,
                &label,
                bounds,
                cancel,
            );
            if let Ok(Some(hits)) = hits {
                if hits.matches > 0 {
                    lock().add(rel.to_path_buf(), hits, bounds);
                }
            }
        }
        idle.lock().unwrap_or_else(|e| e.into_inner()).push(worker);
        None
    })?;
    Ok(collected.into_inner().unwrap_or_else(|e| e.into_inner()))
}

fn search_one(
    opened: OpenedFile,
    target: &Target,
    matcher: &RegexMatcher,
    bounds: &Bounds,
    cancel: &CancelToken,
) -> Result<Collected, ToolError> {
    let label = target
        .path
        .file_name()
        .map(|n| Path::new(n).display().to_string())
        .unwrap_or_default();
    let mut searcher = bounds.searcher();
    let mut collected = Collected::default();
    match search_file(&mut searcher, matcher, opened.file, &label, bounds, cancel) {
        _ if cancel.is_aborted() => Err(ToolError::aborted()),
        Ok(Some(hits)) => {
            if hits.matches > 0 {
                collected.add(PathBuf::from(&label), hits, bounds);
            }
            Ok(collected)
        }
        Ok(None) => Err(ToolError::new(
            ErrorCode::BinaryFile,
            format!(
                "{} is a binary file; grep searches text files only",
                target.path.display()
            ),
        )),
        Err(e) => Err(ToolError::io(&e, "search", &target.path)),
    }
}

/// Opens the entry if it is (still) a regular file, through its directory's descriptor and
/// without following a symlink; never blocks on a FIFO.
fn open_regular(entry: &walk::Entry<'_>) -> io::Result<File> {
    let file = fsops::open_for_read(entry.dir, entry.name)?;
    if EntryKind::of(&fsops::fstat(&file)?) != EntryKind::File {
        return Err(io::Error::other("not a regular file"));
    }
    Ok(file)
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

/// Searches one file; `None` if it is binary.
fn search_file(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    file: File,
    label: &str,
    bounds: &Bounds,
    cancel: &CancelToken,
) -> io::Result<Option<FileHits>> {
    let mut sink = Collect {
        matcher,
        bounds,
        label_len: label.len(),
        hits: FileHits::default(),
        binary: false,
    };
    searcher.search_reader(
        matcher,
        AbortRead {
            inner: file,
            cancel,
        },
        &mut sink,
    )?;
    Ok((!sink.binary).then_some(sink.hits))
}

/// Whether a (text) file has any match at all.
fn has_match(
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

/// Keeps a file's matches and context lines, up to the bounds.
struct Collect<'a> {
    matcher: &'a RegexMatcher,
    bounds: &'a Bounds,
    label_len: usize,
    hits: FileHits,
    binary: bool,
}

impl Collect<'_> {
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

/// The bytes `line` takes in the output, newline included.
fn rendered_len(label_len: usize, line: &Line) -> usize {
    match line {
        Line::Match(n, text) | Line::Context(n, text) => {
            label_len + 1 + n.to_string().len() + 2 + text.len() + 1
        }
        Line::Break => 3,
    }
}

/// Which bound cut the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cut {
    Matches,
    Bytes,
}

#[derive(Debug)]
struct Rendered {
    text: String,
    matches: usize,
    files: usize,
    cut: Option<Cut>,
}

/// The collected files in path order, within the bounds.
fn render(collected: &Collected, bounds: &Bounds) -> Rendered {
    let mut out: Vec<String> = Vec::new();
    let mut size = 0;
    let mut matches = 0;
    let mut files = 0;
    let mut cut = None;
    'files: for (rel, hits) in &collected.files {
        let label = rel.display().to_string();
        let mut started = false;
        // After the last allowed match, only its trailing context is still shown.
        let mut trailing = bounds.context;
        for line in &hits.lines {
            let text = match line {
                Line::Match(..) | Line::Break if matches == bounds.max_matches => {
                    cut = Some(Cut::Matches);
                    break 'files;
                }
                Line::Context(..) if matches == bounds.max_matches && trailing == 0 => {
                    cut = Some(Cut::Matches);
                    break 'files;
                }
                Line::Match(n, text) => format!("{label}:{n}: {text}"),
                Line::Context(n, text) => format!("{label}-{n}- {text}"),
                Line::Break => "--".to_owned(),
            };
            let separator = !started && files > 0 && bounds.context > 0;
            let needed = text.len() + 1 + if separator { 3 } else { 0 };
            if size + needed > bounds.max_bytes {
                cut = Some(Cut::Bytes);
                break 'files;
            }
            if separator {
                out.push("--".to_owned());
            }
            if !started {
                started = true;
                files += 1;
            }
            size += needed;
            match line {
                Line::Match(..) => matches += 1,
                Line::Context(..) if matches == bounds.max_matches => trailing -= 1,
                _ => {}
            }
            out.push(text);
        }
    }
    if cut.is_none() && collected.more {
        cut = Some(if matches >= bounds.max_matches {
            Cut::Matches
        } else {
            Cut::Bytes
        });
    }
    Rendered {
        text: out.join("\n"),
        matches,
        files,
        cut,
    }
}

fn truncation_note(cut: Cut, shown: usize, bounds: &Bounds) -> String {
    match cut {
        Cut::Matches => format!(
            "[Showing the first {shown} matches (maxMatches: {}); there are more. Narrow the search with a more specific pattern, include (e.g. \"*.ts\") or a subdirectory as path, or raise maxMatches.]",
            bounds.max_matches
        ),
        Cut::Bytes => format!(
            "[Output truncated at {} bytes after {shown} matches; there are more. Narrow the search with a more specific pattern, include (e.g. \"*.ts\") or a subdirectory as path{}.]",
            bounds.max_bytes,
            if bounds.context > 0 { ", or use fewer contextLines" } else { "" }
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds(max_matches: usize, max_bytes: usize, context: usize) -> Bounds {
        Bounds {
            max_matches,
            max_bytes,
            context,
        }
    }

    /// Searches `text` as the file `label`.
    fn hits(text: &str, pattern: &str, b: &Bounds) -> Option<FileHits> {
        let matcher = build_matcher(pattern, false).unwrap();
        let mut searcher = b.searcher();
        let mut sink = Collect {
            matcher: &matcher,
            bounds: b,
            label_len: 1,
            hits: FileHits::default(),
            binary: false,
        };
        searcher
            .search_reader(&matcher, text.as_bytes(), &mut sink)
            .unwrap();
        (!sink.binary).then_some(sink.hits)
    }

    fn collect(files: &[(&str, &str)], pattern: &str, b: &Bounds) -> Collected {
        let mut c = Collected::default();
        for (name, text) in files {
            let h = hits(text, pattern, b).unwrap();
            if h.matches > 0 {
                c.add(PathBuf::from(name), h, b);
            }
        }
        c
    }

    #[test]
    fn matches_are_path_line_text_sorted_by_path() {
        let b = bounds(100, 65536, 0);
        let c = collect(
            &[
                ("b.rs", "fn main() {}\nlet x = 1;\n"),
                ("a.rs", "x\nfn a() {}\r\n"),
            ],
            r"fn \w+\(\)",
            &b,
        );
        let r = render(&c, &b);
        assert_eq!(r.text, "a.rs:2: fn a() {}\nb.rs:1: fn main() {}");
        assert_eq!((r.matches, r.files, r.cut), (2, 2, None));
    }

    #[test]
    fn context_lines_and_separators_look_like_rg() {
        let b = bounds(100, 65536, 1);
        let text = "1\nhit\n3\n4\n5\n6\nhit\n8\n";
        let c = collect(&[("f", text), ("g", "hit\n")], "hit", &b);
        assert_eq!(
            render(&c, &b).text,
            "f-1- 1\nf:2: hit\nf-3- 3\n--\nf-6- 6\nf:7: hit\nf-8- 8\n--\ng:1: hit"
        );
    }

    #[test]
    fn max_matches_cuts_in_path_order_with_trailing_context() {
        let b = bounds(2, 65536, 1);
        let c = collect(
            &[("c", "hit\n"), ("a", "hit\nx\ny\nhit\nz\n"), ("b", "hit\n")],
            "hit",
            &b,
        );
        // `b` and `c` sort after two matches: they were dropped while collecting.
        assert_eq!(c.files.len(), 1);
        let r = render(&c, &b);
        assert_eq!(r.text, "a:1: hit\na-2- x\na-3- y\na:4: hit\na-5- z");
        assert_eq!(r.cut, Some(Cut::Matches));
        assert!(truncation_note(Cut::Matches, 2, &b).contains("raise maxMatches"));
    }

    #[test]
    fn a_file_with_more_matches_than_the_bound_stops_early() {
        let b = bounds(3, 65536, 0);
        let h = hits(&"hit\n".repeat(1000), "hit", &b).unwrap();
        assert_eq!(h.matches, 3);
        assert!(h.more);
        let c = collect(&[("a", &"hit\n".repeat(10))], "hit", &b);
        let r = render(&c, &b);
        assert_eq!(r.text.lines().count(), 3);
        assert_eq!(r.cut, Some(Cut::Matches));
    }

    #[test]
    fn the_byte_bound_cuts_whole_lines() {
        let b = bounds(100, 30, 0);
        let c = collect(&[("a", "hit one\nhit two\nhit three\n")], "hit", &b);
        let r = render(&c, &b);
        assert_eq!(r.text, "a:1: hit one\na:2: hit two");
        assert_eq!(r.cut, Some(Cut::Bytes));
        let note = truncation_note(Cut::Bytes, r.matches, &b);
        assert!(
            note.starts_with("[Output truncated at 30 bytes after 2 matches"),
            "{note}"
        );
    }

    #[test]
    fn binary_files_are_reported_as_binary() {
        let b = bounds(100, 65536, 0);
        assert!(hits("hit\0\n", "hit", &b).is_none());
        assert!(hits("hit\n", "hit", &b).is_some());
    }

    #[test]
    fn case_insensitive_and_crlf() {
        let m = build_matcher("HELLO$", true).unwrap();
        assert!(m.is_match(b"say hello").unwrap());
        let b = bounds(100, 65536, 0);
        let c = collect(&[("w", "end\r\nend\r\n")], "end$", &b);
        assert_eq!(render(&c, &b).text, "w:1: end\nw:2: end");
    }

    #[test]
    fn a_bad_regex_is_invalid_arguments_with_the_regex_error() {
        let e = build_matcher("fn (", false).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArguments);
        assert!(e
            .message
            .starts_with("grep: invalid arguments: pattern: invalid regular expression:"));
        assert!(e.message.contains("unclosed group"), "{}", e.message);
        assert!(build_matcher(r"a\nb", false).is_err());
    }

    #[test]
    fn long_lines_are_shortened_around_the_match() {
        let m = build_matcher("NEEDLE", false).unwrap();
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

    #[test]
    fn collected_keeps_only_what_can_be_shown() {
        let b = bounds(2, 65536, 0);
        let mut c = Collected::default();
        let one = || FileHits {
            lines: vec![Line::Match(1, "x".into())],
            matches: 1,
            bytes: 8,
            more: false,
        };
        c.add("m".into(), one(), &b);
        assert!(!c.is_past_the_end(Path::new("z"), &b));
        c.add("z".into(), one(), &b);
        assert!(c.is_past_the_end(Path::new("zz"), &b));
        assert!(!c.is_past_the_end(Path::new("a"), &b));
        c.add("a".into(), one(), &b);
        assert_eq!(
            c.files.keys().collect::<Vec<_>>(),
            [Path::new("a"), Path::new("m")]
        );
        assert!(c.more);
    }

    #[test]
    fn format_call_is_pattern_in_path() {
        assert_eq!(format_call(&json!({ "pattern": "TODO" })), "TODO");
        assert_eq!(
            format_call(&json!({ "pattern": "TODO", "path": "src", "include": "*.rs" })),
            "TODO in src (*.rs)"
        );
    }
}
