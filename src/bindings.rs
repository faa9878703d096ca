//! The only Node-API code: `NativeWorkspace`, a thin JSON-in/JSON-out wrapper around
//! [`Toolset`] that the TypeScript `Workspace` class wraps. Nothing is decided here.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use serde_json::Value;

use crate::call::{CallContext, ToolResult};
use crate::cancel::CancelToken;
use crate::confirm::{Answer, ConfirmRequest, Confirmer};
use crate::dispatch::{Checked, Toolset};
use crate::error::ToolError;
use crate::permissions::Permissions;
use crate::progress::{Progress, Sink, Update};

/// A JS confirm function: takes the request as JSON, returns a Promise of a boolean that never
/// rejects (the JS wrapper maps throw, rejection and non-booleans to `false`).
type ConfirmFn = ThreadsafeFunction<String, Promise<bool>, String, Status, false>;

struct JsConfirmer(Arc<ConfirmFn>);

impl Confirmer for JsConfirmer {
    fn ask(&self, request: ConfirmRequest) -> Answer {
        let function = self.0.clone();
        Box::pin(async move {
            let Ok(json) = serde_json::to_string(&request) else {
                return false;
            };
            match function.call_async_catch(json).await {
                Ok(promise) => promise.await.unwrap_or(false),
                Err(_) => false,
            }
        })
    }
}

/// A JS progress function: takes an update as JSON, returns nothing (the JS wrapper never
/// throws). Weak: a pending update does not keep Node alive.
type ProgressFn = ThreadsafeFunction<String, Unknown<'static>, String, Status, false, true>;

struct JsProgress(ProgressFn);

impl JsProgress {
    /// Resolves once every update queued before it has reached JS: the queue is first in, first
    /// out, so an empty message (which the JS side ignores) is answered after all of them. The
    /// call's result waits for this, so no update is dropped for arriving after it.
    async fn delivered(&self) {
        let (done, answered) = tokio::sync::oneshot::channel();
        let status = self.0.call_with_return_value(
            String::new(),
            ThreadsafeFunctionCallMode::NonBlocking,
            move |_, _| {
                let _ = done.send(());
                Ok(())
            },
        );
        if status == Status::Ok {
            let _ = answered.await;
        }
    }
}

