//! The audit record of a changing call (`auditLog`): what it did, or tried to.

use serde_json::Value;

use super::toolset::{Exposed, Toolset};
use crate::audit::AuditRecord;
use crate::call::{Failure, Outcome};
use crate::paths::shown::Shown;

impl Toolset {
    /// The path argument of a call as the model gave it, made absolute like a tool would: what
    /// an audit record names when the call failed before it resolved its paths.
    pub(super) fn argument_path(&self, tool: &Exposed, args: &Value) -> Option<String> {
        let raw = args.get(tool.spec.path_argument?)?.as_str()?;
        let cwd = self.ws.cwd_snapshot().cwd;
        Some(
            crate::paths::resolve::absolute_input(raw, "path", &cwd, self.ws.home())
                .map(|p| p.shown().into_owned())
                .unwrap_or_else(|_| raw.to_owned()),
        )
    }

    pub(super) fn audit(&self, tool: &str, raw_path: Option<String>, outcome: &Outcome) {
        let Some(log) = self.ws.audit_log() else {
            return;
        };
        let trash = &self.ws.options().trash;
        let (status, code) = match outcome {
            Ok(_) => ("ok", None),
            Err(Failure::Denied(_)) => ("denied", None),
            Err(Failure::Error(e)) => ("error", Some(e.code)),
        };
        let files = outcome
            .as_ref()
            .map(|s| s.changes.clone())
            .unwrap_or_default();
        // The documented one-path fields describe the first file (for a move, its source).
        let first = files.first();
        let path = first
            .map(|f| f.from.as_ref().unwrap_or(&f.path).shown().into_owned())
            .or(raw_path)
            .unwrap_or_default();
        log.append(&AuditRecord {
            time: humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string(),
            tool: tool.to_owned(),
            path,
            status,
            code,
            trashed_to: first
                .and_then(|f| f.trashed_to.as_ref())
                .map(|p| p.shown().into_owned()),
            sha256_before: first.and_then(|f| f.sha256_before.clone()),
            sha256_after: first.and_then(|f| f.sha256_after.clone()),
            files,
            session_id: trash.session_id.clone(),
            run_id: trash.run_id.clone(),
            agent_name: trash.agent_name.clone(),
        });
    }
}
