//! The flow every tool call goes through, once, above the tools (../docs/hosts.md#the-workspace-api): look the tool up
//! (enabled? renamed?), check the arguments against its schema, refuse it if `readOnly` hides it,
//! settle the call's permissions, run the tool (which resolves,
//! plans, authorizes and commits through [`crate::call::Call`]), turn a panic into a result,
//! audit what a mutating tool did, and shape the `ToolResult`. Also the host's view of the
//! toolset: `definitions`, `formatCall` and the trash methods.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::audit::AuditRecord;
use crate::call::{
    BoxFuture, Call, CallContext, CheckSlot, Decision, Failure, Outcome, Recorded, ToolNames,
    ToolResult,
};
use crate::error::{ErrorCode, ToolError};
use crate::options::OptionError;
use crate::paths::shown::{echo, Shown};
use crate::permissions::{PermissionError, Permissions};
use crate::progress::Progress;
use crate::tools::{self, ToolSpec};
use crate::undo::{self, UndoRequest};
use crate::workspace::Workspace;

/// A tool as this workspace exposes it.
struct Exposed {
    spec: &'static ToolSpec,
    name: String,
    enabled: bool,
    /// Its arguments' JSON Schema, as `definitions` gives it and calls are checked against.
    schema: Value,
}

/// The tools one workspace offers, and the host's entry points to them.
pub struct Toolset {
    ws: Arc<Workspace>,
    tools: Vec<Exposed>,
    names: Arc<ToolNames>,
}

impl Toolset {
    /// Validates `options` as [`Toolset::new`] does, without creating a workspace (so no crash
    /// recovery starts); the error names the bad option.
    pub fn check_options(options: &Value) -> Result<(), OptionError> {
        Workspace::check_options(options, &tools::names())
    }

    /// Validates `options` (../docs/hosts.md#the-workspace-api) and creates the workspace; the error names the bad option.
    pub fn new(options: &Value) -> Result<Self, OptionError> {
        let ws = Arc::new(Workspace::new(options, &tools::names())?);
        let config = &ws.options().tools;
        let tools: Vec<Exposed> = tools::ALL
            .iter()
            .map(|spec| {
                let config = config.get(spec.name);
                Exposed {
                    spec,
                    name: config
                        .and_then(|c| c.name.clone())
                        .unwrap_or_else(|| spec.name.to_owned()),
                    enabled: config.and_then(|c| c.enabled).unwrap_or(true),
                    schema: (spec.schema)(),
                }
            })
            .collect();
        let read_only = ws.options().read_only;
        let names = ToolNames::new(
            tools
                .iter()
                .map(|t| (t.spec.name, t.name.clone(), offered(t, read_only)))
                .collect(),
        );
        Ok(Self {
            ws,
            tools,
            names: Arc::new(names),
        })
    }

    /// The workspace the tools act in.
    pub fn workspace(&self) -> &Arc<Workspace> {
        &self.ws
    }

    fn available(&self, tool: &Exposed) -> bool {
        offered(tool, self.ws.options().read_only)
    }

    /// The offered tools' definitions (`ToolDefinition`, ../docs/hosts.md#the-workspace-api).
    pub fn definitions(&self) -> Value {
        Value::Array(
            self.tools
                .iter()
                .filter(|t| self.available(t))
                .map(|t| {
                    json!({
                        "name": t.name,
                        "description": (t.spec.description)(&self.names, self.ws.options()),
                        "inputSchema": t.schema,
                        "annotations": {
                            "readOnly": !t.spec.mutates,
                            "destructive": t.spec.destructive,
                            "idempotent": t.spec.idempotent,
                        },
                    })
                })
                .collect(),
        )
    }

