//! The tools: one file each, holding its schema, its LLM-facing description, its `formatCall`
//! and the whole story of what it does. This file is only the registry and the shared helpers.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::call::{BoxFuture, Call, Outcome, ToolNames};
use crate::error::ToolError;
use crate::options::WorkspaceOptions;
pub use crate::text::quantity::{bytes, quantity};

pub mod append_file;
pub mod apply_patch;
pub mod arguments;
mod blast_radius;
#[cfg(test)]
mod bounded_tests;
pub mod copy_file;
pub mod create_directory;
pub mod cwd;
pub mod delete_file;
mod destination;
pub mod edit_file;
pub mod files;
pub mod glob;
pub mod grep;
pub mod list_directory;
pub mod move_file;
mod nearby;
#[cfg(test)]
mod next_step_tests;
mod put;
pub mod read_file;
pub mod remove_dir;
pub mod restore_file;
/// The tools' tests run a call through the whole flow: their workspace is [`crate::testing`]'s.
#[cfg(test)]
pub(crate) use crate::testing;
#[cfg(test)]
mod stale_tests;
pub mod trash_list;
pub(crate) mod trashing;
pub mod write_file;

/// Everything the workspace needs to know about a tool.
pub struct ToolSpec {
    pub name: &'static str,
    /// The description for the model, built from the tools this workspace offers (their
    /// names, and only those offered) and its options (limits, what goes to the trash).
    pub description: fn(&ToolNames, &WorkspaceOptions) -> String,
    pub schema: fn() -> Value,
    /// Changes the file system (absent under `readOnly`; audited).
    pub mutates: bool,
    /// May replace or remove data (an MCP `destructiveHint`); `false` only for a tool whose
    /// changes are purely additive (append_file, create_directory).
    pub destructive: bool,
    /// Calling it again with the same arguments changes nothing more (an MCP `idempotentHint`).
    pub idempotent: bool,
    /// May ask the user (goes through `Call::authorize` before it acts). `false` only for the
    /// tools that never ask and act at once (../../docs/permissions-and-prompts.md: the cwd stack, trash_list): `ws.check`
    /// must not run them.
    pub asks: bool,
    /// The argument naming the path it acts on first, for an audit record of a call that failed
    /// before resolving it.
    pub path_argument: Option<&'static str>,
    /// Its run sets the summary its change is recorded with from the arguments it parsed, so
    /// the dispatcher does not call `format_call` first (apply_patch would parse its patch
    /// twice: ~5 % of a 10,000-chunk patch).
    pub summarizes_itself: bool,
    pub format_call: fn(&Value) -> String,
    pub run: for<'a> fn(&'a Call, Value) -> BoxFuture<'a, Outcome>,
}

/// Every tool, in the order `definitions()` lists them.
pub static ALL: &[&ToolSpec] = &[
    &read_file::SPEC,
    &write_file::SPEC,
    &edit_file::SPEC,
    &append_file::SPEC,
    &apply_patch::SPEC,
    &list_directory::SPEC,
    &create_directory::SPEC,
    &delete_file::SPEC,
    &remove_dir::SPEC,
    &move_file::SPEC,
    &copy_file::SPEC,
    &restore_file::SPEC,
    &trash_list::SPEC,
    &cwd::GET,
    &cwd::PUSH,
    &cwd::POP,
    &glob::SPEC,
    &grep::SPEC,
];

/// The original names of all tools.
pub fn names() -> Vec<&'static str> {
    ALL.iter().map(|t| t.name).collect()
}

/// Parses a call's arguments into the tool's typed struct. Unknown fields, wrong types and
/// missing fields are `INVALID_ARGUMENTS` naming the field. (The dispatcher has checked them
/// against the tool's schema already, with the messages the model sees: [`arguments::check`];
/// this is the typed conversion, and a guard should a struct and its schema disagree.)
pub fn parse_args<T: DeserializeOwned>(tool: &str, args: Value) -> Result<T, ToolError> {
    if !args.is_object() {
        return Err(ToolError::invalid(format!(
            "{tool}: arguments must be a JSON object, got {}",
            json_kind(&args)
        )));
    }
    // The dispatcher has left out every `null` given for an optional argument ("not given",
    // ../../docs/hosts.md#the-workspace-api); one left (a required argument) is a wrong type like any other (serde would take
    // it as "absent"), so it is refused naming where it is.
    if let Some(field) = null_field(&args, "") {
        return Err(ToolError::invalid(format!(
            "{tool}: invalid arguments: {field}: must not be null; give a value of the type the schema says, or leave an optional argument out"
        )));
    }
    serde_path_to_error::deserialize(args).map_err(|e| {
        let field = e.path().to_string();
        let inner = e.into_inner().to_string();
        let message = if let Some(rest) = inner.strip_prefix("missing field `") {
            let name = rest.trim_end_matches('`');
            let name = if field == "." {
                name.to_owned()
            } else {
                format!("{field}.{name}")
            };
            format!("{name}: is required")
        } else if let Some(rest) = inner.strip_prefix("unknown field `") {
            let (name, expected) = rest.split_once('`').unwrap_or((rest, ""));
            let name = if field == "." || field.is_empty() {
                name.to_owned()
            } else {
                field.clone()
            };
            let takes = match expected.trim_start_matches(", ") {
                "there are no fields" => "this tool takes no arguments".to_owned(),
                expected => format!(
                    "the arguments are {}",
                    expected
                        .trim_start_matches("expected ")
                        .replace("one of ", "")
                ),
            };
            format!("{name}: unknown argument; {takes}")
        } else {
            format!("{field}: {inner}")
        };
        ToolError::invalid(format!("{tool}: invalid arguments: {message}"))
    })
}

