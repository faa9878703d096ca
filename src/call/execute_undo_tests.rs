//! The steps undo's plans use: a tree kept whole and removed as it is when its step comes (after
//! what moves out of it), its digest checked; entries trading places round a temp name; a file
//! built from bytes with an exact mode; and recovery of such a change killed before its commit
//! point.

use std::ffi::OsStr;
use std::fs;

use super::tests::{kept, setup, step};
use super::*;
use crate::call::plan::{Act, ChangePlan, Expect, Found, Place, Source};
use crate::journal::commit::kill_before_commit_point;
use crate::paths::testing::Modes;

/// `dir/d/f` and `dir/g`.
fn tree(s: &super::tests::Setup) {
    fs::create_dir_all(s.root.join("dir/d")).unwrap();
    fs::write(s.root.join("dir/d/f"), "f\n").unwrap();
    fs::write(s.root.join("dir/g"), "g\n").unwrap();
}

fn tree_expect(s: &super::tests::Setup, rel: &str, sha256: Option<String>) -> Expect {
    Expect::Tree {
        stat: s.stat(rel),
        sha256,
    }
}

#[test]
fn a_tree_is_removed_as_it_is_once_what_moves_out_of_it_has() {
    let s = setup();
    tree(&s);
    let plan = ChangePlan {
        consume: Vec::new(),
        steps: vec![
            step(
                s.place("dir/d/f"),
                s.entry("dir/d/f"),
                Act::Move { to: s.place("out") },
            ),
            kept(step(
                s.place("dir"),
                tree_expect(&s, "dir", None),
                Act::Remove,
            )),
        ],
    };
    let executed = super::tests::run(&s, plan).unwrap();
    assert_eq!(s.read("out").as_deref(), Some("f\n"));
    assert!(!s.root.join("dir").exists());
    let archive = executed.done.archives[1]
        .as_ref()
        .expect("the tree was kept");
    assert_eq!(archive.metadata.kind, crate::paths::EntryKind::Directory);
    assert_eq!(
        archive.metadata.file_count,
        Some(2),
        "kept before f moved out"
    );
}

#[test]
fn a_tree_whose_digest_is_not_the_expected_one_is_refused_and_nothing_is_kept() {
    let s = setup();
    tree(&s);
    let plan = ChangePlan {
        consume: Vec::new(),
        steps: vec![kept(step(
            s.place("dir"),
            tree_expect(&s, "dir", Some("0".repeat(64))),
            Act::Remove,
        ))],
    };
    let e = super::tests::run(&s, plan).err().expect("refused");
    assert!(matches!(e.failure, Failure::NotAsExpected(Found::Changed)));
    assert_eq!(s.read("dir/g").as_deref(), Some("g\n"));
    assert_eq!(s.archives(), 0, "the archive made is discarded");
}

#[test]
fn entries_trade_places_round_a_temp_name() {
    let s = setup();
    fs::write(s.root.join("b.txt"), "b\n").unwrap();
    let temp = fsops::temp_name(OsStr::new("a.txt"));
    let aside = Place {
        name: temp.clone(),
        ..s.place("a.txt")
    };
    let (a, b) = (s.entry("a.txt"), s.entry("b.txt"));
    let plan = ChangePlan {
        consume: Vec::new(),
        steps: vec![
            step(s.place("a.txt"), a.clone(), Act::Move { to: aside.clone() }),
            step(
                s.place("b.txt"),
                b,
                Act::Move {
                    to: s.place("a.txt"),
                },
            ),
            step(
                aside,
                a,
                Act::Move {
                    to: s.place("b.txt"),
                },
            ),
        ],
    };
    super::tests::run(&s, plan).unwrap();
    assert_eq!(s.read("a.txt").as_deref(), Some("b\n"));
    assert_eq!(s.read("b.txt").as_deref(), Some("a old\n"));
    assert!(!s.root.join(&temp).exists());
}

