//! `list_directory`: one entry per line, sorted, bounded by `listMaxEntries`. Symlinks are shown
//! as links with their own lstat data and never descended. A recursive listing skips `.git` and,
//! unless `includeIgnored`, whatever `.gitignore` files ignore (ripgrep's `ignore` crate).

use std::ffi::OsStr;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Deserialize;
use serde_json::{json, Value};

use super::{object_schema, parse_args, ToolSpec};
use crate::call::{Authorization, BoxFuture, Call, Outcome, Success};
use crate::error::ToolError;
use crate::paths::fsops::{self, EntryKind};
use crate::paths::sandbox::FinalLink;
use crate::paths::{Sandbox, Target};
use crate::permissions::Operation;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

pub static SPEC: ToolSpec = ToolSpec {
    name: "list_directory",
    description: "List a directory: `name/` for directories, `name -> target` for symbolic links, `name (size, date)` for files. \
With recursive: true, lists the whole tree (paths relative to the listed directory), skipping .git and files ignored by \
.gitignore unless includeIgnored is true. Output is capped; list a subdirectory to narrow a large tree.",
    schema,
    mutates: false,
    destructive: false,
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
        call.blocking(move || open_listable(&checked).map(drop))
            .await?;
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
        let root = call.ws.sandbox().root().to_path_buf();
        let listing = call
            .blocking(move || {
                if args.recursive {
                    let outer = if args.include_ignored {
                        Vec::new()
                    } else {
                        super::gitignore_scope::outer_gitignores(&listed, &root)
                    };
                    walk(
                        &listed,
                        &sandbox,
                        args.include_ignored,
                        &outer,
                        max,
                        &|| cancel.is_aborted(),
                    )
                } else {
                    direct_entries(&listed, &sandbox, max)
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
        let mut success = Success::text(text)
            .with_data("path", target.path.display().to_string())
            .with_data("entries", listing.lines.len())
            .with_data("truncated", listing.truncated);
        success.path = Some(target.path);
        Ok(success)
    })
}

struct Listing {
    lines: Vec<String>,
    truncated: bool,
}

/// Opens the directory to list (readable), with the SPEC's messages for what is not one.
fn open_listable(target: &Target) -> Result<std::os::fd::OwnedFd, ToolError> {
    super::files::open_directory(target, true, "list", "use read_file to read a file")
}

/// The direct entries, read through the directory descriptor.
fn direct_entries(target: &Target, sandbox: &Sandbox, max: usize) -> Result<Listing, ToolError> {
    let fd = open_listable(target)?;
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

/// The whole tree, depth first in name order, `.git` and (optionally) ignored files skipped.
/// `outer` are the ancestors' `.gitignore` files that also apply (farthest first).
///
/// The walk goes through directory descriptors only: the listed directory is opened beneath its
/// anchor with `RESOLVE_NO_SYMLINKS`, every subdirectory with `openat(O_NOFOLLOW | O_DIRECTORY)`
/// on its parent's descriptor, every entry is `lstat`ed relative to that descriptor, and every
/// `.gitignore` is read the same way. A directory swapped for a symlink to an outside tree while
/// the walk runs is therefore listed as what it was or not descended: its target's names are
/// never read. (A path-based walker, such as the `ignore` crate's, re-resolves each directory by
/// path when it descends and lists whatever a swapped link points to; `tests/races.rs` caught it.)
///
/// Ignore rules are those the `ignore` crate applied with `git_ignore`, `git_exclude`,
/// `require_git(false)` and no parents: in each directory, its `.gitignore`, then its
/// `.git/info/exclude` (a `.git` directory only; a worktree's `.git` file is not followed), the
/// nearest directory's match winning; then `outer`, nearest first. Like git (≥ 2.32), a
/// `.gitignore` that is a symlink is not read.
fn walk(
    listed: &Target,
    sandbox: &Sandbox,
    include_ignored: bool,
    outer: &[PathBuf],
    max: usize,
    aborted: &dyn Fn() -> bool,
) -> Result<Listing, ToolError> {
    let root_fd = open_listable(listed)?;
    let explicit: Vec<Gitignore> = if include_ignored {
        Vec::new()
    } else {
        outer
            .iter()
            .filter_map(|file| outer_matcher(&listed.anchor, file))
            .collect()
    };
    let mut lines = Vec::new();
    let mut stack = vec![WalkDir::open(
        root_fd,
        listed.path.clone(),
        PathBuf::new(),
        include_ignored,
    )];
    while let Some(top) = stack.last_mut() {
        if aborted() {
            return Err(ToolError::aborted());
        }
        let Some(name) = top.names.get(top.next).cloned() else {
            stack.pop();
            continue;
        };
        top.next += 1;
        let abs = top.abs.join(&name);
        if name == ".git" || fsops::is_temp_name(&name) || sandbox.is_hidden(&abs) {
            continue;
        }
        let Ok(Some(stat)) = fsops::lstat_at(top.fd.as_fd(), &name) else {
            continue; // removed while listing
        };
        let kind = EntryKind::of(&stat);
        let is_dir = kind == EntryKind::Directory;
        if !include_ignored && is_ignored(&stack, &explicit, &abs, is_dir) {
            continue;
        }
        if lines.len() == max {
            return Ok(Listing {
                lines,
                truncated: true,
            });
        }
        let top = stack.last().expect("the loop holds a directory");
        let rel = top.rel.join(&name);
        let link = || {
            fsops::read_link_at(top.fd.as_fd(), &name)
                .ok()
                .map(PathBuf::from)
        };
        lines.push(entry_line(
            &rel,
            kind,
            stat.st_size as u64,
            stat.st_mtime,
            link,
        ));
        if is_dir {
            // Not a directory any more (swapped for a link), unreadable, gone: not descended.
            if let Ok(fd) = open_subdir(top.fd.as_fd(), &name) {
                stack.push(WalkDir::open(fd, abs, rel, include_ignored));
            }
        }
    }
    Ok(Listing {
        lines,
        truncated: false,
    })
}

/// A directory being walked: its descriptor, where it is, its sorted entries and its ignore rules.
struct WalkDir {
    fd: std::os::fd::OwnedFd,
    abs: PathBuf,
    rel: PathBuf,
    names: Vec<std::ffi::OsString>,
    next: usize,
    gitignore: Option<Gitignore>,
    exclude: Option<Gitignore>,
}

impl WalkDir {
    fn open(fd: std::os::fd::OwnedFd, abs: PathBuf, rel: PathBuf, include_ignored: bool) -> Self {
        let mut names = fsops::list_names(fd.as_fd()).unwrap_or_default();
        names.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
        let (gitignore, exclude) = if include_ignored {
            (None, None)
        } else {
            let gitignore = read_ignore_file(fd.as_fd(), &[".gitignore"])
                .map(|text| matcher(&abs, &abs.join(".gitignore"), &text));
            let exclude = read_ignore_file(fd.as_fd(), &[".git", "info", "exclude"])
                .map(|text| matcher(&abs, &abs.join(".git/info/exclude"), &text));
            (gitignore, exclude)
        };
        WalkDir {
            fd,
            abs,
            rel,
            names,
            next: 0,
            gitignore,
            exclude,
        }
    }
}

/// Whether the entry `abs` is ignored: the nearest directory's `.gitignore` match, else the
/// nearest `.git/info/exclude` match, else the nearest outer file's match (a whitelist `!`
/// rule counts as a match that keeps it).
fn is_ignored(stack: &[WalkDir], explicit: &[Gitignore], abs: &Path, is_dir: bool) -> bool {
    // Some(true) for an ignore rule, Some(false) for a whitelist rule, None for no match.
    let verdict = |m: &Gitignore| {
        let matched = m.matched(abs, is_dir);
        (!matched.is_none()).then(|| matched.is_ignore())
    };
    let dirs = || stack.iter().rev();
    dirs()
        .filter_map(|d| d.gitignore.as_ref())
        .find_map(verdict)
        .or_else(|| dirs().filter_map(|d| d.exclude.as_ref()).find_map(verdict))
        .or_else(|| explicit.iter().rev().find_map(verdict))
        .unwrap_or(false)
}

/// The largest ignore file read; the rest of a larger one is not applied.
const IGNORE_FILE_MAX_BYTES: u64 = 1024 * 1024;

/// The text of the regular file at `path` (components) beneath `dir`, reached without following
/// any symlink; `None` if it is missing, not a regular file or unreadable.
fn read_ignore_file(dir: std::os::fd::BorrowedFd<'_>, path: &[&str]) -> Option<Vec<u8>> {
    let (file_name, dirs) = path.split_last()?;
    let mut holder: Option<std::os::fd::OwnedFd> = None;
    for part in dirs {
        let parent = holder.as_ref().map_or(dir, |fd| fd.as_fd());
        holder = Some(open_subdir(parent, OsStr::new(part)).ok()?);
    }
    let parent = holder.as_ref().map_or(dir, |fd| fd.as_fd());
    let mut file = fsops::open_for_read(parent, OsStr::new(file_name)).ok()?;
    if EntryKind::of(&fsops::fstat(&file).ok()?) != EntryKind::File {
        return None;
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(&mut file, IGNORE_FILE_MAX_BYTES),
        &mut bytes,
    )
    .ok()?;
    Some(bytes)
}

/// An outer `.gitignore` (an ancestor's, inside the anchor), read through a descriptor.
fn outer_matcher(anchor: &Path, file: &Path) -> Option<Gitignore> {
    let dir = file.parent()?;
    let fd = fsops::open_dir(anchor, dir, false).ok()?;
    let text = read_ignore_file(fd.as_fd(), &[file.file_name()?.to_str()?])?;
    Some(matcher(dir, file, &text))
}

/// The matcher of one ignore file's `text`, its patterns relative to `dir`, read line by line as
/// the `ignore` crate reads a file: a leading BOM dropped, reading stopping at the first line
/// that is not UTF-8, invalid patterns skipped.
fn matcher(dir: &Path, file: &Path, text: &[u8]) -> Gitignore {
    let mut builder = GitignoreBuilder::new(dir);
    for (i, line) in text.split(|b| *b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Ok(line) = std::str::from_utf8(line) else {
            break;
        };
        let line = if i == 0 {
            line.trim_start_matches('\u{feff}')
        } else {
            line
        };
        let _ = builder.add_line(Some(file.to_path_buf()), line);
    }
    builder.build().unwrap_or_else(|_| Gitignore::empty())
}

/// Opens the subdirectory `name` of `dir` for listing, never following a symlink.
fn open_subdir(
    dir: std::os::fd::BorrowedFd<'_>,
    name: &OsStr,
) -> std::io::Result<std::os::fd::OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(std::io::Error::from)
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
