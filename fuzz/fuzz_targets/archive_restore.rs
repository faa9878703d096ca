//! Archive restore (`trash::Bucket::restore`) treats the archive as hostile: whatever the
//! bytes, nothing is written outside the target. After every restore, successful or not:
//!
//! - the target's directory holds the target (only on success) and nothing else (no temp
//!   leftover on failure);
//! - the rest of the temp tree (a sibling `outside/` that archive symlinks point to, the base
//!   directory) is exactly as before;
//! - the bucket holds the archive (failure) or nothing (success);
//! - a restored single file has exactly the archived bytes.
//!
//! Inputs are either raw tar bytes (gzipped here, so the fuzzer works on the tar layer) or a
//! structured archive: `metadata.json` plus entries with hostile names (`..`, absolute, through
//! symlinks, duplicates, outside `relativePath`), all entry types, and, for a single file, a
//! correct digest so a restore can succeed.
#![no_main]

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::io::Write;
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use agent_fs_tools::trash::{Bucket, Identity};
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use sha2::{Digest, Sha256};

struct Fixture {
    base: PathBuf,
    outside: PathBuf,
    work: PathBuf,
    bucket: Bucket,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let parent = if Path::new("/dev/shm").is_dir() {
            PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        let base = parent.join(format!("afs-fuzz-restore-{}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        let outside = base.join("outside");
        let work = base.join("work");
        fs::create_dir_all(outside.join("dir")).unwrap();
        fs::create_dir_all(&work).unwrap();
        fs::write(outside.join("victim"), "untouched").unwrap();
        fs::write(outside.join("dir/victim"), "untouched").unwrap();
        let bucket = Bucket::new(
            &base.join("data"),
            &base.join("root"),
            Identity {
                session_id: "s".into(),
                run_id: "r".into(),
                agent_name: "fuzz".into(),
            },
            1,
        );
        fs::create_dir_all(bucket.dir()).unwrap();
        Fixture {
            base: fs::canonicalize(&base).unwrap(),
            outside,
            work,
            bucket,
        }
    })
}

#[derive(Arbitrary, Debug)]
enum Input {
    Raw(Vec<u8>),
    Structured(Archive),
}

#[derive(Arbitrary, Debug)]
struct Archive {
    kind: u8,
    relative: Name,
    mode: u16,
    size_delta: i8,
    file_count: Option<u8>,
    good_digest: bool,
    entries: Vec<EntrySpec>,
}

#[derive(Arbitrary, Debug)]
struct EntrySpec {
    name: Name,
    /// Index into the tar types below.
    kind: u8,
    mode: u16,
    content: Vec<u8>,
    link: Name,
    mtime: u32,
}

/// A path made of tokens (or raw bytes), to hit the interesting shapes often.
#[derive(Arbitrary, Debug)]
enum Name {
    Tokens(Vec<u8>, bool),
    Raw(Vec<u8>),
}

const TOKENS: &[&str] = &[
    "t", "a", "b", "..", ".", "", "link", "outside", "victim", "dir", "/", "t/..", "\0", "é",
];

impl Name {
    fn bytes(&self, rel: &[u8]) -> Vec<u8> {
        match self {
            Name::Raw(b) => b.iter().copied().take(99).collect(),
            Name::Tokens(parts, under_rel) => {
                let joined = parts
                    .iter()
                    .take(8)
                    .map(|i| TOKENS[*i as usize % TOKENS.len()])
                    .collect::<Vec<_>>()
                    .join("/");
                let mut out = Vec::new();
                if *under_rel {
                    out.extend_from_slice(rel);
                    if !joined.is_empty() {
                        out.push(b'/');
                    }
                }
                out.extend_from_slice(joined.as_bytes());
                out.truncate(99);
                out
            }
        }
    }
}

const TYPES: &[u8] = &[b'0', b'5', b'2', b'1', b'3', b'4', b'6', b'7', b'x', b'g'];

/// A GNU header with the name and link name copied verbatim (the `tar` crate's setters refuse
/// `..` and absolute paths, which is exactly what we want to send).
fn header(name: &[u8], kind: u8, mode: u32, size: u64, mtime: u64, link: &[u8]) -> [u8; 512] {
    let mut h = tar::Header::new_gnu();
    {
        let raw = h.as_old_mut();
        raw.name[..name.len().min(100)].copy_from_slice(&name[..name.len().min(100)]);
        raw.linkname[..link.len().min(100)].copy_from_slice(&link[..link.len().min(100)]);
    }
    h.set_mode(mode);
    h.set_size(size);
    h.set_mtime(mtime);
    h.set_uid(0);
    h.set_gid(0);
    h.set_entry_type(tar::EntryType::new(kind));
    h.set_cksum();
    *h.as_bytes()
}

fn push_entry(out: &mut Vec<u8>, h: [u8; 512], data: &[u8]) {
    out.extend_from_slice(&h);
    out.extend_from_slice(data);
    out.resize(out.len().div_ceil(512) * 512, 0);
}

/// The tar stream of a structured input; also the single-file content, for the success check.
fn build(a: &Archive) -> (Vec<u8>, Option<Vec<u8>>) {
    let kind = ["file", "directory", "symlink"][a.kind as usize % 3];
    let rel = {
        let r = a.relative.bytes(b"");
        if r.is_empty() {
            b"t".to_vec()
        } else {
            r
        }
    };
    let rel_str = String::from_utf8_lossy(&rel).into_owned();
    let first_file = a
        .entries
        .first()
        .map(|e| e.content.clone())
        .unwrap_or_default();
    let digest = if a.good_digest && kind == "file" {
        Sha256::digest(&first_file)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    } else {
        format!("{:064x}", a.mode)
    };
    let size = (first_file.len() as i64 + a.size_delta as i64).max(0);
    let mut meta = serde_json::json!({
        "sessionId": "s", "runId": "r", "agentName": "fuzz",
        "trashedAt": "2026-01-01T00:00:00.000Z",
        "originalPath": format!("/w/{rel_str}"),
        "relativePath": rel_str,
        "kind": kind,
        "originalSha256": digest,
        "size": if a.good_digest { first_file.len() as i64 } else { size },
        "mode": u32::from(a.mode) & 0o7777,
    });
    if kind == "directory" || a.file_count.is_some() {
        meta["fileCount"] = serde_json::json!(a.file_count.unwrap_or(0));
    }
    let json = serde_json::to_vec(&meta).unwrap();
    let mut out = Vec::new();
    push_entry(
        &mut out,
        header(b"metadata.json", b'0', 0o644, json.len() as u64, 0, b""),
        &json,
    );
    for (i, e) in a.entries.iter().take(12).enumerate() {
        let ty = TYPES[e.kind as usize % TYPES.len()];
        // The first entry is the archived root itself, most of the time.
        let name = if i == 0 && matches!(e.name, Name::Tokens(_, true)) {
            rel.clone()
        } else {
            e.name.bytes(&rel)
        };
        let mode = if i == 0 && a.good_digest {
            u32::from(a.mode) & 0o7777
        } else {
            u32::from(e.mode) & 0o7777
        };
        let data: &[u8] = if ty == b'0' { &e.content } else { &[] };
        let link = e.link.bytes(b"");
        push_entry(
            &mut out,
            header(
                &name,
                ty,
                mode,
                data.len() as u64,
                u64::from(e.mtime),
                &link,
            ),
            data,
        );
    }
    out.extend_from_slice(&[0u8; 1024]);
    let single = (kind == "file" && a.good_digest).then_some(first_file);
    (out, single)
}

/// Everything under `dir`, without following links: path → (type, size, mode, content/link).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (u32, u64, Vec<u8>)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(p) = stack.pop() {
        let Ok(meta) = fs::symlink_metadata(&p) else {
            continue;
        };
        let data = if meta.file_type().is_symlink() {
            fs::read_link(&p)
                .unwrap()
                .into_os_string()
                .into_encoded_bytes()
        } else if meta.is_file() {
            fs::read(&p).unwrap()
        } else {
            Vec::new()
        };
        out.insert(p.clone(), (meta.mode(), meta.size(), data));
        if meta.is_dir() {
            for e in fs::read_dir(&p).unwrap() {
                stack.push(e.unwrap().path());
            }
        }
    }
    out
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(data).unwrap();
    gz.finish().unwrap()
}

