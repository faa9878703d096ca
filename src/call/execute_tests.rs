//! Hand-made plans of every step kind, run on temporary directories.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::Arc;

use super::*;
use crate::call::plan::{Act, ChangePlan, Expect, Found, Place, Step};
use crate::datadir::DataDir;
use crate::hashing::sha256_hex;
use crate::paths::Stat;

struct Setup {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    journal: Journal,
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(tmp.path()).unwrap();
    let root = base.join("root");
    fs::create_dir(&root).unwrap();
    fs::write(root.join("a.txt"), "a old\n").unwrap();
    fs::write(root.join("gone.txt"), "to remove\n").unwrap();
    fs::write(root.join("m.txt"), "to move\n").unwrap();
    fs::create_dir(root.join("empty")).unwrap();
    let journal = Journal::new(Arc::new(DataDir::new(base.join("data"))), "journal/x");
    Setup {
        _tmp: tmp,
        root,
        journal,
    }
}

impl Setup {
    fn place(&self, rel: &str) -> Place {
        let path = self.root.join(rel);
        Place {
            anchor: self.root.clone(),
            dir: path.parent().unwrap().to_owned(),
            name: path.file_name().unwrap().to_owned(),
        }
    }

    fn stat(&self, rel: &str) -> Stat {
        Stat::from(&fs::symlink_metadata(self.root.join(rel)).unwrap())
    }

    /// The file `rel` as read now.
    fn file(&self, rel: &str) -> Expect {
        Expect::File {
            stat: self.stat(rel),
            sha256: sha256_hex(&fs::read(self.root.join(rel)).unwrap()),
        }
    }

    fn entry(&self, rel: &str) -> Expect {
        Expect::Entry {
            stat: self.stat(rel),
        }
    }

    fn read(&self, rel: &str) -> Option<String> {
        fs::read_to_string(self.root.join(rel)).ok()
    }

    /// Every name in the tree, sorted (temp names included: none may be left).
    fn names(&self) -> Vec<String> {
        let mut names = Vec::new();
        let mut stack = vec![self.root.clone()];
        while let Some(dir) = stack.pop() {
            for entry in fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                names.push(path.strip_prefix(&self.root).unwrap().display().to_string());
                if path.is_dir() && !path.is_symlink() {
                    stack.push(path);
                }
            }
        }
        names.sort();
        names
    }

    fn records(&self) -> usize {
        fs::read_dir(self.journal.dir()).map_or(0, Iterator::count)
    }
}

fn step(at: Place, expect: Expect, act: Act) -> Step {
    Step { at, expect, act }
}

fn put(data: &str) -> Act {
    Act::Put {
        data: data.as_bytes().to_vec(),
    }
}

#[test]
fn every_step_kind_is_made_in_one_commit() {
    let s = setup();
    let plan = ChangePlan {
        steps: vec![
            step(s.place("a.txt"), s.file("a.txt"), put("a new\n")),
            step(s.place("new/deep/n.txt"), Expect::Nothing, put("n\n")),
            step(s.place("gone.txt"), s.file("gone.txt"), Act::Remove),
            step(
                s.place("m.txt"),
                s.entry("m.txt"),
                Act::Move {
                    to: s.place("moved.txt"),
                },
            ),
            step(
                s.place("made"),
                Expect::Nothing,
                Act::MakeDir { mode: Some(0o750) },
            ),
            step(s.place("empty"), s.entry("empty"), Act::Remove),
        ],
    };
    commit_plan(&s.journal, plan).unwrap();
    assert_eq!(s.read("a.txt").as_deref(), Some("a new\n"));
    assert_eq!(s.read("new/deep/n.txt").as_deref(), Some("n\n"));
    assert_eq!(s.read("moved.txt").as_deref(), Some("to move\n"));
    let made = fs::symlink_metadata(s.root.join("made")).unwrap();
    assert!(made.is_dir());
    assert_eq!(made.permissions().mode() & 0o7777, 0o750);
    assert_eq!(
        s.names(),
        [
            "a.txt",
            "made",
            "moved.txt",
            "new",
            "new/deep",
            "new/deep/n.txt"
        ]
    );
    assert_eq!(s.records(), 0, "the commit record is finished");
}

#[test]
fn an_overwrite_removes_then_takes_the_freed_name() {
    let s = setup();
    let plan = ChangePlan {
        steps: vec![
            step(s.place("a.txt"), s.entry("a.txt"), Act::Remove),
            step(
                s.place("m.txt"),
                s.entry("m.txt"),
                Act::Move {
                    to: s.place("a.txt"),
                },
            ),
        ],
    };
    commit_plan(&s.journal, plan).unwrap();
    assert_eq!(s.read("a.txt").as_deref(), Some("to move\n"));
    assert_eq!(s.read("m.txt"), None);
}

