//! `append_file`: append text to a file in place (creating it, and its parents, if missing),
//! bounded by `appendMaxTotalBytes`. In-place means other links to the same inode see the change,
//! so inside a sandbox a file with several hard links is refused.

use std::ffi::OsStr;
use std::io::Write;
use std::os::fd::{AsFd, BorrowedFd};

use serde::Deserialize;
use serde_json::{json, Value};

use super::files::{self, Planned};
use super::{object_schema, parse_args, ToolSpec};
use crate::call::{Authorization, BoxFuture, Call, Outcome, Rewrite, Success, ToolNames};
use crate::change::{Action, FileChange};
use crate::error::{ErrorCode, ToolError};
use crate::journal::{self, Tail};
use crate::options::WorkspaceOptions;
use crate::paths::fsops;
use crate::paths::sandbox::FinalLink;
use crate::paths::shown::Shown;
use crate::paths::Target;
use crate::permissions::Operation;
use crate::text::decode::{decode_for_edit, DecodeError};
use crate::text::delta::Delta;
use crate::views::{Moment, Seen};

pub static SPEC: ToolSpec = ToolSpec {
    name: "append_file",
    description,
    schema,
    mutates: true,
    destructive: false,
    idempotent: false,
    asks: true,
    path_argument: Some("path"),
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
                        Ok((Planned::Absent, diff))
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
                        Ok((Planned::Present { stat: opened.stat, bytes: Some(old) }, diff))
                    }
                }
            })
            .await?
        };
        let stale_note = match &planned {
            Planned::Present { stat, .. } => call.check_view(&target.path, stat, Rewrite::Part)?,
            Planned::Absent => None,
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
        let created = matches!(planned, Planned::Absent);
        let (sha256_before, sha256_after) = digests(&planned, content.as_bytes());
        let old_len = match &planned {
            Planned::Present {
                bytes: Some(old), ..
            } => Some(old.len()),
            _ => None,
        };
        let (created_dirs, written) = {
            let (target, content) = (target.clone(), content.clone());
            let ws = call.ws.clone();
            call.blocking(move || {
                let created_dirs = files::missing_parents(&target);
                let written = commit(
                    &target,
                    &planned,
                    content.as_bytes(),
                    sandboxed,
                    ws.journal(),
                )?;
                Ok((created_dirs, written))
            })
            .await?
        };
        if let Some(seen) = &written {
            call.saw(&target.path, seen);
        }
        let summary = if created {
            format!(
                "Created {} with {} ({})",
                target.path.shown(),
                super::bytes(content.len() as u64),
                super::quantity(
                    files::line_count(content.as_bytes()) as u64,
                    "line",
                    "lines"
                )
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
        let mut change = FileChange {
            sha256_before,
            sha256_after: Some(sha256_after),
            ..FileChange::new(
                target.path,
                if created {
                    Action::Added
                } else {
                    Action::Modified
                },
            )
        };
        change.undo.created_dirs = created_dirs;
        // Taking the append back is cutting the file to its old length.
        if let Some(old_len) = old_len {
            let appended = old_len..old_len + content.len();
            let reverse = Delta::from_ranges(&[], [(0..0, appended)]);
            change.undo.reverse = Some(std::sync::Arc::new(reverse.encode()));
        }
        Ok(success.with_change(change))
    })
}

