//! Helpers the file tools share: opening an existing regular file through the race-free layer
//! with the documented messages, bounded reads, diff labels, and the diff part of an output.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::Read;
use std::path::Path;

use crate::error::{ErrorCode, ToolError};
use crate::paths::fsops;
use crate::paths::os_error::{cause, Cause};
use crate::paths::shown::Shown;
use crate::paths::Target;
use crate::paths::{AsDir, BorrowedDir, Dir};
use crate::paths::{EntryKind, Stat};
use crate::text::bounded::bounded;
use crate::text::diff::UnifiedDiff;
use crate::views::{Moment, Seen};

/// An open regular file and the directory it was opened in.
pub struct OpenedFile {
    pub parent: Dir,
    pub name: OsString,
    pub file: File,
    pub stat: Stat,
}

pub fn file_not_found(path: &Path) -> ToolError {
    ToolError::new(
        ErrorCode::NotFound,
        format!("file not found: {}", path.shown()),
    )
}

pub fn is_a_directory(path: &Path) -> ToolError {
    ToolError::new(
        ErrorCode::NotAFile,
        format!("{} is a directory, not a file", path.shown()),
    )
}

pub fn not_regular(path: &Path) -> ToolError {
    ToolError::new(
        ErrorCode::NotARegularFile,
        format!(
            "{} is not a regular file (a FIFO, socket or device); only regular files can be read or changed",
            path.shown()
        ),
    )
}

/// Opens the parent directory of `target` beneath its anchor (`O_PATH`).
pub fn open_parent(target: &Target, doing: &str) -> Result<(Dir, OsString), ToolError> {
    let (parent, name) = target.split().ok_or_else(|| is_a_directory(&target.path))?;
    let fd = fsops::open_dir(&target.anchor, parent, false)
        .map_err(|e| ToolError::io(&e, doing, &target.path))?;
    Ok((fd, name.to_owned()))
}

/// Opens the directory `target` beneath its anchor (`readable` for listing it), with the documented
/// messages when it is missing or is not a directory (`not_dir_hint` says what to do instead).
pub fn open_directory(
    target: &Target,
    readable: bool,
    doing: &str,
    not_dir_hint: &str,
) -> Result<Dir, ToolError> {
    fsops::open_dir(&target.anchor, &target.path, readable).map_err(|e| match cause(&e) {
        Cause::NotFound => ToolError::new(
            ErrorCode::NotFound,
            format!(
                "directory not found: {}; check the path (its parent directory, listed, shows what is there)",
                target.path.shown()
            ),
        ),
        Cause::NotADirectory => ToolError::new(
            ErrorCode::NotADirectory,
            format!("{} is not a directory; {not_dir_hint}", target.path.shown()),
        ),
        _ => ToolError::io(&e, doing, &target.path),
    })
}

/// Opens `target` for reading if it exists: `Ok(None)` when it does not; directories, FIFOs,
/// sockets and devices are errors (and nothing blocks on a FIFO).
pub fn open_existing(target: &Target, doing: &str) -> Result<Option<OpenedFile>, ToolError> {
    if target.split().is_none() {
        return Err(is_a_directory(&target.path));
    }
    let (parent, name) = match open_parent(target, doing) {
        Ok(found) => found,
        Err(e) if e.code == ErrorCode::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let file = match fsops::open_for_read(parent.as_dir(), &name) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if cause(&e) == Cause::NoDevice => return Err(not_regular(&target.path)),
        Err(e) => return Err(ToolError::io(&e, doing, &target.path)),
    };
    let stat = fsops::fstat(&file).map_err(|e| ToolError::io(&e, doing, &target.path))?;
    match EntryKind::of(&stat) {
        EntryKind::File => Ok(Some(OpenedFile {
            parent,
            name,
            file,
            stat,
        })),
        EntryKind::Directory => Err(is_a_directory(&target.path)),
        _ => Err(not_regular(&target.path)),
    }
}

