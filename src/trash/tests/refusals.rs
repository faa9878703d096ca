//! Restores that must be refused, and hostile archives that must never write outside the target.

use std::fs;

use proptest::prelude::*;
use tar::EntryType;

use super::support::*;
use crate::trash::TrashError;

const NAME: &str = "20260101T000000000Z-s-r-000000000000-t.tar.gz";

/// Restore a planted archive as `ws/t`; check nothing was left or written elsewhere.
fn restore_planted(env: &Env, bytes: &[u8]) -> Result<(), TrashError> {
    let archive = plant_archive(env, NAME, bytes);
    let result = env.restore_to(&archive, &env.path("t")).map(|_| ());
    if result.is_err() {
        assert!(archive.exists(), "a failed restore keeps the archive");
        assert!(
            !env.path("t").exists(),
            "a failed restore creates no target"
        );
    }
    assert!(restore_temps(&env.root).is_empty(), "no temp left behind");
    assert!(names_in(&env.outside).is_empty(), "nothing written outside");
    result
}

fn expect_corrupt(result: Result<(), TrashError>, needle: &str) {
    match result {
        Err(TrashError::Corrupt(why)) => assert!(why.contains(needle), "{why}"),
        other => panic!("expected Corrupt({needle}), got {other:?}"),
    }
}

#[test]
fn existing_target_is_already_exists_and_nothing_changes() {
    let env = Env::new();
    write_file(&env.path("a.txt"), b"old", 0o644);
    let archived = env.trash("a.txt").unwrap();
    write_file(&env.path("a.txt"), b"new", 0o644);
    let result = env.restore_to(&archived.archive_path, &env.path("a.txt"));
    assert!(
        matches!(result, Err(TrashError::AlreadyExists)),
        "{result:?}"
    );
    assert_eq!(fs::read(env.path("a.txt")).unwrap(), b"new");
    assert!(archived.archive_path.exists());
    assert!(restore_temps(&env.root).is_empty());
}

#[test]
fn archives_outside_the_bucket_are_refused() {
    let env = Env::new();
    write_file(&env.path("a.txt"), b"x", 0o644);
    let archived = env.trash("a.txt").unwrap();
    let copy = env.outside.join(archived.archive_path.file_name().unwrap());
    fs::copy(&archived.archive_path, &copy).unwrap();
    let sneaky_link = env.bucket.dir().join("20990101T000000000Z-x-y-z-l.tar.gz");
    crate::paths::testing::symlink(&copy, &sneaky_link).unwrap();
    let dotdot = env
        .bucket
        .dir()
        .join("..")
        .join(env.bucket.dir().file_name().unwrap());
    let via_dotdot = dotdot.join(archived.archive_path.file_name().unwrap());

    for outside in [&copy, &sneaky_link] {
        let result = env.restore_to(outside, &env.path("b.txt"));
        assert!(matches!(result, Err(TrashError::NotInBucket)), "{result:?}");
        assert!(matches!(
            env.bucket.inspect(outside),
            Err(TrashError::NotInBucket)
        ));
    }
    assert!(!env.path("b.txt").exists());
    assert!(matches!(
        env.bucket.inspect(&env.bucket.dir().join("nope.tar.gz")),
        Err(TrashError::NotFound)
    ));
    assert_eq!(env.bucket.inspect(&via_dotdot).unwrap(), archived.metadata);
    env.restore_to(&via_dotdot, &env.path("b.txt")).unwrap();
    assert_eq!(fs::read(env.path("b.txt")).unwrap(), b"x");
}

#[test]
fn dotdot_entry_is_corrupt() {
    let env = Env::new();
    let sha = sha_hex(b"evil");
    let bytes = raw_archive(&[
        RawEntry::file("metadata.json", &raw_metadata("t", "file", &sha, 4, 0o644)),
        RawEntry::file("t/../../outside/evil", b"evil"),
    ]);
    expect_corrupt(restore_planted(&env, &bytes), "not a plain relative path");
}

