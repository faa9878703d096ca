//! `move_file`: move or rename a file, symlink or directory. An existing destination is replaced
//! only with `overwrite: true`, after it has been put into the trash; if the move then fails, the
//! destination is restored from that archive.
//!
//! Within one file system a move is one `rename`. Across file systems (`EXDEV`) the source is
//! copied beside the destination under a journaled temp name, the destination's file system is
//! synced, the copy is renamed into place, and only then is the source removed, entry by entry,
//! leaving whatever changed since it was copied. A failure before the rename leaves the source
//! untouched and removes the partial copy; a crash leaves the temp copy to the next `Workspace`.

use std::ffi::OsStr;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::Path;

use serde::Deserialize;
use serde_json::{json, Value};

use super::blast_radius;
use super::destination::{self, Destination};
use super::files;
use super::trashing::{in_trash, put_back, trash_error};
use super::{object_schema, parse_args, ToolSpec};
use crate::call::{Authorization, BoxFuture, Call, Outcome, Success, ToolNames};
use crate::change::{Action, FileChange};
use crate::error::{ErrorCode, ToolError};
use crate::options::WorkspaceOptions;
use crate::paths::fsops;
use crate::paths::os_error::{cause, Cause};
use crate::paths::sandbox::FinalLink;
use crate::paths::shown::Shown;
use crate::paths::trees::{self, Copied, CopyError, Removal};
use crate::paths::EntryKind;
use crate::permissions::Operation;
use crate::progress::Meter;
use crate::trash::Archived;
use crate::workspace::Workspace;

pub static SPEC: ToolSpec = ToolSpec {
    name: "move_file",
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
    "Move or rename a file, symbolic link or directory. destination is the new path, not a directory to move \
into; its missing parents are created. An existing destination is an error unless overwrite is true: then it goes to \
the recoverable trash first, and when it is a directory, the whole tree goes and the user is always asked."
        .to_owned()
}

