//! Workspace options (../docs/hosts.md#the-workspace-api, ../docs/tools.md#limits, ../docs/trash.md): parsed from the host's JSON, validated once at
//! construction, with the defaults filled in. Every error names the option it is about, so the
//! host sees a `TypeError` pointing at its own mistake rather than a surprise later.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::paths::canonical::canonicalize_lenient;
use crate::paths::resolve::expand_home;
use crate::permissions::Permissions;

/// Size and time bounds (../docs/tools.md#limits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    pub read_max_bytes: u64,
    pub read_max_lines: u64,
    pub write_max_bytes: u64,
    pub append_max_total_bytes: u64,
    pub edit_max_file_bytes: u64,
    pub patch_max_bytes: u64,
    pub patch_max_total_bytes: u64,
    pub list_max_entries: u64,
    pub cwd_max_depth: u64,
    pub diff_timeout_ms: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            read_max_bytes: 65_536,
            read_max_lines: 500,
            write_max_bytes: 1024 * 1024,
            append_max_total_bytes: 10 * 1024 * 1024,
            edit_max_file_bytes: 10 * 1024 * 1024,
            patch_max_bytes: 4 * 1024 * 1024,
            patch_max_total_bytes: 64 * 1024 * 1024,
            list_max_entries: 500,
            cwd_max_depth: 100,
            diff_timeout_ms: 1000,
        }
    }
}

impl Limits {
    fn slot(&mut self, key: &str) -> Option<&mut u64> {
        Some(match key {
            "readMaxBytes" => &mut self.read_max_bytes,
            "readMaxLines" => &mut self.read_max_lines,
            "writeMaxBytes" => &mut self.write_max_bytes,
            "appendMaxTotalBytes" => &mut self.append_max_total_bytes,
            "editMaxFileBytes" => &mut self.edit_max_file_bytes,
            "patchMaxBytes" => &mut self.patch_max_bytes,
            "patchMaxTotalBytes" => &mut self.patch_max_total_bytes,
            "listMaxEntries" => &mut self.list_max_entries,
            "cwdMaxDepth" => &mut self.cwd_max_depth,
            "diffTimeoutMs" => &mut self.diff_timeout_ms,
            _ => return None,
        })
    }
}

/// How a tool is exposed: `enabled: false` hides it, `name` renames it for the model.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolConfig {
    pub enabled: Option<bool>,
    pub name: Option<String>,
}

/// Who is trashing, and where the archives go (../docs/trash.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrashOptions {
    pub data_dir: PathBuf,
    pub session_id: String,
    pub run_id: String,
    pub agent_name: String,
    pub compression_level: u32,
    pub keep_overwrites: bool,
}

/// Default gzip level for trash archives: the last level of zlib-rs's fast strategy. Level 3
/// starts its medium one, which took 8–30 % longer to remove a tree of source code (the bench's
/// tree, a `node_modules`, the sources of 135 crates) for archives 2–8 % smaller; level 1 made
/// them a third larger.
pub const DEFAULT_COMPRESSION_LEVEL: u32 = 2;

/// Every option of `new Workspace(options)`, validated, with defaults applied.
#[derive(Debug, Clone)]
pub struct WorkspaceOptions {
    /// Canonical workspace root.
    pub root: PathBuf,
    /// Canonical allowed trees; `None` means no sandbox.
    pub allowed_paths: Option<Vec<PathBuf>>,
    pub read_only: bool,
    pub permissions: Permissions,
    pub tools: HashMap<String, ToolConfig>,
    pub limits: Limits,
    pub trash: TrashOptions,
    pub audit: bool,
    /// 0 waits forever.
    pub confirm_timeout_ms: u64,
    /// What `write_file` does over a file the model has not seen as it is (../docs/tools.md#stale-views).
    pub stale_writes: StaleWrites,
}

/// `staleWrites` (../docs/tools.md#stale-views): whether `write_file` over an existing file the model has not
/// read, or that changed since it last read it, is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StaleWrites {
    /// Refused with `STALE`, nothing written (the default).
    #[default]
    Refuse,
    /// Written; the output says so when the file had changed since the model saw it.
    Allow,
}

