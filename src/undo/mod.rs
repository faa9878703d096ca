//! Undo (../../docs/history-and-undo.md): the host's, not the model's. Takes back one change, or every change of a
//! session, as one step that is itself a change in the history (undoing it redoes).
//!
//! The flow: select the changes (`select`), lock their paths, plan over a virtual state newest
//! first — every path must be exactly as each change left it (`plan`) — work out what must
//! happen on disk (`effects`), ask once if the host gave a confirm handler, then make it all as
//! one journaled commit: as a plan (`to_plan`) the one executor runs (`call::execute`), as for
//! every tool — what the undo replaces goes to the trash first, and a kill at any point leaves
//! all or nothing, the undo with its record or neither, after the next `Workspace`.

mod changes;
mod disk;
mod effects;
mod plan;
mod refusal;
mod select;
mod slot;
mod to_plan;
mod told;

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use serde_json::json;

pub use select::Selector;

use crate::call::plan::Place;
use crate::call::trashing::ensure_bucket_writable;
use crate::call::{Authorization, Call, Recorded, Success};
use crate::change::{EntryFacts, FileChange};
use crate::error::{ErrorCode, ToolError};
use crate::history::{ChangeRecord, Heading, HistoryEntry};
use crate::paths::shown::Shown;
use crate::paths::AsDir;
use crate::text::diff::unified_diff;
use crate::workspace::Workspace;
use effects::Effects;
use plan::Planner;
use slot::Slot;

/// An undo as the host asks for it.
#[derive(Debug, Clone, Default)]
pub struct UndoRequest {
    pub selector: Selector,
    /// Report what would happen; change nothing.
    pub dry_run: bool,
}

/// What an undo did.
pub struct Undone {
    /// Its result; the undo is in the history already (recorded with its journaled commit).
    pub success: Success,
    /// What the history says of it (`None` for a dry run, which changes nothing).
    pub heading: Option<Heading>,
}

/// Every change in the history with its state, oldest first. The history and the trash are
/// used only if nobody else can have written them (see `datadir`): otherwise the error says
/// so and how to fix it.
pub fn entries(ws: &Workspace) -> Result<Vec<HistoryEntry>, ToolError> {
    let trash = ws
        .bucket()
        .lookup()
        .map_err(|e| ToolError::io(&e, "read the trash in", ws.data_dir().path()))?;
    ws.history()
        .entries(&|archive| trash.contains(archive))
        .map_err(|e| ToolError::io(&e, "read the history in", ws.data_dir().path()))
}

/// Runs an undo on `call` (its confirmer asks the user, if there is one).
pub async fn undo(call: &Call, request: UndoRequest) -> Result<Undone, crate::call::Failure> {
    let ws = call.ws.clone();
    let selector = request.selector.clone();
    let targets = call
        .reading(move || {
            let entries = entries(&ws)?;
            let trash = ws
                .bucket()
                .lookup()
                .map_err(|e| ToolError::io(&e, "read the trash in", ws.data_dir().path()))?;
            select::select(&entries, &selector, &|archive| trash.contains(archive))
        })
        .await?;
    let paths: Vec<PathBuf> = targets
        .iter()
        .flat_map(|t| t.record.files.iter())
        .flat_map(|f| std::iter::once(f.path.clone()).chain(f.from.clone()))
        .collect();
    let path_refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    let lock = call.lock_for_change(&path_refs).await?;
    let (ws, planned_targets) = (call.ws.clone(), targets.clone());
    let asks = call.confirmer.is_some() && !request.dry_run;
    let dry_run = request.dry_run;
    let (effects, diff, undo) = call
        .reading(move || {
            let mut planner = Planner::new(&ws);
            for target in &planned_targets {
                planner.take_back(target, ws.history())?;
            }
            let plan = planner.finish()?;
            let effects = Effects::of(&plan)?;
            // What the prompt shows, read off the JS thread.
            let diff = if asks {
                diff_of(&ws, &plan, &effects)
            } else {
                String::new()
            };
            let undo = (!dry_run)
                .then(|| plan_for_executor(&ws, &plan, &effects))
                .transpose()?;
            Ok((effects, diff, undo))
        })
        .await?;
    let records: Vec<ChangeRecord> = targets.into_iter().map(|t| t.record).collect();
    let summary = summary(&request.selector, &records);
    let undoes: Vec<String> = records.iter().map(|t| t.id.clone()).collect();
    let lines = effects.lines();
    let heading = heading(&records);
    if request.dry_run {
        let mut text = format!("Would undo {heading}:");
        push_lines(&mut text, &lines);
        text.push_str("\nNothing was changed (dry run).");
        let success = Success::text(text)
            .with_data("dryRun", true)
            .with_data("undoes", json!(undoes));
        return Ok(Undone {
            success,
            heading: None,
        });
    }
    if asks {
        let first = paths.first().cloned().unwrap_or_default();
        let summary = crate::confirm::Summary::Files(effects.summary(&diff));
        call.authorize(Authorization {
            summary: Some(summary),
            needs: Vec::new(),
            always_ask: true,
            label: "Undo change?",
            path: &first,
            paths: paths
                .iter()
                .map(|path| (path.as_path(), path.starts_with(call.ws.sandbox().root())))
                .collect(),
            detail: lines.join("\n"),
            diff: (!diff.is_empty()).then_some(diff),
            recursive: None,
            permanent: None,
            denial: "The user denied this undo.",
        })
        .await?;
    }
    let _lock = lock.exclusive().await;
    let record_as = Heading {
        summary,
        undoes: undoes.clone(),
        ..call.heading.clone()
    };
    let (ws, cancel, recorded_as) = (call.ws.clone(), call.cancel.clone(), record_as.clone());
    let steps = effects.removals.len()
        + effects.renames.iter().filter(|r| r.arrives()).count()
        + effects.placements.len();
    let meter = call
        .progress
        .meter(crate::progress::Unit::Files, Some(steps as u64));
    let (files, recorded) = call
        .blocking(move || {
            let undo = undo.expect("planned unless a dry run");
            execute(&ws, undo, &recorded_as, &cancel, &meter, steps as u64)
        })
        .await?;
    let mut text = format!("Undid {heading}:");
    push_lines(&mut text, &lines);
    for file in &files {
        if let Some(archive) = &file.trashed_to {
            text.push_str(&format!(
                "\nWhat was at {} is in the trash at {}.",
                file.path.shown(),
                archive.shown()
            ));
        }
    }
    let mut success = Success::text(text).with_data("undoes", json!(undoes));
    for file in files {
        success = success.with_change(file);
    }
    success.recorded = recorded;
    Ok(Undone {
        success,
        heading: Some(record_as),
    })
}

