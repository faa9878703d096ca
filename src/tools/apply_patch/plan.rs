//! Planning a patch, file by file, before anything is asked or written: each file read, its
//! chunks placed, its new content hashed, its diff added to the combined diff — then its old
//! content dropped. What a file's plan keeps is what the commit checks and records (stats and
//! SHA-256s, line counts, notes) and, while the new contents kept stay within `patchMaxBytes`
//! in all, its new content; past that, the commit derives each new content again, one file at a
//! time, and checks it is the planned one. So memory does not grow with the number or size of
//! the files while the patch is planned and asked about; the change handed to the executor
//! holds every new content (at most `patchMaxTotalBytes` in all). What a patch reads and writes
//! in all is bounded up front ([`Budget`]).

use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use super::combined_diff::CombinedDiff;
use super::{Names, Resolved};
use crate::cancel::CancelToken;
use crate::change::Action;
use crate::error::{ErrorCode, ToolError};
use crate::hashing::sha256_hex;
use crate::options::Limits;
use crate::paths::fsops;
use crate::paths::shown::Shown;
use crate::paths::EntryKind;
use crate::paths::Target;
use crate::text::decode::{decode_for_edit, TextFile};
use crate::text::diff::{all_added, unified_diff, UnifiedDiff};
use crate::text::patch::{self, FileChange as PatchChange, FilePatch};
use crate::tools::files;

/// What is at a path now, as planned on.
pub(super) struct Existing {
    pub stat: crate::paths::Stat,
    /// The SHA-256 of its bytes (a symlink: of nothing).
    pub sha256: String,
}

/// A file the patch writes: where, the SHA-256 of what, and what it replaces there (to the
/// trash first).
pub(super) struct Write {
    pub target: Target,
    pub sha256: String,
    pub replaced: Option<Existing>,
}

/// One file of the patch, planned.
pub(super) struct Planned {
    /// The file's section in the patch (the commit derives its new content from it again).
    pub file: usize,
    /// The new content of an updated file, if the plan keeps it (else the commit derives it
    /// again).
    pub new: Option<Vec<u8>>,
    /// `A`, `M` or `D` and the path as the patch wrote it (a move: its new path).
    pub letter: char,
    pub given: String,
    pub action: Action,
    pub write: Option<Write>,
    /// The entry removed: a deleted file, or a moved one's source.
    pub remove: Option<(Target, Existing)>,
    /// Keep the removed entry's content in the trash (deletes always; a moved source when its
    /// content changes and overwrites are kept).
    pub archive_removed: bool,
    /// Keep the replaced content in the trash (an update when overwrites are kept; whatever an
    /// added or moved file lands on, always).
    pub archive_replaced: bool,
    /// How many lines its diff adds and removes.
    pub added: usize,
    pub removed: usize,
    pub notes: Vec<String>,
    /// Nothing to do for this file (already as the patch says).
    pub unchanged: bool,
}

pub(super) enum Planning {
    AlreadyApplied,
    Plans(Vec<Planned>, CombinedDiff),
}

/// What a patch may still read and write (`patchMaxTotalBytes`): every file it reads (updated,
/// deleted, moved or replaced) at its size before, plus every file it writes at its size after.
pub(super) struct Budget {
    limit: u64,
    used: u64,
}

impl Budget {
    pub fn new(limits: &Limits) -> Self {
        Budget {
            limit: limits.patch_max_total_bytes,
            used: 0,
        }
    }

    /// Counts `bytes` read or written at `path`; `TOO_LARGE` once the total is over the limit.
    fn spend(&mut self, bytes: u64, path: &Path) -> Result<(), ToolError> {
        self.used = self.used.saturating_add(bytes);
        if self.used <= self.limit {
            return Ok(());
        }
        Err(ToolError::new(
            ErrorCode::TooLarge,
            format!(
                "the patch reads and writes more than {} bytes in all (patchMaxTotalBytes: its files before and after, summed), reached at {}; split it into several patches that each change fewer or smaller files",
                self.limit,
                path.shown()
            ),
        ))
    }
}

