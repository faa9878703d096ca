//! `write_file`: create or replace a file atomically (temp file in the same directory, fsync,
//! rename; a replaced file's mode, owner, extended attributes and ACLs kept), creating parent
//! directories. The diff against the old content is shown
//! before asking, and the write happens only if the file is still what was diffed.

use crate::paths::AsDir;

use serde::Deserialize;
use serde_json::{json, Value};

use super::files::{self, WhenPlanned};
use super::put;
use super::trashing::in_trash;
use super::{object_schema, parse_args, ToolSpec};
use crate::call::execute::{execute, Done};
use crate::call::plan::{Act, ChangePlan, Expect, Keep, Place, Step};
use crate::call::trashing::ensure_bucket_writable;
use crate::call::{Authorization, BoxFuture, Call, Outcome, Recorded, Rewrite, Success, ToolNames};
use crate::cancel::CancelToken;
use crate::change::{Action, FileChange};
use crate::error::{ErrorCode, ToolError};
use crate::hashing::sha256_hex;
use crate::history::Heading;
use crate::options::WorkspaceOptions;
use crate::paths::sandbox::FinalLink;
use crate::paths::shown::Shown;
use crate::paths::Target;
use crate::permissions::Operation;
use crate::text::diff::UnifiedDiff;
use crate::text::line_split::line_count;
use crate::views::{Moment, Seen};
use crate::workspace::Workspace;

pub static SPEC: ToolSpec = ToolSpec {
    name: "write_file",
    description,
    schema,
    mutates: true,
    destructive: true,
    idempotent: false,
    asks: true,
    path_argument: Some("path"),
    summarizes_itself: false,
    format_call: super::format_path,
    run,
};

fn description(names: &ToolNames, options: &WorkspaceOptions) -> String {
    let edit = names.hint("edit_file", |edit| {
        format!("; to change part of a file use {edit}, which sends only the changed text")
    });
    let trash = if options.trash.keep_overwrites {
        " The previous content of a replaced file goes to the recoverable trash."
    } else {
        " The previous content of a replaced file is not kept, so the user is always asked first."
    };
    format!(
        "Create a file, or replace the whole content of one. Use it for new files and complete rewrites{edit}. \
Missing parent directories are created.{trash} The result shows the diff."
    )
}

