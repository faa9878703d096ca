//! Changes during archiving, cancellation, unwritable buckets, unsupported entries: the original
//! is always left as it was, and no archive or temp file remains.

use std::cell::Cell;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::support::*;
use crate::paths::testing::Modes;
use crate::trash::TrashError;

/// A cancel callback that runs `act` on poll number `at` (1-based) and never cancels.
fn act_on_poll<'a>(at: usize, act: impl Fn() + 'a) -> impl Fn() -> bool + 'a {
    let polls = Cell::new(0);
    move || {
        polls.set(polls.get() + 1);
        if polls.get() == at {
            act();
        }
        false
    }
}

/// How many times a trash of `rel` polls `cancel` (measured on a copy via `archive`).
fn polls_for(env: &Env, rel: &str) -> usize {
    let polls = Cell::new(0);
    let count = || {
        polls.set(polls.get() + 1);
        false
    };
    let archived = env
        .with_item(&env.path(rel), |item| env.bucket.archive(item, &count))
        .unwrap();
    fs::remove_file(archived.archive_path).unwrap();
    polls.get()
}

fn append(path: &Path, bytes: &[u8]) {
    OpenOptions::new()
        .append(true)
        .open(path)
        .unwrap()
        .write_all(bytes)
        .unwrap();
}

fn assert_bucket_clean(env: &Env) {
    assert_eq!(env.bucket_names(), Vec::<String>::new());
}

#[test]
fn file_modified_mid_read_is_a_conflict() {
    let env = Env::new();
    let path = env.path("growing.log");
    write_file(&path, &vec![b'a'; 1 << 20], 0o644);
    let cancel = act_on_poll(3, || append(&path, b"more"));
    let result = env.trash_with(&path, &cancel);
    match result {
        Err(TrashError::Conflict(why)) => assert!(why.contains("growing.log"), "{why}"),
        other => panic!("expected a conflict, got {other:?}"),
    }
    assert_eq!(fs::metadata(&path).unwrap().len(), (1 << 20) + 4);
    assert_bucket_clean(&env);
}

#[test]
fn file_modified_after_reading_but_before_commit_is_a_conflict() {
    let env = Env::new();
    let path = env.path("a.txt");
    write_file(&path, b"original", 0o644);
    let last = polls_for(&env, "a.txt");
    let cancel = act_on_poll(last, || {
        std::thread::sleep(std::time::Duration::from_millis(20));
        fs::write(&path, b"replaced").unwrap();
    });
    let result = env.trash_with(&path, &cancel);
    assert!(matches!(result, Err(TrashError::Conflict(_))), "{result:?}");
    assert_eq!(fs::read(&path).unwrap(), b"replaced");
    assert_bucket_clean(&env);
}

#[test]
fn tree_changed_mid_walk_is_a_conflict() {
    let env = Env::new();
    let tree = env.path("tree");
    build_tree(&tree);
    let before = snapshot(&tree);
    // The root was listed before the first poll; an entry added to it afterwards must be noticed.
    let added = tree.join("added.txt");
    let cancel = act_on_poll(4, || fs::write(&added, b"new").unwrap());
    let result = env.trash_with(&tree, &cancel);
    assert!(matches!(result, Err(TrashError::Conflict(_))), "{result:?}");
    fs::remove_file(&added).unwrap();
    // Every entry is still there; only the root's times differ.
    let mut after = snapshot(&tree);
    let mut expected = before.clone();
    after.remove(Path::new(""));
    expected.remove(Path::new(""));
    assert_eq!(after, expected);
    assert_bucket_clean(&env);
}

#[test]
fn entry_removed_after_archiving_is_a_conflict_and_nothing_is_removed() {
    let env = Env::new();
    let tree = env.path("tree");
    build_tree(&tree);
    let last = polls_for(&env, "tree");
    let victim = tree.join("src/nested/run.sh");
    let cancel = act_on_poll(last, || fs::remove_file(&victim).unwrap());
    let result = env.trash_with(&tree, &cancel);
    assert!(matches!(result, Err(TrashError::Conflict(_))), "{result:?}");
    assert!(tree.join("README.md").exists());
    assert!(tree.join("src/main.rs").exists());
    assert_bucket_clean(&env);
}

#[test]
fn cancel_aborts_with_the_original_untouched() {
    let env = Env::new();
    for (rel, is_tree) in [("big.bin", false), ("tree", true)] {
        let path = env.path(rel);
        if is_tree {
            build_tree(&path);
        } else {
            write_file(&path, &vec![1u8; 1 << 20], 0o644);
        }
        let before = snapshot(&path);
        let polls = Cell::new(0);
        let cancel = || {
            polls.set(polls.get() + 1);
            polls.get() >= 3
        };
        let result = env.trash_with(&path, &cancel);
        assert!(matches!(result, Err(TrashError::Aborted)), "{result:?}");
        assert_eq!(snapshot(&path), before);
        assert_bucket_clean(&env);
    }
}