#[test]
fn a_file_is_built_from_bytes_with_exactly_its_mode() {
    let s = setup();
    let plan = ChangePlan {
        consume: Vec::new(),
        steps: vec![step(
            s.place("new/built.txt"),
            Expect::Nothing,
            Act::Build(Source::Bytes {
                data: b"built\n".to_vec(),
                mode: 0o604,
            }),
        )],
    };
    super::tests::run(&s, plan).unwrap();
    assert_eq!(s.read("new/built.txt").as_deref(), Some("built\n"));
    let mode = fs::metadata(s.root.join("new/built.txt"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o7777, crate::paths::testing::kept_mode(0o604));
}

/// A change that moves an entry out of a directory and then removes that directory, killed
/// before its commit point: recovery opens the directory once the removal is undone, and the
/// entry goes back into it (it was left outside, the directory back empty).
#[test]
fn recovery_puts_back_what_moved_out_of_a_directory_the_change_removed() {
    let s = setup();
    tree(&s);
    let journal = s.ws.journal();
    let dir = |rel: &str| fsops::open_dir(&s.root, &s.root.join(rel), false).unwrap();
    let snapshot = |rel: &str| fsops::Snapshot::of(&s.stat(rel));
    let mut commit = journal.commit();
    let d = s.root.join("dir").join("d");
    commit
        .rename(
            dir("dir/d"),
            &d,
            OsStr::new("f"),
            snapshot("dir/d/f"),
            dir(""),
            &s.root,
            OsStr::new("out"),
        )
        .unwrap();
    commit
        .remove(dir(""), &s.root, OsStr::new("dir"), snapshot("dir"))
        .unwrap();
    kill_before_commit_point(journal, commit);
    assert_eq!(s.read("out").as_deref(), Some("f\n"), "killed once made");
    let recovered = journal.recover(s.ws.sandbox(), &|_: &serde_json::Value| Ok(()));
    assert_eq!(recovered, vec![crate::journal::Recovered::CommitUndone]);
    assert_eq!(s.read("dir/d/f").as_deref(), Some("f\n"));
    assert_eq!(s.read("dir/g").as_deref(), Some("g\n"));
    assert!(!s.root.join("out").exists());
}

#[test]
fn a_tree_is_built_of_pieces_and_what_moves_into_it_moves_in_before_it_is_placed() {
    let s = setup();
    fs::write(s.root.join("loose.txt"), "loose\n").unwrap();
    let tree = Source::Tree {
        root: Box::new(Source::EmptyDir { mode: 0o750 }),
        moves: Vec::new(),
        drops: Vec::new(),
        inside: vec![
            ("sub".into(), Source::EmptyDir { mode: 0o700 }),
            (
                "sub/f.txt".into(),
                Source::Bytes {
                    data: b"f\n".to_vec(),
                    mode: 0o600,
                },
            ),
        ],
    };
    let into = Place {
        dir: s.root.join("built").join("sub"),
        ..s.place("loose.txt")
    };
    let plan = ChangePlan {
        consume: Vec::new(),
        steps: vec![
            step(
                s.place("loose.txt"),
                s.entry("loose.txt"),
                Act::Move { to: into },
            ),
            step(s.place("built"), Expect::Nothing, Act::Build(tree)),
        ],
    };
    super::tests::run(&s, plan).unwrap();
    assert_eq!(s.read("built/sub/f.txt").as_deref(), Some("f\n"));
    assert_eq!(s.read("built/sub/loose.txt").as_deref(), Some("loose\n"));
    let mode = |rel: &str| {
        fs::symlink_metadata(s.root.join(rel))
            .unwrap()
            .permissions()
            .mode()
    };
    assert_eq!(mode("built") & 0o7777, 0o750);
    assert_eq!(mode("built/sub") & 0o7777, 0o700);
    assert_eq!(mode("built/sub/f.txt") & 0o7777, 0o600);
    assert!(!s.root.join("loose.txt").exists());
    assert!(
        s.names().iter().all(|n| !n.contains(".restore-")),
        "{:?}",
        s.names()
    );
}

#[test]
fn a_refused_step_stops_the_plan_before_any_tree_is_built() {
    let s = setup();
    fs::write(s.root.join("loose.txt"), "loose\n").unwrap();
    let before = s.names();
    let tree = Source::Tree {
        root: Box::new(Source::EmptyDir { mode: 0o755 }),
        moves: Vec::new(),
        drops: Vec::new(),
        inside: Vec::new(),
    };
    let into = Place {
        dir: s.root.join("built"),
        ..s.place("loose.txt")
    };
    let plan = ChangePlan {
        consume: Vec::new(),
        steps: vec![
            step(
                s.place("loose.txt"),
                s.entry("loose.txt"),
                Act::Move { to: into },
            ),
            step(s.place("built"), Expect::Nothing, Act::Build(tree)),
            // The file is not what this step expects: refused before anything is built.
            step(s.place("a.txt"), s.entry("m.txt"), Act::Remove),
        ],
    };
    let e = super::tests::run(&s, plan).err().expect("refused");
    assert_eq!(e.step, 2);
    assert_eq!(s.names(), before, "nothing built is left");
}

#[test]
fn an_entry_kept_alone_is_archived_and_stays() {
    let s = setup();
    let plan = ChangePlan {
        consume: Vec::new(),
        steps: vec![kept(step(s.place("a.txt"), s.entry("a.txt"), Act::Archive))],
    };
    let executed = super::tests::run(&s, plan).unwrap();
    assert!(executed.done.archives[0].is_some());
    assert_eq!(s.read("a.txt").as_deref(), Some("a old\n"));
    assert_eq!(s.archives(), 1);
}

/// `built` as an empty directory with `sub/f.txt` built inside it.
fn tree_with_a_file() -> Source {
    Source::Tree {
        root: Box::new(Source::EmptyDir { mode: 0o750 }),
        moves: Vec::new(),
        drops: Vec::new(),
        inside: vec![
            ("sub".into(), Source::EmptyDir { mode: 0o700 }),
            (
                "sub/f.txt".into(),
                Source::Bytes {
                    data: b"f\n".to_vec(),
                    mode: 0o600,
                },
            ),
        ],
    }
}

/// The step that builds `built` ([`tree_with_a_file`]).
fn build_tree_with_a_file(s: &super::tests::Setup) -> crate::call::plan::Step {
    let tree = Act::Build(tree_with_a_file());
    step(s.place("built"), Expect::Nothing, tree)
}

/// A move of `built/sub/f.txt`, an entry of the tree the plan builds, to `out.txt`.
fn move_out_of_built(s: &super::tests::Setup) -> crate::call::plan::Step {
    let from = Place {
        dir: s.root.join("built").join("sub"),
        name: "f.txt".into(),
        ..s.place("out.txt")
    };
    step(
        from,
        Expect::Built,
        Act::Move {
            to: s.place("out.txt"),
        },
    )
}

#[test]
fn an_entry_moves_out_of_a_tree_built_once_the_tree_is_placed() {
    let s = setup();
    let before = s.names();
    let plan = ChangePlan {
        consume: Vec::new(),
        steps: vec![build_tree_with_a_file(&s), move_out_of_built(&s)],
    };
    super::tests::run(&s, plan).unwrap();
    assert_eq!(s.read("out.txt").as_deref(), Some("f\n"));
    let mut after = before;
    after.extend(["built", "built/sub", "out.txt"].map(String::from));
    after.sort();
    assert_eq!(s.names(), after);
}

#[test]
fn an_entry_moved_out_of_a_tree_built_goes_back_in_when_a_later_step_fails() {
    let s = setup();
    fs::write(s.root.join("other.txt"), "other\n").unwrap();
    let before = s.names();
    // Seen as it is, but its bytes are not what the step was planned on: the journal's step
    // refuses it as the commit applies it, after the move out.
    let stale = Expect::File {
        stat: s.stat("other.txt"),
        sha256: "0".repeat(64),
        bytes: None,
    };
    let put = Act::Put {
        data: b"new\n".to_vec(),
        like: None,
        sha256: None,
    };
    let plan = ChangePlan {
        consume: Vec::new(),
        steps: vec![
            build_tree_with_a_file(&s),
            move_out_of_built(&s),
            step(s.place("other.txt"), stale, put),
        ],
    };
    let e = super::tests::run(&s, plan).err().expect("refused");
    assert!(
        matches!(e.failure, Failure::Changed { .. }),
        "{:?}",
        e.failure
    );
    assert_eq!(s.names(), before, "nothing is left of the plan");
    assert_eq!(s.read("other.txt").as_deref(), Some("other\n"));
}

#[test]
fn a_move_out_of_a_tree_before_the_step_that_builds_it_is_refused() {
    let s = setup();
    let before = s.names();
    let plan = ChangePlan {
        consume: Vec::new(),
        steps: vec![move_out_of_built(&s), build_tree_with_a_file(&s)],
    };
    super::tests::run(&s, plan).err().expect("refused");
    assert_eq!(s.names(), before);
}

#[test]
fn only_a_move_expects_an_entry_of_a_tree_the_plan_builds() {
    let s = setup();
    fs::write(s.root.join("other.txt"), "other\n").unwrap();
    let plan = ChangePlan {
        consume: Vec::new(),
        steps: vec![step(s.place("other.txt"), Expect::Built, Act::Remove)],
    };
    let e = super::tests::run(&s, plan).err().expect("refused");
    assert!(matches!(e.failure, Failure::Invalid(_)), "{:?}", e.failure);
    assert_eq!(s.read("other.txt").as_deref(), Some("other\n"));
}

/// `dir` (from [`tree`], with `dir/d/e/h` too) removed into the trash: the archive's path.
fn trashed_tree(s: &super::tests::Setup) -> std::path::PathBuf {
    tree(s);
    fs::create_dir(s.root.join("dir/d/e")).unwrap();
    fs::write(s.root.join("dir/d/e/h"), "h\n").unwrap();
    let plan = ChangePlan {
        consume: Vec::new(),
        steps: vec![kept(step(
            s.place("dir"),
            tree_expect(s, "dir", None),
            Act::Remove,
        ))],
    };
    let executed = super::tests::run(s, plan).unwrap();
    let archived = executed.done.archives[0].as_ref().expect("kept");
    archived.archive_path.clone()
}

#[test]
fn directories_move_within_a_tree_built_from_the_trash_and_out_of_it_once_placed() {
    let s = setup();
    let archive = trashed_tree(&s);
    // d goes to g2/d (g dropped, its name taken by the directory d/e moved there with what is
    // in it), d's file f dropped where d is set aside; then d/e's file h moves out of the
    // placed tree, and d itself too.
    let built = Source::Tree {
        root: Box::new(Source::Archive { archive }),
        moves: vec![("d".into(), "g".into()), ("d/e".into(), "g/e2".into())],
        drops: vec!["g".into(), "d/f".into()],
        inside: Vec::new(),
    };
    let out = |from: &str, to: &str| {
        let path = s.root.join(from);
        let from = Place {
            dir: path.parent().unwrap().to_owned(),
            name: path.file_name().unwrap().to_owned(),
            ..s.place(to)
        };
        step(from, Expect::Built, Act::Move { to: s.place(to) })
    };
    let plan = ChangePlan {
        consume: Vec::new(),
        steps: vec![
            step(s.place("dir"), Expect::Nothing, Act::Build(built)),
            out("dir/g/e2/h", "h-out"),
            out("dir/g/e2", "e-out"),
        ],
    };
    super::tests::run(&s, plan).unwrap();
    let mut names = s.names();
    names.retain(|n| n.starts_with("dir") || n.ends_with("-out"));
    assert_eq!(names, ["dir", "dir/g", "e-out", "h-out"]);
    assert_eq!(s.read("h-out").as_deref(), Some("h\n"));
}

#[test]
fn an_entry_moves_out_of_a_tree_built_into_another_placed_before_it() {
    let s = setup();
    fs::write(s.root.join("other.txt"), "other\n").unwrap();
    let before = s.names();
    let into = Place {
        dir: s.root.join("second"),
        ..s.place("moved.txt")
    };
    let mut move_out = move_out_of_built(&s);
    move_out.act = Act::Move { to: into };
    let second = step(
        s.place("second"),
        Expect::Nothing,
        Act::Build(Source::Tree {
            root: Box::new(Source::EmptyDir { mode: 0o705 }),
            moves: Vec::new(),
            drops: Vec::new(),
            inside: Vec::new(),
        }),
    );
    let plan = ChangePlan {
        consume: Vec::new(),
        steps: vec![second.clone(), build_tree_with_a_file(&s), move_out.clone()],
    };
    super::tests::run(&s, plan).unwrap();
    assert_eq!(s.read("second/moved.txt").as_deref(), Some("f\n"));
    assert!(!s.root.join("built/sub/f.txt").exists());
    let mode = fs::symlink_metadata(s.root.join("second"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o7777, 0o705);

    // A later step that fails takes the move back into the first tree, then both trees away.
    let s = setup();
    fs::write(s.root.join("other.txt"), "other\n").unwrap();
    let stale = Expect::File {
        stat: s.stat("other.txt"),
        sha256: "0".repeat(64),
        bytes: None,
    };
    let put = Act::Put {
        data: b"new\n".to_vec(),
        like: None,
        sha256: None,
    };
    let plan = ChangePlan {
        consume: Vec::new(),
        steps: vec![
            second,
            build_tree_with_a_file(&s),
            move_out,
            step(s.place("other.txt"), stale, put),
        ],
    };
    super::tests::run(&s, plan).err().expect("refused");
    assert_eq!(s.names(), before, "nothing is left of the plan");
}

#[test]
fn what_moved_into_a_tree_built_goes_back_when_a_later_step_fails() {
    let s = setup();
    fs::write(s.root.join("loose.txt"), "loose\n").unwrap();
    fs::write(s.root.join("other.txt"), "other\n").unwrap();
    let before = s.names();
    let into = Place {
        dir: s.root.join("built").join("sub"),
        ..s.place("loose.txt")
    };
    let stale = Expect::File {
        stat: s.stat("other.txt"),
        sha256: "0".repeat(64),
        bytes: None,
    };
    let put = Act::Put {
        data: b"new\n".to_vec(),
        like: None,
        sha256: None,
    };
    let plan = ChangePlan {
        consume: Vec::new(),
        steps: vec![
            step(
                s.place("loose.txt"),
                s.entry("loose.txt"),
                Act::Move { to: into },
            ),
            build_tree_with_a_file(&s),
            step(s.place("other.txt"), stale, put),
        ],
    };
    super::tests::run(&s, plan).err().expect("refused");
    assert_eq!(s.names(), before, "nothing is left of the plan");
    assert_eq!(s.read("loose.txt").as_deref(), Some("loose\n"));
}

/// A tree built from `archive` (of `dir`, [`trashed_tree`]) whose `g` is set aside under a temp
/// name at its top as it is staged, new bytes built at `g`'s place; and the move of `g` out of
/// the placed tree, from beside it, to `g-out`.
fn set_aside_and_moved_out(
    s: &super::tests::Setup,
    archive: std::path::PathBuf,
) -> [crate::call::plan::Step; 2] {
    let temp = fsops::temp_name(OsStr::new("g"));
    let built = Source::Tree {
        root: Box::new(Source::Archive { archive }),
        moves: vec![("g".into(), (&temp).into())],
        drops: Vec::new(),
        inside: vec![(
            "g".into(),
            Source::Bytes {
                data: b"g two\n".to_vec(),
                mode: 0o600,
            },
        )],
    };
    let from = Place {
        dir: s.root.join("dir"),
        name: temp,
        ..s.place("g-out")
    };
    [
        step(s.place("dir"), Expect::Nothing, Act::Build(built)),
        step(
            from,
            Expect::Built,
            Act::Move {
                to: s.place("g-out"),
            },
        ),
    ]
}

#[test]
fn an_entry_set_aside_in_a_tree_built_moves_out_once_placed_and_its_place_is_refilled() {
    let s = setup();
    let archive = trashed_tree(&s);
    let plan = ChangePlan {
        consume: Vec::new(),
        steps: set_aside_and_moved_out(&s, archive).into(),
    };
    super::tests::run(&s, plan).unwrap();
    let mut names = s.names();
    names.retain(|n| n.starts_with("dir") || n.ends_with("-out"));
    assert_eq!(
        names,
        [
            "dir",
            "dir/d",
            "dir/d/e",
            "dir/d/e/h",
            "dir/d/f",
            "dir/g",
            "g-out"
        ],
        "no temp name is left"
    );
    assert_eq!(s.read("g-out").as_deref(), Some("g\n"));
    assert_eq!(s.read("dir/g").as_deref(), Some("g two\n"));

    // A later step that fails takes the move out back, then the tree away: nothing is left.
    let s = setup();
    let archive = trashed_tree(&s);
    fs::write(s.root.join("other.txt"), "other\n").unwrap();
    let before = s.names();
    let stale = Expect::File {
        stat: s.stat("other.txt"),
        sha256: "0".repeat(64),
        bytes: None,
    };
    let put = Act::Put {
        data: b"new\n".to_vec(),
        like: None,
        sha256: None,
    };
    let [build, move_out] = set_aside_and_moved_out(&s, archive);
    let plan = ChangePlan {
        consume: Vec::new(),
        steps: vec![build, move_out, step(s.place("other.txt"), stale, put)],
    };
    super::tests::run(&s, plan).err().expect("refused");
    assert_eq!(s.names(), before, "nothing is left of the plan");
}
