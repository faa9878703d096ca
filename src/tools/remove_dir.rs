//! `remove_dir`: remove an empty directory, or with `recursive: true` a whole tree into one trash
//! archive (or permanently). Recursive removal always asks the user, whatever the permissions;
//! the filesystem root, the home directory, the workspace root and its ancestors, and the trash
//! are refused before any prompt. Every removal is one change on the engine, with its record.

use std::io;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{json, Value};

use super::trashing::in_trash;
use super::{blast_radius, files};
use super::{object_schema, parse_args, ToolSpec};
use crate::call::execute::{execute, Done, Failure};
use crate::call::plan::{Act, ChangePlan, Expect, Found, Keep, Place, Step};
use crate::call::trashing::{ensure_bucket_writable, trash_error};
use crate::call::{Authorization, BoxFuture, Call, Outcome, Recorded, Success, ToolNames};
use crate::cancel::CancelToken;
use crate::change::{Action, FileChange};
use crate::error::{ErrorCode, ToolError};
use crate::history::Heading;
use crate::options::WorkspaceOptions;
use crate::paths::fsops;
use crate::paths::sandbox::{identity_of, FinalLink};
use crate::paths::shown::Shown;
use crate::paths::trees::MountPointInside;
use crate::paths::AsDir;
use crate::paths::{EntryKind, Target};
use crate::permissions::Operation;
use crate::progress::Meter;
use crate::trash::{Archived, TrashError};
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
    summarizes_itself: false,
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
    let home = ws
        .home()
        .and_then(|h| crate::paths::canonical::canonicalize_existing(h).ok());
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
                let stat = fsops::lstat_at(parent.as_dir(), &name)
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
                    if !is_empty(&planned)? {
                        return Err(not_empty(&planned.path));
                    }
                    return Ok(None);
                }
                blast_radius::count_tree(parent.as_dir(), &name, &planned.path, &cancel).map(Some)
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
        let heading = call.heading.clone();
        let removal = Removal {
            recursive: args.recursive,
            permanent: args.permanent,
        };
        let meter = match &counted {
            Some(counted) if !removal.permanent => {
                blast_radius::trash_meter(&call.progress, counted)
            }
            _ => Meter::none(),
        };
        let removed = call
            .blocking(move || meter.scoped(|| removal.make(&ws, &committed, &heading, &cancel)))
            .await?;
        let how = if args.recursive { " recursively" } else { "" };
        let mut success = Success::text(format!("Removed {}{how}", target.path.shown()))
            .with_data("path", target.path.shown().into_owned())
            .with_data("recursive", args.recursive);
        let Removed {
            archived,
            empty_mode,
            recorded,
        } = removed;
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
        success = success.with_change(change);
        success.recorded = recorded;
        Ok(success)
    })
}

/// A confirmed removal, made once the lock is exclusive.
#[derive(Clone, Copy)]
struct Removal {
    recursive: bool,
    permanent: bool,
}

/// What a removal made.
struct Removed {
    /// The tree's archive, held until the call reported it.
    archived: Option<Archived>,
    /// An empty directory's mode, for undo to make it again.
    empty_mode: Option<u32>,
    recorded: Recorded,
}

impl Removal {
    /// Removes the directory at `target` as one change with its history record (the record
    /// rides in the commit: a kill leaves both or neither): an empty one only while empty; a
    /// tree archived first, set aside whole, checked against the archive and removed after
    /// the commit point; permanently, set aside whole and removed after the commit point as
    /// `rm -r` does, leaving a mount point met inside in place (with what holds it, back at
    /// its name).
    fn make(
        self,
        ws: &Workspace,
        target: &Target,
        heading: &Heading,
        cancel: &CancelToken,
    ) -> Result<Removed, ToolError> {
        let path = &target.path;
        let (parent, name) = files::open_parent(target, "remove")?;
        let gone = || ToolError::io(&io::Error::from(io::ErrorKind::NotFound), "remove", path);
        let stat = fsops::lstat_at(parent.as_dir(), &name)
            .map_err(|e| ToolError::io(&e, "remove", path))?
            .ok_or_else(|| match self.recursive && !self.permanent {
                true => trash_error(TrashError::NotFound, "trash", path),
                false => gone(),
            })?;
        if stat.kind() != EntryKind::Directory {
            return Err(self.changed(path));
        }
        let at = Place::of(target).ok_or_else(gone)?;
        let (expect, keep) = match (self.recursive, self.permanent) {
            (true, true) => {
                if fsops::is_mount_point(parent.as_dir(), &name).unwrap_or(false) {
                    return Err(mount_point_kept(path, Path::new(&name)));
                }
                (Expect::Entry { stat }, Keep::Nothing)
            }
            (true, false) => {
                ensure_bucket_writable(ws, path)?;
                (Expect::Entry { stat }, Keep::Archive)
            }
            (false, _) => {
                if !is_empty(target)? {
                    return Err(not_empty(path));
                }
                (Expect::EmptyDir { stat }, Keep::Nothing)
            }
        };
        let step = Step {
            at,
            expect,
            keep,
            act: Act::Remove,
        };
        let empty_mode = (!self.recursive).then(|| stat.permissions());
        let plan = ChangePlan {
            steps: vec![step],
            consume: Vec::new(),
        };
        let files = |done: &Done| {
            let mut change = FileChange::new(path.clone(), Action::Removed);
            change.undo.dir_mode = empty_mode;
            change.undo.permanent = self.recursive && self.permanent;
            if let Some(archived) = done.archives.first().and_then(Option::as_ref) {
                change.sha256_before = Some(archived.metadata.original_sha256.clone());
                change.trashed_to = Some(archived.archive_path.clone());
            }
            vec![change]
        };
        let mut executed = match execute(ws, plan, heading, cancel, files) {
            Ok(executed) => executed,
            Err(e) => return Err(self.failed(target, e.failure)),
        };
        if let Some((_, e)) = executed.left.pop() {
            // Removed and recorded, but for what the system would not remove: it stays.
            let archive = executed.done.archives.first().and_then(Option::as_ref);
            return Err(match MountPointInside::of(&e) {
                // By its path from the set-aside name, which the rest went back from.
                Some(rel) => {
                    let rel: PathBuf =
                        Path::new(&name).join(rel.components().skip(1).collect::<PathBuf>());
                    match archive {
                        Some(archived) => mount_point_trashed(path, &rel, &archived.archive_path),
                        None => mount_point_kept(path, &rel),
                    }
                }
                None => ToolError::io(&e, "remove", path),
            });
        }
        Ok(Removed {
            archived: executed.done.archives.pop().flatten(),
            empty_mode,
            recorded: executed.recorded,
        })
    }