const TOP_LEVEL_KEYS: [&str; 10] = [
    "root",
    "allowedPaths",
    "readOnly",
    "permissions",
    "tools",
    "limits",
    "trash",
    "audit",
    "confirmTimeoutMs",
    "staleWrites",
];

/// An invalid option; the message starts with the option's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionError(pub String);

impl std::fmt::Display for OptionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

type Result<T> = std::result::Result<T, OptionError>;

fn err<T>(message: String) -> Result<T> {
    Err(OptionError(message))
}

impl WorkspaceOptions {
    /// Parses and validates `value`. `tool_names` are the original names of every tool (for
    /// validating `tools`); `home` is the user's home directory for `~/`.
    pub fn parse(value: &Value, tool_names: &[&str], home: Option<&Path>) -> Result<Self> {
        let Some(object) = value.as_object() else {
            return err("options: must be an object with at least `root`".into());
        };
        for key in object.keys() {
            if !TOP_LEVEL_KEYS.contains(&key.as_str()) && key != "confirm" {
                return err(format!(
                    "{key}: unknown option; known options are {}, confirm",
                    TOP_LEVEL_KEYS.join(", ")
                ));
            }
        }
        let root = match object.get("root") {
            None | Some(Value::Null) => {
                return err(
                    "root: is required (the workspace directory, e.g. process.cwd())".into(),
                )
            }
            Some(v) => existing_directory(v, "root", home)?,
        };
        let allowed_paths = match object.get("allowedPaths") {
            None | Some(Value::Null) => None,
            Some(Value::Array(items)) => Some(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| allowed_path(v, &format!("allowedPaths[{i}]"), home))
                    .collect::<Result<Vec<_>>>()?,
            ),
            Some(_) => return err("allowedPaths: must be an array of directory paths".into()),
        };
        let permissions = match object.get("permissions") {
            None | Some(Value::Null) => Permissions::default(),
            Some(v) => Permissions::default()
                .merged(v, "permissions")
                .map_err(|e| OptionError(e.0))?,
        };
        Ok(Self {
            root,
            allowed_paths,
            read_only: boolean(object, "readOnly", false)?,
            permissions,
            tools: tools(object.get("tools"), tool_names)?,
            limits: limits(object.get("limits"))?,
            trash: trash(object.get("trash"), home)?,
            audit: boolean(object, "audit", true)?,
            confirm_timeout_ms: match object.get("confirmTimeoutMs") {
                None | Some(Value::Null) => 0,
                Some(v) => non_negative_integer(v, "confirmTimeoutMs")?,
            },
            stale_writes: match object.get("staleWrites") {
                None | Some(Value::Null) => StaleWrites::Refuse,
                Some(Value::String(s)) if s == "refuse" => StaleWrites::Refuse,
                Some(Value::String(s)) if s == "allow" => StaleWrites::Allow,
                Some(_) => return err("staleWrites: must be 'refuse' or 'allow'".into()),
            },
        })
    }
}

fn path_string<'a>(value: &'a Value, name: &str) -> Result<&'a str> {
    match value.as_str() {
        Some(s) if !s.is_empty() && !s.contains('\0') => Ok(s),
        Some("") => err(format!("{name}: must not be empty")),
        Some(_) => err(format!("{name}: must not contain a NUL byte")),
        None => err(format!("{name}: must be a string path")),
    }
}

fn absolute(raw: &str, name: &str, home: Option<&Path>) -> Result<PathBuf> {
    let expanded = expand_home(raw, home).ok_or_else(|| {
        OptionError(format!(
            "{name}: `~/` is used but no home directory is known"
        ))
    })?;
    if expanded.is_absolute() {
        return Ok(expanded);
    }
    let cwd = std::env::current_dir()
        .map_err(|e| OptionError(format!("{name}: cannot resolve a relative path: {e}")))?;
    Ok(cwd.join(expanded))
}

fn existing_directory(value: &Value, name: &str, home: Option<&Path>) -> Result<PathBuf> {
    let raw = path_string(value, name)?;
    let path = absolute(raw, name, home)?;
    let canonical = crate::paths::canonical::canonicalize_existing(&path)
        .map_err(|e| OptionError(format!("{name}: {} cannot be used: {e}", path.display())))?;
    if !canonical.is_dir() {
        return err(format!(
            "{name}: {} is not a directory",
            canonical.display()
        ));
    }
    Ok(canonical)
}

