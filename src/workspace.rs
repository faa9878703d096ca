//! The workspace: validated options, the sandbox, the cwd stack, per-path locks and the audit
//! log, and the entry points the bindings expose (`definitions`, `call`, `format_call`, `cwd`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{json, Value};
use tokio::sync::watch;

use crate::audit::{AuditLog, AuditRecord};
use crate::call::{Call, CallContext, Failure, Success, ToolResult};
use crate::error::{ErrorCode, ToolError};
use crate::hashing::sha256_hex;
use crate::journal::Journal;
use crate::locks::PathLocks;
use crate::options::{OptionError, WorkspaceOptions};
use crate::paths::Sandbox;
use crate::tools::{self, ToolSpec};
use crate::trash::{Bucket, Identity};

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

/// A tool as this workspace exposes it.
struct Exposed {
    spec: &'static ToolSpec,
    name: String,
    enabled: bool,
}

/// A workspace: everything one host's tool calls share.
pub struct Workspace {
    options: WorkspaceOptions,
    sandbox: Sandbox,
    home: Option<PathBuf>,
    cwd: Mutex<CwdStack>,
    locks: PathLocks,
    audit: Option<AuditLog>,
    bucket: Bucket,
    journal: Journal,
    /// Becomes `true` once crash recovery, started by [`Workspace::new`], has finished.
    recovered: watch::Receiver<bool>,
    tools: Vec<Exposed>,
}

/// Repairs what a crash of an earlier process left, on a thread of its own so that creating a
/// workspace never blocks the host's event loop (a crashed move can leave a large temp tree to
/// remove, an append a long tail to hash): completed appends are kept and partial ones rolled
/// back, temp files and trees of interrupted writes, moves and restores removed, and temp files
/// of interrupted trashes an hour old swept (younger ones may be in flight). The receiver turns
/// `true` when it is done; [`Workspace::recovered`] waits for it.
fn recover_in_background(journal: Journal, bucket: Bucket) -> watch::Receiver<bool> {
    let recover = |journal: &Journal, bucket: &Bucket| {
        journal.recover();
        let _ = bucket.sweep_partials(std::time::Duration::from_secs(3600));
    };
    let (done, recovered) = watch::channel(false);
    let (journal_, bucket_) = (journal.clone(), bucket.clone());
    let spawned = std::thread::Builder::new()
        .name("afs-recovery".into())
        .spawn(move || {
            recover(&journal_, &bucket_);
            let _ = done.send(true);
        });
    if spawned.is_err() {
        // No thread to be had: recover here. The sender went with the closure, so waiters
        // see a closed channel and go on, as they should.
        recover(&journal, &bucket);
    }
    recovered
}

/// The nearest ancestor of `dir` (itself included) holding `.git` (file or directory).
pub fn find_project_root(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| std::fs::symlink_metadata(d.join(".git")).is_ok())
        .map(Path::to_path_buf)
}