fn schema() -> Value {
    object_schema(
        json!({
            "source": { "type": "string", "minLength": 1, "description": "The file, link or directory to move, absolute or relative to the current working directory." },
            "destination": { "type": "string", "minLength": 1, "description": "Its new path (not the directory to move it into), absolute or relative to the current working directory." },
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

fn run(call: &Call, args: Value) -> BoxFuture<'_, Outcome> {
    Box::pin(async move {
        let args: Args = parse_args("move_file", args)?;
        let source = call.resolve(&args.source, "source", FinalLink::Keep)?;
        let destination = call.resolve(&args.destination, "destination", FinalLink::Keep)?;
        let sandbox = call.ws.sandbox();
        if sandbox.holds_root(&source.path) || sandbox.contains_hidden(&source.path) {
            return Err(ToolError::new(
                ErrorCode::DangerousPath,
                format!("{} is the workspace root, an ancestor of it, or holds the agent-fs-tools data directory; it cannot be moved. Move specific entries inside it instead", source.path.shown()),
            )
            .into());
        }
        destination::refuse_dangerous(&call.ws, &destination.path)?;
        if destination.path == source.path {
            return Err(ToolError::invalid(format!(
                "{}: invalid arguments: source and destination are the same path ({}); nothing to move. Give the new path as destination",
                call.tool_name,
                destination.path.shown()
            ))
            .into());
        }
        if destination.path.starts_with(&source.path) {
            return Err(ToolError::invalid(format!(
                "{}: invalid arguments: destination {} is the source or inside it; a directory cannot be moved into itself. Choose a destination outside the source",
                call.tool_name,
                destination.path.shown()
            ))
            .into());
        }
        let lock = call
            .lock_for_change(&[&source.path, &destination.path])
            .await?;
        let (src, dst, overwrite) = (source.clone(), destination.clone(), args.overwrite);
        let tool = call.tool_name.clone();
        let cancel = call.cancel.clone();
        let given = args.destination.clone();
        let (source_inode, destination_existed, replaced) = call
            .reading(move || {
                let (src_parent, src_name) = files::open_parent(&src, "move")?;
                let src_stat = fsops::lstat_at(src_parent.as_fd(), &src_name)
                    .map_err(|e| ToolError::io(&e, "move", &src.path))?
                    .ok_or_else(|| ToolError::new(ErrorCode::NotFound, format!("source not found: {}; check the path", src.path.shown())))?;
                let dst_stat = match files::open_parent(&dst, "move to") {
                    Ok((parent, name)) => fsops::lstat_at(parent.as_fd(), &name).map_err(|e| ToolError::io(&e, "move to", &dst.path))?,
                    Err(e) if e.code == ErrorCode::NotFound => None,
                    Err(e) => return Err(e),
                };
                if let Some(d) = &dst_stat {
                    if fsops::identity(d) == fsops::identity(&src_stat) {
                        return Err(ToolError::invalid(format!(
                            "{tool}: invalid arguments: source and destination are the same file ({}); nothing to move. Give another destination",
                            dst.path.shown()
                        )));
                    }
                    if !overwrite && EntryKind::of(d) == EntryKind::Directory {
                        return Err(onto_a_directory(&dst.path, &given, &src.path));
                    }
                    if !overwrite {
                        return Err(ToolError::new(
                            ErrorCode::AlreadyExists,
                            format!(
                                "{} already exists; pass overwrite: true to replace it (the existing one goes to the trash first), or choose another destination",
                                dst.path.shown()
                            ),
                        ));
                    }
                }
                let existing = dst_stat.as_ref().map(EntryKind::of);
                let replaced = destination::count_replaced(&dst, existing, &cancel)?;
                Ok((fsops::identity(&src_stat), existing, replaced))
            })
            .await?;
        let replaced_tree = destination::replaces_tree(replaced.as_ref(), &destination.path);
        call.authorize(Authorization {
            needs: vec![
                (Operation::Write, destination.inside_root),
                (Operation::Remove, source.inside_root),
            ],
            always_ask: replaced_tree.is_some(),
            label: "Move file?",
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
            summary: replaced
                .as_ref()
                .map(|count| blast_radius::tree_summary(&destination.path, count)),
            denial: "The user denied this move.",
        })
        .await?;
        let _lock = lock.exclusive().await;
        let (ws, src, dst, cancel) = (
            call.ws.clone(),
            source.clone(),
            destination.clone(),
            call.cancel.clone(),
        );
        let removers: Vec<String> = ["delete_file", "remove_dir"]
            .into_iter()
            .filter_map(|tool| call.names.offered(tool).map(str::to_owned))
            .collect();
        let meter = match &replaced {
            Some(replaced) => blast_radius::trash_meter(&call.progress, replaced),
            None => Meter::none(),
        };
        let archived = call
            .blocking(move || {
                meter.scoped(|| {
                    let (src_parent, src_name) = files::open_parent(&src, "move")?;
                    let now = fsops::lstat_at(src_parent.as_fd(), &src_name)
                        .map_err(|e| ToolError::io(&e, "move", &src.path))?;
                    if now.as_ref().map(fsops::identity) != Some(source_inode) {
                        return Err(files::changed_since_planned(&src.path));
                    }
                    let Destination {
                        parent: dst_parent,
                        parent_path: dst_parent_path,
                        name: dst_name,
                        replaced: archived,
                        created_dirs,
                    } = destination::prepare(&ws, &dst, destination_existed, &cancel)?;
                    let moved = match fsops::rename_noreplace(
                        src_parent.as_fd(),
                        &src_name,
                        dst_parent.as_fd(),
                        dst_name,
                    ) {
                        Ok(()) => Ok(None),
                        Err(e) if cause(&e) == Cause::CrossDevice => {
                            let places = Places {
                                src_parent: src_parent.as_fd(),
                                src_name: &src_name,
                                src_path: &src.path,
                                dst_parent: dst_parent.as_fd(),
                                dst_parent_path,
                                dst_name,
                                dst_path: &dst.path,
                            };
                            copy_into_place(&ws, &places, &|| cancel.is_aborted()).map(Some)
                        }
                        Err(e) => Err(ToolError::io(&e, "move", &src.path)),
                    };
                    let copied = match moved {
                        Ok(copied) => copied,
                        Err(mut error) => {
                            if let Some(archived) = &archived {
                                match put_back(
                                    &ws,
                                    archived,
                                    dst_parent_path,
                                    dst_parent.as_fd(),
                                    dst_name,
                                ) {
                                    Ok(_) => error
                                        .message
                                        .push_str("; the destination was restored as it was"),
                                    Err(re) => error.message.push_str(&format!(
                                        "; the previous destination is in the trash at {} ({})",
                                        archived.archive_path.shown(),
                                        trash_error(re, "restore", &dst.path).message
                                    )),
                                }
                            }
                            return Err(error);
                        }
                    };
                    fsops::fsync_dir(dst_parent.as_fd());
                    if let Some(copied) = copied {
                        // Removed entry by entry: a kill leaves at most entries under temp
                        // names, which the next Workspace removes (they are at the destination).
                        let src_parent_path = src.path.parent().unwrap_or(&src.path);
                        ws.journal().with_removal(
                            src_parent_path,
                            src_parent.as_fd(),
                            &src_name,
                            || {
                                remove_copied_source(
                                    src_parent.as_fd(),
                                    &src_name,
                                    &src.path,
                                    &dst.path,
                                    &copied,
                                    archived.as_ref(),
                                    &removers,
                                )
                            },
                        )?;
                    }
                    fsops::fsync_dir(src_parent.as_fd());
                    let moved = files::entry_facts(dst_parent.as_fd(), dst_name);
                    let file = files::file_stat_at(dst_parent.as_fd(), dst_name);
                    Ok((archived, moved, created_dirs, file))
                })
            })
            .await?;
        let (archived, moved, created_dirs, file) = archived;
        // The model's view moves with what it moved; a moved file is as the move left it.
        call.ws.seen().moved(&source.path, &destination.path);
        if let Some(seen) = &file {
            call.saw(&destination.path, seen);
        }
        let mut success = Success::text(format!(
            "Moved {} → {}",
            source.path.shown(),
            destination.path.shown()
        ))
        .with_data("source", source.path.shown().into_owned())
        .with_data("destination", destination.path.shown().into_owned());
        let mut change = FileChange {
            from: Some(source.path.clone()),
            ..FileChange::new(destination.path.clone(), Action::Moved)
        };
        change.undo.entry = moved;
        change.undo.created_dirs = created_dirs;
        if let Some(archived) = archived {
            let subject = format!("The previous {}", destination.path.shown());
            success
                .output
                .push_str(&in_trash(call, &subject, &archived.archive_path));
            success = success.with_data("trashedTo", archived.archive_path.shown().into_owned());
            change.sha256_before = Some(archived.metadata.original_sha256);
            change.trashed_to = Some(archived.archive_path);
        }
        Ok(success.with_change(change))
    })
}

/// A move onto an existing directory without `overwrite`: the model most likely meant to move
/// the entry into it, which is not what `destination` means. Says what it is, the path that
/// would do that (`given`, the destination as the model wrote it, joined with the source's
/// name), and what `overwrite` would do instead.
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
            "{} already exists and is a directory. destination is the new path of what you move, not a directory to move it into: to move it into that directory, give destination {inside}. overwrite: true would replace the entire directory and everything in it (it goes to the trash)",
            destination.shown()
        ),
    )
}

