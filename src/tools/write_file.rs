//! `write_file`: create or replace a file atomically (temp file in the same directory, fsync,
//! rename; a replaced file's mode, owner, extended attributes and ACLs kept), creating parent
//! directories. The diff against the old content is shown
//! before asking, and the write happens only if the file is still what was diffed.

use std::os::fd::AsFd;

use serde::Deserialize;
use serde_json::{json, Value};

use std::path::PathBuf;

use super::files::{self, Planned};
use super::trashing::{in_trash, put_in_trash};
use super::{object_schema, parse_args, ToolSpec};
use crate::call::{Authorization, BoxFuture, Call, Outcome, Rewrite, Success, ToolNames};
use crate::cancel::CancelToken;
use crate::change::{Action, FileChange};
use crate::error::{ErrorCode, ToolError};
use crate::hashing::{sha256_hex, sha256_reader};
use crate::options::WorkspaceOptions;
use crate::paths::fsops::{self, Replacing};
use crate::paths::sandbox::FinalLink;
use crate::paths::shown::Shown;
use crate::permissions::Operation;
use crate::text::diff::UnifiedDiff;
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
                    None => Planned::Absent,
                    Some(mut opened) => {
                        let bytes = files::read_at_most(&mut opened.file, limits.edit_max_file_bytes, "read", &target.path)?;
                        // Nothing to write when the content is the same: no need to be writable.
                        if bytes.as_deref() != Some(content.as_bytes()) {
                            files::ensure_writable(&opened, &target.path)?;
                        }
                        Planned::Present { stat: opened.stat, bytes }
                    }
                };
                let diff = match &planned {
                    Planned::Absent => files::diff_of(None, content.as_bytes(), &label, limits.diff_timeout_ms),
                    Planned::Present { bytes: Some(old), .. } => {
                        files::diff_of(Some(old), content.as_bytes(), &label, limits.diff_timeout_ms)
                    }
                    Planned::Present { stat, bytes: None } => UnifiedDiff {
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
            Planned::Present { stat, .. } => call.check_view(&target.path, stat, Rewrite::Whole)?,
            Planned::Absent => None,
        };
        // Without keepOverwrites an overwrite cannot be undone, so it always asks (../../docs/permissions-and-prompts.md).
        let permanent =
            !call.ws.options().trash.keep_overwrites && !matches!(planned, Planned::Absent);
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
        if let Planned::Present {
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
        let created = matches!(planned, Planned::Absent);
        let planned_old_lines = match &planned {
            Planned::Absent => OldLines::None,
            Planned::Present {
                bytes: Some(old), ..
            } => OldLines::Counted(files::line_count(old)),
            Planned::Present { bytes: None, .. } => OldLines::TooLarge,
        };
        let sha_before = match &planned {
            Planned::Present { bytes: Some(b), .. } => Some(sha256_hex(b)),
            _ => None,
        };
        let keep_old = call.ws.options().trash.keep_overwrites && !created;
        let (ws, committed_target, new_content, cancel) = (
            call.ws.clone(),
            target.clone(),
            content.clone(),
            call.cancel.clone(),
        );
        let (Written { trashed, stat }, created_dirs) = call
            .blocking(move || {
                let keep = keep_old.then_some(&cancel);
                let created_dirs = files::missing_parents(&committed_target);
                let written = commit(
                    &ws,
                    &committed_target,
                    &planned,
                    new_content.as_bytes(),
                    keep,
                )?;
                Ok((written, created_dirs))
            })
            .await?;
        if let Some(seen) = &stat {
            call.saw(&target.path, seen);
        }
        let mut summary = summary(&target.path, &planned_old_lines, &diff, content.as_bytes());
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
                .with_data("bytes", content.len())
                .with_data("created", created);
        if let Some(archive) = &trashed {
            success = success.with_data("trashedTo", archive.shown().into_owned());
        }
        success.diff = Some(diff.text);
        let action = if created {
            Action::Added
        } else {
            Action::Modified
        };
        let mut change = FileChange {
            sha256_before: sha_before,
            sha256_after: Some(sha256_hex(content.as_bytes())),
            trashed_to: trashed,
            ..FileChange::new(target.path, action)
        };
        change.undo.created_dirs = created_dirs;
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
fn summary(path: &std::path::Path, old: &OldLines, diff: &UnifiedDiff, content: &[u8]) -> Summary {
    let (p, size) = (path.shown(), super::bytes(content.len() as u64));
    let lines = super::quantity(files::line_count(content) as u64, "line", "lines");
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

/// What a write left: the archive of the old content, and the file written.
struct Written {
    trashed: Option<PathBuf>,
    stat: Option<Seen>,
}

/// Creates the parents, checks the file is still what was planned on, keeps the old content in
/// the trash when asked (`keep`, with the call's abort token), and replaces the file — only the
/// file planned on, with the content planned on (`files::write_atomic`).
fn commit(
    ws: &Workspace,
    target: &crate::paths::Target,
    planned: &Planned,
    content: &[u8],
    keep: Option<&CancelToken>,
) -> Result<Written, ToolError> {
    let (parent_path, name) = target
        .split()
        .ok_or_else(|| files::is_a_directory(&target.path))?;
    let (parent, _) = fsops::ensure_dir(&target.anchor, parent_path)
        .map_err(|e| ToolError::io(&e, "create the parent directory of", &target.path))?;
    planned.verify(&parent, name, &target.path)?;
    let archived = match keep {
        Some(cancel) => {
            let archived = put_in_trash(ws, parent.as_fd(), name, &target.path, false, cancel)?;
            // The archive is read by name: make sure it holds what was diffed, not something
            // swapped in since the check above.
            if let Planned::Present {
                bytes: Some(old), ..
            } = planned
            {
                if archived.metadata.original_sha256 != sha256_hex(old) {
                    return Err(files::changed_since_planned(&target.path));
                }
            }
            Some(archived)
        }
        None => None,
    };
    // A file too large to keep in memory is compared with its archive where there is one.
    let same_content = |file: &mut std::fs::File| match (planned, &archived) {
        (Planned::Present { bytes: None, .. }, Some(archived)) => {
            Ok(sha256_reader(file)? == archived.metadata.original_sha256)
        }
        _ => planned.same_content(file),
    };
    let replacing = match planned {
        Planned::Absent => Replacing::Nothing,
        Planned::Present { stat, .. } => Replacing::File {
            stat,
            same_content: &same_content,
        },
    };
    files::write_atomic(ws.journal(), target, parent.as_fd(), content, replacing)?;
    // The archive stays locked (out of `trashClear`'s reach) until the old content is replaced.
    Ok(Written {
        trashed: archived.map(|a| a.archive_path),
        stat: files::file_stat_at(parent.as_fd(), name),
    })
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

    /// A file made read-only is not replaced, even by root (whom the system would let through):
    /// as an editor would, the tool refuses and says what to do.
    #[tokio::test]
    async fn a_read_only_file_is_refused() {
        use std::os::unix::fs::PermissionsExt;
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
