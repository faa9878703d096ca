//! `glob`: the files below a directory whose path matches a glob, newest first, bounded by
//! `listMaxEntries`. The walk is ripgrep's (`ignore`, in parallel): `.git`, the trash and (unless
//! `includeIgnored`) what `.gitignore` ignores are skipped, and symlinks are never followed, so
//! the search stays inside the tree that was checked. `grep` shares the walk and the glob syntax.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use globset::{GlobBuilder, GlobMatcher};
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkState};
use serde::Deserialize;
use serde_json::{json, Value};

use super::{object_schema, parse_args, ToolSpec};
use crate::call::{Authorization, BoxFuture, Call, Outcome, Success};
use crate::cancel::CancelToken;
use crate::error::ToolError;
use crate::paths::sandbox::FinalLink;
use crate::paths::{Sandbox, Target};
use crate::permissions::Operation;

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
        call.blocking(move || open_search_dir(&checked, "glob").map(drop))
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
            .blocking(move || find(&searched, &sandbox, include_ignored, &matcher, &cancel))
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
        let mut success = Success::text(text)
            .with_data("path", target.path.display().to_string())
            .with_data("files", shown.len())
            .with_data("total", total)
            .with_data("truncated", total > max);
        success.path = Some(target.path);
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

/// Every matching file below `root` (in no particular order).
fn find(
    dir: &Target,
    sandbox: &Sandbox,
    include_ignored: bool,
    matcher: &PathGlob,
    cancel: &CancelToken,
) -> Result<Vec<Found>, ToolError> {
    let per_thread = walk_files(
        dir,
        sandbox,
        include_ignored,
        cancel,
        Vec::new,
        |found: &mut Vec<Found>, entry, rel| {
            if !matcher.is_match(rel) {
                return;
            }
            let Ok(meta) = entry.metadata() else { return };
            found.push(Found {
                rel: rel.to_path_buf(),
                mtime: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
            });
        },
    )?;
    Ok(per_thread.into_iter().flatten().collect())
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

/// Opens the directory to search, with the SPEC's messages for what is not one.
pub(super) fn open_search_dir(
    target: &Target,
    tool: &str,
) -> Result<std::os::fd::OwnedFd, ToolError> {
    let hint = format!("{tool} searches a directory (use read_file to read a file)");
    super::files::open_directory(target, false, "search", &hint)
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

/// Walks the regular files below `root` in parallel and returns each worker thread's `S`.
///
/// Skipped: `.git`, the hidden trash directories and, unless `include_ignored`, whatever
/// `.gitignore` files (and `.git/info/exclude`) ignore. Symlinks are neither followed nor visited,
/// so nothing outside the tree that was checked is reached. `visit` gets each file's entry and its
/// path relative to `root`. An abort stops the walk: `ABORTED`.
pub(super) fn walk_files<S, M, V>(
    dir: &Target,
    sandbox: &Sandbox,
    include_ignored: bool,
    cancel: &CancelToken,
    make: M,
    visit: V,
) -> Result<Vec<S>, ToolError>
where
    S: Send,
    M: Fn() -> S + Sync,
    V: Fn(&mut S, &DirEntry, &Path) + Sync,
{
    let root = dir.path.as_path();
    let hidden = sandbox.clone();
    let mut builder = ignore::WalkBuilder::new(root);
    builder
        .hidden(false)
        .ignore(false)
        .git_global(false)
        .git_ignore(!include_ignored)
        .git_exclude(!include_ignored)
        .parents(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(move |e| {
            e.file_name() != ".git"
                && !crate::paths::fsops::is_temp_name(e.file_name())
                && !hidden.is_hidden(e.path())
        });
    if !include_ignored {
        for file in super::gitignore_scope::outer_gitignores(dir, sandbox.root()) {
            // A file that cannot be read or parsed is skipped, like git does.
            let _ = builder.add_ignore(file);
        }
    }
    let walker = builder.build_parallel();
    let out = Mutex::new(Vec::new());
    let mut visitors = Builder {
        root,
        cancel,
        make: &make,
        visit: &visit,
        out: &out,
    };
    walker.visit(&mut visitors);
    if cancel.is_aborted() {
        return Err(ToolError::aborted());
    }
    Ok(out.into_inner().unwrap_or_else(|e| e.into_inner()))
}

struct Builder<'a, S, M, V> {
    root: &'a Path,
    cancel: &'a CancelToken,
    make: &'a M,
    visit: &'a V,
    out: &'a Mutex<Vec<S>>,
}

impl<'a, S, M, V> ParallelVisitorBuilder<'a> for Builder<'a, S, M, V>
where
    S: Send,
    M: Fn() -> S + Sync,
    V: Fn(&mut S, &DirEntry, &Path) + Sync,
{
    fn build(&mut self) -> Box<dyn ParallelVisitor + 'a> {
        Box::new(Visitor {
            root: self.root,
            cancel: self.cancel,
            visit: self.visit,
            out: self.out,
            state: Some((self.make)()),
        })
    }
}

/// One worker thread's visitor; its state joins the results when the thread is done.
struct Visitor<'a, S, V> {
    root: &'a Path,
    cancel: &'a CancelToken,
    visit: &'a V,
    out: &'a Mutex<Vec<S>>,
    state: Option<S>,
}