/// Where a move between file systems copies from and to.
struct Places<'a> {
    src_parent: BorrowedFd<'a>,
    src_name: &'a OsStr,
    src_path: &'a Path,
    dst_parent: BorrowedFd<'a>,
    dst_parent_path: &'a Path,
    dst_name: &'a OsStr,
    dst_path: &'a Path,
}

/// `rename` cannot cross file systems: copies the source beside the destination under a journaled
/// temp name, makes the copy durable and renames it into place. On failure the partial copy is
/// removed and the source is untouched.
fn copy_into_place(
    ws: &Workspace,
    at: &Places<'_>,
    aborted: &dyn Fn() -> bool,
) -> Result<Copied, ToolError> {
    let temp = fsops::temp_name(at.dst_name);
    ws.journal()
        .with_temp(at.dst_parent_path, at.dst_parent, &temp, || {
            let committed =
                trees::copy_tree_at(at.src_parent, at.src_name, at.dst_parent, &temp, aborted)
                    .map_err(|e| copy_error(e, at))
                    .and_then(|copied| {
                        fsops::sync_new_tree(at.dst_parent)
                            .map_err(|e| ToolError::io(&e, "sync the copy of", at.src_path))?;
                        fsops::rename_noreplace(at.dst_parent, &temp, at.dst_parent, at.dst_name)
                            .map_err(|e| ToolError::io(&e, "move to", at.dst_path))?;
                        Ok(copied)
                    });
            if committed.is_err() {
                let _ = trees::remove_tree_at(at.dst_parent, &temp, Removal::OWN_TEMP);
            }
            committed
        })
}