fn schema() -> Value {
    object_schema(
        json!({
            "path": { "type": "string", "minLength": 1, "description": "The file to write, absolute or relative to the current working directory." },
            "content": { "type": "string", "description": "The complete new content of the file." },
        }),
        &["path", "content"],
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: String,
    content: String,
}

fn run(call: &Call, args: Value) -> BoxFuture<'_, Outcome> {
    Box::pin(async move {
        let args: Args = parse_args("write_file", args)?;
        let limits = call.limits().clone();
        if args.content.len() as u64 > limits.write_max_bytes {
            let parts = call.names.hint("append_file", |append| {
                format!(", or write the first part with this tool and the rest with {append}")
            });
            return Err(ToolError::new(
                ErrorCode::TooLarge,
                format!(
                    "content is {} bytes, over the write limit of {} bytes (writeMaxBytes); nothing was written. Write a smaller file{parts}",
                    args.content.len(),
                    limits.write_max_bytes
                ),
            )
            .into());
        }
        let target = call.resolve(&args.path, "path", FinalLink::Follow)?;
        crate::paths::resolve::file_path_not_directory_syntax(&args.path, "path", &target.path)?;
        let lock = call.lock_for_change(&[&target.path]).await?;
        let label = files::diff_label(&target.path, call.ws.sandbox().root());
        let content = std::sync::Arc::new(args.content);
        let planned_at = Moment::now();
        let (planned, diff) = {
            let (target, content, limits) = (target.clone(), content.clone(), limits.clone());
            call.reading(move || {
                let planned = match files::open_existing(&target, "read")? {
                    None => WhenPlanned::Absent,
                    Some(mut opened) => {
                        let bytes = files::read_at_most(&mut opened.file, limits.edit_max_file_bytes, "read", &target.path)?;
                        // Nothing to write when the content is the same: no need to be writable.
                        if bytes.as_deref() != Some(content.as_bytes()) {
                            files::ensure_writable(&opened, &target.path)?;
                        }
                        WhenPlanned::Present { stat: opened.stat, bytes }
                    }
                };
                let diff = match &planned {
                    WhenPlanned::Absent => files::diff_of(None, content.as_bytes(), &label, limits.diff_timeout_ms),
                    WhenPlanned::Present { bytes: Some(old), .. } => {
                        files::diff_of(Some(old), content.as_bytes(), &label, limits.diff_timeout_ms)
                    }
                    WhenPlanned::Present { stat, bytes: None } => UnifiedDiff {
                        text: format!(
                            "Previous content ({} bytes) is too large to diff; it is replaced by {} bytes",
                            stat.size,
                            content.len()
                        ),
                        ..UnifiedDiff::default()
                    },
                };
                Ok((planned, diff))
            })
            .await?
        };
        // Never over what the model has not seen as it is (../../docs/tools.md#stale-views).
        let stale_note = match &planned {
            WhenPlanned::Present { stat, .. } => {
                call.check_view(&target.path, stat, Rewrite::Whole)?
            }
            WhenPlanned::Absent => None,
        };
        // Without keepOverwrites an overwrite cannot be undone, so it always asks (../../docs/permissions-and-prompts.md).
        let permanent =
            !call.ws.options().trash.keep_overwrites && !matches!(planned, WhenPlanned::Absent);
        let question = Authorization {
            diff: Some(diff.text.clone()),
            always_ask: permanent,
            permanent: permanent.then_some(true),
            detail: if permanent {
                format!("{} (permanent)", target.path.shown())
            } else {
                target.path.shown().into_owned()
            },
            ..Authorization::of(
                Operation::Write,
                &target,
                "Write file?",
                "The user denied this write.",
            )
        };
        if let WhenPlanned::Present {
            stat,
            bytes: Some(old),
        } = &planned
        {
            if old[..] == content.as_bytes()[..] {
                let seen = Seen {
                    stat: *stat,
                    at: planned_at,
                };
                let result = unchanged(call, &target, question, content.len()).await?;
                // The model gave the whole content: it knows this version now.
                call.saw(&target.path, &seen);
                return Ok(result);
            }
        }
        call.authorize(question).await?;
        let _lock = lock.exclusive().await;
        let created = matches!(planned, WhenPlanned::Absent);
        let planned_old_lines = match &planned {
            WhenPlanned::Absent => OldLines::None,
            WhenPlanned::Present {
                bytes: Some(old), ..
            } => OldLines::Counted(line_count(old)),
            WhenPlanned::Present { bytes: None, .. } => OldLines::TooLarge,
        };
        let sha_before = match &planned {
            WhenPlanned::Present { bytes: Some(b), .. } => Some(sha256_hex(b)),
            _ => None,
        };
        let keep_old = call.ws.options().trash.keep_overwrites && !created;
        let sha_after = sha256_hex(content.as_bytes());
        let new_lines = line_count(content.as_bytes());
        let bytes = content.len();
        // The bytes go into the plan; the call keeps only what its result needs.
        let data = std::sync::Arc::try_unwrap(content)
            .map(String::into_bytes)
            .unwrap_or_else(|shared| shared.as_bytes().to_vec());
        let (ws, committed_target) = (call.ws.clone(), target.clone());
        let (heading, cancel) = (call.heading.clone(), call.cancel.clone());
        let Written {
            change,
            stat,
            recorded,
        } = call
            .blocking(move || {
                let write = Write {
                    target: &committed_target,
                    planned: &planned,
                    keep_old,
                    sha_before,
                    sha_after,
                };
                write.make(&ws, data, &heading, &cancel)
            })
            .await?;
        if let Some(seen) = &stat {
            call.saw(&target.path, seen);
        }
        let mut summary = summary(&target.path, &planned_old_lines, &diff, bytes, new_lines);
        let trashed = change.trashed_to.clone();
        if let Some(archive) = &trashed {
            summary
                .text
                .push_str(&in_trash(call, "The previous content", archive));
        }
        if let Some(note) = stale_note {
            summary.text.push('\n');
            summary.text.push_str(&note);
        }
        // What the model wrote itself is not echoed back: a new file or a whole rewrite is
        // counted; only a diff that keeps some of the old lines is shown (../../docs/tools.md#bounded-outputs).
        let shown = if summary.diff_shown {
            &diff.text[..]
        } else {
            ""
        };
        let mut success =
            Success::text(files::with_diff(summary.text, shown, limits.read_max_bytes))
                .with_data("path", target.path.shown().into_owned())
                .with_data("bytes", bytes)
                .with_data("created", created);
        if let Some(archive) = &trashed {
            success = success.with_data("trashedTo", archive.shown().into_owned());
        }
        success.diff = Some(diff.text);
        success.recorded = recorded;
        Ok(success.with_change(change))
    })
}

