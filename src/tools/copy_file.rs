//! `copy_file`: copy a file, a symlink (as a link) or a whole directory tree (links inside as
//! links; FIFOs, sockets and devices refused before anything is written). The copy is built
//! under a journaled temp name beside the destination and placed by one commit with its history
//! record, so a failure or a kill leaves nothing. An existing destination is replaced only with
//! `overwrite: true`, after it has gone to the trash; replacing a tree always asks.

use std::io;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{json, Value};

use super::destination;
use super::files;
use super::trashing::in_trash;
use super::{blast_radius, object_schema, parse_args, ToolSpec};
use crate::call::execute::{execute, CopyFailed, CopyMade, Done, Failure};
use crate::call::plan::{Act, ChangePlan, Expect, Found, Keep, Place, Step};
use crate::call::trashing::{ensure_bucket_writable, trash_error};
use crate::call::{Authorization, BoxFuture, Call, Outcome, Recorded, Success, ToolNames};
use crate::cancel::CancelToken;
use crate::change::{Action, EntryFacts, FileChange};
use crate::error::{ErrorCode, ToolError};
use crate::history::Heading;
use crate::options::WorkspaceOptions;
use crate::paths::fsops;
use crate::paths::sandbox::FinalLink;
use crate::paths::shown::Shown;
use crate::paths::tree_count::{count_tree_at, Budget};
use crate::paths::trees::CopyError;
use crate::paths::{EntryKind, Stat, Target};
use crate::permissions::Operation;
use crate::progress::Meter;
use crate::text::quantity::{human_bytes, quantity};
use crate::trash::Archived;
use crate::workspace::Workspace;

pub static SPEC: ToolSpec = ToolSpec {
    name: "copy_file",
    description,
    schema,
    mutates: true,
    destructive: true,
    idempotent: false,
    asks: true,
    path_argument: Some("source"),
    format_call,
    run,
};

fn description(_: &ToolNames, _: &WorkspaceOptions) -> String {
    "Copy a file, a symbolic link (the link itself) or a whole directory tree (links inside stay links; FIFOs, sockets \
and devices are refused). destination is the path of the copy, not a directory to copy into; its missing parents are \
created. The copy appears all at once, with content, permissions and modification times. An existing destination is an \
error unless overwrite is true: then it goes to the recoverable trash first, and when it is a directory the user is \
always asked."
        .to_owned()
}

