//! `apply_patch`: one patch (Codex's format or a unified diff) over many files, as one change
//! (../../docs/tools.md#apply_patch). Every file is planned before anything is asked — paths resolved through the
//! sandbox, chunks matched, new contents and the combined diff built — then one permission
//! decision and at most one prompt cover the whole patch, and the change is all or nothing, also
//! under a kill (one plan for the executor, `call::execute`). Deleted, replaced and (with `keepOverwrites`) updated files
//! go to the trash first. The parser and matcher are `crate::text::patch`; planning is
//! `plan` (file by file, within `patchMaxTotalBytes`, the combined diff within `patchMaxBytes`:
//! `combined_diff`), the change's steps and history record `commit`.

use std::os::fd::AsFd;
use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{json, Value};

use super::{blast_radius, files};
use super::{object_schema, parse_args, ToolSpec};
use crate::call::{
    changed_note, Authorization, BoxFuture, Call, Failure, Outcome, Success, ToolNames,
};
use crate::change::Action;
use crate::confirm::{FilesSummary, Summary};
use crate::error::{ErrorCode, ToolError};
use crate::options::{Limits, WorkspaceOptions};
use crate::paths::resolve::file_path_not_directory_syntax;
use crate::paths::sandbox::FinalLink;
use crate::paths::shown::Shown;
use crate::paths::Target;
use crate::permissions::Operation;
use crate::progress::Unit;
use crate::text::bounded::bounded;
use crate::text::patch::{self, FileChange as PatchChange, FilePatch};
use crate::views::View;
use crate::workspace::Workspace;

mod combined_diff;
mod commit;
mod plan;

use commit::Committed;
use plan::{Context, Planned, Planning};

pub static SPEC: ToolSpec = ToolSpec {
    name: "apply_patch",
    description,

    schema,
    mutates: true,
    destructive: true,
    idempotent: false,
    asks: true,
    path_argument: None,
    format_call,
    run,
};

