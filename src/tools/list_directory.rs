//! `list_directory`: one entry per line, sorted, bounded by `listMaxEntries`. Symlinks are shown
//! as links with their own lstat data and never descended. A recursive listing skips `.git` and,
//! unless `includeIgnored`, whatever `.gitignore` files ignore (see [`crate::walk`]).

use std::ffi::OsStr;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Deserialize;
use serde_json::{json, Value};

use super::{object_schema, parse_args, ToolSpec};
use crate::call::{Authorization, BoxFuture, Call, Outcome, Success};
use crate::cancel::CancelToken;
use crate::error::ToolError;
use crate::paths::fsops::{self, EntryKind};
use crate::paths::sandbox::FinalLink;
use crate::paths::{Sandbox, Target};
use crate::permissions::Operation;
use crate::walk::{self, WalkOptions};

pub static SPEC: ToolSpec = ToolSpec {
    name: "list_directory",
    description: "List a directory: `name/` for directories, `name -> target` for symbolic links, `name (size, date)` for files. \
With recursive: true, lists the whole tree (paths relative to the listed directory), skipping .git and files ignored by \
.gitignore unless includeIgnored is true. Output is capped; list a subdirectory to narrow a large tree.",
    schema,
    mutates: false,
    destructive: false,
    idempotent: true,
    path_argument: Some("path"),
    format_call,
    run,
};

