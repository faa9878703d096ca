//! `move_file` across file systems (`EXDEV`), as before the change engine: the source is copied
//! beside the destination under a journaled temp name, the destination's file system is synced,
//! the copy is renamed into place, and only then is the source removed, entry by entry, leaving
//! whatever changed since it was copied. A failure before the rename leaves the source untouched
//! and removes the partial copy; a crash leaves the temp copy to the next `Workspace`. Its
//! history record is appended after the move (not yet one plan: issue 27, engine design §4.5).

use std::ffi::OsStr;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Path, PathBuf};

use super::super::destination::{self, Destination};
use super::super::files;
use crate::call::trashing::{put_back, trash_error};
use crate::cancel::CancelToken;
use crate::change::EntryFacts;
use crate::error::{ErrorCode, ToolError};
use crate::paths::fsops;
use crate::paths::os_error::{cause, Cause};
use crate::paths::shown::Shown;
use crate::paths::trees::{self, Copied, CopyError, Removal};
use crate::paths::{EntryKind, Target};
use crate::trash::Archived;
use crate::views::Seen;
use crate::workspace::Workspace;

/// What a move across file systems made: the replaced destination's archive, the moved entry's
/// facts, the directories made for it and the moved file as the move left it.
pub type Across = (
    Option<Archived>,
    Option<EntryFacts>,
    Vec<PathBuf>,
    Option<Seen>,
);

/// Moves `src` (the entry `source_inode`, checked again) to `dst` (where `destination_existed`
/// was planned on), by `rename` where it can and by a copy across file systems where not.
pub fn move_across(
    ws: &Workspace,
    src: &Target,
    dst: &Target,
    source_inode: (u64, u64),
    destination_existed: Option<EntryKind>,
    cancel: &CancelToken,
    removers: &[String],
) -> Result<Across, ToolError> {
    let (src_parent, src_name) = files::open_parent(src, "move")?;
    let now = fsops::lstat_at(src_parent.as_fd(), &src_name)
        .map_err(|e| ToolError::io(&e, "move", &src.path))?;
    if now.as_ref().map(fsops::identity) != Some(source_inode) {
        return Err(files::changed_since_planned(&src.path));
    }
    let Destination {
        parent: dst_parent,
        parent_path: dst_parent_path,
        name: dst_name,
        replaced: archived,
        created_dirs,
    } = destination::prepare(ws, dst, destination_existed, cancel)?;
    let moved = match fsops::rename_noreplace(
        src_parent.as_fd(),
        &src_name,
        dst_parent.as_fd(),
        dst_name,
    ) {
        Ok(()) => Ok(None),
        Err(e) if cause(&e) == Cause::CrossDevice => {
            let places = Places {
                src_parent: src_parent.as_fd(),
                src_name: &src_name,
                src_path: &src.path,
                dst_parent: dst_parent.as_fd(),
                dst_parent_path,
                dst_name,
                dst_path: &dst.path,
            };
            copy_into_place(ws, &places, &|| cancel.is_aborted()).map(Some)
        }
        Err(e) => Err(ToolError::io(&e, "move", &src.path)),
    };
    let copied = match moved {
        Ok(copied) => copied,
        Err(mut error) => {
            if let Some(archived) = &archived {
                match put_back(ws, archived, dst_parent_path, dst_parent.as_fd(), dst_name) {
                    Ok(_) => error
                        .message
                        .push_str("; the destination was restored as it was"),
                    Err(re) => error.message.push_str(&format!(
                        "; the previous destination is in the trash at {} ({})",
                        archived.archive_path.shown(),
                        trash_error(re, "restore", &dst.path).message
                    )),
                }
            }
            return Err(error);
        }
    };
    fsops::fsync_dir(dst_parent.as_fd());
    if let Some(copied) = copied {
        // Removed entry by entry: a kill leaves at most entries under temp
        // names, which the next Workspace removes (they are at the destination).
        let src_parent_path = src.path.parent().unwrap_or(&src.path);
        ws.journal()
            .with_removal(src_parent_path, src_parent.as_fd(), &src_name, || {
                remove_copied_source(
                    src_parent.as_fd(),
                    &src_name,
                    &src.path,
                    &dst.path,
                    &copied,
                    archived.as_ref(),
                    removers,
                )
            })?;
    }
    fsops::fsync_dir(src_parent.as_fd());
    let moved = EntryFacts::of_entry(dst_parent.as_fd(), dst_name);
    let file = files::file_stat_at(dst_parent.as_fd(), dst_name);
    Ok((archived, moved, created_dirs, file))
}

