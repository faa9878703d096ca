//! Hand-made plans of every step kind, run on temporary directories.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::json;

use super::*;
use crate::call::plan::{Act, BytesRead, ChangePlan, Expect, Found, Keep, Place, Step};
use crate::change::Action;
use crate::hashing::sha256_hex;
use crate::paths::fsops::race_point::{self, RacePoint};
use crate::paths::testing::Modes;
use crate::paths::Stat;

pub(super) struct Setup {
    _tmp: tempfile::TempDir,
    pub(super) root: PathBuf,
    pub(super) ws: Workspace,
    heading: Heading,
}

pub(super) fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let base = crate::paths::canonical::canonicalize_existing(tmp.path()).unwrap();
    let root = base.join("root");
    fs::create_dir(&root).unwrap();
    fs::write(root.join("a.txt"), "a old\n").unwrap();
    fs::write(root.join("gone.txt"), "to remove\n").unwrap();
    fs::write(root.join("m.txt"), "to move\n").unwrap();
    fs::create_dir(root.join("empty")).unwrap();
    let options = json!({ "root": root, "trash": { "dataDir": base.join("data") } });
    let ws = Workspace::new(&options, &[]).unwrap();
    let heading = Heading::for_test("test", "a hand-made plan");
    Setup {
        _tmp: tmp,
        root,
        ws,
        heading,
    }
}

/// Makes `plan`, listing one added file for the history.
pub(super) fn run(s: &Setup, plan: ChangePlan) -> Result<Executed, ExecuteError> {
    let listed = |_: &Done| vec![FileChange::new(s.root.join("listed"), Action::Added)];
    execute(&s.ws, plan, &s.heading, &CancelToken::new(), listed)
}

impl Setup {
    pub(super) fn place(&self, rel: &str) -> Place {
        let path = crate::paths::testing::below(&self.root, rel);
        Place {
            anchor: self.root.clone(),
            dir: path.parent().unwrap().to_owned(),
            name: path.file_name().unwrap().to_owned(),
        }
    }

    pub(super) fn stat(&self, rel: &str) -> Stat {
        crate::paths::testing::lstat(&self.root.join(rel)).unwrap()
    }

    /// The file `rel` as read now.
    fn file(&self, rel: &str) -> Expect {
        Expect::File {
            stat: self.stat(rel),
            sha256: sha256_hex(&fs::read(self.root.join(rel)).unwrap()),
            bytes: None,
        }
    }

    pub(super) fn entry(&self, rel: &str) -> Expect {
        Expect::Entry {
            stat: self.stat(rel),
        }
    }

    pub(super) fn read(&self, rel: &str) -> Option<String> {
        fs::read_to_string(self.root.join(rel)).ok()
    }

    /// Every name in the tree, sorted (temp names included: none may be left).
    pub(super) fn names(&self) -> Vec<String> {
        crate::paths::testing::names_below(&self.root)
    }

    fn records(&self) -> usize {
        fs::read_dir(self.ws.journal().dir()).map_or(0, Iterator::count)
    }

    pub(super) fn archives(&self) -> usize {
        fs::read_dir(self.ws.bucket().dir()).map_or(0, |dir| {
            dir.filter(|e| {
                let name = e.as_ref().unwrap().file_name();
                name.to_string_lossy().ends_with(".tar.gz")
            })
            .count()
        })
    }

    /// The history's records, oldest first.
    fn history(&self) -> Vec<crate::history::ChangeRecord> {
        let entries = self.ws.history().entries(&|_: &Path| true).unwrap();
        entries.into_iter().map(|e| (*e.record).clone()).collect()
    }
}

pub(super) fn step(at: Place, expect: Expect, act: Act) -> Step {
    Step {
        at,
        expect,
        keep: Keep::Nothing,
        act,
    }
}

pub(super) fn kept(step: Step) -> Step {
    Step {
        keep: Keep::Archive,
        ..step
    }
}

fn put(data: &str) -> Act {
    Act::Put {
        data: data.as_bytes().to_vec(),
        like: None,
        sha256: None,
    }
}

