//! `list_directory`: one entry per line, sorted, bounded by `listMaxEntries`. Symlinks are shown
//! as links with their own lstat data and never descended. A recursive listing skips `.git` and,
//! unless `includeIgnored`, whatever `.gitignore` files ignore. The listing itself is
//! [`crate::listing`]; this file is the tool around it.

use serde::Deserialize;
use serde_json::{json, Value};

use super::{object_schema, parse_args, ToolSpec};
use crate::call::{Authorization, BoxFuture, Call, Outcome, Success, ToolNames};
use crate::listing::{direct_entries, walk_tree};
use crate::options::WorkspaceOptions;
use crate::paths::sandbox::FinalLink;
use crate::paths::shown::Shown;
use crate::permissions::Operation;

pub static SPEC: ToolSpec = ToolSpec {
    name: "list_directory",
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
    let glob = names.hint("glob", |glob| {
        format!("; to find files in a large tree use {glob} with a pattern")
    });
    format!(
        "List what is in a directory: `name/` for a directory, `name -> target` for a symbolic link, \
`name (size in bytes, date)` for a file. Only its direct entries, unless recursive is true: then the whole tree, \
without .git and what .gitignore ignores (unless includeIgnored). Shows at most {} entries{glob}.",
        options.limits.list_max_entries
    )
}

fn schema() -> Value {
    object_schema(
        json!({
            "path": { "type": "string", "minLength": 1, "description": "The directory to list, absolute or relative to the current working directory. Default: the current working directory." },
            "recursive": { "type": "boolean", "description": "List the whole tree below the directory instead of only its direct entries. Default false." },
            "includeIgnored": { "type": "boolean", "description": "In a recursive listing, also list what .gitignore ignores (such as node_modules). Default false." },
        }),
        &[],
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Args {
    path: Option<String>,
    #[serde(default)]
    recursive: bool,
    #[serde(default)]
    include_ignored: bool,
}

fn format_call(args: &Value) -> String {
    let path = args
        .get("path")
        .and_then(Value::as_str)
        .unwrap_or(".")
        .to_owned();
    if args.get("recursive").and_then(Value::as_bool) == Some(true) {
        format!("{path} (recursive)")
    } else {
        path
    }
}

fn run(call: &Call, args: Value) -> BoxFuture<'_, Outcome> {
    Box::pin(async move {
        let args: Args = parse_args("list_directory", args)?;
        let raw = args.path.as_deref().unwrap_or(".");
        let target = call.resolve(raw, "path", FinalLink::Follow)?;
        let checked = target.clone();
        let hint = match call.names.offered("read_file") {
            Some(read) => format!("use {read} to read a file"),
            None => "give a directory".to_owned(),
        };
        // Opened once, before asking: what is listed is the directory that was checked.
        let dir = call
            .reading(move || super::files::open_directory(&checked, true, "list", &hint))
            .await?;
        let question = Authorization::of(
            Operation::Read,
            &target,
            "List directory?",
            "The user denied this read.",
        );
        call.authorize(if args.recursive {
            Authorization {
                detail: format!("{} (recursive)", question.detail),
                recursive: Some(true),
                ..question
            }
        } else {
            question
        })
        .await?;
        let max = call.limits().list_max_entries as usize;
        let sandbox = call.ws.sandbox().clone();
        let listed = target.clone();
        let cancel = call.cancel.clone();
        let listing = call
            .reading(move || {
                if args.recursive {
                    walk_tree(dir, &listed, &sandbox, args.include_ignored, max, &cancel)
                } else {
                    direct_entries(dir, &listed, &sandbox, max)
                }
            })
            .await?;
        call.check_abort()?;
        let glob = call.names.offered("glob");
        let max_bytes = call.limits().read_max_bytes as usize;
        let (text, shown) = listing.text(max, max_bytes, args.recursive, glob);
        let success = Success::text(text)
            .with_data("path", target.path.shown().into_owned())
            .with_data("entries", shown)
            .with_data(
                "truncated",
                listing.truncated || shown < listing.lines.len(),
            );
        Ok(success)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_call_is_the_path_and_recursive() {
        assert_eq!(format_call(&json!({})), ".");
        assert_eq!(
            format_call(&json!({ "path": "src", "recursive": true })),
            "src (recursive)"
        );
    }
}
