//! The tools a workspace offers, under the names the host gave them.

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
