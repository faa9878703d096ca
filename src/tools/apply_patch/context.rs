//! What planning and committing a patch need besides its files: limits, the root, the host's
//! names for messages, the abort, and whether a missing file was deleted by an earlier change.

use std::path::{Path, PathBuf};

use crate::cancel::CancelToken;
use crate::change::Action;
use crate::options::Limits;
use crate::paths::Target;
use crate::permissions::Operation;
use crate::tools::nearby;
use crate::workspace::Workspace;

/// What planning and committing a file need besides the file.
pub(super) struct Context {
    pub limits: Limits,
    /// The workspace root (diff labels are relative to it).
    pub root: PathBuf,
    pub keep_overwrites: bool,
    pub names: Names,
    pub cancel: CancelToken,
    /// Whether a missing file was deleted (or moved away) by an earlier change: deleting it
    /// again is part of a patch already applied, not a path that never existed.
    pub deleted_by_a_change: Box<dyn Fn(&Path) -> bool + Send + Sync>,
}

/// The host's names of this tool and of write_file (for messages that point at it), and what
/// a "not found" may show of a directory (`nearby`).
pub(super) struct Names {
    pub(super) tool: String,
    pub(super) write_file: Option<String>,
    pub(super) sandbox: crate::paths::Sandbox,
    pub(super) permissions: crate::permissions::Permissions,
}

impl Names {
    /// What a "not found" of `raw` (resolved as `target`) adds (see `nearby`).
    pub(super) fn not_found_hint(&self, raw: &str, target: &Target) -> String {
        let may_list = self.permissions.grants(Operation::Read, target.inside_root);
        nearby::not_found_hint(raw, target, &self.sandbox, may_list)
    }
}

/// Whether the latest change in the history that touched `path` removed it (deleted it, or moved
/// it away): a patch deleting it again is a retry of one already applied, not a wrong path.
pub(super) fn deleted_by_a_change(ws: &Workspace, path: &Path) -> bool {
    let Ok(entries) = ws.history().entries(&|_| true) else {
        return false;
    };
    for entry in entries.iter().rev() {
        for file in &entry.record.files {
            if file.path == path {
                return file.action == Action::Deleted;
            }
            if file.from.as_deref() == Some(path) {
                return true;
            }
        }
    }
    false
}
