//! The history and undo, as the host calls them (`ws.history()`, `ws.undo()`): the host's
//! calls, not the model's.

use super::running::catch_panics;
use super::toolset::Toolset;
use crate::call::{BoxFuture, Call, CallContext, Failure, ToolResult};
use crate::error::{ErrorCode, ToolError};
use crate::undo::{self, UndoRequest};

impl Toolset {
    /// The history, newest first (`ws.history()`, ../../docs/history-and-undo.md).
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

    /// Takes back changes (`ws.undo()`, ../../docs/history-and-undo.md): the host's call, not the model's. Asks the
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
}
