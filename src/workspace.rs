//! The workspace: the state every call of one host shares, and nothing more. Validated options,
//! the sandbox, the cwd stack, per-path locks, the audit log, the trash bucket and the crash
//! journal (with the recovery started when the workspace is created). The flow of a call lives
//! above, in `dispatch`; what a tool does, in `tools/`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::watch;

use crate::audit::AuditLog;
use crate::datadir::DataDir;
use crate::hashing::sha256_hex;
use crate::history::{ChangeRecord, History};
use crate::journal::{Journal, Pending};
use crate::locks::PathLocks;
use crate::options::{OptionError, WorkspaceOptions};
use crate::paths::project::find_project_root;
use crate::paths::Sandbox;
use crate::trash::{Bucket, Identity};
use crate::views::SeenFiles;

/// One frame of the working-directory stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CwdFrame {
    pub cwd: PathBuf,
    pub project_root: PathBuf,
}

/// The cwd as `ws.cwd()` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CwdInfo {
    pub cwd: PathBuf,
    pub project_root: PathBuf,
    pub depth: usize,
}

/// The current frame and the saved ones (the stack's depth is the number saved).
#[derive(Debug, Clone)]
pub struct CwdStack {
    pub current: CwdFrame,
    pub saved: Vec<CwdFrame>,
}

/// A workspace: everything one host's tool calls share.
pub struct Workspace {
    options: WorkspaceOptions,
    sandbox: Sandbox,
    home: Option<PathBuf>,
    cwd: Mutex<CwdStack>,
    locks: PathLocks,
    audit: Option<AuditLog>,
    data_dir: Arc<DataDir>,
    history: History,
    bucket: Bucket,
    journal: Journal,
    /// The versions of files the model has seen (../docs/tools.md#stale-views).
    seen: SeenFiles,
    /// Becomes `true` once crash recovery, started by [`Workspace::new`], has finished.
    recovered: watch::Receiver<bool>,
    /// What that recovery left for a workspace whose sandbox reaches all of it.
    unfinished: Arc<Mutex<Vec<Pending>>>,
}

/// Repairs what a crash of an earlier process left, on a thread of its own so that creating a
/// workspace never blocks the host's event loop (a crashed move can leave a large temp tree to
/// remove, an append a long tail to hash): completed appends are kept and partial ones rolled
/// back, changes of many entries (undo, apply_patch) undone or finished — a finished one's
/// history record appended — temp files and trees of interrupted writes, moves and restores
/// removed, and temp files of interrupted trashes an hour old swept (younger ones may be in
/// flight). One recovery at a time per data directory and root, also across processes (see
/// [`Journal::recover_all`]). What it cannot finish — a record covering a directory outside
/// this sandbox — stays whole for a workspace that reaches it, and goes into `unfinished`
/// meanwhile (see [`Workspace::unfinished_change_of`]). The receiver turns `true` when it is
/// done; [`Workspace::recovered`] waits for it.
fn recover_in_background(
    journal: Journal,
    bucket: Bucket,
    sandbox: Sandbox,
    history: History,
    unfinished: Arc<Mutex<Vec<Pending>>>,
) -> watch::Receiver<bool> {
    let recover =
        move |journal: &Journal, bucket: &Bucket, sandbox: &Sandbox, history: &History| {
            let recovery = journal.recover_all(sandbox, &Aftermath { history, bucket });
            *unfinished.lock().unwrap_or_else(|e| e.into_inner()) = recovery.pending;
            let _ = bucket.sweep_partials(std::time::Duration::from_secs(3600));
        };
    let (done, recovered) = watch::channel(false);
    let (journal_, bucket_, sandbox_) = (journal.clone(), bucket.clone(), sandbox.clone());
    let history = Arc::new(history);
    let history_ = history.clone();
    let recover = Arc::new(recover);
    let recover_ = recover.clone();
    let spawned = std::thread::Builder::new()
        .name("afs-recovery".into())
        .spawn(move || {
            recover_(&journal_, &bucket_, &sandbox_, &history_);
            let _ = done.send(true);
        });
    if spawned.is_err() {
        // No thread to be had: recover here. The sender went with the closure, so waiters
        // see a closed channel and go on, as they should.
        recover(&journal, &bucket, &sandbox, &history);
    }
    recovered
}

