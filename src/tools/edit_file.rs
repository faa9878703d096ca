//! `edit_file`: a batch of exact-string edits applied in order, atomically, with one combined
//! diff, one permission check and one confirmation. The edit engine (matching, `replaceAll`,
//! CRLF, closest-match hints) is `crate::text::edit`; this file is the tool around it.

use crate::paths::AsDir;

use serde::Deserialize;
use serde_json::{json, Value};

use super::files::{self, file_not_found};
use super::{object_schema, parse_args, put, ToolSpec};
use crate::call::execute::{execute, Done};
use crate::call::plan::{Act, ChangePlan, Keep, Place, Step};
use crate::call::{Authorization, BoxFuture, Call, Outcome, Rewrite, Success, ToolNames};
use crate::change::{Action, FileChange};
use crate::error::{ErrorCode, ToolError};
use crate::hashing::sha256_hex;
use crate::options::WorkspaceOptions;
use crate::paths::sandbox::FinalLink;
use crate::paths::shown::Shown;
use crate::permissions::Operation;
use crate::text::decode::{decode_for_edit, TextFile};
use crate::text::diff::diff_with_delta;
use crate::text::edit::{apply_edits, Edit, EditError};
use crate::views::View;

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
    summarizes_itself: false,
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
    stat: crate::paths::Stat,
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
        let read_file = call.names.offered("read_file").map(str::to_owned);
        let ws = call.ws.clone();
        let raw = args.path.clone();
        let may_list = call.permissions.grants(Operation::Read, target.inside_root);
        let plan = call
            .reading(move || {
                let target = planned_target;
                let mut opened = files::open_existing(&target, "read")?.ok_or_else(|| {
                    let mut e = file_not_found(&target.path);
                    e.message.push_str(&super::nearby::not_found_hint(&raw, &target, ws.sandbox(), may_list));
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
                                opened.stat.size,
                                limits.edit_max_file_bytes
                            ),
                        )
                    })?;
                let decoded = decode_for_edit(&old).map_err(|e| e.into_tool_error(&target.path, &tool, write_file.as_deref()))?;
                let outcome = apply_edits(&decoded.text, &edits).map_err(|e| {
                    let hint = match &e {
                        EditError::NotFound { edit, closest } => {
                            not_found_hint(&edits[edit - 1].old_string, closest.is_none(), read_file.as_deref())
                        }
                        _ => String::new(),
                    };
                    let mut e = ToolError::from(e);
                    e.message.push_str(&hint);
                    // Not found in a file that changed since the model read it: its view is old.
                    if e.code == ErrorCode::NoMatch && ws.seen().view(&target.path, &opened.stat) == View::Changed {
                        e.message.push_str("\nNote: it changed since you read it (by the user or another program); read it again and copy the lines from what it holds now.");
                    }
                    e
                })?;
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
        let stale_note = call.check_view(&target.path, &plan.stat, Rewrite::Part)?;
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
        let reverse = plan.reverse;
        let (ws, heading, cancel) = (call.ws.clone(), call.heading.clone(), call.cancel.clone());
        let (change, written, recorded) = call
            .blocking(move || {
                let target = committed_target;
                let (parent, name) = files::open_parent(&target, "edit")?;
                let read = Some((&old[..], &sha_before[..]));
                // Checked against the bytes read, not hashed again, when it is replaced.
                let expect = put::expect_as_planned(&parent, &name, &target, &stat, read)?
                    .with_bytes_read(old);
                let at = Place::of(&target).ok_or_else(|| files::is_a_directory(&target.path))?;
                let plan = ChangePlan {
                    consume: Vec::new(),
                    // What the edit replaces is kept as the delta that takes it back.
                    steps: vec![Step {
                        at,
                        expect,
                        keep: Keep::Nothing,
                        act: Act::Put {
                            data: new,
                            like: None,
                            sha256: Some(sha_after.clone()),
                        },
                    }],
                };
                let files = |_: &Done| {
                    let mut change = FileChange {
                        sha256_before: Some(sha_before.clone()),
                        sha256_after: Some(sha_after),
                        ..FileChange::new(target.path.clone(), Action::Modified)
                    };
                    change.undo.reverse = Some(std::sync::Arc::new(reverse));
                    vec![change]
                };
                let mut executed = execute(&ws, plan, &heading, &cancel, files)
                    .map_err(|e| put::failed(&target, e.failure, "edit"))?;
                let change = executed
                    .files
                    .pop()
                    .ok_or_else(|| files::changed_since_planned(&target.path))?;
                Ok((
                    change,
                    files::file_stat_at(parent.as_dir(), &name),
                    executed.recorded,
                ))
            })
            .await?;
        if let Some(seen) = &written {
            call.saw(&target.path, seen);
        }
        let mut summary = format!(
            "Edited {} ({}, {})",
            target.path.shown(),
            super::quantity(edit_count as u64, "edit", "edits"),
            super::quantity(plan.replacements as u64, "replacement", "replacements")
        );
        if let Some(note) = stale_note {
            summary.push('\n');
            summary.push_str(&note);
        }
        let mut success =
            Success::text(files::with_diff(summary, &plan.diff, limits.read_max_bytes))
                .with_data("path", target.path.shown().into_owned())
                .with_data("edits", edit_count)
                .with_data("replacements", plan.replacements);
        success.diff = Some(plan.diff);
        success.recorded = recorded;
        Ok(success.with_change(change))
    })
}

