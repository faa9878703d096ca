//! `grep`: regex search of file contents, below a directory or in one file, bounded by
//! `maxMatches` and `readMaxBytes`. The search, its walk and its output are
//! [`crate::search::grep`] (with the glob syntax of `include` from [`crate::search::glob`]);
//! this file is the tool around them.

use crate::paths::Dir;

use serde::Deserialize;
use serde_json::{json, Value};

use super::files::{self, OpenedFile};
use super::glob::open_search_dir;
use super::{at_least_one, object_schema, parse_args, ToolSpec};
use crate::call::{Authorization, BoxFuture, Call, Outcome, Success, ToolNames};
use crate::error::{ErrorCode, ToolError};
use crate::options::WorkspaceOptions;
use crate::paths::sandbox::FinalLink;
use crate::paths::shown::Shown;
use crate::paths::Target;
use crate::permissions::Operation;
use crate::progress::Unit;
use crate::search::glob::PathGlob;
use crate::search::grep::{
    build_matcher, output, search_single_file, search_tree, Bounds, Searched, Tree,
};

/// `maxMatches` when the model gives none.
const DEFAULT_MAX_MATCHES: u64 = 100;
/// The most `contextLines` a call may ask for.
const MAX_CONTEXT_LINES: u64 = 100;

pub static SPEC: ToolSpec = ToolSpec {
    name: "grep",
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

fn description(names: &ToolNames, _: &WorkspaceOptions) -> String {
    let glob = names.hint("glob", |glob| format!(" To find files by name use {glob}."));
    format!(
        "Search file contents with a regular expression (Rust syntax, as in ripgrep: `fn\\s+main`, `TODO|FIXME`; \
escape `( ) [ ] {{ }} . * + ? | \\` to match them literally), in every text file below path (default the working \
directory) or in the one file it names. Each match is a line `path:line: text`; contextLines adds the lines around \
it. Skips .git, binary files and what .gitignore ignores unless includeIgnored. At most maxMatches lines (default \
{DEFAULT_MAX_MATCHES}); narrow with include (e.g. `*.ts`) or a subdirectory.{glob}"
    )
}

fn schema() -> Value {
    object_schema(
        json!({
            "pattern": { "type": "string", "minLength": 1, "description": "The regular expression to search for (Rust regex syntax), matched against each line. Escape regex characters to search for them literally, e.g. `foo\\(` for `foo(`." },
            "path": { "type": "string", "minLength": 1, "description": "The directory to search recursively, or a single file to search, absolute or relative to the current working directory. Default: the current working directory." },
            "include": { "type": "string", "minLength": 1, "description": "Only search files matching this pattern, e.g. `*.ts`, `*.{js,jsx}` or `src/**/*.rs`. Without a `/` it matches file names at any depth; with one, paths relative to the searched directory." },
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
        let matcher = build_matcher(&args.pattern, args.case_insensitive, &call.tool_name)?;
        let include = args
            .include
            .as_deref()
            .map(PathGlob::new)
            .transpose()
            .map_err(|e| e.for_field(&call.tool_name, "include"))?;
        let target = call.resolve(
            args.path.as_deref().unwrap_or("."),
            "path",
            FinalLink::Follow,
        )?;
        let checked = target.clone();
        let names = call.names.clone();
        let scope = call.reading(move || open_scope(&checked, &names)).await?;
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
        let progress = call.progress.clone();
        let collected = call
            .reading(move || match scope {
                Scope::File(opened) => {
                    let size = opened.stat.size;
                    search_single_file(
                        opened.file,
                        size,
                        &searched.path,
                        &matcher,
                        &limits,
                        &cancel,
                    )
                }
                Scope::Dir(dir) => {
                    let tree = Tree {
                        target: &searched,
                        include: include.as_ref(),
                        include_ignored,
                    };
                    let progress = progress.meter(Unit::Files, None);
                    search_tree(dir, &tree, &sandbox, &matcher, &limits, &cancel, &progress)
                }
            })
            .await?;
        call.check_abort()?;
        let rendered = output(
            &collected,
            &bounds,
            &Searched {
                pattern: &args.pattern,
                path: &target.path,
                ignored_skipped: !single_file && !include_ignored,
            },
        );
        let success = Success::text(rendered.text)
            .with_data("path", target.path.shown().into_owned())
            .with_data("matches", rendered.matches)
            .with_data("files", rendered.files)
            .with_data("truncated", rendered.cut.is_some());
        Ok(success)
    })
}

/// What the call searches: a directory tree or one file.
enum Scope {
    Dir(Dir),
    File(OpenedFile),
}

fn open_scope(target: &Target, names: &ToolNames) -> Result<Scope, ToolError> {
    match open_search_dir(target, names) {
        Ok(dir) => Ok(Scope::Dir(dir)),
        Err(e) if e.code == ErrorCode::NotADirectory => files::open_existing(target, "search")?
            .map(Scope::File)
            .ok_or_else(|| not_found(target, names)),
        Err(e) if e.code == ErrorCode::NotFound => Err(not_found(target, names)),
        Err(e) => Err(e),
    }
}

fn not_found(target: &Target, names: &ToolNames) -> ToolError {
    let finders: Vec<&str> = ["list_directory", "glob"]
        .into_iter()
        .filter_map(|tool| names.offered(tool))
        .collect();
    let show = match finders.as_slice() {
        [] => String::new(),
        [one] => format!(" ({one} can show what exists)"),
        [one, two, ..] => format!(" ({one} or {two} can show what exists)"),
    };
    ToolError::new(
        ErrorCode::NotFound,
        format!(
            "path not found: {}; check the path{show}",
            target.path.shown()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_call_is_pattern_in_path() {
        assert_eq!(format_call(&json!({ "pattern": "TODO" })), "TODO");
        assert_eq!(
            format_call(&json!({ "pattern": "TODO", "path": "src", "include": "*.rs" })),
            "TODO in src (*.rs)"
        );
    }
}