impl Sink for JsProgress {
    fn report(&self, update: Update) {
        if let Ok(json) = serde_json::to_string(&update) {
            // Queued for the JS thread; never waits for it (a full queue or a closing
            // function drops the update: the next one says more anyway).
            self.0.call(json, ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
}

fn parse_json(text: &str, what: &str) -> Result<Value> {
    serde_json::from_str(text)
        .map_err(|e| Error::new(Status::InvalidArg, format!("{what}: invalid JSON: {e}")))
}

/// The native workspace. Use the `Workspace` class of the package, not this.
#[napi]
pub struct NativeWorkspace {
    inner: Toolset,
    aborts: Arc<Mutex<HashMap<u32, CancelToken>>>,
}

impl NativeWorkspace {
    fn token(&self, call_id: u32) -> CancelToken {
        let mut aborts = self.aborts.lock().unwrap_or_else(|e| e.into_inner());
        aborts.entry(call_id).or_default().clone()
    }

    /// The call is over: its abort token goes.
    fn forget(&self, call_id: u32) {
        self.aborts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&call_id);
    }

    /// A host's `ctx.permissions`, merged over the workspace's. A bad one is the host's bug: a
    /// rejection (a TypeError in the package), checked before anything else.
    fn call_permissions(&self, json: Option<&str>) -> Result<Option<Permissions>> {
        json.map(|p| {
            let partial = parse_json(p, "ctx.permissions")?;
            self.inner
                .call_permissions(&partial)
                .map_err(|e| Error::new(Status::InvalidArg, e.0))
        })
        .transpose()
    }

    /// The call's arguments. The package sends well-formed JSON; what can still fail here is
    /// nesting deeper than the parser's limit (128 levels), i.e. hostile arguments: the result
    /// for the model (and the call is over), never a throw.
    fn arguments(
        &self,
        call_id: u32,
        name: &str,
        json: &str,
        strings: Option<HashMap<String, String>>,
    ) -> std::result::Result<Value, ToolError> {
        let unreadable = |why: String| {
            self.forget(call_id);
            ToolError::invalid(format!(
                "{name}: invalid arguments: they cannot be read ({why}); pass a flat JSON object of the tool's arguments"
            ))
        };
        let mut args =
            serde_json::from_str::<Value>(json).map_err(|e| unreadable(e.to_string()))?;
        if let Some(strings) = strings {
            let Value::Object(object) = &mut args else {
                return Err(unreadable(
                    "strings given beside arguments that are not an object".into(),
                ));
            };
            object.extend(
                strings
                    .into_iter()
                    .map(|(key, text)| (key, Value::String(text))),
            );
        }
        Ok(args)
    }
}

fn to_json(value: &impl serde::Serialize) -> Result<String> {
    serde_json::to_string(value).map_err(|e| Error::from_reason(e.to_string()))
}

/// A tool's result for the JS layer: its JSON, and a long `diff` passed as itself beside it,
/// the JSON keeping the key, empty, where the package puts it back (so the keys keep their
/// order). Escaping a diff of short lines into JSON and `JSON.parse` reading it back cost
/// ~2 ms a MB each; a string passed as itself is copied once.
#[napi(object)]
pub struct NativeResult {
    pub json: String,
    pub diff: Option<String>,
}

/// A diff of at least this many bytes goes beside the JSON.
const DIFF_BESIDE_FROM: usize = 16 * 1024;

fn to_native(mut result: ToolResult) -> Result<NativeResult> {
    let diff = result
        .diff
        .as_mut()
        .filter(|diff| diff.len() >= DIFF_BESIDE_FROM)
        .map(std::mem::take);
    Ok(NativeResult {
        json: to_json(&result)?,
        diff,
    })
}

#[napi]
impl NativeWorkspace {
    /// Throws an `InvalidArg` error whose message names the bad option.
    #[napi(constructor)]
    pub fn new(options_json: String) -> Result<Self> {
        let options = parse_json(&options_json, "options")?;
        let inner = Toolset::new(&options).map_err(|e| Error::new(Status::InvalidArg, e.0))?;
        Ok(Self {
            inner,
            aborts: Arc::default(),
        })
    }

    /// Checks options as the constructor does, without making a workspace (no crash recovery
    /// starts): throws an `InvalidArg` error whose message names the bad option.
    #[napi]
    pub fn check_options(options_json: String) -> Result<()> {
        let options = parse_json(&options_json, "options")?;
        Toolset::check_options(&options).map_err(|e| Error::new(Status::InvalidArg, e.0))
    }

    /// JSON of the enabled tools' definitions.
    #[napi]
    pub fn definitions(&self) -> String {
        self.inner.definitions().to_string()
    }

    /// Runs a tool call; resolves to a ToolResult (see [`NativeResult`]). `argsStrings`:
    /// top-level string arguments passed beside `argsJson` as themselves (a long patch or
    /// content, which JSON would escape and unescape character by character). `answering`: the
    /// ids of the calls whose confirm handlers made this call, outermost first; `progress`:
    /// called with the JSON of `{ done, total?, unit }` as long operations go (at most 10 times
    /// a second).
    #[napi(
        ts_args_type = "callId: number, name: string, argsJson: string, argsStrings: Record<string, string> | null, permissionsJson: string | null, confirm: ((requestJson: string) => Promise<boolean>) | null, answering: number[] | null, progress: ((updateJson: string) => void) | null"
    )]
    // The arguments are the JS contract (`NativeWorkspaceContract.call`), one per concern.
    #[allow(clippy::too_many_arguments)]
    pub async fn call(
        &self,
        call_id: u32,
        name: String,
        args_json: String,
        args_strings: Option<HashMap<String, String>>,
        permissions_json: Option<String>,
        confirm: Option<ConfirmFn>,
        answering: Option<Vec<u32>>,
        progress: Option<ProgressFn>,
    ) -> Result<NativeResult> {
        let permissions = self.call_permissions(permissions_json.as_deref())?;
        let cancel = self.token(call_id);
        let args = match self.arguments(call_id, &name, &args_json, args_strings) {
            Ok(args) => args,
            Err(unreadable) => return to_native(ToolResult::error(unreadable)),
        };
        let progress = progress.map(|f| Arc::new(JsProgress(f)));
        let ctx = CallContext {
            confirmer: confirm.map(|f| Arc::new(JsConfirmer(Arc::new(f))) as Arc<dyn Confirmer>),
            permissions,
            cancel,
            id: Some(call_id),
            answering: answering.unwrap_or_default(),
            progress: progress.clone().map_or_else(Progress::default, |sink| {
                Progress::to(sink as Arc<dyn Sink>)
            }),
            check: None,
        };
        let result = self.inner.call(&name, args, ctx).await;
        if let Some(progress) = progress {
            progress.delivered().await;
        }
        self.forget(call_id);
        to_native(result)
    }