fn allowed_path(value: &Value, name: &str, home: Option<&Path>) -> Result<PathBuf> {
    let raw = path_string(value, name)?;
    let path = absolute(raw, name, home)?;
    let canonical = canonicalize_lenient(&path).map_err(|e| {
        OptionError(format!(
            "{name}: {} cannot be resolved: {e}",
            path.display()
        ))
    })?;
    if canonical.path.exists() && !canonical.path.is_dir() {
        return err(format!(
            "{name}: {} is not a directory",
            canonical.path.display()
        ));
    }
    Ok(canonical.path)
}

fn boolean(object: &Map<String, Value>, key: &str, default: bool) -> Result<bool> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => err(format!("{key}: must be a boolean")),
    }
}

fn non_negative_integer(value: &Value, name: &str) -> Result<u64> {
    value
        .as_u64()
        .or_else(|| {
            value
                .as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 9.0e15)
                .map(|f| f as u64)
        })
        .ok_or_else(|| OptionError(format!("{name}: must be a non-negative integer")))
}

fn string(value: &Value, name: &str) -> Result<String> {
    match value.as_str() {
        Some(s) if !s.is_empty() => Ok(s.to_owned()),
        _ => err(format!("{name}: must be a non-empty string")),
    }
}

/// A name an LLM API accepts for a tool.
fn valid_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn tools(value: Option<&Value>, tool_names: &[&str]) -> Result<HashMap<String, ToolConfig>> {
    let mut out = HashMap::new();
    let object = match value {
        None | Some(Value::Null) => return Ok(out),
        Some(Value::Object(o)) => o,
        Some(_) => return err("tools: must be an object keyed by tool name".into()),
    };
    for (tool, config) in object {
        if !tool_names.contains(&tool.as_str()) {
            return err(format!(
                "tools.{tool}: unknown tool; known tools are {}",
                tool_names.join(", ")
            ));
        }
        let Some(config) = config.as_object() else {
            return err(format!(
                "tools.{tool}: must be an object {{ enabled?, name? }}"
            ));
        };
        let mut parsed = ToolConfig::default();
        for (key, v) in config {
            match (key.as_str(), v) {
                (_, Value::Null) => {}
                ("enabled", Value::Bool(b)) => parsed.enabled = Some(*b),
                ("enabled", _) => return err(format!("tools.{tool}.enabled: must be a boolean")),
                ("name", Value::String(n)) if valid_tool_name(n) => parsed.name = Some(n.clone()),
                ("name", _) => {
                    return err(format!(
                        "tools.{tool}.name: must be 1-64 characters of letters, digits, `_` or `-`"
                    ))
                }
                _ => {
                    return err(format!(
                        "tools.{tool}.{key}: unknown setting; use enabled or name"
                    ))
                }
            }
        }
        out.insert(tool.clone(), parsed);
    }
    // Renames must leave every exposed name unique; the error names the option that renamed.
    let mut exposed: HashMap<String, &str> = HashMap::new();
    let renamed = |tool: &str| out.get(tool).is_some_and(|c| c.name.is_some());
    for original in tool_names {
        let config = out.get(*original);
        if config.and_then(|c| c.enabled) == Some(false) {
            continue;
        }
        let name = config
            .and_then(|c| c.name.clone())
            .unwrap_or_else(|| original.to_string());
        if let Some(other) = exposed.insert(name.clone(), original) {
            let (culprit, holder) = if renamed(original) {
                (*original, other)
            } else {
                (other, *original)
            };
            return err(format!(
                "tools.{culprit}.name: `{name}` is already the name of {holder}; tool names must be unique (rename or disable {holder} too, or choose another name)"
            ));
        }
    }
    Ok(out)
}