#[cfg(unix)]
#[test]
fn fifo_inside_a_tree_refuses_the_whole_trash() {
    let env = Env::new();
    let tree = env.path("tree");
    build_tree(&tree);
    crate::paths::platform::make_fifo(&tree.join("src/pipe"));
    let before = snapshot_without_fifo(&tree);
    let result = env.trash("tree");
    match result {
        Err(TrashError::Unsupported(what)) => assert!(what.ends_with("tree/src/pipe"), "{what}"),
        other => panic!("expected Unsupported, got {other:?}"),
    }
    assert_eq!(snapshot_without_fifo(&tree), before);
    assert_bucket_clean(&env);
}

/// A tree is never trashed across a mount point (another file system; a bind mount, where
/// mounts of one file system are told apart), inside it or at its top: nothing is archived or
/// removed, and the error names the mount point.
#[test]
fn a_mount_point_refuses_the_whole_trash() {
    use crate::paths::test_mounts::Mounted;
    let env = Env::new();
    let tree = env.path("tree");
    build_tree(&tree);
    let Some(tmpfs) = Mounted::tmpfs(&tree.join("src/other")) else {
        eprintln!("skipped: mounting is not permitted here (not root)");
        return;
    };
    fs::write(tree.join("src/other/data"), "on tmpfs").unwrap();
    let mut cases = vec![
        ("tree", "tree/src/other"),
        ("tree/src/other", "tree/src/other"),
    ];
    let mut _bind = None;
    if crate::paths::platform::linux_fast_paths() {
        fs::create_dir_all(env.outside.join("mounted")).unwrap();
        fs::write(env.outside.join("mounted/data"), "not in the tree").unwrap();
        _bind = Mounted::bind(&env.outside.join("mounted"), &tree.join("src/bound"));
        cases = vec![
            ("tree", "tree/src/bound"),
            ("tree/src/bound", "tree/src/bound"),
        ];
    }
    let before = snapshot(&tree);
    for (rel, mount) in cases {
        match env.trash(rel) {
            Err(TrashError::MountPoint(what)) => assert!(what.ends_with(mount), "{what}"),
            other => panic!("expected MountPoint, got {other:?}"),
        }
        assert_eq!(snapshot(&tree), before);
        assert_bucket_clean(&env);
    }
    drop(tmpfs);
}

#[cfg(unix)]
fn snapshot_without_fifo(tree: &Path) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    let mut stack = vec![tree.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_dir() {
                stack.push(entry.path());
            }
            paths.push(entry.path());
        }
    }
    paths.sort();
    paths
}

/// Makes a directory unwritable even for root (chmod, then `chattr +i` when chmod is not
/// enough); undone on drop.
struct Unwritable {
    dir: PathBuf,
    immutable: bool,
}

impl Unwritable {
    fn new(dir: &Path) -> Option<Unwritable> {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o555)).unwrap();
        let mut guard = Unwritable {
            dir: dir.to_path_buf(),
            immutable: false,
        };
        if guard.writable() {
            let ok = Command::new("chattr").arg("+i").arg(dir).status();
            guard.immutable = ok.is_ok_and(|s| s.success());
        }
        (!guard.writable()).then_some(guard)
    }

    fn writable(&self) -> bool {
        let probe = self.dir.join(".probe");
        let ok = fs::write(&probe, b"").is_ok();
        let _ = fs::remove_file(&probe);
        ok
    }
}

impl Drop for Unwritable {
    fn drop(&mut self) {
        if self.immutable {
            let _ = Command::new("chattr").arg("-i").arg(&self.dir).status();
        }
        let _ = fs::set_permissions(&self.dir, fs::Permissions::from_mode(0o755));
    }
}

#[test]
fn unwritable_bucket_is_an_error_and_the_original_stays() {
    let env = Env::new();
    fs::create_dir_all(env.bucket.dir()).unwrap();
    let path = env.path("keep.txt");
    write_file(&path, b"precious", 0o644);
    let Some(guard) = Unwritable::new(env.bucket.dir()) else {
        eprintln!("skipped: cannot make a directory unwritable here");
        return;
    };
    let result = env.trash("keep.txt");
    assert!(matches!(result, Err(TrashError::Io(_))), "{result:?}");
    assert_eq!(fs::read(&path).unwrap(), b"precious");
    drop(guard);
    assert_bucket_clean(&env);
}

#[test]
fn data_dir_that_is_a_file_is_an_error_and_the_original_stays() {
    let env = Env::new();
    fs::write(&env.data, b"not a directory").unwrap();
    build_tree(&env.path("tree"));
    let before = snapshot(&env.path("tree"));
    let result = env.trash("tree");
    assert!(matches!(result, Err(TrashError::Io(_))), "{result:?}");
    assert_eq!(snapshot(&env.path("tree")), before);
}

