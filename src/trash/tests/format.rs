//! The archive format: metadata first (in its own gzip member), readable by GNU tar.

use std::fs::{self, File};
use std::io::{BufReader, Read};
use std::process::Command;

use flate2::read::{GzDecoder, MultiGzDecoder};

use super::support::*;
#[cfg(unix)]
use crate::paths::testing::{set_xattr, xattr};

#[test]
fn metadata_is_the_first_entry_and_alone_in_the_first_gzip_member() {
    let env = Env::new();
    write_file(&env.path("a.txt"), b"alpha", 0o644);
    let archived = env.trash("a.txt").unwrap();

    let file = File::open(&archived.archive_path).unwrap();
    let mut archive = tar::Archive::new(MultiGzDecoder::new(BufReader::new(file)));
    let mut entries = archive.entries().unwrap();
    let mut first = entries.next().unwrap().unwrap();
    assert_eq!(first.path().unwrap().to_str(), Some("metadata.json"));
    let mut json = String::new();
    first.read_to_string(&mut json).unwrap();
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["sessionId"], "session-0123456789");
    assert_eq!(value["runId"], "run/ABCDEFGH-xyz");
    assert_eq!(value["agentName"], "tester");
    assert_eq!(value["kind"], "file");
    assert_eq!(value["relativePath"], "a.txt");
    assert_eq!(value["originalSha256"], sha_hex(b"alpha"));
    assert_eq!(value["size"], 5);
    assert_eq!(value["mode"], 0o644);
    assert!(value.get("fileCount").is_none());
    let at = value["trashedAt"].as_str().unwrap();
    assert_eq!(at.len(), "2026-11-22T05:17:17.123Z".len(), "{at}");
    assert!(at.ends_with('Z'));
    let name = archived.archive_path.file_name().unwrap().to_str().unwrap();
    let compact: String = at.chars().filter(|c| !"-:.".contains(*c)).collect();
    assert!(name.starts_with(&compact), "{name} vs {at}");
    let second = entries.next().unwrap().unwrap();
    assert_eq!(second.path().unwrap().to_str(), Some("a.txt"));

    // The first gzip member alone decodes to exactly the metadata entry: listing never
    // decompresses content.
    let mut first_member = Vec::new();
    GzDecoder::new(File::open(&archived.archive_path).unwrap())
        .read_to_end(&mut first_member)
        .unwrap();
    assert_eq!(first_member.len() % 512, 0);
    assert_eq!(first_member.len(), 512 + json.len().div_ceil(512) * 512);
}

/// Unix only: GNU tar, and an extended attribute (none on Windows, `paths::xattrs`).
#[cfg(unix)]
#[test]
fn gnu_tar_lists_and_extracts_archives() {
    let env = Env::new();
    let tree = env.path("sub/project");
    build_tree(&tree);
    let script = tree.join("src/nested/run.sh");
    set_xattr(&script, "user.origin", b"gnu").unwrap();
    let before = snapshot(&tree);
    let archived = env.trash("sub/project").unwrap();

    let listing = Command::new("tar")
        .arg("-tzf")
        .arg(&archived.archive_path)
        .output()
        .unwrap();
    assert!(
        listing.status.success(),
        "{}",
        String::from_utf8_lossy(&listing.stderr)
    );
    let text = String::from_utf8(listing.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "metadata.json");
    assert!(lines[1].trim_end_matches('/') == "sub/project", "{lines:?}");
    assert!(lines.contains(&"sub/project/src/nested/run.sh"));
    assert!(lines.contains(&"sub/project/dangling"));

    let out = env.outside.join("extracted");
    fs::create_dir(&out).unwrap();
    let extract = Command::new("tar")
        .arg("-xzf")
        .arg(&archived.archive_path)
        .arg("-C")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        extract.status.success(),
        "{}",
        String::from_utf8_lossy(&extract.stderr)
    );
    // Our PAX records (nanosecond mtimes, exact link targets, extended attributes) are ones GNU
    // tar knows: not a single warning.
    assert_eq!(String::from_utf8_lossy(&extract.stderr), "");
    assert_eq!(snapshot(&out.join("sub/project")), before);
    let json = fs::read_to_string(out.join("metadata.json")).unwrap();
    assert!(json.contains("\"kind\": \"directory\""));
    assert!(json.contains("\"fileCount\": 5"));

    // `tar --xattrs` gives the extended attributes back too.
    let with_xattrs = env.outside.join("extracted-with-xattrs");
    fs::create_dir(&with_xattrs).unwrap();
    let extract = Command::new("tar")
        .args(["--xattrs", "-xzf"])
        .arg(&archived.archive_path)
        .arg("-C")
        .arg(&with_xattrs)
        .output()
        .unwrap();
    assert!(extract.status.success(), "{extract:?}");
    let copy = with_xattrs.join("sub/project/src/nested/run.sh");
    assert_eq!(xattr(&copy, "user.origin").as_deref(), Some(&b"gnu"[..]));
}

