//! A move between file systems (a copy placed at the destination, the source removed once
//! checked to be what was copied) and a permanent tree removal, run on temporary directories.
//! The second file system is a directory in `/dev/shm` (tmpfs); where there is none (or it is
//! the temp directory's), the tests that need one say so and pass.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::json;

use super::stage::CopyFailed;
use super::*;
use crate::call::plan::{Act, ChangePlan, Expect, Keep, Place, Step};
use crate::change::Action;
use crate::paths::fsops::race_point::{self, RacePoint};
use crate::paths::test_mounts::Mounted;
use crate::paths::testing::{symlink, Modes};
use crate::paths::trees::{CopyError, MountPointInside};
use crate::paths::Stat;

struct Setup {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    ws: Workspace,
    heading: Heading,
}

/// A root holding the tree `tree/` (`a.txt`, `sub/b.txt` mode 0600, `sub/link -> ../a.txt`).
fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let base = crate::paths::canonical::canonicalize_existing(tmp.path()).unwrap();
    let root = base.join("root");
    fs::create_dir_all(root.join("tree/sub")).unwrap();
    fs::write(root.join("tree/a.txt"), "a\n").unwrap();
    fs::write(root.join("tree/sub/b.txt"), "b\n").unwrap();
    fs::set_permissions(
        root.join("tree/sub/b.txt"),
        fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    symlink("../a.txt", root.join("tree/sub/link")).unwrap();
    let options = json!({ "root": root, "trash": { "dataDir": base.join("data") } });
    let ws = Workspace::new(&options, &[]).unwrap();
    let heading = Heading::for_test("test", "a move or a removal");
    Setup {
        _tmp: tmp,
        root,
        ws,
        heading,
    }
}

/// A fresh directory on another file system than `root`, or `None`.
fn other_file_system(root: &Path) -> Option<tempfile::TempDir> {
    let dir = tempfile::tempdir_in("/dev/shm").ok()?;
    let dev = |p: &Path| crate::paths::testing::stat(p).unwrap().dev;
    (dev(dir.path()) != dev(root)).then_some(dir)
}

/// The place `rel` beneath `anchor`.
fn place(anchor: &Path, rel: &str) -> Place {
    let path = anchor.join(rel);
    Place {
        anchor: anchor.to_owned(),
        dir: path.parent().unwrap().to_owned(),
        name: path.file_name().unwrap().to_owned(),
    }
}

fn stat(path: &Path) -> Stat {
    crate::paths::testing::lstat(path).unwrap()
}

/// Every entry beneath `dir`: its path, kind, mode and content or link target.
fn tree(dir: &Path) -> Vec<(String, u32, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(at) = stack.pop() {
        for entry in fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            let meta = fs::symlink_metadata(&path).unwrap();
            let what = if meta.is_symlink() {
                format!("-> {}", fs::read_link(&path).unwrap().display())
            } else if meta.is_dir() {
                stack.push(path.clone());
                "dir".to_owned()
            } else {
                fs::read_to_string(&path).unwrap()
            };
            let rel = crate::paths::testing::slashed_below(&path, dir);
            out.push((rel, meta.permissions().mode(), what));
        }
    }
    out.sort();
    out
}

impl Setup {
    /// Makes `plan`; the history lists `path` as `action`.
    fn run(&self, plan: ChangePlan, path: &Path, action: Action) -> Result<Executed, ExecuteError> {
        let listed = |_: &Done| vec![FileChange::new(path.to_owned(), action)];
        execute(&self.ws, plan, &self.heading, &CancelToken::new(), listed)
    }

    /// Moving `name` (as it is now) to `to`.
    fn move_tree(&self, name: &str, to: Place) -> ChangePlan {
        let from = self.root.join(name);
        ChangePlan {
            steps: vec![Step {
                at: place(&self.root, name),
                expect: Expect::Entry { stat: stat(&from) },
                keep: Keep::Nothing,
                act: Act::Move { to },
            }],
            consume: Vec::new(),
        }
    }

    fn records(&self) -> usize {
        fs::read_dir(self.ws.journal().dir()).map_or(0, Iterator::count)
    }

    fn history(&self) -> usize {
        let entries = self.ws.history().entries(&|_: &Path| true).unwrap();
        entries.len()
    }
}

/// Between file systems a move is a copy placed at the destination (in parents made for it)
/// and the source removed, one change with its record: the tree arrives as it was (modes,
/// links as links), nothing is left at the source, and no temp name and no journal record is
/// left on either side.
#[test]
fn a_move_between_file_systems_copies_then_removes_the_source_with_its_record() {
    let s = setup();
    let Some(other) = other_file_system(&s.root) else {
        eprintln!("skipped: no second file system in /dev/shm");
        return;
    };
    let other = crate::paths::canonical::canonicalize_existing(other.path()).unwrap();
    let before = tree(&s.root.join("tree"));
    let to = other.join("new/deep/tree");
    let executed = s
        .run(
            s.move_tree("tree", place(&other, "new/deep/tree")),
            &to,
            Action::Moved,
        )
        .unwrap();
    assert_eq!(tree(&to), before);
    assert!(!s.root.join("tree").exists());
    assert_eq!(tree(&s.root), Vec::<(String, u32, String)>::new());
    assert_eq!(tree(&other).len(), before.len() + 3, "{:?}", tree(&other));
    assert!(executed.left.is_empty());
    assert!(matches!(executed.recorded, Recorded::Written { .. }));
    assert_eq!(s.history(), 1);
    assert_eq!(s.records(), 0);
}

