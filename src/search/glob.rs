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
        ToolError::invalid(format!("{tool}: invalid arguments: {field}: {}", self.0))
    }
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
        if glob.starts_with('/') {
            return Err(GlobError(format!(
                "`{}` is absolute; the glob matches paths relative to the searched directory, so put the directory in path and the rest in the pattern (e.g. path: \"/src\", pattern: \"**/*.ts\")",
                echo(pattern)
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
        assert!(PathGlob::new("../*.rs").unwrap_err().0.contains(".."));
    }
}
