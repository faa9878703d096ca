//! Tomo's permission flags (../docs/permissions-and-prompts.md): which operations skip the confirmation prompt, split by
//! whether the canonical path lies inside the workspace root ("cwd" scope) or not ("global").

use serde_json::{Map, Value};

/// A host's permission flags that are not a flags object: the message names the offending key
/// (`<what>.<key>: unknown permission; …`, `<what>.<key>: must be a boolean`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermissionError(pub String);

impl std::fmt::Display for PermissionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PermissionError {}

/// What a tool is about to do to a path, for the permission decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Read,
    Write,
    Remove,
    RemoveDir,
}

/// The eight flags. `cwd_read_file` defaults to true, every other flag to false.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Permissions {
    pub cwd_read_file: bool,
    pub global_read_file: bool,
    pub cwd_write_file: bool,
    pub global_write_file: bool,
    pub cwd_remove_file: bool,
    pub global_remove_file: bool,
    pub cwd_remove_dir: bool,
    pub global_remove_dir: bool,
}

impl Default for Permissions {
    fn default() -> Self {
        Self {
            cwd_read_file: true,
            global_read_file: false,
            cwd_write_file: false,
            global_write_file: false,
            cwd_remove_file: false,
            global_remove_file: false,
            cwd_remove_dir: false,
            global_remove_dir: false,
        }
    }
}

/// The JS names of the flags, in a fixed order.
pub const PERMISSION_KEYS: [&str; 8] = [
    "cwdReadFile",
    "globalReadFile",
    "cwdWriteFile",
    "globalWriteFile",
    "cwdRemoveFile",
    "globalRemoveFile",
    "cwdRemoveDir",
    "globalRemoveDir",
];

impl Permissions {
    /// The JS name of the flag that grants `op` in the given scope, e.g. `cwdWriteFile`.
    pub fn key_of(op: Operation, inside_root: bool) -> &'static str {
        let index = match op {
            Operation::Read => 0,
            Operation::Write => 2,
            Operation::Remove => 4,
            Operation::RemoveDir => 6,
        } + usize::from(!inside_root);
        PERMISSION_KEYS[index]
    }

    /// Whether `op` on a path in the given scope is granted without asking.
    pub fn grants(&self, op: Operation, inside_root: bool) -> bool {
        match (op, inside_root) {
            (Operation::Read, true) => self.cwd_read_file,
            (Operation::Read, false) => self.global_read_file,
            (Operation::Write, true) => self.cwd_write_file,
            (Operation::Write, false) => self.global_write_file,
            (Operation::Remove, true) => self.cwd_remove_file,
            (Operation::Remove, false) => self.global_remove_file,
            (Operation::RemoveDir, true) => self.cwd_remove_dir,
            (Operation::RemoveDir, false) => self.global_remove_dir,
        }
    }

    fn flag_mut(&mut self, key: &str) -> Option<&mut bool> {
        Some(match key {
            "cwdReadFile" => &mut self.cwd_read_file,
            "globalReadFile" => &mut self.global_read_file,
            "cwdWriteFile" => &mut self.cwd_write_file,
            "globalWriteFile" => &mut self.global_write_file,
            "cwdRemoveFile" => &mut self.cwd_remove_file,
            "globalRemoveFile" => &mut self.global_remove_file,
            "cwdRemoveDir" => &mut self.cwd_remove_dir,
            "globalRemoveDir" => &mut self.global_remove_dir,
            _ => return None,
        })
    }

    /// These permissions with the flags present in `partial` replaced (a partial object merges
    /// over the base). Errors name the offending key: `<what>.<key>: ...`.
    pub fn merged(&self, partial: &Value, what: &str) -> Result<Permissions, PermissionError> {
        let fail = |message: String| PermissionError(message);
        let object: &Map<String, Value> = partial
            .as_object()
            .ok_or_else(|| fail(format!("{what}: must be an object of boolean flags")))?;
        let mut out = *self;
        for (key, value) in object {
            let flag = out.flag_mut(key).ok_or_else(|| {
                fail(format!(
                    "{what}.{key}: unknown permission; known permissions are {}",
                    PERMISSION_KEYS.join(", ")
                ))
            })?;
            if value.is_null() {
                continue;
            }
            *flag = value
                .as_bool()
                .ok_or_else(|| fail(format!("{what}.{key}: must be a boolean")))?;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_operation_and_scope_has_its_key() {
        for op in [
            Operation::Read,
            Operation::Write,
            Operation::Remove,
            Operation::RemoveDir,
        ] {
            for inside in [true, false] {
                let key = Permissions::key_of(op, inside);
                let mut only = Permissions {
                    cwd_read_file: false,
                    ..Permissions::default()
                };
                *only.flag_mut(key).unwrap() = true;
                assert!(only.grants(op, inside), "{key}");
                assert!(!only.grants(op, !inside), "{key}");
            }
        }
    }
    use serde_json::json;

    #[test]
    fn partial_objects_merge_over_defaults() {
        let p = Permissions::default()
            .merged(&json!({ "cwdWriteFile": true }), "permissions")
            .unwrap();
        assert!(p.cwd_read_file && p.cwd_write_file && !p.global_write_file);
        let p = Permissions::default()
            .merged(&json!({ "cwdReadFile": false }), "permissions")
            .unwrap();
        assert!(!p.grants(Operation::Read, true));
    }

    #[test]
    fn bad_keys_and_types_are_named() {
        let err = Permissions::default()
            .merged(&json!({ "cwdWrite": true }), "permissions")
            .unwrap_err();
        assert!(err.0.starts_with("permissions.cwdWrite:"), "{err}");
        let err = Permissions::default()
            .merged(&json!({ "cwdWriteFile": "yes" }), "permissions")
            .unwrap_err();
        assert!(err.0.starts_with("permissions.cwdWriteFile:"), "{err}");
    }

    #[test]
    fn scopes_pick_the_right_flag() {
        let p = Permissions {
            global_remove_dir: true,
            ..Permissions::default()
        };
        assert!(p.grants(Operation::RemoveDir, false));
        assert!(!p.grants(Operation::RemoveDir, true));
        assert!(!p.grants(Operation::Write, true));
    }
}
