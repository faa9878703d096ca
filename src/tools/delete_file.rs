//! `delete_file`: remove a file or a symlink (the link itself, never its target) into the
//! recoverable trash, or permanently when asked (which always asks the user).

use std::ffi::OsString;
use std::io;

use serde::Deserialize;
use serde_json::{json, Value};

use super::files::{self, file_not_found};
use super::trashing::in_trash;
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
use crate::paths::sandbox::FinalLink;
use crate::paths::shown::Shown;
use crate::paths::AsDir;
use crate::paths::{EntryKind, FileId, Stat, Target};
use crate::permissions::Operation;
use crate::trash::{Archived, TrashError};
use crate::workspace::Workspace;

pub static SPEC: ToolSpec = ToolSpec {
    name: "delete_file",
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
        let refusal = is_a_directory.clone();
        let confirmed = call
            .reading(move || {
                inspect(&planned, &refusal)?.ok_or_else(|| file_not_found(&planned.path))
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
        let (ws, committed, permanent) = (call.ws.clone(), target.clone(), args.permanent);
        let (heading, cancel) = (call.heading.clone(), call.cancel.clone());
        let confirmed = confirmed.id();
        let (archived, recorded) = call
            .blocking(move || {
                let deletion = Deletion {
                    target: &committed,
                    permanent,
                    confirmed,
                };
                deletion.make(&ws, &is_a_directory, &heading, &cancel)
            })
            .await?;
        let mut success = Success::text(format!("Removed {}", target.path.shown()))
            .with_data("path", target.path.shown().into_owned());
        let mut change = FileChange::new(target.path, Action::Deleted);
        if let Some(archived) = &archived {
            success
                .output
                .push_str(&in_trash(call, "It", &archived.archive_path));
            success = success.with_data("trashedTo", archived.archive_path.shown().into_owned());
            change.sha256_before = Some(archived.metadata.original_sha256.clone());
            change.trashed_to = Some(archived.archive_path.clone());
        } else {
            success.output.push_str(" permanently (no copy was kept).");
            change.undo.permanent = true;
        }
        success = success.with_change(change);
        success.recorded = recorded;
        Ok(success)
    })
}

/// The file or link at `target` (`None`: nothing there); a directory (`is_a_directory` says
/// what to use instead) or a special file is refused.
fn inspect(target: &Target, is_a_directory: &str) -> Result<Option<Stat>, ToolError> {
    if target.split().is_none() {
        // The root of the file system.
        return Err(ToolError::new(
            ErrorCode::NotAFile,
            format!("{} {is_a_directory}", target.path.shown()),
        ));
    }
    let (parent, name) = files::open_parent(target, "delete")?;
    let stat = fsops::lstat_at(parent.as_dir(), &name)
        .map_err(|e| ToolError::io(&e, "delete", &target.path))?;
    match stat.as_ref().map(EntryKind::of) {
        Some(EntryKind::Directory) => Err(ToolError::new(
            ErrorCode::NotAFile,
            format!("{} {is_a_directory}", target.path.shown()),
        )),
        Some(EntryKind::Special) => Err(files::not_regular(&target.path)),
        _ => Ok(stat),
    }
}

/// A confirmed deletion, made once the lock is exclusive.
struct Deletion<'a> {
    target: &'a Target,
    permanent: bool,
    /// The device and inode the user was asked about.
    confirmed: FileId,
}

