//! Putting entries into the workspace's trash and back, for the tools and for undo alike: an
//! entry archived (and removed once the archive is safe), what a failed removal took put back,
//! the bucket checked writable before anything changes, and the trash's errors as tool errors.

use std::convert::Infallible;
use std::ffi::OsStr;
use std::path::Path;

use crate::cancel::CancelToken;
use crate::error::{ErrorCode, ToolError};
use crate::paths::shown::Shown;
use crate::paths::{fsops, AsDir, BorrowedDir};
use crate::trash::{
    archive_relative_path, restore_temp_name, Archived, PartlyRemoved, TrashError, TrashItem,
};
use crate::workspace::Workspace;

/// The trash's error as a tool error about `path`; `doing` is e.g. "trash". The code is the
/// trash's own ([`TrashError::error_code`]); the message says it for the model.
pub fn trash_error(e: TrashError, doing: &str, path: &Path) -> ToolError {
    let p = path.shown();
    let code = e.error_code();
    let message = match e {
        TrashError::NotFound => format!("file not found: {p}"),
        TrashError::Conflict(why) => {
            format!("cannot {doing} {p}: {why}. Nothing was lost; look at it again and retry")
        }
        TrashError::Corrupt(why) if doing.starts_with("restore") => format!(
            "cannot {doing} {p}: the trash archive is damaged ({why}), so nothing was restored and the archive was left as it is. Restore another archive, or ask the user to look at this one"
        ),
        TrashError::Corrupt(why) => format!(
            "cannot {doing} {p}: the archive written to the trash is damaged ({why}), so nothing was removed. Ask the user to check the trash data directory (trash.dataDir)"
        ),
        TrashError::AlreadyExists => format!(
            "{p} already exists; pass overwrite: true to replace it (the current one goes to the trash first)"
        ),
        TrashError::NotInBucket => format!(
            "{p} is not an archive in this workspace's trash; only its own archives can be restored"
        ),
        TrashError::Aborted => return ToolError::aborted(),
        TrashError::Unsupported(what) => format!(
            "cannot {doing} {p}: {what}; FIFOs, sockets and devices cannot be trashed"
        ),
        TrashError::MountPoint(what) => format!(
            "cannot {doing} {p}: {}; nothing was changed",
            crate::trash::mount_point(&what)
        ),
        TrashError::Io(io) => return ToolError::io(&io, doing, path),
        TrashError::PartlyRemoved(_) => format!("cannot {doing} {p}: {e}"),
        TrashError::Stopped { why, .. } => why,
    };
    ToolError::new(code, message)
}

/// Archives the entry `name` in `parent` (canonical path `path`); with `remove`, the original is
/// removed once the archive is safely in place. Keep the returned [`Archived`] until the call has
/// reported the archive (and, before an overwrite, until the overwrite is done): while it lives,
/// `trashClear` leaves the archive alone.
pub fn put_in_trash(
    ws: &Workspace,
    parent: BorrowedDir<'_>,
    name: &OsStr,
    path: &Path,
    remove: bool,
    cancel: &CancelToken,
) -> Result<Archived, ToolError> {
    ensure_bucket_writable(ws, path)?;
    let relative = archive_relative_path(ws.sandbox().root(), path);
    let item = TrashItem {
        parent,
        name,
        original_path: path,
        relative_path: &relative,
    };
    let aborted = || cancel.is_aborted();
    let result = if remove {
        // Removed entry by entry once archived: a kill leaves at most entries under temp
        // names, which the next Workspace removes.
        let parent_path = path.parent().unwrap_or(path);
        let trashed = ws.journal().with_removal(parent_path, parent, name, || {
            ws.bucket().trash(&item, &aborted)
        });
        match trashed {
            Err(TrashError::PartlyRemoved(partly)) => {
                Err(put_back_removed(ws, *partly, parent, path))
            }
            other => other,
        }
    } else {
        ws.bucket().archive(&item, &aborted)
    };
    result.map_err(|e| trash_error(e, "trash", path))
}

/// Puts back what a removal of `path` (inside `parent`) removed before it stopped, its temp
/// extraction journaled like a restore's; returns the error to report.
fn put_back_removed(
    ws: &Workspace,
    partly: PartlyRemoved,
    parent: BorrowedDir<'_>,
    path: &Path,
) -> TrashError {
    let temp = restore_temp_name();
    let parent_path = path.parent().unwrap_or(path);
    let outcome = ws.journal().with_temp(parent_path, parent, &temp, || {
        Err::<Infallible, _>(ws.bucket().put_back_removed(partly, parent, &temp))
    });
    match outcome {
        Ok(never) => match never {},
        Err(report) => report,
    }
}

/// Creates the bucket if needed and checks it is writable, so a broken data directory is
/// reported as what it is (nothing was touched) rather than as a problem with the user's file.
pub fn ensure_bucket_writable(ws: &Workspace, path: &Path) -> Result<(), ToolError> {
    let bucket = ws.bucket().dir();
    // Created through the data directory's descriptor, never through a link.
    let relative = bucket
        .strip_prefix(ws.data_dir().path())
        .unwrap_or(Path::new("trash"));
    let ready = ws
        .data_dir()
        .open(relative, true)
        .and_then(|fd| fsops::check_writable_dir(fd.as_dir()));
    ready.map_err(|e| {
        if crate::datadir::is_untrusted(&e) {
            return ToolError::new(
                ErrorCode::OsPermission,
                format!(
                    "cannot keep a copy of {} in the trash, so nothing was changed: {e}",
                    path.shown()
                ),
            );
        }
        let code = match e.kind() {
            std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem => ErrorCode::OsPermission,
            _ => ErrorCode::IoError,
        };
        ToolError::new(
            code,
            format!(
                "cannot keep a copy of {} in the trash: the trash directory {} cannot be written ({e}); nothing was changed. Ask the user to fix the trash data directory (trash.dataDir)",
                path.shown(),
                bucket.shown()
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::os_error::{self, Cause};

    /// The trash's one mapping to codes is the one the tools report.
    #[test]
    fn trash_errors_keep_the_trash_s_code() {
        let path = Path::new("/w/a.txt");
        let io = |c| TrashError::Io(os_error::error(c));
        let cases = [
            (TrashError::NotFound, ErrorCode::NotFound),
            (
                TrashError::Conflict("a.txt grew".into()),
                ErrorCode::Conflict,
            ),
            (
                TrashError::Corrupt("bad digest".into()),
                ErrorCode::TrashCorrupt,
            ),
            (TrashError::AlreadyExists, ErrorCode::AlreadyExists),
            (TrashError::NotInBucket, ErrorCode::PathNotAllowed),
            (TrashError::Aborted, ErrorCode::Aborted),
            (
                TrashError::Unsupported("a fifo".into()),
                ErrorCode::NotARegularFile,
            ),
            (io(Cause::Permission), ErrorCode::OsPermission),
            (io(Cause::NoSpace), ErrorCode::IoError),
            (io(Cause::Loop), ErrorCode::PathNotAllowed),
        ];
        for (error, expected) in cases {
            assert_eq!(error.error_code(), expected, "{error:?}");
            let described = format!("{error:?}");
            assert_eq!(
                trash_error(error, "trash", path).code,
                expected,
                "{described}"
            );
        }
    }
}
