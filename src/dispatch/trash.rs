//! The trash, as the host reads and clears it (`ws.trashList()`, `ws.trashClear()`).

use serde_json::{json, Value};

use super::toolset::Toolset;
use crate::error::{ErrorCode, ToolError};
use crate::tools;

impl Toolset {
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
            // What takes edits back is bounded by the trash too (../../docs/history-and-undo.md).
            ws.history().clear_deltas(older_than).map_err(|e| {
                ToolError::io(&e, "clear the history's deltas in", ws.data_dir().path())
            })?;
            Ok(json!({ "cleared": stats.cleared, "bytesFreed": stats.bytes_freed }))
        })
        .await
        .unwrap_or_else(|e| Err(ToolError::new(ErrorCode::IoError, e.to_string())))
    }
}
