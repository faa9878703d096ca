//! What archiving saw of the original: the entries, in preorder, with what each looked like. The
//! removal verifies and removes exactly these (`remove.rs`), and a removal that stopped halfway
//! puts back from them (`put_back.rs`).

use std::ffi::OsStr;
use std::path::PathBuf;

use crate::paths::fsops::Snapshot;
use crate::paths::EntryKind;

/// An entry seen while archiving, in preorder.
#[derive(Debug, Clone)]
pub(crate) struct Observed {
    /// Path from the item's parent directory: the item's name, then names beneath it.
    pub rel: PathBuf,
    /// What it looked like when it was archived.
    pub snapshot: Snapshot,
    /// For directories: how many entries it held.
    pub children: usize,
}

impl Observed {
    /// 0 for the item itself, 1 for its children, ...
    pub(crate) fn depth(&self) -> usize {
        self.rel.components().count() - 1
    }

    /// Its name inside its directory.
    pub(crate) fn name(&self) -> &OsStr {
        self.rel.file_name().expect("observed paths are non-empty")
    }

    /// Is it a directory?
    pub(crate) fn is_dir(&self) -> bool {
        self.snapshot.kind() == EntryKind::Directory
    }
}
