//! `restore_file`: bring a trashed file, symlink or tree back from its archive, to where it was or
//! to `targetPath`. Only archives of this workspace's bucket are accepted, the archive is treated
//! as hostile (no entry can land outside the target), its content is verified against the
//! recorded sha256 before anything appears at the target, and the archive is removed last.

use std::io;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{json, Value};

use super::blast_radius;
use super::destination;
use super::files;
use super::trashing::{in_trash, not_trashed_first};
use super::{object_schema, parse_args, ToolSpec};
use crate::call::execute::{execute, Done, Failure};
use crate::call::plan::{Act, ChangePlan, Expect, Keep, Place, Step};
use crate::call::trashing::{ensure_bucket_writable, trash_error};
use crate::call::{Authorization, BoxFuture, Call, Outcome, Recorded, Success, ToolNames};
use crate::cancel::CancelToken;
use crate::change::{Action, EntryFacts, FileChange};
use crate::error::{ErrorCode, ToolError};
use crate::history::Heading;
use crate::options::WorkspaceOptions;
use crate::paths::fsops;
use crate::paths::resolve::{absolute_input, prefer_shown_names};
use crate::paths::sandbox::FinalLink;
use crate::paths::shown::{unescape, Shown};
use crate::paths::AsDir;
use crate::paths::{EntryKind, Stat, Target};
use crate::permissions::Operation;
use crate::trash::{Archived, TrashError};
use crate::views::Seen;
use crate::workspace::Workspace;

pub static SPEC: ToolSpec = ToolSpec {
    name: "restore_file",
    description,
    schema,
    mutates: true,
    // It replaces content (an MCP client must not auto-approve it as additive).
    destructive: true,
    idempotent: false,
    asks: true,
    path_argument: Some("trashedPath"),
    summarizes_itself: false,
    format_call,
    run,
};

fn description(names: &ToolNames, _: &WorkspaceOptions) -> String {
    let list = names.hint("trash_list", |list| format!(" from {list} or"));
    format!(
        "Bring back a file, symbolic link or directory from the trash, to where it was or to targetPath. \
trashedPath is an archive path{list} from the result that trashed it. Something already at the target is an error \
unless overwrite is true: then it goes to the trash first."
    )
}