    /// The enabled tool the host's `name` calls (which `readOnly` may still refuse).
    fn lookup(&self, name: &str) -> Result<&Exposed, ToolError> {
        if let Some(tool) = self.tools.iter().find(|t| t.name == name && t.enabled) {
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

    /// The one-line header for a call (`formatCall`, ../docs/hosts.md#the-workspace-api).
    pub fn format_call(&self, name: &str, args: &Value) -> String {
        // The tool the host's name calls: an offered tool first (a tool may be renamed to the
        // name of one that is disabled), then any tool by that name, then by its original name.
        let header = match self
            .tools
            .iter()
            .find(|t| t.name == name && self.available(t))
            .or_else(|| self.tools.iter().find(|t| t.name == name))
            .or_else(|| self.tools.iter().find(|t| t.spec.name == name))
        {
            Some(tool) => {
                let args = tools::arguments::without_null_optionals(&tool.schema, args.clone());
                (tool.spec.format_call)(&args)
            }
            None => tools::format_path(args),
        };
        // The model's arguments, headed for the host's terminal: no control characters.
        echo(&header).into_owned()
    }

    /// This workspace's trash entries, newest first, as JSON (`ws.trashList()`).
    pub async fn trash_list(&self) -> Result<Value, ToolError> {
        self.ws.recovered().await;
        let ws = self.ws.clone();
        tokio::task::spawn_blocking(move || {
            let entries = ws
                .bucket()
                .list()
                .map_err(|e| ToolError::io(&e, "list the trash", ws.bucket().dir()))?;
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
        &self,
        older_than: Option<std::time::Duration>,
    ) -> Result<Value, ToolError> {
        self.ws.recovered().await;
        let ws = self.ws.clone();
        tokio::task::spawn_blocking(move || {
            let stats = ws
                .bucket()
                .clear(older_than)
                .map_err(|e| ToolError::io(&e, "clear the trash", ws.bucket().dir()))?;
            // What takes edits back is bounded by the trash too (../docs/history-and-undo.md).
            ws.history().clear_deltas(older_than).map_err(|e| {
                ToolError::io(&e, "clear the history's deltas in", ws.data_dir().path())
            })?;
            Ok(json!({ "cleared": stats.cleared, "bytesFreed": stats.bytes_freed }))
        })
        .await
        .unwrap_or_else(|e| Err(ToolError::new(ErrorCode::IoError, e.to_string())))
    }

    /// This workspace's permissions with a host's per-call `partial` object merged over them
    /// (`ctx.permissions`). An unknown key or a value that is not a boolean is a host bug, not
    /// the model's: the error names `ctx.permissions.<key>`, for a `TypeError`.
    pub fn call_permissions(&self, partial: &Value) -> Result<Permissions, PermissionError> {
        match partial {
            Value::Null => Ok(self.ws.options().permissions),
            partial => self
                .ws
                .options()
                .permissions
                .merged(partial, "ctx.permissions"),
        }
    }

    /// Runs one tool call. Never fails: every problem is a `ToolResult`.
    pub async fn call(&self, name: &str, args: Value, ctx: CallContext) -> ToolResult {
        self.ws.recovered().await;
        let tool = match self.lookup(name) {
            Ok(tool) => tool,
            Err(e) => return ToolResult::error(e),
        };
        // The arguments first (../docs/hosts.md#the-workspace-api), then what the workspace allows.
        let args = tools::arguments::without_null_optionals(&tool.schema, args);
        let checked = tools::arguments::check(&tool.name, &tool.schema, &args);
        if !self.available(tool) {
            return ToolResult::error(checked.err().unwrap_or_else(|| read_only(name)));
        }
        let permissions = ctx.permissions.unwrap_or(self.ws.options().permissions);
        let raw_path = self.argument_path(tool, &args);
        let outcome = match checked {
            Err(e) => Err(Failure::Error(e)),
            Ok(()) if ctx.cancel.is_aborted() => Err(Failure::Error(ToolError::aborted())),
            Ok(()) => {
                let mut call = Call::new(
                    self.ws.clone(),
                    tool.name.clone(),
                    self.names.clone(),
                    permissions,
                    ctx,
                );
                if tool.spec.mutates {
                    call.heading.summary = (tool.spec.format_call)(&args);
                }
                run_until_aborted(call, tool.spec.run, args).await
            }
        };
        if tool.spec.mutates {
            self.audit(&tool.name, raw_path, &outcome);
        }
        self.result(outcome)
    }

    /// The result of a call; a change it made is in the history already (../docs/history-and-undo.md:
    /// recorded with its journaled commit, an undo too, even when nothing on disk had to move),
    /// and its id goes in `data.changeId`. Every output is bounded ([`bounded_result`]).
    fn result(&self, outcome: Outcome) -> ToolResult {
        let result = self.unbounded_result(outcome);
        bounded_result(result, self.ws.options().limits.read_max_bytes as usize)
    }

    fn unbounded_result(&self, outcome: Outcome) -> ToolResult {
        match outcome {
            Ok(success) => {
                let mut data = success.data;
                if !success.changes.is_empty() {
                    let files = success.changes.iter().map(|c| c.summary()).collect();
                    data.insert("files".to_owned(), Value::Array(files));
                }
                let change_id = match success.recorded {
                    Recorded::Written { id } => Some(id),
                    Recorded::Not => None,
                };
                if let Some(id) = change_id {
                    data.insert("changeId".to_owned(), Value::String(id));
                }
                ToolResult {
                    status: "ok",
                    output: success.output,
                    code: None,
                    denial: None,
                    diff: success.diff,
                    data: (!data.is_empty()).then_some(data),
                }
            }
            Err(Failure::Denied(denial)) => ToolResult::denied(denial),
            Err(Failure::Error(e)) => ToolResult::error(e),
        }
    }

    /// The history, newest first (`ws.history()`, ../docs/history-and-undo.md).
    pub async fn history(
        &self,
        limit: Option<usize>,
        session_id: Option<String>,
    ) -> Result<String, ToolError> {
        self.ws.recovered().await;
        let ws = self.ws.clone();
        tokio::task::spawn_blocking(move || undo::history_view(&ws, limit, session_id.as_deref()))
            .await
            .unwrap_or_else(|e| Err(ToolError::new(ErrorCode::IoError, e.to_string())))
    }

    /// Takes back changes (`ws.undo()`, ../docs/history-and-undo.md): the host's call, not the model's. Asks the
    /// user once when `ctx` has a confirmer; the undo is a change in the history.
    pub async fn undo(&self, request: UndoRequest, ctx: CallContext) -> ToolResult {
        self.ws.recovered().await;
        if self.ws.options().read_only && !request.dry_run {
            return ToolResult::error(undo::read_only());
        }
        let mut call = Call::new(
            self.ws.clone(),
            "undo".to_owned(),
            self.names.clone(),
            self.ws.options().permissions,
            ctx,
        );
        call.for_model = false;
        let run: BoxFuture<'_, Result<undo::Undone, Failure>> =
            Box::pin(undo::undo(&call, request));
        let mut heading = None;
        let outcome = catch_panics(Box::pin(async {
            run.await.map(|undone| {
                heading = undone.heading;
                undone.success
            })
        }))
        .await;
        if heading.is_some() || outcome.is_err() {
            self.audit("undo", None, &outcome);
        }
        self.result(outcome)
    }

    /// What the call would do about asking the user (`ws.check`), learnt by running it up to its
    /// permission decision and stopping there: nothing is changed, asked, audited or recorded.
    /// A call that would fail before asking gives its result; a tool that never asks (the cwd
    /// stack, trash_list) is not run at all.
    pub async fn check(&self, name: &str, args: Value, ctx: CallContext) -> Checked {
        self.ws.recovered().await;
        let tool = match self.lookup(name) {
            Ok(tool) => tool,
            Err(e) => return Checked::Fail(ToolResult::error(e)),
        };
        let args = tools::arguments::without_null_optionals(&tool.schema, args);
        let checked = tools::arguments::check(&tool.name, &tool.schema, &args);
        if !self.available(tool) {
            let refused = checked.err().unwrap_or_else(|| read_only(name));
            return Checked::Fail(ToolResult::error(refused));
        }
        if let Err(e) = checked {
            return Checked::Fail(ToolResult::error(e));
        }
        if !tool.spec.asks {
            return Checked::Decided(Decision::Allow);
        }
        let slot = Arc::new(CheckSlot::default());
        let permissions = ctx.permissions.unwrap_or(self.ws.options().permissions);
        let ctx = CallContext {
            confirmer: None,
            check: Some(slot.clone()),
            progress: Progress::default(),
            ..ctx
        };
        let call = Call::new(
            self.ws.clone(),
            tool.name.clone(),
            self.names.clone(),
            permissions,
            ctx,
        );
        let outcome = catch_panics((tool.spec.run)(&call, args)).await;
        match (slot.take(), outcome) {
            (Some(decision), _) => Checked::Decided(decision),
            // Done without asking: nothing needed changing (a patch already applied).
            (None, Ok(_)) => Checked::Decided(Decision::Allow),
            (None, Err(Failure::Error(e))) => Checked::Fail(ToolResult::error(e)),
            (None, Err(Failure::Denied(denial))) => Checked::Fail(ToolResult::denied(denial)),
        }
    }

    /// The path argument of a call as the model gave it, made absolute like a tool would: what
    /// an audit record names when the call failed before it resolved its paths.
    fn argument_path(&self, tool: &Exposed, args: &Value) -> Option<String> {
        let raw = args.get(tool.spec.path_argument?)?.as_str()?;
        let cwd = self.ws.cwd_snapshot().cwd;
        Some(
            crate::paths::resolve::absolute_input(raw, "path", &cwd, self.ws.home())
                .map(|p| p.shown().into_owned())
                .unwrap_or_else(|_| raw.to_owned()),
        )
    }

    fn audit(&self, tool: &str, raw_path: Option<String>, outcome: &Outcome) {
        let Some(log) = self.ws.audit_log() else {
            return;
        };
        let trash = &self.ws.options().trash;
        let (status, code) = match outcome {
            Ok(_) => ("ok", None),
            Err(Failure::Denied(_)) => ("denied", None),
            Err(Failure::Error(e)) => ("error", Some(e.code)),
        };
        let files = outcome
            .as_ref()
            .map(|s| s.changes.clone())
            .unwrap_or_default();
        // The documented one-path fields describe the first file (for a move, its source).
        let first = files.first();
        let path = first
            .map(|f| f.from.as_ref().unwrap_or(&f.path).shown().into_owned())
            .or(raw_path)
            .unwrap_or_default();
        log.append(&AuditRecord {
            time: humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string(),
            tool: tool.to_owned(),
            path,
            status,
            code,
            trashed_to: first
                .and_then(|f| f.trashed_to.as_ref())
                .map(|p| p.shown().into_owned()),
            sha256_before: first.and_then(|f| f.sha256_before.clone()),
            sha256_after: first.and_then(|f| f.sha256_after.clone()),
            files,
            session_id: trash.session_id.clone(),
            run_id: trash.run_id.clone(),
            agent_name: trash.agent_name.clone(),
        });
    }
}

/// What `ws.check` found out about a call.
#[derive(Debug, Clone, PartialEq)]
pub enum Checked {
    /// It would run without asking, or ask this.
    Decided(Decision),
    /// It would fail (or be denied) before asking, with this result.
    Fail(ToolResult),
}

impl Checked {
    /// `{ decision: "allow" }`, `{ decision: "ask", request }` or `{ decision: "fail", result }`.
    pub fn to_json(&self) -> Value {
        match self {
            Checked::Decided(Decision::Allow) => json!({ "decision": "allow" }),
            Checked::Decided(Decision::Ask(request)) => {
                json!({ "decision": "ask", "request": request })
            }
            Checked::Fail(result) => json!({ "decision": "fail", "result": result }),
        }
    }
}

/// The refusal of a changing tool in a read-only workspace.
fn read_only(name: &str) -> ToolError {
    ToolError::new(
        ErrorCode::ReadOnly,
        format!("{name} changes files, and this workspace is read-only; nothing was changed. Only reading tools are available"),
    )
}

/// Whether `tool` is offered: enabled, and not a changing tool in a read-only workspace.
fn offered(tool: &Exposed, read_only: bool) -> bool {
    tool.enabled && !(read_only && tool.spec.mutates)
}

/// Polls a tool's future, turning a panic (a bug) into an `IO_ERROR` result instead of a rejected
/// promise: `ws.call` never throws for what a tool does (../docs/hosts.md#the-workspace-api). The future is dropped right
/// after the panic, releasing its locks.
/// Runs the tool as a task of its own, so that an abort is answered at once even while the
/// tool is stuck in the kernel (a read of a hung NFS or FUSE file system, on a runtime thread
/// or a blocking one): `ABORTED`, and the task is cancelled, dropping its locks at its next
/// await. A call is given up on only before it starts to change anything ([`crate::call::AbortGate`]);
/// after that its own abort checks decide, and its result is awaited.
async fn run_until_aborted(
    call: Call,
    run: for<'a> fn(&'a Call, Value) -> BoxFuture<'a, Outcome>,
    args: Value,
) -> Outcome {
    let cancel = call.cancel.clone();
    let gate = call.abort_gate();
    let mut task = tokio::spawn(async move { catch_panics(run(&call, args)).await });
    let joined = tokio::select! {
        joined = &mut task => joined,
        () = cancel.aborted() => {
            if gate.give_up() {
                task.abort();
                return Err(Failure::Error(ToolError::aborted()));
            }
            task.await
        }
    };
    joined.unwrap_or_else(|e| {
        Err(Failure::Error(ToolError::new(
            ErrorCode::IoError,
            format!("internal error in the tool ({e}); the call was stopped. This is a bug in agent-fs-tools, not in your arguments"),
        )))
    })
}

/// How much larger than the model's output (`readMaxBytes`) `ToolResult.diff`, which is for a UI,
/// may be: 16 times, 1 MiB at the default limit.
pub const DIFF_MAX_FACTOR: usize = 16;

/// Room above `readMaxBytes` for the notes a tool ends its own bounded output with.
const OUTPUT_SLACK: usize = 1024;

/// Every output bounded in bytes (../docs/tools.md#bounded-outputs). Each tool bounds its own output near `max`
/// (`readMaxBytes`), saying how to see the rest; this is the net under all of them, for what a tool
/// did not expect to be long (an error quoting a huge argument). `diff` is bounded too, larger
/// ([`DIFF_MAX_FACTOR`]), and cut so that it stays a valid diff.
fn bounded_result(mut result: ToolResult, max: usize) -> ToolResult {
    result.output = crate::text::bounded::bounded(&result.output, max + OUTPUT_SLACK, |left| {
        format!(
            "[output truncated: {} more lines ({} bytes) not shown]",
            left.lines, left.bytes
        )
    });
    if let Some(diff) = result.diff.take() {
        let (diff, cut) =
            crate::text::diff_cut::cut_diff(&diff, max.saturating_mul(DIFF_MAX_FACTOR));
        if let Some(left) = cut {
            let data = result.data.get_or_insert_with(Default::default);
            data.insert("diffLinesLeftOut".to_owned(), Value::from(left));
        }
        result.diff = Some(diff);
    }
    result
}

async fn catch_panics(mut run: BoxFuture<'_, Outcome>) -> Outcome {
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
mod schema_args_tests;

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
    use crate::datadir::DataDir;
    use crate::hashing::sha256_hex;
    use crate::journal::{Journal, Record, TempRecord};
    use std::fs;
    use std::os::unix::fs::MetadataExt;
    use std::path::Path;

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
            made_dirs: Vec::new(),
        });
        let root_hash = sha256_hex(root.as_os_str().as_encoded_bytes());
        fs::create_dir_all(&data).unwrap();
        let journal = Journal::new(
            Arc::new(DataDir::new(data.clone())),
            Path::new("journal").join(root_hash),
        );
        let record_file = journal.dir().join(format!("{dead_pid}-1.json"));
        journal.rewrite(&record_file, &serde_json::to_vec(&record).unwrap());

        let toolset = Toolset::new(&json!({ "root": root, "trash": { "dataDir": data } })).unwrap();
        let args = json!({ "path": "." });
        let result = toolset
            .call("list_directory", args, CallContext::default())
            .await;
        assert_eq!(result.status, "ok", "{}", result.output);
        assert!(
            toolset.workspace().is_recovered(),
            "the call ran before recovery had finished"
        );
        assert!(!temp.exists() && !record_file.exists());
        toolset.workspace().recovered().await; // at once, now
    }
}

