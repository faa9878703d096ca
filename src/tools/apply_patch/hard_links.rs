//! Files the patch reaches by more than one name (hard links): a note when the other names keep
//! the old content, a refusal when the patch would change one file under two names.

use super::planned::{Existing, FilePlan};
use crate::change::Action;
use crate::error::ToolError;
use crate::paths::fsops;
use crate::paths::shown::Shown;
use crate::paths::{EntryKind, Target};
use crate::text::patch::FilePatch;

/// The entry a plan reads and rewrites or removes, with its role.
fn read_entries(plan: &FilePlan) -> impl Iterator<Item = (&Target, &Existing, bool)> {
    let written = plan
        .write
        .as_ref()
        .and_then(|w| w.replaced.as_ref().map(|r| (&w.target, r, true)));
    let removed = plan
        .remove
        .as_ref()
        .map(|(t, e)| (t, e, plan.action == Action::Moved));
    written.into_iter().chain(removed)
}

/// A note for a file with other hard links: they keep its old content, since the patch writes
/// a new file in its place (as editors that save atomically do).
pub(super) fn other_links_note(plan: &FilePlan) -> Option<String> {
    let (target, existing, _) = read_entries(plan).find(|(_, e, written)| {
        *written && EntryKind::of(&e.stat) == EntryKind::File && fsops::link_count(&e.stat) > 1
    })?;
    Some(format!(
        "{} had {} hard links: the patch wrote a new file in its place, so the other links keep the old content",
        target.path.shown(),
        fsops::link_count(&existing.stat)
    ))
}

/// Two names in the patch for one file (hard links), one of them rewritten or moved: a patch
/// cannot change "both" — writing a new file under one name splits them — so it is refused,
/// like a path named twice. Deleting both names is fine.
pub(super) fn refuse_two_names_of_one_file(
    plans: &[FilePlan],
    files: &[FilePatch],
) -> Result<(), ToolError> {
    let mut seen: Vec<((u64, u64), &Target, bool, usize)> = Vec::new();
    for plan in plans {
        for (target, existing, written) in read_entries(plan) {
            if EntryKind::of(&existing.stat) != EntryKind::File {
                continue;
            }
            let identity = fsops::identity(&existing.stat);
            if let Some((_, first, first_written, first_file)) =
                seen.iter().find(|(id, ..)| *id == identity)
            {
                if written || *first_written {
                    return Err(ToolError::invalid(format!(
                        "apply_patch: invalid arguments: {} (file {}) and {} (file {}, line {}) are two names of one file (hard links); changing it under one name would split them into two files. Name only one of them in the patch",
                        first.path.shown(),
                        first_file + 1,
                        target.path.shown(),
                        plan.file + 1,
                        files[plan.file].line
                    )));
                }
            }
            seen.push((identity, target, written, plan.file));
        }
    }
    Ok(())
}