#[test]
fn absolute_entry_is_corrupt() {
    let env = Env::new();
    let evil = env.outside.join("evil");
    let sha = sha_hex(b"evil");
    let bytes = raw_archive(&[
        RawEntry::file("metadata.json", &raw_metadata("t", "file", &sha, 4, 0o644)),
        RawEntry::file(evil.to_str().unwrap(), b"evil"),
    ]);
    // tar's absolute names start with `/`; on Windows a drive's path is one name, outside the
    // archived root.
    let why = if cfg!(windows) {
        "is outside"
    } else {
        "absolute path"
    };
    expect_corrupt(restore_planted(&env, &bytes), why);
}

#[test]
fn wrong_sha_is_corrupt_and_leaves_nothing() {
    let env = Env::new();
    let bytes = raw_archive(&[
        RawEntry::file(
            "metadata.json",
            &raw_metadata("t", "file", &sha_hex(b"other"), 4, 0o644),
        ),
        RawEntry::file("t", b"evil"),
    ]);
    expect_corrupt(
        restore_planted(&env, &bytes),
        "does not match the recorded sha256",
    );
}

#[test]
fn tampered_real_archive_is_corrupt() {
    let env = Env::new();
    build_tree(&env.path("tree"));
    let archived = env.trash("tree").unwrap();
    // Re-pack the same entries with one file's bytes changed but the metadata untouched.
    let file = fs::File::open(&archived.archive_path).unwrap();
    let mut archive = tar::Archive::new(flate2::read::MultiGzDecoder::new(file));
    let mut entries = Vec::new();
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let mut data = Vec::new();
        std::io::Read::read_to_end(&mut entry, &mut data).unwrap();
        let path = entry.path_bytes().into_owned();
        if path.ends_with(b"main.rs") {
            data = b"fn main() { evil() }\n".to_vec();
        }
        let link = entry
            .link_name_bytes()
            .map(|l| l.into_owned())
            .unwrap_or_default();
        entries.push(RawEntry {
            path,
            kind: entry.header().entry_type(),
            data,
            link,
            mode: entry.header().mode().unwrap(),
        });
    }
    fs::write(&archived.archive_path, raw_archive(&entries)).unwrap();
    let result = env.restore_to(&archived.archive_path, &env.path("tree"));
    assert!(matches!(result, Err(TrashError::Corrupt(_))), "{result:?}");
    assert!(!env.path("tree").exists());
    assert!(restore_temps(&env.root).is_empty());
}

#[test]
fn writing_through_a_planted_symlink_is_corrupt() {
    let env = Env::new();
    let outside = env.outside.to_str().unwrap().to_owned();
    let meta = raw_metadata("t", "directory", &"0".repeat(64), 0, 0o755);
    let through_dir = raw_archive(&[
        RawEntry::file("metadata.json", &meta),
        RawEntry::dir("t/"),
        RawEntry::link("t/link", &outside, EntryType::Symlink),
        RawEntry::file("t/link/evil", b"evil"),
    ]);
    expect_corrupt(
        restore_planted(&env, &through_dir),
        "not inside a directory",
    );

    let over_link = raw_archive(&[
        RawEntry::file("metadata.json", &meta),
        RawEntry::dir("t"),
        RawEntry::link("t/link", &format!("{outside}/evil"), EntryType::Symlink),
        RawEntry::file("t/link", b"evil"),
    ]);
    expect_corrupt(restore_planted(&env, &over_link), "appears twice");
}

#[test]
fn hard_links_devices_and_missing_metadata_are_corrupt() {
    let env = Env::new();
    let meta = raw_metadata("t", "directory", &"0".repeat(64), 0, 0o755);
    let outside_file = env.outside.join("victim");
    let hard = raw_archive(&[
        RawEntry::file("metadata.json", &meta),
        RawEntry::dir("t"),
        RawEntry::link("t/h", outside_file.to_str().unwrap(), EntryType::Link),
    ]);
    expect_corrupt(restore_planted(&env, &hard), "not inside the archived tree");

    let device = raw_archive(&[
        RawEntry::file("metadata.json", &meta),
        RawEntry::dir("t"),
        RawEntry {
            kind: EntryType::Char,
            ..RawEntry::file("t/null", b"")
        },
    ]);
    expect_corrupt(restore_planted(&env, &device), "device");

    let no_metadata = raw_archive(&[RawEntry::file("t", b"data")]);
    expect_corrupt(restore_planted(&env, &no_metadata), "metadata.json");

    let outside_root = raw_archive(&[
        RawEntry::file("metadata.json", &meta),
        RawEntry::dir("t"),
        RawEntry::file("u/x", b""),
    ]);
    expect_corrupt(restore_planted(&env, &outside_root), "is outside");

    expect_corrupt(
        restore_planted(&env, b"not gzip at all"),
        "cannot be decoded",
    );
}

