//! The host's view of the toolset: the offered tools' definitions, the tool a host's name
//! calls (or why none), and the one-line header of a call.

use serde_json::{json, Value};

use super::toolset::{Exposed, Toolset};
use crate::error::{ErrorCode, ToolError};
use crate::paths::shown::echo;
use crate::tools;

impl Toolset {
    /// The offered tools' definitions (`ToolDefinition`, ../../docs/hosts.md#the-workspace-api).
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
    pub(super) fn lookup(&self, name: &str) -> Result<&Exposed, ToolError> {
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

    /// The one-line header for a call (`formatCall`, ../../docs/hosts.md#the-workspace-api).
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
}

/// The refusal of a changing tool in a read-only workspace.
pub(super) fn read_only(name: &str) -> ToolError {
    ToolError::new(
        ErrorCode::ReadOnly,
        format!("{name} changes files, and this workspace is read-only; nothing was changed. Only reading tools are available"),
    )
}
