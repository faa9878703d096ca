//! `apply_patch`: one patch (Codex's format or a unified diff) over many files, as one change
//! (SPEC §12). Every file is planned before anything is asked — paths resolved through the
//! sandbox, chunks matched, new contents and the combined diff built — then one permission
//! decision and at most one prompt cover the whole patch, and the commit is all or nothing, also
//! under a kill (`journal::commit`). Deleted, replaced and (with `keepOverwrites`) updated files
//! go to the trash first. The parser and matcher are `crate::text::patch`.

use std::os::fd::AsFd;
use std::path::Path;

use serde::Deserialize;
use serde_json::{json, Value};

use super::trashing::{in_trash, put_in_trash};
use super::{blast_radius, files};
use super::{object_schema, parse_args, ToolSpec};
use crate::call::{
    commit_recorded, Authorization, BoxFuture, Call, Failure, Outcome, Recorded, Success, ToolNames,
};
use crate::cancel::CancelToken;
use crate::change::{Action, FileChange};
use crate::confirm::{FilesSummary, Summary};
use crate::error::{ErrorCode, ToolError};
use crate::hashing::sha256_hex;
use crate::history::Heading;
use crate::journal::commit::{PlannedFile, StepFailure};
use crate::options::{Limits, WorkspaceOptions};
use crate::paths::fsops::{self, EntryKind, Snapshot};
use crate::paths::sandbox::FinalLink;
use crate::paths::shown::Shown;
use crate::paths::Target;
use crate::permissions::Operation;
use crate::progress::{Meter, Unit};
use crate::text::decode::{decode_for_edit, TextFile};
use crate::text::delta::Delta;
use crate::text::diff::{all_added, unified_diff, UnifiedDiff};
use crate::text::patch::{self, FileChange as PatchChange, FilePatch};
use crate::workspace::Workspace;

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

/// `a.ts` for one file, `a.ts, b.ts` for two, `a.ts, b.ts (+N more)` beyond (SPEC §12).
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

/// What is at a path now, as planned on.
struct Existing {
    stat: rustix::fs::Stat,
    /// The bytes (regular files; empty for a symlink).
    bytes: Vec<u8>,
}

/// One file of the patch, planned.
struct Planned {
    /// `A`, `M` or `D` and the path as the patch wrote it (a move: its new path).
    letter: char,
    given: String,
    action: Action,
    /// The file written: where, what, and what it replaces there (to the trash first).
    write: Option<(Target, Vec<u8>, Option<Existing>)>,
    /// The entry removed: a deleted file, or a moved one's source.
    remove: Option<(Target, Existing)>,
    /// Keep the removed entry's content in the trash (deletes always; a moved source when its
    /// content changes and overwrites are kept).
    archive_removed: bool,
    /// Keep the replaced content in the trash (an update when overwrites are kept; whatever an
    /// added or moved file lands on, always).
    archive_replaced: bool,
    /// Its diff, and how many lines it adds and removes.
    diff: UnifiedDiff,
    notes: Vec<String>,
    /// Nothing to do for this file (already as the patch says).
    unchanged: bool,
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
    let root = call.ws.sandbox().root().to_owned();
    let keep_overwrites = call.ws.options().trash.keep_overwrites;
    let names = Names {
        tool: call.tool_name.clone(),
        write_file: call.names.offered("write_file").map(str::to_owned),
    };
    let plans = {
        let (files, resolved, limits) = (parsed.files.clone(), resolved.clone(), limits.clone());
        call.reading(move || plan_all(&files, &resolved, &limits, &root, keep_overwrites, &names))
            .await?
    };
    let plans = match plans {
        Planning::AlreadyApplied => {
            return Ok(Success::text("Patch already applied; nothing changed."))
        }
        Planning::Plans(plans) => plans,
    };
    let diff: String = plans.iter().map(|p| p.diff.text.as_str()).collect();
    call.authorize(authorization(&plans, diff.clone(), keep_overwrites))
        .await?;
    let _lock = lock.exclusive().await;
    let (ws, cancel, heading) = (call.ws.clone(), call.cancel.clone(), call.heading.clone());
    let changing = plans.iter().filter(|p| !p.unchanged).count() as u64;
    let meter = call.progress.meter(Unit::Files, Some(changing));
    let (committed, recorded) = call
        .blocking(move || commit(&ws, plans, &heading, &cancel, &meter))
        .await?;
    let mut success = success(call, committed, diff, &limits);
    success.recorded = recorded;
    Ok(success)
}