#[test]
fn every_step_kind_is_made_in_one_commit() {
    let s = setup();
    let plan = ChangePlan {
        consume: Vec::new(),
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
                Act::MakeDir {
                    mode: Some(0o750),
                    below: "x/y".into(),
                },
            ),
            step(s.place("empty"), s.entry("empty"), Act::Remove),
        ],
    };
    run(&s, plan).unwrap();
    assert_eq!(s.read("a.txt").as_deref(), Some("a new\n"));
    assert_eq!(s.read("new/deep/n.txt").as_deref(), Some("n\n"));
    assert_eq!(s.read("moved.txt").as_deref(), Some("to move\n"));
    let made = fs::symlink_metadata(s.root.join("made")).unwrap();
    assert!(made.is_dir());
    assert_eq!(
        made.permissions().mode() & 0o7777,
        crate::paths::testing::kept_mode(0o750)
    );
    assert_eq!(
        s.names(),
        [
            "a.txt",
            "made",
            "made/x",
            "made/x/y",
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
        consume: Vec::new(),
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
    run(&s, plan).unwrap();
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
        consume: Vec::new(),
        steps: vec![
            step(s.place("new/n.txt"), Expect::Nothing, put("n\n")),
            step(s.place("a.txt"), expected, put("a new\n")),
        ],
    };
    let error = run(&s, plan).err().unwrap();
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
        let error = run(
            &s,
            ChangePlan {
                consume: Vec::new(),
                steps: vec![refused],
            },
        )
        .err()
        .unwrap();
        assert!(
            matches!(error.failure, Failure::NotAsExpected(f) if f == found),
            "{found:?}: {error:?}"
        );
    }
    let taken = ChangePlan {
        consume: Vec::new(),
        steps: vec![step(
            s.place("m.txt"),
            s.entry("m.txt"),
            Act::Move {
                to: s.place("a.txt"),
            },
        )],
    };
    let error = run(&s, taken).err().unwrap();
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
        consume: Vec::new(),
        steps: vec![
            step(s.place("a.txt"), s.file("a.txt"), put("a new\n")),
            step(
                s.place("made"),
                Expect::Nothing,
                Act::MakeDir {
                    mode: None,
                    below: PathBuf::new(),
                },
            ),
            step(s.place("gone.txt"), gone, Act::Remove),
        ],
    };
    let before = s.names();
    let error = run(&s, plan).err().unwrap();
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
            Act::MakeDir {
                mode: None,
                below: PathBuf::new(),
            },
        ),
    ];
    for case in cases {
        let error = run(
            &s,
            ChangePlan {
                consume: Vec::new(),
                steps: vec![case],
            },
        )
        .err()
        .unwrap();
        assert!(matches!(error.failure, Failure::Invalid(_)), "{error:?}");
    }
    let reused = ChangePlan {
        consume: Vec::new(),
        steps: vec![
            step(s.place("x"), Expect::Nothing, put("1")),
            step(s.place("x"), Expect::Nothing, put("2")),
        ],
    };
    let error = run(&s, reused).err().unwrap();
    assert_eq!(error.step, 1);
    assert!(matches!(error.failure, Failure::Invalid(_)));
    assert_eq!(s.read("x"), None);
}