fn limits(value: Option<&Value>) -> Result<Limits> {
    let mut out = Limits::default();
    let object = match value {
        None | Some(Value::Null) => return Ok(out),
        Some(Value::Object(o)) => o,
        Some(_) => return err("limits: must be an object".into()),
    };
    for (key, v) in object {
        let name = format!("limits.{key}");
        let slot = out.slot(key).ok_or_else(|| {
            OptionError(format!(
                "{name}: unknown limit; known limits are readMaxBytes, readMaxLines, writeMaxBytes, appendMaxTotalBytes, editMaxFileBytes, patchMaxBytes, patchMaxTotalBytes, listMaxEntries, cwdMaxDepth, diffTimeoutMs"
            ))
        })?;
        if v.is_null() {
            continue;
        }
        let n = non_negative_integer(v, &name)?;
        if n == 0 {
            return err(format!("{name}: must be at least 1"));
        }
        *slot = n;
    }
    Ok(out)
}

fn random_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    hasher.write_u32(std::process::id());
    format!("{:016x}", hasher.finish())[..8].to_owned()
}

/// `AGENT_FS_TOOLS_DATA_DIR`, else `~/.agent-fs-tools`.
fn default_data_dir(home: Option<&Path>) -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("AGENT_FS_TOOLS_DATA_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    home.map(|h| h.join(".agent-fs-tools")).ok_or_else(|| {
        OptionError("trash.dataDir: no home directory is known; set trash.dataDir".into())
    })
}

