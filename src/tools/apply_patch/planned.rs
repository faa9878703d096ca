//! One file of a patch, planned: what it writes and removes, what goes to the trash first, its
//! diff's line counts and notes; and the planning of the whole patch.

use super::combined_diff::CombinedDiff;
use crate::change::Action;
use crate::paths::Target;
use crate::text::delta::Delta;

/// What is at a path now, as planned on.
pub(super) struct Existing {
    pub stat: crate::paths::Stat,
    /// The SHA-256 of its bytes (a symlink: of nothing).
    pub sha256: String,
}

/// A file the patch writes: where, the SHA-256 of what, and what it replaces there (to the
/// trash first).
pub(super) struct Write {
    pub target: Target,
    pub sha256: String,
    pub replaced: Option<Existing>,
}

/// One file of the patch, planned.
pub(super) struct FilePlan {
    /// The file's section in the patch (the commit derives its new content from it again).
    pub file: usize,
    /// The new content of an updated file, if the plan keeps it (else the commit derives it
    /// again).
    pub new: Option<Vec<u8>>,
    /// The bytes an updated file held when it was read, if the plan keeps them (with its new
    /// content): the commit compares the file with them instead of hashing it again.
    pub old: Option<Vec<u8>>,
    /// What takes an update back (its changed lines' old bytes, from the diff's matching), kept
    /// while its new content is; else the commit derives it from the file read again.
    pub reverse: Option<Delta>,
    /// `A`, `M` or `D` and the path as the patch wrote it (a move: its new path).
    pub letter: char,
    pub given: String,
    pub action: Action,
    pub write: Option<Write>,
    /// The entry removed: a deleted file, or a moved one's source.
    pub remove: Option<(Target, Existing)>,
    /// Keep the removed entry's content in the trash (deletes always; a moved source when its
    /// content changes and overwrites are kept).
    pub archive_removed: bool,
    /// Keep the replaced content in the trash (whatever an added or moved file lands on; an
    /// update keeps a delta instead, as `edit_file` does).
    pub archive_replaced: bool,
    /// How many lines its diff adds and removes.
    pub added: usize,
    pub removed: usize,
    pub notes: Vec<String>,
    /// Nothing to do for this file (already as the patch says).
    pub unchanged: bool,
}

pub(super) enum Planning {
    AlreadyApplied,
    Plans(Vec<FilePlan>, CombinedDiff),
}