/// What a step keeps is archived before anything changes, and the change's record is written
/// with it: one record, as `files` lists it, with the archives it names.
#[test]
fn what_a_step_keeps_is_archived_first_and_recorded_with_the_change() {
    let s = setup();
    let plan = ChangePlan {
        consume: Vec::new(),
        steps: vec![
            kept(step(s.place("gone.txt"), s.file("gone.txt"), Act::Remove)),
            kept(step(s.place("a.txt"), s.file("a.txt"), put("a new\n"))),
        ],
    };
    let files = |done: &Done| {
        let trashed = |i: usize| done.archives[i].as_ref().map(|a| a.archive_path.clone());
        vec![
            FileChange {
                trashed_to: trashed(0),
                ..FileChange::new(s.root.join("gone.txt"), Action::Deleted)
            },
            FileChange {
                trashed_to: trashed(1),
                ..FileChange::new(s.root.join("a.txt"), Action::Modified)
            },
        ]
    };
    let executed = execute(&s.ws, plan, &s.heading, &CancelToken::new(), files).unwrap();
    assert_eq!(
        executed.recorded,
        Recorded::Written {
            id: s.heading.id.clone()
        }
    );
    assert_eq!(s.read("gone.txt"), None);
    assert_eq!(s.read("a.txt").as_deref(), Some("a new\n"));
    let archived: Vec<_> = executed.done.archives.iter().flatten().collect();
    assert_eq!(archived.len(), 2);
    assert_eq!(s.archives(), 2);
    assert_eq!(
        archived[0].metadata.original_sha256,
        sha256_hex(b"to remove\n")
    );
    assert_eq!(archived[1].metadata.original_sha256, sha256_hex(b"a old\n"));
    let history = s.history();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].id, s.heading.id);
    let trashed: Vec<_> = history[0]
        .files
        .iter()
        .map(|f| f.trashed_to.clone())
        .collect();
    assert_eq!(
        trashed,
        [
            Some(archived[0].archive_path.clone()),
            Some(archived[1].archive_path.clone())
        ]
    );
    assert_eq!(s.records(), 0);
}

/// An archive that does not hold the bytes the plan read refuses the change: nothing changes,
/// the archives are discarded, nothing is recorded.
#[test]
fn an_archive_that_does_not_hold_what_was_read_refuses_the_change() {
    let s = setup();
    let before = s.names();
    let misread = Expect::File {
        stat: s.stat("a.txt"),
        sha256: sha256_hex(b"not what is there"),
        bytes: None,
    };
    let plan = ChangePlan {
        consume: Vec::new(),
        steps: vec![
            kept(step(s.place("gone.txt"), s.file("gone.txt"), Act::Remove)),
            kept(step(s.place("a.txt"), misread, put("a new\n"))),
        ],
    };
    let error = run(&s, plan).err().unwrap();
    assert_eq!(error.step, 1);
    assert!(matches!(
        error.failure,
        Failure::NotAsExpected(Found::Changed)
    ));
    assert_eq!(s.names(), before);
    assert_eq!(s.read("a.txt").as_deref(), Some("a old\n"));
    assert_eq!(s.archives(), 0, "both archives are discarded");
    assert!(s.history().is_empty());
    assert_eq!(s.records(), 0);

    let nothing_to_keep = ChangePlan {
        consume: Vec::new(),
        steps: vec![kept(step(s.place("x"), Expect::Nothing, put("x")))],
    };
    let error = run(&s, nothing_to_keep).err().unwrap();
    assert!(matches!(error.failure, Failure::Invalid(_)));
}

/// The bytes a plan kept are what the exchange checks the displaced file against: kept bytes
/// other than the file's (its stat and SHA-256 as planned) find it changed, and nothing changes;
/// the bytes it holds let the change be made.
#[test]
fn a_file_is_checked_against_the_bytes_its_plan_kept() {
    let s = setup();
    let before = s.names();
    let plan = |kept: &[u8]| ChangePlan {
        consume: Vec::new(),
        steps: vec![step(
            s.place("a.txt"),
            Expect::File {
                stat: s.stat("a.txt"),
                sha256: sha256_hex(b"a old\n"),
                bytes: Some(BytesRead(std::sync::Arc::new(kept.to_vec()))),
            },
            put("a new\n"),
        )],
    };
    let error = run(&s, plan(b"A OLD\n")).err().unwrap();
    assert_eq!(error.step, 0);
    assert!(
        matches!(
            error.failure,
            Failure::Changed {
                being_written: false,
                kept: None
            }
        ),
        "{:?}",
        error.failure
    );
    assert_eq!(s.read("a.txt").as_deref(), Some("a old\n"));
    assert_eq!(s.names(), before, "the staged file is gone");
    assert!(s.history().is_empty());
    run(&s, plan(b"a old\n")).unwrap();
    assert_eq!(s.read("a.txt").as_deref(), Some("a new\n"));
    assert_eq!(s.records(), 0);
}

