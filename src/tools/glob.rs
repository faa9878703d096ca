//! `glob`: the files below a directory whose path matches a glob, newest first, bounded by
//! `listMaxEntries`. The walk is [`crate::walk`] (through descriptors, on all cores): `.git`,
//! the trash and (unless `includeIgnored`) what `.gitignore` ignores are skipped, and symlinks
//! are never followed, so the search stays inside the tree that was checked. `grep` shares the
//! walk and the glob syntax.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};
use serde::Deserialize;
use serde_json::{json, Value};

use super::{object_schema, parse_args, ToolSpec};
use crate::call::{Authorization, BoxFuture, Call, Outcome, Success};
use crate::cancel::CancelToken;
use crate::error::ToolError;
use crate::paths::fsops::{self, EntryKind};
use crate::paths::sandbox::FinalLink;
use crate::paths::{Sandbox, Target};
use crate::permissions::Operation;
use crate::walk::{self, WalkOptions};

pub static SPEC: ToolSpec = ToolSpec {
    name: "glob",
    description: "Find files by name with a glob pattern, such as `**/*.ts`, `*.py` or `src/**/test_*.rs`. \
A pattern without `/` matches file names at any depth (`*.rs` finds every Rust file); a pattern with `/` matches the \
path relative to the searched directory. `*` and `?` stay within one directory, `**` spans directories, `{a,b}` \
matches either, `[abc]` one character of a set. Returns one file per line, as a path relative to the searched \
directory (path, default the current working directory), most recently modified first. Skips .git and files ignored \
by .gitignore unless includeIgnored is true; symbolic links are not followed. Output is capped; use a more specific \
pattern or directory to narrow it. To search file contents, use grep.",
    schema,
    mutates: false,
    destructive: false,
    idempotent: true,
    path_argument: Some("path"),
    format_call,
    run,
};

fn schema() -> Value {
    object_schema(
        json!({
            "pattern": { "type": "string", "minLength": 1, "description": "The glob to match against file paths relative to the searched directory, e.g. `**/*.ts`, `*.{js,jsx}` or `src/**/mod.rs`. Without a `/` it matches file names at any depth." },
            "path": { "type": "string", "minLength": 1, "description": "The directory to search, absolute or relative to the current working directory. Default: the current working directory." },
            "includeIgnored": { "type": "boolean", "description": "Also find files that .gitignore ignores (such as node_modules or build output). Default false." },
        }),
        &["pattern"],
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Args {
    pattern: String,
    path: Option<String>,
    #[serde(default)]
    include_ignored: bool,
}

/// `pattern` or `pattern in path`.
fn format_call(args: &Value) -> String {
    let pattern = args.get("pattern").and_then(Value::as_str).unwrap_or("");
    match args.get("path").and_then(Value::as_str) {
        Some(path) => format!("{pattern} in {path}"),
        None => pattern.to_owned(),
    }
}

fn run(call: &Call, args: Value) -> BoxFuture<'_, Outcome> {
    Box::pin(async move {
        let args: Args = parse_args("glob", args)?;
        let matcher = PathGlob::new(&args.pattern).map_err(|e| e.for_field("glob", "pattern"))?;
        let target = call.resolve(
            args.path.as_deref().unwrap_or("."),
            "path",
            FinalLink::Follow,
        )?;
        let checked = target.clone();
        // Opened once, before asking: what is searched is the directory that was checked.
        let dir = call
            .blocking(move || open_search_dir(&checked, "glob"))
            .await?;
        call.authorize(Authorization::of(
            Operation::Read,
            &target,
            "Search files?",
            "The user denied this read.",
        ))
        .await?;
        let max = call.limits().list_max_entries as usize;
        let sandbox = call.ws.sandbox().clone();
        let cancel = call.cancel.clone();
        let searched = target.clone();
        let include_ignored = args.include_ignored;
        let mut found = call
            .blocking(move || find(dir, &searched, &sandbox, include_ignored, &matcher, &cancel))
            .await?;
        call.check_abort()?;
        let total = found.len();
        sort_newest_first(&mut found);
        let shown: Vec<String> = found
            .iter()
            .take(max)
            .map(|f| f.rel.display().to_string())
            .collect();
        let text = render(
            &shown,
            total,
            max,
            &args.pattern,
            &target.path,
            include_ignored,
        );
        let success = Success::text(text)
            .with_data("path", target.path.display().to_string())
            .with_data("files", shown.len())
            .with_data("total", total)
            .with_data("truncated", total > max);
        Ok(success)
    })
}

/// A file the glob matched.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Found {
    rel: PathBuf,
    /// Modification time in nanoseconds since the epoch.
    mtime: i128,
}

