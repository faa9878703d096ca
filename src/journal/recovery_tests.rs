//! Recovery of changes of many entries (issue 26): readable at any size, and never acting
//! outside the allowed trees whoever sealed the record.

use std::ffi::OsStr;
use std::fs;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Value};

use super::commit::{kill_before_commit_point, CommitRecord, Ident};
use super::{Journal, Record, Recovered};
use crate::datadir::DataDir;
use crate::paths::fsops::{self, Snapshot};
use crate::paths::Sandbox;

/// A pid no process has (above any `pid_max`): the writer of a record "died".
const DEAD_PID: u32 = u32::MAX - 1;

struct Dirs {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
}

fn dirs() -> Dirs {
    let tmp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(tmp.path()).unwrap();
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

fn dir_fd(dir: &Path) -> OwnedFd {
    fsops::open_dir(dir, dir, false).unwrap()
}

/// Adds removing `dir/name`.
fn remove(commit: &mut super::commit::Commit<'_>, dir: &Path, name: &str) {
    let stat = fsops::lstat_at(dir_fd(dir).as_fd(), OsStr::new(name))
        .unwrap()
        .unwrap();
    commit
        .remove(dir_fd(dir), dir, OsStr::new(name), Snapshot::of(&stat))
        .unwrap();
}

/// Every entry under `dir` (hidden ones too), by its path below `dir`, with a file's content.
fn tree(dir: &Path) -> Vec<(String, String)> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path
                .strip_prefix(base)
                .unwrap()
                .to_string_lossy()
                .into_owned();
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

fn within(dir: &Path) -> Sandbox {
    Sandbox::new(dir.to_owned(), Some(vec![dir.to_owned()]), vec![])
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
        &fsops::lstat_at(dir_fd(&outside).as_fd(), OsStr::new("victim.txt"))
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
            "action": { "kind": "remove", "removes": Ident {
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

/// Issue 26, item 8: every name a record holds is checked where the record is parsed.
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
    let temp = Record::parse(
        br#"{"kind":"temp","dir":"/w","dirDev":1,"dirIno":2,"name":".a.1.2.agent-fs-tools.tmp","pid":7}"#,
    )
    .unwrap();
    let reordered = Record::parse(
        br#"{"dir":"/w","dirDev":1,"kind":"temp","dirIno":2,"name":".a.1.2.agent-fs-tools.tmp","pid":7}"#,
    )
    .unwrap();
    assert_eq!(temp, reordered);
    let oldest = Record::parse(
        br#"{"path":"/w/f","dev":1,"ino":2,"oldSize":3,"appendLen":4,"appendSha256":"","pid":7}"#,
    )
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
    });
    assert!(serde_json::to_vec(&record)
        .unwrap()
        .starts_with(super::record::COMMIT_HEAD));
}
