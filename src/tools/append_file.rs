//! `append_file`: append text to a file in place (creating it, and its parents, if missing),
//! bounded by `appendMaxTotalBytes`. In-place means other links to the same inode see the change,
//! so inside a sandbox a file with several hard links is refused.

use crate::paths::AsDir;

use serde::Deserialize;
use serde_json::{json, Value};

use super::files::{self, WhenPlanned};
use super::{object_schema, parse_args, ToolSpec};
use crate::call::execute::{execute, Done, Failure};
use crate::call::plan::{Act, ChangePlan, Expect, Found, Keep, Place, Step};
use crate::call::trashing::trash_error;
use crate::call::{Authorization, BoxFuture, Call, Outcome, Recorded, Rewrite, Success, ToolNames};
use crate::cancel::CancelToken;
use crate::change::{Action, FileChange};
use crate::error::{ErrorCode, ToolError};
use crate::history::Heading;
use crate::journal::commit::LeftAtEnd;
use crate::options::WorkspaceOptions;
use crate::paths::fsops;
use crate::paths::sandbox::FinalLink;
use crate::paths::shown::Shown;
use crate::paths::Target;
use crate::permissions::Operation;
use crate::text::decode::{decode_for_edit, DecodeError};
use crate::text::delta::Delta;
use crate::text::line_split::line_count;
use crate::views::Seen;
use crate::workspace::Workspace;

pub static SPEC: ToolSpec = ToolSpec {
    name: "append_file",
    description,
    schema,
    mutates: true,
    destructive: false,
    idempotent: false,
    asks: true,
    path_argument: Some("path"),
    summarizes_itself: false,
    format_call: super::format_path,
    run,
};

fn description(names: &ToolNames, _: &WorkspaceOptions) -> String {
    let parts = names.hint("write_file", |write| {
        format!(", and to write a file too large for one {write} call in parts")
    });
    let edit = names.hint("edit_file", |edit| {
        format!(" To change existing text use {edit}.")
    });
    format!(
        "Add text to the end of a file, creating the file (and missing parent directories) if needed. Nothing is \
put between the old end and `content`: start it with a newline if the file may not end with one. Use it for logs{parts}.\
{edit}"
    )
}

