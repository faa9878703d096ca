//! `remove_dir`: remove an empty directory, or with `recursive: true` a whole tree into one trash
//! archive (or permanently). Recursive removal always asks the user, whatever the permissions;
//! the filesystem root, the home directory, the workspace root and its ancestors, and the trash
//! are refused before any prompt.

use std::os::fd::AsFd;
use std::path::Path;

use serde::Deserialize;
use serde_json::{json, Value};

use super::trashing::{in_trash, put_in_trash};
use super::{blast_radius, files};
use super::{object_schema, parse_args, ToolSpec};
use crate::call::{Authorization, BoxFuture, Call, Outcome, Success, ToolNames};
use crate::change::{Action, FileChange};
use crate::error::{ErrorCode, ToolError};
use crate::options::WorkspaceOptions;
use crate::paths::fsops;
use crate::paths::os_error::{cause, Cause};
use crate::paths::sandbox::{identity_of, FinalLink};
use crate::paths::shown::Shown;
use crate::paths::trees::{self, MountPointInside, Removal};
use crate::paths::EntryKind;
use crate::permissions::Operation;
use crate::progress::Meter;
use crate::workspace::Workspace;

pub static SPEC: ToolSpec = ToolSpec {
    name: "remove_dir",
    description,
    schema,
    mutates: true,
    destructive: true,
    idempotent: false,
    asks: true,
    path_argument: Some("path"),
    format_call,
    run,
};

fn description(names: &ToolNames, _: &WorkspaceOptions) -> String {
    let restore = names.hint("restore_file", |restore| {
        format!(" ({restore} brings it back)")
    });
    let delete = names.hint("delete_file", |delete| format!(" For a file use {delete}."));
    format!(
        "Remove a directory. Without recursive only an empty one; with recursive: true the whole tree goes to the \
recoverable trash as one archive{restore}, and the user is always asked. permanent: true keeps no copy. Always \
refused: the filesystem root, the home directory, the workspace root and its parents, and the trash.{delete}"
    )
}

fn schema() -> Value {
    object_schema(
        json!({
            "path": { "type": "string", "minLength": 1, "description": "The directory to remove, absolute or relative to the current working directory." },
            "recursive": { "type": "boolean", "description": "Remove the directory with everything inside it (into the trash unless permanent). Default false: only an empty directory." },
            "permanent": { "type": "boolean", "description": "Do not keep a recoverable copy in the trash (the user is always asked). Default false." },
        }),
        &["path"],
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: String,
    #[serde(default)]
    recursive: bool,
    #[serde(default)]
    permanent: bool,
}

fn format_call(args: &Value) -> String {
    super::format_path_flag(args, &["recursive", "permanent"])
}

/// Whether `a` and `b` are the same existing entry (device and inode), whatever their names.
fn same_entry(a: &Path, b: &Path) -> bool {
    let a = identity_of(a);
    a.is_some() && a == identity_of(b)
}

/// Why `path` must never be removed, if it must not.
fn danger(ws: &Workspace, path: &Path) -> Option<&'static str> {
    let home = ws.home().and_then(|h| std::fs::canonicalize(h).ok());
    if path == Path::new("/") {
        Some("the filesystem root")
    } else if home.is_some_and(|home| home == path || same_entry(&home, path)) {
        Some("the home directory")
    } else if ws.sandbox().is_root(path) {
        Some("the workspace root")
    } else if ws.sandbox().holds_root(path) {
        Some("an ancestor of the workspace root")
    } else if ws.sandbox().contains_hidden(path) {
        Some("a directory holding agent-fs-tools' own data (its trash, history and audit log, which no tool changes)")
    } else {
        None
    }
}