impl Workspace {
    /// Validates `options` (SPEC §2); the error names the bad option.
    pub fn new(options: &Value) -> Result<Self, OptionError> {
        let home = dirs::home_dir();
        let options = WorkspaceOptions::parse(options, &tools::names(), home.as_deref())?;
        let root_hash = sha256_hex(options.root.as_os_str().as_encoded_bytes());
        let trash_dir = options.trash.data_dir.join("trash");
        let audit_dir = options.trash.data_dir.join("audit");
        let journal_dir = options.trash.data_dir.join("journal");
        let sandbox = Sandbox::new(
            options.root.clone(),
            options.allowed_paths.clone(),
            vec![trash_dir.clone(), audit_dir.clone(), journal_dir.clone()],
        );
        let journal = Journal::new(journal_dir.join(&root_hash));
        let project_root = find_project_root(&options.root).unwrap_or_else(|| options.root.clone());
        let tools = tools::ALL
            .iter()
            .map(|spec| {
                let config = options.tools.get(spec.name);
                Exposed {
                    spec,
                    name: config
                        .and_then(|c| c.name.clone())
                        .unwrap_or_else(|| spec.name.to_owned()),
                    enabled: config.and_then(|c| c.enabled).unwrap_or(true),
                }
            })
            .collect();
        let bucket = Bucket::new(
            &options.trash.data_dir,
            &options.root,
            Identity {
                session_id: options.trash.session_id.clone(),
                run_id: options.trash.run_id.clone(),
                agent_name: options.trash.agent_name.clone(),
            },
            options.trash.compression_level,
        );
        let recovered = recover_in_background(journal.clone(), bucket.clone());
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
                .then(|| AuditLog::new(audit_dir.join(format!("{root_hash}.jsonl")))),
            bucket,
            journal,
            recovered,
            sandbox,
            home,
            locks: PathLocks::default(),
            tools,
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

    /// This workspace's crash journal (appends, temp files), `<dataDir>/journal/<sha256(root)>`.
    pub fn journal(&self) -> &Journal {
        &self.journal
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

    /// The exposed name of the tool originally called `original` (for messages that point the
    /// model at another tool).
    pub fn exposed_name(&self, original: &str) -> String {
        self.tools
            .iter()
            .find(|t| t.spec.name == original)
            .map(|t| t.name.clone())
            .unwrap_or_else(|| original.to_owned())
    }

    fn available(&self, tool: &Exposed) -> bool {
        tool.enabled && !(self.options.read_only && tool.spec.mutates)
    }

    /// The enabled tools' definitions (SPEC §2 `ToolDefinition`).
    pub fn definitions(&self) -> Value {
        Value::Array(
            self.tools
                .iter()
                .filter(|t| self.available(t))
                .map(|t| {
                    json!({
                        "name": t.name,
                        "description": t.spec.description,
                        "inputSchema": (t.spec.schema)(),
                        "annotations": { "readOnly": !t.spec.mutates, "destructive": t.spec.destructive },
                    })
                })
                .collect(),
        )
    }

    fn lookup(&self, name: &str) -> Result<&Exposed, ToolError> {
        if let Some(tool) = self.tools.iter().find(|t| t.name == name && t.enabled) {
            if self.options.read_only && tool.spec.mutates {
                return Err(ToolError::new(
                    ErrorCode::ReadOnly,
                    format!("{name} changes files, and this workspace is read-only; only reading tools are available"),
                ));
            }
            return Ok(tool);
        }
        if self
            .tools
            .iter()
            .any(|t| !t.enabled && (t.name == name || t.spec.name == name))
        {
            return Err(ToolError::new(
                ErrorCode::ToolDisabled,
                format!(
                    "the tool {name} is disabled in this workspace; use one of the available tools"
                ),
            ));
        }
        let hint = match self
            .tools
            .iter()
            .find(|t| t.spec.name == name && self.available(t))
        {
            Some(renamed) => format!("; here it is called {}", renamed.name),
            None => {
                let names: Vec<&str> = self
                    .tools
                    .iter()
                    .filter(|t| self.available(t))
                    .map(|t| t.name.as_str())
                    .collect();
                format!("; available tools: {}", names.join(", "))
            }
        };
        Err(ToolError::new(
            ErrorCode::UnknownTool,
            format!("unknown tool {name}{hint}"),
        ))
    }

    /// The one-line header for a call (SPEC §2 `formatCall`).
    pub fn format_call(&self, name: &str, args: &Value) -> String {
        match self
            .tools
            .iter()
            .find(|t| t.name == name)
            .or_else(|| self.tools.iter().find(|t| t.spec.name == name))
        {
            Some(tool) => (tool.spec.format_call)(args),
            None => tools::format_path(args),
        }
    }

    /// This workspace's trash entries, newest first, as JSON (`ws.trashList()`).
    pub async fn trash_list(self: &Arc<Self>) -> Result<Value, ToolError> {
        self.recovered().await;
        let ws = self.clone();
        tokio::task::spawn_blocking(move || {
            let entries = ws
                .bucket
                .list()
                .map_err(|e| ToolError::io(&e, "list the trash", ws.bucket.dir()))?;
            Ok(Value::Array(
                entries.iter().map(tools::trash_list::entry_json).collect(),
            ))
        })
        .await
        .unwrap_or_else(|e| Err(ToolError::new(ErrorCode::IoError, e.to_string())))
    }

    /// Removes archives (older than `older_than`, if given) from this workspace's trash
    /// (`ws.trashClear()`); never temp files of trashes in flight.
    pub async fn trash_clear(
        self: &Arc<Self>,
        older_than: Option<std::time::Duration>,
    ) -> Result<Value, ToolError> {
        self.recovered().await;
        let ws = self.clone();
        tokio::task::spawn_blocking(move || {
            let stats = ws
                .bucket
                .clear(older_than)
                .map_err(|e| ToolError::io(&e, "clear the trash", ws.bucket.dir()))?;
            Ok(json!({ "cleared": stats.cleared, "bytesFreed": stats.bytes_freed }))
        })
        .await
        .unwrap_or_else(|e| Err(ToolError::new(ErrorCode::IoError, e.to_string())))
    }

    /// Runs one tool call. Never fails: every problem is a `ToolResult`.
    pub async fn call(self: &Arc<Self>, name: &str, args: Value, ctx: CallContext) -> ToolResult {
        self.recovered().await;
        let tool = match self.lookup(name) {
            Ok(tool) => tool,
            Err(e) => return ToolResult::error(e),
        };
        let permissions = match &ctx.permissions {
            None | Some(Value::Null) => Ok(self.options.permissions),
            Some(p) => self
                .options
                .permissions
                .merged(p, "permissions")
                .map_err(ToolError::invalid),
        };
        let raw_path = primary_path_argument(&args).map(|raw| {
            // Failed calls name the path as the model gave it, made absolute like a tool would.
            crate::paths::resolve::absolute_input(
                &raw,
                "path",
                &self.cwd_snapshot().cwd,
                self.home(),
            )
            .map(|p| p.display().to_string())
            .unwrap_or(raw)
        });
        let outcome = match permissions {
            Err(e) => Err(Failure::Error(e)),
            Ok(_) if ctx.cancel.is_aborted() => Err(Failure::Error(ToolError::aborted())),
            Ok(permissions) => {
                let call = Call::new(self.clone(), tool.name.clone(), permissions, ctx);
                catch_panics((tool.spec.run)(&call, args)).await
            }
        };
        if tool.spec.mutates {
            self.audit(&tool.name, raw_path, &outcome);
        }
        match outcome {
            Ok(success) => ToolResult {
                status: "ok",
                output: success.output,
                code: None,
                diff: success.diff,
                data: (!success.data.is_empty()).then_some(success.data),
            },
            Err(Failure::Denied(message)) => ToolResult {
                status: "denied",
                output: message,
                code: None,
                diff: None,
                data: None,
            },
            Err(Failure::Error(e)) => ToolResult::error(e),
        }
    }

    fn audit(&self, tool: &str, raw_path: Option<String>, outcome: &Result<Success, Failure>) {
        let Some(log) = &self.audit else { return };
        let trash = &self.options.trash;
        let (status, code) = match outcome {
            Ok(_) => ("ok", None),
            Err(Failure::Denied(_)) => ("denied", None),
            Err(Failure::Error(e)) => ("error", Some(e.code)),
        };
        let success = outcome.as_ref().ok();
        let path = success
            .and_then(|s| s.path.as_ref())
            .map(|p| p.display().to_string())
            .or(raw_path)
            .unwrap_or_default();
        log.append(&AuditRecord {
            time: humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string(),
            tool: tool.to_owned(),
            path,
            status,
            code,
            trashed_to: success
                .and_then(|s| s.trashed_to.as_ref())
                .map(|p| p.display().to_string()),
            sha256_before: success.and_then(|s| s.sha256_before.clone()),
            sha256_after: success.and_then(|s| s.sha256_after.clone()),
            session_id: trash.session_id.clone(),
            run_id: trash.run_id.clone(),
            agent_name: trash.agent_name.clone(),
        });
    }
}

/// The path argument an audit line names when the call failed before resolving it.
fn primary_path_argument(args: &Value) -> Option<String> {
    ["path", "source", "trashedPath"]
        .iter()
        .find_map(|k| args.get(*k).and_then(Value::as_str))
        .map(str::to_owned)
}

/// Polls a tool's future, turning a panic (a bug) into an `IO_ERROR` result instead of a rejected
/// promise: `ws.call` never throws for what a tool does (SPEC §2). The future is dropped right
/// after the panic, releasing its locks.
async fn catch_panics(
    mut run: crate::call::BoxFuture<'_, crate::call::Outcome>,
) -> crate::call::Outcome {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::task::Poll;
    std::future::poll_fn(move |cx| match catch_unwind(AssertUnwindSafe(|| run.as_mut().poll(cx))) {
        Ok(poll) => poll,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            let what: String = what.chars().take(200).collect();
            Poll::Ready(Err(Failure::Error(ToolError::new(
                ErrorCode::IoError,
                format!("internal error in the tool ({what}); the call was stopped. This is a bug in agent-fs-tools, not in your arguments"),
            ))))
        }
    })
    .await
}

#[cfg(test)]
mod panic_tests {
    use super::*;

