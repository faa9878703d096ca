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

pub static SPEC: ToolSpec = ToolSpec {
    name: "read_file",
    description,
    schema,
    mutates: false,
    destructive: false,
    idempotent: true,
    path_argument: Some("path"),
    format_call,
    run,
};

fn description(_: &ToolNames, options: &WorkspaceOptions) -> String {
    let limits = &options.limits;
    format!(
        "Read a text file to see its content. Lines come back numbered like `  12 | text` (the number is not \
part of the file). One call shows at most {} lines and {}; the output then gives the line count and the startLine \
that continues. startLine and endLine (1-based, inclusive) pick a range; either may be given alone. Binary files are \
refused.",
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
        let limits = PageLimits {
            max_lines: call.limits().read_max_lines,
            max_bytes: call.limits().read_max_bytes as usize,
        };
        let path = target.path.clone();
        let read = move |opened: files::OpenedFile| {
            let size = opened.stat.st_size as u64;
            render_page(opened.file, range, limits, Some(size))
                .map_err(|e| e.into_tool_error(&path))
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
