//! `read_file`: text with numbered lines, an optional line range, and bounded output. The paging
//! (streaming, numbering, limits, line count) is `crate::text::page`; this file is the tool
//! around it.

use serde::Deserialize;
use serde_json::{json, Value};

use super::files::{self, file_not_found};
use super::{at_least_one, object_schema, parse_args, ToolSpec};
use crate::call::{Authorization, BoxFuture, Call, Outcome, Success, ToolNames};
use crate::error::ToolError;
use crate::options::WorkspaceOptions;
use crate::paths::sandbox::FinalLink;
use crate::paths::shown::Shown;
use crate::permissions::Operation;
use crate::text::page::{render_page, LineRange, LineTotal, PageLimits};
use crate::views::{Moment, Seen};

pub static SPEC: ToolSpec = ToolSpec {
    name: "read_file",
    description,
    schema,
    mutates: false,
    destructive: false,
    idempotent: true,
    asks: true,
    path_argument: Some("path"),
    summarizes_itself: false,
    format_call,
    run,
};

fn description(_: &ToolNames, options: &WorkspaceOptions) -> String {
    let limits = &options.limits;
    format!(
        "Read a text file to see its content. Lines come back numbered like `  12 | text` (the number is not \
part of the file). One call shows at most {} lines and {}; the output then gives the line count and the startLine \
that continues. startLine and endLine (1-based, inclusive) pick a range; either may be given alone. A line too long \
for one call is cut, with the startColumn that reads on in it. Binary files are refused.",
        limits.read_max_lines,
        super::bytes(limits.read_max_bytes)
    )
}