    #[tokio::test]
    async fn a_panicking_tool_becomes_an_io_error_result() {
        let outcome = catch_panics(Box::pin(async { panic!("boom in a tool") })).await;
        match outcome {
            Err(Failure::Error(e)) => {
                assert_eq!(e.code, ErrorCode::IoError);
                assert!(e.message.contains("boom in a tool"), "{}", e.message);
            }
            other => panic!("expected an error, got {other:?}"),
        }
    }
}

#[cfg(test)]
mod recovery_tests {
    use super::*;
    use crate::journal::{Record, TempRecord};
    use std::fs;
    use std::os::unix::fs::MetadataExt;

    /// A move between file systems that a crash cut short left its temp tree and its journal
    /// record; the next workspace removes both in the background, and its first call waits.
    #[tokio::test]
    async fn the_first_call_waits_for_the_recovery_begun_in_the_background() {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        let (root, data) = (base.join("root"), base.join("data"));
        let temp_name = ".moved.4294967294.0.agent-fs-tools.tmp";
        let temp = root.join(temp_name);
        for d in 0..20 {
            fs::create_dir_all(temp.join(format!("d{d}"))).unwrap();
            for f in 0..20 {
                fs::write(temp.join(format!("d{d}/f{f}")), "copied").unwrap();
            }
        }
        let meta = fs::metadata(&root).unwrap();
        let dead_pid = u32::MAX - 1;
        let record = Record::Temp(TempRecord {
            dir: root.clone(),
            dir_dev: meta.dev(),
            dir_ino: meta.ino(),
            name: temp_name.into(),
            pid: dead_pid,
        });
        let root_hash = sha256_hex(root.as_os_str().as_encoded_bytes());
        let journal = data.join("journal").join(root_hash);
        fs::create_dir_all(&journal).unwrap();
        let record_file = journal.join(format!("{dead_pid}-1.json"));
        fs::write(&record_file, serde_json::to_vec(&record).unwrap()).unwrap();

        let ws = Arc::new(
            Workspace::new(&json!({ "root": root, "trash": { "dataDir": data } })).unwrap(),
        );
        let args = json!({ "path": "." });
        let result = ws
            .call("list_directory", args, CallContext::default())
            .await;
        assert_eq!(result.status, "ok", "{}", result.output);
        assert!(
            *ws.recovered.borrow(),
            "the call ran before recovery had finished"
        );
        assert!(!temp.exists() && !record_file.exists());
        ws.recovered().await; // at once, now
    }
}