/// `OS_PERMISSION` unless the user may change the existing file `opened`, the rule an editor
/// applies before saving (vim's 'readonly', VS Code's read-only files): the system lets this
/// process write it (owner, group, mode, ACLs, a read-only mount), and it has a write permission
/// bit at all, so that a file made read-only (`chmod a-w`) is respected even by root, whom the
/// system would let through. A rewrite replaces the file through a rename, which needs only the
/// directory's permission: without this check a read-only file would be replaced silently.
pub fn ensure_writable(opened: &OpenedFile, path: &Path) -> Result<(), ToolError> {
    let mode = opened.stat.mode & 0o7777;
    let refused = |why: &str| {
        ToolError::new(
            ErrorCode::OsPermission,
            format!(
                "{} is {why} (mode {mode:04o}); nothing was written. If it should change, ask the user to make it writable (e.g. chmod u+w)",
                path.shown()
            ),
        )
    };
    if mode & 0o222 == 0 {
        return Err(refused("read-only"));
    }
    match fsops::may_write_at(opened.parent.as_dir(), &opened.name) {
        Ok(true) => Ok(()),
        Ok(false) => Err(refused("not writable by this user")),
        Err(e) => Err(ToolError::io(&e, "check", path)),
    }
}

/// Reads all of `file` if it has at most `max` bytes; `None` if it is larger.
pub fn read_at_most(
    file: &mut File,
    max: u64,
    doing: &str,
    path: &Path,
) -> Result<Option<Vec<u8>>, ToolError> {
    // Room for the whole file at once (`take` hides the size from `read_to_end`).
    let size = file.metadata().map_or(0, |m| m.len());
    let mut bytes = Vec::with_capacity(size.min(max).saturating_add(1) as usize);
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ToolError::io(&e, doing, path))?;
    Ok((bytes.len() as u64 <= max).then_some(bytes))
}

/// The label of a file in diff headers: relative to the workspace root when inside it, its
/// components joined by `/` on every system (as git writes them on Windows too, and as a
/// unified diff is read back); the shown absolute path otherwise.
pub fn diff_label(path: &Path, root: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(relative) if !relative.as_os_str().is_empty() => {
            let components: Vec<_> = relative
                .components()
                .map(|c| c.as_os_str().shown().into_owned())
                .collect();
            components.join("/")
        }
        _ => path.shown().into_owned(),
    }
}

/// `summary` followed by the diff for the model, the two within `max_bytes` (the output limit):
/// a longer diff is cut at a line, with a note saying how many lines were left out and how to see
/// the file as it is now (the whole diff still goes to `ToolResult.diff` for a UI).
pub fn with_diff(summary: String, diff: &str, max_bytes: u64) -> String {
    if diff.is_empty() {
        return summary;
    }
    let room = (max_bytes as usize).saturating_sub(summary.len() + 2);
    let diff = bounded(diff, room, |left| {
        format!(
            "[diff truncated: {} more lines not shown; read_file shows the file as it is now]",
            left.lines
        )
    });
    format!("{summary}\n\n{diff}")
}

/// The `CONFLICT` of a write that found, as it put the new content in place, another file than
/// the one planned on, or the planned one open for writing elsewhere (`being_written`); `kept`
/// names (in the same directory) a visible copy of another version that took its place.
pub fn write_conflict(target: &Target, being_written: bool, kept: Option<OsString>) -> ToolError {
    let path = target.path.shown();
    let mut message = if being_written {
        format!("{path} is open for writing in another program; nothing was written. Retry once that program has saved or closed it")
    } else {
        changed_since_planned(&target.path).message
    };
    if let Some(kept) = kept {
        message.push_str(&format!(
            ". Another version that took its place meanwhile was kept as {}",
            target.path.with_file_name(kept).shown()
        ));
    }
    ToolError::new(ErrorCode::Conflict, message)
}

/// The directories above `target` that do not exist yet, shallowest first: what making its parent
/// will create. The history keeps them, so that undo removes them again if they are left empty.
pub fn missing_parents(target: &Target) -> Vec<std::path::PathBuf> {
    let mut missing = Vec::new();
    let mut dir = target.path.parent();
    while let Some(at) = dir {
        if !at.starts_with(&target.anchor) || at == target.anchor {
            break;
        }
        if fsops::open_dir(&target.anchor, at, false).is_ok() {
            break;
        }
        missing.push(at.to_owned());
        dir = at.parent();
    }
    missing.reverse();
    missing
}