/// The path (`edits[0].replaceAll`) of the first `null` inside `v`, if any.
fn null_field(v: &Value, at: &str) -> Option<String> {
    match v {
        Value::Null => Some(at.to_owned()),
        Value::Object(map) => map.iter().find_map(|(k, v)| {
            let path = if at.is_empty() {
                k.clone()
            } else {
                format!("{at}.{k}")
            };
            null_field(v, &path)
        }),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| null_field(v, &format!("{at}[{i}]"))),
        _ => None,
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `formatCall` for tools whose header is just their `path` argument as the model gave it.
pub fn format_path(args: &Value) -> String {
    args.get("path")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned()
}

/// `formatCall` for a path tool with boolean flags: `path`, or `path (flag, other)` with those
/// that are set.
pub fn format_path_flag(args: &Value, flags: &[&str]) -> String {
    with_flags(format_path(args), args, flags)
}

/// `header (flag, other)` with the `flags` set to `true` in `args`, or `header` when none is.
pub fn with_flags(header: String, args: &Value, flags: &[&str]) -> String {
    let set: Vec<&str> = flags
        .iter()
        .copied()
        .filter(|flag| args.get(*flag).and_then(Value::as_bool) == Some(true))
        .collect();
    if set.is_empty() {
        header
    } else {
        format!("{header} ({})", set.join(", "))
    }
}

/// The JSON Schema of a tool's arguments, in the shape every tool shares.
pub fn object_schema(properties: Value, required: &[&str]) -> Value {
    serde_json::json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// A required check that the schema cannot express for serde: `minimum: 1` integers.
pub fn at_least_one(tool: &str, field: &str, value: Option<u64>) -> Result<(), ToolError> {
    match value {
        Some(0) => Err(ToolError::invalid(format!(
            "{tool}: invalid arguments: {field}: must be at least 1"
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    #[allow(dead_code)]
    struct Args {
        path: String,
        start_line: Option<u64>,
    }

    #[test]
    fn argument_errors_name_the_field() {
        let m = |v: Value| parse_args::<Args>("read_file", v).unwrap_err().message;
        assert!(
            m(json!({})).contains("path: is required"),
            "{}",
            m(json!({}))
        );
        assert!(
            m(json!({ "path": 1 })).contains("path: invalid type"),
            "{}",
            m(json!({ "path": 1 }))
        );
        let e = m(json!({ "path": "a", "bogus": 1 }));
        assert!(
            e.contains("bogus: unknown argument; the arguments are `path` or `startLine`"),
            "{e}"
        );
        assert!(m(json!({ "path": "a", "startLine": "3" })).contains("startLine: invalid type"));
        assert!(m(json!([1])).contains("must be a JSON object"));
    }

    /// Every tool that replaces or removes something says so (MCP clients may auto-approve a
    /// tool that says it only adds); only reading tools are read-only.
    #[test]
    fn destructive_is_true_for_every_tool_that_replaces_or_removes() {
        let additive = ["append_file", "create_directory"];
        for tool in ALL.iter().filter(|t| t.mutates) {
            assert_eq!(
                tool.destructive,
                !additive.contains(&tool.name),
                "{}",
                tool.name
            );
        }
        for tool in ALL.iter().filter(|t| !t.mutates) {
            assert!(!tool.destructive, "{}", tool.name);
        }
    }

    #[test]
    fn every_schema_has_the_shared_shape() {
        for tool in ALL {
            let s = (tool.schema)();
            assert_eq!(s["type"], "object", "{}", tool.name);
            assert_eq!(s["additionalProperties"], false, "{}", tool.name);
            assert!(
                s["properties"].is_object() && s["required"].is_array(),
                "{}",
                tool.name
            );
            for (name, prop) in s["properties"].as_object().unwrap() {
                assert!(
                    prop["description"].as_str().is_some_and(|d| d.len() > 10),
                    "{}.{name}",
                    tool.name
                );
            }
        }
    }
}