    /// What a call would do about asking the user, without doing it: resolves to the JSON of
    /// `{ decision: "allow" }`, `{ decision: "ask", request }` or `{ decision: "fail", result }`.
    #[napi(
        ts_args_type = "callId: number, name: string, argsJson: string, permissionsJson: string | null"
    )]
    pub async fn check(
        &self,
        call_id: u32,
        name: String,
        args_json: String,
        permissions_json: Option<String>,
    ) -> Result<String> {
        let permissions = self.call_permissions(permissions_json.as_deref())?;
        let cancel = self.token(call_id);
        let args = match self.arguments(call_id, &name, &args_json, None) {
            Ok(args) => args,
            Err(unreadable) => {
                return to_json(&Checked::Fail(ToolResult::error(unreadable)).to_json())
            }
        };
        let ctx = CallContext {
            permissions,
            cancel,
            id: Some(call_id),
            ..CallContext::default()
        };
        let checked = self.inner.check(&name, args, ctx).await;
        self.forget(call_id);
        to_json(&checked.to_json())
    }

    /// Aborts call `callId` (before, during or after it runs).
    #[napi]
    pub fn abort(&self, call_id: u32) {
        self.token(call_id).abort();
    }

    /// The one-line header of a call.
    #[napi]
    pub fn format_call(&self, name: String, args_json: String) -> String {
        let args = serde_json::from_str(&args_json).unwrap_or(Value::Null);
        self.inner.format_call(&name, &args)
    }

    /// JSON of this workspace's trash entries, newest first.
    #[napi]
    pub async fn trash_list(&self) -> Result<String> {
        let entries = self
            .inner
            .trash_list()
            .await
            .map_err(|e| Error::from_reason(e.message))?;
        Ok(entries.to_string())
    }

    /// Removes archives older than `olderThanMs` (all when null); JSON `{ cleared, bytesFreed }`.
    #[napi]
    pub async fn trash_clear(&self, older_than_ms: Option<f64>) -> Result<String> {
        let older = older_than_ms
            .filter(|ms| ms.is_finite() && *ms >= 0.0)
            .map(|ms| std::time::Duration::from_millis(ms as u64));
        let stats = self
            .inner
            .trash_clear(older)
            .await
            .map_err(|e| Error::from_reason(e.message))?;
        Ok(stats.to_string())
    }

    /// JSON of the history (`Change[]`, ../docs/history-and-undo.md), newest first.
    #[napi]
    pub async fn history(&self, limit: Option<u32>, session_id: Option<String>) -> Result<String> {
        self.inner
            .history(limit.map(|l| l as usize), session_id)
            .await
            .map_err(|e| Error::from_reason(e.message))
    }

    /// Takes back changes (../docs/history-and-undo.md); resolves to a ToolResult (see
    /// [`NativeResult`]). `requestJson`:
    /// `{ id?, sessionId?, dryRun? }`.
    #[napi(
        ts_args_type = "callId: number, requestJson: string, confirm: ((requestJson: string) => Promise<boolean>) | null, progress: ((updateJson: string) => void) | null"
    )]
    pub async fn undo(
        &self,
        call_id: u32,
        request_json: String,
        confirm: Option<ConfirmFn>,
        progress: Option<ProgressFn>,
    ) -> Result<NativeResult> {
        let request = parse_json(&request_json, "undo options")?;
        let text = |key: &str| request.get(key).and_then(Value::as_str).map(str::to_owned);
        let request = crate::undo::UndoRequest {
            selector: crate::undo::Selector {
                id: text("id"),
                session_id: text("sessionId"),
            },
            dry_run: request
                .get("dryRun")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        };
        let progress = progress.map(|f| Arc::new(JsProgress(f)));
        let ctx = CallContext {
            confirmer: confirm.map(|f| Arc::new(JsConfirmer(Arc::new(f))) as Arc<dyn Confirmer>),
            permissions: None,
            cancel: self.token(call_id),
            id: Some(call_id),
            answering: Vec::new(),
            progress: progress.clone().map_or_else(Progress::default, |sink| {
                Progress::to(sink as Arc<dyn Sink>)
            }),
            check: None,
        };
        let result = self.inner.undo(request, ctx).await;
        if let Some(progress) = progress {
            progress.delivered().await;
        }
        self.forget(call_id);
        to_native(result)
    }

    /// JSON `{ cwd, projectRoot, depth }`.
    #[napi]
    pub fn cwd(&self) -> String {
        let info = self.inner.workspace().cwd_snapshot();
        serde_json::json!({
            "cwd": info.cwd.display().to_string(),
            "projectRoot": info.project_root.display().to_string(),
            "depth": info.depth,
        })
        .to_string()
    }
}