fn schema() -> Value {
    object_schema(
        json!({
            "source": { "type": "string", "minLength": 1, "description": "The file, link or directory to copy, absolute or relative to the current working directory." },
            "destination": { "type": "string", "minLength": 1, "description": "The path of the copy (not the directory to copy it into), absolute or relative to the current working directory." },
            "overwrite": { "type": "boolean", "description": "Replace an existing destination (it goes to the trash first). Default false." },
        }),
        &["source", "destination"],
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    source: String,
    destination: String,
    #[serde(default)]
    overwrite: bool,
}

fn format_call(args: &Value) -> String {
    let get = |k: &str| args.get(k).and_then(Value::as_str).unwrap_or("");
    super::with_flags(
        format!("{} → {}", get("source"), get("destination")),
        args,
        &["overwrite"],
    )
}

/// What planning found: the source, what is at the destination, and the tree it would replace.
struct Planned {
    source: Stat,
    replaced: Option<Stat>,
    replaced_tree: Option<crate::paths::tree_count::TreeCount>,
}

fn run(call: &Call, args: Value) -> BoxFuture<'_, Outcome> {
    Box::pin(async move {
        let args: Args = parse_args("copy_file", args)?;
        let source = call.resolve(&args.source, "source", FinalLink::Keep)?;
        let destination = call.resolve(&args.destination, "destination", FinalLink::Keep)?;
        destination::refuse_dangerous(&call.ws, &destination.path)?;
        if destination.path == source.path {
            return Err(ToolError::invalid(format!(
                "{}: invalid arguments: source and destination are the same path ({}); nothing to copy. Give the path of the copy as destination",
                call.tool_name,
                destination.path.shown()
            ))
            .into());
        }
        if destination.path.starts_with(&source.path) {
            return Err(ToolError::invalid(format!(
                "{}: invalid arguments: destination {} is inside the source; a directory cannot be copied into itself. Choose a destination outside the source",
                call.tool_name,
                destination.path.shown()
            ))
            .into());
        }
        let lock = call
            .lock_for_change(&[&source.path, &destination.path])
            .await?;
        let (src, dst, overwrite) = (source.clone(), destination.clone(), args.overwrite);
        let (tool, given, cancel) = (
            call.tool_name.clone(),
            args.destination.clone(),
            call.cancel.clone(),
        );
        let found = call
            .reading(move || plan(&src, &dst, overwrite, &tool, &given, &cancel))
            .await?;
        let replaced_tree =
            destination::replaces_tree(found.replaced_tree.as_ref(), &destination.path);
        call.authorize(Authorization {
            needs: vec![
                (Operation::Read, source.inside_root),
                (Operation::Write, destination.inside_root),
            ],
            always_ask: replaced_tree.is_some(),
            label: "Copy file?",
            path: &source.path,
            paths: vec![
                (&source.path, source.inside_root),
                (&destination.path, destination.inside_root),
            ],
            detail: format!(
                "{} → {}{}",
                source.path.shown(),
                destination.path.shown(),
                replaced_tree.as_deref().unwrap_or("")
            ),
            diff: None,
            recursive: replaced_tree.is_some().then_some(true),
            permanent: None,
            summary: found
                .replaced_tree
                .as_ref()
                .map(|count| blast_radius::tree_summary(&destination.path, count)),
            denial: "The user denied this copy.",
        })
        .await?;
        let _lock = lock.exclusive().await;
        let meter = match &found.replaced_tree {
            Some(replaced) => blast_radius::trash_meter(&call.progress, replaced),
            None => Meter::none(),
        };
        let copying = Copying {
            source: source.clone(),
            destination: destination.clone(),
            planned: found.source,
            replaced: found.replaced,
        };
        let (ws, heading, cancel) = (call.ws.clone(), call.heading.clone(), call.cancel.clone());
        let made = call
            .blocking(move || meter.scoped(|| copying.make(&ws, &heading, &cancel)))
            .await?;
        if let Some(seen) = &made.seen {
            call.saw(&destination.path, seen);
        }
        let mut output = format!(
            "Copied {} → {}",
            source.path.shown(),
            destination.path.shown()
        );
        if let (EntryKind::Directory, Some(copy)) = (found.source.kind(), &made.copy) {
            output.push_str(&format!(" ({})", counts(copy)));
        }
        let mut success = Success::text(output)
            .with_data("source", source.path.shown().into_owned())
            .with_data("destination", destination.path.shown().into_owned());
        if let Some(archived) = &made.archived {
            let subject = format!("The previous {}", destination.path.shown());
            success
                .output
                .push_str(&in_trash(call, &subject, &archived.archive_path));
            success = success.with_data("trashedTo", archived.archive_path.shown().into_owned());
        }
        success = success.with_change(made.change);
        success.recorded = made.recorded;
        Ok(success)
    })
}

/// `N files, M directories, K links` of a copied tree (every kind named, none left out).
fn counts(copy: &CopyMade) -> String {
    let c = copy.counts;
    format!(
        "{}, {}, {}",
        quantity(c.files, "file", "files"),
        quantity(c.dirs, "directory", "directories"),
        quantity(c.links, "link", "links")
    )
}

