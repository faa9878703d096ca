//! Trash → restore gives back exactly what was there.

use std::fs;

use super::support::*;
use crate::paths::testing::{lchown, symlink, Modes};
#[cfg(unix)]
use crate::paths::testing::{set_xattr, xattr};
use crate::paths::EntryKind;
use crate::trash::TrashError;

#[test]
fn file_round_trip_keeps_bytes_mode_and_mtime() {
    let env = Env::new();
    let path = env.path("dir/notes.txt");
    write_file(&path, b"line one\nline two\n", 0o640);
    set_mtime(&path, 1_650_000_000, 987_654_321);
    let before = snapshot(&path);

    let archived = env.trash("dir/notes.txt").unwrap();
    assert!(!path.exists(), "the original is removed");
    assert!(looks_like_archive(
        archived.archive_path.file_name().unwrap(),
        "notes.txt"
    ));
    let meta = &archived.metadata;
    assert_eq!(meta.kind, EntryKind::File);
    assert_eq!(meta.relative_path, "dir/notes.txt");
    assert_eq!(meta.original_path, path.to_str().unwrap());
    assert_eq!(meta.original_sha256, sha_hex(b"line one\nline two\n"));
    let mode = crate::paths::testing::recorded_mode(0o640);
    assert_eq!((meta.size, meta.mode, meta.file_count), (18, mode, None));

    let restored = env.restore_to(&archived.archive_path, &path).unwrap();
    assert_eq!(&restored, meta);
    assert_eq!(snapshot(&path), before);
    assert!(!archived.archive_path.exists(), "the archive is consumed");
    assert!(env.bucket_names().is_empty());
    assert!(restore_temps(&env.path("dir")).is_empty());
}

#[test]
fn symlink_round_trip_keeps_the_link_not_its_target() {
    let env = Env::new();
    write_file(&env.path("target.txt"), b"target stays", 0o644);
    let link = env.path("link");
    symlink("target.txt", &link).unwrap();
    set_mtime(&link, 1_600_000_001, 5);
    let before = snapshot(&link);

    let archived = env.trash("link").unwrap();
    assert!(fs::symlink_metadata(&link).is_err());
    assert_eq!(fs::read(env.path("target.txt")).unwrap(), b"target stays");
    assert_eq!(archived.metadata.kind, EntryKind::Symlink);
    assert_eq!(archived.metadata.original_sha256, sha_hex(b"target.txt"));
    assert_eq!(archived.metadata.size, 10);

    env.restore_to(&archived.archive_path, &link).unwrap();
    assert_eq!(snapshot(&link), before);
}

#[test]
fn tree_round_trip_is_identical() {
    let env = Env::new();
    let tree = env.path("project");
    build_tree(&tree);
    let before = snapshot(&tree);

    let archived = env.trash("project").unwrap();
    assert!(!tree.exists());
    let meta = &archived.metadata;
    assert_eq!(meta.kind, EntryKind::Directory);
    assert_eq!(meta.file_count, Some(5));
    assert_eq!(meta.size, 8 + 13 + 18 + 4 + 4);
    assert_eq!(meta.mode, 0o755);

    env.restore_to(&archived.archive_path, &tree).unwrap();
    assert_eq!(snapshot(&tree), before);
    assert!(restore_temps(&env.root).is_empty());
}

#[test]
fn tree_restores_to_another_name_and_digest_is_stable() {
    let env = Env::new();
    build_tree(&env.path("a"));
    let first = env.archive("a").unwrap();
    assert!(env.path("a").exists(), "archive() keeps the original");
    let second = env.archive("a").unwrap();
    assert_ne!(first.archive_path, second.archive_path);
    assert_eq!(
        first.metadata.original_sha256,
        second.metadata.original_sha256
    );

    env.restore_to(&first.archive_path, &env.path("b")).unwrap();
    let mut a = snapshot(&env.path("a"));
    let mut b = snapshot(&env.path("b"));
    a.remove(std::path::Path::new(""));
    b.remove(std::path::Path::new(""));
    assert_eq!(a, b);
}

