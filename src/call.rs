//! The one flow every tool call goes through, and the primitives a tool composes:
//! resolve → lock → plan (off the JS thread) → authorize (permissions, confirm, timeout, abort)
//! → commit. Each tool file reads top to bottom as that story; this file holds the shared parts.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::cancel::CancelToken;
use crate::change::FileChange;
use crate::confirm::{ConfirmRequest, Confirmer};
use crate::error::{ErrorCode, ToolError};
use crate::locks::{Asker, ChangeGuard, ReadGuard};
use crate::options::Limits;
use crate::paths::canonical::Canonical;
use crate::paths::sandbox::FinalLink;
use crate::paths::shown::Shown;
use crate::paths::Target;
use crate::permissions::{Operation, Permissions};
use crate::workspace::Workspace;

fn owned(paths: &[&Path]) -> Vec<PathBuf> {
    paths.iter().map(|p| p.to_path_buf()).collect()
}

/// What the host passes with one call (SPEC §2 `CallContext`).
#[derive(Clone, Default)]
pub struct CallContext {
    pub confirmer: Option<Arc<dyn Confirmer>>,
    /// This call's permissions, when the host overrides the workspace's
    /// ([`crate::dispatch::Toolset::call_permissions`] merges a partial object).
    pub permissions: Option<Permissions>,
    pub cancel: CancelToken,
    /// The host's id for this call.
    pub id: Option<u32>,
    /// The calls whose confirm handlers made this call, outermost first.
    pub answering: Vec<u32>,
}

/// A finished call as the host sees it (SPEC §2 `ToolResult`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ToolResult {
    pub status: &'static str,
    pub output: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<ErrorCode>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Map<String, Value>>,
}

impl ToolResult {
    pub fn error(error: ToolError) -> Self {
        Self {
            status: "error",
            output: error.message,
            code: Some(error.code),
            diff: None,
            data: None,
        }
    }
}

/// What a successful tool run produced: the result for the host and the model, and the change
/// it made (empty for a tool that changed nothing), which the audit log and the history record.
#[derive(Debug, Clone, Default)]
pub struct Success {
    pub output: String,
    pub diff: Option<String>,
    pub data: Map<String, Value>,
    pub changes: Vec<FileChange>,
}

impl Success {
    pub fn text(output: impl Into<String>) -> Self {
        Self {
            output: output.into(),
            ..Self::default()
        }
    }

    pub fn with_data(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.data.insert(key.to_owned(), value.into());
        self
    }

    /// Records that the call changed `change.path` as `change` says.
    pub fn with_change(mut self, change: FileChange) -> Self {
        self.changes.push(change);
        self
    }
}

/// The tools a workspace offers, by their original names, with the names the host gave them:
/// what a tool's messages use when they point the model at another tool.
#[derive(Debug, Clone, Default)]
pub struct ToolNames {
    /// (original name, exposed name, offered: enabled and not hidden by `readOnly`).
    tools: Vec<(&'static str, String, bool)>,
}

impl ToolNames {
    pub fn new(tools: Vec<(&'static str, String, bool)>) -> Self {
        Self { tools }
    }

    /// The host's name for the tool originally called `original` (itself when not renamed).
    pub fn exposed(&self, original: &str) -> String {
        self.tools
            .iter()
            .find(|(name, _, _)| *name == original)
            .map_or_else(|| original.to_owned(), |(_, exposed, _)| exposed.clone())
    }

    /// The host's name for `original`, if this workspace offers that tool.
    pub fn offered(&self, original: &str) -> Option<&str> {
        self.tools
            .iter()
            .find(|(name, _, offered)| *name == original && *offered)
            .map(|(_, exposed, _)| exposed.as_str())
    }

    /// `text(name)` with the host's name for `original` when this workspace offers that tool,
    /// else nothing: a hint that points the model at another tool only when it can call it.
    pub fn hint(&self, original: &str, text: impl FnOnce(&str) -> String) -> String {
        self.offered(original).map(text).unwrap_or_default()
    }
}

/// Why a call did not succeed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    Error(ToolError),
    Denied(String),
}

impl From<ToolError> for Failure {
    fn from(e: ToolError) -> Self {
        Failure::Error(e)
    }
}

pub type Outcome = Result<Success, Failure>;
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The permission question for one call.
pub struct Authorization<'a> {
    /// Every (operation, inside-root) pair the call needs; all must be granted to skip the prompt.
    pub needs: Vec<(Operation, bool)>,
    /// Ask whatever the permissions say (irreversible actions).
    pub always_ask: bool,
    pub label: &'static str,
    pub path: &'a Path,
    pub detail: String,
    pub diff: Option<String>,
    pub recursive: Option<bool>,
    pub permanent: Option<bool>,
    /// E.g. `The user denied this write.`
    pub denial: &'static str,
}