/// A source that changes once copied (before it is set aside) stops the move: the copy is
/// taken back with the parents made for it, the source stays as it now is, and nothing is
/// recorded. The failure is the copy's `Changed`, at the move's step.
#[test]
fn a_source_changed_once_copied_stops_the_move_and_nothing_is_moved() {
    let s = setup();
    let Some(other) = other_file_system(&s.root) else {
        eprintln!("skipped: no second file system in /dev/shm");
        return;
    };
    let other = crate::paths::canonical::canonicalize_existing(other.path()).unwrap();
    // A name no other test moves or removes: the race point is the process's.
    let name = "tree-written-once-copied";
    fs::rename(s.root.join("tree"), s.root.join(name)).unwrap();
    let written = s.root.join(name).join("sub/b.txt");
    let plan = s.move_tree(name, place(&other, "made/tree"));
    let hook_written = written.clone();
    race_point::at(RacePoint::BeforeRemove, name, move || {
        fs::write(&hook_written, "written after the copy\n").unwrap();
    });
    let failed = s
        .run(plan, &other.join("made/tree"), Action::Moved)
        .err()
        .expect("the move is refused");
    assert_eq!(failed.step, 0);
    let Failure::Io(e) = &failed.failure else {
        panic!("{:?}", failed.failure)
    };
    assert!(
        matches!(CopyFailed::of(e), Some(CopyError::Changed(_))),
        "{e}"
    );
    assert_eq!(
        fs::read_to_string(&written).unwrap(),
        "written after the copy\n"
    );
    assert!(s.root.join(name).join("sub/link").is_symlink());
    assert_eq!(
        fs::read_dir(&other).unwrap().count(),
        0,
        "the copy and its parent are gone"
    );
    assert_eq!(s.history(), 0);
    assert_eq!(s.records(), 0);
}

/// A tree removed keeping nothing (permanently) is set aside whole and removed after the
/// commit point, with its record; nothing of it goes to the trash.
#[test]
fn a_tree_removed_permanently_goes_with_its_record_and_nothing_is_archived() {
    let s = setup();
    let at = s.root.join("tree");
    let plan = ChangePlan {
        steps: vec![Step {
            at: place(&s.root, "tree"),
            expect: Expect::Entry { stat: stat(&at) },
            keep: Keep::Nothing,
            act: Act::Remove,
        }],
        consume: Vec::new(),
    };
    let executed = s.run(plan, &at, Action::Removed).unwrap();
    assert_eq!(
        fs::read_dir(&s.root).unwrap().count(),
        0,
        "no temp name left"
    );
    assert!(executed.done.archives.iter().all(Option::is_none));
    assert!(executed.left.is_empty());
    assert!(
        !s.ws.bucket().dir().exists() || fs::read_dir(s.ws.bucket().dir()).unwrap().count() == 0
    );
    assert_eq!(s.history(), 1);
    assert_eq!(s.records(), 0);
}

/// What a permanent removal cannot remove — a mount point inside, with the directories that
/// hold it — stays, back at the tree's name, and is reported by the removal's step with the
/// mount point's path from the set-aside name; the rest is gone and the change is recorded.
#[test]
fn what_a_permanent_removal_cannot_remove_stays_at_its_name_and_is_reported() {
    let s = setup();
    let at = s.root.join("tree");
    let Some(_mounted) = Mounted::tmpfs(&at.join("sub/mnt")) else {
        eprintln!("skipped: mounting a tmpfs is not permitted");
        return;
    };
    fs::write(at.join("sub/mnt/on-tmpfs.txt"), "stays\n").unwrap();
    let plan = ChangePlan {
        steps: vec![Step {
            at: place(&s.root, "tree"),
            expect: Expect::Entry { stat: stat(&at) },
            keep: Keep::Nothing,
            act: Act::Remove,
        }],
        consume: Vec::new(),
    };
    let executed = s.run(plan, &at, Action::Removed).unwrap();
    let [(step, e)] = &executed.left[..] else {
        panic!("{:?}", executed.left)
    };
    assert_eq!(*step, 0);
    let rel = MountPointInside::of(e).expect("a mount point");
    assert_eq!(
        rel.components().skip(1).collect::<PathBuf>(),
        Path::new("sub/mnt")
    );
    assert_eq!(
        fs::read_to_string(at.join("sub/mnt/on-tmpfs.txt")).unwrap(),
        "stays\n"
    );
    assert!(!at.join("a.txt").exists() && !at.join("sub/b.txt").exists());
    assert_eq!(
        fs::read_dir(&s.root).unwrap().count(),
        1,
        "no temp name left"
    );
    assert_eq!(s.history(), 1);
    assert_eq!(s.records(), 0);
}
