//! The one question a whole patch asks: granted when every file's single-file permission is;
//! a line per file with its lines added and removed, then the totals.

use std::path::Path;

use super::planned::FilePlan;
use crate::call::Authorization;
use crate::change::Action;
use crate::confirm::{FilesSummary, Summary};
use crate::paths::shown::Shown;
use crate::permissions::Operation;
use crate::tools::blast_radius;

/// One prompt for the whole patch (../../../docs/tools.md#apply_patch): granted when every file's single-file permission
/// is; the detail has a line per file with its lines added and removed, then the totals.
pub(super) fn authorization(
    plans: &[FilePlan],
    diff: String,
    keep_overwrites: bool,
) -> Authorization<'_> {
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