fn run(call: &Call, args: Value) -> BoxFuture<'_, Outcome> {
    Box::pin(async move {
        let args: Args = parse_args("remove_dir", args)?;
        let canonical = call.canonical(&args.path, "path", FinalLink::Keep)?;
        if call.ws.sandbox().is_hidden(&canonical.path) {
            return Err(ToolError::new(
                ErrorCode::DangerousPath,
                format!("{} is agent-fs-tools' own data (its trash, history and audit log), which no tool changes; nothing was removed. Leave it as it is: it is the user's to manage", canonical.path.shown()),
            )
            .into());
        }
        if let Some(why) = danger(&call.ws, &canonical.path) {
            return Err(ToolError::new(
                ErrorCode::DangerousPath,
                format!("{} is {why}; {} refuses to remove it. Remove specific entries inside it instead", canonical.path.shown(), call.tool_name),
            )
            .into());
        }
        let target = call.ws.sandbox().check(&args.path, canonical)?;
        let lock = call.lock_for_change(&[&target.path]).await?;
        // What to do with a file or a link instead: the tool for it, if it is offered.
        let (file_instead, link_instead) = match call.names.offered("delete_file") {
            Some(delete) => (
                format!(", use {delete} instead"),
                format!(", use {delete} instead (it removes the link, not its target)"),
            ),
            None => {
                let only = format!("; {} removes only directories", call.tool_name);
                (only.clone(), only)
            }
        };
        let (planned, recursive) = (target.clone(), args.recursive);
        let cancel = call.cancel.clone();
        // The blast radius of a recursive removal, counted before asking.
        let counted = call
            .reading(move || {
                let (parent, name) = files::open_parent(&planned, "remove")?;
                let p = planned.path.shown();
                let stat = fsops::lstat_at(parent.as_fd(), &name)
                    .map_err(|e| ToolError::io(&e, "remove", &planned.path))?
                    .ok_or_else(|| {
                        ToolError::new(ErrorCode::NotFound, format!("{p} does not exist"))
                    })?;
                match EntryKind::of(&stat) {
                    EntryKind::Directory => {}
                    EntryKind::Symlink => {
                        return Err(ToolError::new(
                            ErrorCode::NotADirectory,
                            format!("{p} is a symbolic link{link_instead}"),
                        ))
                    }
                    _ => {
                        return Err(ToolError::new(
                            ErrorCode::NotADirectory,
                            format!("{p} is a file{file_instead}"),
                        ))
                    }
                }
                if !recursive {
                    let dir = fsops::open_dir(&planned.anchor, &planned.path, false)
                        .map_err(|e| ToolError::io(&e, "remove", &planned.path))?;
                    if !fsops::list_names(dir.as_fd())
                        .map_err(|e| ToolError::io(&e, "list", &planned.path))?
                        .is_empty()
                    {
                        return Err(not_empty(&planned.path));
                    }
                    return Ok(None);
                }
                blast_radius::count_tree(parent.as_fd(), &name, &planned.path, &cancel).map(Some)
            })
            .await?;
        let mut detail = target.path.shown().into_owned();
        if args.recursive {
            detail.push_str(" (recursive)");
        }
        if args.permanent {
            detail.push_str(" (permanent)");
        }
        if let Some(counted) = &counted {
            detail.push_str(": ");
            detail.push_str(&blast_radius::describe_tree(counted));
        }
        let label = if args.recursive {
            "Remove directory recursively?"
        } else {
            "Remove directory?"
        };
        call.authorize(Authorization {
            always_ask: args.recursive || args.permanent,
            detail,
            recursive: args.recursive.then_some(true),
            permanent: args.permanent.then_some(true),
            summary: counted
                .as_ref()
                .map(|counted| blast_radius::tree_summary(&target.path, counted)),
            ..Authorization::of(
                Operation::RemoveDir,
                &target,
                label,
                "The user denied this remove.",
            )
        })
        .await?;
        let _lock = lock.exclusive().await;
        let (ws, committed, cancel) = (call.ws.clone(), target.clone(), call.cancel.clone());
        let (recursive, permanent) = (args.recursive, args.permanent);
        let meter = match &counted {
            Some(counted) if !permanent => blast_radius::trash_meter(&call.progress, counted),
            _ => Meter::none(),
        };
        let archived = call
            .blocking(move || {
                let (parent, name) = files::open_parent(&committed, "remove")?;
                let mut empty_mode = None;
                let removed = if !recursive {
                    empty_mode = fsops::lstat_at(parent.as_fd(), &name)
                        .ok()
                        .flatten()
                        .map(|s| fsops::Snapshot::of(&s).permissions());
                    fsops::rmdir_at(parent.as_fd(), &name)
                } else if permanent {
                    trees::remove_tree_at(parent.as_fd(), &name, Removal::EVERYTHING).map(drop)
                } else {
                    return meter
                        .scoped(|| {
                            put_in_trash(&ws, parent.as_fd(), &name, &committed.path, true, &cancel)
                        })
                        .map(|archived| (Some(archived), None));
                };
                removed
                    .map(|()| (None, empty_mode))
                    .map_err(|e| match cause(&e) {
                        Cause::NotEmpty => not_empty(&committed.path),
                        _ => match MountPointInside::of(&e) {
                            Some(rel) => mount_point_kept(&committed.path, rel),
                            None => ToolError::io(&e, "remove", &committed.path),
                        },
                    })
            })
            .await?;
        let how = if args.recursive { " recursively" } else { "" };
        let mut success = Success::text(format!("Removed {}{how}", target.path.shown()))
            .with_data("path", target.path.shown().into_owned())
            .with_data("recursive", args.recursive);
        let (archived, empty_mode) = archived;
        let mut change = FileChange::new(target.path, Action::Removed);
        change.undo.dir_mode = empty_mode;
        if let Some(archived) = archived {
            let subject = format!(
                "The directory, with {} ({}),",
                super::quantity(archived.metadata.file_count.unwrap_or(0), "file", "files"),
                super::bytes(archived.metadata.size)
            );
            success
                .output
                .push_str(&in_trash(call, &subject, &archived.archive_path));
            success = success.with_data("trashedTo", archived.archive_path.shown().into_owned());
            change.sha256_before = Some(archived.metadata.original_sha256);
            change.trashed_to = Some(archived.archive_path);
        } else if args.recursive {
            success
                .output
                .push_str(" and permanently (no copy was kept).");
            change.undo.permanent = true;
        }
        Ok(success.with_change(change))
    })
}