#[cfg(test)]
mod description_tests {
    use super::*;

    /// Whether `text` has `word` with no letter, digit or `_` right before or after it.
    fn has_word(text: &str, word: &str) -> bool {
        let is_name = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        text.match_indices(word).any(|(at, _)| {
            !is_name(text[..at].chars().next_back())
                && !is_name(text[at + word.len()..].chars().next())
        })
    }

    /// Every text of the definitions a model reads: descriptions and argument descriptions.
    fn texts(definitions: &Value) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for def in definitions.as_array().unwrap() {
            let name = def["name"].as_str().unwrap().to_owned();
            out.push((
                name.clone(),
                def["description"].as_str().unwrap().to_owned(),
            ));
            for (arg, schema) in def["inputSchema"]["properties"].as_object().unwrap() {
                let text = schema["description"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                out.push((format!("{name}.{arg}"), text));
            }
        }
        out
    }

    /// No description names a tool the model cannot call by that name: renamed (Tomo calls
    /// delete_file remove_file), disabled, or hidden by readOnly.
    #[test]
    fn descriptions_name_only_the_tools_offered() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().display().to_string();
        let data = tmp.path().join("data");
        let all_renamed: serde_json::Map<String, Value> = tools::names()
            .into_iter()
            .map(|n| (n.to_owned(), json!({ "name": format!("x_{n}") })))
            .collect();
        let configs = [
            json!({}),
            json!({ "tools": { "delete_file": { "name": "remove_file" } } }),
            json!({ "tools": { "glob": { "enabled": false }, "restore_file": { "enabled": false } } }),
            json!({ "readOnly": true }),
            json!({ "tools": all_renamed }),
        ];
        for config in configs {
            let mut options = config.clone();
            options["root"] = json!(root);
            options["trash"] = json!({ "dataDir": data });
            let toolset = Toolset::new(&options).unwrap();
            let definitions = toolset.definitions();
            let offered: Vec<&str> = definitions
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d["name"].as_str().unwrap())
                .collect();
            for original in tools::names() {
                if offered.contains(&original) {
                    continue;
                }
                for (whose, text) in texts(&definitions) {
                    assert!(
                        !has_word(&text, original),
                        "{config}: {whose} names {original}, which is not offered: {text}"
                    );
                }
            }
        }
    }

    /// The Tomo rename, and the hints that depend on what is offered.
    #[test]
    fn descriptions_use_the_host_s_names() {
        let tmp = tempfile::tempdir().unwrap();
        let toolset = Toolset::new(&json!({
            "root": tmp.path(),
            "trash": { "dataDir": tmp.path().join("data") },
            "tools": { "delete_file": { "name": "remove_file" } },
        }))
        .unwrap();
        let definitions = toolset.definitions();
        let description = |name: &str| {
            definitions
                .as_array()
                .unwrap()
                .iter()
                .find(|d| d["name"] == name)
                .map(|d| d["description"].as_str().unwrap().to_owned())
                .unwrap()
        };
        assert!(
            description("remove_dir").contains("For a file use remove_file."),
            "{}",
            description("remove_dir")
        );
        assert!(description("remove_file").contains("For a directory use remove_dir."));
        assert!(description("trash_list").contains("(to pass to restore_file)"));
    }

    #[test]
    fn every_description_is_short_and_says_first_when_to_use_the_tool() {
        let tmp = tempfile::tempdir().unwrap();
        let toolset = Toolset::new(&json!({
            "root": tmp.path(),
            "trash": { "dataDir": tmp.path().join("data") },
        }))
        .unwrap();
        let mut wrong = Vec::new();
        for def in toolset.definitions().as_array().unwrap() {
            let text = def["description"].as_str().unwrap();
            // apply_patch shows the format it takes, which models need more than brevity.
            let max = if def["name"] == "apply_patch" {
                1200
            } else {
                800
            };
            if !(60..=max).contains(&text.len()) {
                wrong.push(format!("{}: {} bytes", def["name"], text.len()));
            }
            let first = text.split(". ").next().unwrap();
            if first.len() >= 160 {
                wrong.push(format!("{}: {first}", def["name"]));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}

#[cfg(test)]
mod hint_tests {
    use crate::tools::testing::TestWorkspace;
    use serde_json::json;

    /// Tomo calls delete_file remove_file: the messages pointing from one to the other use it.
    #[tokio::test]
    async fn hints_use_the_host_s_names() {
        let ws =
            TestWorkspace::with(json!({ "tools": { "delete_file": { "name": "remove_file" } } }));
        std::fs::write(ws.root.join("f.txt"), "x\n").unwrap();
        std::fs::create_dir(ws.root.join("d")).unwrap();
        let result = ws.call("remove_dir", json!({ "path": "f.txt" })).await;
        assert!(
            result
                .output
                .ends_with("f.txt is a file, use remove_file instead"),
            "{}",
            result.output
        );
        let result = ws.call("remove_file", json!({ "path": "d" })).await;
        assert!(
            result
                .output
                .ends_with("/d is a directory, use remove_dir instead"),
            "{}",
            result.output
        );
    }

    /// A hint never points at a tool the model cannot call: disabled, or hidden by readOnly.
    #[tokio::test]
    async fn hints_name_only_the_tools_offered() {
        let ws = TestWorkspace::with(json!({
            "tools": { "restore_file": { "enabled": false }, "glob": { "enabled": false }, "write_file": { "enabled": false } },
        }));
        std::fs::write(ws.root.join("f.txt"), "x\n").unwrap();
        let deleted = ws.call("delete_file", json!({ "path": "f.txt" })).await;
        assert_eq!(deleted.status, "ok", "{}", deleted.output);
        assert!(
            deleted.output.contains("\nIt is in the trash at "),
            "{}",
            deleted.output
        );
        assert!(!deleted.output.contains("restore"), "{}", deleted.output);
        let missing = ws
            .call("grep", json!({ "pattern": "x", "path": "nowhere" }))
            .await;
        assert!(
            missing
                .output
                .ends_with("check the path (list_directory can show what exists)"),
            "{}",
            missing.output
        );
        let edit =
            json!({ "path": "nowhere.txt", "edits": [{ "oldString": "a", "newString": "b" }] });
        let missing = ws.call("edit_file", edit).await;
        assert!(
            missing.output.ends_with("nowhere.txt; check the path"),
            "{}",
            missing.output
        );

        let ws = TestWorkspace::with(json!({ "readOnly": true }));
        std::fs::write(ws.root.join("latin1.txt"), b"caf\xe9\n").unwrap();
        let read = ws.call("read_file", json!({ "path": "latin1.txt" })).await;
        assert!(
            read.output.ends_with(
                "[Note: this file is not valid UTF-8; invalid bytes are shown as U+FFFD.]"
            ),
            "{}",
            read.output
        );
        let ws = TestWorkspace::new();
        std::fs::write(ws.root.join("latin1.txt"), b"caf\xe9\n").unwrap();
        let read = ws.call("read_file", json!({ "path": "latin1.txt" })).await;
        assert!(
            read.output
                .ends_with("U+FFFD, and edit_file will refuse to edit it.]"),
            "{}",
            read.output
        );
    }
}

#[cfg(test)]
mod argument_tests {
    use crate::error::ErrorCode;
    use crate::tools::testing::TestWorkspace;
    use serde_json::json;

    /// The arguments are checked before anything else: in a read-only workspace a write with
    /// bad arguments is told about its arguments; with good ones, that it cannot write.
    #[tokio::test]
    async fn arguments_are_checked_before_read_only() {
        let ws = TestWorkspace::with(
            json!({ "readOnly": true, "tools": { "write_file": { "name": "save" } } }),
        );
        let bad = ws.call("save", json!({ "path": 5 })).await;
        assert_eq!(
            bad.code,
            Some(ErrorCode::InvalidArguments),
            "{}",
            bad.output
        );
        assert!(
            bad.output
                .starts_with("save: invalid arguments: path: must be a string, got the integer 5"),
            "{}",
            bad.output
        );
        let empty = ws.call("save", json!({ "path": "", "content": "x" })).await;
        assert_eq!(
            empty.code,
            Some(ErrorCode::InvalidArguments),
            "{}",
            empty.output
        );
        let good = ws
            .call("save", json!({ "path": "a.txt", "content": "x" }))
            .await;
        assert_eq!(good.code, Some(ErrorCode::ReadOnly), "{}", good.output);
        assert!(!ws.root.join("a.txt").exists());
    }

    /// `null` for an optional argument is "not given" (../docs/hosts.md#the-workspace-api): what a model held to strict
    /// function calling sends for every argument it leaves out. A null required one is refused.
    #[tokio::test]
    async fn null_is_not_given_for_every_optional_argument() {
        let ws = TestWorkspace::new();
        std::fs::write(ws.root.join("a.txt"), "one\ntwo\n").unwrap();
        let read =
            json!({ "path": "a.txt", "startLine": null, "endLine": null, "startColumn": null });
        let result = ws.call("read_file", read).await;
        assert_eq!(result.status, "ok", "{}", result.output);
        let edit = json!({ "path": "a.txt", "edits": [{ "oldString": "one", "newString": "1", "replaceAll": null }] });
        let result = ws.call("edit_file", edit).await;
        assert_eq!(result.status, "ok", "{}", result.output);
        let listed = json!({ "path": null, "recursive": null, "includeIgnored": null });
        assert_eq!(ws.call("list_directory", listed).await.status, "ok");
        let grep = json!({ "pattern": "1", "path": null, "include": null, "caseInsensitive": null,
            "contextLines": null, "maxMatches": null, "includeIgnored": null });
        let found = ws.call("grep", grep).await;
        assert_eq!(found.status, "ok", "{}", found.output);
        assert_eq!(
            ws.toolset
                .format_call("read_file", &json!({ "path": "a.txt", "startLine": null })),
            "a.txt"
        );
        let required = ws.call("read_file", json!({ "path": null })).await;
        assert_eq!(
            required.output,
            "read_file: invalid arguments: path: must be a string, got null"
        );
    }

    /// A host's bad `ctx.permissions` is named for the host, not reported to the model.
    #[test]
    fn bad_call_permissions_name_the_key() {
        let ws = TestWorkspace::new();
        let e = ws
            .toolset
            .call_permissions(&json!({ "cwdWrite": true }))
            .unwrap_err();
        assert!(
            e.0.starts_with("ctx.permissions.cwdWrite: unknown permission"),
            "{e}"
        );
        let e = ws
            .toolset
            .call_permissions(&json!({ "cwdWriteFile": "yes" }))
            .unwrap_err();
        assert_eq!(e.0, "ctx.permissions.cwdWriteFile: must be a boolean");
        let p = ws
            .toolset
            .call_permissions(&json!({ "cwdReadFile": false }))
            .unwrap();
        assert!(
            !p.cwd_read_file && p.cwd_write_file,
            "merged over the workspace's: {p:?}"
        );
    }
}