fn schema() -> Value {
    object_schema(
        json!({
            "path": { "type": "string", "minLength": 1, "description": "The file to read, absolute or relative to the current working directory." },
            "startLine": { "type": "integer", "minimum": 1, "description": "First line to show (1-based, inclusive). Default 1." },
            "endLine": { "type": "integer", "minimum": 1, "description": "Last line to show (1-based, inclusive). Default: as many lines as the output limit allows." },
            "startColumn": { "type": "integer", "minimum": 1, "description": "Where in startLine to begin (1-based, in bytes), to read on in a line too long for one call: its note gives the value. Default 1." },
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
    start_column: Option<u64>,
}

/// `path`, `path:3-10`, `path:3-`, and with a column `path:3:65401-`.
fn format_call(args: &Value) -> String {
    let path = super::format_path(args);
    let get = |key: &str| args.get(key).and_then(Value::as_u64);
    let column = get("startColumn")
        .filter(|c| *c > 1)
        .map(|c| format!(":{c}"))
        .unwrap_or_default();
    match (get("startLine"), get("endLine")) {
        (None, None) if column.is_empty() => path,
        (s, e) => format!(
            "{path}:{}{column}-{}",
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
        at_least_one("read_file", "startColumn", args.start_column)?;
        if let (Some(s), Some(e)) = (args.start_line, args.end_line) {
            if e < s {
                return Err(ToolError::invalid(format!(
                    "{}: invalid arguments: endLine ({e}) is before startLine ({s}); give an endLine at or after startLine, or leave it out",
                    call.tool_name
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
            let (raw, sandbox) = (args.path.clone(), call.ws.sandbox().clone());
            let may_list = call.permissions.grants(Operation::Read, target.inside_root);
            move || {
                let at = Moment::now();
                let opened = files::open_existing(&planned, "read")?.ok_or_else(|| {
                    let mut e = file_not_found(&planned.path);
                    e.message.push_str(&super::nearby::not_found_hint(
                        &raw, &planned, &sandbox, may_list,
                    ));
                    e
                })?;
                Ok((opened, at))
            }
        };
        let range = LineRange {
            start: args.start_line.unwrap_or(1),
            end: args.end_line,
            column: args.start_column.unwrap_or(1),
        };
        let limits = PageLimits {
            max_lines: call.limits().read_max_lines,
            max_bytes: call.limits().read_max_bytes as usize,
        };
        let (path, tool) = (target.path.clone(), call.tool_name.clone());
        let read = move |(opened, at): (files::OpenedFile, Moment)| {
            let size = opened.stat.size;
            let seen = Seen {
                stat: opened.stat,
                at,
            };
            render_page(opened.file, range, limits, Some(size))
                .map(|page| (page, seen))
                .map_err(|e| e.into_tool_error(&path, &tool))
        };
        // The lock is taken after any prompt: a read never holds one across it (see `locks`).
        let (page, seen) = if call.is_granted(&auth) {
            // Opened and read in one task, so that a call waiting for a thread holds no
            // descriptor (16,000 reads at once ran out of them).
            call.check_abort()?;
            let _lock = call.lock_for_read(&[&target.path]).await;
            call.reading(move || read(open()?)).await?
        } else {
            let opened = call.reading(open).await?;
            call.authorize(auth).await?;
            let _lock = call.lock_for_read(&[&target.path]).await;
            call.reading(move || read(opened)).await?
        };
        // What the model has now seen of the file (../../docs/tools.md#stale-views), as it was when opened: a change
        // made while it was read makes it count as changed since.
        call.saw(&target.path, &seen);
        let mut text = page.text;
        if page.lossy {
            let edit = call.names.hint("edit_file", |edit| {
                format!(", and {edit} will refuse to edit it")
            });
            text.push_str(&format!(
                "\n[Note: this file is not valid UTF-8; invalid bytes are shown as U+FFFD{edit}.]"
            ));
        }
        let mut success = Success::text(text)
            .with_data("path", target.path.shown().into_owned())
            .with_data("startLine", page.first)
            .with_data("endLine", page.last)
            .with_data("truncated", page.truncated);
        if let LineTotal::Exact(n) = page.total {
            success = success.with_data("totalLines", n);
        }
        Ok(success)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::testing::TestWorkspace;

    #[test]
    fn format_call_shows_the_range_and_a_column() {
        assert_eq!(format_call(&json!({ "path": "a.rs" })), "a.rs");
        assert_eq!(
            format_call(&json!({ "path": "a.rs", "endLine": 9 })),
            "a.rs:1-9"
        );
        assert_eq!(
            format_call(&json!({ "path": "a.rs", "startLine": 3, "startColumn": 65401 })),
            "a.rs:3:65401-"
        );
    }

    /// A line longer than a page can be read to its end, page by page, with the column each
    /// note gives; every byte of it is shown once.
    #[tokio::test]
    async fn a_line_longer_than_a_page_is_read_on_with_start_column() {
        let ws = TestWorkspace::new();
        let long: String = (0..200_000)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        let long = format!("{long}é∑z");
        std::fs::write(
            ws.root.join("long.txt"),
            format!("first\r\n{long}\r\nlast\r\n"),
        )
        .unwrap();
        let mut read = String::new();
        let mut column = 1u64;
        for _ in 0..10 {
            let args = json!({ "path": "long.txt", "startLine": 2, "startColumn": column });
            let result = ws.call("read_file", args).await;
            assert_eq!(result.status, "ok", "{}", result.output);
            let (line, rest) = result
                .output
                .split_once('\n')
                .unwrap_or((&result.output, ""));
            read.push_str(line.strip_prefix("   2 | ").unwrap());
            match rest.split_once("startColumn: ") {
                Some((_, next)) => {
                    column = next
                        .trim_end_matches(|c: char| !c.is_ascii_digit())
                        .split('.')
                        .next()
                        .unwrap()
                        .parse()
                        .unwrap()
                }
                None => break,
            }
        }
        assert_eq!(read, long);
        let past = ws
            .call(
                "read_file",
                json!({ "path": "long.txt", "startLine": 1, "startColumn": 7 }),
            )
            .await;
        assert_eq!(
            past.code,
            Some(crate::error::ErrorCode::InvalidArguments),
            "{}",
            past.output
        );
        assert!(
            past.output.contains("use a startColumn from 1 to 6"),
            "{}",
            past.output
        );
    }
}