impl Deletion<'_> {
    /// Removes the file or link as one change with its history record (the record rides in
    /// the commit: a kill leaves both or neither, ../../docs/tools.md#delete_file); kept in
    /// the trash first unless permanent. Returns the archive, held until the call reported it.
    fn make(
        &self,
        ws: &Workspace,
        is_a_directory: &str,
        heading: &Heading,
        cancel: &CancelToken,
    ) -> Result<(Option<Archived>, Recorded), ToolError> {
        let path = &self.target.path;
        let stat = match inspect(self.target, is_a_directory)? {
            Some(stat) if !self.permanent || stat.id() == self.confirmed => stat,
            // Only the entry the user confirmed is removed for good.
            _ if self.permanent => return Err(self.changed(None)),
            _ => return Err(trash_error(TrashError::NotFound, "trash", path)),
        };
        if !self.permanent {
            ensure_bucket_writable(ws, path)?;
        }
        let at = Place::of(self.target).ok_or_else(|| files::file_not_found(path))?;
        let plan = ChangePlan {
            consume: Vec::new(),
            steps: vec![Step {
                at,
                expect: Expect::Entry { stat },
                keep: if self.permanent {
                    Keep::Nothing
                } else {
                    Keep::Archive
                },
                act: Act::Remove,
            }],
        };
        let files = |done: &Done| {
            let mut change = FileChange::new(path.clone(), Action::Deleted);
            match done.archives.first().and_then(Option::as_ref) {
                Some(archived) => {
                    change.sha256_before = Some(archived.metadata.original_sha256.clone());
                    change.trashed_to = Some(archived.archive_path.clone());
                }
                None => change.undo.permanent = true,
            }
            vec![change]
        };
        match execute(ws, plan, heading, cancel, files) {
            Ok(mut executed) => {
                let archived = executed.done.archives.pop().flatten();
                Ok((archived, executed.recorded))
            }
            Err(e) => Err(self.failed(e.failure)),
        }
    }

    /// The failure of the change as the model reads it; nothing was deleted.
    fn failed(&self, failure: Failure) -> ToolError {
        let path = &self.target.path;
        let gone = |e: &io::Error| e.kind() == io::ErrorKind::NotFound;
        match failure {
            Failure::NotAsExpected(Found::Gone) if !self.permanent => {
                trash_error(TrashError::NotFound, "trash", path)
            }
            Failure::NotAsExpected(_) => self.changed(None),
            Failure::Changed { kept, .. } => self.changed(kept),
            Failure::Io(e) if gone(&e) => self.changed(None),
            Failure::Io(e) => ToolError::io(&e, "delete", path),
            Failure::Trash(e) => trash_error(e, "trash", path),
            Failure::Invalid(why) => ToolError::io(&io::Error::other(why), "delete", path),
        }
    }

    /// Another entry took the name, or the one confirmed changed, before it was removed; what
    /// took its place meanwhile was kept as `kept`, if anything did.
    fn changed(&self, kept: Option<OsString>) -> ToolError {
        let path = &self.target.path;
        let kept = kept.map(|kept| path.with_file_name(kept));
        if self.permanent {
            let mut message = format!(
                "{} changed while waiting for confirmation; nothing was deleted. Look at it again and retry",
                path.shown()
            );
            if let Some(kept) = kept {
                message.push_str(&format!(
                    ". What took its place meanwhile was kept as {}",
                    kept.shown()
                ));
            }
            return ToolError::new(ErrorCode::Conflict, message);
        }
        let mut why = format!("{} was replaced while it was being removed", path.shown());
        if let Some(kept) = kept {
            why.push_str(&format!(
                " (what took its place meanwhile was kept as {})",
                kept.shown()
            ));
        }
        trash_error(TrashError::Conflict(why), "trash", path)
    }
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
        // `/` is the root of the workspace's drive on Windows (`C:\`).
        let top = crate::paths::canonical::root_of(&ws.root);
        let expected = format!("{} is a directory, use remove_dir instead", top.display());
        assert_eq!(result.output, expected);
    }

    /// A deletion is one change made with its record: the history lists the file with its
    /// archive (or as permanent), and nothing of the change (temp names, journal records) is
    /// left.
    #[tokio::test]
    async fn the_deletion_and_its_record_are_made_as_one_change() {
        for permanent in [false, true] {
            let ws = TestWorkspace::new();
            std::fs::write(ws.root.join("f.txt"), "bye\n").unwrap();
            let args = json!({ "path": "f.txt", "permanent": permanent });
            let result = ws.call("delete_file", args).await;
            assert_eq!(result.code, None, "{}", result.output);
            assert!(ws.names().is_empty(), "{:?}", ws.names());
            let history = ws.settled_history();
            assert_eq!(history.len(), 1);
            let file = &history[0].record.files[0];
            assert_eq!(file.path, ws.root.join("f.txt"));
            assert_eq!(file.permanent, permanent);
            assert_eq!(file.trashed_to.is_some(), !permanent);
        }
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
