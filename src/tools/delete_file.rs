//! `delete_file`: remove a file or a symlink (the link itself, never its target) into the
//! recoverable trash, or permanently when asked (which always asks the user).

use std::ffi::OsStr;
use std::io::ErrorKind;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::Path;

use serde::Deserialize;
use serde_json::{json, Value};

use super::files::{self, file_not_found};
use super::trashing::{in_trash, put_in_trash};
use super::{object_schema, parse_args, ToolSpec};
use crate::call::{Authorization, BoxFuture, Call, Outcome, Success, ToolNames};
use crate::change::{Action, FileChange};
use crate::error::{ErrorCode, ToolError};
use crate::options::WorkspaceOptions;
use crate::paths::fsops::{self, RemoveError};
use crate::paths::sandbox::FinalLink;
use crate::paths::shown::Shown;
use crate::paths::{EntryKind, Stat};
use crate::permissions::Operation;

pub static SPEC: ToolSpec = ToolSpec {
    name: "delete_file",
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
    let restore = names.hint("restore_file", |restore| format!(", to pass to {restore}"));
    let remove_dir = names.hint("remove_dir", |remove_dir| {
        format!(" For a directory use {remove_dir}.")
    });
    format!(
        "Delete a file or a symbolic link (the link itself, not its target). It goes to the recoverable trash, and \
the result names its archive{restore}. permanent: true keeps no copy, and the user is always asked.{remove_dir}"
    )
}

fn schema() -> Value {
    object_schema(
        json!({
            "path": { "type": "string", "minLength": 1, "description": "The file or symbolic link to delete, absolute or relative to the current working directory." },
            "permanent": { "type": "boolean", "description": "Delete without keeping a recoverable copy in the trash (the user is always asked). Default false." },
        }),
        &["path"],
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: String,
    #[serde(default)]
    permanent: bool,
}

fn format_call(args: &Value) -> String {
    super::format_path_flag(args, &["permanent"])
}

fn run(call: &Call, args: Value) -> BoxFuture<'_, Outcome> {
    Box::pin(async move {
        let args: Args = parse_args("delete_file", args)?;
        let target = call.resolve(&args.path, "path", FinalLink::Keep)?;
        crate::paths::resolve::file_path_not_directory_syntax(&args.path, "path", &target.path)?;
        let lock = call.lock_for_change(&[&target.path]).await?;
        let is_a_directory = match call.names.offered("remove_dir") {
            Some(remove_dir) => format!("is a directory, use {remove_dir} instead"),
            None => format!(
                "is a directory, and {} deletes only files and symbolic links",
                call.tool_name
            ),
        };
        let planned = target.clone();
        let inode = call
            .reading(move || {
                if planned.split().is_none() {
                    // The root of the file system.
                    return Err(ToolError::new(
                        ErrorCode::NotAFile,
                        format!("{} {is_a_directory}", planned.path.shown()),
                    ));
                }
                let (parent, name) = files::open_parent(&planned, "delete")?;
                let stat = fsops::lstat_at(parent.as_fd(), &name)
                    .map_err(|e| ToolError::io(&e, "delete", &planned.path))?
                    .ok_or_else(|| file_not_found(&planned.path))?;
                match EntryKind::of(&stat) {
                    EntryKind::Directory => Err(ToolError::new(
                        ErrorCode::NotAFile,
                        format!("{} {is_a_directory}", planned.path.shown()),
                    )),
                    EntryKind::Special => Err(files::not_regular(&planned.path)),
                    _ => Ok(fsops::identity(&stat)),
                }
            })
            .await?;
        let detail = if args.permanent {
            format!("{} (permanent)", target.path.shown())
        } else {
            target.path.shown().into_owned()
        };
        call.authorize(Authorization {
            always_ask: args.permanent,
            detail,
            permanent: args.permanent.then_some(true),
            ..Authorization::of(
                Operation::Remove,
                &target,
                "Remove file?",
                "The user denied this remove.",
            )
        })
        .await?;
        let _lock = lock.exclusive().await;
        let (ws, committed, cancel, permanent) = (
            call.ws.clone(),
            target.clone(),
            call.cancel.clone(),
            args.permanent,
        );
        let archived = call
            .blocking(move || {
                let (parent, name) = files::open_parent(&committed, "delete")?;
                if permanent {
                    delete_permanently(parent.as_fd(), &name, inode, &committed.path)?;
                    return Ok(None);
                }
                put_in_trash(&ws, parent.as_fd(), &name, &committed.path, true, &cancel).map(Some)
            })
            .await?;
        let mut success = Success::text(format!("Removed {}", target.path.shown()))
            .with_data("path", target.path.shown().into_owned());
        let mut change = FileChange::new(target.path, Action::Deleted);
        if let Some(archived) = archived {
            success
                .output
                .push_str(&in_trash(call, "It", &archived.archive_path));
            success = success.with_data("trashedTo", archived.archive_path.shown().into_owned());
            change.sha256_before = Some(archived.metadata.original_sha256);
            change.trashed_to = Some(archived.archive_path);
        } else {
            success.output.push_str(" permanently (no copy was kept).");
            change.undo.permanent = true;
        }
        Ok(success.with_change(change))
    })
}

