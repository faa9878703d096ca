//! Racer tests (../docs/paths-and-sandbox.md#the-checked-path-is-the-acted-on-path, issue "Hardening"): while the tools run, a thread keeps swapping
//! entries inside the sandbox with links to the outside:
//!
//! - the directory `d` with the symlink `dlink` → `outside/` (`renameat2(RENAME_EXCHANGE)`, so
//!   at every instant `d` is either the real directory or the link);
//! - the file `f.txt` with the symlink `flink` → `outside/f.txt`;
//! - the file `h.txt` with `hl`, a hard link to `outside_hard/target.txt`.
//!
//! Whatever the interleaving, no byte may be read from or written to the outside trees: no
//! result (output, diff, data) and no trash archive ever holds the outside secret or an
//! outside-only name, and a snapshot of the outside trees (names, types, modes, sizes,
//! contents, mtimes, link targets) is identical before and after.
//!
//! Every racer is bounded in iterations and time, and every test stops it before asserting.

// Unix only: the racers swap names with `RENAME_EXCHANGE` and make Unix links.
#![cfg(unix)]

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::os::unix::fs::{symlink, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use agent_fs_tools::call::{CallContext, ToolResult};
use agent_fs_tools::confirm::{Answer, ConfirmRequest, Confirmer};
use agent_fs_tools::dispatch::Toolset;
use serde_json::{json, Value};

/// In the content of every outside file: a read that returns it read the outside.
const SECRET: &str = "OUTSIDE-SECRET-7f3a9c";
/// In the names of outside entries that nothing inside refers to: a listing that shows it
/// listed the outside.
const OUTSIDE_NAME: &str = "zz_outside_only";
/// The racer stops after this many rounds or this long, whichever comes first.
const RACER_MAX_ROUNDS: u64 = 2_000_000;
const RACER_MAX_TIME: Duration = Duration::from_secs(60);

struct Yes;

impl Confirmer for Yes {
    fn ask(&self, _request: ConfirmRequest) -> Answer {
        Box::pin(async { true })
    }
}

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
    outside_hard: PathBuf,
    data: PathBuf,
    ws: Arc<Toolset>,
}

/// The inside file content: words the tools' calls use (`inside`, `EDIT`), no secret.
const INSIDE: &str = "inside line one\nEDIT-A\ninside line three\n";
/// The outside content: the same words (so a misdirected edit would apply), plus the secret.
fn outside_content(name: &str) -> String {
    format!("inside line one\nEDIT-A\nEDIT-B\n{SECRET} {name}\n")
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(dir.path()).unwrap();
    let root = base.join("root");
    let outside = base.join("outside");
    let outside_hard = base.join("outside_hard");
    let data = base.join("data");
    for d in [&root, &outside, &outside_hard, &data] {
        fs::create_dir(d).unwrap();
    }
    // Outside: the names a misdirected call would use, and names only the outside has.
    for name in [
        "f.txt", "del.txt", "m.txt", "w.txt", "a.txt", "r.txt", "rt.txt",
    ] {
        fs::write(outside.join(name), outside_content(name)).unwrap();
    }
    fs::write(
        outside.join(format!("{OUTSIDE_NAME}_a.txt")),
        outside_content("a"),
    )
    .unwrap();
    fs::create_dir_all(outside.join("sub/deeper")).unwrap();
    fs::write(outside.join("sub/a.txt"), outside_content("sub/a")).unwrap();
    fs::write(
        outside.join(format!("sub/deeper/{OUTSIDE_NAME}_b.txt")),
        outside_content("b"),
    )
    .unwrap();
    fs::create_dir(outside.join(format!("{OUTSIDE_NAME}_dir"))).unwrap();
    // A second name of this file lives inside, so its bytes may be read (and trashed) through
    // it: no secret here, only "never written through".
    fs::write(
        outside_hard.join("target.txt"),
        "inside line one\nEDIT-A\nhard-linked target\n",
    )
    .unwrap();

    // Inside.
    fs::create_dir_all(root.join("d/sub")).unwrap();
    fs::write(root.join("d/f.txt"), INSIDE).unwrap();
    fs::write(root.join("d/sub/a.txt"), INSIDE).unwrap();
    symlink(&outside, root.join("dlink")).unwrap();
    fs::write(root.join("f.txt"), INSIDE).unwrap();
    symlink(outside.join("f.txt"), root.join("flink")).unwrap();
    fs::write(root.join("h.txt"), INSIDE).unwrap();
    fs::hard_link(outside_hard.join("target.txt"), root.join("hl")).unwrap();

    let ws = Toolset::new(&json!({
        "root": root,
        "allowedPaths": [root],
        "audit": false,
        "trash": { "dataDir": data },
        "permissions": {
            "cwdReadFile": true, "cwdWriteFile": true, "cwdRemoveFile": true, "cwdRemoveDir": true,
        },
    }))
    .unwrap();
    Fixture {
        _dir: dir,
        root,
        outside,
        outside_hard,
        data,
        ws: Arc::new(ws),
    }
}

