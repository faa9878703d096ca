//! Whether a patch is already applied, so that a retry is answered so and never applied twice.

use super::budget::Budget;
use super::context::Context;
use super::read::{read, text_of};
use super::resolve::Resolved;
use crate::paths::Target;
use crate::text::patch::{self, FilePatch, PatchChange};

/// Whether every file is already as the patch says: added files exist with the patch's text,
/// deleted ones are gone — deleted by a change, since a path that never existed says nothing
/// about the patch —, updated ones (moved ones at their destination, the source gone)
/// already have their chunks' change. Reads one file at a time, within the same budget.
pub(super) fn already_applied(files: &[FilePatch], resolved: &[Resolved], cx: &Context) -> bool {
    let mut budget = Budget::new(&cx.limits);
    let budget = &mut budget;
    let applied_at = |t: &Target, chunks, budget: &mut Budget| {
        text_of(t, &cx.limits, budget).is_some_and(|t| patch::is_applied(&t, chunks, &cx.cancel))
    };
    files
        .iter()
        .zip(resolved)
        .all(|(file, at)| match &file.change {
            PatchChange::Add { text, .. } => {
                text_of(&at.target, &cx.limits, budget).as_deref() == Some(text.as_str())
            }
            PatchChange::Delete { .. } => {
                matches!(read(&at.target, &cx.limits, true, budget), Ok(None))
                    && (cx.deleted_by_a_change)(&at.target.path)
            }
            PatchChange::Update { chunks, .. } => match &at.destination {
                Some(destination) => {
                    matches!(read(&at.target, &cx.limits, false, budget), Ok(None))
                        && applied_at(destination, chunks, budget)
                }
                None => applied_at(&at.target, chunks, budget),
            },
        })
}
