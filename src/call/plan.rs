//! A change as data: what a tool decided to do, before anything is asked or changed (issue 27).
//!
//! A tool reads what it needs and returns a [`ChangePlan`]: steps in order, each a [`Place`],
//! what it expects to find there ([`Expect`]) and what happens to it ([`Act`]). It does not
//! lock, ask, stage or commit: [`super::execute`] runs every plan the same way, on the journal's
//! all-or-nothing commit. No I/O here and no OS types (only `paths::Stat`).

use std::ffi::OsString;
use std::path::PathBuf;

pub use crate::journal::commit::BytesRead;
use crate::paths::{EntryKind, Stat, Target};

/// What a call will change, decided before anything is asked or changed.
#[derive(Debug, Default, Clone)]
pub struct ChangePlan {
    /// In order: applied in this order, and taken back in reverse if a later one fails.
    pub steps: Vec<Step>,
    /// Archives in the workspace's trash the change uses up (a restore's source): deleted once
    /// the change is made, with its record (also by recovery after a kill), never before.
    pub consume: Vec<PathBuf>,
}

/// One step: a place, what must be there, what is kept of it, what happens to it.
#[derive(Debug, Clone)]
pub struct Step {
    pub at: Place,
    /// Checked before the commit (the readable refusal), and again by the journal's step as it
    /// is applied (the race-free one).
    pub expect: Expect,
    pub keep: Keep,
    pub act: Act,
}

/// What is kept of what a step finds, before anything changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// Nothing: the name is free, the entry only moves, or what is lost is not kept (a
    /// permanent change, which its question says).
    Nothing,
    /// Archived in the trash (not removed) before the commit record is written; the archive
    /// must hold what the step expects (a file's bytes by their SHA-256, an entry's kind).
    Archive,
}

/// A checked location: the allowed tree it is beneath, its directory and its name in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The allowed tree the directory is opened beneath (never through a link).
    pub anchor: PathBuf,
    /// The canonical directory.
    pub dir: PathBuf,
    /// The entry's name in `dir`.
    pub name: OsString,
}

impl Place {
    /// The place of a resolved target; `None` for one without a parent (an allowed tree's
    /// root, which no change may take the name of).
    pub fn of(target: &Target) -> Option<Self> {
        let (dir, name) = target.split()?;
        Some(Place {
            anchor: target.anchor.clone(),
            dir: dir.to_owned(),
            name: name.to_owned(),
        })
    }

    /// The entry's canonical path.
    pub fn path(&self) -> PathBuf {
        self.dir.join(&self.name)
    }
}

/// What a step must find at its place.
#[derive(Debug, Clone)]
pub enum Expect {
    /// The name is free.
    Nothing,
    /// A regular file as it was read: its stat and the SHA-256 of its bytes, and the bytes
    /// when the plan keeps them (the executor then compares the file with them rather than
    /// hashing it again).
    File {
        stat: Stat,
        sha256: String,
        bytes: Option<BytesRead>,
    },
    /// An entry known by identity (device and inode) and kind: a link, a directory, or a file
    /// whose content does not matter (it goes to the trash first). A directory removed with
    /// [`Keep::Archive`] is a tree: removed only as archived, every entry of it.
    Entry { stat: Stat },
    /// A directory known by identity that must be empty: removed only while it is (what
    /// appears in it meanwhile is never removed with it).
    EmptyDir { stat: Stat },
    /// A directory known by identity, kept whole in the trash first ([`Keep::Archive`]) and
    /// removed as it is when its step comes: entries earlier steps of the plan move out of it
    /// are not removed with it (undo takes a tree back after what moved out of it). With
    /// `sha256`, the archive must have that tree digest (a tree a restore put back), else
    /// [`Found::Changed`]: something inside it changed.
    Tree { stat: Stat, sha256: Option<String> },
    /// An entry of a directory an [`Act::Build`] of this plan builds (above the place), under
    /// its temp name: only a move out of it expects one, known by what the build left there.
    Built,
}

impl Expect {
    /// A [`Expect::File`] with the bytes it was read as, kept for the executor's checks (see
    /// there); any other expectation as it is.
    pub fn with_bytes_read(self, read: Vec<u8>) -> Self {
        match self {
            Expect::File { stat, sha256, .. } => Expect::File {
                stat,
                sha256,
                bytes: Some(BytesRead(std::sync::Arc::new(read))),
            },
            other => other,
        }
    }

    /// What `now` (`None`: nothing) is, if it is not what is expected.
    pub fn mismatch(&self, now: Option<&Stat>) -> Option<Found> {
        match (self, now) {
            (Expect::Nothing, None) => None,
            (Expect::Nothing, Some(_)) => Some(Found::Taken),
            (Expect::Built, _) => None,
            (_, None) => Some(Found::Gone),
            (
                Expect::File { stat, .. }
                | Expect::Entry { stat }
                | Expect::EmptyDir { stat }
                | Expect::Tree { stat, .. },
                Some(now),
            ) => {
                if now.identity() != stat.identity() || now.kind() != stat.kind() {
                    Some(Found::Replaced)
                } else if matches!(self, Expect::File { .. }) && !same_version(stat, now) {
                    Some(Found::Changed)
                } else {
                    None
                }
            }
        }
    }

