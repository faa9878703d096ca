//! Recovery: replaying every record a crash left, one recovery at a time per journal, and
//! sweeping what no record answers for (see the journal's docs).

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use super::{append, commit, kept_bytes_name, pid_alive, pid_of, reaches, record, removal, temp};
use super::{Journal, Pending, Record, Recovered, Recovery, KEPT_EXTENSION, LIVE_GRACE};
use crate::paths::Sandbox;

impl Journal {
    /// Replays every record left by a crash (cheap when the directory is missing or empty), then
    /// removes kept append bytes whose record is gone (see [`Journal::recover_all`]).
    pub fn recover(&self, sandbox: &Sandbox, aftermath: &dyn commit::Aftermath) -> Vec<Recovered> {
        self.recover_all(sandbox, aftermath).outcomes
    }

    /// Replays every record left by a crash, under the journal's recovery lock: one recovery at
    /// a time per journal (data directory and root), across processes and the workspaces of one
    /// process alike; the next one finds what this one left. Only records we wrote (sealed, with
    /// plain names) are acted on, and only where `sandbox` reaches all a record covers: one it
    /// does not is left whole and returned as [`Pending`]. `aftermath` performs the sequel of a
    /// change of many entries that recovery finishes (see [`commit`]) unless it was done
    /// already — should it fail, the record stays for the next recovery — and discards the trash
    /// archives made for one it undoes. Nothing is done when the
    /// lock cannot be taken (a data directory that cannot be written): the records stay.
    pub fn recover_all(&self, sandbox: &Sandbox, aftermath: &dyn commit::Aftermath) -> Recovery {
        let mut recovery = Recovery::default();
        let Ok(Some(_lock)) = self.store.lock_recovery() else {
            return recovery;
        };
        let Ok(names) = self.store.names() else {
            return recovery;
        };
        // Changes of many entries first: until one is undone or finished, the temp names it lists
        // may hold a user's displaced file, which a temp record must not remove.
        let (commits, others): (Vec<_>, Vec<_>) = names.into_iter().partition(|name| {
            self.store
                .peek(name, record::COMMIT_HEAD.len())
                .is_some_and(|head| head == record::COMMIT_HEAD)
        });
        // The temp names of changes left whole: their temp records stay with them.
        let mut held: HashSet<(PathBuf, OsString)> = HashSet::new();
        for name in commits.into_iter().chain(others) {
            let text = name.to_string_lossy();
            if text.starts_with('.') && text.ends_with(".partial") {
                // A record never completed: nothing was done under it.
                if !self.in_flight(pid_of(&text), &name) {
                    let _ = self.store.remove(&name);
                }
                continue;
            }
            if !text.ends_with(".json") {
                continue;
            }
            let record = self
                .store
                .read_sealed_with(&name, |body| Record::read(body).ok());
            // A young record of a live process (this one included: another workspace of it) may
            // be an operation in flight; one that does not open, a record still being written.
            let pid = record.as_ref().map(Record::pid).or_else(|| pid_of(&text));
            if self.in_flight(pid, &name) {
                recovery.outcomes.push(Recovered::Skipped);
                continue;
            }
            let Some(record) = record else {
                // Not ours, not whole (a record torn by the kill), or naming what is not a plain
                // name: never acted on, and dropped as the garbage it is.
                let _ = self.store.remove(&name);
                recovery.outcomes.push(Recovered::Untrusted);
                continue;
            };
            if let Some(out_of_reach) = record.dirs().into_iter().find(|d| !reaches(sandbox, d)) {
                if let Record::Commit(commit) = &record {
                    held.extend(
                        commit
                            .asides()
                            .map(|(dir, aside)| (dir.to_owned(), aside.to_owned())),
                    );
                }
                recovery.pending.push(Pending {
                    paths: record.paths(),
                    out_of_reach: out_of_reach.to_owned(),
                    record: name,
                });
                recovery.outcomes.push(Recovered::Deferred);
                continue;
            }
            if let Record::Temp(temp) = &record {
                if held.iter().any(|(dir, aside)| temp.answers_for(dir, aside)) {
                    recovery.outcomes.push(Recovered::Deferred);
                    continue;
                }
            }
            let kept = kept_bytes_name(&name);
            let outcome = match &record {
                Record::Append(record) => {
                    append::replay(record, self.store.open_ours(&kept).ok(), sandbox)
                }
                Record::Temp(record) => temp::remove_temp(record, sandbox),
                Record::Commit(record) => {
                    let copies = commit::ForeignCopies::new(&self.store, &name);
                    let kept = self.store.open_ours(&kept).ok();
                    commit::recover(record, kept, &copies, sandbox, aftermath)
                }
                Record::Removal(record) => removal::finish_removal(record, sandbox),
            };
            if matches!(outcome, Ok(outcome) if outcome != Recovered::Deferred) {
                let _ = self.store.remove(&name);
                let _ = self.store.remove(&kept);
                commit::ForeignCopies::forget_all(&self.store, &name);
            }
            recovery
                .outcomes
                .push(outcome.unwrap_or(Recovered::LeftAlone));
        }
        self.sweep_kept_bytes();
        self.store.sync();
        recovery
    }

    /// Whether the record `pending` names is still in the journal (no workspace finished it).
    pub fn holds(&self, pending: &Pending) -> bool {
        self.store.exists(&pending.record)
    }

    /// Removes kept append bytes (and a splice's copies of someone else's bytes) without a
    /// record: a crash between writing them and the
    /// record, or a record removed but not its copy. Those of a live young process may be an
    /// append about to be recorded and stay.
    fn sweep_kept_bytes(&self) {
        let Ok(names) = self.store.names() else {
            return;
        };
        for name in names {
            let path = Path::new(&name);
            let record = if path.extension() == Some(OsStr::new(KEPT_EXTENSION)) {
                path.with_extension("json").into_os_string()
            } else if let Some(record) = commit::copy_of(&name) {
                record
            } else {
                continue;
            };
            if self.store.exists(&record) || self.in_flight(pid_of(&name.to_string_lossy()), &name)
            {
                continue;
            }
            let _ = self.store.remove(&name);
        }
    }

    /// Whether the record `name` of `pid` may belong to an operation still in flight: `pid` is
    /// alive and the record is younger than [`LIVE_GRACE`].
    fn in_flight(&self, pid: Option<u32>, name: &OsStr) -> bool {
        pid_alive(pid) && self.store.age(name).is_none_or(|a| a < LIVE_GRACE)
    }
}