#[test]
fn entries_outside_the_root_round_trip_under_absolute() {
    let env = Env::new();
    let path = env.outside.join("far away.txt");
    write_file(&path, b"far", 0o600);
    let archived = env.trash_with(&path, &never).unwrap();
    // `absolute/` and its normal components (a Windows drive or share is dropped: the label
    // names the path; the restore is told where to put it).
    let components: Vec<_> = path
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(part) => Some(part.to_string_lossy()),
            _ => None,
        })
        .collect();
    let expected = format!("absolute/{}", components.join("/"));
    assert_eq!(archived.metadata.relative_path, expected);
    env.restore_to(&archived.archive_path, &path).unwrap();
    assert_eq!(fs::read(&path).unwrap(), b"far");
    assert_eq!(
        fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        crate::paths::testing::kept_mode(0o600)
    );
}

#[test]
fn odd_names_and_long_paths_round_trip() {
    let env = Env::new();
    let long_dir = "d".repeat(120);
    let tree = env.path("odd");
    let deep = tree.join(&long_dir).join(&long_dir);
    fs::create_dir_all(&deep).unwrap();
    // Windows refuses control characters in a name.
    let odd = if cfg!(windows) {
        "ünï ✓ #%[x].txt"
    } else {
        "new\nline ünï ✓.txt"
    };
    write_file(&deep.join(odd), b"x", 0o644);
    let long_target = "t/".repeat(90) + "end";
    symlink(&long_target, deep.join("long-link")).unwrap();
    symlink("a//b/./c/", tree.join("unnormalised")).unwrap();
    let before = snapshot(&tree);

    let archived = env.trash("odd").unwrap();
    env.restore_to(&archived.archive_path, &tree).unwrap();
    assert_eq!(snapshot(&tree), before);
    assert_eq!(
        fs::read_link(tree.join("unnormalised"))
            .unwrap()
            .as_os_str(),
        "a//b/./c/"
    );
}

#[test]
fn empty_file_and_empty_dir_round_trip() {
    let env = Env::new();
    write_file(&env.path("empty.txt"), b"", 0o644);
    fs::create_dir(env.path("nothing")).unwrap();
    for name in ["empty.txt", "nothing"] {
        let before = snapshot(&env.path(name));
        let archived = env.trash(name).unwrap();
        env.restore_to(&archived.archive_path, &env.path(name))
            .unwrap();
        assert_eq!(snapshot(&env.path(name)), before, "{name}");
    }
}

#[test]
fn trashing_a_missing_entry_is_not_found() {
    let env = Env::new();
    assert!(matches!(env.trash("ghost"), Err(TrashError::NotFound)));
    assert!(env.bucket_names().iter().all(|n| !n.ends_with(".tar.gz")));
}

/// A tree whose `a/x`, `b/y` and `z` are one file, which also has a name outside the tree.
fn build_linked_tree(env: &Env) -> std::path::PathBuf {
    let tree = env.path("linked");
    write_file(&tree.join("a/x"), b"shared", 0o640);
    write_file(&tree.join("solo"), b"solo", 0o644);
    fs::create_dir(tree.join("b")).unwrap();
    fs::hard_link(tree.join("a/x"), tree.join("b/y")).unwrap();
    fs::hard_link(tree.join("a/x"), tree.join("z")).unwrap();
    fs::hard_link(tree.join("a/x"), env.outside.join("also-x")).unwrap();
    for (i, dir) in ["a", "b", ""].iter().enumerate() {
        set_mtime(&tree.join(dir), 1_600_000_000 + i as i64, 7);
    }
    tree
}

/// (device, inode, link count) of `path`.
fn inode(path: &std::path::Path) -> (u64, u64, u64) {
    let meta = crate::paths::testing::lstat(path).unwrap();
    (meta.dev, meta.ino, meta.nlink)
}