/// The lines a write replaces.
enum OldLines {
    /// None: the file is new.
    None,
    Counted(usize),
    /// The old content was too large to read.
    TooLarge,
}

/// The first line of a write's output, and whether the diff follows it.
struct Summary {
    text: String,
    diff_shown: bool,
}

/// `Created <abs> (bytes, N lines)` for a new file, `Wrote <abs> (bytes, N lines), replacing all
/// M lines it had` for a rewrite that keeps none of the old lines: the model wrote that text, so
/// it is counted, not echoed. `Wrote <abs> (bytes)` then the diff for any other rewrite.
fn summary(
    path: &std::path::Path,
    old: &OldLines,
    diff: &UnifiedDiff,
    bytes: usize,
    new_lines: usize,
) -> Summary {
    let (p, size) = (path.shown(), super::bytes(bytes as u64));
    let lines = super::quantity(new_lines as u64, "line", "lines");
    match old {
        OldLines::None => Summary {
            text: format!("Created {p} ({size}, {lines})"),
            diff_shown: false,
        },
        OldLines::Counted(n) if *n > 0 && diff.removed == *n => Summary {
            text: format!(
                "Wrote {p} ({size}, {lines}), replacing all {} it had",
                super::quantity(*n as u64, "line", "lines")
            ),
            diff_shown: false,
        },
        _ => Summary {
            text: format!("Wrote {p} ({size})"),
            diff_shown: true,
        },
    }
}

/// The file already holds `content` (`bytes` long): nothing is written, archived or asked, and
/// the result says so. Only a call that may not read the file is still asked (as a write), so
/// that the answer does not tell it what the file holds.
async fn unchanged(
    call: &Call,
    target: &crate::paths::Target,
    question: Authorization<'_>,
    bytes: usize,
) -> Outcome {
    let read = Authorization::of(Operation::Read, target, "Read file?", "");
    if !call.is_granted(&read) {
        call.authorize(question).await?;
    }
    Ok(Success::text(format!(
        "{} already has this content ({}); nothing was written.",
        target.path.shown(),
        super::bytes(bytes as u64)
    ))
    .with_data("path", target.path.shown().into_owned())
    .with_data("bytes", bytes)
    .with_data("created", false)
    .with_data("unchanged", true))
}

/// What a write left: its change as the history lists it, the file written (the model's view
/// of it), and whether the change is in the history.
struct Written {
    change: FileChange,
    stat: Option<Seen>,
    recorded: Recorded,
}

/// A confirmed write, made once the lock is exclusive.
struct Write<'a> {
    target: &'a Target,
    planned: &'a WhenPlanned,
    /// Whether the replaced content goes to the trash first (keepOverwrites).
    keep_old: bool,
    /// The SHA-256 of the content diffed (`None`: a new file, or one too large to read).
    sha_before: Option<String>,
    sha_after: String,
}

