//! Reading what is at a path of the patch now, within the patch's budget: a file's bytes, a
//! symlink as itself for a delete, a directory or a special file refused.

use crate::paths::AsDir;

use super::budget::Budget;
use super::planned::Existing;
use crate::error::{ErrorCode, ToolError};
use crate::hashing::sha256_hex;
use crate::options::Limits;
use crate::paths::fsops;
use crate::paths::shown::Shown;
use crate::paths::{EntryKind, Stat, Target};
use crate::text::decode::decode_for_edit;
use crate::tools::files;

/// What is at `target` now, and its bytes: `None` when nothing is. A directory is
/// `NOT_A_FILE`; FIFOs and the like are refused; a symlink is taken as itself only when
/// `links` (a delete). Its size counts against `budget` before it is read.
pub(super) fn read(
    target: &Target,
    limits: &Limits,
    links: bool,
    budget: &mut Budget,
) -> Result<Option<(Existing, Vec<u8>)>, ToolError> {
    if links {
        let (parent, name) = match files::open_parent(target, "read") {
            Ok(found) => found,
            Err(e) if e.code == ErrorCode::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let stat = fsops::lstat_at(parent.as_dir(), &name)
            .map_err(|e| ToolError::io(&e, "read", &target.path))?;
        match stat.as_ref().map(EntryKind::of) {
            None => return Ok(None),
            Some(EntryKind::Symlink) => {
                let existing = Existing {
                    stat: stat.expect("matched"),
                    sha256: sha256_hex(&[]),
                };
                return Ok(Some((existing, Vec::new())));
            }
            Some(EntryKind::Directory) => {
                return Err(ToolError::new(
                    ErrorCode::NotAFile,
                    format!(
                        "{} is a directory; apply_patch deletes files only",
                        target.path.shown()
                    ),
                ))
            }
            _ => {}
        }
    }
    Ok(read_unhashed(target, limits, budget)?.map(|(stat, bytes)| {
        let sha256 = sha256_hex(&bytes);
        (Existing { stat, sha256 }, bytes)
    }))
}

/// The file at `target` now, as [`read`] reads one, without hashing its bytes (for a caller
/// that hashes them beside other work).
pub(super) fn read_unhashed(
    target: &Target,
    limits: &Limits,
    budget: &mut Budget,
) -> Result<Option<(Stat, Vec<u8>)>, ToolError> {
    let Some(mut opened) = files::open_existing(target, "read")? else {
        return Ok(None);
    };
    files::ensure_writable(&opened, &target.path)?;
    let too_large = || {
        ToolError::new(
            ErrorCode::TooLarge,
            format!(
                "{} is {} bytes, over the edit limit of {} bytes (editMaxFileBytes); apply_patch cannot change it",
                target.path.shown(),
                opened.stat.size,
                limits.edit_max_file_bytes
            ),
        )
    };
    if opened.stat.size > limits.edit_max_file_bytes {
        return Err(too_large());
    }
    budget.spend(opened.stat.size, &target.path)?;
    let bytes = files::read_at_most(
        &mut opened.file,
        limits.edit_max_file_bytes,
        "read",
        &target.path,
    )?
    .ok_or_else(too_large)?;
    Ok(Some((opened.stat, bytes)))
}

/// The text of the file at `t`, if it is one that decodes.
pub(super) fn text_of(t: &Target, limits: &Limits, budget: &mut Budget) -> Option<String> {
    let (_, bytes) = read(t, limits, false, budget).ok()??;
    decode_for_edit(&bytes).ok().map(|d| d.text)
}