/// The regular file `name` in `dir` as a change left it, for the model's view of it (../../docs/tools.md#stale-views);
/// `None` if something else is there now.
pub fn file_stat_at(dir: BorrowedDir<'_>, name: &OsStr) -> Option<Seen> {
    let at = Moment::now();
    fsops::lstat_at(dir, name)
        .ok()
        .flatten()
        .filter(|stat| EntryKind::of(stat) == EntryKind::File)
        .map(|stat| Seen { stat, at })
}

/// The same file, unchanged? (inode, size and modification times all equal).
pub fn same_version(a: &Stat, b: &Stat) -> bool {
    a.id() == b.id()
        && a.size == b.size
        && a.mtime.0 == b.mtime.0
        && a.mtime.1 == b.mtime.1
        && a.ctime.0 == b.ctime.0
        && a.ctime.1 == b.ctime.1
}

/// A "changed since it was diffed" conflict.
pub fn changed_since_planned(path: &Path) -> ToolError {
    ToolError::new(
        ErrorCode::Conflict,
        format!(
            "{} changed while waiting for confirmation; nothing was written. Read the file again and redo the change",
            path.shown()
        ),
    )
}

/// The unified diff from `old` (`None`: the file does not exist yet) to `new`, for the
/// confirmation prompt and the result. Content that is not UTF-8 text is summarised instead.
pub fn diff_bytes(old: Option<&[u8]>, new: &[u8], label: &str, timeout_ms: u64) -> String {
    diff_of(old, new, label, timeout_ms).text
}

/// [`diff_bytes`] with the number of lines it adds and removes (none for content that is not
/// UTF-8 text).
pub fn diff_of(old: Option<&[u8]>, new: &[u8], label: &str, timeout_ms: u64) -> UnifiedDiff {
    use crate::text::decode::looks_binary;
    use crate::text::diff::unified_diff;
    let timeout = std::time::Duration::from_millis(timeout_ms);
    fn as_text(b: &[u8]) -> Option<&str> {
        if looks_binary(&b[..b.len().min(crate::text::decode::BINARY_SNIFF_BYTES)]) {
            return None;
        }
        std::str::from_utf8(b).ok()
    }
    match (old.map(as_text), as_text(new)) {
        (None, Some(new_text)) => unified_diff("", new_text, "/dev/null", label, timeout),
        (Some(Some(old_text)), Some(new_text)) => {
            unified_diff(old_text, new_text, label, label, timeout)
        }
        _ => UnifiedDiff {
            text: format!(
                "Binary or non-UTF-8 content: {} bytes → {} bytes (no text diff)",
                old.map_or(0, <[u8]>::len),
                new.len()
            ),
            ..UnifiedDiff::default()
        },
    }
}

/// What a file was when a change was planned, to check before committing that it is still so.
pub enum WhenPlanned {
    /// It did not exist.
    Absent,
    /// It existed with this stat and (when small enough to keep) these bytes.
    Present { stat: Stat, bytes: Option<Vec<u8>> },
}

#[cfg(test)]
mod tests {
    use super::diff_label;
    use std::path::Path;

    #[test]
    fn a_diff_label_is_relative_to_the_root_with_slashes_and_each_name_shown() {
        let root = Path::new("/r");
        assert_eq!(diff_label(Path::new("/r/new/b.txt"), root), "new/b.txt");
        assert_eq!(
            diff_label(Path::new("/r/a\u{1b}b/c"), root),
            "a\\x1bb/c",
            "a name with a control character is shown escaped"
        );
        assert_eq!(diff_label(Path::new("/elsewhere/x"), root), "/elsewhere/x");
        assert_eq!(diff_label(root, root), "/r", "the root itself by its path");
    }

    #[cfg(windows)]
    #[test]
    fn a_windows_diff_label_uses_slashes_as_git_does() {
        let root = Path::new(r"C:\r");
        assert_eq!(diff_label(Path::new(r"C:\r\new\b.txt"), root), "new/b.txt");
        assert_eq!(diff_label(Path::new(r"D:\x\y.txt"), root), r"D:\x\y.txt");
    }
}
