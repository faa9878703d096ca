//! Recovery of changes of many entries (issue 26): exclusive, safe to run again, all or nothing
//! whatever the sandbox, readable at any size, and never acting outside the allowed trees
//! whoever sealed the record.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use super::commit::{kill_before_commit_point, CommitRecord, PlannedFile};
use super::{Journal, Record, Recovered};
use crate::datadir::DataDir;
use crate::paths::fsops::race_point::{self, RacePoint};
use crate::paths::fsops::{self, Snapshot};
use crate::paths::Sandbox;
use crate::paths::Version;
use crate::paths::{AsDir, Dir};

/// A pid no process has (above any `pid_max`): the writer of a record "died".
const DEAD_PID: u32 = u32::MAX - 1;

/// How long a test waits for the other thread of a race it drives before it fails (a
/// safeguard against a hang, never a way to order anything).
const STUCK: Duration = Duration::from_secs(120);

struct Dirs {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
}

fn dirs() -> Dirs {
    let tmp = tempfile::tempdir().unwrap();
    let base = crate::paths::canonical::canonicalize_existing(tmp.path()).unwrap();
    let root = base.join("root");
    fs::create_dir(&root).unwrap();
    Dirs {
        _tmp: tmp,
        base,
        root,
    }
}

impl Dirs {
    /// The journal `journal/<rel>` in the data directory `<base>/data`.
    fn journal(&self, rel: &str) -> Journal {
        let data = Arc::new(DataDir::new(self.base.join("data")));
        Journal::new(data, Path::new("journal").join(rel))
    }
}

fn no_sequel(_: &Value) -> std::io::Result<()> {
    unreachable!("these records carry no sequel")
}

fn dir_fd(dir: &Path) -> Dir {
    fsops::open_dir(dir, dir, false).unwrap()
}

/// Stages `new` as the content of the existing `dir/name`.
fn put(commit: &mut super::commit::Commit<'_>, dir: &Path, name: &str, new: &str) {
    let stat = fsops::lstat_at(dir_fd(dir).as_dir(), OsStr::new(name))
        .unwrap()
        .unwrap();
    let planned = PlannedFile::new(stat, &fs::read(dir.join(name)).unwrap());
    commit
        .put(
            dir_fd(dir),
            dir,
            OsStr::new(name),
            new.into(),
            Some(&stat),
            Some(planned),
        )
        .unwrap();
}

/// Stages the new file `dir/name` holding `new`.
fn add(commit: &mut super::commit::Commit<'_>, dir: &Path, name: &str, new: &str) {
    commit
        .put(dir_fd(dir), dir, OsStr::new(name), new.into(), None, None)
        .unwrap();
}

/// Adds removing `dir/name`.
fn remove(commit: &mut super::commit::Commit<'_>, dir: &Path, name: &str) {
    let stat = fsops::lstat_at(dir_fd(dir).as_dir(), OsStr::new(name))
        .unwrap()
        .unwrap();
    commit
        .remove(dir_fd(dir), dir, OsStr::new(name), Snapshot::of(&stat))
        .unwrap();
}

fn commit_record(journal: &Journal, path: &Path) -> CommitRecord {
    match Record::parse(&journal.read(path).unwrap()).unwrap() {
        Record::Commit(record) => record,
        other => panic!("not a commit record: {other:?}"),
    }
}

/// Rewrites the record at `path` as if the kill had come right after the commit point.
fn as_applied(journal: &Journal, path: &Path) {
    let mut record = commit_record(journal, path);
    record.applied = true;
    journal.rewrite(path, &serde_json::to_vec(&Record::Commit(record)).unwrap());
}