impl Write<'_> {
    /// Replaces (or creates) the file as one change with its history record (the record rides
    /// in the commit: a kill leaves both or neither, ../../docs/history-and-undo.md): only the
    /// file planned on, still with the content diffed, its old content kept in the trash first
    /// when asked. Missing parents are made, and removed again unless the change is made.
    fn make(
        &self,
        ws: &Workspace,
        data: Vec<u8>,
        heading: &Heading,
        cancel: &CancelToken,
    ) -> Result<Written, ToolError> {
        let path = &self.target.path;
        let at = Place::of(self.target).ok_or_else(|| files::is_a_directory(path))?;
        let expect = match self.planned {
            WhenPlanned::Absent => Expect::Nothing,
            WhenPlanned::Present { stat, bytes } => {
                let opening = "create the parent directory of";
                let (parent, name) = match files::open_parent(self.target, opening) {
                    Ok(found) => found,
                    // Gone since it was read: not the file planned on.
                    Err(e) if e.code == ErrorCode::NotFound => {
                        return Err(files::changed_since_planned(path))
                    }
                    Err(e) => return Err(e),
                };
                let read = bytes.as_deref().zip(self.sha_before.as_deref());
                put::expect_as_planned(&parent, &name, self.target, stat, read)?
            }
        };
        let created = matches!(expect, Expect::Nothing);
        let keep = if self.keep_old && !created {
            ensure_bucket_writable(ws, path)?;
            Keep::Archive
        } else {
            Keep::Nothing
        };
        let created_dirs = files::missing_parents(self.target);
        let plan = ChangePlan {
            consume: Vec::new(),
            steps: vec![Step {
                at,
                expect,
                keep,
                act: Act::Put {
                    data,
                    like: None,
                    sha256: Some(self.sha_after.clone()),
                },
            }],
        };
        let files = |done: &Done| {
            let action = if created {
                Action::Added
            } else {
                Action::Modified
            };
            let archived = done.archives.first().and_then(Option::as_ref);
            let mut change = FileChange {
                sha256_before: self.sha_before.clone(),
                sha256_after: Some(self.sha_after.clone()),
                trashed_to: archived.map(|a| a.archive_path.clone()),
                ..FileChange::new(path.clone(), action)
            };
            change.undo.created_dirs = created_dirs;
            vec![change]
        };
        let mut executed = execute(ws, plan, heading, cancel, files)
            .map_err(|e| put::failed(self.target, e.failure, "create the parent directory of"))?;
        let change = executed
            .files
            .pop()
            .ok_or_else(|| files::changed_since_planned(path))?;
        let stat = files::open_parent(self.target, "write")
            .ok()
            .and_then(|(parent, name)| files::file_stat_at(parent.as_dir(), &name));
        Ok(Written {
            change,
            stat,
            recorded: executed.recorded,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::error::ErrorCode;
    use crate::paths::fsops::race_point::{self, RacePoint};
    use crate::tools::testing::{exchange, save_in_place, TestWorkspace};
    use serde_json::json;

    /// An editor saves in place between the last check and the rename: its bytes stay, the
    /// write is a conflict.
    #[tokio::test]
    async fn an_in_place_save_after_the_check_is_kept() {
        let ws = TestWorkspace::new();
        let path = ws.root.join("wf-saved.txt");
        std::fs::write(&path, "planned on\n").unwrap();
        ws.call("read_file", json!({ "path": "wf-saved.txt" }))
            .await;
        let saved = path.clone();
        race_point::at(RacePoint::BeforeReplace, "wf-saved.txt", move || {
            save_in_place(&saved, "saved by the editor\n")
        });
        let result = ws
            .call(
                "write_file",
                json!({ "path": "wf-saved.txt", "content": "agent\n" }),
            )
            .await;
        assert_eq!(result.code, Some(ErrorCode::Conflict), "{}", result.output);
        assert_eq!(ws.read("wf-saved.txt"), "saved by the editor\n");
        assert_eq!(ws.names(), ["wf-saved.txt"]);
    }

    /// A file created at the target after the check that it was absent is not replaced.
    #[tokio::test]
    async fn a_file_that_appears_after_the_check_is_kept() {
        let ws = TestWorkspace::new();
        let path = ws.root.join("wf-appeared.txt");
        race_point::at(RacePoint::BeforeReplace, "wf-appeared.txt", move || {
            std::fs::write(&path, "made by another program\n").unwrap()
        });
        let result = ws
            .call(
                "write_file",
                json!({ "path": "wf-appeared.txt", "content": "agent\n" }),
            )
            .await;
        assert_eq!(result.code, Some(ErrorCode::Conflict), "{}", result.output);
        assert_eq!(ws.read("wf-appeared.txt"), "made by another program\n");
        assert_eq!(ws.names(), ["wf-appeared.txt"]);
    }

    /// Another file swapped in under the name after the check is not replaced; both files are
    /// where the swap put them.
    #[tokio::test]
    async fn a_file_swapped_in_after_the_check_is_kept() {
        let ws = TestWorkspace::new();
        let (path, other) = (ws.root.join("wf-swapped.txt"), ws.root.join("wf-other.txt"));
        std::fs::write(&path, "planned on\n").unwrap();
        std::fs::write(&other, "another file\n").unwrap();
        ws.call("read_file", json!({ "path": "wf-swapped.txt" }))
            .await;
        race_point::at(RacePoint::BeforeReplace, "wf-swapped.txt", move || {
            exchange(&path, &other)
        });
        let result = ws
            .call(
                "write_file",
                json!({ "path": "wf-swapped.txt", "content": "agent\n" }),
            )
            .await;
        assert_eq!(result.code, Some(ErrorCode::Conflict), "{}", result.output);
        assert_eq!(ws.read("wf-swapped.txt"), "another file\n");
        assert_eq!(ws.read("wf-other.txt"), "planned on\n");
        assert_eq!(ws.names(), ["wf-other.txt", "wf-swapped.txt"]);
    }

    /// A write is one change made with its record: the history lists the file (a new one with
    /// the directories made for it; an overwrite with the archive of its old content), and
    /// nothing of the change (temp names, journal records) is left.
    #[tokio::test]
    async fn the_write_and_its_record_are_made_as_one_change() {
        let ws = TestWorkspace::new();
        let new = json!({ "path": "a/b/new.txt", "content": "new\n" });
        let result = ws.call("write_file", new).await;
        assert_eq!(result.code, None, "{}", result.output);
        let over = json!({ "path": "a/b/new.txt", "content": "over\n" });
        let result = ws.call("write_file", over).await;
        assert_eq!(result.code, None, "{}", result.output);
        assert_eq!(ws.names(), ["a"]);
        assert_eq!(ws.read("a/b/new.txt"), "over\n");
        let history = ws.settled_history();
        let [created, overwrite] = &history[..] else {
            panic!("two records: {}", history.len())
        };
        let file = &created.record.files[0];
        assert_eq!(file.path, ws.root.join("a/b/new.txt"));
        assert_eq!(file.created_dirs, [ws.root.join("a"), ws.root.join("a/b")]);
        assert!(file.trashed_to.is_none());
        let file = &overwrite.record.files[0];
        assert!(file.trashed_to.is_some());
        assert_eq!(
            file.sha256_after,
            Some(crate::hashing::sha256_hex(b"over\n"))
        );
    }

    /// The replaced file, under the temp name the commit's exchange gave it.
    fn displaced(dir: &std::path::Path, name: &str) -> std::path::PathBuf {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.file_name().unwrap() != name)
            .unwrap()
    }

    /// An editor that opened the file before the write took its name saves into it after the
    /// exchange, before it is let go (where no lease tells such a writer: macOS, the portable
    /// mode): the write stands, and the save is kept under a visible name beside it, never
    /// removed with the replaced file nor left under a temp name.
    #[tokio::test]
    async fn a_save_into_the_replaced_file_before_it_goes_is_kept_visible() {
        let ws = TestWorkspace::new();
        let path = ws.root.join("wf-late.txt");
        std::fs::write(&path, "planned on\n").unwrap();
        let root = ws.root.clone();
        race_point::at(RacePoint::ReplacedChecked, "wf-late.txt", move || {
            save_in_place(&displaced(&root, "wf-late.txt"), "saved by the editor\n")
        });
        ws.call("read_file", json!({ "path": "wf-late.txt" })).await;
        let write = json!({ "path": "wf-late.txt", "content": "agent\n" });
        let result = ws.call("write_file", write).await;
        assert_eq!(result.code, None, "{}", result.output);
        assert_eq!(ws.read("wf-late.txt"), "agent\n");
        let names = ws.names();
        let [written, kept] = &names[..] else {
            panic!("the file and a kept copy: {names:?}")
        };
        assert_eq!(written, "wf-late.txt");
        assert!(kept.contains(".kept-by-agent-fs-tools"), "{kept}");
        assert_eq!(ws.read(kept), "saved by the editor\n");
    }

    /// The same save landing after the last check of the replaced file and before its name
    /// goes: it is found once more through the open file, after the unlink, and kept.
    #[tokio::test]
    async fn a_save_into_the_replaced_file_as_it_goes_is_kept_visible() {
        use std::io::Write;
        use std::sync::{Arc, Mutex};
        let ws = TestWorkspace::new();
        let path = ws.root.join("wf-later.txt");
        std::fs::write(&path, "planned on\n").unwrap();
        let writer: Arc<Mutex<Option<std::fs::File>>> = Arc::default();
        let (root, opened) = (ws.root.clone(), writer.clone());
        race_point::at(RacePoint::ReplacedChecked, "wf-later.txt", move || {
            let old = displaced(&root, "wf-later.txt");
            let file = std::fs::OpenOptions::new().write(true).open(old).unwrap();
            *opened.lock().unwrap() = Some(file);
        });
        race_point::at(RacePoint::ReplacedUnlinked, "wf-later.txt", move || {
            let mut file = writer.lock().unwrap().take().unwrap();
            file.set_len(0).unwrap();
            file.write_all(b"saved late\n").unwrap();
        });
        ws.call("read_file", json!({ "path": "wf-later.txt" }))
            .await;
        let write = json!({ "path": "wf-later.txt", "content": "agent\n" });
        let result = ws.call("write_file", write).await;
        assert_eq!(result.code, None, "{}", result.output);
        assert_eq!(ws.read("wf-later.txt"), "agent\n");
        let names = ws.names();
        let [written, kept] = &names[..] else {
            panic!("the file and a kept copy: {names:?}")
        };
        assert_eq!(written, "wf-later.txt");
        assert_eq!(ws.read(kept), "saved late\n");
    }

    /// A file made read-only is not replaced, even by root (whom the system would let through):
    /// as an editor would, the tool refuses and says what to do.
    #[tokio::test]
    async fn a_read_only_file_is_refused() {
        use crate::paths::testing::Modes;
        let ws = TestWorkspace::new();
        let path = ws.root.join("wf-read-only.txt");
        std::fs::write(&path, "keep me\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
        let result = ws
            .call(
                "write_file",
                json!({ "path": "wf-read-only.txt", "content": "agent\n" }),
            )
            .await;
        assert_eq!(
            result.code,
            Some(ErrorCode::OsPermission),
            "{}",
            result.output
        );
        assert_eq!(
            result.output,
            format!(
                "{} is read-only (mode 0444); nothing was written. If it should change, ask the user to make it writable (e.g. chmod u+w)",
                path.display()
            )
        );
        assert_eq!(ws.read("wf-read-only.txt"), "keep me\n");
    }
}
