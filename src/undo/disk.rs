//! What undo reads of the disk, at recorded (absolute, canonical) paths, through the sandbox
//! and the race-free `*at` layer: never through a link, never outside the allowed trees.

use std::ffi::OsString;
use std::io::Read;
use std::path::Path;

use crate::error::{ErrorCode, ToolError};
use crate::hashing::{sha256_hex, sha256_reader};
use crate::paths::fsops::{self, Snapshot};
use crate::paths::os_error::{cause, Cause};
use crate::paths::sandbox::FinalLink;
use crate::paths::shown::Shown;
use crate::paths::Target;
use crate::paths::{AsDir, Dir, EntryKind};
use crate::workspace::Workspace;

/// An entry on disk.
#[derive(Debug, Clone)]
pub struct Real {
    pub stat: Snapshot,
    pub kind: EntryKind,
}

impl Real {
    /// Its kind as the history's entry facts would name it (a special file, which the
    /// history never holds, as a file).
    pub fn kind_fact(&self) -> EntryKind {
        match self.kind {
            EntryKind::Special => EntryKind::File,
            kind => kind,
        }
    }

    /// Its kind in a sentence.
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            EntryKind::Directory => "directory",
            EntryKind::Symlink => "symlink",
            EntryKind::File => "file",
            EntryKind::Special => "special file",
        }
    }
}

/// The recorded path, checked against the sandbox as it is now.
pub fn target(ws: &Workspace, path: &Path) -> Result<Target, ToolError> {
    ws.sandbox().resolve_absolute(path, "path", FinalLink::Keep)
}

/// The parent directory of `path` (readable) and the final name; `None` when the parent does not
/// exist.
pub fn open_parent(ws: &Workspace, path: &Path) -> Result<Option<(Dir, OsString)>, ToolError> {
    let target = target(ws, path)?;
    let (Some(parent), Some(name)) = (target.path.parent(), target.path.file_name()) else {
        return Err(ToolError::invalid(format!(
            "{} has no parent directory",
            path.shown()
        )));
    };
    match fsops::open_dir(&target.anchor, parent, true) {
        Ok(fd) => Ok(Some((fd, name.to_owned()))),
        Err(e) if matches!(cause(&e), Cause::NotFound | Cause::NotADirectory) => Ok(None),
        Err(e) => Err(ToolError::io(&e, "open the parent directory of", path)),
    }
}

/// The entry at `path`, if any.
pub fn look(ws: &Workspace, path: &Path) -> Result<Option<Real>, ToolError> {
    let Some((parent, name)) = open_parent(ws, path)? else {
        return Ok(None);
    };
    let stat =
        fsops::lstat_at(parent.as_dir(), &name).map_err(|e| ToolError::io(&e, "look at", path))?;
    Ok(stat.map(|stat| {
        let stat = Snapshot::of(&stat);
        Real {
            kind: stat.kind(),
            stat,
        }
    }))
}

/// The names in the directory at `path`.
pub fn list(ws: &Workspace, path: &Path) -> Result<Vec<OsString>, ToolError> {
    let target = target(ws, path)?;
    let dir = fsops::open_dir(&target.anchor, &target.path, true)
        .map_err(|e| ToolError::io(&e, "list", path))?;
    fsops::list_names(dir.as_dir()).map_err(|e| ToolError::io(&e, "list", path))
}

/// The SHA-256 the trash would record for the entry: a file's bytes, a link's target.
pub fn sha256_of(ws: &Workspace, path: &Path, real: &Real) -> Result<String, ToolError> {
    let (parent, name) = open_parent(ws, path)?.ok_or_else(|| {
        ToolError::new(
            ErrorCode::NotFound,
            format!("{} no longer exists", path.shown()),
        )
    })?;
    match real.kind {
        EntryKind::Symlink => fsops::read_link_at(parent.as_dir(), &name)
            .map(|target| sha256_hex(target.as_encoded_bytes()))
            .map_err(|e| ToolError::io(&e, "read", path)),
        _ => fsops::open_for_read(parent.as_dir(), &name)
            .and_then(sha256_reader)
            .map_err(|e| ToolError::io(&e, "read", path)),
    }
}

/// The bytes of the file at `path` (at most `max`).
pub fn read(ws: &Workspace, path: &Path, max: u64) -> Result<Vec<u8>, ToolError> {
    let (parent, name) = open_parent(ws, path)?.ok_or_else(|| {
        ToolError::new(
            ErrorCode::NotFound,
            format!("{} no longer exists", path.shown()),
        )
    })?;
    let mut bytes = Vec::new();
    fsops::open_for_read(parent.as_dir(), &name)
        .and_then(|file| file.take(max).read_to_end(&mut bytes))
        .map_err(|e| ToolError::io(&e, "read", path))?;
    Ok(bytes)
}