#[test]
fn hard_links_may_only_name_a_file_extracted_before_them() {
    let env = Env::new();
    // A file the hostile archive would like to get a name for.
    let victim = env.root.parent().unwrap().join("victim");
    write_file(&victim, b"secret", 0o600);
    let victim_path = victim.to_str().unwrap();
    let meta = raw_metadata("t", "directory", &"0".repeat(64), 0, 0o755);
    let archive = |entries: Vec<RawEntry>| {
        let mut all = vec![RawEntry::file("metadata.json", &meta), RawEntry::dir("t")];
        all.extend(entries);
        raw_archive(&all)
    };
    let hard = |path: &str, target: &str| RawEntry::link(path, target, EntryType::Link);
    let cases: Vec<(&str, Vec<RawEntry>, &str)> = vec![
        (
            "absolute",
            vec![hard("t/h", victim_path)],
            "not inside the archived tree",
        ),
        (
            "dot-dot",
            vec![hard("t/h", "t/../../victim")],
            "not inside the archived tree",
        ),
        (
            "another tree",
            vec![hard("t/h", "u/x")],
            "not inside the archived tree",
        ),
        (
            "empty",
            vec![hard("t/h", "")],
            "not inside the archived tree",
        ),
        (
            "a later entry",
            vec![hard("t/h", "t/f"), RawEntry::file("t/f", b"x")],
            "not a file extracted before it",
        ),
        (
            "an unknown entry",
            vec![hard("t/h", "t/nothing")],
            "not a file extracted before it",
        ),
        (
            "the root",
            vec![hard("t/h", "t")],
            "not a file extracted before it",
        ),
        (
            "a directory",
            vec![RawEntry::dir("t/d"), hard("t/h", "t/d")],
            "not a file extracted before it",
        ),
        (
            "a symlink",
            vec![
                RawEntry::link("t/s", victim_path, EntryType::Symlink),
                hard("t/h", "t/s"),
            ],
            "not a file extracted before it",
        ),
        (
            "another hard link",
            vec![
                RawEntry::file("t/f", b"x"),
                hard("t/g", "t/f"),
                hard("t/h", "t/g"),
            ],
            "not a file extracted before it",
        ),
        (
            "a name taken",
            vec![
                RawEntry::file("t/f", b"x"),
                RawEntry::file("t/g", b"y"),
                hard("t/g", "t/f"),
            ],
            "appears twice",
        ),
    ];
    for (what, entries, needle) in cases {
        let result = restore_planted(&env, &archive(entries));
        match result {
            Err(TrashError::Corrupt(why)) => assert!(why.contains(needle), "{what}: {why}"),
            other => panic!("{what}: expected Corrupt({needle}), got {other:?}"),
        }
        fs::remove_file(env.bucket.dir().join(NAME)).unwrap();
    }
    assert_eq!(crate::paths::testing::stat(&victim).unwrap().nlink, 1);
    assert_eq!(fs::read(&victim).unwrap(), b"secret");

    let root_link = raw_archive(&[
        RawEntry::file(
            "metadata.json",
            &raw_metadata("t", "file", &sha_hex(b""), 0, 0o644),
        ),
        RawEntry::link("t", victim_path, EntryType::Link),
    ]);
    expect_corrupt(
        restore_planted(&env, &root_link),
        "not inside the archived tree",
    );
    fs::remove_file(env.bucket.dir().join(NAME)).unwrap();
    let root_link = raw_archive(&[
        RawEntry::file(
            "metadata.json",
            &raw_metadata("t", "file", &sha_hex(b""), 0, 0o644),
        ),
        RawEntry::link("t", "t", EntryType::Link),
    ]);
    expect_corrupt(restore_planted(&env, &root_link), "itself is a hard link");
}

