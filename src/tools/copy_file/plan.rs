//! What `copy_file` reads before anything is asked: the source, what is at the destination,
//! the tree it would replace, and whether the copy fits.

use std::io;

use super::refusals::{onto_a_directory, special};
use crate::cancel::CancelToken;
use crate::error::{ErrorCode, ToolError};
use crate::paths::shown::Shown;
use crate::paths::tree_count::{count_tree_at, Budget};
use crate::paths::{fsops, AsDir};
use crate::paths::{EntryKind, Stat, Target};
use crate::text::quantity::human_bytes;
use crate::tools::{destination, files};

/// What planning found: the source, what is at the destination, and the tree it would replace.
pub(super) struct Planned {
    pub(super) source: Stat,
    pub(super) replaced: Option<Stat>,
    pub(super) replaced_tree: Option<crate::paths::tree_count::TreeCount>,
}

/// Reads what the copy needs before anything is asked: the source (missing: `NOT_FOUND`; a
/// special file, or one inside the tree: refused), what is at the destination (refused without
/// `overwrite`; a tree is counted for the question), and whether the copy fits there.
pub(super) fn plan(
    source: &Target,
    destination: &Target,
    overwrite: bool,
    tool: &str,
    given: &str,
    cancel: &CancelToken,
) -> Result<Planned, ToolError> {
    let (src_parent, src_name) = files::open_parent(source, "copy")?;
    let src_stat = fsops::lstat_at(src_parent.as_dir(), &src_name)
        .map_err(|e| ToolError::io(&e, "copy", &source.path))?
        .ok_or_else(|| {
            ToolError::new(
                ErrorCode::NotFound,
                format!("source not found: {}; check the path", source.path.shown()),
            )
        })?;
    let needed = match src_stat.kind() {
        EntryKind::Special => return Err(special(&source.path, &source.path)),
        EntryKind::File => allocated(&src_stat),
        EntryKind::Symlink => 0,
        EntryKind::Directory => {
            let all = Budget {
                deadline: std::time::Instant::now() + std::time::Duration::from_secs(86_400),
                max_entries: u64::MAX,
            };
            let count = count_tree_at(src_parent.as_dir(), &src_name, all, &|| cancel.is_aborted())
                .map_err(|e| ToolError::io(&e, "look into", &source.path))?;
            if cancel.is_aborted() {
                return Err(ToolError::aborted());
            }
            if let Some(inside) = &count.special {
                return Err(special(&source.path, &source.path.join(inside)));
            }
            count.allocated
        }
    };
    let dst_stat = match files::open_parent(destination, "copy to") {
        Ok((parent, name)) => fsops::lstat_at(parent.as_dir(), &name)
            .map_err(|e| ToolError::io(&e, "copy to", &destination.path))?,
        Err(e) if e.code == ErrorCode::NotFound => None,
        Err(e) => return Err(e),
    };
    if let Some(d) = &dst_stat {
        if d.identity() == src_stat.identity() {
            return Err(ToolError::invalid(format!(
                "{tool}: invalid arguments: source and destination are the same file ({}); nothing to copy. Give another destination",
                destination.path.shown()
            )));
        }
        if !overwrite && d.kind() == EntryKind::Directory {
            return Err(onto_a_directory(&destination.path, given, &source.path));
        }
        if !overwrite {
            return Err(ToolError::new(
                ErrorCode::AlreadyExists,
                format!(
                    "{} already exists; pass overwrite: true to replace it (the existing one goes to the trash first), or choose another destination",
                    destination.path.shown()
                ),
            ));
        }
    }
    fits(source, destination, needed)?;
    let existing = dst_stat.as_ref().map(Stat::kind);
    let replaced_tree = destination::count_replaced(destination, existing, cancel)?;
    Ok(Planned {
        source: src_stat,
        replaced: dst_stat,
        replaced_tree,
    })
}

/// The bytes a copy of the regular file `stat` takes: what it has allocated (holes take
/// nothing; a copy keeps them).
fn allocated(stat: &Stat) -> u64 {
    stat.blocks.saturating_mul(512)
}

/// Refuses (`TOO_LARGE`, before anything is written) a copy of `needed` bytes that the file
/// system of `destination` has no room for. The directory asked is the deepest one of the
/// destination's that exists (the others are made for the copy, on the same file system).
fn fits(source: &Target, destination: &Target, needed: u64) -> Result<(), ToolError> {
    let mut dir = destination.path.parent();
    let free = loop {
        let Some(at) = dir.filter(|at| at.starts_with(&destination.anchor)) else {
            return Ok(()); // nothing to ask (cannot happen beneath an allowed tree)
        };
        match fsops::open_dir(&destination.anchor, at, false) {
            Ok(fd) => {
                break fsops::free_space(fd.as_dir())
                    .map_err(|e| ToolError::io(&e, "look at the free space of", at))?
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => dir = at.parent(),
            Err(e) => return Err(ToolError::io(&e, "copy to", &destination.path)),
        }
    };
    match too_large(needed, free) {
        false => Ok(()),
        true => Err(ToolError::new(
            ErrorCode::TooLarge,
            format!(
                "copying {} needs {} and the file system of {} has {} free; nothing was written. Free some space there or choose another destination",
                source.path.shown(),
                human_bytes(needed),
                destination.path.shown(),
                human_bytes(free)
            ),
        )),
    }
}

/// Whether a copy of `needed` bytes does not fit in `free` bytes.
pub(super) fn too_large(needed: u64, free: u64) -> bool {
    needed > free
}