/// Reads what the copy needs before anything is asked: the source (missing: `NOT_FOUND`; a
/// special file, or one inside the tree: refused), what is at the destination (refused without
/// `overwrite`; a tree is counted for the question), and whether the copy fits there.
fn plan(
    source: &Target,
    destination: &Target,
    overwrite: bool,
    tool: &str,
    given: &str,
    cancel: &CancelToken,
) -> Result<Planned, ToolError> {
    let (src_parent, src_name) = files::open_parent(source, "copy")?;
    let src_stat = fsops::lstat_at(src_parent.as_fd(), &src_name)
        .map_err(|e| ToolError::io(&e, "copy", &source.path))?
        .ok_or_else(|| {
            ToolError::new(
                ErrorCode::NotFound,
                format!("source not found: {}; check the path", source.path.shown()),
            )
        })?;
    let needed = match src_stat.kind() {
        EntryKind::Special => return Err(special(&source.path, &source.path)),
        EntryKind::File => allocated(&src_stat),
        EntryKind::Symlink => 0,
        EntryKind::Directory => {
            let all = Budget {
                deadline: std::time::Instant::now() + std::time::Duration::from_secs(86_400),
                max_entries: u64::MAX,
            };
            let count = count_tree_at(src_parent.as_fd(), &src_name, all, &|| cancel.is_aborted())
                .map_err(|e| ToolError::io(&e, "look into", &source.path))?;
            if cancel.is_aborted() {
                return Err(ToolError::aborted());
            }
            if let Some(inside) = &count.special {
                return Err(special(&source.path, &source.path.join(inside)));
            }
            count.allocated
        }
    };
    let dst_stat = match files::open_parent(destination, "copy to") {
        Ok((parent, name)) => fsops::lstat_at(parent.as_fd(), &name)
            .map_err(|e| ToolError::io(&e, "copy to", &destination.path))?,
        Err(e) if e.code == ErrorCode::NotFound => None,
        Err(e) => return Err(e),
    };
    if let Some(d) = &dst_stat {
        if d.identity() == src_stat.identity() {
            return Err(ToolError::invalid(format!(
                "{tool}: invalid arguments: source and destination are the same file ({}); nothing to copy. Give another destination",
                destination.path.shown()
            )));
        }
        if !overwrite && d.kind() == EntryKind::Directory {
            return Err(onto_a_directory(&destination.path, given, &source.path));
        }
        if !overwrite {
            return Err(ToolError::new(
                ErrorCode::AlreadyExists,
                format!(
                    "{} already exists; pass overwrite: true to replace it (the existing one goes to the trash first), or choose another destination",
                    destination.path.shown()
                ),
            ));
        }
    }
    fits(source, destination, needed)?;
    let existing = dst_stat.as_ref().map(Stat::kind);
    let replaced_tree = destination::count_replaced(destination, existing, cancel)?;
    Ok(Planned {
        source: src_stat,
        replaced: dst_stat,
        replaced_tree,
    })
}

/// The bytes a copy of the regular file `stat` takes: what it has allocated (holes take
/// nothing; a copy keeps them).
fn allocated(stat: &Stat) -> u64 {
    stat.blocks.saturating_mul(512)
}

