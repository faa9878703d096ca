//! Racer tests for "nothing lost" (../docs/permissions-and-prompts.md: a change is applied only if the file is still what
//! was diffed; §7.3: only what was archived is removed; issue 15 item 2). While the tools run, a
//! thread plays another program working in the same directory:
//!
//! - an editor saving in place (`open`, truncate, `write`, `close`: what vim and VS Code do; it
//!   reads what it truncates first, so the test knows which bytes it destroyed itself), during
//!   `write_file` and `edit_file` of the same file;
//! - a hostile process swapping two names over and over (`RENAME_EXCHANGE`), during
//!   `write_file` and `delete_file` of one of them.
//!
//! Every version anyone made carries a unique token. At the end, each version that was not
//! simply overwritten by its own author must still exist somewhere a user can find it: in a file
//! of the directory, in a trash archive, or as what a successful call diffed (its
//! `sha256Before` in the audit log: the model saw it and the user approved the change to it).
//! A version in none of these was destroyed by a commit that did not plan on it: lost.
//!
//! What is promised for an editor's save (README, "Security model"), and so asserted: a save whose
//! bytes reached the file while the file still had a name is never lost — the editor checks that
//! right after its write (`fstat`: the file's link count); a file loses its name only when the
//! tool unlinks it (the file it replaced, or its own new file in a swap back), and the tool
//! checks the file once more after that. A save written into a file that had already lost
//! its name (the editor opened it before the tool took the name and wrote only after) is kept
//! only if it landed before that last check; without a lease to tell an open writer (macOS, the
//! portable mode) nothing can promise more, so such saves are counted, not asserted on.
//!
//! Each test prints its counts (`cargo test --test writer_races -- --nocapture`).

// Unix only: the racers swap names with `RENAME_EXCHANGE` and make Unix links.
#![cfg(unix)]

use std::collections::HashSet;
use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use agent_fs_tools::call::{CallContext, ToolResult};
use agent_fs_tools::confirm::{Answer, ConfirmRequest, Confirmer};
use agent_fs_tools::dispatch::Toolset;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// A racing thread stops after this long even if the test forgot to stop it.
const RACER_MAX_TIME: Duration = Duration::from_secs(120);

struct Yes;