/// A file's paths, resolved: the one the patch names first (the source of a move), and a move's
/// destination.
#[derive(Clone)]
struct Resolved {
    target: Target,
    destination: Option<Target>,
}

fn resolve_all(call: &Call, files: &[FilePatch]) -> Result<Vec<Resolved>, ToolError> {
    let mut resolved = Vec::with_capacity(files.len());
    let mut seen: Vec<(std::path::PathBuf, usize)> = Vec::new();
    for (index, file) in files.iter().enumerate() {
        let field = format!("input (file {})", index + 1);
        let (target, destination) = match &file.change {
            // A deleted entry is the entry itself, as delete_file takes it.
            PatchChange::Delete { path } => (call.resolve(path, &field, FinalLink::Keep)?, None),
            PatchChange::Add { path, .. } => (call.resolve(path, &field, FinalLink::Follow)?, None),
            PatchChange::Update { path, move_to, .. } => (
                call.resolve(path, &field, FinalLink::Follow)?,
                move_to
                    .as_deref()
                    .map(|to| call.resolve(to, &field, FinalLink::Follow))
                    .transpose()?,
            ),
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

/// The host's names of this tool and of write_file (for messages that point at it).
struct Names {
    tool: String,
    write_file: Option<String>,
}

enum Planning {
    AlreadyApplied,
    Plans(Vec<Planned>),
}

/// Plans every file; a patch that is already applied is said so (a retry never applies twice).
fn plan_all(
    files: &[FilePatch],
    resolved: &[Resolved],
    limits: &Limits,
    root: &Path,
    keep_overwrites: bool,
    names: &Names,
) -> Result<Planning, ToolError> {
    let planned: Result<Vec<Planned>, ToolError> = files
        .iter()
        .zip(resolved)
        .map(|(file, at)| plan_file(file, at, limits, root, keep_overwrites, names))
        .collect();
    match planned {
        Ok(plans) if plans.iter().all(|p| p.unchanged) => Ok(Planning::AlreadyApplied),
        Ok(plans) => Ok(Planning::Plans(plans)),
        Err(e)
            if matches!(
                e.code,
                ErrorCode::NoMatch | ErrorCode::NotFound | ErrorCode::MultipleMatches
            ) && already_applied(files, resolved, limits) =>
        {
            Ok(Planning::AlreadyApplied)
        }
        Err(e) => Err(e),
    }
}

fn plan_file(
    file: &FilePatch,
    at: &Resolved,
    limits: &Limits,
    root: &Path,
    keep_overwrites: bool,
    names: &Names,
) -> Result<Planned, ToolError> {
    let label = |t: &Target| files::diff_label(&t.path, root);
    let timeout = std::time::Duration::from_millis(limits.diff_timeout_ms);
    match &file.change {
        PatchChange::Add { path, text } => {
            let replaced = existing(&at.target, limits, false)?;
            let unchanged = replaced
                .as_ref()
                .is_some_and(|r| r.bytes == text.as_bytes());
            let diff = match &replaced {
                Some(old) => file_diff(
                    &old.bytes,
                    text,
                    &label(&at.target),
                    &label(&at.target),
                    timeout,
                ),
                None => all_added(text, &format!("b/{}", label(&at.target))),
            };
            Ok(Planned {
                letter: 'A',
                given: path.clone(),
                action: Action::Added,
                write: Some((at.target.clone(), text.clone().into_bytes(), replaced)),
                remove: None,
                archive_removed: false,
                archive_replaced: true,
                diff,
                notes: Vec::new(),
                unchanged,
            })
        }
        PatchChange::Delete { path } => {
            let old = existing(&at.target, limits, true)?.ok_or_else(|| {
                ToolError::new(
                    ErrorCode::NotFound,
                    format!(
                        "{}: the file to delete does not exist ({})",
                        path,
                        at.target.path.shown()
                    ),
                )
            })?;
            let text = String::from_utf8_lossy(&old.bytes).into_owned();
            let diff = unified_diff(
                &text,
                "",
                &format!("a/{}", label(&at.target)),
                "/dev/null",
                timeout,
            );
            Ok(Planned {
                letter: 'D',
                given: path.clone(),
                action: Action::Deleted,
                write: None,
                remove: Some((at.target.clone(), old)),
                archive_removed: true,
                archive_replaced: false,
                diff,
                notes: Vec::new(),
                unchanged: false,
            })
        }
        PatchChange::Update {
            path,
            move_to,
            chunks,
        } => {
            let old = existing(&at.target, limits, false)?.ok_or_else(|| {
                ToolError::new(
                    ErrorCode::NotFound,
                    format!(
                        "{}: the file to update does not exist ({}); use *** Add File to create it",
                        path,
                        at.target.path.shown()
                    ),
                )
            })?;
            let decoded = decode_for_edit(&old.bytes).map_err(|e| {
                e.into_tool_error(&at.target.path, &names.tool, names.write_file.as_deref())
            })?;
            let applied = patch::apply(path, &decoded.text, chunks).map_err(ToolError::from)?;
            let notes = applied.fuzzy.iter().map(|f| f.describe(path)).collect();
            let new = TextFile {
                bom: decoded.bom,
                text: applied.text,
            }
            .to_bytes();
            match (&at.destination, move_to) {
                (Some(destination), Some(to)) => {
                    let replaced = existing(destination, limits, false)?;
                    let changed = new != old.bytes;
                    let diff = file_diff(
                        &old.bytes,
                        &String::from_utf8_lossy(&new),
                        &label(&at.target),
                        &label(destination),
                        timeout,
                    );
                    let diff = if diff.text.is_empty() {
                        UnifiedDiff {
                            text: format!(
                                "rename from {}\nrename to {}\n",
                                label(&at.target),
                                label(destination)
                            ),
                            ..UnifiedDiff::default()
                        }
                    } else {
                        diff
                    };
                    Ok(Planned {
                        letter: 'M',
                        given: to.clone(),
                        action: Action::Moved,
                        write: Some((destination.clone(), new, replaced)),
                        remove: Some((at.target.clone(), old)),
                        archive_removed: changed && keep_overwrites,
                        archive_replaced: true,
                        diff,
                        notes,
                        unchanged: false,
                    })
                }
                _ => {
                    let unchanged = new == old.bytes;
                    let diff = file_diff(
                        &old.bytes,
                        &String::from_utf8_lossy(&new),
                        &label(&at.target),
                        &label(&at.target),
                        timeout,
                    );
                    Ok(Planned {
                        letter: 'M',
                        given: path.clone(),
                        action: Action::Modified,
                        write: Some((at.target.clone(), new, Some(old))),
                        remove: None,
                        archive_removed: false,
                        archive_replaced: keep_overwrites,
                        diff,
                        notes,
                        unchanged,
                    })
                }
            }
        }
    }
}

/// The diff of one file, `--- a/<old>` / `+++ b/<new>` as git prints it.
fn file_diff(
    old: &[u8],
    new: &str,
    old_label: &str,
    new_label: &str,
    timeout: std::time::Duration,
) -> UnifiedDiff {
    let old = String::from_utf8_lossy(old);
    unified_diff(
        &old,
        new,
        &format!("a/{old_label}"),
        &format!("b/{new_label}"),
        timeout,
    )
}

/// What is at `target` now: `None` when nothing is. A directory is `NOT_A_FILE`; FIFOs and the
/// like are refused; a symlink is taken as itself only when `links` (a delete).
fn existing(target: &Target, limits: &Limits, links: bool) -> Result<Option<Existing>, ToolError> {
    if links {
        let (parent, name) = match files::open_parent(target, "read") {
            Ok(found) => found,
            Err(e) if e.code == ErrorCode::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let stat = fsops::lstat_at(parent.as_fd(), &name)
            .map_err(|e| ToolError::io(&e, "read", &target.path))?;
        match stat.as_ref().map(EntryKind::of) {
            None => return Ok(None),
            Some(EntryKind::Symlink) => {
                return Ok(Some(Existing {
                    stat: stat.expect("matched"),
                    bytes: Vec::new(),
                }))
            }
            Some(EntryKind::Directory) => {
                return Err(ToolError::new(
                    ErrorCode::NotAFile,
                    format!(
                        "{} is a directory; apply_patch deletes files only",
                        target.path.shown()
                    ),
                ))
            }
            _ => {}
        }
    }
    let Some(mut opened) = files::open_existing(target, "read")? else {
        return Ok(None);
    };
    files::ensure_writable(&opened, &target.path)?;
    let bytes = files::read_at_most(&mut opened.file, limits.edit_max_file_bytes, "read", &target.path)?
        .ok_or_else(|| {
            ToolError::new(
                ErrorCode::TooLarge,
                format!(
                    "{} is {} bytes, over the edit limit of {} bytes (editMaxFileBytes); apply_patch cannot change it",
                    target.path.shown(),
                    opened.stat.st_size,
                    limits.edit_max_file_bytes
                ),
            )
        })?;
    Ok(Some(Existing {
        stat: opened.stat,
        bytes,
    }))
}

/// Whether every file is already as the patch says: added files exist with the patch's text,
/// deleted ones are gone, updated ones (moved ones at their destination, the source gone)
/// already have their chunks' change.
fn already_applied(files: &[FilePatch], resolved: &[Resolved], limits: &Limits) -> bool {
    files.iter().zip(resolved).all(|(file, at)| {
        let text_of = |t: &Target| -> Option<String> {
            let found = existing(t, limits, false).ok()??;
            decode_for_edit(&found.bytes).ok().map(|d| d.text)
        };
        match &file.change {
            PatchChange::Add { text, .. } => text_of(&at.target).as_deref() == Some(text.as_str()),
            PatchChange::Delete { .. } => matches!(existing(&at.target, limits, true), Ok(None)),
            PatchChange::Update { chunks, .. } => match &at.destination {
                Some(destination) => {
                    matches!(existing(&at.target, limits, false), Ok(None))
                        && text_of(destination).is_some_and(|t| patch::is_applied(&t, chunks))
                }
                None => text_of(&at.target).is_some_and(|t| patch::is_applied(&t, chunks)),
            },
        }
    })
}

/// One prompt for the whole patch (SPEC §12): granted when every file's single-file permission
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
        if let Some((target, _, replaced)) = &plan.write {
            needs.push((Operation::Write, target.inside_root));
            first.get_or_insert(&target.path);
            always_ask |= replaced.is_some() && !keep_overwrites && plan.remove.is_none();
        }
        if let Some((source, _)) = &plan.remove {
            needs.push((Operation::Remove, source.inside_root));
            paths.push((source.path.as_path(), source.inside_root));
        }
        if let Some((target, _, _)) = &plan.write {
            paths.push((target.path.as_path(), target.inside_root));
        }
        let (what, count) = match (&plan.write, &plan.remove) {
            (Some((to, _, _)), Some((from, _))) => (
                format!("move {} → {}", from.path.shown(), to.path.shown()),
                &mut summary.moved,
            ),
            (None, Some((gone, _))) => (
                format!("delete {}", gone.path.shown()),
                &mut summary.deleted,
            ),
            (Some((target, _, _)), None) if plan.action == Action::Added => {
                (format!("add {}", target.path.shown()), &mut summary.added)
            }
            (Some((target, _, _)), None) => (
                format!("update {}", target.path.shown()),
                &mut summary.updated,
            ),
            (None, None) => continue,
        };
        *count += 1;
        let (added, removed) = (plan.diff.added as u64, plan.diff.removed as u64);
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

/// A file as committed: for the result, the audit log and the history.
struct Committed {
    letter: char,
    given: String,
    change: FileChange,
    notes: Vec<String>,
    /// Archive of the removed entry (a delete, or a moved source that changed).
    removed_to: Option<std::path::PathBuf>,
}

impl Committed {
    /// The file's change as the audit log and the history keep it: a delete's archive is where
    /// its content went; a changed move's, where its old content went.
    fn recorded(&self) -> FileChange {
        let mut change = self.change.clone();
        if change.action == Action::Deleted {
            change.trashed_to = self.removed_to.clone();
        } else {
            change.from_trashed_to = self.removed_to.clone();
        }
        change
    }
}

/// Puts what the patch destroys into the trash, stages every new file, and makes the whole
/// change at once, recorded in the history as `heading` with it (`call::commit_recorded`). On
/// any failure, nothing has changed and the copies made for it are discarded. `progress` counts
/// the files staged.
fn commit(
    ws: &Workspace,
    plans: Vec<Planned>,
    heading: &Heading,
    cancel: &CancelToken,
    progress: &Meter,
) -> Result<(Vec<Committed>, Recorded), ToolError> {
    let mut archives = Vec::new();
    let result = (|| {
        let mut commit = ws.journal().commit();
        let mut committed = Vec::new();
        // The path of each step, in the order the steps are added (for an error naming it).
        let mut step_paths = Vec::new();
        for plan in plans.into_iter().filter(|p| !p.unchanged) {
            let mut change_record = FileChange::new(
                plan.write
                    .as_ref()
                    .map(|(t, _, _)| t.path.clone())
                    .or_else(|| plan.remove.as_ref().map(|(t, _)| t.path.clone()))
                    .unwrap_or_default(),
                plan.action,
            );
            let mut removed_to = None;
            if let Some((source, old)) = &plan.remove {
                let (parent, name) = files::open_parent(source, "remove")?;
                if plan.archive_removed {
                    let archived = archive_as_planned(ws, source, old, cancel)?;
                    removed_to = Some(archived.archive_path.clone());
                    change_record.sha256_before = Some(archived.metadata.original_sha256.clone());
                    archives.push(archived);
                } else if plan.action == Action::Moved {
                    change_record.sha256_before = Some(sha256_hex(&old.bytes));
                }
                if plan.action == Action::Moved {
                    change_record.from = Some(source.path.clone());
                }
                commit
                    .remove(parent, split_parent(source), &name, Snapshot::of(&old.stat))
                    .map_err(|e| ToolError::io(&e, "prepare the removal of", &source.path))?;
                step_paths.push(source.path.clone());
            }
            if let Some((target, data, replaced)) = plan.write {
                let (parent_path, name) = target
                    .split()
                    .ok_or_else(|| files::is_a_directory(&target.path))?;
                change_record.undo.created_dirs = files::missing_parents(&target);
                let (parent, _) = fsops::ensure_dir(&target.anchor, parent_path).map_err(|e| {
                    ToolError::io(&e, "create the parent directory of", &target.path)
                })?;
                let parent = fsops::reopen_readable(parent.as_fd())
                    .map_err(|e| ToolError::io(&e, "open the parent directory of", &target.path))?;
                if let Some(old) = &replaced {
                    if plan.archive_replaced {
                        let archived = archive_as_planned(ws, &target, old, cancel)?;
                        change_record.trashed_to = Some(archived.archive_path.clone());
                        archives.push(archived);
                    } else if plan.action == Action::Modified {
                        // No copy in the trash: the history keeps what takes it back.
                        let reverse = Delta::around_common_ends(&old.bytes, &data);
                        change_record.undo.reverse = Some(std::sync::Arc::new(reverse.encode()));
                    } else if plan.action == Action::Moved {
                        // The file the move replaced was not kept.
                        change_record.undo.permanent = true;
                    }
                    if plan.action != Action::Moved {
                        change_record.sha256_before = Some(sha256_hex(&old.bytes));
                    }
                }
                if let (Some((_, source)), None) = (&plan.remove, &removed_to) {
                    if plan.action == Action::Moved {
                        // No copy of the source in the trash: the history keeps what takes its
                        // content back from the destination's.
                        let reverse = Delta::around_common_ends(&source.bytes, &data);
                        change_record.undo.reverse = Some(std::sync::Arc::new(reverse.encode()));
                    }
                }
                change_record.sha256_after = Some(sha256_hex(&data));
                // A moved file keeps its source's mode and owner; an updated one its own.
                let metadata_of = match (&plan.remove, &replaced) {
                    (Some((_, source)), _) if plan.action == Action::Moved => Some(source.stat),
                    (_, Some(old)) => Some(old.stat),
                    _ => None,
                };
                let replaces = replaced.map(|old| PlannedFile {
                    stat: old.stat,
                    bytes: old.bytes,
                });
                commit
                    .put(
                        parent,
                        parent_path,
                        name,
                        data,
                        metadata_of.as_ref(),
                        replaces,
                    )
                    .map_err(|e| ToolError::io(&e, "write", &target.path))?;
                step_paths.push(target.path.clone());
            }
            progress.advance(1);
            committed.push(Committed {
                letter: plan.letter,
                given: plan.given,
                change: change_record,
                notes: plan.notes,
                removed_to,
            });
        }
        if cancel.is_aborted() {
            return Err(ToolError::aborted());
        }
        let files = || committed.iter().map(Committed::recorded).collect();
        let (_, recorded) = commit_recorded(ws, commit, heading, files).map_err(|e| {
            let file = step_paths
                .get(e.step)
                .map(|p| p.shown().into_owned())
                .unwrap_or_default();
            match e.reason {
                StepFailure::Changed { being_written, .. } if being_written => ToolError::new(
                    ErrorCode::Conflict,
                    format!("{file} is open for writing in another program; retry once that program has saved or closed it"),
                ),
                StepFailure::Changed { .. } => ToolError::new(
                    ErrorCode::Conflict,
                    format!("{file} changed since the patch was planned; read it again and redo the patch"),
                ),
                StepFailure::Io(io) => ToolError::io(&io, "apply the patch to", Path::new(&file)),
            }
        })?;
        Ok((committed, recorded))
    })();
    if result.is_err() {
        for archived in archives {
            ws.bucket().discard(archived);
        }
    }
    // On success the archives' locks go with them here: they are in place, and reported.
    result
}

/// The parent directory path of a target (every target has one).
fn split_parent(target: &Target) -> &Path {
    target.path.parent().unwrap_or(Path::new("/"))
}

/// Archives (without removing) the entry at `target`, which must still be what was planned on.
fn archive_as_planned(
    ws: &Workspace,
    target: &Target,
    planned: &Existing,
    cancel: &CancelToken,
) -> Result<crate::trash::Archived, ToolError> {
    let (parent, name) = files::open_parent(target, "trash")?;
    let archived = put_in_trash(ws, parent.as_fd(), &name, &target.path, false, cancel)?;
    let is_file = EntryKind::of(&planned.stat) == EntryKind::File;
    if is_file && archived.metadata.original_sha256 != sha256_hex(&planned.bytes) {
        ws.bucket().discard(archived);
        return Err(files::changed_since_planned(&target.path));
    }
    Ok(archived)
}

fn success(call: &Call, committed: Vec<Committed>, diff: String, limits: &Limits) -> Success {
    let mut text = String::from("Success. Updated the following files:");
    for file in &committed {
        text.push_str(&format!(
            "\n{} {}",
            file.letter,
            crate::paths::shown::echo(&file.given)
        ));
    }
    let mut notes = Vec::new();
    for file in &committed {
        notes.extend(file.notes.iter().cloned());
        if let Some(archive) = &file.change.trashed_to {
            let subject = format!("What was at {}", file.change.path.shown());
            notes.push(in_trash(call, &subject, archive).trim_start().to_owned());
        }
        if let Some(archive) = &file.removed_to {
            let gone = file.change.from.as_ref().unwrap_or(&file.change.path);
            notes.push(
                in_trash(call, &gone.shown(), archive)
                    .trim_start()
                    .to_owned(),
            );
        }
    }
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
