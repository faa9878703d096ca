//! The workspace: validated options, the sandbox, the cwd stack, per-path locks and the audit
//! log, and the entry points the bindings expose (`definitions`, `call`, `format_call`, `cwd`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{json, Value};

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
    tools: Vec<Exposed>,
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
        // What a crash interrupted: completed appends are kept, partial ones rolled back, temp
        // files of atomic writes removed.
        let journal = Journal::new(journal_dir.join(&root_hash));
        journal.recover();
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
        // Temp files of trashes that a crash interrupted; an hour old is surely not in flight.
        let _ = bucket.sweep_partials(std::time::Duration::from_secs(3600));
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