#[test]
fn hard_links_inside_a_tree_come_back_as_links_of_one_file() {
    let env = Env::new();
    let tree = build_linked_tree(&env);
    let before = snapshot(&tree);
    let outside = env.outside.join("also-x");
    assert_eq!(inode(&outside).2, 4);

    let archived = env.trash("linked").unwrap();
    assert!(!tree.exists());
    // The name outside the tree is not part of it: it stays, now the file's only name.
    assert_eq!(fs::read(&outside).unwrap(), b"shared");
    assert_eq!(inode(&outside).2, 1);
    // Every name counts as a file; the bytes count once.
    assert_eq!(archived.metadata.file_count, Some(4));
    assert_eq!(archived.metadata.size, 6 + 4);

    let entries = archive_entries(&archived.archive_path);
    let shape: Vec<(&str, tar::EntryType, &str)> = entries
        .iter()
        .map(|(path, kind, link)| (path.as_str(), *kind, link.as_str()))
        .collect();
    use tar::EntryType::{Directory, Link, Regular};
    assert_eq!(
        shape,
        [
            ("metadata.json", Regular, ""),
            ("linked", Directory, ""),
            ("linked/a", Directory, ""),
            ("linked/a/x", Regular, ""),
            ("linked/b", Directory, ""),
            ("linked/b/y", Link, "linked/a/x"),
            ("linked/solo", Regular, ""),
            ("linked/z", Link, "linked/a/x"),
        ]
    );

    env.restore_to(&archived.archive_path, &tree).unwrap();
    assert_eq!(snapshot(&tree), before);
    let x = inode(&tree.join("a/x"));
    assert_eq!(x.2, 3, "the three names inside the tree are one file again");
    assert_eq!(inode(&tree.join("b/y")), x);
    assert_eq!(inode(&tree.join("z")), x);
    assert_eq!(inode(&tree.join("solo")).2, 1);
    let (dev, ino, links) = inode(&outside);
    assert_ne!(
        (dev, ino),
        (x.0, x.1),
        "the outside name stays a file of its own"
    );
    assert_eq!(links, 1);
}

#[test]
fn trees_archived_with_hard_links_as_copies_still_restore() {
    // Written before hard links were kept: `linked/a/x`, `linked/b/y` and `linked/z` were one
    // file, archived as three regular entries (fileCount 3, size 18).
    let env = Env::new();
    let bytes = include_bytes!("fixtures/hard-links-as-copies.tar.gz");
    let name = "20261124T032023786Z-session--run_ABCD-000000000000-linked.tar.gz";
    let archive = plant_archive(&env, name, bytes);
    let tree = env.path("linked");
    let metadata = env.restore_to(&archive, &tree).unwrap();
    assert_eq!((metadata.file_count, metadata.size), (Some(3), 18));
    for name in ["a/x", "b/y", "z"] {
        assert_eq!(fs::read(tree.join(name)).unwrap(), b"shared");
        assert_eq!(inode(&tree.join(name)).2, 1, "{name} comes back as a copy");
    }
}

