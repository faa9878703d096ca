//! `apply_patch`: one patch (Codex's format or a unified diff) over many files, as one change
//! (../../docs/tools.md#apply_patch). Every file is planned before anything is asked — paths resolved through the
//! sandbox, chunks matched, new contents and the combined diff built — then one permission
//! decision and at most one prompt cover the whole patch, and the change is all or nothing, also
//! under a kill (one plan for the executor, `call::execute`). Deleted and replaced files go to
//! the trash first; an updated file keeps its old bytes as the delta that takes it back, in its
//! history record, as `edit_file` does. The parser and matcher are `crate::text::patch`. Here: the paths
//! resolved (`resolve`); planning, file by file, within `patchMaxTotalBytes` (`plan`: its data
//! `planned`, what it needs `context`, its bounds `budget`, reading `read`, two names of one
//! file `hard_links`, a retry `already_applied`), the combined diff within `patchMaxBytes`
//! (`combined_diff`); the question (`prompt`), the change's steps and history record
//! (`commit`), the result (`report`).

use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{json, Value};

use super::files;
use super::{object_schema, parse_args, ToolSpec};
use crate::call::{BoxFuture, Call, Failure, Outcome, Success, ToolNames};
use crate::error::{ErrorCode, ToolError};
use crate::history::Heading;
use crate::options::WorkspaceOptions;
use crate::paths::{AsDir, Target};
use crate::progress::Unit;
use crate::text::patch::{self, FilePatch};

mod already_applied;
mod budget;
mod combined_diff;
mod commit;
mod context;
mod hard_links;
mod plan;
mod planned;
mod prompt;
mod read;
mod report;
mod resolve;

use context::{deleted_by_a_change, Context, Names};
use planned::Planning;
use prompt::authorization;
use report::{changed_since_seen, success};
use resolve::resolve_all;

pub static SPEC: ToolSpec = ToolSpec {
    name: "apply_patch",
    description,

    schema,
    mutates: true,
    destructive: true,
    idempotent: false,
    asks: true,
    path_argument: None,
    summarizes_itself: true,
    format_call,
    run,
};

/// What the model reads: when to use it, both formats, context and anchors, what failure means.
fn description(_names: &ToolNames, _options: &WorkspaceOptions) -> String {
    format!(
        "{} Deleted and replaced files go to the recoverable trash.",
        "Apply one patch that adds, updates, deletes and moves any number of text files, all or nothing. \
Use it for changes across several files, or many changes in one file: put every change of a step in one call. \
Write either Codex's format:\n\
*** Begin Patch\n*** Update File: src/app.ts\n@@ function main() {\n   const a = 1\n-  const b = 2\n+  const b = 3\n   return a + b\n\
*** Add File: src/new.ts\n+export const x = 1\n*** Delete File: src/old.ts\n*** Update File: src/a.ts\n*** Move to: src/b.ts\n*** End Patch\n\
or a unified diff as `git diff` prints it (--- a/path, +++ b/path, @@ hunks; /dev/null for added and deleted files). \
Give 3 lines of unchanged context around each change (` ` lines), copied exactly from the file; an `@@ <line>` naming the \
enclosing function or class tells repeated code apart. Paths are relative to the current working directory. If any file \
fails (lines not found, found twice, file missing), nothing is changed and the error says which file and chunk and shows \
the closest lines; fix the patch and send it whole again."
    )
}

fn schema() -> Value {
    object_schema(
        json!({
            "input": { "type": "string", "minLength": 1, "description": "The whole patch: Codex's format (*** Begin Patch … *** End Patch) or a unified diff." },
        }),
        &["input"],
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    input: String,
}

/// `a.ts` for one file, `a.ts, b.ts` for two, `a.ts, b.ts (+N more)` beyond (../../docs/tools.md#apply_patch).
fn format_call(args: &Value) -> String {
    let input = args.get("input").and_then(Value::as_str).unwrap_or("");
    match patch::parse(input) {
        Ok(parsed) => summary(&parsed.files),
        Err(_) => String::new(),
    }
}

/// [`format_call`] of a parsed patch: what its change is recorded with (the dispatcher leaves it
/// to [`apply`], which has parsed the patch already: `summarizes_itself`).
fn summary(files: &[FilePatch]) -> String {
    let paths: Vec<String> = files
        .iter()
        .map(|f| crate::paths::shown::echo(f.path()).into_owned())
        .collect();
    match paths.len() {
        0..=2 => paths.join(", "),
        n => format!("{}, {} (+{} more)", paths[0], paths[1], n - 2),
    }
}

fn run(call: &Call, args: Value) -> BoxFuture<'_, Outcome> {
    Box::pin(async move {
        apply(call, args).await.map_err(|failure| match failure {
            Failure::Error(mut e) => {
                e.message.push_str("\nNo files were modified.");
                Failure::Error(e)
            }
            Failure::Denied(mut denial) => {
                denial.message.push_str("\nNo files were modified.");
                Failure::Denied(denial)
            }
        })
    })
}