/// What the model reads: when to use it, both formats, context and anchors, what failure means.
fn description(_names: &ToolNames, options: &WorkspaceOptions) -> String {
    let trash = if options.trash.keep_overwrites {
        "Deleted, replaced and updated files go to the recoverable trash."
    } else {
        "Deleted and replaced files go to the recoverable trash."
    };
    format!(
        "{} {trash}",
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
    let Ok(parsed) = patch::parse(input) else {
        return String::new();
    };
    let paths: Vec<String> = parsed
        .files
        .iter()
        .map(|f| crate::paths::shown::echo(f.path()).into_owned())
        .collect();
    match paths.len() {
        0..=2 => paths.join(", "),
        n => format!("{}, {} (+{} more)", paths[0], paths[1], n - 2),
    }
}

/// A file's paths, resolved: the one the patch names first (the source of a move), and a move's
/// destination.
#[derive(Clone)]
struct Resolved {
    target: Target,
    destination: Option<Target>,
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
    let (ws, heading) = (call.ws.clone(), call.heading.clone());
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
                    let seen = files::file_stat_at(parent.as_fd(), &name)?;
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

/// The line saying which of the files the patch changes had changed since the model last saw
/// them (../../docs/tools.md#stale-views: not refused, but said).
fn changed_since_seen(call: &Call, plans: &[Planned]) -> Option<String> {
    let mut changed: Vec<&Path> = Vec::new();
    for plan in plans.iter().filter(|p| !p.unchanged) {
        let replaced = plan
            .write
            .as_ref()
            .and_then(|write| write.replaced.as_ref().map(|old| (&write.target, old)));
        let removed = plan.remove.as_ref().map(|(target, old)| (target, old));
        for (target, old) in replaced.into_iter().chain(removed) {
            if call.view(&target.path, &old.stat) == View::Changed
                && !changed.contains(&&*target.path)
            {
                changed.push(&target.path);
            }
        }
    }
    (!changed.is_empty()).then(|| changed_note(&changed))
}

fn resolve_all(call: &Call, files: &[FilePatch]) -> Result<Vec<Resolved>, ToolError> {
    let mut resolved = Vec::with_capacity(files.len());
    let mut seen: Vec<(std::path::PathBuf, usize)> = Vec::new();
    for (index, file) in files.iter().enumerate() {
        let field = format!("input (file {})", index + 1);
        let resolve = |path: &str, final_link| {
            let target = call.resolve(path, &field, final_link)?;
            // `*** Add File: src/` names a directory: never a file called `src`.
            file_path_not_directory_syntax(path, &field, &target.path)?;
            Ok::<_, ToolError>(target)
        };
        let (target, destination) = match &file.change {
            // A deleted entry is the entry itself, as delete_file takes it.
            PatchChange::Delete { path } => (resolve(path, FinalLink::Keep)?, None),
            PatchChange::Add { path, .. } => (resolve(path, FinalLink::Follow)?, None),
            PatchChange::Update { path, move_to, .. } => {
                let target = resolve(path, FinalLink::Follow)?;
                let destination = move_to
                    .as_deref()
                    .map(|to| resolve(to, FinalLink::Follow))
                    .transpose()?;
                if destination.is_some() {
                    refuse_moving_a_link(call, path, &field, &target)?;
                }
                (target, destination)
            }
        };
        for path in [Some(&target.path), destination.as_ref().map(|d| &d.path)]
            .into_iter()
            .flatten()
        {
            if let Some((_, first)) = seen.iter().find(|(p, _)| p == path) {
                return Err(ToolError::invalid(format!(
                    "apply_patch: invalid arguments: {} is named by file {} and file {} of the patch (line {}); name each file once, with all its changes in one section",
                    path.shown(),
                    first + 1,
                    index + 1,
                    file.line
                )));
            }
            seen.push((path.clone(), index));
        }
        resolved.push(Resolved {
            target,
            destination,
        });
    }
    Ok(resolved)
}

/// A move of a path that is a symlink would move the file it points to and leave the link
/// dangling: refused, saying what to do instead.
fn refuse_moving_a_link(
    call: &Call,
    path: &str,
    field: &str,
    followed: &Target,
) -> Result<(), ToolError> {
    let link = call.resolve(path, field, FinalLink::Keep)?;
    if link.path == followed.path {
        return Ok(());
    }
    Err(ToolError::invalid(format!(
        "{field}: {} is a symlink to {}; a `*** Move to:` would move the file it points to and leave the link dangling. To change that file, update it without `*** Move to:`; to move the link itself, use {}; to move the file it points to, name {} in the patch",
        link.path.shown(),
        followed.path.shown(),
        call.names.offered("move_file").unwrap_or("move_file"),
        followed.path.shown(),
    )))
}

/// The host's names of this tool and of write_file (for messages that point at it), and what
/// a "not found" may show of a directory (`nearby`).
struct Names {
    tool: String,
    write_file: Option<String>,
    sandbox: crate::paths::Sandbox,
    permissions: crate::permissions::Permissions,
}

impl Names {
    /// What a "not found" of `raw` (resolved as `target`) adds (see `nearby`).
    fn not_found_hint(&self, raw: &str, target: &Target) -> String {
        let may_list = self.permissions.grants(Operation::Read, target.inside_root);
        super::nearby::not_found_hint(raw, target, &self.sandbox, may_list)
    }
}

/// Whether the latest change in the history that touched `path` removed it (deleted it, or moved
/// it away): a patch deleting it again is a retry of one already applied, not a wrong path.
fn deleted_by_a_change(ws: &Workspace, path: &Path) -> bool {
    let Ok(entries) = ws.history().entries(&|_| true) else {
        return false;
    };
    for entry in entries.iter().rev() {
        for file in &entry.record.files {
            if file.path == path {
                return file.action == Action::Deleted;
            }
            if file.from.as_deref() == Some(path) {
                return true;
            }
        }
    }
    false
}

/// One prompt for the whole patch (../../docs/tools.md#apply_patch): granted when every file's single-file permission
/// is; the detail has a line per file with its lines added and removed, then the totals.
fn authorization(plans: &[Planned], diff: String, keep_overwrites: bool) -> Authorization<'_> {
    let mut needs = Vec::new();
    let mut paths = Vec::new();
    let mut detail = Vec::new();
    let mut first: Option<&Path> = None;
    let mut summary = FilesSummary::default();
    // An update whose old content is not kept cannot be taken back: it always asks.
    let mut always_ask = false;
    for plan in plans.iter().filter(|p| !p.unchanged) {
        if let Some(write) = &plan.write {
            needs.push((Operation::Write, write.target.inside_root));
            first.get_or_insert(&write.target.path);
            always_ask |= write.replaced.is_some() && !keep_overwrites && plan.remove.is_none();
        }
        if let Some((source, _)) = &plan.remove {
            needs.push((Operation::Remove, source.inside_root));
            paths.push((source.path.as_path(), source.inside_root));
        }
        if let Some(write) = &plan.write {
            paths.push((write.target.path.as_path(), write.target.inside_root));
        }
        let (what, count) = match (&plan.write, &plan.remove) {
            (Some(to), Some((from, _))) => (
                format!("move {} → {}", from.path.shown(), to.target.path.shown()),
                &mut summary.moved,
            ),
            (None, Some((gone, _))) => (
                format!("delete {}", gone.path.shown()),
                &mut summary.deleted,
            ),
            (Some(write), None) if plan.action == Action::Added => (
                format!("add {}", write.target.path.shown()),
                &mut summary.added,
            ),
            (Some(write), None) => (
                format!("update {}", write.target.path.shown()),
                &mut summary.updated,
            ),
            (None, None) => continue,
        };
        *count += 1;
        let (added, removed) = (plan.added as u64, plan.removed as u64);
        summary.lines_added += added;
        summary.lines_removed += removed;
        detail.push(format!("{what} (+{added} -{removed})"));
        if first.is_none() {
            first = plan.remove.as_ref().map(|(t, _)| t.path.as_path());
        }
    }
    detail.push(blast_radius::describe_files(&summary));
    Authorization {
        needs,
        always_ask,
        label: "Apply patch?",
        path: first.unwrap_or(Path::new("/")),
        paths,
        detail: detail.join("\n"),
        diff: Some(diff),
        recursive: None,
        permanent: None,
        summary: Some(Summary::Files(summary)),
        denial: "The user denied this patch.",
    }
}

fn success(
    call: &Call,
    committed: Vec<Committed>,
    diff: String,
    stale_note: Option<String>,
    limits: &Limits,
) -> Success {
    let max = limits.read_max_bytes as usize;
    let mut listed = String::from("Success. Updated the following files:");
    for file in &committed {
        listed.push_str(&format!(
            "\n{} {}",
            file.letter,
            crate::paths::shown::echo(&file.given)
        ));
    }
    // The list of files takes at most half the output; the diff, what is left.
    let mut text = bounded(&listed, max / 2, |left| {
        format!(
            "[{left} more files not listed; the result's data.files lists every one]",
            left = left.lines
        )
    });
    let mut notes: Vec<String> = stale_note.into_iter().collect();
    notes.extend(committed.iter().flat_map(|file| file.notes.iter().cloned()));
    notes.extend(trash_notes(call, &committed));
    if !notes.is_empty() {
        text.push_str("\n\n");
        text.push_str(&notes.join("\n"));
    }
    let mut success = Success::text(files::with_diff(text, &diff, limits.read_max_bytes));
    success.diff = Some(diff);
    for file in committed {
        success = success.with_change(file.recorded());
    }
    success
}
/// How many trashed files the result names one by one.
const TRASH_NOTES_LISTED: usize = 10;

/// Where the replaced and deleted files went: one line for all (the bucket is the same; an
/// archive's name is enough for restore_file), then one short line per file (at most
/// [`TRASH_NOTES_LISTED`], the rest counted).
fn trash_notes(call: &Call, committed: &[Committed]) -> Vec<String> {
    let root = call.ws.sandbox().root();
    let mut trashed: Vec<(String, &Path)> = Vec::new();
    for file in committed {
        let what = files::diff_label(&file.change.path, root);
        if let Some(archive) = &file.change.trashed_to {
            trashed.push((format!("what was at {what}"), archive));
        }
        if let Some(archive) = &file.removed_to {
            let gone = file.change.from.as_ref().unwrap_or(&file.change.path);
            trashed.push((files::diff_label(gone, root), archive));
        }
    }
    let Some((_, first)) = trashed.first() else {
        return Vec::new();
    };
    let name = |archive: &Path| {
        archive
            .file_name()
            .map(|n| Path::new(n).shown().into_owned())
            .unwrap_or_default()
    };
    let restore = call.names.hint("restore_file", |restore| {
        let quoted = serde_json::to_string(&name(first)).unwrap_or_default();
        format!(" (restore one with {restore} {{ \"trashedPath\": {quoted} }}, its name is enough)")
    });
    let bucket = first
        .parent()
        .unwrap_or(Path::new("/"))
        .shown()
        .into_owned();
    let mut notes = vec![format!("In the trash at {bucket}{restore}:")];
    for (what, archive) in trashed.iter().take(TRASH_NOTES_LISTED) {
        notes.push(format!("  {what}: {}", name(archive)));
    }
    if trashed.len() > TRASH_NOTES_LISTED {
        let list = call
            .names
            .hint("trash_list", |list| format!("; {list} lists them"));
        notes.push(format!(
            "  … and {} more (the result's data.files names every archive{list})",
            trashed.len() - TRASH_NOTES_LISTED
        ));
    }
    notes
}