#[test]
fn the_same_archive_is_never_restored_twice_at_once() {
    let env = std::sync::Arc::new(Env::with_level(1));
    write_file(&env.path("big.bin"), &vec![3u8; 8 << 20], 0o644);
    let archive = env.trash("big.bin").unwrap().archive_path;
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
    let handles: Vec<_> = ["first", "second"]
        .into_iter()
        .map(|name| {
            let (env, archive, barrier) = (env.clone(), archive.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                env.restore_to(&archive, &env.path(name))
            })
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let ok = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(ok, 1, "{results:?}");
    for result in results.iter().filter(|r| r.is_err()) {
        assert!(
            matches!(
                result,
                Err(TrashError::Conflict(_)) | Err(TrashError::NotFound)
            ),
            "{result:?}"
        );
    }
    assert!(!archive.exists());
    assert!(restore_temps(&env.root).is_empty());
}

/// Unix only: Windows has no extended attributes (`paths::xattrs`).
#[cfg(unix)]
#[test]
fn round_trip_keeps_user_attributes_and_acls_of_files_and_directories() {
    use crate::paths::xattrs::sample_access_acl;
    let env = Env::new();
    let tree = env.path("tree");
    write_file(&tree.join("sub/a.txt"), b"a", 0o640);
    write_file(&env.path("single.txt"), b"s", 0o644);
    for rel in ["tree/sub/a.txt", "tree/sub", "tree", "single.txt"] {
        let path = env.path(rel);
        set_xattr(&path, "user.origin", rel.as_bytes()).unwrap();
        set_xattr(&path, "system.posix_acl_access", &sample_access_acl()).unwrap();
    }
    let before = (snapshot(&tree), snapshot(&env.path("single.txt")));

    let archived_tree = env.trash("tree").unwrap();
    let archived_file = env.trash("single.txt").unwrap();
    env.restore_to(&archived_tree.archive_path, &tree).unwrap();
    env.restore_to(&archived_file.archive_path, &env.path("single.txt"))
        .unwrap();

    assert_eq!((snapshot(&tree), snapshot(&env.path("single.txt"))), before);
    for rel in ["tree/sub/a.txt", "tree/sub", "tree", "single.txt"] {
        let path = env.path(rel);
        assert_eq!(xattr(&path, "user.origin").as_deref(), Some(rel.as_bytes()));
        let acl = xattr(&path, "system.posix_acl_access");
        assert_eq!(acl, Some(sample_access_acl()), "{rel}");
    }
}

/// Restored as root, a tree is the user's again, not root's: every entry gets its archived
/// owner and group (a plain user keeps its own, see `fsops::give_owner`).
#[test]
fn round_trip_as_root_gives_entries_back_to_their_owners() {
    if crate::paths::process::effective_user() != 0 {
        eprintln!("skipped: only root may give files away");
        return;
    }
    let env = Env::new();
    let tree = env.path("theirs");
    build_tree(&tree);
    for (n, entry) in walkdir(&tree).iter().enumerate() {
        let (uid, gid) = (1000 + n as u32, 2000 + n as u32);
        lchown(entry, Some(uid), Some(gid)).unwrap();
    }
    // chown clears set-user-ID bits: compare with the tree as it is now.
    let before = snapshot(&tree);
    let archived = env.trash("theirs").unwrap();
    env.restore_to(&archived.archive_path, &tree).unwrap();
    assert_eq!(snapshot(&tree), before);
}

/// Every path at and under `dir`, not following links.
fn walkdir(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    let mut at = 0;
    while at < out.len() {
        let path = out[at].clone();
        at += 1;
        if fs::symlink_metadata(&path).unwrap().is_dir() {
            out.extend(fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        }
    }
    out
}

/// A sparse disk image goes into the trash without its holes being read and comes back sparse:
/// the same bytes, not 128 MiB of allocated zeros.
#[test]
fn a_sparse_file_comes_back_sparse_and_byte_identical() {
    use crate::paths::io::{read_exact_at, write_all_at};
    let env = Env::new();
    let path = env.path("disk.img");
    let image = fs::File::create(&path).unwrap();
    image.set_len(128 << 20).unwrap();
    write_all_at(&image, b"boot sector", 0).unwrap();
    write_all_at(&image, &[9u8; 100_000], 100 << 20).unwrap();
    drop(image);
    let sha = streamed_sha(&path);

    let archived = env.trash("disk.img").unwrap();
    assert_eq!(archived.metadata.original_sha256, sha);
    assert!(fs::metadata(&archived.archive_path).unwrap().len() < 1 << 20);
    env.restore_to(&archived.archive_path, &path).unwrap();

    let meta = crate::paths::testing::stat(&path).unwrap();
    assert_eq!(meta.size, 128 << 20);
    assert!(meta.blocks * 512 < 4 << 20, "{} blocks", meta.blocks);
    assert_eq!(streamed_sha(&path), sha);
    let mut probe = vec![0u8; 100_002];
    let restored = fs::File::open(&path).unwrap();
    read_exact_at(&restored, &mut probe, (100 << 20) - 1).unwrap();
    assert_eq!(
        (probe[0], probe[1], probe[100_000], probe[100_001]),
        (0, 9, 9, 0)
    );
}

/// The SHA-256 (hex) of a file, read in chunks.
fn streamed_sha(path: &std::path::Path) -> String {
    crate::hashing::sha256_reader(fs::File::open(path).unwrap()).unwrap()
}
