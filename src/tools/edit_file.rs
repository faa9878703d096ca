//! `edit_file`: a batch of exact-string edits applied in order, atomically, with one combined
//! diff, one permission check and one confirmation. The edit engine (matching, `replaceAll`,
//! CRLF, closest-match hints) is `crate::text::edit`; this file is the tool around it.

use std::os::fd::AsFd;

use serde::Deserialize;
use serde_json::{json, Value};

use super::files::{self, file_not_found, Planned};
use super::{object_schema, parse_args, ToolSpec};
use crate::call::{Authorization, BoxFuture, Call, Outcome, Success, ToolNames};
use crate::change::{Action, FileChange};
use crate::error::{ErrorCode, ToolError};
use crate::hashing::sha256_hex;
use crate::options::WorkspaceOptions;
use crate::paths::fsops::Replacing;
use crate::paths::sandbox::FinalLink;
use crate::paths::shown::Shown;
use crate::permissions::Operation;
use crate::text::decode::{decode_for_edit, TextFile};
use crate::text::diff::diff_with_delta;
use crate::text::edit::{apply_edits, Edit};

pub static SPEC: ToolSpec = ToolSpec {
    name: "edit_file",
    description,
    schema,
    mutates: true,
    // It replaces content (an MCP client must not auto-approve it as additive).
    destructive: true,
    idempotent: false,
    asks: true,
    path_argument: Some("path"),
    format_call,
    run,
};

fn description(names: &ToolNames, _: &WorkspaceOptions) -> String {
    let read = names.hint("read_file", |read| {
        format!(" (copy it from {read} without the `  12 | ` prefix)")
    });
    let write = names.hint("write_file", |write| {
        format!(" To create a file, or rewrite all of it, use {write}.")
    });
    format!(
        "Change part of a text file by exact string replacement. Put every change to one file in one call, as \
`edits`: they apply in order, each to the result of the previous one, and all succeed or the file is left untouched. \
Each oldString must match the file exactly{read} and occur once, unless replaceAll is true (every occurrence, e.g. a \
rename); add surrounding lines to make it unique. When it is not found, the error shows the closest lines of the file. \
LF line endings in oldString and newString also work in a CRLF file; line endings, a BOM and a missing final newline \
are kept.{write}"
    )
}

