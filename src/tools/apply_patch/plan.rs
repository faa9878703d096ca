//! Planning a patch, file by file, before anything is asked or written: each file read, its
//! chunks placed, its new content hashed, its diff added to the combined diff — then its old
//! content dropped. What a file's plan keeps is what the commit checks and records (stats and
//! SHA-256s, line counts, notes) and, while the new contents kept stay within the larger of
//! `patchMaxBytes` and `editMaxFileBytes` in all ([`Keeping`]: a patch of one file is never
//! planned twice), its new content; past that, the commit derives each new content again, one file at a
//! time, and checks it is the planned one. Files are planned a few at once (on as many
//! threads), so memory does not grow with the number or size of the files while the patch is
//! planned and asked about beyond those few; the change handed to the executor holds every new
//! content (at most `patchMaxTotalBytes` in all). What a patch reads and writes in all is
//! bounded up front ([`Budget`]).

use std::ops::ControlFlow;

use super::already_applied::already_applied;
use super::budget::{Budget, Keeping};
use super::combined_diff::CombinedDiff;
use super::hard_links::{other_links_note, refuse_two_names_of_one_file};
use super::planned::{Planning, Write};
use super::read::{read, read_unhashed};
use super::resolve::Resolved;
use crate::change::Action;
use crate::error::{ErrorCode, ToolError};
use crate::hashing::{sha256_hex, sha256_hex_beside};
use crate::parallel::{self, FILES_AT_ONCE};
use crate::paths::shown::Shown;
use crate::paths::Target;
use crate::text::decode::{lossy, split_bom, text_for_edit};
use crate::text::diff::{
    all_added, diff_within_with_delta, unified_diff, unified_diff_within, LineSpan, UnifiedDiff,
};
use crate::text::patch::{self, FilePatch, PatchChange};
use crate::tools::files;
// The commit reaches these through this module.
pub(super) use super::context::Context;
pub(super) use super::planned::{Existing, FilePlan};

/// Plans every file, adding each one's diff to the combined diff (at most `patchMaxBytes` of
/// it); a patch that is already applied is said so (a retry never applies twice). An abort
/// stops the planning (before each file, and between the chunks of one).
///
/// Files are planned on as many threads as there are cores, at most [`FILES_AT_ONCE`] past the
/// last one taken, and taken in the patch's order: what each read and wrote is counted against
/// the budget, its diff added and its new content kept (see [`Keeping`]), as if they had been
/// planned one by one — the same refusal at the same file. At most that many files' contents
/// are held at once beyond what the plan keeps.
pub(super) fn plan_all(
    files: &[FilePatch],
    resolved: &[Resolved],
    cx: &Context,
) -> Result<Planning, ToolError> {
    let mut budget = Budget::new(&cx.limits);
    let mut diff = CombinedDiff::new(cx.limits.patch_max_bytes);
    let mut kept = Keeping::new(&cx.limits);
    let mut plans = Vec::with_capacity(files.len());
    let mut failure = None;
    let numbered: Vec<(usize, (&FilePatch, &Resolved))> =
        files.iter().zip(resolved).enumerate().collect();
    let plan_one = |&(index, (file, at)): &(usize, (&FilePatch, &Resolved))| -> Planned {
        if cx.cancel.is_aborted() {
            return (Err(ToolError::aborted()), Budget::noting(&cx.limits), None);
        }
        let mut noted = Budget::noting(&cx.limits);
        let mut file_diff = None;
        let plan = plan_file(index, file, at, cx, &mut noted, &mut file_diff);
        (plan, noted, file_diff)
    };
    let take = |(plan, noted, file_diff): Planned| match budget.settle(noted).and(plan) {
        Ok(mut plan) => {
            if let Some((given, text)) = file_diff {
                diff.push(&given, &text);
            }
            plan.new = plan.new.take().and_then(|new| kept.keep(new));
            if plan.new.is_none() {
                plan.reverse = None;
            }
            // The old bytes only with the new content, after it (a file whose new content is
            // derived again is expected as read again).
            plan.old = plan.old.take().filter(|_| plan.new.is_some());
            plan.old = plan.old.take().and_then(|old| kept.keep(old));
            plans.push(plan);
            ControlFlow::Continue(())
        }
        Err(e) => {
            failure = Some(e);
            ControlFlow::Break(())
        }
    };
    let threads = parallel::computing_threads();
    parallel::map_in_order(&numbered, threads, FILES_AT_ONCE, plan_one, take);
    match failure {
        None if plans.iter().all(|p| p.unchanged) => Ok(Planning::AlreadyApplied),
        None => {
            refuse_two_names_of_one_file(&plans, files)?;
            Ok(Planning::Plans(plans, diff))
        }
        Some(e)
            if matches!(
                e.code,
                ErrorCode::NoMatch | ErrorCode::NotFound | ErrorCode::MultipleMatches
            ) && already_applied(files, resolved, cx) =>
        {
            Ok(Planning::AlreadyApplied)
        }
        Some(e) => Err(e),
    }
}