/// What to do about an `old_string` that was not found: copy the lines again when nothing in
/// the file is close to it (`nothing_close`); drop `read_file`'s line-number prefix when it
/// starts with one. `read` is the host's name of read_file, if offered.
fn not_found_hint(old_string: &str, nothing_close: bool, read: Option<&str>) -> String {
    let mut hint = String::new();
    if let Some(prefix) = line_number_prefix(old_string) {
        let whose = read.map_or_else(|| "a listing's".to_owned(), |read| format!("{read}'s"));
        hint.push_str(&format!(
            "\noldString starts with {whose} line-number prefix ({prefix:?}), which is not part of the file: drop it from every line."
        ));
    } else if nothing_close {
        let read = read.map(|read| format!(" ({read})")).unwrap_or_default();
        hint.push_str(&format!(
            "\nNothing in the file is close to it: read the lines again{read} and copy them exactly, whitespace and indentation included."
        ));
    }
    hint
}

/// The `  12 | ` that starts `text`, as read_file numbers lines, if it starts with one.
fn line_number_prefix(text: &str) -> Option<&str> {
    let digits_at = text.len() - text.trim_start_matches(' ').len();
    let digits = text[digits_at..].len()
        - text[digits_at..]
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .len();
    let end = digits_at + digits;
    (digits > 0 && text[end..].starts_with(" | ")).then(|| &text[..end + 3])
}

#[cfg(test)]
mod tests {
    use super::line_number_prefix;
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

    /// Not found: the next step. Copy again when nothing is close; drop read_file's prefix
    /// when the oldString starts with it (whether or not something is close).
    #[tokio::test]
    async fn not_found_says_what_to_do_next() {
        let ws = TestWorkspace::new();
        std::fs::write(ws.root.join("a.txt"), "hello\nworld\n").unwrap();
        let edit = |old: &str| json!({ "path": "a.txt", "edits": [{ "oldString": old, "newString": "x" }] });
        let far = ws.call("edit_file", edit("zzzz qqqq")).await;
        assert_eq!(far.code, Some(ErrorCode::NoMatch), "{}", far.output);
        assert_eq!(
            far.output,
            "edit 1: oldString not found in file\nNothing in the file is close to it: read the lines again (read_file) and copy them exactly, whitespace and indentation included."
        );
        let prefixed = ws
            .call("edit_file", edit("   1 | hello\n   2 | world"))
            .await;
        assert!(
            prefixed.output.ends_with("\noldString starts with read_file's line-number prefix (\"   1 | \"), which is not part of the file: drop it from every line."),
            "{}",
            prefixed.output
        );
        let found_twice = ws.call("edit_file", edit("o")).await;
        assert!(
            found_twice
                .output
                .ends_with("disambiguate\nIt occurs at lines 1 and 2."),
            "{}",
            found_twice.output
        );
        assert_eq!(line_number_prefix("  12 | x"), Some("  12 | "));
        assert_eq!(line_number_prefix("12 | x"), Some("12 | "));
        assert_eq!(line_number_prefix("   | x"), None);
        assert_eq!(line_number_prefix("x = 1 | 2"), None);
    }

    /// An edit is one change made with its record: the history lists the file with the delta
    /// that takes it back, and nothing of the change (temp names, journal records) is left.
    #[tokio::test]
    async fn the_edit_and_its_record_are_made_as_one_change() {
        let ws = TestWorkspace::new();
        std::fs::write(ws.root.join("ef-one.txt"), "fn old() {}\n").unwrap();
        let edit =
            json!({ "path": "ef-one.txt", "edits": [{ "oldString": "old", "newString": "new" }] });
        let result = ws.call("edit_file", edit).await;
        assert_eq!(result.code, None, "{}", result.output);
        assert_eq!(ws.read("ef-one.txt"), "fn new() {}\n");
        assert_eq!(ws.names(), ["ef-one.txt"]);
        let history = ws.settled_history();
        let [edited] = &history[..] else {
            panic!("one record: {}", history.len())
        };
        let file = &edited.record.files[0];
        assert_eq!(file.path, ws.root.join("ef-one.txt"));
        assert!(file.delta.is_some(), "the delta that takes it back");
        let sha = |text: &[u8]| Some(crate::hashing::sha256_hex(text));
        assert_eq!(file.sha256_before, sha(b"fn old() {}\n"));
        assert_eq!(file.sha256_after, sha(b"fn new() {}\n"));
    }

    #[tokio::test]
    async fn a_read_only_file_is_refused() {
        use crate::paths::testing::Modes;
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
