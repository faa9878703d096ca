//! What an undo does on disk, as [`Effects::of`](super::Effects::of) works it out: entries
//! that go to the trash, entries that move back (in one hop or two), what is put in place, and
//! the order the commit makes them in.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::undo::slot::{parent_of, Location, Slot};

/// One thing put at a path.
#[derive(Debug, Clone)]
pub struct Placement {
    pub path: PathBuf,
    pub slot: Slot,
    /// The directory it goes into.
    pub parent: Location,
    /// Where it goes on disk as the steps run, when its directory is on disk already.
    pub physical: Option<PathBuf>,
    /// The file there now gets the new bytes in its place (same inode kind of change as an edit).
    pub exchange: bool,
}

/// An entry that moves back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rename {
    /// Where the entry is on disk now.
    pub from: PathBuf,
    /// The path it goes back to.
    pub to: PathBuf,
    /// The directory `to` is in when the steps run.
    pub parent: Location,
    /// Which part of the move this step is.
    pub hop: Hop,
}

/// A move in one step, or in two around a temp name (entries that trade places).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hop {
    /// From `from` to `to`.
    Whole,
    /// From `from` to this temp name beside it, freeing `from` for the entry that goes there.
    Aside(OsString),
    /// From the temp name beside `from` on to `to`, once `to` is free.
    Back(OsString),
}

impl Rename {
    /// Where the entry is when this step runs: its directory and name there.
    pub fn source(&self) -> PathBuf {
        match &self.hop {
            Hop::Whole | Hop::Aside(_) => self.from.clone(),
            Hop::Back(temp) => parent_of(&self.from).join(temp),
        }
    }

    /// Where this step puts the entry: the directory and the name.
    pub fn destination(&self) -> (Location, OsString) {
        match &self.hop {
            Hop::Aside(temp) => (
                Location::Real(parent_of(&self.from).to_owned()),
                temp.clone(),
            ),
            Hop::Whole | Hop::Back(_) => (
                self.parent.clone(),
                self.to.file_name().unwrap_or_default().to_owned(),
            ),
        }
    }

    /// Whether this step is where the entry arrives at `to` (not only set aside).
    pub fn arrives(&self) -> bool {
        !matches!(self.hop, Hop::Aside(_))
    }
}

/// A removal or a rename of an undo (an index into [`Effects::removals`] or
/// [`Effects::renames`]), as the commit makes them one after another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Remove(usize),
    Rename(usize),
}

/// Everything an undo does, in order.
#[derive(Debug, Default)]
pub struct Effects {
    /// Entries that go to the trash (and leave their place), shallow first.
    pub removals: Vec<PathBuf>,
    /// Restored entries that go to the trash with a directory above them (in `removals`), each
    /// archived on its own too: its archive stands in for the one its restore consumed (see
    /// `Plan::restored`). (The entry, the removal it goes with.)
    pub also_archived: Vec<(PathBuf, PathBuf)>,
    /// Entries that move back, in an order that frees each destination first.
    pub renames: Vec<Rename>,
    /// The removals and renames in the order the commit makes them: a removal before a rename
    /// to its path, a rename out of a removed tree before that tree's removal (what moves out
    /// never goes with it), the renames in their own order.
    pub order: Vec<Step>,
    /// What is put in place, shallow first.
    pub placements: Vec<Placement>,
    /// Entries of trees that come back from the trash that do not come back with them (a change
    /// inside the tree is taken back): (the tree's path, the entry's path in the archive).
    /// Removed from the staged tree before anything is put in it (beneath an entry of
    /// `moves_inside`, where that entry is set aside then); they stay in the archive.
    pub drops: Vec<(PathBuf, PathBuf)>,
    /// Entries (files, links, directories with what is in them) of trees that come back from
    /// the trash that come back at another place in the same tree (a move inside it is taken
    /// back): (the tree's path, the entry's path in the archive, its path inside the tree as it
    /// comes back). Set aside in the staged tree before the drops, moved to their places after.
    pub moves_inside: Vec<(PathBuf, PathBuf, PathBuf)>,
    /// Entries (files, links, directories with what is in them) of trees that come back from
    /// the trash that come back at a place on disk out of them (a move into a tree removed
    /// since is taken back): moved out of the tree once it has taken its place.
    pub moves_out: Vec<MoveOut>,
}

/// An entry of a tree that comes back from the trash, moved out of it to its place on disk once
/// the tree has taken its place (a directory with what the undo puts in it as the tree is
/// staged).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MoveOut {
    /// The path the tree comes back at.
    pub top: PathBuf,
    /// The entry's path inside the tree (in its archive, and as the tree is staged unless it is
    /// set aside).
    pub member: PathBuf,
    /// The temp name at the top of the tree it is set aside to as the tree is staged (one of
    /// `moves_inside`), when its own place there is taken or a directory above it goes: moved
    /// out from there.
    pub aside: Option<OsString>,
    /// The path it goes back to.
    pub to: PathBuf,
    /// The directory `to` is in (on disk) when the steps run.
    pub parent: Location,
}