/// A file's diff for the combined one: the path as the patch gave it, and the diff.
type FileDiff = Option<(String, String)>;

/// A file planned, what it read and wrote, and its diff: taken in the patch's order.
type Planned = (Result<FilePlan, ToolError>, Budget, FileDiff);

fn plan_file(
    index: usize,
    file: &FilePatch,
    at: &Resolved,
    cx: &Context,
    budget: &mut Budget,
    diff: &mut FileDiff,
) -> Result<FilePlan, ToolError> {
    let label = |t: &Target| files::diff_label(&t.path, &cx.root);
    let timeout = std::time::Duration::from_millis(cx.limits.diff_timeout_ms);
    let planned = |letter, given: &str, action| FilePlan {
        file: index,
        new: None,
        old: None,
        reverse: None,
        letter,
        given: given.to_owned(),
        action,
        write: None,
        remove: None,
        archive_removed: false,
        archive_replaced: false,
        added: 0,
        removed: 0,
        notes: Vec::new(),
        unchanged: false,
    };
    let mut plan = match &file.change {
        PatchChange::Add { path, text } => {
            let replaced = read(&at.target, &cx.limits, false, budget)?;
            budget.spend(text.len() as u64, &at.target.path)?;
            let sha256 = sha256_hex(text.as_bytes());
            let file_diff = match &replaced {
                Some((_, old)) => unified_diff(
                    &lossy(old),
                    text,
                    &format!("a/{}", label(&at.target)),
                    &format!("b/{}", label(&at.target)),
                    timeout,
                ),
                None => all_added(text, &format!("b/{}", label(&at.target))),
            };
            let mut plan = planned('A', path, Action::Added);
            plan.unchanged = replaced.as_ref().is_some_and(|(r, _)| r.sha256 == sha256);
            plan.archive_replaced = true;
            plan.write = Some(Write {
                target: at.target.clone(),
                sha256,
                replaced: replaced.map(|(existing, _)| existing),
            });
            with_diff(plan, file_diff, diff)
        }
        PatchChange::Delete { path } => {
            let (old, bytes) = read(&at.target, &cx.limits, true, budget)?.ok_or_else(|| {
                ToolError::new(
                    ErrorCode::NotFound,
                    format!(
                        "{}: the file to delete does not exist ({}), so nothing was deleted{}. Check the path",
                        path,
                        at.target.path.shown(),
                        cx.names.not_found_hint(path, &at.target)
                    ),
                )
            })?;
            let text = lossy(&bytes);
            let file_diff = unified_diff(
                &text,
                "",
                &format!("a/{}", label(&at.target)),
                "/dev/null",
                timeout,
            );
            let mut plan = planned('D', path, Action::Deleted);
            plan.remove = Some((at.target.clone(), old));
            plan.archive_removed = true;
            with_diff(plan, file_diff, diff)
        }
        PatchChange::Update { path, move_to, .. } => {
            let (stat, bytes) = read_unhashed(&at.target, &cx.limits, budget)?.ok_or_else(|| {
                ToolError::new(
                    ErrorCode::NotFound,
                    format!(
                        "{}: the file to update does not exist ({}){}; check the path, or use *** Add File to create it",
                        path,
                        at.target.path.shown(),
                        cx.names.not_found_hint(path, &at.target)
                    ),
                )
            })?;
            // The file as read is hashed while it is patched (on a thread of its own if large).
            let (sha256, patched) =
                sha256_hex_beside(&bytes, || patched(file, &at.target, &bytes, cx));
            let old = Existing { stat, sha256 };
            let Patched {
                old: old_text,
                new,
                notes,
                spans,
            } = patched?;
            budget.spend(new.len() as u64, &at.target.path)?;
            let moved = match (&at.destination, move_to) {
                (Some(destination), Some(to)) => Some((destination, to)),
                _ => None,
            };
            // The new content is hashed while it is diffed (on a thread of its own if large).
            let (sha256, (mut file_diff, reverse)) = sha256_hex_beside(new.as_bytes(), || {
                match moved {
                    Some((destination, _)) => {
                        let diffed = file_diff(
                            old_text,
                            &new,
                            &spans,
                            &label(&at.target),
                            &label(destination),
                            timeout,
                        );
                        (diffed, None)
                    }
                    // The diff's line matching also gives the delta that takes the update back.
                    None => {
                        let (diffed, reverse) = diff_within_with_delta(
                            old_text,
                            &new,
                            &spans,
                            &format!("a/{}", label(&at.target)),
                            &format!("b/{}", label(&at.target)),
                            timeout,
                        );
                        (diffed, Some(reverse))
                    }
                }
            });
            let changed = sha256 != old.sha256;
            let mut plan = match moved {
                Some((destination, to)) => {
                    let replaced = read(destination, &cx.limits, false, budget)?;
                    if file_diff.text.is_empty() {
                        file_diff.text = format!(
                            "rename from {}\nrename to {}\n",
                            label(&at.target),
                            label(destination)
                        );
                    }
                    let mut plan = planned('M', to, Action::Moved);
                    plan.archive_removed = changed && cx.keep_overwrites;
                    plan.archive_replaced = true;
                    plan.write = Some(Write {
                        target: destination.clone(),
                        sha256,
                        replaced: replaced.map(|(existing, _)| existing),
                    });
                    plan.remove = Some((at.target.clone(), old));
                    with_diff(plan, file_diff, diff)
                }
                None => {
                    let mut plan = planned('M', path, Action::Modified);
                    plan.unchanged = !changed;
                    plan.reverse = reverse.filter(|_| changed);
                    plan.write = Some(Write {
                        target: at.target.clone(),
                        sha256,
                        replaced: Some(old),
                    });
                    with_diff(plan, file_diff, diff)
                }
            };
            plan.notes = notes;
            if !plan.unchanged {
                // Kept if it fits what the plan may keep, once the files before it are taken.
                plan.new = Some(new.into_bytes());
                if plan.action == Action::Modified {
                    plan.old = Some(bytes);
                }
            }
            plan
        }
    };
    if !plan.unchanged {
        plan.notes.extend(other_links_note(&plan));
    }
    Ok(plan)
}