fn trash(value: Option<&Value>, home: Option<&Path>) -> Result<TrashOptions> {
    let empty = Map::new();
    let object = match value {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(o)) => o,
        Some(_) => return err("trash: must be an object".into()),
    };
    const KEYS: [&str; 6] = [
        "dataDir",
        "sessionId",
        "runId",
        "agentName",
        "compressionLevel",
        "keepOverwrites",
    ];
    for key in object.keys() {
        if !KEYS.contains(&key.as_str()) {
            return err(format!(
                "trash.{key}: unknown setting; known settings are {}",
                KEYS.join(", ")
            ));
        }
    }
    let get = |k: &str| object.get(k).filter(|v| !v.is_null());
    let data_dir = match get("dataDir") {
        Some(v) => {
            let raw = path_string(v, "trash.dataDir")?;
            let path = absolute(raw, "trash.dataDir", home)?;
            canonicalize_lenient(&path)
                .map_err(|e| {
                    OptionError(format!(
                        "trash.dataDir: {} cannot be resolved: {e}",
                        path.display()
                    ))
                })?
                .path
        }
        None => {
            let path = default_data_dir(home)?;
            canonicalize_lenient(&path).map(|c| c.path).unwrap_or(path)
        }
    };
    let compression_level = match get("compressionLevel") {
        Some(v) => {
            let n = non_negative_integer(v, "trash.compressionLevel")?;
            if n > 9 {
                return err("trash.compressionLevel: must be an integer from 0 to 9".into());
            }
            n as u32
        }
        None => DEFAULT_COMPRESSION_LEVEL,
    };
    Ok(TrashOptions {
        data_dir,
        session_id: get("sessionId")
            .map(|v| string(v, "trash.sessionId"))
            .transpose()?
            .unwrap_or_else(random_id),
        run_id: get("runId")
            .map(|v| string(v, "trash.runId"))
            .transpose()?
            .unwrap_or_else(random_id),
        agent_name: get("agentName")
            .map(|v| string(v, "trash.agentName"))
            .transpose()?
            .unwrap_or_else(|| "agent".into()),
        compression_level,
        keep_overwrites: match get("keepOverwrites") {
            Some(Value::Bool(b)) => *b,
            Some(_) => return err("trash.keepOverwrites: must be a boolean".into()),
            None => true,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const TOOLS: [&str; 3] = ["read_file", "write_file", "delete_file"];

    fn parse(v: Value) -> Result<WorkspaceOptions> {
        WorkspaceOptions::parse(&v, &TOOLS, Some(&std::env::temp_dir()))
    }

    fn message(v: Value) -> String {
        parse(v).unwrap_err().0
    }

    #[test]
    fn root_is_required_canonical_and_a_directory() {
        assert!(message(json!({})).starts_with("root:"));
        assert!(message(json!({ "root": 5 })).starts_with("root:"));
        assert!(message(json!({ "root": "/definitely/not/here" })).starts_with("root:"));
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        assert!(message(json!({ "root": file })).contains("not a directory"));
        let o = parse(json!({ "root": dir.path() })).unwrap();
        assert_eq!(
            o.root,
            crate::paths::canonical::canonicalize_existing(dir.path()).unwrap()
        );
    }

    #[test]
    fn defaults_are_the_spec_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let o = parse(json!({ "root": dir.path() })).unwrap();
        assert_eq!(o.limits, Limits::default());
        assert!(o.permissions.cwd_read_file && !o.permissions.cwd_write_file);
        assert!(o.audit && !o.read_only && o.allowed_paths.is_none());
        assert_eq!(o.trash.session_id.len(), 8);
        assert!(o.trash.keep_overwrites);
        assert_eq!(o.stale_writes, StaleWrites::Refuse);
        let allow = parse(json!({ "root": dir.path(), "staleWrites": "allow" })).unwrap();
        assert_eq!(allow.stale_writes, StaleWrites::Allow);
    }

    #[test]
    fn every_bad_option_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_str().unwrap();
        let cases = [
            (json!({ "root": root, "allowedPath": [] }), "allowedPath:"),
            (
                json!({ "root": root, "allowedPaths": "x" }),
                "allowedPaths:",
            ),
            (
                json!({ "root": root, "allowedPaths": [3] }),
                "allowedPaths[0]:",
            ),
            (json!({ "root": root, "readOnly": "yes" }), "readOnly:"),
            (
                json!({ "root": root, "permissions": { "x": true } }),
                "permissions.x:",
            ),
            (
                json!({ "root": root, "tools": { "nope": {} } }),
                "tools.nope:",
            ),
            (
                json!({ "root": root, "tools": { "read_file": { "enabled": 1 } } }),
                "tools.read_file.enabled:",
            ),
            (
                json!({ "root": root, "tools": { "read_file": { "name": "bad name" } } }),
                "tools.read_file.name:",
            ),
            (
                json!({ "root": root, "tools": { "read_file": { "name": "write_file" } } }),
                "tools.read_file.name: `write_file` is already the name of write_file;",
            ),
            (
                json!({ "root": root, "tools": { "write_file": { "name": "read_file" } } }),
                "tools.write_file.name: `read_file` is already the name of read_file;",
            ),
            (
                json!({ "root": root, "tools": { "read_file": { "name": "x" }, "write_file": { "name": "x" } } }),
                "tools.write_file.name: `x` is already the name of read_file;",
            ),
            (
                json!({ "root": root, "limits": { "readMaxBytes": 0 } }),
                "limits.readMaxBytes:",
            ),
            (
                json!({ "root": root, "limits": { "readMaxBytes": -1 } }),
                "limits.readMaxBytes:",
            ),
            (
                json!({ "root": root, "limits": { "bogus": 1 } }),
                "limits.bogus:",
            ),
            (
                json!({ "root": root, "trash": { "compressionLevel": 12 } }),
                "trash.compressionLevel:",
            ),
            (
                json!({ "root": root, "trash": { "sessionId": "" } }),
                "trash.sessionId:",
            ),
            (json!({ "root": root, "audit": 0 }), "audit:"),
            (
                json!({ "root": root, "confirmTimeoutMs": -5 }),
                "confirmTimeoutMs:",
            ),
            (
                json!({ "root": root, "staleWrites": "ask" }),
                "staleWrites: must be 'refuse' or 'allow'",
            ),
            (json!({ "root": root, "staleWrites": true }), "staleWrites:"),
        ];
        for (value, prefix) in cases {
            let m = message(value.clone());
            assert!(m.starts_with(prefix), "{value}: {m}");
        }
    }

    #[test]
    fn renaming_onto_a_disabled_tool_is_fine() {
        let dir = tempfile::tempdir().unwrap();
        let o = parse(json!({ "root": dir.path(), "tools": {
            "delete_file": { "name": "read_file" }, "read_file": { "enabled": false } } }))
        .unwrap();
        assert_eq!(o.tools["delete_file"].name.as_deref(), Some("read_file"));
    }
}
