//! The archive format: metadata first (in its own gzip member), readable by GNU tar.

use std::fs::{self, File};
use std::io::{BufReader, Read};
use std::process::Command;

use flate2::read::{GzDecoder, MultiGzDecoder};

use super::support::*;

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

#[test]
fn gnu_tar_lists_and_extracts_archives() {
    let env = Env::new();
    let tree = env.path("sub/project");
    build_tree(&tree);
    let script = tree.join("src/nested/run.sh");
    rustix::fs::setxattr(
        &script,
        "user.origin",
        b"gnu",
        rustix::fs::XattrFlags::empty(),
    )
    .unwrap();
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
    let mut value = [0u8; 16];
    let copy = with_xattrs.join("sub/project/src/nested/run.sh");
    let n = rustix::fs::getxattr(&copy, "user.origin", &mut value[..]).unwrap();
    assert_eq!(&value[..n], b"gnu");
}

#[test]
fn gnu_tar_extracts_hard_links_as_links() {
    use std::os::unix::fs::MetadataExt;
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
    let ino = |rel: &str| fs::metadata(out.join("linked").join(rel)).unwrap().ino();
    assert_eq!(ino("b/y"), ino("a/x"));
    assert_eq!(ino(&long), ino("a/x"));
    assert_eq!(fs::metadata(out.join("linked/a/x")).unwrap().nlink(), 3);
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
