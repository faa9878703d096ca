//! The tools one workspace offers, as its options expose them (renamed, disabled, hidden by
//! `readOnly`), and the permissions a call runs with.

use std::sync::Arc;

use serde_json::Value;

use crate::call::ToolNames;
use crate::options::OptionError;
use crate::permissions::{PermissionError, Permissions};
use crate::tools::{self, ToolSpec};
use crate::workspace::Workspace;

/// A tool as this workspace exposes it.
pub(super) struct Exposed {
    pub(super) spec: &'static ToolSpec,
    pub(super) name: String,
    pub(super) enabled: bool,
    /// Its arguments' JSON Schema, as `definitions` gives it and calls are checked against.
    pub(super) schema: Value,
}

/// The tools one workspace offers, and the host's entry points to them.
pub struct Toolset {
    pub(super) ws: Arc<Workspace>,
    pub(super) tools: Vec<Exposed>,
    pub(super) names: Arc<ToolNames>,
}

impl Toolset {
    /// Validates `options` as [`Toolset::new`] does, without creating a workspace (so no crash
    /// recovery starts); the error names the bad option.
    pub fn check_options(options: &Value) -> Result<(), OptionError> {
        Workspace::check_options(options, &tools::names())
    }

    /// Validates `options` (../../docs/hosts.md#the-workspace-api) and creates the workspace; the error names the bad option.
    pub fn new(options: &Value) -> Result<Self, OptionError> {
        let ws = Arc::new(Workspace::new(options, &tools::names())?);
        let config = &ws.options().tools;
        let tools: Vec<Exposed> = tools::ALL
            .iter()
            .map(|spec| {
                let config = config.get(spec.name);
                Exposed {
                    spec,
                    name: config
                        .and_then(|c| c.name.clone())
                        .unwrap_or_else(|| spec.name.to_owned()),
                    enabled: config.and_then(|c| c.enabled).unwrap_or(true),
                    schema: (spec.schema)(),
                }
            })
            .collect();
        let read_only = ws.options().read_only;
        let names = ToolNames::new(
            tools
                .iter()
                .map(|t| (t.spec.name, t.name.clone(), offered(t, read_only)))
                .collect(),
        );
        Ok(Self {
            ws,
            tools,
            names: Arc::new(names),
        })
    }

    /// The workspace the tools act in.
    pub fn workspace(&self) -> &Arc<Workspace> {
        &self.ws
    }

    pub(super) fn available(&self, tool: &Exposed) -> bool {
        offered(tool, self.ws.options().read_only)
    }

    /// This workspace's permissions with a host's per-call `partial` object merged over them
    /// (`ctx.permissions`). An unknown key or a value that is not a boolean is a host bug, not
    /// the model's: the error names `ctx.permissions.<key>`, for a `TypeError`.
    pub fn call_permissions(&self, partial: &Value) -> Result<Permissions, PermissionError> {
        match partial {
            Value::Null => Ok(self.ws.options().permissions),
            partial => self
                .ws
                .options()
                .permissions
                .merged(partial, "ctx.permissions"),
        }
    }
}

/// Whether `tool` is offered: enabled, and not a changing tool in a read-only workspace.
fn offered(tool: &Exposed, read_only: bool) -> bool {
    tool.enabled && !(read_only && tool.spec.mutates)
}
