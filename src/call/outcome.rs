//! What a call ends with: the result the host sees, a denial, a success and the change it
//! recorded, or why it did not succeed.

use std::future::Future;
use std::pin::Pin;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::change::FileChange;
use crate::error::{ErrorCode, ToolError};

/// A finished call as the host sees it (`ToolResult`, ../../docs/hosts.md#the-workspace-api).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    pub status: &'static str,
    pub output: String,
    /// Why it failed (`status` is `error`).
    pub code: Option<ErrorCode>,
    /// Why it was denied (`status` is `denied`); the host reads it as `code` too.
    pub denial: Option<DenialCode>,
    pub diff: Option<String>,
    pub data: Option<Map<String, Value>>,
}

impl Serialize for ToolResult {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("status", self.status)?;
        map.serialize_entry("output", &self.output)?;
        if let Some(code) = &self.code {
            map.serialize_entry("code", code)?;
        } else if let Some(denial) = &self.denial {
            map.serialize_entry("code", denial)?;
        }
        if let Some(diff) = &self.diff {
            map.serialize_entry("diff", diff)?;
        }
        if let Some(data) = &self.data {
            map.serialize_entry("data", data)?;
        }
        map.end()
    }
}

impl ToolResult {
    pub fn error(error: ToolError) -> Self {
        Self {
            status: "error",
            output: error.message,
            code: Some(error.code),
            denial: None,
            diff: None,
            data: None,
        }
    }

    /// A denied result; one nobody could be asked for carries the permission keys that would
    /// let it run without asking (`data.grant`, empty when it always asks).
    pub fn denied(denial: Denial) -> Self {
        let data = (denial.code == DenialCode::NoConfirmHandler).then(|| {
            let mut data = Map::new();
            data.insert("grant".to_owned(), Value::from(denial.grant));
            data
        });
        Self {
            status: "denied",
            output: denial.message,
            code: None,
            denial: Some(denial.code),
            diff: None,
            data,
        }
    }
}

/// What the model is told to do after any denial, following the documented denial text: the user's
/// "no" (or its absence) is an answer, not an obstacle.
pub const DENIED_NEXT: &str =
    "Do not retry it or work around it (with another tool or path); ask the user what to do instead.";

/// Why a call was denied: the `code` of a `denied` result. Nothing changed in any case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum DenialCode {
    /// The user was asked and said no (or the confirm handler failed, which counts as no).
    UserDenied,
    /// The user was asked and gave no answer within `confirmTimeoutMs`.
    ConfirmTimeout,
    /// The call needed the user's approval and no one could be asked: no confirm handler (an
    /// MCP client without elicitation). The host must grant the permission or give a handler.
    NoConfirmHandler,
}

/// A denial: its code and the text for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denial {
    pub code: DenialCode,
    pub message: String,
    /// For [`DenialCode::NoConfirmHandler`]: the permission keys that would allow the call
    /// without asking (none when it always asks).
    pub grant: Vec<&'static str>,
}

impl Denial {
    pub(super) fn new(code: DenialCode, message: String) -> Self {
        Self {
            code,
            message,
            grant: Vec::new(),
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
    /// Whether the change is in the history (its id then goes in `data.changeId`).
    pub recorded: Recorded,
}

/// Whether a call's change is in the history: every change is recorded with its journaled
/// commit ([`commit_recorded`](super::commit_recorded)), an undo too, even when nothing on disk had to move.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Recorded {
    /// In the history as `id`.
    Written { id: String },
    /// Not recorded now: there was nothing to record (a call that changed nothing), or the log
    /// could not be appended to (the next `Workspace`'s recovery appends it).
    #[default]
    Not,
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

/// Why a call did not succeed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    Error(ToolError),
    Denied(Denial),
}

impl From<ToolError> for Failure {
    fn from(e: ToolError) -> Self {
        Failure::Error(e)
    }
}

pub type Outcome = Result<Success, Failure>;
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