fn schema() -> Value {
    object_schema(
        json!({
            "path": { "type": "string", "minLength": 1, "description": "The directory to list, absolute or relative to the current working directory. Default: the current working directory." },
            "recursive": { "type": "boolean", "description": "List the whole tree below the directory instead of only its direct entries. Default false." },
            "includeIgnored": { "type": "boolean", "description": "In a recursive listing, also list what .gitignore ignores (such as node_modules). Default false." },
        }),
        &[],
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Args {
    path: Option<String>,
    #[serde(default)]
    recursive: bool,
    #[serde(default)]
    include_ignored: bool,
}

fn format_call(args: &Value) -> String {
    let path = args
        .get("path")
        .and_then(Value::as_str)
        .unwrap_or(".")
        .to_owned();
    if args.get("recursive").and_then(Value::as_bool) == Some(true) {
        format!("{path} (recursive)")
    } else {
        path
    }
}

fn run(call: &Call, args: Value) -> BoxFuture<'_, Outcome> {
    Box::pin(async move {
        let args: Args = parse_args("list_directory", args)?;
        let raw = args.path.as_deref().unwrap_or(".");
        let target = call.resolve(raw, "path", FinalLink::Follow)?;
        let checked = target.clone();
        // Opened once, before asking: what is listed is the directory that was checked.
        let dir = call.blocking(move || open_listable(&checked)).await?;
        let question = Authorization::of(
            Operation::Read,
            &target,
            "List directory?",
            "The user denied this read.",
        );
        call.authorize(if args.recursive {
            Authorization {
                detail: format!("{} (recursive)", question.detail),
                recursive: Some(true),
                ..question
            }
        } else {
            question
        })
        .await?;
        let max = call.limits().list_max_entries as usize;
        let sandbox = call.ws.sandbox().clone();
        let listed = target.clone();
        let cancel = call.cancel.clone();
        let listing = call
            .blocking(move || {
                if args.recursive {
                    walk_tree(dir, &listed, &sandbox, args.include_ignored, max, &cancel)
                } else {
                    direct_entries(dir, &listed, &sandbox, max)
                }
            })
            .await?;
        call.check_abort()?;
        let mut text = listing.lines.join("\n");
        if listing.lines.is_empty() {
            text = "(empty directory)".into();
        }
        if listing.truncated {
            text.push_str(&format!(
                "\n[Listing truncated at {max} entries. List a subdirectory{} to see the rest.]",
                if args.recursive {
                    ", or list without recursive,"
                } else {
                    ""
                }
            ));
        }
        let success = Success::text(text)
            .with_data("path", target.path.display().to_string())
            .with_data("entries", listing.lines.len())
            .with_data("truncated", listing.truncated);
        Ok(success)
    })
}

struct Listing {
    lines: Vec<String>,
    truncated: bool,
}

/// Opens the directory to list (readable), with the SPEC's messages for what is not one.
fn open_listable(target: &Target) -> Result<OwnedFd, ToolError> {
    super::files::open_directory(target, true, "list", "use read_file to read a file")
}

/// The direct entries of `fd` (the directory `target`, open for reading).
fn direct_entries(
    fd: OwnedFd,
    target: &Target,
    sandbox: &Sandbox,
    max: usize,
) -> Result<Listing, ToolError> {
    let dir = rustix::fs::Dir::read_from(&fd)
        .map_err(|e| ToolError::io(&e.into(), "list", &target.path))?;
    let mut names: Vec<Vec<u8>> = Vec::new();
    for entry in dir {
        let entry = entry.map_err(|e| ToolError::io(&e.into(), "list", &target.path))?;
        let name = entry.file_name().to_bytes();
        if name == b"."
            || name == b".."
            || fsops::is_temp_name(OsStr::from_bytes(name))
            || sandbox.is_hidden(&target.path.join(OsStr::from_bytes(name)))
        {
            continue;
        }
        names.push(name.to_vec());
    }
    names.sort();
    let truncated = names.len() > max;
    let mut lines = Vec::with_capacity(names.len().min(max));
    for name in names.iter().take(max) {
        let name = OsStr::from_bytes(name);
        let Some(stat) = fsops::lstat_at(fd.as_fd(), name)
            .map_err(|e| ToolError::io(&e, "list", &target.path))?
        else {
            continue; // removed while listing
        };
        let link = || {
            fsops::read_link_at(fd.as_fd(), name)
                .ok()
                .map(PathBuf::from)
        };
        lines.push(entry_line(
            Path::new(name),
            EntryKind::of(&stat),
            stat.st_size as u64,
            stat.st_mtime,
            link,
        ));
    }
    Ok(Listing { lines, truncated })
}

/// The whole tree below `dir` (open, at `listed`), depth first in name order, `.git` and (unless
/// `include_ignored`) ignored files skipped, through directory descriptors only (see
/// [`crate::walk`]). Only regular files are `lstat`ed (for their size and date), and only
/// symlinks are read.
fn walk_tree(
    dir: OwnedFd,
    listed: &Target,
    sandbox: &Sandbox,
    include_ignored: bool,
    max: usize,
    cancel: &CancelToken,
) -> Result<Listing, ToolError> {
    let options = WalkOptions {
        sandbox,
        include_ignored,
        limit: Some(max),
        cancel,
    };
    let walked = walk::walk(dir, listed, &options, |entry| {
        let (kind, size, mtime) = match entry.kind {
            EntryKind::File => {
                // Whatever it is now, as of this lstat (or gone: removed while listing).
                let stat = fsops::lstat_at(entry.dir, entry.name).ok()??;
                (EntryKind::of(&stat), stat.st_size as u64, stat.st_mtime)
            }
            kind => (kind, 0, 0),
        };
        let link = || {
            fsops::read_link_at(entry.dir, entry.name)
                .ok()
                .map(PathBuf::from)
        };
        Some(entry_line(entry.rel, kind, size, mtime, link))
    })?;
    Ok(Listing {
        lines: walked.items,
        truncated: walked.truncated,
    })
}

/// `dir/`, `link -> target`, `file (N bytes, YYYY-MM-DD)`.
fn entry_line(
    rel: &Path,
    kind: EntryKind,
    size: u64,
    mtime: i64,
    link: impl FnOnce() -> Option<PathBuf>,
) -> String {
    let name = rel.display();
    match kind {
        EntryKind::Directory => format!("{name}/"),
        EntryKind::Symlink => match link() {
            Some(target) => format!("{name} -> {}", target.display()),
            None => format!("{name} -> (unreadable link)"),
        },
        EntryKind::File => format!("{name} ({}, {})", format_size(size), date(mtime)),
        EntryKind::Special => format!("{name} (special file)"),
    }
}

fn format_size(size: u64) -> String {
    super::bytes(size)
}

/// The UTC date of a Unix time, `YYYY-MM-DD`.
fn date(unix_seconds: i64) -> String {
    let time = if unix_seconds >= 0 {
        UNIX_EPOCH + Duration::from_secs(unix_seconds as u64)
    } else {
        UNIX_EPOCH
    };
    let stamp = humantime::format_rfc3339_seconds(
        time.max(UNIX_EPOCH)
            .min(SystemTime::UNIX_EPOCH + Duration::from_secs(253_402_300_799)),
    );
    stamp.to_string()[..10].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_lines_follow_the_spec() {
        assert_eq!(
            entry_line(Path::new("src"), EntryKind::Directory, 0, 0, || None),
            "src/"
        );
        assert_eq!(
            entry_line(Path::new("l"), EntryKind::Symlink, 0, 0, || Some(
                PathBuf::from("../x")
            )),
            "l -> ../x"
        );
        assert_eq!(
            entry_line(
                Path::new("a/b.txt"),
                EntryKind::File,
                12,
                1_700_000_000,
                || None
            ),
            "a/b.txt (12 bytes, 2023-11-14)"
        );
    }
}