/// Refuses (`TOO_LARGE`, before anything is written) a copy of `needed` bytes that the file
/// system of `destination` has no room for. The directory asked is the deepest one of the
/// destination's that exists (the others are made for the copy, on the same file system).
fn fits(source: &Target, destination: &Target, needed: u64) -> Result<(), ToolError> {
    let mut dir = destination.path.parent();
    let free = loop {
        let Some(at) = dir.filter(|at| at.starts_with(&destination.anchor)) else {
            return Ok(()); // nothing to ask (cannot happen beneath an allowed tree)
        };
        match fsops::open_dir(&destination.anchor, at, false) {
            Ok(fd) => {
                break fsops::free_space(fd.as_fd())
                    .map_err(|e| ToolError::io(&e, "look at the free space of", at))?
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => dir = at.parent(),
            Err(e) => return Err(ToolError::io(&e, "copy to", &destination.path)),
        }
    };
    match too_large(needed, free) {
        false => Ok(()),
        true => Err(ToolError::new(
            ErrorCode::TooLarge,
            format!(
                "copying {} needs {} and the file system of {} has {} free; nothing was written. Free some space there or choose another destination",
                source.path.shown(),
                human_bytes(needed),
                destination.path.shown(),
                human_bytes(free)
            ),
        )),
    }
}

/// Whether a copy of `needed` bytes does not fit in `free` bytes.
fn too_large(needed: u64, free: u64) -> bool {
    needed > free
}

/// A FIFO, socket or device at `entry` (the source itself, or inside it).
fn special(source: &Path, entry: &Path) -> ToolError {
    let what = if entry == source {
        format!("{} is", source.shown())
    } else {
        format!("{} holds {}, which is", source.shown(), entry.shown())
    };
    ToolError::new(
        ErrorCode::NotARegularFile,
        format!(
            "cannot copy {}: {what} a FIFO, socket or device, which cannot be copied; nothing was written. Copy the regular files and directories around it instead",
            source.shown()
        ),
    )
}

/// A copy onto an existing directory without `overwrite`: the model most likely meant to copy
/// into it, which is not what `destination` means (see `move_file`'s twin).
fn onto_a_directory(destination: &Path, given: &str, source: &Path) -> ToolError {
    let name = source
        .file_name()
        .map(|n| Path::new(n).shown().into_owned())
        .unwrap_or_default();
    let inside = format!("{}/{name}", given.trim_end_matches('/'));
    let inside = serde_json::to_string(&crate::paths::shown::echo(&inside)).unwrap_or_default();
    ToolError::new(
        ErrorCode::AlreadyExists,
        format!(
            "{} already exists and is a directory. destination is the path of the copy, not a directory to copy into: to copy into that directory, give destination {inside}. overwrite: true would replace the entire directory and everything in it (it goes to the trash)",
            destination.shown()
        ),
    )
}

/// A confirmed copy, made once the lock is exclusive.
struct Copying {
    source: Target,
    destination: Target,
    /// The source as planned on (the entry copied must still be it).
    planned: Stat,
    /// What was at the destination when planned (it goes to the trash first).
    replaced: Option<Stat>,
}

/// What the copy made.
struct Made {
    /// What the copy step built (always there once the change is made).
    copy: Option<CopyMade>,
    archived: Option<Archived>,
    change: FileChange,
    recorded: Recorded,
    seen: Option<crate::views::Seen>,
}

impl Copying {
    /// Copies the source beside the destination and places it as one change with its history
    /// record (a kill leaves both or neither), the destination's old entry archived first.
    fn make(
        &self,
        ws: &Workspace,
        heading: &Heading,
        cancel: &CancelToken,
    ) -> Result<Made, ToolError> {
        let dst = &self.destination.path;
        let at = Place::of(&self.destination).ok_or_else(|| files::is_a_directory(dst))?;
        let from =
            Place::of(&self.source).ok_or_else(|| files::is_a_directory(&self.source.path))?;
        let mut steps = Vec::new();
        if let Some(replaced) = self.replaced {
            ensure_bucket_writable(ws, dst)?;
            steps.push(Step {
                at: at.clone(),
                expect: Expect::Entry { stat: replaced },
                keep: Keep::Archive,
                act: Act::Remove,
            });
        }
        // Built at the topmost directory missing from its path, with the others inside it: the
        // parents made for the copy are there with it or not at all (also after a kill).
        let created_dirs = files::missing_parents(&self.destination);
        let (at, below) = match created_dirs.first() {
            None => (at, PathBuf::new()),
            Some(top) => {
                let below = dst.strip_prefix(top).unwrap_or(dst).to_owned();
                let top = Target {
                    path: top.clone(),
                    ..self.destination.clone()
                };
                (Place::of(&top).unwrap_or(at), below)
            }
        };
        steps.push(Step {
            at,
            expect: Expect::Nothing,
            keep: Keep::Nothing,
            act: Act::Copy {
                from,
                source: self.planned,
                below,
            },
        });
        let replaced_a_file = self.replaced.is_some_and(|r| r.kind() == EntryKind::File);
        let mut seen = None;
        let files = |done: &Done| {
            let action = if replaced_a_file {
                Action::Modified
            } else {
                Action::Added
            };
            let mut change = FileChange::new(dst.clone(), action);
            if let Some(archived) = done.archives.first().and_then(Option::as_ref) {
                change.sha256_before = Some(archived.metadata.original_sha256.clone());
                change.trashed_to = Some(archived.archive_path.clone());
            }
            change.sha256_after = done.copies.last().cloned().flatten().and_then(|c| c.sha256);
            if let Ok((parent, name)) = files::open_parent(&self.destination, "copy to") {
                change.undo.entry = EntryFacts::of_entry(parent.as_fd(), &name);
                seen = files::file_stat_at(parent.as_fd(), &name);
            }
            change.undo.created_dirs = created_dirs.clone();
            vec![change]
        };
        let plan = ChangePlan {
            consume: Vec::new(),
            steps,
        };
        let copy_step = plan.steps.len() - 1;
        match execute(ws, plan, heading, cancel, files) {
            Ok(mut executed) => Ok(Made {
                copy: executed.done.copies.pop().flatten(),
                archived: executed.done.archives.first_mut().and_then(Option::take),
                change: executed
                    .files
                    .pop()
                    .unwrap_or_else(|| FileChange::new(dst.clone(), Action::Added)),
                recorded: executed.recorded,
                seen,
            }),
            Err(e) => Err(self.failed(e.step == copy_step, e.failure)),
        }
    }

    /// The failure of the change as the model reads it (nothing was copied or replaced);
    /// `at_copy`: the copy step failed (else the removal of the old destination).
    fn failed(&self, at_copy: bool, failure: Failure) -> ToolError {
        let (src, dst) = (&self.source.path, &self.destination.path);
        let changed = |path: &Path| {
            ToolError::new(
                ErrorCode::Conflict,
                format!(
                    "{} changed while waiting for confirmation; nothing was copied. Look at it again and retry",
                    path.shown()
                ),
            )
        };
        match failure {
            // At the copy step, a name taken is the destination's; anything else the source's.
            Failure::NotAsExpected(Found::Taken) => changed(dst),
            Failure::NotAsExpected(_) if at_copy => changed(src),
            Failure::NotAsExpected(_) | Failure::Changed { .. } => changed(dst),
            Failure::Trash(e) => trash_error(e, "trash", dst),
            Failure::Io(e) => match CopyFailed::of(&e) {
                Some(copy) => self.copy_error(copy),
                None => ToolError::io(&e, "copy to", dst),
            },
            Failure::Invalid(why) => ToolError::io(&io::Error::other(why), "copy", src),
        }
    }

    fn copy_error(&self, e: &CopyError) -> ToolError {
        let src = &self.source.path;
        let inside = |relative: &Path| -> PathBuf {
            if relative.as_os_str().is_empty() {
                src.to_owned()
            } else {
                src.join(relative)
            }
        };
        match e {
            CopyError::Aborted => ToolError::aborted(),
            CopyError::Special(relative) => special(src, &inside(relative)),
            CopyError::Changed(relative) => ToolError::new(
                ErrorCode::Conflict,
                format!(
                    "cannot copy {}: {} changed while it was being copied; nothing was written. Retry once nothing writes to it",
                    src.shown(),
                    inside(relative).shown()
                ),
            ),
            CopyError::Io(e, relative) => {
                let mut error = ToolError::io(e, "copy", &inside(relative));
                error.message.push_str("; nothing was written");
                error
            }
        }
    }
}

#[cfg(test)]
#[path = "copy_file_tests.rs"]
mod tests;