impl<S, V> ParallelVisitor for Visitor<'_, S, V>
where
    S: Send,
    V: Fn(&mut S, &DirEntry, &Path) + Sync,
{
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        if self.cancel.is_aborted() {
            return WalkState::Quit;
        }
        let Ok(entry) = entry else {
            return WalkState::Continue; // unreadable directory: skipped, like rg
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            return WalkState::Continue;
        }
        let rel = entry.path().strip_prefix(self.root).unwrap_or(entry.path());
        if let Some(state) = self.state.as_mut() {
            (self.visit)(state, &entry, rel);
        }
        WalkState::Continue
    }
}

impl<S, V> Drop for Visitor<'_, S, V> {
    fn drop(&mut self) {
        if let Some(state) = self.state.take() {
            self.out
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(state);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use std::fs;

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

    #[test]
    fn the_walk_skips_git_ignored_trash_and_links_and_stops_on_abort() {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        let root = base.join("root");
        for d in [
            "root/.git",
            "root/src",
            "root/node_modules",
            "root/.trash",
            "outside",
        ] {
            fs::create_dir_all(base.join(d)).unwrap();
        }
        for f in [
            "root/.git/HEAD",
            "root/src/a.rs",
            "root/node_modules/m.js",
            "root/.trash/t.gz",
            "root/top.txt",
            "outside/secret.txt",
        ] {
            fs::write(base.join(f), "x").unwrap();
        }
        fs::write(root.join(".gitignore"), "node_modules/\n").unwrap();
        std::os::unix::fs::symlink(base.join("outside"), root.join("out")).unwrap();
        std::os::unix::fs::symlink(base.join("outside/secret.txt"), root.join("s.txt")).unwrap();
        let sandbox = Sandbox::new(
            root.clone(),
            Some(vec![root.clone()]),
            vec![root.join(".trash")],
        );
        let dir = Target {
            path: root.clone(),
            anchor: root.clone(),
            inside_root: true,
            exists: true,
        };
        let files = |include_ignored| {
            let mut all: Vec<String> = walk_files(
                &dir,
                &sandbox,
                include_ignored,
                &CancelToken::new(),
                Vec::new,
                |v: &mut Vec<String>, _, rel| v.push(rel.display().to_string()),
            )
            .unwrap()
            .into_iter()
            .flatten()
            .collect();
            all.sort();
            all
        };
        assert_eq!(files(false), [".gitignore", "src/a.rs", "top.txt"]);
        assert_eq!(
            files(true),
            [".gitignore", "node_modules/m.js", "src/a.rs", "top.txt"]
        );
        // A subdirectory's search still applies the repository's outer .gitignore.
        fs::write(root.join(".gitignore"), "node_modules/\n*.log\n").unwrap();
        fs::write(root.join("src/debug.log"), "x").unwrap();
        let src = Target {
            path: root.join("src"),
            ..dir.clone()
        };
        let in_src = walk_files(
            &src,
            &sandbox,
            false,
            &CancelToken::new(),
            Vec::new,
            |v: &mut Vec<String>, _, rel| v.push(rel.display().to_string()),
        )
        .unwrap();
        assert_eq!(in_src.concat(), ["a.rs"]);
        let cancel = CancelToken::new();
        let aborted = walk_files(
            &dir,
            &sandbox,
            false,
            &cancel,
            || (),
            |_, _, _| cancel.abort(),
        );
        assert_eq!(aborted.unwrap_err().code, ErrorCode::Aborted);
    }
}
