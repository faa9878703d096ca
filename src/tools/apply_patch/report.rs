//! What the model reads of a patch applied: the files, the notes (files changed since it saw
//! them, loose matches, other links), where the trashed files went, and the diff.

use std::path::Path;

use super::commit::Committed;
use super::planned::FilePlan;
use crate::call::{changed_note, Call, Success};
use crate::options::Limits;
use crate::paths::shown::Shown;
use crate::text::bounded::bounded;
use crate::tools::files;
use crate::views::View;

/// The line saying which of the files the patch changes had changed since the model last saw
/// them (../../../docs/tools.md#stale-views: not refused, but said).
pub(super) fn changed_since_seen(call: &Call, plans: &[FilePlan]) -> Option<String> {
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

pub(super) fn success(
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