/// A permanent removal of `path` met the mount point `rel` (from `path`'s directory), which it
/// left in place with the directories holding it.
fn mount_point_kept(path: &Path, rel: &Path) -> ToolError {
    let mount = path.parent().unwrap_or(path).join(rel);
    let what = crate::trash::mount_point(&mount.shown());
    let message = if rel.components().count() == 1 {
        format!(
            "cannot remove {}: {what}; nothing was removed",
            path.shown()
        )
    } else {
        format!(
            "{} was only partly removed: {what}. It stays, with the directories that hold it; \
             what else could be removed was removed permanently",
            path.shown()
        )
    };
    ToolError::new(ErrorCode::DangerousPath, message)
}

fn not_empty(path: &Path) -> ToolError {
    ToolError::new(
        ErrorCode::NotEmpty,
        format!(
            "{} is not empty, pass recursive: true to remove the entire tree",
            path.shown()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_call_shows_every_flag_set() {
        let f = |args: Value| format_call(&args);
        assert_eq!(f(json!({ "path": "build" })), "build");
        assert_eq!(
            f(json!({ "path": "build", "recursive": true })),
            "build (recursive)"
        );
        assert_eq!(
            f(json!({ "path": "build", "permanent": true })),
            "build (permanent)"
        );
        assert_eq!(
            f(json!({ "path": "build", "recursive": true, "permanent": true })),
            "build (recursive, permanent)"
        );
        assert_eq!(f(json!({ "path": "build", "recursive": false })), "build");
    }
}