/// One entry of a snapshot: what `lstat` and the content say.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Node {
    kind: &'static str,
    mode: u32,
    size: u64,
    mtime: (i64, i64),
    content: Option<Vec<u8>>,
    link: Option<PathBuf>,
}

/// Everything observable about a tree, never following a link (atime excluded: reading is
/// allowed to happen only inside, but the kernel's atime is not what we compare).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Node> {
    fn walk(abs: &Path, rel: PathBuf, out: &mut BTreeMap<PathBuf, Node>) {
        let meta = fs::symlink_metadata(abs).unwrap();
        let ft = meta.file_type();
        let kind = if ft.is_symlink() {
            "symlink"
        } else if ft.is_dir() {
            "dir"
        } else if ft.is_file() {
            "file"
        } else {
            "other"
        };
        out.insert(
            rel.clone(),
            Node {
                kind,
                mode: meta.mode(),
                size: if ft.is_dir() { 0 } else { meta.size() },
                mtime: (meta.mtime(), meta.mtime_nsec()),
                content: ft.is_file().then(|| fs::read(abs).unwrap()),
                link: ft.is_symlink().then(|| fs::read_link(abs).unwrap()),
            },
        );
        if ft.is_dir() {
            let mut names: Vec<_> = fs::read_dir(abs)
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            names.sort();
            for name in names {
                walk(&abs.join(&name), rel.join(&name), out);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, PathBuf::new(), &mut out);
    out
}

/// `RENAME_EXCHANGE` of two names in one directory.
fn exchange(dir: &Path, a: &str, b: &str) -> bool {
    rustix::fs::renameat_with(
        rustix::fs::CWD,
        dir.join(a),
        rustix::fs::CWD,
        dir.join(b),
        rustix::fs::RenameFlags::EXCHANGE,
    )
    .is_ok()
}

fn is_link(p: &Path) -> bool {
    fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink())
}

fn exists(p: &Path) -> bool {
    fs::symlink_metadata(p).is_ok()
}

