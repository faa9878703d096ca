//! Bucket-level behaviour: names never collide, listings skip garbage, clear is safe beside
//! concurrent trashing, stale temps can be swept.

use std::cell::Cell;
use std::collections::HashSet;
use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use super::support::*;

use crate::paths::AsDir;

#[test]
fn a_thousand_same_named_files_from_many_threads_give_distinct_restorable_archives() {
    const FILES: usize = 1000;
    const THREADS: usize = 8;
    let env = Arc::new(Env::with_level(1));
    for i in 0..FILES {
        write_file(
            &env.path(&format!("d{i}/same.txt")),
            format!("file {i}").as_bytes(),
            0o644,
        );
    }
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let env = Arc::clone(&env);
            thread::spawn(move || {
                (t..FILES)
                    .step_by(THREADS)
                    .map(|i| {
                        (
                            i,
                            env.trash(&format!("d{i}/same.txt")).unwrap().archive_path,
                        )
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let archives: Vec<_> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    let distinct: HashSet<_> = archives.iter().map(|(_, p)| p.clone()).collect();
    assert_eq!(distinct.len(), FILES);
    assert_eq!(env.bucket.list().unwrap().len(), FILES);
    assert!(env.bucket_names().iter().all(|n| !is_temp(n)));

    for (i, archive) in archives.iter().step_by(10) {
        let target = env.path(&format!("d{i}/same.txt"));
        env.restore_to(archive, &target).unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), format!("file {i}"));
    }
}

#[test]
fn list_is_newest_first_and_skips_anything_that_is_not_an_archive() {
    let env = Env::new();
    for name in ["one", "two", "three"] {
        write_file(&env.path(name), name.as_bytes(), 0o644);
        env.trash(name).unwrap();
        thread::sleep(Duration::from_millis(5));
    }
    let dir = env.bucket.dir();
    let not_tar = {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut gz, b"plain text, not a tar").unwrap();
        gz.finish().unwrap()
    };
    fs::write(
        dir.join("20990101T000000000Z-a-b-c-garbage.tar.gz"),
        b"\x1f\x8bnope",
    )
    .unwrap();
    fs::write(dir.join("20990101T000000000Z-a-b-c-empty.tar.gz"), b"").unwrap();
    fs::write(dir.join("20990101T000000000Z-a-b-c-nottar.tar.gz"), not_tar).unwrap();
    let no_meta = raw_archive(&[RawEntry::file("x", b"x")]);
    fs::write(dir.join("20990101T000000000Z-a-b-c-nometa.tar.gz"), no_meta).unwrap();
    fs::write(dir.join(".archive-123.partial"), b"in flight").unwrap();
    fs::write(dir.join("notes.txt"), b"foreign").unwrap();
    fs::create_dir(dir.join("20990101T000000000Z-a-b-c-dir.tar.gz")).unwrap();

    let listed: Vec<_> = env
        .bucket
        .list()
        .unwrap()
        .into_iter()
        .map(|e| {
            assert!(e.archive_bytes > 0);
            e.metadata.relative_path
        })
        .collect();
    assert_eq!(listed, ["three", "two", "one"]);
}

#[test]
fn clear_removes_only_archives_finished_before_it_began() {
    let env = Env::new();
    for name in ["old1", "old2"] {
        write_file(&env.path(name), b"old", 0o644);
        env.trash(name).unwrap();
    }
    let dir = env.bucket.dir().to_path_buf();
    fs::write(dir.join(".archive-999.partial"), b"in flight").unwrap();
    fs::write(dir.join("foreign.tar.gz"), b"not ours").unwrap();
    write_file(&env.path("late"), b"late", 0o644);
    let_clock_tick();

    let stats = env
        .bucket
        .clear_with_hook(None, &|| {
            env.trash("late").unwrap();
        })
        .unwrap();
    assert_eq!(stats.cleared, 2);
    assert!(stats.bytes_freed > 0);
    let left: Vec<_> = env
        .bucket
        .list()
        .unwrap()
        .into_iter()
        .map(|e| e.metadata.relative_path)
        .collect();
    assert_eq!(
        left,
        ["late"],
        "an archive written after the clear began survives"
    );
    assert!(
        dir.join(".archive-999.partial").exists(),
        "temp files are never cleared"
    );
    assert!(
        dir.join("foreign.tar.gz").exists(),
        "foreign files are never cleared"
    );
}

#[test]
fn clear_respects_older_than_and_an_absent_bucket() {
    let env = Env::new();
    assert_eq!(env.bucket.clear(None).unwrap().cleared, 0);
    assert!(env.bucket.list().unwrap().is_empty());
    write_file(&env.path("a"), b"a", 0o644);
    env.trash("a").unwrap();
    let_clock_tick();
    let kept = env.bucket.clear(Some(Duration::from_secs(3600))).unwrap();
    assert_eq!(kept.cleared, 0);
    let cleared = env.bucket.clear(Some(Duration::from_millis(1))).unwrap();
    assert_eq!(cleared.cleared, 1);
    assert!(env.bucket_names().is_empty());
}

#[test]
fn clear_running_beside_trashing_threads_never_loses_a_fresh_archive() {
    let env = Arc::new(Env::with_level(1));
    for i in 0..200 {
        write_file(&env.path(&format!("f{i}")), b"data", 0o644);
    }
    let trasher = {
        let env = Arc::clone(&env);
        thread::spawn(move || {
            (0..200)
                .map(|i| env.trash(&format!("f{i}")).unwrap().archive_path)
                .collect::<Vec<_>>()
        })
    };
    let mut cleared = 0;
    while !trasher.is_finished() {
        cleared += env.bucket.clear(None).unwrap().cleared;
    }
    let archives = trasher.join().unwrap();
    let survivors = archives.iter().filter(|p| p.exists()).count() as u64;
    assert_eq!(
        survivors + cleared,
        200,
        "every archive is either listed or was cleared"
    );
    let temps = env
        .bucket_names()
        .into_iter()
        .filter(|n| is_temp(n))
        .count();
    assert_eq!(temps, 0);
}

/// Trashes the tree `rel`, calling `meanwhile` with the archive's path once it is in place and
/// before the original is removed.
fn trash_pausing(env: &Env, rel: &str, meanwhile: &dyn Fn(&Path)) -> Reported {
    env.with_item(&env.path(rel), |item| {
        env.bucket.trash_with_hook(item, &never, meanwhile)
    })
    .map(Reported::from)
    .unwrap()
}

#[test]
fn clear_never_removes_the_archive_of_a_trash_in_flight() {
    let env = Env::new();
    build_tree(&env.path("tree"));
    let expected = snapshot(&env.path("tree"));
    let cleared = Cell::new(None);
    let archived = trash_pausing(&env, "tree", &|archive| {
        // The archive is in place, committed before these clears began, and as old as any
        // filter asks: only its being in use keeps it.
        let_clock_tick();
        let all = env.bucket.clear(None).unwrap();
        let aged = env.bucket.clear(Some(Duration::ZERO)).unwrap();
        assert!(
            archive.exists(),
            "a clear removed the archive of a trash in flight"
        );
        cleared.set(Some((all.cleared, aged.cleared)));
    });
    assert_eq!(cleared.get(), Some((0, 0)));
    assert!(!env.path("tree").exists());
    assert!(
        archived.archive_path.exists(),
        "the reported archive is gone"
    );
    env.restore_to(&archived.archive_path, &env.path("tree"))
        .unwrap();
    assert_eq!(snapshot(&env.path("tree")), expected);
}

#[test]
fn an_archive_is_cleared_once_its_call_lets_go() {
    let env = Env::new();
    write_file(&env.path("a"), b"a", 0o644);
    let archived = env.with_item(&env.path("a"), |item| {
        env.bucket.trash(item, &never).unwrap()
    });
    let_clock_tick();
    assert_eq!(env.bucket.clear(None).unwrap().cleared, 0, "still held");
    assert!(archived.archive_path.exists());
    let path = archived.archive_path.clone();
    drop(archived);
    let_clock_tick();
    assert_eq!(env.bucket.clear(None).unwrap().cleared, 1);
    assert!(!path.exists());
}

#[test]
fn a_clear_that_began_before_the_call_let_go_keeps_the_archive() {
    let env = Env::new();
    write_file(&env.path("a"), b"a", 0o644);
    let archived = env.with_item(&env.path("a"), |item| {
        env.bucket.trash(item, &never).unwrap()
    });
    let path = archived.archive_path.clone();
    let held = std::cell::RefCell::new(Some(archived));
    let_clock_tick();
    // The call reports and lets go once this clear has begun: it is not this clear's to remove.
    let stats = env
        .bucket
        .clear_with_hook(None, &|| drop(held.borrow_mut().take()))
        .unwrap();
    assert!(held.borrow().is_none());
    assert_eq!(stats.cleared, 0);
    assert!(path.exists());
    let_clock_tick();
    assert_eq!(env.bucket.clear(None).unwrap().cleared, 1);
}

#[test]
fn clears_looping_beside_trashes_of_trees_never_remove_an_archive_before_it_is_reported() {
    const TREES: usize = 12;
    let env = Arc::new(Env::with_level(1));
    let expected: Vec<_> = (0..TREES)
        .map(|i| {
            let tree = env.path(&format!("t{i}"));
            build_tree(&tree);
            // Enough entries that removing the original takes a while after the commit.
            for f in 0..150 {
                write_file(&tree.join(format!("bulk/f{f}")), b"bulk", 0o644);
            }
            snapshot(&tree)
        })
        .collect();
    let trasher = {
        let env = Arc::clone(&env);
        thread::spawn(move || {
            (0..TREES)
                .map(|i| {
                    let archived = env.with_item(&env.path(&format!("t{i}")), |item| {
                        env.bucket.trash(item, &never).unwrap()
                    });
                    // What the call is about to report must be there while it reports it.
                    let there = archived.archive_path.exists();
                    (Reported::from(archived), there)
                })
                .collect::<Vec<_>>()
        })
    };
    let mut cleared = 0;
    while !trasher.is_finished() {
        cleared += env.bucket.clear(None).unwrap().cleared;
    }
    let reported = trasher.join().unwrap();
    assert!(
        reported.iter().all(|(_, there)| *there),
        "an archive was cleared before its trash reported it"
    );
    let left = reported
        .iter()
        .filter(|(r, _)| r.archive_path.exists())
        .count();
    assert_eq!(cleared + left as u64, TREES as u64);
    for (i, (r, _)) in reported.iter().enumerate() {
        if r.archive_path.exists() {
            let back = env.path(&format!("back{i}"));
            env.restore_to(&r.archive_path, &back).unwrap();
            assert_eq!(snapshot(&back), expected[i]);
        }
    }
}

#[test]
fn clear_skips_an_archive_being_restored() {
    let env = Env::new();
    build_tree(&env.path("tree"));
    let expected = snapshot(&env.path("tree"));
    let archive = env.trash("tree").unwrap().archive_path;
    let_clock_tick();
    let cleared = Cell::new(None);
    let during_restore = || {
        if cleared.get().is_none() {
            cleared.set(Some(env.bucket.clear(None).unwrap().cleared));
        }
        false
    };
    env.restore_with(&archive, &env.path("tree"), &during_restore)
        .unwrap();
    assert_eq!(cleared.get(), Some(0));
    assert_eq!(snapshot(&env.path("tree")), expected);
}

#[test]
fn an_archive_in_flight_is_restored_only_through_its_own_hold() {
    let env = Env::new();
    write_file(&env.path("a"), b"old", 0o644);
    let refused = std::cell::RefCell::new(None);
    trash_pausing(&env, "a", &|archive| {
        *refused.borrow_mut() = Some(env.restore_to(archive, &env.path("b")));
    });
    assert!(matches!(
        refused.into_inner(),
        Some(Err(crate::trash::TrashError::Conflict(_)))
    ));
    assert!(!env.path("b").exists());
    // What an overwrite put in the trash is put back through the hold it still has.
    write_file(&env.path("c"), b"replaced", 0o644);
    let archived = env.with_item(&env.path("c"), |item| {
        env.bucket.trash(item, &never).unwrap()
    });
    let parent = open_dir(&env.root);
    env.bucket
        .restore_archived(
            &archived,
            parent.as_dir(),
            std::ffi::OsStr::new("c"),
            &crate::trash::restore_temp_name(),
            &never,
        )
        .unwrap();
    assert_eq!(fs::read(env.path("c")).unwrap(), b"replaced");
    assert!(!archived.archive_path.exists(), "the archive is consumed");
}

#[test]
fn sweep_removes_only_stale_temp_files() {
    let env = Env::new();
    write_file(&env.path("a"), b"a", 0o644);
    env.trash("a").unwrap();
    let dir = env.bucket.dir();
    fs::write(dir.join(".content-1.partial"), b"stale").unwrap();
    fs::write(dir.join("keep.partial"), b"not ours").unwrap();
    assert_eq!(
        env.bucket
            .sweep_partials(Duration::from_secs(3600))
            .unwrap(),
        0
    );
    thread::sleep(Duration::from_millis(20));
    assert_eq!(
        env.bucket
            .sweep_partials(Duration::from_millis(10))
            .unwrap(),
        1
    );
    assert!(!dir.join(".content-1.partial").exists());
    assert!(dir.join("keep.partial").exists());
    assert_eq!(env.bucket.list().unwrap().len(), 1);
}

#[test]
fn bucket_is_private_and_named_by_the_root_hash() {
    let env = Env::new();
    write_file(&env.path("a"), b"a", 0o644);
    env.trash("a").unwrap();
    let dir = env.bucket.dir();
    let expected = sha_hex(env.root.to_str().unwrap().as_bytes());
    assert_eq!(dir, env.data.join("trash").join(expected));
    // Nobody else may write it: its mode's bits on Unix, its access list on Windows.
    let opened = crate::paths::testing::open_dir(dir);
    let mode = crate::paths::fsops::fstat(&opened).unwrap().mode;
    let others = crate::paths::fsops::others_may_write(mode, Some(opened.as_dir()), "bucket");
    assert_eq!(others.unwrap(), None);
    #[cfg(unix)]
    assert_eq!(mode & 0o777, 0o700);
}