fn schema() -> Value {
    object_schema(
        json!({
            "trashedPath": { "type": "string", "minLength": 1, "description": "The archive to restore: its full path, as the trash listing or the result that trashed it shows it, or just its file name." },
            "targetPath": { "type": "string", "minLength": 1, "description": "Where to restore it. Default: the path it was removed from." },
            "overwrite": { "type": "boolean", "description": "Replace an existing entry at the target (it goes to the trash first). Default false." },
        }),
        &["trashedPath"],
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Args {
    trashed_path: String,
    target_path: Option<String>,
    #[serde(default)]
    overwrite: bool,
}

/// The archive as the model named it, `→ target` when given, `(overwrite)` when set.
fn format_call(args: &Value) -> String {
    let get = |k: &str| args.get(k).and_then(Value::as_str);
    let archive = get("trashedPath").unwrap_or("").to_owned();
    let header = match get("targetPath") {
        Some(target) => format!("{archive} → {target}"),
        None => archive,
    };
    super::with_flags(header, args, &["overwrite"])
}

fn run(call: &Call, args: Value) -> BoxFuture<'_, Outcome> {
    Box::pin(async move {
        let args: Args = parse_args("restore_file", args)?;
        let archive: PathBuf = if args.trashed_path.contains('/') {
            absolute_input(
                &args.trashed_path,
                "trashedPath",
                call.cwd(),
                call.ws.home(),
            )?
        } else {
            absolute_input(
                &args.trashed_path,
                "trashedPath",
                call.ws.bucket().dir(),
                None,
            )?
        };
        // An archive name is shown like any name (a basename may hold a bidi control).
        let bucket = crate::paths::canonical::canonicalize_existing(call.ws.bucket().dir()).ok();
        let archive = prefer_shown_names(&archive, &args.trashed_path, |dir| {
            Some(dir) == bucket.as_deref()
        })
        .unwrap_or(archive);
        let (ws, inspected) = (call.ws.clone(), archive.clone());
        let list = call.names.hint("trash_list", |list| {
            format!("; use {list} to see what can be restored")
        });
        // The model may have named the file it deleted rather than its archive.
        let original = absolute_input(
            &args.trashed_path,
            "trashedPath",
            call.cwd(),
            call.ws.home(),
        )?;
        let tool = call.tool_name.clone();
        let metadata = call
            .reading(move || {
                ws.bucket().inspect(&inspected).map_err(|e| match e {
                    TrashError::NotFound | TrashError::NotInBucket
                        if !original.starts_with(ws.bucket().dir()) =>
                    {
                        an_original_path(&ws, &original, &tool, &list)
                            .unwrap_or_else(|| not_an_archive(e, &inspected, &list))
                    }
                    TrashError::NotFound | TrashError::NotInBucket => {
                        not_an_archive(e, &inspected, &list)
                    }
                    e => trash_error(e, "restore from", &inspected),
                })
            })
            .await?;
        let target = match &args.target_path {
            Some(raw) => call.resolve(raw, "targetPath", FinalLink::Keep)?,
            // Recorded in its shown form: the exact name, whether or not anything has it now
            // (an older record with control characters in it is the name itself).
            None => {
                let original = unescape(&metadata.original_path)
                    .map_or_else(|| PathBuf::from(&metadata.original_path), PathBuf::from);
                call.ws
                    .sandbox()
                    .resolve_absolute(&original, "targetPath", FinalLink::Keep)?
            }
        };
        destination::refuse_dangerous(&call.ws, &target.path)?;
        let lock = call.lock_for_change(&[&target.path, &archive]).await?;
        let (planned, cancel, overwrite) = (target.clone(), call.cancel.clone(), args.overwrite);
        let (exists, replaced) = call
            .reading(move || {
                let exists = destination::existing(&planned, "restore to")?;
                let replaced = match exists {
                    // Only an overwrite replaces it; without one, the call stops below.
                    Some(_) if overwrite => destination::count_replaced(&planned, exists, &cancel)?,
                    _ => None,
                };
                Ok((exists, replaced))
            })
            .await?;
        if exists.is_some() && !args.overwrite {
            return Err(ToolError::new(
                ErrorCode::AlreadyExists,
                format!(
                    "{} already exists; pass overwrite: true to replace it (the existing one goes to the trash first), or give a targetPath",
                    target.path.shown()
                ),
            )
            .into());
        }
        let replaced_tree = destination::replaces_tree(replaced.as_ref(), &target.path);
        call.authorize(Authorization {
            always_ask: replaced_tree.is_some(),
            detail: format!(
                "{}{}",
                target.path.shown(),
                replaced_tree.as_deref().unwrap_or("")
            ),
            recursive: replaced_tree.is_some().then_some(true),
            summary: replaced
                .as_ref()
                .map(|count| blast_radius::tree_summary(&target.path, count)),
            ..Authorization::of(
                Operation::Write,
                &target,
                "Restore file?",
                "The user denied this restore.",
            )
        })
        .await?;
        let _lock = lock.exclusive().await;
        let restoring = Restoring {
            target: target.clone(),
            archive: archive.clone(),
            planned: exists,
            sha256: metadata.original_sha256.clone(),
        };
        let (ws, cancel, heading) = (call.ws.clone(), call.cancel.clone(), call.heading.clone());
        let meter = blast_radius::restore_meter(&call.progress, metadata.size, replaced.as_ref());
        let Restored {
            replaced,
            file,
            change,
            recorded,
        } = call
            .blocking(move || meter.scoped(|| restoring.make(&ws, &heading, &cancel)))
            .await?;
        // A restored file is as the model's restore left it (a tree is not walked for this).
        if let Some(seen) = &file {
            call.saw(&target.path, seen);
        }
        let mut success = Success::text(format!(
            "Restored {} ({}, {}) from {}",
            target.path.shown(),
            metadata.kind.as_str(),
            super::bytes(metadata.size),
            archive.shown()
        ))
        .with_data("path", target.path.shown().into_owned())
        .with_data("kind", metadata.kind.as_str())
        .with_data("restoredFrom", archive.shown().into_owned());
        if let Some(previous) = replaced {
            let subject = format!("The entry that was at {}", target.path.shown());
            success
                .output
                .push_str(&in_trash(call, &subject, &previous.archive_path));
            success = success.with_data("trashedTo", previous.archive_path.shown().into_owned());
        }
        success = success.with_change(change);
        success.recorded = recorded;
        Ok(success)
    })
}

/// A confirmed restore, made once the lock is exclusive.
struct Restoring {
    target: Target,
    archive: PathBuf,
    /// What was at the target when the user was asked (`None`: nothing).
    planned: Option<EntryKind>,
    /// The SHA-256 of what the archive holds.
    sha256: String,
}

/// What a restore made.
struct Restored {
    /// The archive of the entry it replaced, held until the call reported it.
    replaced: Option<Archived>,
    /// The restored file as the restore left it (`None`: a link or a tree).
    file: Option<Seen>,
    change: FileChange,
    recorded: Recorded,
}

impl Restoring {
    /// Restores the archive's entry at the target as one change with its history record (the
    /// record rides in the commit: a kill leaves both or neither): what is there goes to the
    /// trash first (a tree as `remove_dir` takes one), the entry is extracted beside the target,
    /// verified, and takes its name; the archive is deleted with the record, after the commit
    /// point (also by recovery after a kill), never before.
    fn make(
        &self,
        ws: &Workspace,
        heading: &Heading,
        cancel: &CancelToken,
    ) -> Result<Restored, ToolError> {
        let path = &self.target.path;
        let (parent_path, name) = self
            .target
            .split()
            .ok_or_else(|| files::is_a_directory(path))?;
        let created_dirs = files::missing_parents(&self.target);
        let anchor = &self.target.anchor;
        let now = match fsops::open_dir(anchor, parent_path, false) {
            Ok(parent) => fsops::lstat_at(parent.as_dir(), name)
                .map_err(|e| ToolError::io(&e, "check", path))?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(ToolError::io(&e, "check", path)),
        };
        if now.as_ref().map(Stat::kind) != self.planned {
            return Err(files::changed_since_planned(path));
        }
        let at = Place::of(&self.target).ok_or_else(|| files::is_a_directory(path))?;
        let mut steps = Vec::new();
        if let Some(stat) = now {
            ensure_bucket_writable(ws, path)?;
            steps.push(Step {
                at: at.clone(),
                expect: Expect::Entry { stat },
                keep: Keep::Archive,
                act: Act::Remove,
            });
        }
        let replacing = !steps.is_empty();
        steps.push(Step {
            at,
            expect: Expect::Nothing,
            keep: Keep::Nothing,
            act: Act::Restore {
                archive: self.archive.clone(),
            },
        });
        let plan = ChangePlan {
            steps,
            consume: vec![self.archive.clone()],
        };
        let parent = || fsops::open_dir(anchor, parent_path, false).ok();
        let files = |done: &Done| {
            let mut change = FileChange {
                sha256_after: Some(self.sha256.clone()),
                ..FileChange::new(path.clone(), Action::Added)
            };
            change.undo.entry = parent().and_then(|dir| EntryFacts::of_entry(dir.as_dir(), name));
            change.undo.restored_from = Some(self.archive.clone());
            change.undo.created_dirs = created_dirs.clone();
            if let Some(previous) = done.archives.first().and_then(Option::as_ref) {
                change.action = Action::Modified;
                change.sha256_before = Some(previous.metadata.original_sha256.clone());
                change.trashed_to = Some(previous.archive_path.clone());
            }
            vec![change]
        };
        match execute(ws, plan, heading, cancel, files) {
            Ok(executed) => {
                let file = parent().and_then(|dir| files::file_stat_at(dir.as_dir(), name));
                let change = executed.files.into_iter().next();
                Ok(Restored {
                    replaced: executed.done.archives.into_iter().next().flatten(),
                    file,
                    change: change.expect("the plan lists the restored entry"),
                    recorded: executed.recorded,
                })
            }
            Err(e) if replacing && e.step == 0 => {
                Err(not_trashed_first(&self.target.path, e.failure))
            }
            Err(e) => {
                let mut error = self.not_restored(e.failure);
                if replacing {
                    // Taken back by the commit (or never moved): at its name as it was.
                    error
                        .message
                        .push_str("; the entry that was there has been put back");
                }
                Err(error)
            }
        }
    }

    /// The archive's entry could not be put at the target; nothing changed, the archive stays.
    fn not_restored(&self, failure: Failure) -> ToolError {
        let path = &self.target.path;
        match failure {
            Failure::Trash(e) => trash_error(e, "restore", path),
            Failure::Io(e) => ToolError::io(&e, "restore", path),
            Failure::NotAsExpected(_) | Failure::Changed { .. } | Failure::Invalid(_) => {
                files::changed_since_planned(path)
            }
        }
    }
}

/// The error for a `trashedPath` that is no archive of this workspace's trash.
fn not_an_archive(e: TrashError, archive: &Path, list: &str) -> ToolError {
    match e {
        TrashError::NotFound => ToolError::new(
            ErrorCode::NotFound,
            format!("no archive {} in the trash{list}", archive.shown()),
        ),
        _ => ToolError::not_allowed(format!(
            "{} is not an archive in this workspace's trash{list}",
            archive.shown()
        )),
    }
}

/// When `original` (the `trashedPath` the model gave, read as a workspace path) is the original
/// path of archives in the trash: the error that says so and names the newest of them.
fn an_original_path(
    ws: &crate::workspace::Workspace,
    original: &Path,
    tool: &str,
    list: &str,
) -> Option<ToolError> {
    let shown = original.shown();
    let archives: Vec<_> = ws
        .bucket()
        .list()
        .ok()?
        .into_iter()
        .filter(|entry| entry.metadata.original_path == *shown)
        .collect();
    let newest = archives.first()?;
    let name = newest
        .archive_path
        .file_name()
        .map(|n| Path::new(n).shown().into_owned())
        .unwrap_or_default();
    let quoted = serde_json::to_string(&name).unwrap_or_default();
    let older = match archives.len() - 1 {
        0 => String::new(),
        n => format!(
            " ({} of it {} in the trash too{list})",
            crate::tools::quantity(n as u64, "older archive", "older archives"),
            if n == 1 { "is" } else { "are" }
        ),
    };
    Some(ToolError::new(
        ErrorCode::NotFound,
        format!(
            "{shown} is the original path of a trashed {}, not an archive; trashedPath takes the archive. Its newest archive is {name}, trashed {}{older}: restore it with {tool} {{ \"trashedPath\": {quoted} }}",
            newest.metadata.kind.as_str(),
            newest.metadata.trashed_at
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TestWorkspace;

    /// A restore (to a free name, or over an entry that goes to the trash first) is one change
    /// made with its record: the archive is used up with it, the history lists the entry (with
    /// the replaced one's archive), and nothing of the change (temp names, journal records) is
    /// left.
    #[tokio::test]
    async fn the_restore_and_its_record_are_made_as_one_change() {
        for overwrite in [false, true] {
            let ws = TestWorkspace::new();
            std::fs::write(ws.root.join("f.txt"), "back\n").unwrap();
            let trashed = ws.call("delete_file", json!({ "path": "f.txt" })).await;
            let data = trashed.data.unwrap();
            let archive = data["trashedTo"].as_str().unwrap().to_owned();
            if overwrite {
                std::fs::write(ws.root.join("f.txt"), "in the way\n").unwrap();
            }
            let args = json!({ "trashedPath": archive, "overwrite": overwrite });
            let result = ws.call("restore_file", args).await;
            assert_eq!(result.code, None, "{}", result.output);
            assert_eq!(ws.read("f.txt"), "back\n");
            assert_eq!(ws.names(), ["f.txt"]);
            assert!(!Path::new(&archive).exists(), "the archive is used up");
            let history = ws.settled_history();
            assert_eq!(history.len(), 2);
            let file = &history[1].record.files[0];
            assert_eq!(file.path, ws.root.join("f.txt"));
            assert_eq!(file.trashed_to.is_some(), overwrite);
            assert_eq!(file.restored_from.as_deref(), Some(Path::new(&archive)));
        }
    }

    /// A name that is not UTF-8 cannot be in a history record: the restore is made all the
    /// same, unrecorded, and its archive is used up with it (as before the engine). Unix only:
    /// bytes that are not UTF-8 make no Windows name (`paths::names`' Windows tests).
    #[cfg(unix)]
    #[tokio::test]
    async fn a_name_that_is_not_utf8_is_restored_and_its_archive_used_up() {
        let ws = TestWorkspace::new();
        let name = crate::paths::names::from_bytes(b"n\xe9\xff.t");
        std::fs::write(ws.root.join(name), "back\n").unwrap();
        let shown = ws.root.join(name).shown().into_owned();
        let trashed = ws.call("delete_file", json!({ "path": shown })).await;
        assert_eq!(trashed.code, None, "{}", trashed.output);
        let data = trashed.data.unwrap();
        let archive = data["trashedTo"].as_str().unwrap().to_owned();
        let result = ws
            .call("restore_file", json!({ "trashedPath": archive }))
            .await;
        assert_eq!(result.code, None, "{}", result.output);
        assert_eq!(std::fs::read(ws.root.join(name)).unwrap(), b"back\n");
        let bucket = ws.toolset.workspace().bucket().dir().to_owned();
        let left = std::fs::read_dir(bucket).map_or(0, |d| {
            d.filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .as_encoded_bytes()
                    .ends_with(b".tar.gz")
            })
            .count()
        });
        assert_eq!(left, 0, "the archive is used up");
    }

    /// The archive as the model gave it (its directory tells which trash), like any path tool.
    #[test]
    fn format_call_is_the_archive_as_given() {
        let archive = "/home/u/.agent-fs-tools/trash/ab12/20240101T000000Z-s-r-1-a.txt.tar.gz";
        assert_eq!(format_call(&json!({ "trashedPath": archive })), archive);
        assert_eq!(
            format_call(
                &json!({ "trashedPath": "x.tar.gz", "targetPath": "b.txt", "overwrite": true })
            ),
            "x.tar.gz → b.txt (overwrite)"
        );
    }
}