/// `plan` with its line counts, its diff for the combined one (unless it changes nothing).
fn with_diff(mut plan: FilePlan, file_diff: UnifiedDiff, diff: &mut FileDiff) -> FilePlan {
    plan.added = file_diff.added;
    plan.removed = file_diff.removed;
    if !plan.unchanged {
        *diff = Some((plan.given.clone(), file_diff.text));
    }
    plan
}

/// An updated file: `bytes` (the file as read) with the chunks of a [`FilePatch`] applied.
pub(super) struct Patched<'a> {
    /// The file as read, as text (its BOM kept): checked as UTF-8 once, for the patch and the
    /// diff.
    pub old: &'a str,
    /// The new content (its BOM kept).
    pub new: String,
    /// The notes on chunks matched loosely.
    pub notes: Vec<String>,
    /// The lines each chunk replaced and the lines that replaced them, for the diff.
    pub spans: Vec<LineSpan>,
}

/// `bytes` (the file as read) with the chunks of `file` applied.
pub(super) fn patched<'a>(
    file: &FilePatch,
    target: &Target,
    bytes: &'a [u8],
    cx: &Context,
) -> Result<Patched<'a>, ToolError> {
    let PatchChange::Update { path, chunks, .. } = &file.change else {
        unreachable!("only an update is patched");
    };
    let old = text_for_edit(bytes).map_err(|e| {
        e.into_tool_error(&target.path, &cx.names.tool, cx.names.write_file.as_deref())
    })?;
    let (bom, text) = split_bom(old);
    let applied = patch::apply(path, text, chunks, &cx.cancel).map_err(ToolError::from)?;
    let notes = applied.fuzzy.iter().map(|f| f.describe(path)).collect();
    let mut new = applied.text;
    if bom {
        new.insert(0, '\u{FEFF}');
    }
    Ok(Patched {
        old,
        new,
        notes,
        spans: applied.spans,
    })
}

/// The diff of an updated file, `--- a/<old>` / `+++ b/<new>` as git prints it: only the lines
/// its chunks changed (`spans`) are compared.
fn file_diff(
    old: &str,
    new: &str,
    spans: &[LineSpan],
    old_label: &str,
    new_label: &str,
    timeout: std::time::Duration,
) -> UnifiedDiff {
    unified_diff_within(
        old,
        new,
        spans,
        &format!("a/{old_label}"),
        &format!("b/{new_label}"),
        timeout,
    )
}