#[test]
fn gnu_tar_extracts_hard_links_as_links() {
    let env = Env::new();
    let tree = env.path("linked");
    write_file(&tree.join("a/x"), b"shared", 0o644);
    fs::create_dir(tree.join("b")).unwrap();
    fs::hard_link(tree.join("a/x"), tree.join("b/y")).unwrap();
    // A name longer than a tar header holds: the link target travels in the PAX record.
    let long = "l".repeat(150);
    fs::hard_link(tree.join("a/x"), tree.join(&long)).unwrap();
    let archived = env.trash("linked").unwrap();

    let out = env.outside.join("extracted");
    fs::create_dir(&out).unwrap();
    let extract = Command::new("tar")
        .arg("-xzf")
        .arg(&archived.archive_path)
        .arg("-C")
        .arg(&out)
        .output()
        .unwrap();
    assert!(extract.status.success(), "{extract:?}");
    assert_eq!(String::from_utf8_lossy(&extract.stderr), "");
    let ino = |rel: &str| {
        crate::paths::testing::stat(&out.join("linked").join(rel))
            .unwrap()
            .ino
    };
    assert_eq!(ino("b/y"), ino("a/x"));
    assert_eq!(ino(&long), ino("a/x"));
    assert_eq!(
        crate::paths::testing::stat(&out.join("linked/a/x"))
            .unwrap()
            .nlink,
        3
    );
    assert_eq!(fs::read(out.join("linked/b/y")).unwrap(), b"shared");
}

#[test]
fn gzip_sees_one_valid_stream() {
    let env = Env::new();
    write_file(&env.path("g.txt"), &b"gzip ".repeat(10_000), 0o644);
    let archived = env.trash("g.txt").unwrap();
    let test = Command::new("gzip")
        .arg("-t")
        .arg(&archived.archive_path)
        .output()
        .unwrap();
    assert!(
        test.status.success(),
        "{}",
        String::from_utf8_lossy(&test.stderr)
    );
}

/// Bytes that do not compress (random, or compressed already).
fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// Source-like text of about `len` bytes, which compresses several times over.
fn text(len: usize, seed: usize) -> Vec<u8> {
    const WORDS: [&str; 8] = [
        "let", "value", "return", "fn", "match", "self", "Ok", "items",
    ];
    let mut out = Vec::with_capacity(len + 64);
    let mut i = seed;
    while out.len() < len {
        for _ in 0..(i % 9 + 3) {
            out.extend_from_slice(WORDS[(i * 7 + out.len()) % WORDS.len()].as_bytes());
            out.push(b' ');
            i += 1;
        }
        out.extend_from_slice(format!("{i};\n").as_bytes());
    }
    out
}

/// Issue 33: a tree of random and text files is one archive in which the blocks that do not
/// compress are stored and the rest compressed; GNU tar lists and extracts it, and our restore
/// brings the tree back, byte for byte. A stored block written wrong fails all three.
#[test]
fn a_tree_of_noise_and_text_stores_the_noise_and_comes_back_byte_for_byte() {
    use crate::trash::parallel_gz::STORED_BLOCKS;
    use std::sync::atomic::Ordering;
    let env = Env::new();
    let tree = env.path("mixed");
    let noises = [(3 << 20, 1), ((2 << 20) + 12_345, 2), (70_000, 3)];
    for (i, (len, seed)) in noises.iter().enumerate() {
        write_file(
            &tree.join(format!("bin/{i}.bin")),
            &noise(*len, *seed),
            0o644,
        );
    }
    let text_files = 100;
    for i in 0..text_files {
        let body = text(40_000, i);
        write_file(&tree.join(format!("src/m{}/f{i}.rs", i % 4)), &body, 0o644);
    }
    let noise_len: usize = noises.iter().map(|(len, _)| len).sum();
    let text_len = text_files * 40_000;
    let before = snapshot(&tree);
    let stored_before = STORED_BLOCKS.load(Ordering::Relaxed);
    let archived = env.trash("mixed").unwrap();

    // At least the four whole mebibytes of noise were stored; the text was compressed.
    assert!(STORED_BLOCKS.load(Ordering::Relaxed) - stored_before >= 4);
    let len = fs::metadata(&archived.archive_path).unwrap().len() as usize;
    assert!(
        len >= noise_len && len < noise_len + text_len * 6 / 10,
        "archive of {len} bytes for {noise_len} of noise and {text_len} of text"
    );

    let listing = Command::new("tar")
        .arg("-tzf")
        .arg(&archived.archive_path)
        .output()
        .unwrap();
    assert!(listing.status.success(), "{listing:?}");
    let listed = String::from_utf8(listing.stdout).unwrap();
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines[0], "metadata.json");
    let count = |ext: &str| lines.iter().filter(|l| l.ends_with(ext)).count();
    assert_eq!((count(".bin"), count(".rs")), (noises.len(), text_files));

    let out = env.outside.join("extracted");
    fs::create_dir(&out).unwrap();
    let extract = Command::new("tar")
        .arg("-xzf")
        .arg(&archived.archive_path)
        .arg("-C")
        .arg(&out)
        .output()
        .unwrap();
    assert!(extract.status.success(), "{extract:?}");
    assert_eq!(snapshot(&out.join("mixed")), before);

    env.restore_to(&archived.archive_path, &tree).unwrap();
    assert_eq!(snapshot(&tree), before);
}