/// Where a move between file systems copies from and to.
struct Places<'a> {
    src_parent: BorrowedFd<'a>,
    src_name: &'a OsStr,
    src_path: &'a Path,
    dst_parent: BorrowedFd<'a>,
    dst_parent_path: &'a Path,
    dst_name: &'a OsStr,
    dst_path: &'a Path,
}

/// `rename` cannot cross file systems: copies the source beside the destination under a journaled
/// temp name, makes the copy durable and renames it into place. On failure the partial copy is
/// removed and the source is untouched.
fn copy_into_place(
    ws: &Workspace,
    at: &Places<'_>,
    aborted: &dyn Fn() -> bool,
) -> Result<Copied, ToolError> {
    let temp = fsops::temp_name(at.dst_name);
    ws.journal()
        .with_temp(at.dst_parent_path, at.dst_parent, &temp, || {
            let committed =
                trees::copy_tree_at(at.src_parent, at.src_name, at.dst_parent, &temp, aborted)
                    .map_err(|e| copy_error(e, at))
                    .and_then(|copied| {
                        fsops::sync_new_tree(at.dst_parent)
                            .map_err(|e| ToolError::io(&e, "sync the copy of", at.src_path))?;
                        fsops::rename_noreplace(at.dst_parent, &temp, at.dst_parent, at.dst_name)
                            .map_err(|e| ToolError::io(&e, "move to", at.dst_path))?;
                        Ok(copied)
                    });
            if committed.is_err() {
                let _ = trees::remove_tree_at(at.dst_parent, &temp, Removal::OWN_TEMP);
            }
            committed
        })
}

fn copy_error(e: CopyError, at: &Places<'_>) -> ToolError {
    let (src, dst) = (at.src_path.shown(), at.dst_path.shown());
    let inside = |relative: &Path| {
        if relative.as_os_str().is_empty() {
            at.src_path.to_owned()
        } else {
            at.src_path.join(relative)
        }
    };
    let mut error = match e {
        CopyError::Aborted => return ToolError::aborted(),
        CopyError::Special(relative) => ToolError::new(
            ErrorCode::NotARegularFile,
            format!(
                "cannot move {src} to {dst}: {} is a FIFO, socket or device, which cannot be copied to another file system",
                inside(&relative).shown()
            ),
        ),
        CopyError::Changed(relative) => ToolError::new(
            ErrorCode::Conflict,
            format!(
                "cannot move {src} to {dst}: {} changed while it was being copied to the other file system; retry once nothing writes to it",
                inside(&relative).shown()
            ),
        ),
        CopyError::Io(e, relative) => ToolError::io(&e, "copy", &inside(&relative)),
    };
    error.message.push_str(&format!(
        " (moving to {dst}, on another file system); nothing was moved"
    ));
    error
}

/// After the copy is in place: removes the source, except entries that changed since they were
/// copied (or appeared meanwhile), which stay where they are. Any such leftover is an error that
/// says the destination is complete, so the model neither retries the move nor assumes the source
/// is gone.
fn remove_copied_source(
    src_parent: BorrowedFd<'_>,
    src_name: &OsStr,
    src_path: &Path,
    dst_path: &Path,
    copied: &Copied,
    archived: Option<&Archived>,
    removers: &[String],
) -> Result<(), ToolError> {
    let changed = |stat: &crate::paths::Stat| !copied.unchanged(stat);
    let how = Removal {
        make_writable: false,
        keep: Some(&changed),
    };
    let mut error = match trees::remove_tree_at(src_parent, src_name, how) {
        Ok(0) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Ok(kept) => ToolError::new(
            ErrorCode::Conflict,
            format!(
                "copied {} to {dst} (another file system), but {} in {} changed or appeared while it was being moved and {} left there; {dst} has the rest",
                src_path.shown(),
                crate::tools::quantity(kept, "entry", "entries"),
                src_path.shown(),
                if kept == 1 { "was" } else { "were" },
                dst = dst_path.shown(),
            ),
        ),
        Err(e) => {
            let mut error = ToolError::io(&e, "remove the moved", src_path);
            let remove = match removers {
                [] => "what is left of the source can be removed by the user".to_owned(),
                _ => format!("what is left of the source can be removed with {}", removers.join(" or ")),
            };
            error.message = format!(
                "copied {} to {} (another file system), which is complete, but {}; {remove}",
                src_path.shown(),
                dst_path.shown(),
                error.message
            );
            error
        }
    };
    if let Some(archived) = archived {
        error.message.push_str(&format!(
            "; the previous {} is in the trash at {}",
            dst_path.shown(),
            archived.archive_path.shown()
        ));
    }
    Err(error)
}
