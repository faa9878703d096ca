//! `ws.check`: what a call would do about asking the user, without doing it.

use std::sync::Arc;

use serde_json::{json, Value};

use super::lookup::read_only;
use super::running::catch_panics;
use super::toolset::Toolset;
use crate::call::{Call, CallContext, CheckSlot, Decision, Failure, ToolResult};
use crate::progress::Progress;
use crate::tools;

impl Toolset {
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