/// How much new content the plan keeps for the commit: up to `patchMaxBytes` in all (the size
/// of a patch, so a usual patch is never derived twice), never more than 256 MiB.
struct Keeping {
    left: u64,
}

impl Keeping {
    fn new(max_bytes: u64) -> Self {
        Keeping {
            left: max_bytes.min(256 << 20),
        }
    }

    /// `new`, if it still fits.
    fn keep(&mut self, new: Vec<u8>) -> Option<Vec<u8>> {
        let len = new.len() as u64;
        (len <= self.left).then(|| {
            self.left -= len;
            new
        })
    }
}

/// What planning and committing a file need besides the file.
pub(super) struct Context {
    pub limits: Limits,
    /// The workspace root (diff labels are relative to it).
    pub root: PathBuf,
    pub keep_overwrites: bool,
    pub names: Names,
    pub cancel: CancelToken,
    /// Whether a missing file was deleted (or moved away) by an earlier change: deleting it
    /// again is part of a patch already applied, not a path that never existed.
    pub deleted_by_a_change: Box<dyn Fn(&Path) -> bool + Send + Sync>,
}

/// Plans every file, adding each one's diff to the combined diff (at most `patchMaxBytes` of
/// it); a patch that is already applied is said so (a retry never applies twice). An abort
/// stops the planning (before each file, and between the chunks of one).
pub(super) fn plan_all(
    files: &[FilePatch],
    resolved: &[Resolved],
    cx: &Context,
) -> Result<Planning, ToolError> {
    let mut budget = Budget::new(&cx.limits);
    let mut diff = CombinedDiff::new(cx.limits.patch_max_bytes);
    let mut kept = Keeping::new(cx.limits.patch_max_bytes);
    let mut plans = Vec::with_capacity(files.len());
    let mut failure = None;
    for (index, (file, at)) in files.iter().zip(resolved).enumerate() {
        if cx.cancel.is_aborted() {
            return Err(ToolError::aborted());
        }
        match plan_file(index, file, at, cx, &mut budget, &mut diff, &mut kept) {
            Ok(plan) => plans.push(plan),
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
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

fn plan_file(
    index: usize,
    file: &FilePatch,
    at: &Resolved,
    cx: &Context,
    budget: &mut Budget,
    diff: &mut CombinedDiff,
    kept: &mut Keeping,
) -> Result<Planned, ToolError> {
    let label = |t: &Target| files::diff_label(&t.path, &cx.root);
    let timeout = std::time::Duration::from_millis(cx.limits.diff_timeout_ms);
    let planned = |letter, given: &str, action| Planned {
        file: index,
        new: None,
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
                Some((_, old)) => {
                    file_diff(old, text, &label(&at.target), &label(&at.target), timeout)
                }
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
            let text = String::from_utf8_lossy(&bytes);
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
            let (old, bytes) = read(&at.target, &cx.limits, false, budget)?.ok_or_else(|| {
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
            let (new, notes) = patched(file, &at.target, &bytes, cx)?;
            budget.spend(new.len() as u64, &at.target.path)?;
            let sha256 = sha256_hex(&new);
            let changed = sha256 != old.sha256;
            let new_text = String::from_utf8_lossy(&new);
            let mut plan = match (&at.destination, move_to) {
                (Some(destination), Some(to)) => {
                    let replaced = read(destination, &cx.limits, false, budget)?;
                    let mut file_diff = file_diff(
                        &bytes,
                        &new_text,
                        &label(&at.target),
                        &label(destination),
                        timeout,
                    );
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
                _ => {
                    let file_diff = file_diff(
                        &bytes,
                        &new_text,
                        &label(&at.target),
                        &label(&at.target),
                        timeout,
                    );
                    let mut plan = planned('M', path, Action::Modified);
                    plan.unchanged = !changed;
                    plan.archive_replaced = cx.keep_overwrites;
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
                plan.new = kept.keep(new);
            }
            plan
        }
    };
    if !plan.unchanged {
        plan.notes.extend(other_links_note(&plan));
    }
    Ok(plan)
}

/// `plan` with its line counts, its diff added to the combined one (unless it changes nothing).
fn with_diff(mut plan: Planned, file_diff: UnifiedDiff, diff: &mut CombinedDiff) -> Planned {
    plan.added = file_diff.added;
    plan.removed = file_diff.removed;
    if !plan.unchanged {
        diff.push(&plan.given, &file_diff.text);
    }
    plan
}

/// An updated file's new bytes (its BOM kept) and the notes on chunks matched loosely: `bytes`
/// (the file as read) with the chunks of `file` applied.
pub(super) fn patched(
    file: &FilePatch,
    target: &Target,
    bytes: &[u8],
    cx: &Context,
) -> Result<(Vec<u8>, Vec<String>), ToolError> {
    let PatchChange::Update { path, chunks, .. } = &file.change else {
        unreachable!("only an update is patched");
    };
    let decoded = decode_for_edit(bytes).map_err(|e| {
        e.into_tool_error(&target.path, &cx.names.tool, cx.names.write_file.as_deref())
    })?;
    let applied = patch::apply(path, &decoded.text, chunks, &cx.cancel).map_err(ToolError::from)?;
    let notes = applied.fuzzy.iter().map(|f| f.describe(path)).collect();
    let new = TextFile {
        bom: decoded.bom,
        text: applied.text,
    }
    .to_bytes();
    Ok((new, notes))
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

/// The entry a plan reads and rewrites or removes, with its role.
fn read_entries(plan: &Planned) -> impl Iterator<Item = (&Target, &Existing, bool)> {
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
fn other_links_note(plan: &Planned) -> Option<String> {
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
fn refuse_two_names_of_one_file(plans: &[Planned], files: &[FilePatch]) -> Result<(), ToolError> {
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

/// What is at `target` now, and its bytes: `None` when nothing is. A directory is
/// `NOT_A_FILE`; FIFOs and the like are refused; a symlink is taken as itself only when
/// `links` (a delete). Its size counts against `budget` before it is read.
pub(super) fn read(
    target: &Target,
    limits: &Limits,
    links: bool,
    budget: &mut Budget,
) -> Result<Option<(Existing, Vec<u8>)>, ToolError> {
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
                let existing = Existing {
                    stat: stat.expect("matched"),
                    sha256: sha256_hex(&[]),
                };
                return Ok(Some((existing, Vec::new())));
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
    let too_large = || {
        ToolError::new(
            ErrorCode::TooLarge,
            format!(
                "{} is {} bytes, over the edit limit of {} bytes (editMaxFileBytes); apply_patch cannot change it",
                target.path.shown(),
                opened.stat.size,
                limits.edit_max_file_bytes
            ),
        )
    };
    if opened.stat.size > limits.edit_max_file_bytes {
        return Err(too_large());
    }
    budget.spend(opened.stat.size, &target.path)?;
    let bytes = files::read_at_most(
        &mut opened.file,
        limits.edit_max_file_bytes,
        "read",
        &target.path,
    )?
    .ok_or_else(too_large)?;
    let existing = Existing {
        stat: opened.stat,
        sha256: sha256_hex(&bytes),
    };
    Ok(Some((existing, bytes)))
}

/// Whether every file is already as the patch says: added files exist with the patch's text,
/// deleted ones are gone — deleted by a change, since a path that never existed says nothing
/// about the patch —, updated ones (moved ones at their destination, the source gone)
/// already have their chunks' change. Reads one file at a time, within the same budget.
fn already_applied(files: &[FilePatch], resolved: &[Resolved], cx: &Context) -> bool {
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

/// The text of the file at `t`, if it is one that decodes.
fn text_of(t: &Target, limits: &Limits, budget: &mut Budget) -> Option<String> {
    let (_, bytes) = read(t, limits, false, budget).ok()??;
    decode_for_edit(&bytes).ok().map(|d| d.text)
}