/// Every entry under `dir` (hidden ones too), by its path below `dir`, with a file's content.
fn tree(dir: &Path) -> Vec<(String, String)> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = crate::paths::testing::slashed_below(&path, base);
            if path.is_dir() {
                out.push((format!("{rel}/"), String::new()));
                walk(base, &path, out);
            } else {
                out.push((rel, fs::read_to_string(&path).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

fn entries(list: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut out: Vec<_> = list
        .iter()
        .map(|(p, c)| (p.to_string(), c.to_string()))
        .collect();
    out.sort();
    out
}

fn within(dir: &Path) -> Sandbox {
    Sandbox::new(dir.to_owned(), Some(vec![dir.to_owned()]), vec![])
}

/// Issue 26, item 1: two recoveries of one killed change at once. Without the lock, the second
/// checks the file before the first exchanges it back, exchanges it again after, and the first
/// then unlinks by name what it had checked to be the staged file — the user's original. Here
/// the race is made certain: the first recovery, about to exchange the file back, starts the
/// second and lets it run as far as it can.
#[test]
fn two_recoveries_at_once_take_a_change_back_once() {
    let d = dirs();
    let name = "two-recoveries.txt";
    fs::write(d.root.join(name), "original\n").unwrap();
    let journal = d.journal("two-recoveries");
    let mut commit = journal.commit();
    put(&mut commit, &d.root, name, "patched\n");
    let record = kill_before_commit_point(&journal, commit);
    assert_eq!(
        fs::read_to_string(d.root.join(name)).unwrap(),
        "patched\n",
        "the kill left the change made, before its commit point"
    );
    let aside = commit_record(&journal, &record).steps[0]
        .aside
        .to_string_lossy()
        .into_owned();
    let sandbox = within(&d.root);

    let (events, heard) = mpsc::channel::<&'static str>();
    let heard = Arc::new(Mutex::new(heard));
    let (go, wait_for_go) = mpsc::channel::<()>();
    let first_heard = Arc::new(Mutex::new(None));
    let second = Arc::new(Mutex::new(None));
    {
        // The first recovery, about to exchange the file back, starts a second one and waits
        // until that one is about to do the same, or waits for the lock.
        let (journal, sandbox) = (journal.clone(), sandbox.clone());
        let (events, heard, first_heard, second) = (
            events.clone(),
            heard.clone(),
            first_heard.clone(),
            second.clone(),
        );
        race_point::at(RacePoint::BeforeReplace, name, move || {
            *second.lock().unwrap() = Some(std::thread::spawn(move || {
                let outcome = journal.recover(&sandbox, &no_sequel);
                events.send("done").unwrap();
                outcome
            }));
            let event = heard.lock().unwrap().recv_timeout(STUCK).unwrap();
            *first_heard.lock().unwrap() = Some(event);
        });
    }
    {
        let events = events.clone();
        race_point::at(RacePoint::BeforeReplace, name, move || {
            events.send("exchanging").unwrap();
            wait_for_go.recv_timeout(STUCK).unwrap();
        });
    }
    {
        let events = events.clone();
        race_point::at(RacePoint::LockBusy, "two-recoveries.lock", move || {
            events.send("waiting").unwrap()
        });
    }
    {
        // The first recovery, about to remove the staged file it checked, lets the second go on
        // (if it is not waiting for the lock) and waits until it is done.
        let (heard, first_heard) = (heard.clone(), first_heard.clone());
        race_point::at(RacePoint::BeforeRemove, &aside, move || {
            if *first_heard.lock().unwrap() == Some("exchanging") {
                go.send(()).unwrap();
                assert_eq!(heard.lock().unwrap().recv_timeout(STUCK).unwrap(), "done");
            }
        });
    }
    let first = journal.recover(&sandbox, &no_sequel);
    let second = second
        .lock()
        .unwrap()
        .take()
        .expect("the second one started");
    let second = second.join().unwrap();

    assert_eq!(
        fs::read_to_string(d.root.join(name)).unwrap(),
        "original\n",
        "the user's file is back, once"
    );
    assert_eq!(tree(&d.root), entries(&[(name, "original\n")]));
    assert_eq!(*first_heard.lock().unwrap(), Some("waiting"));
    assert_eq!(first, vec![Recovered::CommitUndone]);
    assert_eq!(second, vec![], "the second found nothing left to do");
    assert_eq!(journal.record_count(), 0);
}

/// Issue 26, item 1: what recovery removes is what it checked. An entry that takes a staged
/// file's temp name between the check and the removal stays.
#[test]
fn an_entry_that_takes_a_staged_files_name_after_its_check_is_never_removed() {
    let d = dirs();
    let name = "swapped-after-check.txt";
    fs::write(d.root.join(name), "original\n").unwrap();
    fs::write(d.root.join("precious.txt"), "precious\n").unwrap();
    let journal = d.journal("x");
    let mut commit = journal.commit();
    put(&mut commit, &d.root, name, "patched\n");
    let record = kill_before_commit_point(&journal, commit);
    let aside = commit_record(&journal, &record).steps[0].aside.clone();
    let (at_aside, precious) = (d.root.join(&aside), d.root.join("precious.txt"));
    race_point::at(
        RacePoint::BeforeRemove,
        &aside.to_string_lossy(),
        move || crate::paths::testing::exchange(&at_aside, &precious),
    );
    assert_eq!(
        journal.recover(&within(&d.root), &no_sequel),
        vec![Recovered::CommitUndone]
    );
    assert_eq!(fs::read_to_string(d.root.join(name)).unwrap(), "original\n");
    let contents: Vec<String> = tree(&d.root).into_iter().map(|(_, c)| c).collect();
    assert!(
        contents.contains(&"precious\n".to_owned()),
        "the file swapped in was removed: {:?}",
        tree(&d.root)
    );
}

/// Issue 26, item 1: a recovery killed halfway — here, in the middle of a removal, its entry
/// moved to its doomed name — is finished by the next one; and running a record again on what
/// it already recovered changes nothing.
#[test]
fn a_recovery_cut_short_is_finished_by_the_next_and_running_it_again_changes_nothing() {
    let before = [("a.txt", "a old\n"), ("gone.txt", "gone\n")];
    let after = [("a.txt", "a new\n"), ("c.txt", "c new\n")];
    for applied in [false, true] {
        let d = dirs();
        for (name, content) in before {
            fs::write(d.root.join(name), content).unwrap();
        }
        let journal = d.journal("x");
        let mut commit = journal.commit();
        put(&mut commit, &d.root, "a.txt", "a new\n");
        add(&mut commit, &d.root, "c.txt", "c new\n");
        remove(&mut commit, &d.root, "gone.txt");
        let path = kill_before_commit_point(&journal, commit);
        if applied {
            as_applied(&journal, &path);
        }
        let record = commit_record(&journal, &path);
        let aside = &record.steps[0].aside;
        let doomed = fsops::doomed_name(aside.as_os_str());
        let dir = dir_fd(&d.root);
        if !applied {
            // Killed once a.txt was back, the staged file moved to its doomed name.
            fsops::rename_exchange(
                dir.as_dir(),
                aside.as_os_str(),
                dir.as_dir(),
                OsStr::new("a.txt"),
            )
            .unwrap();
        }
        // (Applied: killed in the clean-up, the displaced a.txt moved to its doomed name.)
        fsops::rename_noreplace(dir.as_dir(), aside.as_os_str(), dir.as_dir(), &doomed).unwrap();
        let stored = fs::read(&path).unwrap();
        let (outcome, expected) = if applied {
            (Recovered::CommitFinished, entries(&after))
        } else {
            (Recovered::CommitUndone, entries(&before))
        };
        assert_eq!(journal.recover(&within(&d.root), &no_sequel), vec![outcome]);
        assert_eq!(tree(&d.root), expected, "applied: {applied}");
        // A second recovery that read the record before the first removed it.
        fs::write(&path, &stored).unwrap();
        assert_eq!(journal.recover(&within(&d.root), &no_sequel), vec![outcome]);
        assert_eq!(tree(&d.root), expected, "applied: {applied}, again");
        assert_eq!(journal.record_count(), 0);
    }
}

/// The commit point is one sealed section appended to the record (`store.rs`): a kill or a power
/// cut that leaves any part of it short of the whole gives the change undone; the whole section,
/// the change finished.
#[test]
fn a_commit_point_cut_short_is_undone_and_a_whole_one_finished() {
    let before = [("a.txt", "a old\n"), ("gone.txt", "gone\n")];
    let after = [("a.txt", "a new\n"), ("c.txt", "c new\n")];
    for kept in 0..5 {
        let d = dirs();
        for (name, content) in before {
            fs::write(d.root.join(name), content).unwrap();
        }
        let journal = d.journal("x");
        let mut commit = journal.commit();
        put(&mut commit, &d.root, "a.txt", "a new\n");
        add(&mut commit, &d.root, "c.txt", "c new\n");
        remove(&mut commit, &d.root, "gone.txt");
        let path = kill_before_commit_point(&journal, commit);
        let first = fs::metadata(&path).unwrap().len() as usize;
        let mut record = commit_record(&journal, &path);
        record.applied = true;
        journal.append_state(&path, &serde_json::to_vec(&Record::Commit(record)).unwrap());
        let whole = fs::read(&path).unwrap();
        let len = [
            first,
            first + 1,
            (first + whole.len()) / 2,
            whole.len() - 1,
            whole.len(),
        ][kept];
        fs::write(&path, &whole[..len]).unwrap();
        let (outcome, expected) = if len == whole.len() {
            (Recovered::CommitFinished, entries(&after))
        } else {
            (Recovered::CommitUndone, entries(&before))
        };
        let what = format!("{len} of {} bytes", whole.len());
        assert_eq!(
            journal.recover(&within(&d.root), &no_sequel),
            vec![outcome],
            "{what}"
        );
        assert_eq!(tree(&d.root), expected, "{what}");
        assert_eq!(journal.record_count(), 0, "{what}");
    }
}

/// Issue 26, item 1: what a removal cut short left under its doomed name that is not the entry
/// to remove goes back under the temp name it came from (and from there where it belongs).
#[test]
fn what_a_doomed_name_holds_that_is_not_to_be_removed_goes_back() {
    let d = dirs();
    fs::write(d.root.join("a.txt"), "a old\n").unwrap();
    let journal = d.journal("x");
    let mut commit = journal.commit();
    put(&mut commit, &d.root, "a.txt", "a new\n");
    let path = kill_before_commit_point(&journal, commit);
    let aside = commit_record(&journal, &path).steps[0].aside.clone();
    // The original (under the temp name since the exchange) was moved to the doomed name by a
    // removal that found it was not the staged file, and killed before it put it back.
    let dir = dir_fd(&d.root);
    let doomed = fsops::doomed_name(aside.as_os_str());
    fsops::rename_noreplace(dir.as_dir(), aside.as_os_str(), dir.as_dir(), &doomed).unwrap();
    assert_eq!(
        journal.recover(&within(&d.root), &no_sequel),
        vec![Recovered::CommitUndone]
    );
    assert_eq!(tree(&d.root), entries(&[("a.txt", "a old\n")]));
}

/// Issue 26, item 3: a workspace whose sandbox reaches only part of a killed change leaves all
/// of it — files and record — as the kill left them; one that reaches all of it finishes it,
/// all or nothing.
#[test]
fn a_change_a_narrower_sandbox_cannot_wholly_reach_stays_whole_for_one_that_can() {
    for applied in [false, true] {
        let d = dirs();
        let (a, b) = (d.root.join("a"), d.root.join("b"));
        fs::create_dir(&a).unwrap();
        fs::create_dir(&b).unwrap();
        fs::write(a.join("f.txt"), "f old\n").unwrap();
        fs::write(b.join("g.txt"), "g old\n").unwrap();
        let journal = d.journal("x");
        let mut commit = journal.commit();
        put(&mut commit, &a, "f.txt", "f new\n");
        put(&mut commit, &b, "g.txt", "g new\n");
        let path = kill_before_commit_point(&journal, commit);
        if applied {
            as_applied(&journal, &path);
        }
        let left = tree(&d.root);
        for _ in 0..2 {
            let recovery = journal.recover_all(&within(&a), &no_sequel);
            assert_eq!(recovery.outcomes, vec![Recovered::Deferred]);
            assert_eq!(tree(&d.root), left, "nothing is touched");
            assert!(path.exists(), "the record stays");
            let [pending] = &recovery.pending[..] else {
                panic!("{:?}", recovery.pending)
            };
            assert_eq!(pending.out_of_reach, b);
            assert!(pending.covers(&a.join("f.txt")) && pending.covers(&b.join("g.txt")));
            assert!(pending.covers(&a) && !pending.covers(&a.join("other.txt")));
        }
        let outcome = journal.recover(&within(&d.root), &no_sequel);
        let (f, g) = if applied {
            assert_eq!(outcome, vec![Recovered::CommitFinished]);
            ("f new\n", "g new\n")
        } else {
            assert_eq!(outcome, vec![Recovered::CommitUndone]);
            ("f old\n", "g old\n")
        };
        assert_eq!(
            tree(&d.root),
            entries(&[("a/", ""), ("a/f.txt", f), ("b/", ""), ("b/g.txt", g)])
        );
        assert_eq!(journal.record_count(), 0);
    }
}

/// Issue 26, item 4: a record over 1 MiB (a change of thousands of entries) is read whole and
/// recovered, not thrown away as untrusted.
#[test]
fn a_record_over_a_mebibyte_is_read_whole_and_recovered() {
    let d = dirs();
    let long = "x".repeat(200);
    let names: Vec<String> = (0..2500).map(|i| format!("{i:04}-{long}")).collect();
    for name in &names {
        fs::write(d.root.join(name), name).unwrap();
    }
    let journal = d.journal("x");
    let mut commit = journal.commit();
    for name in &names {
        remove(&mut commit, &d.root, name);
    }
    let path = kill_before_commit_point(&journal, commit);
    assert!(fs::metadata(&path).unwrap().len() > 1 << 20);
    assert!(
        !d.root.join(&names[0]).exists(),
        "every entry was set aside"
    );
    assert_eq!(
        journal.recover(&within(&d.root), &no_sequel),
        vec![Recovered::CommitUndone]
    );
    let expected: Vec<(String, String)> = names.iter().map(|n| (n.clone(), n.clone())).collect();
    assert_eq!(tree(&d.root), expected);
    assert_eq!(journal.record_count(), 0);
}

/// Issue 26, item 8: a correctly sealed record whose temp name leads out of its directory
/// (`../outside/…`) is never acted on: the file outside stays.
#[test]
fn a_sealed_record_naming_more_than_one_plain_component_is_never_acted_on() {
    let d = dirs();
    let outside = d.base.join("outside");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("victim.txt"), "outside\n").unwrap();
    fs::write(d.root.join("x.txt"), "x\n").unwrap();
    let journal = d.journal("x");
    let victim = Snapshot::of(
        &fsops::lstat_at(dir_fd(&outside).as_dir(), OsStr::new("victim.txt"))
            .unwrap()
            .unwrap(),
    );
    let root = Snapshot::of(&fsops::fstat(dir_fd(&d.root)).unwrap());
    let record = json!({
        "kind": "commit",
        "applied": true,
        "steps": [{
            "dir": d.root, "dirDev": root.dev, "dirIno": root.ino,
            "name": "x.txt",
            "aside": "../outside/victim.txt",
            "action": { "kind": "remove", "removes": Version {
                dev: victim.dev, ino: victim.ino, size: victim.size, mtime: victim.mtime,
            } },
        }],
        "pid": DEAD_PID,
    });
    fs::create_dir_all(journal.dir()).unwrap();
    let path = journal.dir().join(format!("{DEAD_PID}-1-1.json"));
    journal.rewrite(&path, &serde_json::to_vec(&record).unwrap());
    let anywhere = Sandbox::new(PathBuf::from("/"), None, vec![]);
    assert_eq!(
        journal.recover(&anywhere, &no_sequel),
        vec![Recovered::Untrusted]
    );
    assert_eq!(
        fs::read_to_string(outside.join("victim.txt")).unwrap(),
        "outside\n"
    );
    assert!(!path.exists());
}

/// Issue 26, item 8: every name a record holds is checked where the record is parsed. Unix
/// paths; their Windows forms are checked where they are parsed (`record_names`).
#[cfg(unix)]
#[test]
fn every_name_a_record_holds_is_checked_where_it_is_parsed() {
    let step = json!({
        "dir": "/w/d", "dirDev": 1, "dirIno": 2,
        "name": "f.txt",
        "aside": ".f.txt.7.0.agent-fs-tools.tmp",
        "action": { "kind": "rename",
            "moves": { "dev": 1, "ino": 3, "size": 0, "mtime": [0, 0] },
            "toDir": "/w/e", "toDirDev": 1, "toDirIno": 4, "toName": "g.txt" },
    });
    let commit =
        |step: Value| json!({ "kind": "commit", "applied": false, "steps": [step], "pid": 7 });
    let parses = |record: &Value| Record::parse(&serde_json::to_vec(record).unwrap()).is_ok();
    assert!(parses(&commit(step.clone())));
    let bad_names = [
        json!(""),
        json!("."),
        json!(".."),
        json!("a/b"),
        json!("a\u{0}b"),
        json!([46, 46]),
    ];
    for field in ["name", "aside", "toName"] {
        for bad in &bad_names {
            let mut step = step.clone();
            match field {
                "toName" => step["action"]["toName"] = bad.clone(),
                _ => step[field] = bad.clone(),
            }
            assert!(!parses(&commit(step)), "{field}: {bad}");
        }
    }
    let mut step_not_ours = step.clone();
    step_not_ours["aside"] = json!("notes.txt");
    assert!(
        !parses(&commit(step_not_ours)),
        "an aside that is not our temp name"
    );
    for bad in ["w/d", "/w/../d", "/w/./d", "/w//d", "/w/d\u{0}"] {
        for field in ["dir", "toDir"] {
            let mut step = step.clone();
            match field {
                "toDir" => step["action"]["toDir"] = json!(bad),
                _ => step[field] = json!(bad),
            }
            assert!(!parses(&commit(step)), "{field}: {bad}");
        }
    }
    let temp = json!({ "kind": "temp", "dir": "/w/d", "dirDev": 1, "dirIno": 2,
        "name": ".f.7.0.agent-fs-tools.tmp", "pid": 7 });
    assert!(parses(&temp));
    for bad in ["../.f.7.0.agent-fs-tools.tmp", "f.txt", ".."] {
        let mut temp = temp.clone();
        temp["name"] = json!(bad);
        assert!(!parses(&temp), "temp name {bad}");
    }
    let removal = json!({ "kind": "removal", "dir": "/w/d", "dirDev": 1, "dirIno": 2,
        "name": "tree", "pid": 7 });
    assert!(parses(&removal));
    for bad in ["..", "a/b", ""] {
        let mut removal = removal.clone();
        removal["name"] = json!(bad);
        assert!(!parses(&removal), "removal name {bad}");
    }
    let append = json!({ "kind": "append", "path": "/w/d/f.log", "dev": 1, "ino": 2,
        "oldSize": 0, "appendLen": 1, "appendSha256": "", "pid": 7 });
    assert!(parses(&append));
    for bad in ["/w/../f.log", "/w/d/..", "/", "f.log", "/w/./f.log"] {
        let mut append = append.clone();
        append["path"] = json!(bad);
        assert!(!parses(&append), "append path {bad}");
    }
}

/// Records are read as they stream by when their `kind` comes first (as they are written), and
/// gathered otherwise; the oldest, without a `kind`, are appends.
#[test]
fn records_read_alike_in_any_field_order() {
    // A plain absolute directory, as records hold it here (JSON-escaped).
    let w = if cfg!(windows) { r"C:\\w" } else { "/w" };
    let parse = |text: String| Record::parse(text.as_bytes());
    let temp = parse(format!(
        r#"{{"kind":"temp","dir":"{w}","dirDev":1,"dirIno":2,"name":".a.1.2.agent-fs-tools.tmp","pid":7}}"#
    ))
    .unwrap();
    let reordered = parse(format!(
        r#"{{"dir":"{w}","dirDev":1,"kind":"temp","dirIno":2,"name":".a.1.2.agent-fs-tools.tmp","pid":7}}"#
    ))
    .unwrap();
    assert_eq!(temp, reordered);
    let file = if cfg!(windows) { r"C:\\w\\f" } else { "/w/f" };
    let oldest = parse(format!(
        r#"{{"path":"{file}","dev":1,"ino":2,"oldSize":3,"appendLen":4,"appendSha256":"","pid":7}}"#
    ))
    .unwrap();
    assert!(matches!(oldest, Record::Append(_)));
    assert!(Record::parse(br#"{"kind":"other","pid":7}"#).is_err());
    assert!(Record::parse(br#"{"kind":"temp"} trailing"#).is_err());
}

/// Records are written with their `kind` first: recovery tells changes of many entries (which
/// go first) by their first bytes, and reads them as they stream by.
#[test]
fn records_are_written_kind_first() {
    let record = Record::Commit(CommitRecord {
        applied: false,
        steps: Vec::new(),
        pid: 7,
        sequel: None,
        made_dirs: Vec::new(),
        archives: Vec::new(),
    });
    assert!(serde_json::to_vec(&record)
        .unwrap()
        .starts_with(super::record::COMMIT_HEAD));
}

/// A tree and an empty directory removed by one change: killed before the commit point,
/// recovery puts both back whole at their names; after it, recovery removes the tree, and the
/// empty directory only while empty — what appeared in it while it was set aside stays, with
/// it, at its name. Running recovery again changes nothing.
#[test]
fn a_tree_set_aside_is_put_back_or_removed_whole_and_an_empty_directory_only_while_empty() {
    for applied in [false, true] {
        let d = dirs();
        fs::create_dir_all(d.root.join("tree/sub")).unwrap();
        fs::write(d.root.join("tree/a.txt"), "a\n").unwrap();
        fs::write(d.root.join("tree/sub/b.txt"), "b\n").unwrap();
        fs::create_dir(d.root.join("empty")).unwrap();
        let journal = d.journal("trees");
        let mut commit = journal.commit();
        remove(&mut commit, &d.root, "tree");
        let empty = fsops::lstat_at(dir_fd(&d.root).as_dir(), OsStr::new("empty"))
            .unwrap()
            .unwrap();
        commit
            .remove_empty_dir(
                dir_fd(&d.root),
                &d.root,
                OsStr::new("empty"),
                Snapshot::of(&empty),
            )
            .unwrap();
        let path = kill_before_commit_point(&journal, commit);
        let record = commit_record(&journal, &path);
        assert!(!d.root.join("tree").exists() && !d.root.join("empty").exists());
        // Written through the directory set aside (as a process inside it could).
        fs::write(
            d.root.join(&record.steps[1].aside).join("late.txt"),
            "late\n",
        )
        .unwrap();
        let outcome = if applied {
            as_applied(&journal, &path);
            Recovered::CommitFinished
        } else {
            Recovered::CommitUndone
        };
        let stored = fs::read(&path).unwrap();
        let mut expected = vec![("empty/", ""), ("empty/late.txt", "late\n")];
        if !applied {
            expected.extend([
                ("tree/", ""),
                ("tree/a.txt", "a\n"),
                ("tree/sub/", ""),
                ("tree/sub/b.txt", "b\n"),
            ]);
        }
        assert_eq!(journal.recover(&within(&d.root), &no_sequel), vec![outcome]);
        assert_eq!(tree(&d.root), entries(&expected), "applied: {applied}");
        fs::write(&path, &stored).unwrap();
        assert_eq!(journal.recover(&within(&d.root), &no_sequel), vec![outcome]);
        assert_eq!(
            tree(&d.root),
            entries(&expected),
            "applied: {applied}, again"
        );
        assert_eq!(journal.record_count(), 0);
    }
}