#[test]
fn a_place_not_as_planned_refuses_before_anything_is_staged() {
    let s = setup();
    let before = s.names();
    let expected = s.file("a.txt");
    fs::write(s.root.join("a.txt"), "written meanwhile\n").unwrap();
    let plan = ChangePlan {
        steps: vec![
            step(s.place("new/n.txt"), Expect::Nothing, put("n\n")),
            step(s.place("a.txt"), expected, put("a new\n")),
        ],
    };
    let error = commit_plan(&s.journal, plan).unwrap_err();
    assert_eq!(error.step, 1);
    assert!(matches!(
        error.failure,
        Failure::NotAsExpected(Found::Changed)
    ));
    assert_eq!(s.read("a.txt").as_deref(), Some("written meanwhile\n"));
    assert_eq!(
        s.names(),
        before,
        "the parent made for step 0 is gone again"
    );
    assert_eq!(s.records(), 0);

    let refusals = [
        (
            step(s.place("a.txt"), Expect::Nothing, put("x")),
            Found::Taken,
        ),
        (
            step(s.place("missing"), s.entry("gone.txt"), Act::Remove),
            Found::Gone,
        ),
        (
            step(s.place("m.txt"), s.entry("gone.txt"), Act::Remove),
            Found::Replaced,
        ),
    ];
    for (refused, found) in refusals {
        let error = commit_plan(
            &s.journal,
            ChangePlan {
                steps: vec![refused],
            },
        )
        .unwrap_err();
        assert!(
            matches!(error.failure, Failure::NotAsExpected(f) if f == found),
            "{found:?}: {error:?}"
        );
    }
    let taken = ChangePlan {
        steps: vec![step(
            s.place("m.txt"),
            s.entry("m.txt"),
            Act::Move {
                to: s.place("a.txt"),
            },
        )],
    };
    let error = commit_plan(&s.journal, taken).unwrap_err();
    assert!(matches!(
        error.failure,
        Failure::NotAsExpected(Found::Taken)
    ));
    assert_eq!(s.names(), before);
}

/// A file removed by identity that was written to after the executor's check (the journal's own
/// check, as the step is applied, finds it) fails the change: the put before it is taken back.
#[test]
fn a_later_step_that_fails_takes_back_the_earlier_ones() {
    let s = setup();
    let gone = s.entry("gone.txt");
    // Same inode, same kind: the executor's check passes; the journal's sees new bytes.
    fs::write(s.root.join("gone.txt"), "written meanwhile, longer\n").unwrap();
    let plan = ChangePlan {
        steps: vec![
            step(s.place("a.txt"), s.file("a.txt"), put("a new\n")),
            step(
                s.place("made"),
                Expect::Nothing,
                Act::MakeDir { mode: None },
            ),
            step(s.place("gone.txt"), gone, Act::Remove),
        ],
    };
    let before = s.names();
    let error = commit_plan(&s.journal, plan).unwrap_err();
    assert_eq!(error.step, 2);
    assert!(
        matches!(error.failure, Failure::Changed { .. }),
        "{error:?}"
    );
    assert_eq!(s.read("a.txt").as_deref(), Some("a old\n"));
    assert_eq!(
        s.read("gone.txt").as_deref(),
        Some("written meanwhile, longer\n")
    );
    assert_eq!(s.names(), before, "nothing made, nothing staged left");
    assert_eq!(s.records(), 0);
}

#[test]
fn a_plan_that_pairs_an_act_with_the_wrong_expectation_is_refused() {
    let s = setup();
    let cases = [
        step(s.place("a.txt"), s.entry("a.txt"), put("x")),
        step(s.place("x"), Expect::Nothing, Act::Remove),
        step(
            s.place("a.txt"),
            s.entry("a.txt"),
            Act::MakeDir { mode: None },
        ),
    ];
    for case in cases {
        let error = commit_plan(&s.journal, ChangePlan { steps: vec![case] }).unwrap_err();
        assert!(matches!(error.failure, Failure::Invalid(_)), "{error:?}");
    }
    let reused = ChangePlan {
        steps: vec![
            step(s.place("x"), Expect::Nothing, put("1")),
            step(s.place("x"), Expect::Nothing, put("2")),
        ],
    };
    let error = commit_plan(&s.journal, reused).unwrap_err();
    assert_eq!(error.step, 1);
    assert!(matches!(error.failure, Failure::Invalid(_)));
    assert_eq!(s.read("x"), None);
}