/// A change that fails as it is applied is not recorded, and its archives are discarded.
#[test]
fn a_change_that_fails_at_apply_is_not_recorded() {
    let s = setup();
    let gone = s.entry("gone.txt");
    fs::write(s.root.join("gone.txt"), "written meanwhile, longer\n").unwrap();
    let plan = ChangePlan {
        consume: Vec::new(),
        steps: vec![
            kept(step(s.place("a.txt"), s.file("a.txt"), put("a new\n"))),
            step(s.place("gone.txt"), gone, Act::Remove),
        ],
    };
    let error = run(&s, plan).err().unwrap();
    assert_eq!(error.step, 1);
    assert_eq!(s.read("a.txt").as_deref(), Some("a old\n"));
    assert_eq!(s.archives(), 0);
    assert!(s.history().is_empty());
}

/// An archive the plan consumes is deleted with the change, after its commit point; a change
/// that is not made leaves it.
#[test]
fn a_consumed_archive_goes_with_the_change_and_only_with_it() {
    let s = setup();
    let keep_a = ChangePlan {
        consume: Vec::new(),
        steps: vec![kept(step(
            s.place("a.txt"),
            s.file("a.txt"),
            put("a new\n"),
        ))],
    };
    let executed = run(&s, keep_a).unwrap();
    let archive = executed.done.archives[0]
        .as_ref()
        .unwrap()
        .archive_path
        .clone();
    drop(executed);
    assert_eq!(s.archives(), 1);
    let refused = ChangePlan {
        consume: vec![archive.clone()],
        steps: vec![step(s.place("a.txt"), Expect::Nothing, put("x"))],
    };
    assert!(run(&s, refused).is_err());
    assert!(archive.exists(), "a change not made consumes nothing");
    let consuming = ChangePlan {
        consume: vec![archive.clone()],
        steps: vec![step(s.place("b.txt"), Expect::Nothing, put("b\n"))],
    };
    run(&s, consuming).unwrap();
    assert!(!archive.exists());
    assert_eq!(s.read("b.txt").as_deref(), Some("b\n"));
    assert_eq!(s.history().len(), 2);
}

impl Setup {
    /// The tree `tree/` (two files, a subdirectory) for removals.
    fn make_tree(&self) {
        fs::create_dir_all(self.root.join("tree/sub")).unwrap();
        fs::write(self.root.join("tree/a.txt"), "a\n").unwrap();
        fs::write(self.root.join("tree/sub/b.txt"), "b\n").unwrap();
    }
}

/// A tree kept in the trash first is archived whole, then removed with its record: nothing of
/// it (nor a temp name) is left, its archive is held for the result.
#[test]
fn a_tree_is_archived_then_removed_with_its_record() {
    let s = setup();
    s.make_tree();
    let plan = ChangePlan {
        consume: Vec::new(),
        steps: vec![kept(step(s.place("tree"), s.entry("tree"), Act::Remove))],
    };
    let executed = run(&s, plan).unwrap();
    assert!(!s.root.join("tree").exists());
    assert!(!s
        .names()
        .iter()
        .any(|n| n.starts_with("tree") || n.contains(".tmp")));
    let archived = executed.done.archives[0].as_ref().unwrap();
    assert_eq!(archived.metadata.file_count, Some(2));
    assert_eq!(s.archives(), 1);
    assert_eq!(s.history().len(), 1);
    assert_eq!(s.records(), 0);
}

/// A tree that gains an entry after it was archived (and before it is set aside) is not
/// removed: the entry is not in the archive. The tree stays whole at its name, with the new
/// entry, and its archive is discarded; nothing is recorded.
#[test]
fn a_tree_that_gains_an_entry_after_it_was_archived_stays_whole() {
    let s = setup();
    // A name no other test removes: the race point is the process's.
    s.make_tree();
    fs::rename(s.root.join("tree"), s.root.join("tree-gains")).unwrap();
    let late = s.root.join("tree-gains/sub/late.txt");
    race_point::at(RacePoint::BeforeRemove, "tree-gains", move || {
        fs::write(&late, "late\n").unwrap()
    });
    let plan = ChangePlan {
        consume: Vec::new(),
        steps: vec![kept(step(
            s.place("tree-gains"),
            s.entry("tree-gains"),
            Act::Remove,
        ))],
    };
    let e = run(&s, plan).err().expect("refused");
    assert!(matches!(e.failure, Failure::Changed { .. }), "{e:?}");
    assert_eq!(s.read("tree-gains/a.txt").as_deref(), Some("a\n"));
    assert_eq!(s.read("tree-gains/sub/late.txt").as_deref(), Some("late\n"));
    assert_eq!(s.archives(), 0);
    assert!(s.history().is_empty());
    assert_eq!(s.records(), 0);
}

