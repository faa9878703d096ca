//! The glob syntax of the search tools, matched against paths relative to the searched
//! directory.
//!
//! A glob without a `/` matches a file name at any depth (like a `.gitignore` line or `rg -g`),
//! because that is what a model means by `*.rs`; with a `/` it matches the whole relative path.
//! `*` never crosses a `/`. Globs that could only match outside the searched directory (absolute,
//! or with `..`) are refused with a reason rather than matching nothing.

use std::path::Path;

use globset::{GlobBuilder, GlobMatcher};

use crate::error::ToolError;
use crate::paths::shown::echo;

/// A glob as the search tools take it (see the module documentation).
#[derive(Debug, Clone)]
pub struct PathGlob {
    matcher: GlobMatcher,
    name_only: bool,
}

/// Why a glob was refused, as a message without the tool and field (see [`GlobError::for_field`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlobError(String);

impl GlobError {
    /// The tool error for the glob given as `field` of a call to `tool`.
    pub fn for_field(self, tool: &str, field: &str) -> ToolError {
        let message = self.0.replace(FIELD, field);
        ToolError::invalid(format!("{tool}: invalid arguments: {field}: {message}"))
    }
}

/// Where a [`GlobError`]'s message names the field it is about.
const FIELD: &str = "\u{0}field\u{0}";

/// The drive of `glob` and the rest of it, its names between `/`, when it is absolute: from `/`
/// (drive `""`), or on Windows also from a drive, `C:\…` or `C:/…` (where `\` separates names).
fn absolute(glob: &str) -> Option<(&str, String)> {
    if glob.starts_with('/') {
        return Some(("", glob.to_owned()));
    }
    let bytes = glob.as_bytes();
    let drive = bytes.len() > 2
        && bytes[0].is_ascii_alphabetic()
        && bytes[1] == b':'
        && matches!(bytes[2], b'/' | b'\\');
    (cfg!(windows) && drive).then(|| (&glob[..2], glob[2..].replace('\\', "/")))
}

/// An absolute glob split into the directory to search and the glob relative to it, with the
/// same meaning: the directory is the deepest one named before the first wildcard, and one more
/// name goes into the glob when it would otherwise have no `/` (a glob without one matches names
/// at any depth, which the absolute glob did not).
fn split_absolute(glob: &str) -> (String, String) {
    let parts: Vec<&str> = glob.trim_start_matches('/').split('/').collect();
    let wild = |part: &&str| part.contains(['*', '?', '[', '{']);
    let first_wild = parts.iter().position(wild).unwrap_or(parts.len() - 1);
    let split = if first_wild + 1 == parts.len() {
        first_wild.saturating_sub(1)
    } else {
        first_wild
    };
    (
        format!("/{}", parts[..split].join("/")),
        parts[split..].join("/"),
    )
}

/// The longest glob accepted (a path can have at most 4096 bytes, so a longer glob matches nothing a
/// shorter one would not).
const PATTERN_MAX_BYTES: usize = 4096;