    /// The kind the step expects, if it expects an entry.
    pub fn kind(&self) -> Option<EntryKind> {
        match self {
            Expect::Nothing | Expect::Built => None,
            Expect::File { .. } => Some(EntryKind::File),
            Expect::Entry { stat } => Some(stat.kind()),
            Expect::EmptyDir { .. } | Expect::Tree { .. } => Some(EntryKind::Directory),
        }
    }
}

/// A file's content is still what was read while its size and times are (its bytes are checked
/// again, by hash, as the journal applies the step).
fn same_version(a: &Stat, b: &Stat) -> bool {
    (a.size, a.mtime, a.ctime) == (b.size, b.mtime, b.ctime)
}

/// How a place differs from what its step expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// Something is at a name that had to be free.
    Taken,
    /// The entry is gone.
    Gone,
    /// Another entry (or kind) is at the name.
    Replaced,
    /// The same file, written to since it was read.
    Changed,
    /// The file an append in place goes to has other hard links (this many in all), which
    /// would change with it.
    Linked(u64),
}

/// What a step does.
#[derive(Debug, Clone)]
pub enum Act {
    /// New bytes at the name: exchanged with the expected file (keeping its mode, owner,
    /// extended attributes), or taking the free name (mode 0644 less the umask, as a new file).
    /// With `like`, the new file takes that entry's mode and owner instead (a file moved with
    /// new content keeps its source's). `sha256`: that of `data`, when the plan hashed it
    /// already (the executor hashes it otherwise: a pass over the bytes saved).
    Put {
        data: Vec<u8>,
        like: Option<Stat>,
        sha256: Option<String>,
    },
    /// `data` added at the end of the expected file, in place, so that its other links see
    /// them too: the one step not staged (the journal keeps a copy of the bytes, and takes back
    /// an append cut short). The file must still be the one read ([`Expect::File`]: its
    /// identity and the SHA-256 of its bytes, checked through the very handle the bytes go
    /// through; its times may have moved); with `single_link`, one with other hard links is
    /// refused ([`Found::Linked`]).
    Append { data: Vec<u8>, single_link: bool },
    /// The entry leaves its name (set aside, checked, removed after the commit point).
    Remove,
    /// The entry moves to `to`, which must be free (the missing parents of `to` are made): one
    /// rename, or between file systems a copy placed at `to` and the source removed (see
    /// [`super::execute::execute`]).
    Move { to: Place },
    /// A directory (mode `mode`, or 0777 less the umask) is built under a temp name, with the
    /// directories `below` inside it (`a/b`: `a`, then `b` in it, each as a new directory is
    /// made), and takes the free name: `mkdir -p` all or nothing.
    MakeDir { mode: Option<u32>, below: PathBuf },
    /// A copy of the entry at `from` — a file, a symlink (as a link) or a whole tree (links
    /// inside as links) — is built under a temp name beside the place and takes the free name.
    /// With `below` (`a/b/copy`), the place is the topmost missing directory of the copy's
    /// path: it is built with the directories of `below` inside it (each as a new directory is
    /// made) and the copy as the last component, so the parents made for a copy go with it, all
    /// or nothing. The entry copied must still be `source` (its identity and kind); a FIFO,
    /// socket or device in it stops the copy and leaves nothing.
    Copy {
        from: Place,
        source: Stat,
        below: PathBuf,
    },
    /// The entry an archive of the workspace's trash holds (a file, link or tree) is extracted
    /// under a temp name beside the place, verified against the archive, and takes the free
    /// name. The archive stays: a plan that uses it up lists it in [`ChangePlan::consume`].
    Restore { archive: PathBuf },
    /// Nothing happens to the entry: it is kept in the trash ([`Keep::Archive`]) on its own,
    /// while a later step removes a directory above it (undo: a restored entry gets an archive
    /// of its own, which stands in for the one its restore used up).
    Archive,
    /// An entry built from what the plan holds ([`Source`]) under a temp name beside the place,
    /// and taking the free name.
    Build(Source),
}

/// What an [`Act::Build`] step builds.
#[derive(Debug, Clone)]
pub enum Source {
    /// A file of these bytes with exactly these permission bits (undo: a file that comes back
    /// from the bytes its history keeps).
    Bytes { data: Vec<u8>, mode: u32 },
    /// The entry an archive of the workspace's trash holds, verified against it (the archive
    /// stays).
    Archive { archive: PathBuf },
    /// An empty directory with exactly these permission bits (set once everything built
    /// inside it is in).
    EmptyDir { mode: u32 },
    /// A directory built as `root` (an archive's tree, or an empty directory) and then changed
    /// inside, as a tree from the trash comes back with older changes inside it taken back:
    /// first the entries `moves` names are moved (from, to: paths inside it; each round a temp
    /// name, so entries may trade places; a directory with what is in it), then what `drops`
    /// names is removed from it (paths in `root`), then each
    /// entry of `inside` is built at its path inside it, in order (a directory built there may
    /// hold later ones). A [`Act::Move`] whose destination lies inside it sets the entry aside
    /// beside the tree (freeing its name) and moves it in once the tree is placed; one that
    /// expects [`Expect::Built`] (a later step, its place inside it) moves an entry of it out
    /// once it is placed (to a place on disk, or into another tree placed before).
    Tree {
        root: Box<Source>,
        moves: Vec<(PathBuf, PathBuf)>,
        drops: Vec<PathBuf>,
        inside: Vec<(PathBuf, Source)>,
    },
}