/// An empty directory that gains an entry before it is set aside is not removed, nor what
/// appeared in it.
#[test]
fn an_empty_directory_that_gains_an_entry_is_not_removed() {
    let s = setup();
    // A name no other test removes: the race point is the process's.
    fs::create_dir(s.root.join("empty-gains")).unwrap();
    let late = s.root.join("empty-gains/late.txt");
    race_point::at(RacePoint::BeforeRemove, "empty-gains", move || {
        fs::write(&late, "late\n").unwrap()
    });
    let expect = Expect::EmptyDir {
        stat: s.stat("empty-gains"),
    };
    let plan = ChangePlan {
        consume: Vec::new(),
        steps: vec![step(s.place("empty-gains"), expect, Act::Remove)],
    };
    let e = run(&s, plan).err().expect("refused");
    assert!(matches!(e.failure, Failure::Changed { .. }), "{e:?}");
    assert_eq!(s.read("empty-gains/late.txt").as_deref(), Some("late\n"));
    assert!(s.history().is_empty());
    assert_eq!(s.records(), 0);
}

/// An empty directory is removed with its record; it cannot be kept in the trash (a plan's
/// mistake, refused before anything).
#[test]
fn an_empty_directory_is_removed_and_never_archived() {
    let s = setup();
    let expect = Expect::EmptyDir {
        stat: s.stat("empty"),
    };
    let archived = ChangePlan {
        consume: Vec::new(),
        steps: vec![kept(step(s.place("empty"), expect.clone(), Act::Remove))],
    };
    let e = run(&s, archived).err().expect("refused");
    assert!(matches!(e.failure, Failure::Invalid(_)), "{e:?}");
    assert!(s.root.join("empty").is_dir());
    let plan = ChangePlan {
        consume: Vec::new(),
        steps: vec![step(s.place("empty"), expect, Act::Remove)],
    };
    run(&s, plan).unwrap();
    assert!(!s.root.join("empty").exists());
    assert_eq!(s.history().len(), 1);
}

/// A put `like` another entry takes that entry's mode, not its own or a new file's: a file
/// moved with new content (a removal, then a put at the new name) keeps its source's mode,
/// also where the put replaces a file.
#[test]
fn a_put_like_another_entry_takes_its_mode() {
    let s = setup();
    fs::set_permissions(s.root.join("m.txt"), fs::Permissions::from_mode(0o640)).unwrap();
    fs::set_permissions(s.root.join("a.txt"), fs::Permissions::from_mode(0o600)).unwrap();
    let source = s.stat("m.txt");
    let like = |data: &str| Act::Put {
        data: data.as_bytes().to_vec(),
        like: Some(source),
        sha256: None,
    };
    let plan = ChangePlan {
        consume: Vec::new(),
        steps: vec![
            step(s.place("m.txt"), s.file("m.txt"), Act::Remove),
            step(s.place("new.txt"), Expect::Nothing, like("moved\n")),
            step(s.place("a.txt"), s.file("a.txt"), like("replaced\n")),
        ],
    };
    run(&s, plan).unwrap();
    let mode = |rel: &str| fs::metadata(s.root.join(rel)).unwrap().permissions().mode() & 0o777;
    assert_eq!(s.read("m.txt"), None);
    assert_eq!(s.read("new.txt").as_deref(), Some("moved\n"));
    assert_eq!(s.read("a.txt").as_deref(), Some("replaced\n"));
    let kept = crate::paths::testing::kept_mode(0o640);
    assert_eq!((mode("new.txt"), mode("a.txt")), (kept, kept));
}