    /// The failure of the change as the model reads it; nothing was removed.
    fn failed(&self, target: &Target, failure: Failure) -> ToolError {
        let path = &target.path;
        match failure {
            Failure::Trash(e) => trash_error(e, "trash", path),
            Failure::NotAsExpected(Found::Gone) if self.recursive => {
                trash_error(TrashError::NotFound, "trash", path)
            }
            Failure::NotAsExpected(Found::Gone) => {
                ToolError::io(&io::Error::from(io::ErrorKind::NotFound), "remove", path)
            }
            Failure::NotAsExpected(_) | Failure::Changed { .. } => {
                // An empty directory that gained an entry meanwhile is what rmdir would refuse.
                if !self.recursive && is_empty(target).is_ok_and(|empty| !empty) {
                    return not_empty(path);
                }
                self.changed(path)
            }
            Failure::Io(e) => ToolError::io(&e, "remove", path),
            Failure::Invalid(why) => ToolError::io(&io::Error::other(why), "remove", path),
        }
    }

    /// Another entry took the name, or the tree changed, before it was removed.
    fn changed(&self, path: &Path) -> ToolError {
        let why = format!("{} changed while it was being removed", path.shown());
        if self.recursive {
            return trash_error(TrashError::Conflict(why), "trash", path);
        }
        ToolError::new(
            ErrorCode::Conflict,
            format!("{why}; nothing was removed. Look at it again and retry"),
        )
    }
}

/// Whether the directory at `target` is empty.
fn is_empty(target: &Target) -> Result<bool, ToolError> {
    let dir = fsops::open_dir(&target.anchor, &target.path, false)
        .map_err(|e| ToolError::io(&e, "remove", &target.path))?;
    let names =
        fsops::list_names(dir.as_dir()).map_err(|e| ToolError::io(&e, "list", &target.path))?;
    Ok(names.is_empty())
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

/// A removal to the trash met the mount point `rel` (from `path`'s directory) only once the
/// tree was archived and recorded (the system refused to remove it as busy: where no mount id
/// tells a bind mount, or one mounted meanwhile). What the mount showed was archived and removed
/// with the rest; the mount point stays, with the emptied directories that hold it.
fn mount_point_trashed(path: &Path, rel: &Path, archive: &Path) -> ToolError {
    let mount = path.parent().unwrap_or(path).join(rel);
    ToolError::new(
        ErrorCode::DangerousPath,
        format!(
            "{path} was moved to the trash, but {mount} is a mount point (another file system, \
             or a bind mount, is mounted there) that could not be told before: what it showed \
             went to the trash with the rest, and it stays, empty, with the directories that \
             hold it. Nothing is lost: all of {path} is in {archive}. Unmount {mount} and remove \
             what is left of {path}, then restore_file or undo brings the tree back if it was \
             not meant to go",
            path = path.shown(),
            mount = mount.shown(),
            archive = archive.shown(),
        ),
    )
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
    use crate::testing::TestWorkspace;

    /// A removal (an empty directory, a tree to the trash, a tree removed permanently) is one
    /// change made with its record: the history lists the directory (an empty one with its
    /// mode, a tree with its archive, a permanent removal as permanent), and nothing of the
    /// change (temp names, journal records) is left.
    #[tokio::test]
    async fn the_removal_and_its_record_are_made_as_one_change() {
        for (recursive, permanent) in [(false, false), (true, false), (true, true)] {
            let ws = TestWorkspace::new();
            std::fs::create_dir_all(ws.root.join("d/sub")).unwrap();
            if recursive {
                std::fs::write(ws.root.join("d/sub/f.txt"), "bye\n").unwrap();
            } else {
                std::fs::remove_dir(ws.root.join("d/sub")).unwrap();
            }
            let args = json!({ "path": "d", "recursive": recursive, "permanent": permanent });
            let result = ws.call("remove_dir", args).await;
            assert_eq!(result.code, None, "{}", result.output);
            assert!(ws.names().is_empty(), "{:?}", ws.names());
            let history = ws.settled_history();
            assert_eq!(history.len(), 1);
            let file = &history[0].record.files[0];
            assert_eq!(file.path, ws.root.join("d"));
            assert_eq!(file.trashed_to.is_some(), recursive && !permanent);
            assert_eq!(file.permanent, recursive && permanent);
        }
    }

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
