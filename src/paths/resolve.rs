//! Turning the model's path string into an absolute path: relative to the workspace cwd (never
//! `process.cwd()`), `~/` for the home directory, bytes taken literally (no trimming, unquoting,
//! percent-decoding or Unicode normalisation).

use std::path::{Path, PathBuf};

use crate::error::ToolError;

/// `~` and `~/rest` expand to the home directory; anything else is returned as it is.
/// `None` when `~` is used and no home directory is known.
pub fn expand_home(raw: &str, home: Option<&Path>) -> Option<PathBuf> {
    if raw == "~" {
        return home.map(Path::to_path_buf);
    }
    if let Some(rest) = raw.strip_prefix("~/") {
        return home.map(|h| h.join(rest));
    }
    Some(PathBuf::from(raw))
}

/// Linux's `PATH_MAX`: the kernel refuses any longer path, so a longer argument is refused up front.
pub const PATH_MAX_BYTES: usize = 4096;

/// Linux's `NAME_MAX`: no file name (one path component) can be longer.
pub const NAME_MAX_BYTES: usize = 255;

/// The absolute (not yet canonical) path for `raw`, named `field` in errors.
pub fn absolute_input(
    raw: &str,
    field: &str,
    cwd: &Path,
    home: Option<&Path>,
) -> Result<PathBuf, ToolError> {
    if raw.is_empty() {
        return Err(ToolError::invalid(format!(
            "{field}: must not be empty; give a file path"
        )));
    }
    if raw.len() > PATH_MAX_BYTES {
        // Not echoed: no file path is this long, and the text goes to the model.
        return Err(ToolError::invalid(format!(
            "{field}: is {} bytes long, over the {PATH_MAX_BYTES} bytes a file path can have; give a shorter path",
            raw.len()
        )));
    }
    if raw.contains('\0') {
        return Err(ToolError::invalid(format!(
            "{field}: contains a NUL byte, which no file path can contain"
        )));
    }
    if let Some(long) = raw.split('/').find(|part| part.len() > NAME_MAX_BYTES) {
        // Refused before anything is created (write_file would otherwise make the parents first).
        let start: String = long.chars().take(40).collect();
        return Err(ToolError::invalid(format!(
            "{field}: the name `{start}…` is {} bytes long, over the {NAME_MAX_BYTES} bytes a file name can have; use a shorter name",
            long.len()
        )));
    }
    let expanded = expand_home(raw, home).ok_or_else(|| {
        ToolError::invalid(format!(
            "{field}: `~` needs a home directory, and none is known; use an absolute path"
        ))
    })?;
    Ok(if expanded.is_absolute() {
        expanded
    } else {
        cwd.join(expanded)
    })
}

/// For tools that act on a file: `raw` ending in `/` names a directory, so unless it is one
/// (then the tool's own "is a directory" error applies) it is refused rather than silently read,
/// written or appended as the file without the slash (`write_file("src/")` must not create a
/// file called `src`).
pub fn file_path_not_directory_syntax(
    raw: &str,
    field: &str,
    resolved: &Path,
) -> Result<(), ToolError> {
    if raw.len() > 1 && raw.ends_with('/') && !resolved.is_dir() {
        return Err(ToolError::invalid(format!(
            "{field}: `{raw}` ends with `/`, so it names a directory, but {} is not a directory; give the file path without the trailing slash",
            resolved.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_join_the_workspace_cwd_literally() {
        let cwd = Path::new("/w/sub");
        let home = Some(Path::new("/home/u"));
        assert_eq!(
            absolute_input("a.txt", "path", cwd, home).unwrap(),
            Path::new("/w/sub/a.txt")
        );
        assert_eq!(
            absolute_input(" a.txt ", "path", cwd, home).unwrap(),
            Path::new("/w/sub/ a.txt ")
        );
        assert_eq!(
            absolute_input("'a'", "path", cwd, home).unwrap(),
            Path::new("/w/sub/'a'")
        );
        assert_eq!(
            absolute_input("%41", "path", cwd, home).unwrap(),
            Path::new("/w/sub/%41")
        );
        assert_eq!(
            absolute_input("/etc/x", "path", cwd, home).unwrap(),
            Path::new("/etc/x")
        );
    }

    #[test]
    fn tilde_means_home_only_at_the_start() {
        let home = Some(Path::new("/home/u"));
        assert_eq!(
            absolute_input("~/a", "path", Path::new("/w"), home).unwrap(),
            Path::new("/home/u/a")
        );
        assert_eq!(
            absolute_input("~", "path", Path::new("/w"), home).unwrap(),
            Path::new("/home/u")
        );
        assert_eq!(
            absolute_input("a/~/b", "path", Path::new("/w"), home).unwrap(),
            Path::new("/w/a/~/b")
        );
        assert_eq!(
            absolute_input("~user", "path", Path::new("/w"), home).unwrap(),
            Path::new("/w/~user")
        );
        assert!(absolute_input("~/a", "path", Path::new("/w"), None).is_err());
    }

    #[test]
    fn overlong_paths_and_names_are_invalid_without_being_echoed() {
        let cwd = Path::new("/w");
        let e = absolute_input(&"a/".repeat(3000), "path", cwd, None).unwrap_err();
        assert!(
            e.message.starts_with("path:") && e.message.len() < 200,
            "{}",
            e.message
        );
        let e = absolute_input(&format!("d/{}", "n".repeat(256)), "path", cwd, None).unwrap_err();
        assert!(
            e.message.contains("256 bytes") && e.message.len() < 200,
            "{}",
            e.message
        );
        assert!(absolute_input(&format!("d/{}", "n".repeat(255)), "path", cwd, None).is_ok());
    }

    #[test]
    fn nul_and_empty_are_invalid() {
        assert!(absolute_input("a\0b", "path", Path::new("/w"), None)
            .unwrap_err()
            .message
            .starts_with("path:"));
        assert!(absolute_input("", "source", Path::new("/w"), None)
            .unwrap_err()
            .message
            .starts_with("source:"));
    }

    #[test]
    fn a_trailing_slash_names_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), "").unwrap();
        let check = |raw: &str, p: &Path| file_path_not_directory_syntax(raw, "path", p);
        assert!(check("f/", &dir.path().join("f")).is_err());
        assert!(check("new/", &dir.path().join("new")).is_err());
        assert!(check("f", &dir.path().join("f")).is_ok());
        assert!(check("./", dir.path()).is_ok());
        assert!(check("/", Path::new("/")).is_ok());
    }
}