impl<'a> Authorization<'a> {
    /// The common question: one operation on one checked path, the path as the detail, no
    /// flags, granted by the permissions when they allow it. Override fields with `..` syntax.
    pub fn of(
        op: Operation,
        target: &'a Target,
        label: &'static str,
        denial: &'static str,
    ) -> Self {
        Self {
            needs: vec![(op, target.inside_root)],
            always_ask: false,
            label,
            path: &target.path,
            detail: target.path.shown().into_owned(),
            diff: None,
            recursive: None,
            permanent: None,
            denial,
        }
    }
}

/// Whether an aborted call may be given up on at once, shared by the call and the dispatcher
/// running it: yes until the call starts to change something ([`Call::begin_change`], which
/// [`Call::blocking`] does), never after. Given up on, a call starts no such work: what it reports (`ABORTED`, nothing changed)
/// stays true, even though a thread of it may still be stuck in a read ([`Call::reading`]).
#[derive(Debug, Default)]
pub struct AbortGate(AtomicU8);

/// [`AbortGate`] states.
const NOTHING_CHANGED_YET: u8 = 0;
const MAY_CHANGE: u8 = 1;
const GIVEN_UP: u8 = 2;

impl AbortGate {
    /// Work that may change files starts: `false` once the call was given up on.
    fn may_change(&self) -> bool {
        let swapped = self.0.compare_exchange(
            NOTHING_CHANGED_YET,
            MAY_CHANGE,
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
        matches!(swapped, Ok(_) | Err(MAY_CHANGE))
    }

    /// Gives up on the call: `true` unless it has started work that may change files (then
    /// its own abort checks decide, and the caller waits for its result).
    pub fn give_up(&self) -> bool {
        let swapped = self.0.compare_exchange(
            NOTHING_CHANGED_YET,
            GIVEN_UP,
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
        matches!(swapped, Ok(_) | Err(GIVEN_UP))
    }
}

/// One running call: the workspace, the exposed tool name, this call's permissions, its
/// confirmer and its abort token.
pub struct Call {
    pub ws: Arc<Workspace>,
    pub tool_name: String,
    /// The names of the tools this workspace offers.
    pub names: Arc<ToolNames>,
    pub permissions: Permissions,
    pub confirmer: Option<Arc<dyn Confirmer>>,
    pub cancel: CancelToken,
    cwd: PathBuf,
    id: Option<u32>,
    answering: Vec<u32>,
    gate: Arc<AbortGate>,
}

impl Call {
    pub fn new(
        ws: Arc<Workspace>,
        tool_name: String,
        names: Arc<ToolNames>,
        permissions: Permissions,
        ctx: CallContext,
    ) -> Self {
        let cwd = ws.cwd_snapshot().cwd;
        Self {
            ws,
            tool_name,
            names,
            permissions,
            confirmer: ctx.confirmer,
            cancel: ctx.cancel,
            cwd,
            id: ctx.id,
            answering: ctx.answering,
            gate: Arc::default(),
        }
    }

    /// Whether this call may be given up on when aborted (see [`AbortGate`]).
    pub fn abort_gate(&self) -> Arc<AbortGate> {
        self.gate.clone()
    }

    pub fn limits(&self) -> &Limits {
        &self.ws.options().limits
    }

    /// The workspace cwd at the start of this call.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// Resolves and sandbox-checks the model's path argument `field`.
    pub fn resolve(
        &self,
        raw: &str,
        field: &str,
        final_link: FinalLink,
    ) -> Result<Target, ToolError> {
        self.ws
            .sandbox()
            .resolve(raw, field, &self.cwd, self.ws.home(), final_link)
    }

    /// The canonical form of the model's path argument `field`, before the sandbox check (for
    /// tools that must refuse some paths with their own code first).
    pub fn canonical(
        &self,
        raw: &str,
        field: &str,
        final_link: FinalLink,
    ) -> Result<Canonical, ToolError> {
        self.ws
            .sandbox()
            .canonicalize(raw, field, &self.cwd, self.ws.home(), final_link)
    }

    /// Locks `paths` for a change, from its plan through its prompt: other changes of these
    /// paths wait, reads go on. Upgrade it with `exclusive()` after `authorize`, before the
    /// commit (see `locks`). `CONFLICT` at once for a change made from the confirm handler of a
    /// change of the same paths, which would wait for its own answer.
    pub async fn lock_for_change(&self, paths: &[&Path]) -> Result<ChangeGuard<'_>, ToolError> {
        let asker = Asker {
            call: self.id,
            answering: &self.answering,
        };
        self.ws
            .locks()
            .change(owned(paths), asker)
            .await
            .map_err(|_| {
                let path = paths.first().map(|p| p.shown().into_owned());
                ToolError::new(
                    ErrorCode::Conflict,
                    format!(
                        "{} is being changed by the call whose confirmation this call was made from, so this change would wait for that answer forever. Make it after answering.",
                        path.unwrap_or_default()
                    ),
                )
            })
    }

    /// Locks `paths` for reading: waits only for commits. Take it after `authorize`, never
    /// across a prompt (see `locks`).
    pub async fn lock_for_read(&self, paths: &[&Path]) -> ReadGuard<'_> {
        self.ws.locks().read(owned(paths)).await
    }

