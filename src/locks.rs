//! Per-path locks (../docs/hosts.md#the-workspace-api): changes to the same canonical path run one after the other, so a
//! change is never lost to a concurrent one; a read never sees half a change; calls on unrelated
//! paths run in parallel.
//!
//! # Modes
//!
//! - **read** ([`PathLocks::read`]), shared: held by `read_file` while it reads from the file.
//! - **change** ([`PathLocks::change`]): held by a change from its plan through its confirmation
//!   prompt. It excludes other changes of overlapping paths and lets reads through, so whoever
//!   answers the prompt (a confirm handler calling `read_file` to show the file, say) can read
//!   the file it is asked about.
//! - **exclusive** ([`ChangeGuard::exclusive`]): the change upgraded for its commit, after the
//!   "yes". It waits for the reads in progress to finish; reads arriving meanwhile queue behind it.
//!
//! Which modes conflict (on overlapping paths; the later request waits):
//!
//! |               | read | change | exclusive |
//! |---------------|------|--------|-----------|
//! | **read**      |      |        | ✗         |
//! | **change**    |      | ✗      | ✗         |
//! | **exclusive** | ✗    | ✗      | ✗         |
//!
//! So two writes to one file issued together both succeed, one after the other: the second plans
//! only once the first has committed. A read while a change waits for its prompt sees the file
//! before the change; the change's re-check after "yes" (../docs/permissions-and-prompts.md) is what catches a writer
//! outside this workspace.
//!
//! # Rules
//!
//! Paths nest by whole components: a lock on `/w/a` covers `/w/a/b`, not `/w/ab`. A call's paths
//! are requested together and granted together, so calls locking crossing sets cannot deadlock.
//! Requests are served in arrival order as far as conflicts allow: a request waits while it
//! conflicts with a granted lock or with an earlier waiting request, so a recursive `remove_dir`
//! is not starved by writes below it, nor a commit by a stream of reads. An upgrade waits only
//! for reads (granted, or waiting since before the upgrade was asked for): nothing else can
//! overlap the change it already holds. A dropped future withdraws its request, and a dropped
//! guard releases its paths; the table is empty when no call holds or waits.
//!
//! # Nothing waits on a prompt but a change
//!
//! Every wait points at a granted lock or at an earlier request, so waits form no cycle among
//! themselves; what could make one last is a lock held across something that waits on the user.
//! Only a change lock is held across a prompt, and only another change (or an upgrade, which never
//! overlaps it) waits for a change. Reads wait only for exclusive locks and upgrades, which wait
//! only for reads, which hold their lock only while reading: a read tool takes its lock after its
//! own prompt, never across it. So no read waits on a prompt.
//!
//! The one wait that lasts as long as a prompt is a change behind another change's prompt, which
//! is the serialisation the Workspace API asks for (../docs/hosts.md#the-workspace-api). A change made from the confirm handler of a change it
//! overlaps would wait for its own answer, forever with the default `confirmTimeoutMs`; it is
//! refused at once instead ([`Asker`]). A change that waits behind an earlier waiting request
//! that waits for that prompt is not recognised and still waits for the answer.
//!
//! `list_directory`, `glob` and `grep` take no lock: a walk can take long, and holding a tree
//! for it would hold up every commit below it (and every read queued behind those). A walk sees
//! each entry as it is when it gets there, as it would while any other process changes the tree.
//!
//! # Cost
//!
//! The table is a tree of path components. Each node counts the locks granted on it and on its
//! subtree, per mode, and orders by arrival the requests waiting on it and on its subtree. A
//! request looks only at the nodes on its paths (its ancestors' own locks and its subtree's), so
//! acquiring and releasing cost O(depth × log(waiting)), whatever the number of locks held. A
//! release or a withdrawal wakes only the waiting requests it overlapped in a conflicting mode,
//! and stops in each queue at the first one still blocked when that one blocks the rest.
//!
//! The table's data is `table`, granting and releasing `grant`, the modes `mode`.