impl Confirmer for Yes {
    fn ask(&self, _request: ConfirmRequest) -> Answer {
        Box::pin(async { true })
    }
}

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    data: PathBuf,
    ws: Toolset,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(dir.path()).unwrap();
    let (root, data) = (base.join("root"), base.join("data"));
    fs::create_dir(&root).unwrap();
    fs::create_dir(&data).unwrap();
    let ws = Toolset::new(&json!({
        "root": root,
        "allowedPaths": [root],
        "audit": true,
        // The races write over files other threads change all the time: what is tested is that
        // nothing is lost, not the model's view of them (../docs/tools.md#stale-views, which would refuse them).
        "staleWrites": "allow",
        "trash": { "dataDir": data },
        "permissions": {
            "cwdReadFile": true, "cwdWriteFile": true, "cwdRemoveFile": true, "cwdRemoveDir": true,
        },
    }))
    .unwrap();
    Fixture {
        _dir: dir,
        root,
        data,
        ws,
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn call(f: &Fixture, rt: &tokio::runtime::Runtime, tool: &str, args: Value) -> ToolResult {
    let ctx = CallContext {
        confirmer: Some(Arc::new(Yes)),
        ..CallContext::default()
    };
    rt.block_on(f.ws.call(tool, args, ctx))
}

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// One version of a file as its author wrote it: what it replaced in the file it went into (the
/// bytes its author destroyed), and whether that file still had a name once written.
#[derive(Clone)]
struct Version {
    content: Vec<u8>,
    replaced: Option<Vec<u8>>,
    linked: bool,
}

/// A thread that stops when told (or after [`RACER_MAX_TIME`]) and returns what it made.
struct Racer {
    stop: Arc<AtomicBool>,
    handle: Option<thread::JoinHandle<Vec<Version>>>,
}

/// How a racer paces its steps.
#[derive(Clone, Copy)]
enum Pace {
    /// A random pause of 0 to this many µs after each step (an editor saving now and then).
    Pause(u64),
    /// Bursts of steps without pause, each lasting 0 to this many µs, between calm spells as
    /// long: a burst hits every window of a call, a calm spell lets calls run to completion.
    Bursts(u64),
}

impl Racer {
    /// Runs `step(round)` at `pace` until stopped.
    fn start(pace: Pace, mut step: impl FnMut(u64) -> Option<Version> + Send + 'static) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let handle = thread::spawn(move || {
            let started = Instant::now();
            let mut seed = u64::from(started.elapsed().subsec_nanos()) | 1;
            let mut random = move |below: u64| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                Duration::from_micros(seed % below.max(1))
            };
            let mut made = Vec::new();
            let mut round = 0;
            let mut burst_end = Instant::now();
            while !s.load(Ordering::Relaxed) && started.elapsed() < RACER_MAX_TIME {
                made.extend(step(round));
                round += 1;
                match pace {
                    Pace::Pause(us) => thread::sleep(random(us)),
                    Pace::Bursts(us) if Instant::now() > burst_end => {
                        thread::sleep(random(us));
                        burst_end = Instant::now() + random(us);
                    }
                    Pace::Bursts(_) => {}
                }
            }
            made
        });
        Racer {
            stop,
            handle: Some(handle),
        }
    }

    fn finish(mut self) -> Vec<Version> {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.take().unwrap().join().unwrap()
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

/// An editor saving `path` in place, as vim and VS Code do (`open`, truncate, one `write`,
/// `close`), reading first what it is about to truncate: the bytes it destroys itself. Returns the
/// version.
fn save_in_place(path: &Path, content: Vec<u8>) -> Option<Version> {
    let mut file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .ok()?;
    let mut replaced = Vec::new();
    file.read_to_end(&mut replaced).unwrap();
    file.set_len(0).unwrap();
    file.write_all_at(&content, 0).unwrap();
    let meta = file.metadata().unwrap();
    Some(Version {
        content,
        replaced: Some(replaced),
        linked: meta.nlink() > 0,
    })
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

/// Where a version may survive: the bytes of every file under `root` (our own temp files
/// excluded: a user never sees them) and of every trash archive, and the `sha256Before` of every
/// successful call in the audit log.
struct Survivors {
    bytes: Vec<u8>,
    diffed: HashSet<String>,
}

impl Survivors {
    fn collect(f: &Fixture) -> Self {
        let mut bytes = Vec::new();
        let mut stack = vec![f.root.clone()];
        while let Some(dir) = stack.pop() {
            for entry in fs::read_dir(&dir).unwrap() {
                let entry = entry.unwrap();
                let name = entry.file_name().to_string_lossy().into_owned();
                let kind = entry.file_type().unwrap();
                if kind.is_dir() {
                    stack.push(entry.path());
                } else if kind.is_file() && !name.ends_with(".agent-fs-tools.tmp") {
                    bytes.extend(fs::read(entry.path()).unwrap());
                    bytes.push(0);
                }
            }
        }
        let dir_bytes = |sub: &str| -> Vec<PathBuf> {
            let Ok(entries) = fs::read_dir(f.data.join(sub)) else {
                return Vec::new();
            };
            entries
                .flat_map(|b| fs::read_dir(b.unwrap().path()).unwrap())
                .map(|e| e.unwrap().path())
                .collect()
        };
        for archive in dir_bytes("trash") {
            let mut out = Vec::new();
            flate2::read::MultiGzDecoder::new(fs::File::open(&archive).unwrap())
                .read_to_end(&mut out)
                .unwrap();
            bytes.extend(out);
            bytes.push(0);
        }
        let mut diffed = HashSet::new();
        if let Ok(entries) = fs::read_dir(f.data.join("audit")) {
            for log in entries {
                for line in fs::read_to_string(log.unwrap().path()).unwrap().lines() {
                    let record: Value = serde_json::from_str(line).unwrap();
                    if record["status"] == "ok" {
                        if let Some(sha) = record["sha256Before"].as_str() {
                            diffed.insert(sha.to_owned());
                        }
                    }
                }
            }
        }
        Survivors { bytes, diffed }
    }

    fn holds(&self, content: &[u8]) -> bool {
        self.diffed.contains(&sha256(content))
            || self.bytes.windows(content.len()).any(|w| w == content)
    }
}

/// The versions no one can find any more: those that had to survive (see the module docs), and
/// those written into a file that no longer had a name. A version its author truncated later (it
/// read it back from the file it then truncated: a tool never writes into a file, it only moves
/// and unlinks names) was the author's to drop, wherever that file was by then.
fn lost(versions: &[Version], survivors: &Survivors) -> (Vec<String>, Vec<String>) {
    let (mut promised, mut unnamed) = (Vec::new(), Vec::new());
    for (i, v) in versions.iter().enumerate() {
        let overwritten_by_author = versions[i + 1..]
            .iter()
            .any(|later| later.replaced.as_ref() == Some(&v.content));
        if overwritten_by_author || survivors.holds(&v.content) {
            continue;
        }
        let text = String::from_utf8_lossy(&v.content).into_owned();
        if v.linked {
            promised.push(text);
        } else {
            unnamed.push(text);
        }
    }
    (promised, unnamed)
}

/// How many calls ended how.
#[derive(Default, Debug)]
struct Tally {
    ok: usize,
    conflict: usize,
    other: usize,
}

impl Tally {
    fn count(&mut self, result: &ToolResult) {
        match (result.status, result.code.map(|c| format!("{c:?}"))) {
            ("ok", _) => self.ok += 1,
            (_, Some(code)) if code == "Conflict" => self.conflict += 1,
            _ => self.other += 1,
        }
    }
}

/// Calls stop after this many, whatever happened.
const MAX_CALLS: usize = 3000;

/// Makes calls (`tool_call(i)`) until `enough_ok` succeeded (enough commits met the racer) or
/// [`MAX_CALLS`] were made, running `after(i, result)` after each.
fn calls_until_enough(
    f: &Fixture,
    enough_ok: usize,
    tool_call: impl Fn(usize) -> (&'static str, Value),
    mut after: impl FnMut(usize, &ToolResult),
) -> Tally {
    let rt = runtime();
    let mut tally = Tally::default();
    for i in 0..MAX_CALLS {
        if tally.ok >= enough_ok {
            break;
        }
        let (tool, args) = tool_call(i);
        let result = call(f, &rt, tool, args);
        tally.count(&result);
        after(i, &result);
        // A call that fails fast would leave the racer no CPU on a small machine.
        thread::sleep(Duration::from_micros(200));
    }
    tally
}

/// Makes calls while an editor saves `name` in place with `content(n)`; asserts none of its
/// saves was lost.
fn editor_race(
    test: &str,
    name: &str,
    content: fn(u64) -> String,
    tool_call: impl Fn(usize) -> (&'static str, Value),
) {
    let f = fixture();
    let path = f.root.join(name);
    fs::write(&path, content(u64::MAX)).unwrap();
    let editor_path = path.clone();
    let editor = Racer::start(Pace::Pause(10_000), move |n| {
        save_in_place(&editor_path, content(n).into_bytes())
    });
    let tally = calls_until_enough(&f, 40, tool_call, |_, _| {});
    let saves = editor.finish();
    let (lost, unnamed) = lost(&saves, &Survivors::collect(&f));
    let into_unnamed = saves.iter().filter(|s| !s.linked).count();
    eprintln!(
        "{test}: {tally:?}, {} saves, {} lost; {into_unnamed} written into a file without a name, {} of them lost",
        saves.len(),
        lost.len(),
        unnamed.len()
    );
    assert!(
        tally.ok > 0,
        "{test}: no call succeeded, the race proved nothing"
    );
    assert!(lost.is_empty(), "{test}: in-place saves lost: {lost:?}");
}

#[test]
fn write_file_never_loses_an_in_place_save() {
    editor_race(
        "write_file + editor",
        "notes.txt",
        |n| format!("editor save {n:08}\n"),
        |i| {
            (
                "write_file",
                json!({ "path": "notes.txt", "content": format!("tool write {i:08}\n") }),
            )
        },
    );
}

#[test]
fn edit_file_never_loses_an_in_place_save() {
    editor_race(
        "edit_file + editor",
        "code.txt",
        |n| format!("editor save {n:08}\nMARK\n"),
        |i| {
            (
                "edit_file",
                json!({ "path": "code.txt", "edits": [{ "oldString": "MARK", "newString": format!("MARK edited {i:08}") }] }),
            )
        },
    );
}

/// Versions no one overwrites in place (what `write_file` wrote successfully, the files the test
/// creates): any of them that disappears without a trace is lost.
fn made(contents: &Mutex<Vec<Vec<u8>>>) -> Vec<Version> {
    contents
        .lock()
        .unwrap()
        .iter()
        .map(|c| Version {
            content: c.clone(),
            replaced: None,
            linked: true,
        })
        .collect()
}

/// Starts a thread swapping the names `a` and `b` in `root`; counts its swaps.
fn swapper(root: &Path, a: &'static str, b: &'static str) -> (Racer, Arc<AtomicU64>) {
    let swaps = Arc::new(AtomicU64::new(0));
    let (root, n) = (root.to_owned(), swaps.clone());
    let racer = Racer::start(Pace::Bursts(4_000), move |_| {
        if exchange(&root, a, b) {
            n.fetch_add(1, Ordering::Relaxed);
        }
        None
    });
    (racer, swaps)
}

#[test]
fn write_file_under_a_name_swap_loses_nothing() {
    let f = fixture();
    let written = Mutex::new(vec![b"first w\n".to_vec(), b"first x\n".to_vec()]);
    fs::write(f.root.join("w.txt"), "first w\n").unwrap();
    fs::write(f.root.join("x.txt"), "first x\n").unwrap();
    let (racer, swaps) = swapper(&f.root, "w.txt", "x.txt");
    let content = |i: usize| format!("tool write {i:08}\n");
    let tally = calls_until_enough(
        &f,
        40,
        |i| {
            (
                "write_file",
                json!({ "path": "w.txt", "content": content(i) }),
            )
        },
        |i, result| {
            if result.status == "ok" {
                written.lock().unwrap().push(content(i).into_bytes());
            }
        },
    );
    racer.finish();
    let (lost, _) = lost(&made(&written), &Survivors::collect(&f));
    let swaps = swaps.load(Ordering::Relaxed);
    eprintln!(
        "write_file + swapper: {tally:?}, {swaps} swaps, {} lost",
        lost.len()
    );
    assert!(tally.ok > 0 && swaps > 100, "the race proved nothing");
    assert!(lost.is_empty(), "files lost: {lost:?}");
}

#[test]
fn delete_file_under_a_name_swap_removes_only_what_it_archived() {
    let f = fixture();
    let created = Mutex::new(Vec::new());
    let create_missing = |round: usize| {
        for name in ["a.txt", "b.txt"] {
            let content = format!("{name} version {round:08}\n");
            let new = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(f.root.join(name));
            if let Ok(mut file) = new {
                file.write_all(content.as_bytes()).unwrap();
                created.lock().unwrap().push(content.into_bytes());
            }
        }
    };
    create_missing(0);
    let (racer, swaps) = swapper(&f.root, "a.txt", "b.txt");
    // Its window (between the last check and the unlink) is microseconds: many calls.
    let tally = calls_until_enough(
        &f,
        400,
        |_| ("delete_file", json!({ "path": "a.txt" })),
        |i, _| create_missing(i + 1),
    );
    racer.finish();
    let (lost, _) = lost(&made(&created), &Survivors::collect(&f));
    let swaps = swaps.load(Ordering::Relaxed);
    eprintln!(
        "delete_file + swapper: {tally:?}, {swaps} swaps, {} lost",
        lost.len()
    );
    assert!(tally.ok > 0 && swaps > 100, "the race proved nothing");
    assert!(lost.is_empty(), "files lost: {lost:?}");
}