/// Appends to the file planned on. An existing file is opened once (read + append) and
/// everything is checked on that descriptor before the bytes go through it: the same inode as
/// planned, still a single link inside a sandbox, the same content. Checking by name and then
/// reopening by name would leave a window in which a hard link to a file outside the allowed
/// trees, swapped in under the name, receives the append (found by `tests/races.rs`). A missing
/// file is created through a temp file renamed into place without replacing anything
/// (`RENAME_NOREPLACE`): a fresh inode nobody else links to, absent or complete after a crash
/// (the temp file is journaled like an atomic write's, so a crash does not leave it for good).
///
/// Crash safety of the in-place append: a journal record (see `crate::journal`) is fsynced before
/// the first byte goes through the descriptor and removed once the file is fsynced; the next
/// `Workspace` on the same root and data dir truncates a partial append back to the old size,
/// unless anything was written after it (see `crate::journal`).
///
/// Returns the file as the append left it (for the model's view of it, ../../docs/tools.md#stale-views).
fn commit(
    target: &Target,
    planned: &Planned,
    content: &[u8],
    sandboxed: bool,
    journal: &journal::Journal,
) -> Result<Option<Seen>, ToolError> {
    let (parent_path, name) = target
        .split()
        .ok_or_else(|| files::is_a_directory(&target.path))?;
    let (parent, _) = fsops::ensure_dir(&target.anchor, parent_path)
        .map_err(|e| ToolError::io(&e, "create the parent directory of", &target.path))?;
    let mut file = match planned {
        Planned::Absent => {
            create_new(journal, target, parent.as_fd(), content)?;
            return Ok(files::file_stat_at(parent.as_fd(), name));
        }
        Planned::Present { stat, bytes } => {
            let mut file = match fsops::open_for_update(parent.as_fd(), name) {
                Ok(file) => file,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(files::changed_since_planned(&target.path))
                }
                Err(e) => return Err(ToolError::io(&e, "append to", &target.path)),
            };
            let now =
                fsops::fstat(&file).map_err(|e| ToolError::io(&e, "append to", &target.path))?;
            if fsops::identity(&now) != fsops::identity(stat) {
                return Err(files::changed_since_planned(&target.path));
            }
            if sandboxed && fsops::link_count(&now) > 1 {
                return Err(hard_links(&target.path, fsops::link_count(&now)));
            }
            let unchanged = match bytes {
                Some(expected) => {
                    files::read_at_most(&mut file, expected.len() as u64, "check", &target.path)?
                        .as_deref()
                        == Some(expected.as_slice())
                }
                None => files::same_version(stat, &now),
            };
            if !unchanged {
                return Err(files::changed_since_planned(&target.path));
            }
            file
        }
    };
    let old_size = fsops::fstat(&file)
        .map_err(|e| ToolError::io(&e, "append to", &target.path))?
        .size;
    let entry = journal
        .begin(&target.path, &file, old_size, content)
        .map_err(|e| ToolError::io(&e, "journal the append to", &target.path))?;
    let written = file.write_all(content).and_then(|()| file.sync_data());
    let Err(e) = written else {
        entry.finish();
        let at = Moment::now();
        return Ok(fsops::fstat(&file).ok().map(|stat| Seen { stat, at }));
    };
    let mut error = ToolError::io(&e, "append to", &target.path);
    // Roll back now rather than at the next Workspace, and only what is provably ours: the old
    // content followed by a prefix of `content` and nothing else. Should the rollback itself
    // fail, the record stays for the next Workspace.
    match journal::roll_back_if_ours(&file, old_size, content, content.len() as u64, false) {
        Ok(Tail::Other) => {
            entry.finish();
            error.message.push_str(
                "; the file also changed meanwhile, so whatever part of the text went through was left at its end: read the end of the file before appending again",
            );
        }
        Ok(Tail::Absent | Tail::CutShort | Tail::Whole) => entry.finish(),
        Err(_) => {}
    }
    Err(error)
}

/// Creates the missing `target` in its opened `parent` with `content`, through a journaled temp
/// file (see [`create_through`]).
fn create_new(
    journal: &journal::Journal,
    target: &Target,
    parent: BorrowedFd<'_>,
    content: &[u8],
) -> Result<(), ToolError> {
    let (parent_path, name) = target
        .split()
        .ok_or_else(|| files::is_a_directory(&target.path))?;
    let temp = fsops::temp_name(name);
    journal.with_temp(parent_path, parent, &temp, || {
        create_through(parent, &temp, name, content, target)
    })
}

/// Creates the missing `name` in `parent` with `content`: written to the temp file `temp`,
/// fsynced, then renamed into place only if `name` is still absent.
fn create_through(
    parent: BorrowedFd<'_>,
    temp: &OsStr,
    name: &OsStr,
    content: &[u8],
    target: &Target,
) -> Result<(), ToolError> {
    let mut file = fsops::open_for_append(parent, temp, true)
        .map_err(|e| ToolError::io(&e, "append to", &target.path))?;
    let result = file
        .write_all(content)
        .and_then(|()| file.sync_all())
        .and_then(|()| fsops::rename_noreplace(parent, temp, parent, name));
    match result {
        Ok(()) => {
            fsops::fsync_dir(parent);
            Ok(())
        }
        Err(e) => {
            let _ = fsops::unlink_at(parent, temp);
            Err(if e.kind() == std::io::ErrorKind::AlreadyExists {
                files::changed_since_planned(&target.path)
            } else {
                ToolError::io(&e, "append to", &target.path)
            })
        }
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
fn digests(planned: &Planned, content: &[u8]) -> (Option<String>, String) {
    use crate::hashing::hex;
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    let before = match planned {
        Planned::Present {
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