fn copy_error(e: CopyError, at: &Places<'_>) -> ToolError {
    let (src, dst) = (at.src_path.shown(), at.dst_path.shown());
    let inside = |relative: &Path| {
        if relative.as_os_str().is_empty() {
            at.src_path.to_owned()
        } else {
            at.src_path.join(relative)
        }
    };
    let mut error = match e {
        CopyError::Aborted => return ToolError::aborted(),
        CopyError::Special(relative) => ToolError::new(
            ErrorCode::NotARegularFile,
            format!(
                "cannot move {src} to {dst}: {} is a FIFO, socket or device, which cannot be copied to another file system",
                inside(&relative).shown()
            ),
        ),
        CopyError::Changed(relative) => ToolError::new(
            ErrorCode::Conflict,
            format!(
                "cannot move {src} to {dst}: {} changed while it was being copied to the other file system; retry once nothing writes to it",
                inside(&relative).shown()
            ),
        ),
        CopyError::Io(e, relative) => ToolError::io(&e, "copy", &inside(&relative)),
    };
    error.message.push_str(&format!(
        " (moving to {dst}, on another file system); nothing was moved"
    ));
    error
}

/// After the copy is in place: removes the source, except entries that changed since they were
/// copied (or appeared meanwhile), which stay where they are. Any such leftover is an error that
/// says the destination is complete, so the model neither retries the move nor assumes the source
/// is gone.
fn remove_copied_source(
    src_parent: BorrowedFd<'_>,
    src_name: &OsStr,
    src_path: &Path,
    dst_path: &Path,
    copied: &Copied,
    archived: Option<&Archived>,
    removers: &[String],
) -> Result<(), ToolError> {
    let changed = |stat: &crate::paths::Stat| !copied.unchanged(stat);
    let how = Removal {
        make_writable: false,
        keep: Some(&changed),
    };
    let mut error = match trees::remove_tree_at(src_parent, src_name, how) {
        Ok(0) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Ok(kept) => ToolError::new(
            ErrorCode::Conflict,
            format!(
                "copied {} to {dst} (another file system), but {} in {} changed or appeared while it was being moved and {} left there; {dst} has the rest",
                src_path.shown(),
                super::quantity(kept, "entry", "entries"),
                src_path.shown(),
                if kept == 1 { "was" } else { "were" },
                dst = dst_path.shown(),
            ),
        ),
        Err(e) => {
            let mut error = ToolError::io(&e, "remove the moved", src_path);
            let remove = match removers {
                [] => "what is left of the source can be removed by the user".to_owned(),
                _ => format!("what is left of the source can be removed with {}", removers.join(" or ")),
            };
            error.message = format!(
                "copied {} to {} (another file system), which is complete, but {}; {remove}",
                src_path.shown(),
                dst_path.shown(),
                error.message
            );
            error
        }
    };
    if let Some(archived) = archived {
        error.message.push_str(&format!(
            "; the previous {} is in the trash at {}",
            dst_path.shown(),
            archived.archive_path.shown()
        ));
    }
    Err(error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_call_is_source_to_destination_and_overwrite() {
        let f = |args: Value| format_call(&args);
        assert_eq!(f(json!({ "source": "a", "destination": "b" })), "a → b");
        assert_eq!(
            f(json!({ "source": "a", "destination": "b", "overwrite": true })),
            "a → b (overwrite)"
        );
    }
}