fn schema() -> Value {
    object_schema(
        json!({
            "path": { "type": "string", "minLength": 1, "description": "The file to append to, absolute or relative to the current working directory." },
            "content": { "type": "string", "description": "The text to append, exactly as it should appear." },
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
        let args: Args = parse_args("append_file", args)?;
        let target = call.resolve(&args.path, "path", FinalLink::Follow)?;
        crate::paths::resolve::file_path_not_directory_syntax(&args.path, "path", &target.path)?;
        let lock = call.lock_for_change(&[&target.path]).await?;
        let limits = call.limits().clone();
        let sandboxed = call.ws.options().allowed_paths.is_some();
        let label = files::diff_label(&target.path, call.ws.sandbox().root());
        let content = std::sync::Arc::new(args.content);
        let (planned, diff) = {
            let (target, content) = (target.clone(), content.clone());
            call.reading(move || {
                let max = limits.append_max_total_bytes;
                let too_large = |current: u64| {
                    ToolError::new(
                        ErrorCode::TooLarge,
                        format!(
                            "appending {} bytes would make {} {} bytes, over the limit of {max} bytes (appendMaxTotalBytes); start a new file",
                            content.len(),
                            target.path.shown(),
                            current + content.len() as u64
                        ),
                    )
                };
                match files::open_existing(&target, "read")? {
                    None => {
                        if content.len() as u64 > max {
                            return Err(too_large(0));
                        }
                        let diff = files::diff_bytes(None, content.as_bytes(), &label, limits.diff_timeout_ms);
                        Ok((WhenPlanned::Absent, diff))
                    }
                    Some(mut opened) => {
                        files::ensure_writable(&opened, &target.path)?;
                        let size = opened.stat.size;
                        if size + content.len() as u64 > max {
                            return Err(too_large(size));
                        }
                        if sandboxed && fsops::link_count(&opened.stat) > 1 {
                            return Err(hard_links(&target.path, fsops::link_count(&opened.stat)));
                        }
                        let old = files::read_at_most(&mut opened.file, max, "read", &target.path)?
                            .ok_or_else(|| too_large(size))?;
                        refuse_unless_utf8_text(&old, &target.path)?;
                        let mut new = old.clone();
                        new.extend_from_slice(content.as_bytes());
                        let diff = files::diff_bytes(Some(&old), &new, &label, limits.diff_timeout_ms);
                        Ok((WhenPlanned::Present { stat: opened.stat, bytes: Some(old) }, diff))
                    }
                }
            })
            .await?
        };
        let stale_note = match &planned {
            WhenPlanned::Present { stat, .. } => {
                call.check_view(&target.path, stat, Rewrite::Part)?
            }
            WhenPlanned::Absent => None,
        };
        call.authorize(Authorization {
            diff: Some(diff.clone()),
            ..Authorization::of(
                Operation::Write,
                &target,
                "Append to file?",
                "The user denied this write.",
            )
        })
        .await?;
        let _lock = lock.exclusive().await;
        let created = matches!(planned, WhenPlanned::Absent);
        let data = content.as_bytes().to_vec();
        let append = Append {
            target: target.clone(),
            planned,
            sandboxed,
        };
        let (ws, heading, cancel) = (call.ws.clone(), call.heading.clone(), call.cancel.clone());
        let Appended {
            change,
            stat,
            recorded,
        } = call
            .blocking(move || append.make(&ws, data, &heading, &cancel))
            .await?;
        if let Some(seen) = &stat {
            call.saw(&target.path, seen);
        }
        let summary = if created {
            format!(
                "Created {} with {} ({})",
                target.path.shown(),
                super::bytes(content.len() as u64),
                super::quantity(line_count(content.as_bytes()) as u64, "line", "lines")
            )
        } else {
            format!(
                "Appended {} to {}",
                super::bytes(content.len() as u64),
                target.path.shown()
            )
        };
        let summary = match stale_note {
            Some(note) => format!("{summary}\n{note}"),
            None => summary,
        };
        // A new file is the model's own text: counted above, not echoed (../../docs/tools.md#bounded-outputs).
        let shown = if created { "" } else { &diff[..] };
        let mut success = Success::text(files::with_diff(
            summary,
            shown,
            call.limits().read_max_bytes,
        ))
        .with_data("path", target.path.shown().into_owned())
        .with_data("bytes", content.len())
        .with_data("created", created);
        success.diff = Some(diff);
        success.recorded = recorded;
        Ok(success.with_change(change))
    })
}

/// What an append left: its change as the history lists it, the file as the append left it
/// (the model's view of it, ../../docs/tools.md#stale-views), and whether the change is in the
/// history.
struct Appended {
    change: FileChange,
    stat: Option<Seen>,
    recorded: Recorded,
}

/// A confirmed append, made once the lock is exclusive.
struct Append {
    target: Target,
    planned: WhenPlanned,
    /// Inside a sandbox, a file with several hard links is refused: the others may be outside.
    sandboxed: bool,
}

impl Append {
    /// Appends `data` as one change with its history record (the record rides in the commit: a
    /// kill leaves both or neither, ../../docs/history-and-undo.md). An existing file gets the
    /// bytes in place, through a handle checked to be the file planned on — the same inode,
    /// still a single link inside a sandbox, still the bytes read (checking by name and then
    /// writing by name would let a hard link to a file outside the allowed trees, swapped in
    /// under the name, receive the append: `tests/races.rs`); the journal keeps a copy of the
    /// bytes, so an append cut short by a kill is taken back, unless anything was written after
    /// it. A missing file is created like a new file by `write_file`: staged under a temp name
    /// and taking the free name, its missing parents made and removed again unless it is.
    fn make(
        self,
        ws: &Workspace,
        data: Vec<u8>,
        heading: &Heading,
        cancel: &CancelToken,
    ) -> Result<Appended, ToolError> {
        let Append {
            target,
            planned,
            sandboxed,
        } = self;
        let path = &target.path;
        let at = Place::of(&target).ok_or_else(|| files::is_a_directory(path))?;
        let (sha256_before, sha256_after) = digests(&planned, &data);
        let len = data.len();
        let (step, old_len) = match planned {
            WhenPlanned::Absent => (
                Step {
                    at,
                    expect: Expect::Nothing,
                    keep: Keep::Nothing,
                    act: Act::Put {
                        data,
                        like: None,
                        sha256: None,
                    },
                },
                None,
            ),
            WhenPlanned::Present { stat, bytes } => {
                let old_len = bytes.map_or(stat.size as usize, |old| old.len());
                let sha256 = sha256_before.clone().unwrap_or_default();
                let step = Step {
                    at,
                    expect: Expect::File {
                        stat,
                        sha256,
                        bytes: None,
                    },
                    keep: Keep::Nothing,
                    act: Act::Append {
                        data,
                        single_link: sandboxed,
                    },
                };
                (step, Some(old_len))
            }
        };
        let created_dirs = match old_len {
            None => files::missing_parents(&target),
            Some(_) => Vec::new(),
        };
        let plan = ChangePlan {
            consume: Vec::new(),
            steps: vec![step],
        };
        let files = |_: &Done| {
            let action = match old_len {
                None => Action::Added,
                Some(_) => Action::Modified,
            };
            let mut change = FileChange {
                sha256_before,
                sha256_after: Some(sha256_after),
                ..FileChange::new(path.clone(), action)
            };
            change.undo.created_dirs = created_dirs;
            // Taking the append back is cutting the file to its old length.
            if let Some(old_len) = old_len {
                let appended = old_len..old_len + len;
                let reverse = Delta::from_ranges(&[], [(0..0, appended)]);
                change.undo.reverse = Some(std::sync::Arc::new(reverse.encode()));
            }
            vec![change]
        };
        let mut executed = execute(ws, plan, heading, cancel, files)
            .map_err(|e| failed(&target, e.failure, old_len.is_some()))?;
        let change = executed
            .files
            .pop()
            .ok_or_else(|| files::changed_since_planned(path))?;
        let stat = files::open_parent(&target, "append to")
            .ok()
            .and_then(|(parent, name)| files::file_stat_at(parent.as_dir(), &name));
        Ok(Appended {
            change,
            stat,
            recorded: executed.recorded,
        })
    }
}

/// An append that was not made, as the model reads it: nothing was written (or, where the
/// file also changed while a write failed partway, what went through is left at its end and
/// the message says so). `existing`: the append went to a file that was there.
fn failed(target: &Target, failure: Failure, existing: bool) -> ToolError {
    let path = &target.path;
    match failure {
        Failure::NotAsExpected(Found::Linked(links)) => hard_links(path, links),
        Failure::NotAsExpected(_) | Failure::Changed { .. } => files::changed_since_planned(path),
        // The file's directory is gone since it was read: not the file planned on.
        Failure::Io(e) if existing && e.kind() == std::io::ErrorKind::NotFound => {
            files::changed_since_planned(path)
        }
        Failure::Io(e) => {
            if let Some(os) = LeftAtEnd::of(&e) {
                let mut error = ToolError::io(os, "append to", path);
                error.message.push_str(
                    "; the file also changed meanwhile, so whatever part of the text went through was left at its end: read the end of the file before appending again",
                );
                return error;
            }
            // Directories made for a new file are gone again: one that cannot be opened now
            // is what failed.
            let opening = "create the parent directory of";
            if !existing && files::open_parent(target, opening).is_err() {
                return ToolError::io(&e, opening, path);
            }
            ToolError::io(&e, "append to", path)
        }
        Failure::Trash(e) => trash_error(e, "trash", path),
        Failure::Invalid(why) => ToolError::io(&std::io::Error::other(why), "append to", path),
    }
}

/// Appending UTF-8 text to a file that is not UTF-8 text (binary, UTF-16, another encoding)
/// would leave it in two encodings at once, unreadable to what reads it: refused.
fn refuse_unless_utf8_text(old: &[u8], path: &std::path::Path) -> Result<(), ToolError> {
    match decode_for_edit(old) {
        Ok(_) => Ok(()),
        Err(DecodeError::Binary) => Err(ToolError::new(
            ErrorCode::BinaryFile,
            format!(
                "{} is a binary file (or text in UTF-16 or UTF-32), and appending UTF-8 text would corrupt it; leave it as it is, or write a new file",
                path.shown()
            ),
        )),
        Err(DecodeError::Encoding { byte_offset }) => Err(ToolError::new(
            ErrorCode::Encoding,
            format!(
                "{} is not UTF-8 text (first invalid byte at offset {byte_offset}), and appending UTF-8 text would mix two encodings in it; leave it as it is, or write a new file",
                path.shown()
            ),
        )),
    }
}

/// The SHA-256 of the file before the append (`None` when it did not exist, or was too large to
/// keep while planning) and after it (the same, extended by `content`).
fn digests(planned: &WhenPlanned, content: &[u8]) -> (Option<String>, String) {
    use crate::hashing::hex;
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    let before = match planned {
        WhenPlanned::Present {
            bytes: Some(old), ..
        } => {
            hasher.update(old);
            Some(hex(&hasher.clone().finalize()))
        }
        _ => None,
    };
    hasher.update(content);
    let after = hex(&hasher.finalize());
    (before, after)
}

/// Appending in place to a file with several hard links would change the other links too.
fn hard_links(path: &std::path::Path, links: u64) -> ToolError {
    ToolError::not_allowed(format!(
        "{} has {links} hard links; appending in place would also change the other links, which may be outside the allowed directories. Write a new file instead",
        path.shown()
    ))
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use serde_json::json;

    use crate::call::{CallContext, ToolResult};
    use crate::confirm::{Answer, ConfirmRequest, Confirmer};
    use crate::error::ErrorCode;
    use crate::hashing::sha256_hex;
    use crate::testing::{save_in_place, TestWorkspace};

    /// An append is one change made with its record: a new file's lists the directories made
    /// for it, an append in place the delta that takes it back; nothing of the change (temp
    /// names, journal records, kept bytes) is left.
    #[tokio::test]
    async fn the_append_and_its_record_are_made_as_one_change() {
        let ws = TestWorkspace::new();
        for content in ["one\n", "two\n"] {
            let append = json!({ "path": "a/b/log.txt", "content": content });
            let result = ws.call("append_file", append).await;
            assert_eq!(result.code, None, "{}", result.output);
        }
        assert_eq!(ws.names(), ["a"]);
        assert_eq!(ws.read("a/b/log.txt"), "one\ntwo\n");
        let history = ws.settled_history();
        let [created, appended] = &history[..] else {
            panic!("two records: {}", history.len())
        };
        let file = &created.record.files[0];
        assert_eq!(file.created_dirs, [ws.root.join("a"), ws.root.join("a/b")]);
        assert_eq!(file.sha256_after, Some(sha256_hex(b"one\n")));
        assert!(file.delta.is_none());
        let file = &appended.record.files[0];
        assert!(file.created_dirs.is_empty());
        assert_eq!(file.sha256_before, Some(sha256_hex(b"one\n")));
        assert_eq!(file.sha256_after, Some(sha256_hex(b"one\ntwo\n")));
        assert!(file.delta.is_some(), "the delta that cuts the append off");
        assert!(
            appended.not_undoable.is_none(),
            "{:?}",
            appended.not_undoable
        );
    }

    /// Answers yes to the question, once `meanwhile` has run.
    struct AfterDoing(Box<dyn Fn() + Send + Sync>);

    impl Confirmer for AfterDoing {
        fn ask(&self, _: ConfirmRequest) -> Answer {
            (self.0)();
            Box::pin(async { true })
        }
    }

    /// Appends "new\n" to log.txt (holding "old\n") inside a sandbox (a prompt for it, as
    /// by default), doing `meanwhile` while asked.
    async fn append_while_asked(
        meanwhile: impl Fn(&Path) + Send + Sync + 'static,
    ) -> (TestWorkspace, ToolResult) {
        // A sandbox (allowed trees set) around the test's root.
        let tmp = crate::paths::canonical::canonicalize_existing(&std::env::temp_dir()).unwrap();
        let ws = TestWorkspace::with(json!({ "allowedPaths": [tmp], "permissions": {} }));
        let path = ws.root.join("log.txt");
        std::fs::write(&path, "old\n").unwrap();
        let ctx = CallContext {
            confirmer: Some(Arc::new(AfterDoing(Box::new(move || meanwhile(&path))))),
            ..CallContext::default()
        };
        let append = json!({ "path": "log.txt", "content": "new\n" });
        let result = ws.toolset.call("append_file", append, ctx).await;
        (ws, result)
    }

    /// Inside a sandbox, a file that gains a second hard link while the append is asked is
    /// refused with the planning's words, and left as it was.
    #[tokio::test]
    async fn a_hard_link_made_while_asked_is_refused() {
        let (ws, result) = append_while_asked(|path| {
            std::fs::hard_link(path, path.with_file_name("link.txt")).unwrap()
        })
        .await;
        assert_eq!(
            result.code,
            Some(ErrorCode::PathNotAllowed),
            "{}",
            result.output
        );
        assert!(
            result.output.contains("has 2 hard links"),
            "{}",
            result.output
        );
        assert_eq!(ws.read("log.txt"), "old\n");
        assert!(ws.settled_history().is_empty());
    }

    /// A file rewritten in place while the append is asked (the same size, other bytes) is
    /// a conflict, and left as it was.
    #[tokio::test]
    async fn a_file_written_while_asked_is_a_conflict() {
        let (ws, result) = append_while_asked(|path| save_in_place(path, "OLD\n")).await;
        assert_eq!(result.code, Some(ErrorCode::Conflict), "{}", result.output);
        assert_eq!(
            result.output,
            format!(
                "{} changed while waiting for confirmation; nothing was written. Read the file again and redo the change",
                ws.root.join("log.txt").display()
            )
        );
        assert_eq!(ws.read("log.txt"), "OLD\n");
        assert!(ws.settled_history().is_empty());
    }
}