#[test]
fn refused_unlink_keeps_the_original_and_drops_the_unneeded_archive() {
    let env = Env::new();
    let path = env.path("locked/keep.txt");
    write_file(&path, b"stays", 0o644);
    let Some(guard) = Unwritable::new(&env.path("locked")) else {
        eprintln!("skipped: cannot make a directory unwritable here");
        return;
    };
    let result = env.trash_with(&path, &never);
    drop(guard);
    assert!(matches!(result, Err(TrashError::Io(_))), "{result:?}");
    assert_eq!(fs::read(&path).unwrap(), b"stays");
    assert_bucket_clean(&env);
}

#[test]
fn a_removal_stopped_halfway_puts_back_what_it_removed() {
    let env = Env::new();
    let tree = env.path("tree");
    build_tree(&tree);
    let stuck = tree.join("src/nested/deeper");
    let Some(guard) = Unwritable::new(&stuck) else {
        eprintln!("skipped: cannot make a directory unwritable here");
        return;
    };
    let before = snapshot(&tree);
    let partly = match env.trash("tree") {
        Err(TrashError::PartlyRemoved(partly)) => partly,
        other => panic!("expected a partial removal, got {other:?}"),
    };
    assert!(!tree.join("README.md").exists(), "removal had started");
    assert!(partly.stopped_at().starts_with(&stuck), "{partly:?}");
    let archive = partly.archive_path().to_path_buf();
    let report = env.put_back_removed(*partly);
    let restored = snapshot(&tree);
    drop(guard);
    match report {
        TrashError::Stopped { code, why } => {
            assert_eq!(code, crate::error::ErrorCode::OsPermission);
            assert!(why.contains("was not removed"), "{why}");
            assert!(why.contains(stuck.to_str().unwrap()), "{why}");
            assert!(why.contains("is as it was"), "{why}");
        }
        other => panic!("expected the stopped removal, got {other:?}"),
    }
    assert_eq!(restored, before, "the tree is whole again, times included");
    assert!(!archive.exists(), "nothing of it is left in the trash");
    assert_bucket_clean(&env);
    assert!(restore_temps(&env.root).is_empty());
}

#[test]
fn a_removed_name_of_a_file_that_kept_a_name_goes_back_as_its_link() {
    let env = Env::new();
    let tree = env.path("tree");
    write_file(&tree.join("a/x"), b"shared", 0o644);
    write_file(&tree.join("m/stuck"), b"stays", 0o644);
    fs::hard_link(tree.join("a/x"), tree.join("z")).unwrap();
    let Some(guard) = Unwritable::new(&tree.join("m")) else {
        eprintln!("skipped: cannot make a directory unwritable here");
        return;
    };
    let before = snapshot(&tree);
    let partly = match env.trash("tree") {
        Err(TrashError::PartlyRemoved(partly)) => partly,
        other => panic!("expected a partial removal, got {other:?}"),
    };
    assert!(!tree.join("a").exists() && tree.join("z").exists());
    let report = env.put_back_removed(*partly);
    assert!(matches!(report, TrashError::Stopped { .. }), "{report:?}");
    assert_eq!(snapshot(&tree), before);
    drop(guard);
    let x = crate::paths::testing::stat(&tree.join("a/x")).unwrap();
    let z = crate::paths::testing::stat(&tree.join("z")).unwrap();
    assert_eq!(x.ino, z.ino);
    assert_eq!(x.nlink, 2);
    assert_bucket_clean(&env);
}

#[test]
fn what_cannot_go_back_stays_in_the_trash_and_the_error_says_how_to_get_it() {
    let env = Env::new();
    let tree = env.path("tree");
    build_tree(&tree);
    let Some(guard) = Unwritable::new(&tree.join("src/nested/deeper")) else {
        eprintln!("skipped: cannot make a directory unwritable here");
        return;
    };
    let partly = match env.trash("tree") {
        Err(TrashError::PartlyRemoved(partly)) => partly,
        other => panic!("expected a partial removal, got {other:?}"),
    };
    // Someone takes a removed name before it can go back.
    write_file(&tree.join("README.md"), b"someone else's", 0o644);
    let archive = partly.archive_path().to_path_buf();
    let report = env.put_back_removed(*partly);
    drop(guard);
    match report {
        TrashError::Stopped { why, .. } => {
            assert!(why.contains("only partly removed"), "{why}");
            assert!(why.contains(archive.to_str().unwrap()), "{why}");
            assert!(why.contains("move what is left"), "{why}");
        }
        other => panic!("expected the stopped removal, got {other:?}"),
    }
    assert_eq!(fs::read(tree.join("README.md")).unwrap(), b"someone else's");
    assert!(tree.join("src/main.rs").exists(), "the rest went back");
    assert!(restore_temps(&env.root).is_empty());
    // As the error says: move what is left aside, then restore.
    fs::rename(&tree, env.path("left")).unwrap();
    env.restore_to(&archive, &tree).unwrap();
    assert_eq!(fs::read(tree.join("README.md")).unwrap(), b"# hello\n");
}