static RUN: AtomicU64 = AtomicU64::new(0);

fuzz_target!(|input: Input| {
    let f = fixture();
    let (tar_bytes, single) = match &input {
        Input::Raw(bytes) => (bytes.clone(), None),
        Input::Structured(a) => build(a),
    };
    let n = RUN.fetch_add(1, Ordering::Relaxed);
    let parent = f.work.join(format!("p{n}"));
    fs::create_dir(&parent).unwrap();
    let archive = f
        .bucket
        .dir()
        .join(format!("20260101T000000000Z-s-r-{n:012x}-t.tar.gz"));
    fs::write(&archive, gzip(&tar_bytes)).unwrap();
    let before_outside = snapshot(&f.outside);
    let base_names: Vec<_> = {
        let mut v: Vec<_> = fs::read_dir(&f.base)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        v.sort();
        v
    };

    let parent_fd = fs::File::open(&parent).unwrap();
    let result = f
        .bucket
        .restore(&archive, parent_fd.as_fd(), OsStr::new("t"), &|| false);

    let names: Vec<_> = fs::read_dir(&parent)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    match &result {
        Ok(_) => {
            assert_eq!(
                names,
                vec![OsStr::new("t").to_owned()],
                "success leaves only the target"
            );
            assert!(
                !archive.exists(),
                "the archive is removed after a successful restore"
            );
            if let Some(content) = &single {
                assert_eq!(
                    &fs::read(parent.join("t")).unwrap(),
                    content,
                    "restored bytes differ"
                );
            }
        }
        Err(_) => {
            assert!(
                names.is_empty(),
                "a failed restore left {names:?} in the target directory"
            );
            assert!(archive.exists(), "a failed restore removed the archive");
        }
    }
    assert_eq!(
        snapshot(&f.outside),
        before_outside,
        "the outside directory changed"
    );
    let mut after_names: Vec<_> = fs::read_dir(&f.base)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    after_names.sort();
    assert_eq!(
        after_names, base_names,
        "something appeared beside the target's tree"
    );
    let work_names: Vec<_> = fs::read_dir(&f.work)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        work_names.len(),
        1,
        "something appeared in the work directory: {work_names:?}"
    );
    let bucket_names: Vec<_> = fs::read_dir(f.bucket.dir())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(bucket_names.len() <= 1, "the bucket holds {bucket_names:?}");

    let _ = fs::remove_dir_all(&parent);
    let _ = fs::remove_file(&archive);
});