/// What recovery does for this workspace besides the entries: appends the history record a
/// finished change carries, discards the trash archives of one it undoes.
struct Aftermath<'a> {
    history: &'a History,
    bucket: &'a Bucket,
}

impl crate::journal::commit::Aftermath for Aftermath<'_> {
    fn perform(&self, sequel: &Value) -> std::io::Result<()> {
        match AfterCommit::read(sequel) {
            Some(after) => {
                after.consume(self.bucket);
                self.history.append_once(&after.record).map(drop)
            }
            // One that does not read as ours is dropped.
            None => Ok(()),
        }
    }

    fn discard_archive(&self, name: &std::ffi::OsStr) {
        self.bucket.discard_named(name);
    }
}

/// What follows a journaled change once it is made, carried in its commit record so that
/// recovery finishes it after a kill (`call::commit_recorded` puts it there): the archives the
/// change consumed (a restore's source) are deleted, then the change's history record is
/// appended — by recovery, unless the log holds it already (a kill after the append). Both are
/// safe to do again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AfterCommit {
    pub record: ChangeRecord,
    /// Names of archives in this workspace's bucket.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub consume: Vec<PathBuf>,
}

impl AfterCommit {
    /// The sequel as stored; one written before this form (the history record alone) reads as
    /// that record with nothing to consume. `None`: not ours.
    pub fn read(sequel: &Value) -> Option<Self> {
        AfterCommit::deserialize(sequel).ok().or_else(|| {
            ChangeRecord::deserialize(sequel)
                .ok()
                .map(|record| AfterCommit {
                    record,
                    consume: Vec::new(),
                })
        })
    }

    /// Deletes the consumed archives (one already gone is fine).
    pub fn consume(&self, bucket: &Bucket) {
        for name in &self.consume {
            bucket.discard_named(name.as_os_str());
        }
    }
}

impl Workspace {
    /// Validates `options` as [`Workspace::new`] does, and nothing more: no workspace, no
    /// recovery.
    pub fn check_options(options: &Value, tool_names: &[&str]) -> Result<(), OptionError> {
        let home = dirs::home_dir();
        WorkspaceOptions::parse(options, tool_names, home.as_deref()).map(drop)
    }

    /// Validates `options` (../docs/hosts.md#the-workspace-api; `tool_names` are the names `tools` may configure); the
    /// error names the bad option.
    pub fn new(options: &Value, tool_names: &[&str]) -> Result<Self, OptionError> {
        let home = dirs::home_dir();
        let options = WorkspaceOptions::parse(options, tool_names, home.as_deref())?;
        let root_hash = sha256_hex(options.root.as_os_str().as_encoded_bytes());
        let data_dir = Arc::new(DataDir::new(options.trash.data_dir.clone()));
        // The whole data directory is ours, not only the trees we write in it today.
        let sandbox = Sandbox::new(
            options.root.clone(),
            options.allowed_paths.clone(),
            vec![options.trash.data_dir.clone()],
        );
        let journal = Journal::new(data_dir.clone(), Path::new("journal").join(&root_hash));
        let project_root = find_project_root(&options.root).unwrap_or_else(|| options.root.clone());
        let bucket = Bucket::new(
            data_dir.clone(),
            &options.root,
            Identity {
                session_id: options.trash.session_id.clone(),
                run_id: options.trash.run_id.clone(),
                agent_name: options.trash.agent_name.clone(),
            },
            options.trash.compression_level,
        );
        let history_dir = Path::new("history").join(&root_hash);
        let unfinished = Arc::default();
        let recovered = recover_in_background(
            journal.clone(),
            bucket.clone(),
            sandbox.clone(),
            History::new(data_dir.clone(), &history_dir),
            Arc::clone(&unfinished),
        );
        Ok(Self {
            cwd: Mutex::new(CwdStack {
                current: CwdFrame {
                    cwd: options.root.clone(),
                    project_root,
                },
                saved: Vec::new(),
            }),
            audit: options
                .audit
                .then(|| AuditLog::new(data_dir.clone(), format!("{root_hash}.jsonl"))),
            history: History::new(data_dir.clone(), history_dir),
            data_dir,
            bucket,
            journal,
            seen: SeenFiles::default(),
            recovered,
            unfinished,
            sandbox,
            home,
            locks: PathLocks::default(),
            options,
        })
    }