/// Keeps each pair (real entry, link to the outside) alive when a tool removed or moved one of
/// them: the missing one is recreated as whatever the other is not. Touches only `root`.
fn repair(root: &Path, outside: &Path, outside_hard: &Path) {
    let pairs: [(&str, &str); 2] = [("d", "dlink"), ("f.txt", "flink")];
    for (i, (real, link)) in pairs.iter().enumerate() {
        let (a, b) = (root.join(real), root.join(link));
        let target = if i == 0 {
            outside.to_path_buf()
        } else {
            outside.join("f.txt")
        };
        let make_real = |p: &Path| {
            if i == 0 {
                let _ = fs::create_dir(p);
                let _ = fs::write(p.join("f.txt"), INSIDE);
            } else {
                let _ = fs::write(p, INSIDE);
            }
        };
        match (exists(&a), exists(&b)) {
            (false, false) => {
                make_real(&a);
                let _ = symlink(&target, &b);
            }
            (true, false) if is_link(&a) => make_real(&b),
            (true, false) => {
                let _ = symlink(&target, &b);
            }
            (false, true) if is_link(&b) => make_real(&a),
            (false, true) => {
                let _ = symlink(&target, &a);
            }
            _ => {}
        }
    }
    // The hard-link pair: h.txt (one link) and hl (a second name of the outside file).
    let (h, hl) = (root.join("h.txt"), root.join("hl"));
    let hard = outside_hard.join("target.txt");
    let is_hard = |p: &Path| {
        fs::symlink_metadata(p)
            .ok()
            .zip(fs::symlink_metadata(&hard).ok())
            .is_some_and(|(a, b)| a.ino() == b.ino())
    };
    match (exists(&h), exists(&hl)) {
        (false, false) => {
            let _ = fs::write(&h, INSIDE);
            let _ = fs::hard_link(&hard, &hl);
        }
        (true, false) if is_hard(&h) => {
            let _ = fs::write(&hl, INSIDE);
        }
        (true, false) => {
            let _ = fs::hard_link(&hard, &hl);
        }
        (false, true) if is_hard(&hl) => {
            let _ = fs::write(&h, INSIDE);
        }
        (false, true) => {
            let _ = fs::hard_link(&hard, &h);
        }
        _ => {}
    }
}

/// The racing thread: swaps the three pairs over and over until told to stop (or its bounds).
struct Racer {
    stop: Arc<AtomicBool>,
    swaps: Arc<AtomicU64>,
    handle: Option<thread::JoinHandle<()>>,
}

impl Racer {
    fn start(f: &Fixture) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let swaps = Arc::new(AtomicU64::new(0));
        let (root, outside, outside_hard) =
            (f.root.clone(), f.outside.clone(), f.outside_hard.clone());
        let (s, n) = (stop.clone(), swaps.clone());
        let handle = thread::spawn(move || {
            let started = Instant::now();
            let mut seed = u64::from(started.elapsed().subsec_nanos()) | 1;
            let mut random = move |below: u64| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed % below
            };
            // Bursts of swapping (every window of a call is hit) alternate with short calm
            // spells of random length in whatever state the pairs are in (so calls also run to
            // completion, and a swap lands at every point of a longer operation).
            let mut burst_end = Instant::now();
            for round in 0..RACER_MAX_ROUNDS {
                if s.load(Ordering::Relaxed) || started.elapsed() > RACER_MAX_TIME {
                    break;
                }
                for (a, b) in [("d", "dlink"), ("f.txt", "flink"), ("h.txt", "hl")] {
                    if exchange(&root, a, b) {
                        n.fetch_add(1, Ordering::Relaxed);
                    }
                }
                if round % 64 == 0 {
                    repair(&root, &outside, &outside_hard);
                }
                if Instant::now() > burst_end {
                    thread::sleep(Duration::from_micros(random(4_000)));
                    burst_end = Instant::now() + Duration::from_micros(random(4_000));
                }
            }
        });
        Racer {
            stop,
            swaps,
            handle: Some(handle),
        }
    }

    /// Stops the thread; returns how many swaps it made.
    fn finish(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.take().unwrap().join().unwrap();
        self.swaps.load(Ordering::Relaxed)
    }
}

impl Drop for Racer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn ctx() -> CallContext {
    CallContext {
        confirmer: Some(Arc::new(Yes)),
        ..CallContext::default()
    }
}

/// Every byte of every archive in the workspace's trash, decompressed.
fn trash_contents(data: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let trash = data.join("trash");
    let Ok(buckets) = fs::read_dir(&trash) else {
        return out;
    };
    for bucket in buckets {
        for entry in fs::read_dir(bucket.unwrap().path()).unwrap() {
            let path = entry.unwrap().path();
            let mut bytes = Vec::new();
            let file = fs::File::open(&path).unwrap();
            // Temp files of the bucket are not gzip; read them raw.
            if flate2::read::MultiGzDecoder::new(file)
                .read_to_end(&mut bytes)
                .is_err()
            {
                bytes = fs::read(&path).unwrap();
            }
            out.push((path, bytes));
        }
    }
    out
}

