//! The `ToolResult` of a call: what it made, with its change's id, every output bounded.

use serde_json::Value;

use super::toolset::Toolset;
use crate::call::{Failure, Outcome, Recorded, ToolResult};

impl Toolset {
    /// The result of a call; a change it made is in the history already (../../docs/history-and-undo.md:
    /// recorded with its journaled commit, an undo too, even when nothing on disk had to move),
    /// and its id goes in `data.changeId`. Every output is bounded ([`bounded_result`]).
    pub(super) fn result(&self, outcome: Outcome) -> ToolResult {
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
}

/// How much larger than the model's output (`readMaxBytes`) `ToolResult.diff`, which is for a UI,
/// may be: 16 times, 1 MiB at the default limit.
pub const DIFF_MAX_FACTOR: usize = 16;

/// Room above `readMaxBytes` for the notes a tool ends its own bounded output with.
const OUTPUT_SLACK: usize = 1024;

/// Every output bounded in bytes (../../docs/tools.md#bounded-outputs). Each tool bounds its own output near `max`
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