/// The plan of `effects` for the executor ([`to_plan`]): the bytes each file given new bytes in
/// place holds now read, and every place resolved through the sandbox.
fn plan_for_executor(
    ws: &Workspace,
    plan: &plan::Plan,
    effects: &Effects,
) -> Result<to_plan::UndoPlan, ToolError> {
    let mut now = HashMap::new();
    for placement in effects.placements.iter().filter(|p| p.exchange) {
        let here = placement.physical.as_ref().unwrap_or(&placement.path);
        now.insert(here.clone(), disk::read(ws, here, u64::MAX)?);
    }
    let place = |dir: &Path, name: &OsStr| {
        let target = disk::target(ws, dir)?;
        Ok(Place {
            anchor: target.anchor,
            dir: target.path,
            name: name.to_owned(),
        })
    };
    to_plan::to_plan(plan, effects, &now, &place)
}

/// Makes `undo` on the one executor, recorded as `heading` with its commit; returns what changed,
/// per path, in the history's terms, and how it was recorded.
fn execute(
    ws: &Workspace,
    mut undo: to_plan::UndoPlan,
    heading: &Heading,
    cancel: &crate::cancel::CancelToken,
    meter: &crate::progress::Meter,
    steps: u64,
) -> Result<(Vec<FileChange>, Recorded), ToolError> {
    if let Some(first) = undo.first_trashed() {
        ensure_bucket_writable(ws, &first)?;
    }
    let words = undo.take_words();
    let plan = std::mem::take(&mut undo.plan);
    let facts = |path: &Path| match disk::open_parent(ws, path) {
        Ok(Some((parent, name))) => EntryFacts::of_entry(parent.as_dir(), &name),
        _ => None,
    };
    let executed =
        crate::call::execute::execute(ws, plan, heading, cancel, |done| undo.files(done, facts))
            .map_err(|e| words.failed(e))?;
    meter.advance(steps);
    Ok((executed.files, executed.recorded))
}

/// The history as the host sees it (`Change[]`, ../../docs/history-and-undo.md), newest first, as JSON text.
pub fn history_view(
    ws: &Workspace,
    limit: Option<usize>,
    session_id: Option<&str>,
) -> Result<String, ToolError> {
    Ok(crate::history::changes_json(
        &entries(ws)?,
        limit,
        session_id,
    ))
}

fn summary(selector: &Selector, targets: &[ChangeRecord]) -> String {
    match (&selector.session_id, targets) {
        (Some(session), _) if selector.id.is_none() => format!("undo session {session}"),
        (_, [one]) => format!("undo {} ({})", one.id, one.summary),
        _ => "undo".to_owned(),
    }
}

fn heading(targets: &[ChangeRecord]) -> String {
    match targets {
        [one] => refusal::describe(one),
        many => format!(
            "{} changes ({})",
            many.len(),
            many.iter()
                .map(|t| t.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn push_lines(text: &mut String, lines: &[String]) {
    if lines.is_empty() {
        text.push_str("\n  (nothing on disk to change)");
    }
    for line in lines {
        text.push_str("\n  ");
        text.push_str(line);
    }
}

/// The diff of every file whose content comes back from bytes (what a prompt shows).
fn diff_of(ws: &Workspace, plan: &plan::Plan, effects: &Effects) -> String {
    let timeout = std::time::Duration::from_millis(ws.options().limits.diff_timeout_ms);
    let mut diff = String::new();
    for placement in &effects.placements {
        let Slot::Bytes { data, .. } = &placement.slot else {
            continue;
        };
        let now = if plan.reals.get(&placement.path).is_some_and(|r| r.is_some()) {
            disk::read(ws, &placement.path, 8 << 20).unwrap_or_default()
        } else {
            Vec::new()
        };
        let label = placement.path.shown();
        let (Ok(old), Ok(new)) = (std::str::from_utf8(&now), std::str::from_utf8(data)) else {
            continue;
        };
        diff.push_str(&unified_diff(old, new, &label, &label, timeout).text);
    }
    diff
}

/// An undo refused because the workspace cannot change files.
pub fn read_only() -> ToolError {
    ToolError::new(
        ErrorCode::ReadOnly,
        "this workspace is read-only; nothing was undone".to_owned(),
    )
}

#[cfg(test)]
mod tests;