/// What a race produced: calls made, and successful calls of the tool under test (`name`
/// starts with its name).
struct Tally {
    ok: usize,
    calls: usize,
}

/// Runs `calls(i)` for `i in 0..rounds` with the racer going; asserts the invariants.
fn race(
    name: &str,
    rounds: usize,
    prepare: impl Fn(&Fixture),
    calls: impl Fn(usize, &Fixture) -> Vec<(&'static str, Value)>,
) -> Tally {
    let f = fixture();
    prepare(&f);
    let outside_before = snapshot(&f.outside);
    let hard_before = snapshot(&f.outside_hard);
    let rt = runtime();
    let racer = Racer::start(&f);
    let mut tally = Tally { ok: 0, calls: 0 };
    let mut leaks = Vec::new();
    for i in 0..rounds {
        for (tool, args) in calls(i, &f) {
            let result: ToolResult = rt.block_on(f.ws.call(tool, args.clone(), ctx()));
            tally.calls += 1;
            if result.status == "ok" && name.starts_with(tool) {
                tally.ok += 1;
            }
            let text = serde_json::to_string(&result).unwrap();
            if text.contains(SECRET) || text.contains(OUTSIDE_NAME) {
                leaks.push(format!("{tool} {args}: {text}"));
            }
        }
    }
    let swaps = racer.finish();
    repair(&f.root, &f.outside, &f.outside_hard);
    assert!(
        leaks.is_empty(),
        "{name}: results exposed the outside ({} times), e.g. {}",
        leaks.len(),
        &leaks[0][..leaks[0].len().min(2000)]
    );
    assert_eq!(
        snapshot(&f.outside),
        outside_before,
        "{name}: the outside directory changed"
    );
    assert_eq!(
        snapshot(&f.outside_hard),
        hard_before,
        "{name}: the hard-linked outside file changed"
    );
    for (archive, bytes) in trash_contents(&f.data) {
        assert!(
            !contains(&bytes, SECRET.as_bytes()),
            "{name}: the trash archive {} holds outside content",
            archive.display()
        );
    }
    assert!(swaps > 100, "{name}: the racer made only {swaps} swaps");
    assert!(
        tally.ok > 0,
        "{name}: no call of the tool under test succeeded, so the race proved nothing"
    );
    eprintln!(
        "{name}: {} calls, {} ok, {swaps} swaps",
        tally.calls, tally.ok
    );
    tally
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn read_file_never_reads_the_outside() {
    race(
        "read_file",
        400,
        |_| {},
        |_, _| {
            vec![
                ("read_file", json!({ "path": "d/f.txt" })),
                ("read_file", json!({ "path": "f.txt" })),
                (
                    "read_file",
                    json!({ "path": "d/sub/a.txt", "startLine": 1, "endLine": 3 }),
                ),
            ]
        },
    );
}

#[test]
fn write_file_never_writes_the_outside() {
    race(
        "write_file",
        150,
        |_| {},
        |i, _| {
            vec![
                (
                    "write_file",
                    json!({ "path": "d/w.txt", "content": format!("w {i}\n") }),
                ),
                (
                    "write_file",
                    json!({ "path": "d/f.txt", "content": format!("inside {i}\n") }),
                ),
                (
                    "write_file",
                    json!({ "path": "f.txt", "content": format!("inside {i}\n") }),
                ),
                (
                    "write_file",
                    json!({ "path": "h.txt", "content": format!("inside {i}\n") }),
                ),
                (
                    "write_file",
                    json!({ "path": "d/sub/new/x.txt", "content": "x" }),
                ),
            ]
        },
    );
}

#[test]
fn append_file_never_writes_the_outside() {
    race(
        "append_file",
        300,
        |_| {},
        |i, _| {
            vec![
                (
                    "append_file",
                    json!({ "path": "d/f.txt", "content": format!("a {i}\n") }),
                ),
                (
                    "append_file",
                    json!({ "path": "f.txt", "content": format!("a {i}\n") }),
                ),
                (
                    "append_file",
                    json!({ "path": "h.txt", "content": format!("a {i}\n") }),
                ),
                (
                    "append_file",
                    json!({ "path": "d/a.txt", "content": "new\n" }),
                ),
            ]
        },
    );
}

#[test]
fn edit_file_never_writes_the_outside() {
    race(
        "edit_file",
        250,
        |_| {},
        |i, _| {
            let (from, to) = if i % 2 == 0 {
                ("EDIT-A", "EDIT-B")
            } else {
                ("EDIT-B", "EDIT-A")
            };
            let edit =
                |p: &str| json!({ "path": p, "edits": [{ "oldString": from, "newString": to }] });
            vec![
                ("edit_file", edit("d/f.txt")),
                ("edit_file", edit("f.txt")),
                ("edit_file", edit("h.txt")),
                (
                    "edit_file",
                    json!({ "path": "d/sub/a.txt", "edits": [{ "oldString": "inside", "newString": "in", "replaceAll": true }] }),
                ),
            ]
        },
    );
}

#[test]
fn create_directory_never_creates_outside() {
    race(
        "create_directory",
        300,
        |_| {},
        |i, _| {
            vec![
                ("create_directory", json!({ "path": format!("d/new-{i}") })),
                (
                    "create_directory",
                    json!({ "path": format!("d/sub/deep-{i}/x") }),
                ),
                ("create_directory", json!({ "path": "d/sub" })),
            ]
        },
    );
}

#[test]
fn delete_file_never_deletes_outside() {
    race(
        "delete_file",
        120,
        |_| {},
        |i, _| {
            vec![
                (
                    "write_file",
                    json!({ "path": "d/del.txt", "content": format!("del {i}\n") }),
                ),
                ("delete_file", json!({ "path": "d/del.txt" })),
                ("delete_file", json!({ "path": "d/f.txt" })),
                ("delete_file", json!({ "path": "f.txt" })),
                (
                    "delete_file",
                    json!({ "path": "h.txt", "permanent": i % 2 == 0 }),
                ),
                (
                    "delete_file",
                    json!({ "path": "d/w.txt", "permanent": true }),
                ),
            ]
        },
    );
}

#[test]
fn recursive_remove_dir_never_removes_outside() {
    race(
        "remove_dir",
        80,
        |_| {},
        |i, _| {
            vec![
                (
                    "write_file",
                    json!({ "path": "d/sub/a.txt", "content": format!("a {i}\n") }),
                ),
                ("remove_dir", json!({ "path": "d/sub", "recursive": true })),
                ("create_directory", json!({ "path": "d/sub/deeper" })),
                ("remove_dir", json!({ "path": "d/sub/deeper" })),
                (
                    "remove_dir",
                    json!({ "path": "d/sub", "recursive": true, "permanent": true }),
                ),
                (
                    "remove_dir",
                    json!({ "path": "d", "recursive": true, "permanent": i % 2 == 0 }),
                ),
            ]
        },
    );
}

#[test]
fn move_file_source_never_takes_from_outside() {
    race(
        "move_file source",
        120,
        |_| {},
        |i, _| {
            vec![
                (
                    "write_file",
                    json!({ "path": "d/m.txt", "content": format!("m {i}\n") }),
                ),
                (
                    "move_file",
                    json!({ "source": "d/m.txt", "destination": format!("moved/m-{i}.txt") }),
                ),
                (
                    "move_file",
                    json!({ "source": "d/sub", "destination": format!("moved/sub-{i}") }),
                ),
                (
                    "move_file",
                    json!({ "source": format!("moved/sub-{i}"), "destination": "d/sub" }),
                ),
                (
                    "move_file",
                    json!({ "source": "f.txt", "destination": format!("moved/f-{i}.txt") }),
                ),
            ]
        },
    );
}

#[test]
fn move_file_destination_never_lands_outside() {
    race(
        "move_file destination",
        120,
        |_| {},
        |i, _| {
            vec![
                (
                    "write_file",
                    json!({ "path": format!("src-{i}.txt"), "content": format!("s {i}\n") }),
                ),
                (
                    "move_file",
                    json!({ "source": format!("src-{i}.txt"), "destination": "d/m.txt", "overwrite": true }),
                ),
                (
                    "create_directory",
                    json!({ "path": format!("srcdir-{i}/x") }),
                ),
                (
                    "move_file",
                    json!({ "source": format!("srcdir-{i}"), "destination": format!("d/sub/dir-{i}") }),
                ),
                (
                    "write_file",
                    json!({ "path": format!("w-{i}.txt"), "content": "w" }),
                ),
                (
                    "move_file",
                    json!({ "source": format!("w-{i}.txt"), "destination": "d/f.txt", "overwrite": true }),
                ),
            ]
        },
    );
}

#[test]
fn restore_file_never_restores_outside() {
    let rounds = 60;
    race(
        "restore_file",
        rounds,
        |f| {
            // Archives whose original path lies inside `d`, made before the racer starts.
            let rt = runtime();
            for i in 0..rounds {
                for name in [format!("d/r-{i}.txt"), format!("d/sub/rt-{i}.txt")] {
                    let w = rt.block_on(f.ws.call(
                        "write_file",
                        json!({ "path": name, "content": format!("r {i}\n") }),
                        ctx(),
                    ));
                    assert_eq!(w.status, "ok", "{w:?}");
                    let d = rt.block_on(f.ws.call("delete_file", json!({ "path": name }), ctx()));
                    assert_eq!(d.status, "ok", "{d:?}");
                }
            }
        },
        |i, f| {
            let archive = |original: &str| {
                let listed = f.ws.workspace().bucket().list().unwrap();
                listed
                    .into_iter()
                    .find(|e| e.metadata.original_path.ends_with(original))
                    .map(|e| e.archive_path.display().to_string())
                    .unwrap_or_else(|| format!("/missing/{original}"))
            };
            vec![
                (
                    "restore_file",
                    json!({ "trashedPath": archive(&format!("/d/r-{i}.txt")) }),
                ),
                (
                    "restore_file",
                    json!({ "trashedPath": archive(&format!("/d/sub/rt-{i}.txt")), "targetPath": "d/rt.txt", "overwrite": true }),
                ),
            ]
        },
    );
}

#[test]
fn list_directory_never_lists_the_outside() {
    race(
        "list_directory",
        300,
        |_| {},
        |_, _| {
            vec![
                ("list_directory", json!({ "path": ".", "recursive": true })),
                ("list_directory", json!({ "path": "d", "recursive": true })),
                ("list_directory", json!({ "path": "d" })),
                (
                    "list_directory",
                    json!({ "path": "d/sub", "recursive": true, "includeIgnored": true }),
                ),
            ]
        },
    );
}

#[test]
fn glob_never_finds_the_outside() {
    race(
        "glob",
        300,
        |_| {},
        |_, _| {
            vec![
                ("glob", json!({ "pattern": "**/*.txt" })),
                (
                    "glob",
                    json!({ "pattern": "*", "path": "d", "includeIgnored": true }),
                ),
            ]
        },
    );
}

#[test]
fn grep_never_searches_the_outside() {
    race(
        "grep",
        300,
        |_| {},
        |_, _| {
            vec![
                (
                    "grep",
                    json!({ "pattern": "inside|secret|line", "caseInsensitive": true }),
                ),
                (
                    "grep",
                    json!({ "pattern": ".", "path": "d", "includeIgnored": true }),
                ),
            ]
        },
    );
}
