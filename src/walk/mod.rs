//! The tree walk behind `list_directory`, `glob` and `grep`: depth first in name order, through
//! directory descriptors only, gitignore-aware, on all cores.
//!
//! **Race-free.** The walked directory is opened beneath its anchor with `RESOLVE_NO_SYMLINKS`
//! by the caller; every subdirectory is opened with `openat(O_NOFOLLOW | O_DIRECTORY)` on its
//! parent's descriptor, and the visitor gets that parent descriptor for its own `*at` calls. A
//! directory swapped for a symlink to an outside tree while the walk runs is therefore not
//! descended: its target's names are never read. (A path-based walker, such as the `ignore`
//! crate's, re-resolves each directory by path when it descends and lists whatever a swapped
//! link points to; `tests/races.rs` caught it.) Symlinks are never followed.
//!
//! **Skipped:** `.git`, the hidden trash directories (by name, and by identity when reached under
//! another name: their contents are never read), our own atomic-write temp files and, unless
//! `include_ignored`, whatever the ignore rules ([`ignore_rules`]) ignore.
//!
//! **Fast.** Entry types come from the directory listing (`d_type`), so nothing is `lstat`ed
//! unless the file system does not say or the visitor asks. Directories are read by a small
//! pool of threads (the caller's and up to `available_parallelism - 1` more, started only when
//! there is more than one directory waiting), earliest in walk order first, and the results are
//! put back in walk order at the end. With a `limit`, the walk stops as soon as the first
//! `limit` items (and whether there are more) are known.

pub mod ignore_rules;

use std::collections::BinaryHeap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use crate::cancel::CancelToken;
use crate::error::ToolError;
use crate::paths::fsops;
use crate::paths::{AsDir, BorrowedDir, Dir};
use crate::paths::{EntryKind, FileId};
use crate::paths::{Sandbox, Target};
pub use ignore_rules::IgnoreRules;

/// How to walk.
pub struct WalkOptions<'a> {
    /// Whose hidden directories to skip and whose root bounds the outer ignore files.
    pub sandbox: &'a Sandbox,
    /// Also walk what the ignore rules ignore.
    pub include_ignored: bool,
    /// Keep only the first `limit` items in walk order, and stop once they are known.
    pub limit: Option<usize>,
    /// Polled between directories (and every few hundred entries): an abort ends the walk
    /// with `ABORTED`.
    pub cancel: &'a CancelToken,
}

/// An entry the walk found and did not skip.
pub struct WalkEntry<'a> {
    /// Its directory, open for reading.
    pub dir: BorrowedDir<'a>,
    pub name: &'a OsStr,
    /// Its path relative to the walked directory.
    pub rel: &'a Path,
    /// What the directory listing says it is (from `lstat` where the file system does not say).
    /// It may have changed since: a visitor that `lstat`s should trust its own result.
    pub kind: EntryKind,
}

/// The visitor's items in walk order.
#[derive(Debug)]
pub struct Walked<T> {
    pub items: Vec<T>,
    /// There were more than `limit` items.
    pub truncated: bool,
}