    pub fn options(&self) -> &WorkspaceOptions {
        &self.options
    }

    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    pub fn home(&self) -> Option<&Path> {
        self.home.as_deref()
    }

    pub fn locks(&self) -> &PathLocks {
        &self.locks
    }

    /// The data directory (trash, audit log, journal), held by descriptor once opened.
    pub fn data_dir(&self) -> &Arc<DataDir> {
        &self.data_dir
    }

    /// This workspace's history of changes (../docs/history-and-undo.md).
    pub fn history(&self) -> &History {
        &self.history
    }

    /// This workspace's trash bucket, `<dataDir>/trash/<sha256(root)>`.
    pub fn bucket(&self) -> &Bucket {
        &self.bucket
    }

    /// Waits until the crash recovery [`Workspace::new`] started has finished (at once after
    /// that). Every call and trash method waits for it first, so none sees what a crash left.
    pub async fn recovered(&self) {
        // An error means the recovery thread ended without saying so (it panicked, or it never
        // started and recovery ran in `new`): there is nothing more to wait for.
        let _ = self.recovered.clone().wait_for(|done| *done).await;
    }

    /// Whether that recovery has finished (without waiting).
    pub fn is_recovered(&self) -> bool {
        *self.recovered.borrow()
    }

    /// The first of `paths` that a change a crash cut short covers (the entry itself, or a
    /// directory above or below one it changes) when this workspace's recovery could not finish
    /// that change — its sandbox does not reach all of it — and no workspace has finished it
    /// since; with what is known of that change. A change of such a path must not be made: it
    /// would build on a half-made change, which the workspace that finishes it then undoes or
    /// completes around it. Reads are not refused: they show what is on disk, as always.
    pub fn unfinished_change_of<'p>(&self, paths: &[&'p Path]) -> Option<(&'p Path, Pending)> {
        let mut unfinished = self.unfinished.lock().unwrap_or_else(|e| e.into_inner());
        if unfinished.is_empty() {
            return None;
        }
        unfinished.retain(|pending| self.journal.holds(pending));
        paths.iter().find_map(|path| {
            let pending = unfinished.iter().find(|pending| pending.covers(path))?;
            Some((*path, pending.clone()))
        })
    }

    /// This workspace's crash journal (appends, temp files), `<dataDir>/journal/<sha256(root)>`.
    pub fn journal(&self) -> &Journal {
        &self.journal
    }

    /// What the model has seen of each file it read or changed (../docs/tools.md#stale-views).
    pub fn seen(&self) -> &SeenFiles {
        &self.seen
    }

    /// The cwd stack, locked briefly.
    pub fn cwd_stack(&self) -> MutexGuard<'_, CwdStack> {
        self.cwd.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn cwd_snapshot(&self) -> CwdInfo {
        let stack = self.cwd_stack();
        CwdInfo {
            cwd: stack.current.cwd.clone(),
            project_root: stack.current.project_root.clone(),
            depth: stack.saved.len(),
        }
    }

    /// The audit log, unless `audit: false`.
    pub fn audit_log(&self) -> Option<&AuditLog> {
        self.audit.as_ref()
    }
}

#[cfg(test)]
mod tests;
