//! `move_file`: move or rename a file, symlink or directory. An existing destination is replaced
//! only with `overwrite: true`, after it has been put into the trash; if the move then fails, the
//! destination is as it was.
//!
//! A move is one change on the engine: the destination (if replaced) kept in the trash and set
//! aside, then one `rename` — across file systems, a copy placed at the destination and the
//! source removed once checked to be what was copied —, with the history record in the same
//! commit.

use std::io;
use std::path::Path;

use serde::Deserialize;
use serde_json::{json, Value};

use super::blast_radius;
use super::destination;
use super::files;
use super::trashing::{in_trash, not_trashed_first};
use super::{object_schema, parse_args, ToolSpec};
use crate::call::execute::{execute, CopyFailed, Done, Failure};
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
use crate::paths::trees::CopyError;
use crate::paths::AsDir;
use crate::paths::{EntryKind, Stat, Target};
use crate::permissions::Operation;
use crate::progress::Meter;
use crate::trash::Archived;
use crate::views::Seen;
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
    summarizes_itself: false,
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
        let (source_stat, destination_existed, replaced) = call
            .reading(move || {
                let (src_parent, src_name) = files::open_parent(&src, "move")?;
                let src_stat = fsops::lstat_at(src_parent.as_dir(), &src_name)
                    .map_err(|e| ToolError::io(&e, "move", &src.path))?
                    .ok_or_else(|| ToolError::new(ErrorCode::NotFound, format!("source not found: {}; check the path", src.path.shown())))?;
                let dst_stat = match files::open_parent(&dst, "move to") {
                    Ok((parent, name)) => fsops::lstat_at(parent.as_dir(), &name).map_err(|e| ToolError::io(&e, "move to", &dst.path))?,
                    Err(e) if e.code == ErrorCode::NotFound => None,
                    Err(e) => return Err(e),
                };
                if let Some(d) = &dst_stat {
                    if d.id() == src_stat.id() {
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
                Ok((src_stat, existing, replaced))
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
        let (ws, cancel) = (call.ws.clone(), call.cancel.clone());
        let removers: Vec<String> = ["delete_file", "remove_dir"]
            .into_iter()
            .filter_map(|tool| call.names.offered(tool).map(str::to_owned))
            .collect();
        let meter = match &replaced {
            Some(replaced) => blast_radius::trash_meter(&call.progress, replaced),
            None => Meter::none(),
        };
        let moving = Moving {
            source: source.clone(),
            destination: destination.clone(),
            source_stat,
            planned: destination_existed,
        };
        let heading = call.heading.clone();
        let Moved {
            archived,
            file,
            change,
            recorded,
        } = call
            .blocking(move || meter.scoped(|| moving.make(&ws, &heading, &cancel, &removers)))
            .await?;
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
        if let Some(archived) = archived {
            let subject = format!("The previous {}", destination.path.shown());
            success
                .output
                .push_str(&in_trash(call, &subject, &archived.archive_path));
            success = success.with_data("trashedTo", archived.archive_path.shown().into_owned());
        }
        success = success.with_change(change);
        success.recorded = recorded;
        Ok(success)
    })
}

/// A confirmed move, made once the lock is exclusive.
struct Moving {
    source: Target,
    destination: Target,
    /// The source as the user was asked about it.
    source_stat: Stat,
    /// What was at the destination then (`None`: nothing).
    planned: Option<EntryKind>,
}

/// What a move made.
struct Moved {
    /// The archive of the destination it replaced, held until the call reported it.
    archived: Option<Archived>,
    /// The moved file as the move left it (`None`: a link or a directory).
    file: Option<Seen>,
    change: FileChange,
    recorded: Recorded,
}

impl Moving {
    /// Moves the source to the destination as one change with its history record (the record
    /// rides in the commit: a kill leaves both or neither): an existing destination goes to the
    /// trash first (a tree as `remove_dir` takes one), then one rename — or, between file
    /// systems, a copy placed at the destination and the source removed (the executor's).
    fn make(
        &self,
        ws: &Workspace,
        heading: &Heading,
        cancel: &CancelToken,
        removers: &[String],
    ) -> Result<Moved, ToolError> {
        let (src, dst) = (&self.source, &self.destination);
        let (dst_parent_path, dst_name) = dst
            .split()
            .ok_or_else(|| files::is_a_directory(&dst.path))?;
        let created_dirs = files::missing_parents(dst);
        let now = match fsops::open_dir(&dst.anchor, dst_parent_path, false) {
            Ok(parent) => fsops::lstat_at(parent.as_dir(), dst_name)
                .map_err(|e| ToolError::io(&e, "check", &dst.path))?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(ToolError::io(&e, "check", &dst.path)),
        };
        if now.as_ref().map(Stat::kind) != self.planned {
            return Err(files::changed_since_planned(&dst.path));
        }
        let to = Place::of(dst).ok_or_else(|| files::is_a_directory(&dst.path))?;
        let at = Place::of(src).ok_or_else(|| files::changed_since_planned(&src.path))?;
        let mut steps = Vec::new();
        if let Some(stat) = now {
            ensure_bucket_writable(ws, &dst.path)?;
            steps.push(Step {
                at: to.clone(),
                expect: Expect::Entry { stat },
                keep: Keep::Archive,
                act: Act::Remove,
            });
        }
        let replacing = !steps.is_empty();
        steps.push(Step {
            at,
            expect: Expect::Entry {
                stat: self.source_stat,
            },
            keep: Keep::Nothing,
            act: Act::Move { to },
        });
        let plan = ChangePlan {
            steps,
            consume: Vec::new(),
        };
        let parent = || fsops::open_dir(&dst.anchor, dst_parent_path, false).ok();
        let files = |done: &Done| {
            let mut change = FileChange {
                from: Some(src.path.clone()),
                ..FileChange::new(dst.path.clone(), Action::Moved)
            };
            change.undo.entry =
                parent().and_then(|dir| EntryFacts::of_entry(dir.as_dir(), dst_name));
            change.undo.created_dirs = created_dirs.clone();
            if let Some(archived) = done.archives.first().and_then(Option::as_ref) {
                change.sha256_before = Some(archived.metadata.original_sha256.clone());
                change.trashed_to = Some(archived.archive_path.clone());
            }
            vec![change]
        };
        let executed = match execute(ws, plan, heading, cancel, files) {
            Ok(executed) => executed,
            Err(failure) if replacing && failure.step == 0 => {
                return Err(not_trashed_first(&dst.path, failure.failure))
            }
            Err(failure) => {
                let mut error = self.not_moved(failure.failure);
                if replacing {
                    // Taken back by the commit (or never moved): at its name as it was.
                    error
                        .message
                        .push_str("; the destination was restored as it was");
                }
                return Err(error);
            }
        };
        let archived = executed.done.archives.into_iter().next().flatten();
        if let Some((_, error)) = executed.left.into_iter().next() {
            return Err(self.source_left(&error, archived.as_ref(), removers));
        }
        let file = parent().and_then(|dir| files::file_stat_at(dir.as_dir(), dst_name));
        let change = executed.files.into_iter().next();
        Ok(Moved {
            archived,
            file,
            change: change.expect("the plan lists the moved entry"),
            recorded: executed.recorded,
        })
    }

    /// The source could not be moved; nothing changed.
    fn not_moved(&self, failure: Failure) -> ToolError {
        let (src, dst) = (&self.source.path, &self.destination.path);
        match failure {
            Failure::NotAsExpected(Found::Taken) => files::changed_since_planned(dst),
            Failure::NotAsExpected(_) | Failure::Changed { .. } | Failure::Invalid(_) => {
                files::changed_since_planned(src)
            }
            Failure::Trash(e) => trash_error(e, "move", src),
            Failure::Io(e) => match CopyFailed::of(&e) {
                Some(copy) => self.not_copied(copy),
                None => ToolError::io(&e, "move", src),
            },
        }
    }

    /// The copy of a move between file systems failed, or its source changed once copied;
    /// nothing was moved.
    fn not_copied(&self, e: &CopyError) -> ToolError {
        let (src, dst) = (&self.source.path, &self.destination.path);
        let inside = |relative: &Path| {
            if relative.as_os_str().is_empty() {
                src.to_owned()
            } else {
                src.join(relative)
            }
        };
        let (src_shown, dst_shown) = (src.shown(), dst.shown());
        let mut error = match e {
            CopyError::Aborted => return ToolError::aborted(),
            CopyError::Special(relative) => ToolError::new(
                ErrorCode::NotARegularFile,
                format!(
                    "cannot move {src_shown} to {dst_shown}: {} is a FIFO, socket or device, which cannot be copied to another file system",
                    inside(relative).shown()
                ),
            ),
            CopyError::Changed(relative) => ToolError::new(
                ErrorCode::Conflict,
                format!(
                    "cannot move {src_shown} to {dst_shown}: {} changed while it was being copied to the other file system; retry once nothing writes to it",
                    inside(relative).shown()
                ),
            ),
            CopyError::Io(e, relative) => ToolError::io(e, "copy", &inside(relative)),
        };
        error.message.push_str(&format!(
            " (moving to {dst_shown}, on another file system); nothing was moved"
        ));
        error
    }

    /// The move between file systems is made (and recorded), but part of its source could not
    /// be removed after it was copied: it is back where it was. Says that the destination is
    /// complete, so the model neither moves it again nor takes the source for gone.
    fn source_left(
        &self,
        e: &io::Error,
        archived: Option<&Archived>,
        removers: &[String],
    ) -> ToolError {
        let (src, dst) = (&self.source.path, &self.destination.path);
        let mut error = ToolError::io(e, "remove the moved", src);
        let remove = match removers {
            [] => "what is left of the source can be removed by the user".to_owned(),
            _ => format!(
                "what is left of the source can be removed with {}",
                removers.join(" or ")
            ),
        };
        error.message = format!(
            "copied {} to {} (another file system), which is complete, but {}; {remove}",
            src.shown(),
            dst.shown(),
            error.message
        );
        if let Some(archived) = archived {
            error.message.push_str(&format!(
                "; the previous {} is in the trash at {}",
                dst.shown(),
                archived.archive_path.shown()
            ));
        }
        error
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TestWorkspace;

    /// A move (to a path whose parents are missing, or over an entry that goes to the trash
    /// first) is one change made with its record: the history lists it with the replaced
    /// entry's archive, and nothing of the change (temp names, journal records) is left.
    #[tokio::test]
    async fn the_move_and_its_record_are_made_as_one_change() {
        for overwrite in [false, true] {
            let ws = TestWorkspace::new();
            std::fs::write(ws.root.join("f.txt"), "moved\n").unwrap();
            let to = if overwrite { "g.txt" } else { "new/deep/g.txt" };
            if overwrite {
                std::fs::write(ws.root.join(to), "in the way\n").unwrap();
            }
            let args = json!({ "source": "f.txt", "destination": to, "overwrite": overwrite });
            let result = ws.call("move_file", args).await;
            assert_eq!(result.code, None, "{}", result.output);
            assert_eq!(ws.read(to), "moved\n");
            let top = if overwrite { "g.txt" } else { "new" };
            assert_eq!(ws.names(), [top]);
            let history = ws.settled_history();
            assert_eq!(history.len(), 1);
            let file = &history[0].record.files[0];
            assert_eq!(file.path, ws.root.join(to));
            assert_eq!(file.trashed_to.is_some(), overwrite);
            let made = if overwrite { 0 } else { 2 };
            assert_eq!(file.created_dirs.len(), made, "{:?}", file.created_dirs);
        }
    }

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
