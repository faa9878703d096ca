//! The flow every tool call goes through, once, above the tools (../docs/hosts.md#the-workspace-api): look the tool up
//! (enabled? renamed?), check the arguments against its schema, refuse it if `readOnly` hides it,
//! settle the call's permissions, run the tool (which resolves,
//! plans, authorizes and commits through [`crate::call::Call`]), turn a panic into a result,
//! audit what a mutating tool did, and shape the `ToolResult`. Also the host's view of the
//! toolset: `definitions`, `formatCall` and the trash methods.
//!
//! The toolset and its options are `toolset`; the definitions, lookup and headers `lookup`;
//! running a tool `running`; the result `result`; the audit `audit`; `ws.check` `check`; the
//! host's history, undo and trash methods `history` and `trash`.

mod audit;
mod check;
mod history;
mod lookup;
mod result;
mod running;
mod toolset;
mod trash;

use serde_json::Value;

use crate::call::{Call, CallContext, Failure, ToolResult};
use crate::error::ToolError;
use crate::tools;
use lookup::read_only;
use running::run_until_aborted;

pub use check::Checked;
pub use result::DIFF_MAX_FACTOR;
// schema_args_tests reaches it as `super::Exposed`.
#[cfg(test)]
use toolset::Exposed;
pub use toolset::Toolset;

impl Toolset {
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
                if tool.spec.mutates && !tool.spec.summarizes_itself {
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
}

#[cfg(test)]
mod schema_args_tests;

#[cfg(test)]
mod recovery_tests;

#[cfg(test)]
mod description_tests;

#[cfg(test)]
mod hint_tests;

#[cfg(test)]
mod argument_tests;