    /// Runs blocking filesystem work that may change files on tokio's blocking pool, never on
    /// the JS thread, and waits for it whatever happens: an abort is for the work itself to
    /// check at its safe points. From here on the call is not given up on ([`AbortGate`]).
    pub async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
    ) -> Result<T, ToolError> {
        self.begin_change()?;
        tokio::task::spawn_blocking(work)
            .await
            .unwrap_or_else(internal_error)
    }

    /// The call is about to change something (files, the workspace's cwd stack): from here on
    /// it is not given up on when aborted ([`AbortGate`]); `ABORTED` if it already was.
    /// [`Call::blocking`] does this itself.
    pub fn begin_change(&self) -> Result<(), ToolError> {
        if self.gate.may_change() {
            Ok(())
        } else {
            Err(ToolError::aborted())
        }
    }

    /// Runs blocking filesystem work that changes nothing (a read, a listing, a plan) on
    /// tokio's blocking pool. An abort ends the wait at once with `ABORTED`: a read stuck in
    /// the kernel (a hung NFS or FUSE file system) cannot be interrupted, so its thread is left
    /// to finish on its own, holding no lock, and its result is dropped.
    pub async fn reading<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
    ) -> Result<T, ToolError> {
        let task = tokio::task::spawn_blocking(work);
        tokio::select! {
            joined = task => joined.unwrap_or_else(internal_error),
            () = self.cancel.aborted() => Err(ToolError::aborted()),
        }
    }

    pub fn check_abort(&self) -> Result<(), ToolError> {
        if self.cancel.is_aborted() {
            Err(ToolError::aborted())
        } else {
            Ok(())
        }
    }

    /// Whether the permissions grant `auth` without asking.
    pub fn is_granted(&self, auth: &Authorization<'_>) -> bool {
        !auth.always_ask
            && auth
                .needs
                .iter()
                .all(|(op, inside)| self.permissions.grants(*op, *inside))
    }

    /// Grants or asks. Granted permissions skip the prompt unless `always_ask`; otherwise the
    /// confirmer is asked once; no confirmer, a "no", or a timeout deny; an abort while waiting
    /// is `ABORTED`.
    pub async fn authorize(&self, auth: Authorization<'_>) -> Result<(), Failure> {
        self.check_abort()?;
        if self.is_granted(&auth) {
            return Ok(());
        }
        let Some(confirmer) = self.confirmer.clone() else {
            return Err(Failure::Denied(format!(
                "{} No confirmation handler is available to approve it.",
                auth.denial
            )));
        };
        let request = ConfirmRequest {
            tool: self.tool_name.clone(),
            label: auth.label.to_owned(),
            path: auth.path.shown().into_owned(),
            detail: auth.detail,
            diff: auth.diff,
            recursive: auth.recursive,
            permanent: auth.permanent,
        };
        let timeout_ms = self.ws.options().confirm_timeout_ms;
        let timeout = async {
            if timeout_ms == 0 {
                std::future::pending::<()>().await
            } else {
                tokio::time::sleep(Duration::from_millis(timeout_ms)).await
            }
        };
        let answer = tokio::select! {
            yes = confirmer.ask(request) => yes,
            _ = self.cancel.aborted() => return Err(ToolError::aborted().into()),
            _ = timeout => {
                return Err(Failure::Denied(format!(
                    "{} (No answer within {timeout_ms} ms.)",
                    auth.denial
                )))
            }
        };
        self.check_abort()?;
        if answer {
            Ok(())
        } else {
            Err(Failure::Denied(auth.denial.to_owned()))
        }
    }
}

/// A blocking task that panicked or was cancelled, as a tool error.
fn internal_error<T>(e: tokio::task::JoinError) -> Result<T, ToolError> {
    Err(ToolError::new(
        ErrorCode::IoError,
        format!("internal error while working on the file system: {e}"),
    ))
}

#[cfg(test)]
mod tests {
    use super::AbortGate;

    /// A call is given up on only before it starts to change something, and once given up on
    /// it starts nothing that changes files.
    #[test]
    fn a_call_is_given_up_on_only_before_it_changes_anything() {
        let gate = AbortGate::default();
        assert!(gate.give_up() && gate.give_up());
        assert!(!gate.may_change());
        let gate = AbortGate::default();
        assert!(gate.may_change() && gate.may_change());
        assert!(!gate.give_up());
    }
}
