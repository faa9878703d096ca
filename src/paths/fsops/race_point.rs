//! Points where another process changing an entry would race with a commit: between the last
//! check and the act. In tests a closure can be set to run at such a point for one entry name,
//! which makes the race certain (a test writes the file in place there, or swaps the name); in
//! other builds [`reached`] does nothing.

/// Where a commit (or a recovery) is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RacePoint {
    /// An atomic write's new content is on disk; it is about to take the name.
    BeforeReplace,
    /// An entry was checked to be the one to remove; it is about to be removed.
    BeforeRemove,
    /// A lock (named by its file) is held by someone else; about to wait for it.
    LockBusy,
    /// An atomic write's new content took the name; the file it replaced was checked to be the
    /// one planned on (under a temp name) and is about to be unlinked.
    ReplacedChecked,
    /// The replaced file was unlinked; it is about to be checked one last time.
    ReplacedUnlinked,
    /// An entry of a tree being copied was looked at (its kind known); it is about to be read.
    CopyLooked,
    /// A put by renames moved the planned file aside: the name is free until the staged file
    /// takes it (see [`put_by_renames`](super::put_by_renames)).
    NameFree,
}

/// A commit on the entry `name` reached `point`: runs the closure a test set for it, once.
#[cfg(not(test))]
#[inline(always)]
pub fn reached(_point: RacePoint, _name: &std::ffi::OsStr) {}

#[cfg(test)]
pub use hooks::{at, reached};

#[cfg(test)]
mod hooks {
    use super::RacePoint;
    use std::ffi::{OsStr, OsString};
    use std::sync::Mutex;

    type Hook = Box<dyn FnOnce() + Send>;

    static HOOKS: Mutex<Vec<(RacePoint, OsString, Hook)>> = Mutex::new(Vec::new());

    /// Runs `hook` the next time a commit on an entry named `name` reaches `point` (tests run in
    /// parallel: give the entry a name no other test uses).
    pub fn at(point: RacePoint, name: &str, hook: impl FnOnce() + Send + 'static) {
        HOOKS
            .lock()
            .unwrap()
            .push((point, name.into(), Box::new(hook)));
    }

    /// See [`super::reached`].
    pub fn reached(point: RacePoint, name: &OsStr) {
        let hook = {
            let mut hooks = HOOKS.lock().unwrap_or_else(|e| e.into_inner());
            let found = hooks.iter().position(|(p, n, _)| *p == point && n == name);
            found.map(|i| hooks.remove(i).2)
        };
        if let Some(hook) = hook {
            hook();
        }
    }
}
