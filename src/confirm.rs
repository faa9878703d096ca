//! Asking the user: the request a host's confirm handler receives (SPEC §2 `ConfirmRequest`)
//! and the trait the bindings implement to route it to JavaScript.

use std::future::Future;
use std::pin::Pin;

use serde::Serialize;

/// What the user is asked to approve.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfirmRequest {
    /// The tool's name as the host exposes it.
    pub tool: String,
    /// E.g. `Edit file?`.
    pub label: String,
    /// The absolute path acted on.
    pub path: String,
    /// The absolute path, plus ` (recursive)`, ` (permanent)` or ` → <destination>`.
    pub detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recursive: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permanent: Option<bool>,
}

/// A boxed answer: `true` only for an explicit yes.
pub type Answer = Pin<Box<dyn Future<Output = bool> + Send>>;

/// Something that can ask the user. Any failure to get an answer must resolve to `false`.
pub trait Confirmer: Send + Sync {
    fn ask(&self, request: ConfirmRequest) -> Answer;
}