/// Walks the tree below `dir` (open for reading, at `target`), calling `visit` on every entry
/// not skipped, from several threads at once, and returns what it returned in walk order: depth
/// first, each directory's entries sorted by name (bytes), a directory's own item before its
/// contents. Unreadable directories and entries that vanish during the walk are skipped.
pub fn walk<T, V>(
    dir: Dir,
    target: &Target,
    options: &WalkOptions<'_>,
    visit: V,
) -> Result<Walked<T>, ToolError>
where
    T: Send,
    V: Fn(&WalkEntry<'_>) -> Option<T> + Sync,
{
    walk_with(dir, target, options, || (), |_, entry| visit(entry))
}

/// [`walk`], with a state of each thread's own (made by `new_state` on each thread that reads
/// directories) that `visit` is given with every entry the thread visits: for what a visitor
/// reuses from entry to entry, without sharing it between threads.
pub fn walk_with<T, S, N, V>(
    dir: Dir,
    target: &Target,
    options: &WalkOptions<'_>,
    new_state: N,
    visit: V,
) -> Result<Walked<T>, ToolError>
where
    T: Send,
    N: Fn() -> S + Sync,
    V: Fn(&mut S, &WalkEntry<'_>) -> Option<T> + Sync,
{
    let rules = if options.include_ignored {
        IgnoreRules::default()
    } else {
        IgnoreRules::for_walk(target, options.sandbox.root())
    };
    let root = Task {
        key: Vec::new(),
        node: 0,
        source: Source::Root(dir),
        abs: target.path.clone(),
        rel: PathBuf::new(),
        rules,
    };
    let helpers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, MAX_THREADS)
        - 1;
    let walker = Walker {
        options,
        new_state: &new_state,
        visit: &visit,
        state: Mutex::new(State {
            queue: BinaryHeap::from([root]),
            busy: 0,
            found: Vec::new(),
            items: 0,
            done: false,
        }),
        wake: Condvar::new(),
        next_node: AtomicUsize::new(1),
        stop: AtomicBool::new(false),
        hidden: options.sandbox.hidden_identities(),
        hidden_names: options.sandbox.hidden_names(),
    };
    std::thread::scope(|scope| {
        let mut started = 0;
        walker.work(&mut || {
            if started < helpers {
                started += 1;
                scope.spawn(|| walker.work(&mut || false));
                true
            } else {
                false
            }
        });
    });
    if options.cancel.is_aborted() {
        return Err(ToolError::aborted());
    }
    let state = walker.state.into_inner().unwrap_or_else(|e| e.into_inner());
    Ok(in_walk_order(state.found, options.limit))
}

/// The most threads one walk uses.
const MAX_THREADS: usize = 8;

/// Bytes of directory entries read per `getdents64` call (Linux; the buffer is reused).
const DIRENT_BUFFER_BYTES: usize = 32 * 1024;

/// A directory's index among all directories found by the walk (the walked one is 0).
type NodeId = usize;

/// One directory's findings in walk order: an item, a subdirectory to put in its place, or both
/// (a directory's own item followed by its contents).
type Found<T> = Vec<(Option<T>, Option<NodeId>)>;

/// A directory waiting to be read.
struct Task {
    /// Its place in walk order: the index of each of its ancestors' entries leading to it.
    key: Vec<u32>,
    node: NodeId,
    source: Source,
    abs: PathBuf,
    rel: PathBuf,
    /// The ignore rules of its parent.
    rules: IgnoreRules,
}

/// How to open a waiting directory.
enum Source {
    Root(Dir),
    /// `name` in `parent`, never following a symlink.
    Child {
        parent: Arc<Dir>,
        name: OsString,
    },
}

// The queue serves the earliest task in walk order first (`BinaryHeap` pops the greatest).
impl Ord for Task {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other.key.cmp(&self.key)
    }
}
impl PartialOrd for Task {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl PartialEq for Task {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl Eq for Task {}

struct State<T> {
    queue: BinaryHeap<Task>,
    /// Directories being read right now.
    busy: usize,
    /// Each directory's findings, by node; `None` until it has been read.
    found: Vec<Option<Found<T>>>,
    /// Items found so far.
    items: usize,
    done: bool,
}

struct Walker<'a, T, N, V> {
    options: &'a WalkOptions<'a>,
    new_state: &'a N,
    visit: &'a V,
    state: Mutex<State<T>>,
    wake: Condvar,
    next_node: AtomicUsize,
    /// Set once the walk should end early (aborted, or the limit's items are known).
    stop: AtomicBool,
    /// The hidden directories' identities and names: one reached under another path (a bind
    /// mount, a macOS firmlink) is recognised by its identity when its name comes up, and is
    /// neither visited nor read.
    hidden: Vec<FileId>,
    hidden_names: Vec<OsString>,
}

impl<T, S, N, V> Walker<'_, T, N, V>
where
    T: Send,
    N: Fn() -> S + Sync,
    V: Fn(&mut S, &WalkEntry<'_>) -> Option<T> + Sync,
{
    /// Reads directories until none is left or the walk stops. `more_help` starts another
    /// thread running this (it says whether it did), asked when directories are waiting.
    fn work(&self, more_help: &mut dyn FnMut() -> bool) {
        let mut buffer: Vec<u8> = Vec::with_capacity(DIRENT_BUFFER_BYTES);
        let mut visitor_state = (self.new_state)();
        let mut helping = true;
        let mut state = self.lock();
        loop {
            if state.done {
                break;
            }
            if self.stop.load(Ordering::Relaxed) || self.options.cancel.is_aborted() {
                state.done = true;
                self.wake.notify_all();
                break;
            }
            let Some(task) = state.queue.pop() else {
                if state.busy == 0 {
                    state.done = true;
                    self.wake.notify_all();
                    break;
                }
                state = self.wake.wait(state).unwrap_or_else(|e| e.into_inner());
                continue;
            };
            if helping && !state.queue.is_empty() {
                helping = more_help();
            }
            state.busy += 1;
            drop(state);
            let node = task.node;
            let panic_guard = EndOnPanic(self);
            let (found, children) = self.read_directory(task, &mut buffer, &mut visitor_state);
            std::mem::forget(panic_guard);
            state = self.lock();
            state.busy -= 1;
            state.items += found.iter().filter(|(item, _)| item.is_some()).count();
            if state.found.len() <= node {
                state.found.resize_with(node + 1, || None);
            }
            state.found[node] = Some(found);
            state.queue.extend(children);
            if let Some(limit) = self.options.limit {
                if state.items > limit && knows_first(&state.found, limit + 1) {
                    self.stop.store(true, Ordering::Relaxed);
                }
            }
            self.wake.notify_all();
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the subdirectory `name` of `dir` is a hidden directory reached under another
    /// path (same name, same device and inode).
    fn is_hidden_elsewhere(&self, dir: BorrowedDir<'_>, name: &OsStr) -> bool {
        self.hidden_names.iter().any(|hidden| hidden == name)
            && fsops::lstat_at(dir, name)
                .is_ok_and(|stat| stat.is_some_and(|s| self.hidden.contains(&s.id())))
    }

    /// Reads one directory: its findings, and the subdirectories to read next.
    fn read_directory(
        &self,
        task: Task,
        buffer: &mut Vec<u8>,
        visitor_state: &mut S,
    ) -> (Found<T>, Vec<Task>) {
        let nothing = || (Vec::new(), Vec::new());
        let dir = match task.source {
            Source::Root(fd) => fd,
            // Swapped for a link, unreadable or gone since it was listed: not descended.
            Source::Child { parent, name } => match fsops::open_subdir(parent.as_dir(), &name) {
                Ok(fd) => fd,
                Err(_) => return nothing(),
            },
        };
        let Ok(mut entries) = fsops::read_entries(dir.as_dir(), buffer) else {
            return nothing();
        };
        entries.sort_unstable_by(|a, b| a.0.as_encoded_bytes().cmp(b.0.as_encoded_bytes()));
        let options = self.options;
        let rules = if options.include_ignored {
            task.rules
        } else {
            let has = |wanted: &str| entries.iter().any(|(name, _)| name == wanted);
            task.rules
                .enter(dir.as_dir(), &task.abs, has(".gitignore"), has(".git"))
        };
        let may_hide = options.sandbox.may_hold_hidden(&task.abs);
        let dir = Arc::new(dir);
        let mut abs = PathBuffer::new(task.abs);
        let mut rel = PathBuffer::new(task.rel);
        let mut found = Vec::new();
        let mut children = Vec::new();
        for (index, (name, listed_kind)) in entries.iter().enumerate() {
            if index % 256 == 255 && self.should_stop() {
                break;
            }
            if name == ".git" || fsops::is_temp_name(name) {
                continue;
            }
            let kind = match listed_kind {
                Some(kind) => *kind,
                None => match fsops::lstat_at(dir.as_dir(), name) {
                    Ok(Some(stat)) => EntryKind::of(&stat),
                    _ => continue, // gone, or cannot be looked at
                },
            };
            let is_dir = kind == EntryKind::Directory;
            if is_dir && self.is_hidden_elsewhere(dir.as_dir(), name) {
                continue;
            }
            abs.push(name);
            rel.push(name);
            let skipped = (may_hide && options.sandbox.is_hidden(abs.path()))
                || rules.is_ignored(abs.path(), is_dir);
            if !skipped {
                let item = (self.visit)(
                    visitor_state,
                    &WalkEntry {
                        dir: dir.as_dir(),
                        name,
                        rel: rel.path(),
                        kind,
                    },
                );
                let child = is_dir.then(|| {
                    let node = self.next_node.fetch_add(1, Ordering::Relaxed);
                    let mut key = Vec::with_capacity(task.key.len() + 1);
                    key.extend_from_slice(&task.key);
                    key.push(index as u32);
                    children.push(Task {
                        key,
                        node,
                        source: Source::Child {
                            parent: dir.clone(),
                            name: name.clone(),
                        },
                        abs: abs.path().to_path_buf(),
                        rel: rel.path().to_path_buf(),
                        rules: rules.clone(),
                    });
                    node
                });
                if item.is_some() || child.is_some() {
                    found.push((item, child));
                }
            }
        }
        (found, children)
    }

    fn should_stop(&self) -> bool {
        if self.stop.load(Ordering::Relaxed) {
            return true;
        }
        if self.options.cancel.is_aborted() {
            self.stop.store(true, Ordering::Relaxed);
            return true;
        }
        false
    }
}

/// A directory's path with one entry's name pushed onto it and popped again, by truncation
/// (`PathBuf::pop` re-parses the components each time).
struct PathBuffer {
    bytes: Vec<u8>,
    dir_len: usize,
}

impl PathBuffer {
    fn new(dir: PathBuf) -> Self {
        let bytes = crate::paths::names::into_vec(dir.into_os_string());
        let dir_len = bytes.len();
        PathBuffer { bytes, dir_len }
    }

    /// The directory's path joined with `name` (replacing the previous one).
    fn push(&mut self, name: &OsStr) {
        self.bytes.truncate(self.dir_len);
        if !self.bytes.is_empty() && !self.bytes.ends_with(b"/") {
            self.bytes.push(b'/');
        }
        self.bytes.extend_from_slice(name.as_encoded_bytes());
    }

    fn path(&self) -> &Path {
        Path::new(crate::paths::names::from_bytes(&self.bytes))
    }
}

/// Ends the walk for every thread if the visitor panics, so that no thread waits forever for
/// the directory it was reading (the panic then surfaces from `walk`).
struct EndOnPanic<'w, 'a, T, N, V>(&'w Walker<'a, T, N, V>);

impl<T, N, V> Drop for EndOnPanic<'_, '_, T, N, V> {
    fn drop(&mut self) {
        self.0.stop.store(true, Ordering::Relaxed);
        let mut state = self.0.state.lock().unwrap_or_else(|e| e.into_inner());
        state.done = true;
        self.0.wake.notify_all();
    }
}

/// Whether the first `need` items in walk order are known (no directory before them is still
/// unread).
fn knows_first<T>(found: &[Option<Found<T>>], need: usize) -> bool {
    let mut seen = 0;
    let mut stack: Vec<(NodeId, usize)> = vec![(0, 0)];
    while let Some((node, index)) = stack.pop() {
        let Some(Some(entries)) = found.get(node) else {
            return false; // not read yet
        };
        let Some((item, child)) = entries.get(index) else {
            continue;
        };
        stack.push((node, index + 1));
        if item.is_some() {
            seen += 1;
            if seen >= need {
                return true;
            }
        }
        if let Some(child) = child {
            stack.push((*child, 0));
        }
    }
    false
}

/// Puts the findings in walk order, keeping at most `limit` items.
fn in_walk_order<T>(mut found: Vec<Option<Found<T>>>, limit: Option<usize>) -> Walked<T> {
    let mut items = Vec::new();
    let mut stack = Vec::new();
    if let Some(Some(top)) = found.get_mut(0).map(Option::take) {
        stack.push(top.into_iter());
    }
    while let Some(entries) = stack.last_mut() {
        let Some((item, child)) = entries.next() else {
            stack.pop();
            continue;
        };
        if let Some(item) = item {
            if limit == Some(items.len()) {
                return Walked {
                    items,
                    truncated: true,
                };
            }
            items.push(item);
        }
        // A directory left unread when the walk stopped early lies past the limit.
        if let Some(Some(sub)) = child.and_then(|c| found.get_mut(c)).map(Option::take) {
            stack.push(sub.into_iter());
        }
    }
    Walked {
        items,
        truncated: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(entries: Vec<(Option<&'static str>, Option<NodeId>)>) -> Option<Found<&'static str>> {
        Some(entries)
    }

    #[test]
    fn findings_are_put_back_in_walk_order_and_cut_at_the_limit() {
        // 0: a/ (→1), b, c/ (→2);  1: a/x;  2: c/y, c/z
        let tree = || {
            vec![
                found(vec![
                    (Some("a/"), Some(1)),
                    (Some("b"), None),
                    (Some("c/"), Some(2)),
                ]),
                found(vec![(Some("a/x"), None)]),
                found(vec![(Some("c/y"), None), (Some("c/z"), None)]),
            ]
        };
        let all = in_walk_order(tree(), None);
        assert_eq!(all.items, ["a/", "a/x", "b", "c/", "c/y", "c/z"]);
        assert!(!all.truncated);
        let cut = in_walk_order(tree(), Some(3));
        assert_eq!(cut.items, ["a/", "a/x", "b"]);
        assert!(cut.truncated);
        let exact = in_walk_order(tree(), Some(6));
        assert!(!exact.truncated);
    }

    #[test]
    fn the_first_items_are_known_only_when_nothing_before_them_is_unread() {
        let mut tree = vec![
            found(vec![
                (Some("a/"), Some(1)),
                (Some("b"), None),
                (Some("c/"), Some(2)),
            ]),
            None, // a/ not read yet
            found(vec![(Some("c/y"), None)]),
        ];
        assert!(knows_first(&tree, 1), "a/ itself is known");
        assert!(!knows_first(&tree, 2), "what follows a/ is not");
        tree[1] = found(vec![]);
        assert!(knows_first(&tree, 4));
        assert!(!knows_first(&tree, 5), "only four items exist");
    }

    mod on_disk {
        use super::super::*;
        use crate::error::ErrorCode;
        use std::fs;

        struct Tree {
            _dir: tempfile::TempDir,
            base: PathBuf,
            root: PathBuf,
            sandbox: Sandbox,
        }

        fn tree() -> Tree {
            let dir = tempfile::tempdir().unwrap();
            let base = crate::paths::canonical::canonicalize_existing(dir.path()).unwrap();
            let root = base.join("root");
            for d in [
                "root/.git/info",
                "root/src",
                "root/node_modules/m",
                "root/.trash",
                "outside",
            ] {
                fs::create_dir_all(base.join(d)).unwrap();
            }
            for f in [
                "root/.git/HEAD",
                "root/src/a.rs",
                "root/node_modules/m/m.js",
                "root/.trash/t.gz",
                "root/top.txt",
                "root/.top.txt.77.1.agent-fs-tools.tmp",
                "outside/secret.txt",
            ] {
                fs::write(base.join(f), "x").unwrap();
            }
            fs::write(root.join(".gitignore"), "node_modules/\n").unwrap();
            crate::paths::testing::symlink(base.join("outside"), root.join("out")).unwrap();
            let sandbox = Sandbox::new(
                root.clone(),
                Some(vec![root.clone()]),
                vec![root.join(".trash")],
            );
            Tree {
                _dir: dir,
                base,
                root,
                sandbox,
            }
        }

        fn target(path: &Path, anchor: &Path) -> Target {
            Target {
                path: path.to_path_buf(),
                anchor: anchor.to_path_buf(),
                inside_root: true,
                exists: true,
            }
        }

        /// Walks `dir` of the fixture with a fresh options set.
        fn walk_in<T: Send>(
            t: &Tree,
            dir: &Path,
            include_ignored: bool,
            limit: Option<usize>,
            cancel: &CancelToken,
            visit: impl Fn(&WalkEntry<'_>) -> Option<T> + Sync,
        ) -> Result<Walked<T>, ToolError> {
            let fd = fsops::open_dir(&t.root, dir, true).unwrap();
            let options = WalkOptions {
                sandbox: &t.sandbox,
                include_ignored,
                limit,
                cancel,
            };
            walk(fd, &target(dir, &t.root), &options, visit)
        }

        /// Every entry's relative path (directories with a `/`), in walk order.
        fn paths(
            t: &Tree,
            dir: &Path,
            include_ignored: bool,
            limit: Option<usize>,
        ) -> Walked<String> {
            walk_in(t, dir, include_ignored, limit, &CancelToken::new(), |e| {
                let slash = if e.kind == EntryKind::Directory {
                    "/"
                } else {
                    ""
                };
                Some(format!("{}{slash}", e.rel.display()))
            })
            .unwrap()
        }

        #[test]
        fn skips_git_ignored_trash_and_temps_and_never_follows_links() {
            let t = tree();
            assert_eq!(
                paths(&t, &t.root, false, None).items,
                [".gitignore", "out", "src/", "src/a.rs", "top.txt"]
            );
            assert_eq!(
                paths(&t, &t.root, true, None).items,
                [
                    ".gitignore",
                    "node_modules/",
                    "node_modules/m/",
                    "node_modules/m/m.js",
                    "out",
                    "src/",
                    "src/a.rs",
                    "top.txt"
                ]
            );
            assert!(t.base.join("outside/secret.txt").exists());
        }

        #[test]
        fn a_subdirectory_walk_applies_the_outer_gitignore_and_exclude_rules_apply() {
            let t = tree();
            fs::write(t.root.join(".gitignore"), "node_modules/\n*.log\n").unwrap();
            fs::write(t.root.join("src/debug.log"), "x").unwrap();
            assert_eq!(paths(&t, &t.root.join("src"), false, None).items, ["a.rs"]);
            fs::write(t.root.join(".git/info/exclude"), "top.txt\n").unwrap();
            assert_eq!(
                paths(&t, &t.root, false, None).items,
                [".gitignore", "out", "src/", "src/a.rs"]
            );
        }

        #[test]
        fn an_abort_ends_the_walk() {
            let t = tree();
            let cancel = CancelToken::new();
            let walked = walk_in(&t, &t.root, false, None, &cancel, |_| {
                cancel.abort();
                Some(())
            });
            assert_eq!(walked.unwrap_err().code, ErrorCode::Aborted);
        }

        #[test]
        fn a_panicking_visitor_ends_the_walk_instead_of_hanging_it() {
            let t = tree();
            for i in 0..40 {
                fs::create_dir_all(t.root.join(format!("p/{i:02}"))).unwrap();
            }
            let walked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                walk_in(&t, &t.root, false, None, &CancelToken::new(), |e| {
                    assert!(e.rel != Path::new("p/07"), "visitor bug");
                    Some(())
                })
            }));
            assert!(walked.is_err(), "the visitor's panic surfaces");
        }

        #[test]
        fn a_limited_walk_of_a_wide_deep_tree_is_the_prefix_of_the_full_one() {
            let t = tree();
            // Enough directories that several threads share the walk.
            for a in 0..30 {
                for b in 0..(a % 7) {
                    let dir = t.root.join(format!("w/d{a:02}/e{b}"));
                    fs::create_dir_all(&dir).unwrap();
                    for f in 0..(a % 5) {
                        fs::write(dir.join(format!("f{f}")), "x").unwrap();
                    }
                }
            }
            let full = paths(&t, &t.root, false, None);
            assert!(!full.truncated);
            let mut sorted = full.items.clone();
            sorted.sort_by(|a, b| {
                // Walk order: by path components, each compared as bytes.
                let key = |p: &str| {
                    p.trim_end_matches('/')
                        .split('/')
                        .map(str::to_owned)
                        .collect::<Vec<_>>()
                };
                key(a).cmp(&key(b))
            });
            assert_eq!(full.items, sorted, "depth first, in name order");
            for limit in [
                0,
                1,
                2,
                7,
                50,
                123,
                full.items.len() - 1,
                full.items.len(),
                full.items.len() + 5,
            ] {
                for _ in 0..5 {
                    let cut = paths(&t, &t.root, false, Some(limit));
                    let n = limit.min(full.items.len());
                    assert_eq!(cut.items, full.items[..n], "limit {limit}");
                    assert_eq!(cut.truncated, full.items.len() > limit, "limit {limit}");
                }
            }
        }
    }
}