impl PathGlob {
    /// Compiles `pattern`, or says why it is refused.
    pub fn new(pattern: &str) -> Result<Self, GlobError> {
        // globset panics ("regex compilation shouldn't fail") on a glob whose regex exceeds the
        // regex size limit, e.g. 5 MB of letters (tests/hostile-input): no real glob is that long.
        if pattern.len() > PATTERN_MAX_BYTES {
            return Err(GlobError(format!(
                "is {} bytes long, over the {PATTERN_MAX_BYTES} bytes a glob may have; use a shorter pattern",
                pattern.len()
            )));
        }
        let mut glob = pattern;
        while let Some(rest) = glob.strip_prefix("./") {
            glob = rest;
        }
        if let Some((drive, glob)) = absolute(glob) {
            let (dir, rest) = split_absolute(&glob);
            // A drive's path is shown as Windows writes it.
            let dir = match drive {
                "" => dir,
                drive => format!("{drive}{}", dir.replace('/', "\\")),
            };
            let quote = |s: &str| serde_json::to_string(&echo(s)).unwrap_or_default();
            return Err(GlobError(format!(
                "`{}` is absolute, but it is matched against paths relative to the searched directory: give path: {} and {FIELD}: {} instead",
                echo(pattern),
                quote(&dir),
                quote(&rest)
            )));
        }
        if glob.split('/').any(|part| part == "..") {
            return Err(GlobError(format!(
                "`{}` contains `..`; the glob matches paths below the searched directory, so set path to the directory to search instead",
                echo(pattern)
            )));
        }
        // `dir/` means everything below `dir`.
        let owned;
        if glob.ends_with('/') {
            owned = format!("{glob}**");
            glob = &owned;
        }
        if glob.is_empty() {
            return Err(GlobError("must not be empty".into()));
        }
        let matcher = GlobBuilder::new(glob)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| GlobError(format!("invalid glob `{}`: {}", echo(pattern), e.kind())))?
            .compile_matcher();
        Ok(Self {
            matcher,
            name_only: !glob.contains('/'),
        })
    }

    /// Whether the file at `rel` (relative to the searched directory) matches.
    pub fn is_match(&self, rel: &Path) -> bool {
        if self.name_only {
            rel.file_name()
                .is_some_and(|name| self.matcher.is_match(Path::new(name)))
        } else {
            self.matcher.is_match(rel)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    /// The split keeps the glob's meaning: what it matched below the directory, and only that.
    #[test]
    fn an_absolute_glob_splits_into_a_directory_and_a_relative_glob() {
        let split = |g: &str| split_absolute(g);
        let pair = |d: &str, r: &str| (d.to_owned(), r.to_owned());
        assert_eq!(split("/w/src/**/*.ts"), pair("/w/src", "**/*.ts"));
        assert_eq!(split("/w/src/*.txt"), pair("/w", "src/*.txt"));
        assert_eq!(split("/w/a.txt"), pair("/", "w/a.txt"));
        assert_eq!(split("/*.txt"), pair("/", "*.txt"));
        assert_eq!(split("/w/*/x/*.rs"), pair("/w", "*/x/*.rs"));
    }

    fn glob(p: &str) -> PathGlob {
        PathGlob::new(p).unwrap()
    }

    #[test]
    fn a_glob_without_a_slash_matches_names_at_any_depth() {
        let g = glob("*.rs");
        assert!(g.is_match(Path::new("main.rs")));
        assert!(g.is_match(Path::new("src/deep/lib.rs")));
        assert!(!g.is_match(Path::new("src/main.rs.bak")));
        let g = glob("*.{ts,tsx}");
        assert!(g.is_match(Path::new("a/b.tsx")) && g.is_match(Path::new("c.ts")));
    }

    #[test]
    fn a_glob_with_a_slash_matches_the_relative_path() {
        let g = glob("src/*.rs");
        assert!(g.is_match(Path::new("src/main.rs")));
        assert!(!g.is_match(Path::new("src/a/main.rs")));
        assert!(!g.is_match(Path::new("x/src/main.rs")));
        let g = glob("**/*.rs");
        assert!(g.is_match(Path::new("main.rs")) && g.is_match(Path::new("a/b/c.rs")));
        let g = glob("./src/**");
        assert!(g.is_match(Path::new("src/a/b.txt")));
        let g = glob("src/");
        assert!(g.is_match(Path::new("src/a/b.txt")) && !g.is_match(Path::new("srcx/a")));
    }

    #[test]
    fn bad_globs_are_refused_with_a_reason() {
        let e = PathGlob::new("a[")
            .unwrap_err()
            .for_field("glob", "pattern");
        assert_eq!(e.code, ErrorCode::InvalidArguments);
        assert!(
            e.message
                .starts_with("glob: invalid arguments: pattern: invalid glob `a[`"),
            "{}",
            e.message
        );
        assert!(PathGlob::new("/etc/*").unwrap_err().0.contains("absolute"));
        let e = PathGlob::new("/w/src/*.txt")
            .unwrap_err()
            .for_field("glob", "pattern");
        assert_eq!(
            e.message,
            "glob: invalid arguments: pattern: `/w/src/*.txt` is absolute, but it is matched against paths relative to the searched directory: give path: \"/w\" and pattern: \"src/*.txt\" instead"
        );
        assert!(PathGlob::new("../*.rs").unwrap_err().0.contains(".."));
    }

    /// A path from a drive is absolute on Windows, whichever separator it is written with; on
    /// Unix `C:` is a name like any other.
    #[test]
    fn a_glob_from_a_drive_is_absolute_on_windows_only() {
        for pattern in ["C:\\w\\src/*.txt", "C:/w/src/*.txt"] {
            let refused = PathGlob::new(pattern);
            if cfg!(windows) {
                let message = refused.unwrap_err().for_field("glob", "pattern").message;
                assert!(
                    message.ends_with("give path: \"C:\\\\w\" and pattern: \"src/*.txt\" instead"),
                    "{message}"
                );
            } else {
                assert!(refused.is_ok(), "{pattern}");
            }
        }
    }
}
