//! `glob`: the files below a directory whose path matches a glob, newest first, bounded by
//! `listMaxEntries`. The walk is [`crate::walk`] (through descriptors, on all cores): `.git`,
//! the trash and (unless `includeIgnored`) what `.gitignore` ignores are skipped, and symlinks
//! are never followed, so the search stays inside the tree that was checked. The glob syntax is
//! [`crate::search::glob`] (shared with `grep`), the finding and the listing
//! [`crate::search::find`]; this file is the tool around them.

use crate::paths::Dir;

use serde::Deserialize;
use serde_json::{json, Value};

use super::{object_schema, parse_args, ToolSpec};
use crate::call::{Authorization, BoxFuture, Call, Outcome, Success, ToolNames};
use crate::error::ToolError;
use crate::options::WorkspaceOptions;
use crate::paths::sandbox::FinalLink;
use crate::paths::shown::Shown;
use crate::paths::Target;
use crate::permissions::Operation;
use crate::progress::Unit;
use crate::search::find::{find_files, listing, Searched};
use crate::search::glob::PathGlob;

pub static SPEC: ToolSpec = ToolSpec {
    name: "glob",
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

fn description(names: &ToolNames, options: &WorkspaceOptions) -> String {
    let grep = names.hint("grep", |grep| {
        format!(" To search file contents use {grep}.")
    });
    format!(
        "Find files by name with a pattern such as `**/*.ts`, `*.py` or `src/**/test_*.rs`. Without `/` it \
matches file names at any depth; with `/`, paths relative to the searched directory. `*` and `?` stay within a \
directory, `**` spans directories, `{{a,b}}` matches either, `[abc]` one character. Lists paths relative to path \
(default the working directory), newest first, at most {}. Skips .git and what .gitignore ignores unless \
includeIgnored; links are not followed.{grep}",
        options.limits.list_max_entries
    )
}

fn schema() -> Value {
    object_schema(
        json!({
            "pattern": { "type": "string", "minLength": 1, "description": "The pattern to match against file paths relative to the searched directory, e.g. `**/*.ts`, `*.{js,jsx}` or `src/**/mod.rs`. Without a `/` it matches file names at any depth." },
            "path": { "type": "string", "minLength": 1, "description": "The directory to search, absolute or relative to the current working directory. Default: the current working directory." },
            "includeIgnored": { "type": "boolean", "description": "Also find files that .gitignore ignores (such as node_modules or build output). Default false." },
        }),
        &["pattern"],
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Args {
    pattern: String,
    path: Option<String>,
    #[serde(default)]
    include_ignored: bool,
}

/// `pattern` or `pattern in path`.
fn format_call(args: &Value) -> String {
    let pattern = args.get("pattern").and_then(Value::as_str).unwrap_or("");
    match args.get("path").and_then(Value::as_str) {
        Some(path) => format!("{pattern} in {path}"),
        None => pattern.to_owned(),
    }
}

fn run(call: &Call, args: Value) -> BoxFuture<'_, Outcome> {
    Box::pin(async move {
        let args: Args = parse_args("glob", args)?;
        let matcher =
            PathGlob::new(&args.pattern).map_err(|e| e.for_field(&call.tool_name, "pattern"))?;
        let target = call.resolve(
            args.path.as_deref().unwrap_or("."),
            "path",
            FinalLink::Follow,
        )?;
        let checked = target.clone();
        // Opened once, before asking: what is searched is the directory that was checked.
        let names = call.names.clone();
        let dir = call
            .reading(move || open_search_dir(&checked, &names))
            .await?;
        call.authorize(Authorization::of(
            Operation::Read,
            &target,
            "Search files?",
            "The user denied this read.",
        ))
        .await?;
        let max = call.limits().list_max_entries as usize;
        let sandbox = call.ws.sandbox().clone();
        let cancel = call.cancel.clone();
        let searched = target.clone();
        let include_ignored = args.include_ignored;
        let progress = call.progress.meter(Unit::Files, None);
        let found = call
            .reading(move || {
                find_files(
                    dir,
                    &searched,
                    &sandbox,
                    include_ignored,
                    &matcher,
                    &cancel,
                    &progress,
                )
            })
            .await?;
        call.check_abort()?;
        let listed = listing(
            found,
            max,
            &Searched {
                pattern: &args.pattern,
                dir: &target.path,
                include_ignored,
                max_bytes: call.limits().read_max_bytes as usize,
            },
        );
        let success = Success::text(listed.text)
            .with_data("path", target.path.shown().into_owned())
            .with_data("files", listed.shown)
            .with_data("total", listed.total)
            .with_data("truncated", listed.shown < listed.total);
        Ok(success)
    })
}

/// Opens the directory to search (readable), with the documented messages for what is not one.
pub(super) fn open_search_dir(target: &Target, names: &ToolNames) -> Result<Dir, ToolError> {
    let hint = match names.offered("read_file") {
        Some(read) => format!("give the directory to search, or use {read} to read a file"),
        None => "give the directory to search".to_owned(),
    };
    super::files::open_directory(target, true, "search", &hint)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_call_is_pattern_in_path() {
        assert_eq!(format_call(&json!({ "pattern": "*.rs" })), "*.rs");
        assert_eq!(
            format_call(&json!({ "pattern": "*.rs", "path": "src" })),
            "*.rs in src"
        );
    }
}