fn schema() -> Value {
    object_schema(
        json!({
            "path": { "type": "string", "minLength": 1, "description": "The file to edit, absolute or relative to the current working directory." },
            "edits": {
                "type": "array",
                "minItems": 1,
                "description": "The replacements, applied in order; each sees the result of the previous ones.",
                "items": {
                    "type": "object",
                    "properties": {
                        "oldString": { "type": "string", "minLength": 1, "description": "Exact text to find, including whitespace and indentation." },
                        "newString": { "type": "string", "description": "Text to put in its place (literal; `$&` is not special)." },
                        "replaceAll": { "type": "boolean", "description": "Replace every occurrence instead of requiring exactly one. Default false." },
                    },
                    "required": ["oldString", "newString"],
                    "additionalProperties": false,
                },
            },
        }),
        &["path", "edits"],
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: String,
    edits: Vec<EditArg>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct EditArg {
    old_string: String,
    new_string: String,
    #[serde(default)]
    replace_all: bool,
}

fn format_call(args: &Value) -> String {
    let path = super::format_path(args);
    match args.get("edits").and_then(Value::as_array).map(Vec::len) {
        Some(n) if n > 1 => format!("{path} ({n} edits)"),
        _ => path,
    }
}

struct PlannedEdit {
    old: Vec<u8>,
    new: Vec<u8>,
    stat: rustix::fs::Stat,
    diff: String,
    /// The stored delta that takes the edit back.
    reverse: Vec<u8>,
    replacements: usize,
}

fn run(call: &Call, args: Value) -> BoxFuture<'_, Outcome> {
    Box::pin(async move {
        let args: Args = parse_args("edit_file", args)?;
        if args.edits.is_empty() {
            return Err(ToolError::invalid(
                "edit_file: invalid arguments: edits: must contain at least one edit",
            )
            .into());
        }
        let edits: Vec<Edit> = args
            .edits
            .into_iter()
            .map(|e| Edit {
                old_string: e.old_string,
                new_string: e.new_string,
                replace_all: e.replace_all,
            })
            .collect();
        let edit_count = edits.len();
        let target = call.resolve(&args.path, "path", FinalLink::Follow)?;
        crate::paths::resolve::file_path_not_directory_syntax(&args.path, "path", &target.path)?;
        let lock = call.lock_for_change(&[&target.path]).await?;
        let limits = call.limits().clone();
        let label = files::diff_label(&target.path, call.ws.sandbox().root());
        let planned_target = target.clone();
        let tool = call.tool_name.clone();
        let write_file = call.names.offered("write_file").map(str::to_owned);
        let plan = call
            .reading(move || {
                let target = planned_target;
                let mut opened = files::open_existing(&target, "read")?.ok_or_else(|| {
                    let mut e = file_not_found(&target.path);
                    match &write_file {
                        Some(write) => e.message.push_str(&format!("; check the path, or use {write} to create a new file")),
                        None => e.message.push_str("; check the path"),
                    }
                    e
                })?;
                files::ensure_writable(&opened, &target.path)?;
                let old = files::read_at_most(&mut opened.file, limits.edit_max_file_bytes, "read", &target.path)?
                    .ok_or_else(|| {
                        ToolError::new(
                            ErrorCode::TooLarge,
                            format!(
                                "{} is {} bytes, over the edit limit of {} bytes (editMaxFileBytes), so {tool} cannot change it; leave it as it is, or ask the user to change it or to raise the limit",
                                target.path.shown(),
                                opened.stat.st_size,
                                limits.edit_max_file_bytes
                            ),
                        )
                    })?;
                let decoded = decode_for_edit(&old).map_err(|e| e.into_tool_error(&target.path, &tool, write_file.as_deref()))?;
                let outcome = apply_edits(&decoded.text, &edits).map_err(ToolError::from)?;
                // The diff's line matching also gives the delta that takes the edit back (undo).
                let bom = if decoded.bom { 3 } else { 0 };
                let (diff, reverse) = diff_with_delta(
                    &decoded.text,
                    &outcome.text,
                    &label,
                    &label,
                    std::time::Duration::from_millis(limits.diff_timeout_ms),
                    bom,
                );
                let new = TextFile { bom: decoded.bom, text: outcome.text }.to_bytes();
                Ok(PlannedEdit { old, new, stat: opened.stat, diff: diff.text, reverse: reverse.encode(), replacements: outcome.replacements.iter().sum() })
            })
            .await?;
        call.authorize(Authorization {
            diff: Some(plan.diff.clone()),
            ..Authorization::of(
                Operation::Write,
                &target,
                "Edit file?",
                "The user denied this edit.",
            )
        })
        .await?;
        let _lock = lock.exclusive().await;
        let sha_before = sha256_hex(&plan.old);
        let sha_after = sha256_hex(&plan.new);
        let (committed_target, old, new, stat) = (target.clone(), plan.old, plan.new, plan.stat);
        let ws = call.ws.clone();
        call.blocking(move || {
            let target = committed_target;
            let (parent, name) = files::open_parent(&target, "edit")?;
            let planned = Planned::Present {
                stat,
                bytes: Some(old),
            };
            planned.verify(&parent, &name, &target.path)?;
            let same_content = |file: &mut std::fs::File| planned.same_content(file);
            let replacing = Replacing::File {
                stat: &stat,
                same_content: &same_content,
            };
            files::write_atomic(ws.journal(), &target, parent.as_fd(), &new, replacing)
        })
        .await?;
        let summary = format!(
            "Edited {} ({}, {})",
            target.path.shown(),
            super::quantity(edit_count as u64, "edit", "edits"),
            super::quantity(plan.replacements as u64, "replacement", "replacements")
        );
        let mut success =
            Success::text(files::with_diff(summary, &plan.diff, limits.read_max_bytes))
                .with_data("path", target.path.shown().into_owned())
                .with_data("edits", edit_count)
                .with_data("replacements", plan.replacements);
        success.diff = Some(plan.diff);
        let mut change = FileChange {
            sha256_before: Some(sha_before),
            sha256_after: Some(sha_after),
            ..FileChange::new(target.path, Action::Modified)
        };
        change.undo.reverse = Some(std::sync::Arc::new(plan.reverse));
        Ok(success.with_change(change))
    })
}

#[cfg(test)]
mod tests {
    use crate::error::ErrorCode;
    use crate::paths::fsops::race_point::{self, RacePoint};
    use crate::tools::testing::{save_in_place, TestWorkspace};
    use serde_json::json;

    /// An editor saves in place between the last check and the rename: its bytes stay, the
    /// edit is a conflict.
    #[tokio::test]
    async fn an_in_place_save_after_the_check_is_kept() {
        let ws = TestWorkspace::new();
        let path = ws.root.join("ef-saved.txt");
        std::fs::write(&path, "fn old() {}\n").unwrap();
        let saved = path.clone();
        race_point::at(RacePoint::BeforeReplace, "ef-saved.txt", move || {
            save_in_place(&saved, "fn old() {} // saved by the editor\n")
        });
        let edit = json!({ "path": "ef-saved.txt", "edits": [{ "oldString": "old", "newString": "new" }] });
        let result = ws.call("edit_file", edit).await;
        assert_eq!(result.code, Some(ErrorCode::Conflict), "{}", result.output);
        assert_eq!(
            ws.read("ef-saved.txt"),
            "fn old() {} // saved by the editor\n"
        );
        assert_eq!(ws.names(), ["ef-saved.txt"]);
    }

    #[tokio::test]
    async fn a_read_only_file_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let ws = TestWorkspace::new();
        let path = ws.root.join("ef-read-only.txt");
        std::fs::write(&path, "fn old() {}\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
        let edit = json!({ "path": "ef-read-only.txt", "edits": [{ "oldString": "old", "newString": "new" }] });
        let result = ws.call("edit_file", edit).await;
        assert_eq!(
            result.code,
            Some(ErrorCode::OsPermission),
            "{}",
            result.output
        );
        assert!(
            result.output.contains("is read-only (mode 0444)"),
            "{}",
            result.output
        );
        assert_eq!(ws.read("ef-read-only.txt"), "fn old() {}\n");
    }
}