/// Every matching regular file below `dir` (open, at `target`), in walk order.
fn find(
    dir: OwnedFd,
    target: &Target,
    sandbox: &Sandbox,
    include_ignored: bool,
    matcher: &PathGlob,
    cancel: &CancelToken,
) -> Result<Vec<Found>, ToolError> {
    let options = WalkOptions {
        sandbox,
        include_ignored,
        limit: None, // all of them: the newest are shown
        cancel,
    };
    let walked = walk::walk(dir, target, &options, |entry| {
        if entry.kind != EntryKind::File || !matcher.is_match(entry.rel) {
            return None;
        }
        let stat = fsops::lstat_at(entry.dir, entry.name).ok()??;
        (EntryKind::of(&stat) == EntryKind::File).then(|| Found {
            rel: entry.rel.to_path_buf(),
            mtime: i128::from(stat.st_mtime) * 1_000_000_000 + i128::from(stat.st_mtime_nsec),
        })
    })?;
    Ok(walked.items)
}

/// Newest first; equal times by path, so the output is deterministic.
fn sort_newest_first(found: &mut [Found]) {
    found.sort_unstable_by(|a, b| b.mtime.cmp(&a.mtime).then_with(|| a.rel.cmp(&b.rel)));
}

fn render(
    shown: &[String],
    total: usize,
    max: usize,
    pattern: &str,
    dir: &Path,
    include_ignored: bool,
) -> String {
    if shown.is_empty() {
        let mut text = format!("No files match `{pattern}` in {}.", dir.display());
        if !include_ignored {
            text.push_str(" Files ignored by .gitignore were skipped; set includeIgnored: true to include them.");
        }
        return text;
    }
    let mut text = shown.join("\n");
    if total > max {
        text.push_str(&format!(
            "\n[Found {total} files; showing the {max} most recently modified. Use a more specific pattern or a subdirectory as path to narrow the search.]"
        ));
    }
    text
}

/// Opens the directory to search (readable), with the SPEC's messages for what is not one.
pub(super) fn open_search_dir(target: &Target, tool: &str) -> Result<OwnedFd, ToolError> {
    let hint = format!("{tool} searches a directory (use read_file to read a file)");
    super::files::open_directory(target, true, "search", &hint)
}

/// A glob as the search tools take it: without a `/` it matches a file name at any depth (like
/// a `.gitignore` line or `rg -g`); with one it matches the whole path relative to the searched
/// directory. `*` never crosses a `/`.
#[derive(Debug, Clone)]
pub(super) struct PathGlob {
    matcher: GlobMatcher,
    name_only: bool,
}

/// Why a glob was refused, as a message without the tool and field (see [`GlobError::for_field`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct GlobError(String);

impl GlobError {
    pub(super) fn for_field(self, tool: &str, field: &str) -> ToolError {
        ToolError::invalid(format!("{tool}: invalid arguments: {field}: {}", self.0))
    }
}

/// The longest glob accepted (a path can have at most 4096 bytes, so a longer glob matches nothing a
/// shorter one would not).
const PATTERN_MAX_BYTES: usize = 4096;

impl PathGlob {
    pub(super) fn new(pattern: &str) -> Result<Self, GlobError> {
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
                "`{pattern}` is absolute; the glob matches paths relative to the searched directory, so put the directory in path and the rest in the pattern (e.g. path: \"/src\", pattern: \"**/*.ts\")"
            )));
        }
        if glob.split('/').any(|part| part == "..") {
            return Err(GlobError(format!(
                "`{pattern}` contains `..`; the glob matches paths below the searched directory, so set path to the directory to search instead"
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
            .map_err(|e| GlobError(format!("invalid glob `{pattern}`: {}", e.kind())))?
            .compile_matcher();
        Ok(Self {
            matcher,
            name_only: !glob.contains('/'),
        })
    }

    /// Whether the file at `rel` (relative to the searched directory) matches.
    pub(super) fn is_match(&self, rel: &Path) -> bool {
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

    #[test]
    fn newest_first_then_by_path() {
        let f = |rel: &str, mtime| Found {
            rel: PathBuf::from(rel),
            mtime,
        };
        let mut found = vec![f("b", 1), f("a", 1), f("c", 5), f("d", 0)];
        sort_newest_first(&mut found);
        let order: Vec<_> = found.iter().map(|f| f.rel.display().to_string()).collect();
        assert_eq!(order, ["c", "a", "b", "d"]);
    }

    #[test]
    fn render_says_how_to_narrow() {
        let dir = Path::new("/w");
        assert_eq!(
            render(&["a".into(), "b".into()], 2, 2, "*", dir, false),
            "a\nb"
        );
        let cut = render(&["a".into(), "b".into()], 7, 2, "*", dir, false);
        assert_eq!(
            cut,
            "a\nb\n[Found 7 files; showing the 2 most recently modified. Use a more specific pattern or a subdirectory as path to narrow the search.]"
        );
        let none = render(&[], 0, 2, "*.zig", dir, false);
        assert!(
            none.starts_with("No files match `*.zig` in /w.") && none.contains("includeIgnored")
        );
        assert!(!render(&[], 0, 2, "*.zig", dir, true).contains("includeIgnored"));
    }
}