#[test]
fn cancel_during_restore_aborts_and_keeps_the_archive() {
    let env = Env::new();
    write_file(&env.path("big.bin"), &vec![7u8; 1 << 20], 0o644);
    let archived = env.trash("big.bin").unwrap();
    let polls = std::cell::Cell::new(0);
    let cancel = || {
        polls.set(polls.get() + 1);
        polls.get() > 3
    };
    let result = env.restore_with(&archived.archive_path, &env.path("big.bin"), &cancel);
    assert!(matches!(result, Err(TrashError::Aborted)), "{result:?}");
    assert!(!env.path("big.bin").exists());
    assert!(archived.archive_path.exists());
    assert!(restore_temps(&env.root).is_empty());
}

/// Path fragments a hostile archive might use.
const PATHS: &[&str] = &[
    "t",
    "t/",
    "t/a",
    "t/a/b",
    "t/l",
    "t/l/x",
    "t/..",
    "t/../x",
    "../x",
    "/x",
    "t//a",
    "t/./a",
    "x",
    "t/a/../../x",
    "t/l/../x",
];

fn hostile_entry() -> impl Strategy<Value = (usize, u8, bool)> {
    (0..PATHS.len(), 0u8..4, any::<bool>())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever the entries, a restore never writes outside the target and never leaves a temp.
    #[test]
    fn hostile_archives_never_write_outside(entries in proptest::collection::vec(hostile_entry(), 1..8)) {
        let env = Env::new();
        let outside = env.outside.to_str().unwrap().to_owned();
        let mut raw = vec![RawEntry::file(
            "metadata.json",
            &raw_metadata("t", "directory", &"0".repeat(64), 0, 0o755),
        )];
        for (path, kind, absolute_link) in entries {
            let path = PATHS[path];
            let target = if absolute_link { outside.clone() } else { "../../outside".into() };
            raw.push(match kind {
                0 => RawEntry::file(path, b"evil"),
                1 => RawEntry::dir(path),
                2 => RawEntry::link(path, &target, EntryType::Symlink),
                _ => RawEntry::link(path, &target, EntryType::Link),
            });
        }
        let result = restore_planted(&env, &raw_archive(&raw));
        prop_assert!(result.is_err(), "the digest never matches");
        prop_assert!(names_in(&env.outside).is_empty());
        prop_assert_eq!(names_in(&env.root), Vec::<String>::new());
    }
}

/// An archive is untrusted: of the extended attributes it carries, a restore takes user
/// attributes and ACLs only, never file capabilities, security labels or `trusted.*`.
#[test]
fn a_restore_gives_back_user_attributes_and_acls_only() {
    let mut builder = tar::Builder::new(Vec::new());
    let records: [(&str, &[u8]); 4] = [
        ("SCHILY.xattr.security.capability", b"\x01\x00\x00\x02"),
        ("SCHILY.xattr.trusted.note", b"t"),
        ("SCHILY.xattr.user.ok", b"u"),
        ("SCHILY.xattr.system.posix_acl_access", b"acl"),
    ];
    builder.append_pax_extensions(records).unwrap();
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(EntryType::Regular);
    header.set_path("f").unwrap();
    header.set_mode(0o644);
    header.set_size(0);
    header.set_cksum();
    builder.append(&header, std::io::empty()).unwrap();
    let bytes = builder.into_inner().unwrap();
    let mut archive = tar::Archive::new(&bytes[..]);
    let mut entry = archive.entries().unwrap().next().unwrap().unwrap();
    let info = crate::trash::entry::entry_info(&mut entry, "f").unwrap();
    let names: Vec<&[u8]> = info.xattrs.iter().map(|x| &x.name[..]).collect();
    assert_eq!(names, [&b"user.ok"[..], b"system.posix_acl_access"]);
}