async fn apply(call: &Call, args: Value) -> Outcome {
    let args: Args = parse_args("apply_patch", args)?;
    let limits = call.limits().clone();
    if args.input.len() as u64 > limits.patch_max_bytes {
        return Err(ToolError::new(
            ErrorCode::TooLarge,
            format!(
                "the patch is {} bytes, over the limit of {} bytes (patchMaxBytes); split it into several patches",
                args.input.len(),
                limits.patch_max_bytes
            ),
        )
        .into());
    }
    let parsed = patch::parse(&args.input).map_err(ToolError::from)?;
    drop(args);
    let resolved = resolve_all(call, &parsed.files)?;
    let paths: Vec<&Path> = resolved
        .iter()
        .flat_map(|r| {
            [
                Some(&r.target.path),
                r.destination.as_ref().map(|d| &d.path),
            ]
        })
        .flatten()
        .map(|p| p.as_path())
        .collect();
    let lock = call.lock_for_change(&paths).await?;
    let cx = Arc::new(Context {
        limits: limits.clone(),
        root: call.ws.sandbox().root().to_owned(),
        keep_overwrites: call.ws.options().trash.keep_overwrites,
        names: Names {
            tool: call.tool_name.clone(),
            write_file: call.names.offered("write_file").map(str::to_owned),
            sandbox: call.ws.sandbox().clone(),
            permissions: call.permissions,
        },
        cancel: call.cancel.clone(),
        deleted_by_a_change: {
            let ws = call.ws.clone();
            Box::new(move |path: &Path| deleted_by_a_change(&ws, path))
        },
    });
    let files = Arc::new(parsed.files);
    let planning = {
        let (files, resolved, cx) = (files.clone(), resolved.clone(), cx.clone());
        call.reading(move || plan::plan_all(&files, &resolved, &cx))
            .await?
    };
    let (plans, diff) = match planning {
        Planning::AlreadyApplied => {
            return Ok(Success::text("Patch already applied; nothing changed."))
        }
        Planning::Plans(plans, diff) => (plans, diff.finish()),
    };
    let stale_note = changed_since_seen(call, &plans);
    call.authorize(authorization(&plans, diff.clone(), cx.keep_overwrites))
        .await?;
    let written: Vec<Target> = plans
        .iter()
        .filter(|p| !p.unchanged)
        .filter_map(|p| p.write.as_ref().map(|write| write.target.clone()))
        .collect();
    let _lock = lock.exclusive().await;
    let ws = call.ws.clone();
    let heading = Heading {
        summary: summary(&files),
        ..call.heading.clone()
    };
    let changing = plans.iter().filter(|p| !p.unchanged).count() as u64;
    let meter = call.progress.meter(Unit::Files, Some(changing));
    let (committed, recorded) = call
        .blocking(move || commit::commit(&ws, plans, &files, &cx, &heading, &meter))
        .await?;
    // What the patch left is what the model has seen of those files now (../../docs/tools.md#stale-views).
    let left = call
        .reading(move || {
            Ok(written
                .into_iter()
                .filter_map(|target| {
                    let (parent, name) = files::open_parent(&target, "check").ok()?;
                    let seen = files::file_stat_at(parent.as_dir(), &name)?;
                    Some((target.path, seen))
                })
                .collect::<Vec<_>>())
        })
        .await
        .unwrap_or_default();
    for (path, seen) in &left {
        call.saw(path, seen);
    }
    let mut success = success(call, committed, diff, stale_note, &limits);
    success.recorded = recorded;
    Ok(success)
}