/// Unlinks `name` in `parent` if it is still the file `inode` the user confirmed
/// (`fsops::remove_exact`: checked after it is renamed aside, so nothing swapped in under the
/// name is removed).
fn delete_permanently(
    parent: BorrowedFd<'_>,
    name: &OsStr,
    inode: (u64, u64),
    path: &Path,
) -> Result<(), ToolError> {
    let confirmed = |now: &Stat| fsops::identity(now) == inode;
    fsops::remove_exact(parent, name, &confirmed).map_err(|e| match e {
        RemoveError::Io { error, kept: None } if error.kind() != ErrorKind::NotFound => {
            ToolError::io(&error, "delete", path)
        }
        RemoveError::Io { kept, .. } | RemoveError::NotExpected { kept } => {
            let mut message = format!(
                "{} changed while waiting for confirmation; nothing was deleted. Look at it again and retry",
                path.shown()
            );
            if let Some(kept) = kept {
                message.push_str(&format!(
                    ". What took its place meanwhile was kept as {}",
                    path.with_file_name(kept).shown()
                ));
            }
            ToolError::new(ErrorCode::Conflict, message)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::format_call;
    use crate::error::ErrorCode;
    use crate::paths::fsops::race_point::{self, RacePoint};
    use crate::tools::testing::{exchange, TestWorkspace};
    use serde_json::json;

    /// `f/` and `f/.` name a directory: the file `f` is not deleted through them.
    #[tokio::test]
    async fn a_directory_form_never_deletes_the_file() {
        let ws = TestWorkspace::new();
        std::fs::write(ws.root.join("f"), "keep\n").unwrap();
        for raw in ["f/", "f/.", "./f/./"] {
            let result = ws.call("delete_file", json!({ "path": raw })).await;
            assert_eq!(
                result.code,
                Some(ErrorCode::InvalidArguments),
                "{raw}: {}",
                result.output
            );
            assert!(
                result.output.contains("names a directory"),
                "{}",
                result.output
            );
            assert_eq!(ws.read("f"), "keep\n");
        }
    }

    /// The root of the file system is a directory like any other: the tool for it is named.
    #[tokio::test]
    async fn the_root_is_a_directory_for_remove_dir() {
        let ws = TestWorkspace::new();
        let result = ws.call("delete_file", json!({ "path": "/" })).await;
        assert_eq!(result.code, Some(ErrorCode::NotAFile), "{}", result.output);
        assert_eq!(result.output, "/ is a directory, use remove_dir instead");
    }

    #[test]
    fn format_call_is_the_path_and_permanent() {
        assert_eq!(format_call(&json!({ "path": "a.txt" })), "a.txt");
        assert_eq!(
            format_call(&json!({ "path": "a.txt", "permanent": true })),
            "a.txt (permanent)"
        );
    }

    /// Another file swapped in under the name after the last check is not removed, to the
    /// trash or permanently: only the entry that was checked (and archived) may go.
    #[tokio::test]
    async fn a_file_swapped_in_after_the_check_is_kept() {
        for permanent in [false, true] {
            let ws = TestWorkspace::new();
            let name = format!("df-swapped-{permanent}.txt");
            let (path, other) = (ws.root.join(&name), ws.root.join("df-other.txt"));
            std::fs::write(&path, "to delete\n").unwrap();
            std::fs::write(&other, "another file\n").unwrap();
            race_point::at(RacePoint::BeforeRemove, &name, move || {
                exchange(&path, &other)
            });
            let args = json!({ "path": name, "permanent": permanent });
            let result = ws.call("delete_file", args).await;
            assert_eq!(result.code, Some(ErrorCode::Conflict), "{}", result.output);
            let mut contents = vec![ws.read(&name), ws.read("df-other.txt")];
            contents.sort();
            assert_eq!(contents, ["another file\n", "to delete\n"]);
            assert_eq!(ws.names().len(), 2, "{:?}", ws.names());
        }
    }
}