mod asker;
mod grant;
mod mode;
mod table;
#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

pub use asker::{Asker, WaitsForItsAsker};
use mode::Mode;
use table::Table;

/// The lock table. Empty when no call holds or waits for a lock.
pub struct PathLocks {
    table: Mutex<Table>,
}

impl Default for PathLocks {
    fn default() -> Self {
        Self {
            table: Mutex::new(Table::new()),
        }
    }
}

/// Read access to some paths; dropping it releases them.
#[must_use = "the paths are released when the guard is dropped"]
pub struct ReadGuard<'a> {
    _held: Held<'a>,
}

/// A change's hold on its paths through plan and prompt; [`ChangeGuard::exclusive`] before the
/// commit. Dropping it releases the paths.
#[must_use = "the paths are released when the guard is dropped"]
pub struct ChangeGuard<'a> {
    held: Held<'a>,
}

/// A change's exclusive hold on its paths for the commit; dropping it releases them.
#[must_use = "the paths are released when the guard is dropped"]
pub struct ExclusiveGuard<'a> {
    _held: Held<'a>,
}

impl PathLocks {
    /// Waits until no exclusive lock (or earlier waiting upgrade) overlaps `paths`, then holds
    /// them for reading. Never waits for a change's prompt.
    pub async fn read(&self, paths: Vec<PathBuf>) -> ReadGuard<'_> {
        let Ok(held) = self.acquire(paths, Mode::Read, Asker::default()).await else {
            unreachable!("only a change made from a confirm handler is refused")
        };
        ReadGuard { _held: held }
    }

    /// Waits until no other change overlaps `paths` (nor an earlier waiting one), then holds
    /// them for a change. Reads go on meanwhile. Refused at once when it would wait for a
    /// change of a call `asker` was made from the confirm handler of.
    pub async fn change(
        &self,
        paths: Vec<PathBuf>,
        asker: Asker<'_>,
    ) -> Result<ChangeGuard<'_>, WaitsForItsAsker> {
        Ok(ChangeGuard {
            held: self.acquire(paths, Mode::Change, asker).await?,
        })
    }

    /// Requests `paths` (all at once; nested ones of the same request never conflict with each
    /// other) and waits for the grant. Dropping the future withdraws the request.
    async fn acquire(
        &self,
        paths: Vec<PathBuf>,
        mode: Mode,
        asker: Asker<'_>,
    ) -> Result<Held<'_>, WaitsForItsAsker> {
        let (id, granted) = self.table().request(outermost(paths), mode, asker)?;
        // Made before waiting, so a dropped wait withdraws the request (granted or not).
        let held = Held { locks: self, id };
        if let Some(granted) = granted {
            // The sender is dropped unsent only when the request is withdrawn, which `held`
            // alone does; so either outcome means granted.
            let _ = granted.await;
        }
        Ok(held)
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl<'a> ChangeGuard<'a> {
    /// Upgrades to exclusive for the commit: waits for the reads of these paths in progress (and
    /// those waiting since before) to finish; reads arriving meanwhile wait behind it. Dropping
    /// the future releases the paths.
    pub async fn exclusive(self) -> ExclusiveGuard<'a> {
        let granted = self.held.locks.table().upgrade(self.held.id);
        if let Some(granted) = granted {
            let _ = granted.await;
        }
        ExclusiveGuard { _held: self.held }
    }
}

/// A request in the table, withdrawn or released when dropped.
struct Held<'a> {
    locks: &'a PathLocks,
    id: u64,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.locks.table().release(self.id);
    }
}

/// `paths` without those inside another (a lock on `/w/a` covers `/w/a/b`), sorted.
fn outermost(mut paths: Vec<PathBuf>) -> Vec<PathBuf> {
    // By components, a path's descendants sort right after it.
    paths.sort();
    let mut kept: Vec<PathBuf> = Vec::with_capacity(paths.len());
    for path in paths {
        if !kept.last().is_some_and(|outer| path.starts_with(outer)) {
            kept.push(path);
        }
    }
    kept
}
