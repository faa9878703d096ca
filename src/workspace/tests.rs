//! A workspace's recovery as calls see it.

use std::ffi::OsStr;
use std::fs;
use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::call::{CallContext, ToolResult};
use crate::datadir::DataDir;
use crate::dispatch::Toolset;
use crate::error::ErrorCode;
use crate::hashing::sha256_hex;
use crate::journal::commit::{kill_before_commit_point, PlannedFile};
use crate::journal::Journal;
use crate::paths::fsops;
use crate::paths::AsDir;

/// Stages `new` as the content of the existing `dir/name`.
fn put(commit: &mut crate::journal::commit::Commit<'_>, dir: &Path, name: &str, new: &str) {
    let fd = || fsops::open_dir(dir, dir, false).unwrap();
    let stat = fsops::lstat_at(fd().as_dir(), OsStr::new(name))
        .unwrap()
        .unwrap();
    let planned = PlannedFile::new(stat, &fs::read(dir.join(name)).unwrap());
    commit
        .put(
            fd(),
            dir,
            OsStr::new(name),
            new.into(),
            Some(&stat),
            Some(planned),
        )
        .unwrap();
}

async fn call(toolset: &Toolset, tool: &str, args: Value) -> ToolResult {
    toolset.call(tool, args, CallContext::default()).await
}

/// Issue 26, item 3: a workspace whose sandbox reaches only part of a change a crash cut short
/// leaves it whole, and refuses to change what it covers (a change there would build on the
/// half-made change) until a workspace that reaches all of it has finished it. Everything else
/// works as always, reads of those paths included.
#[tokio::test]
async fn a_change_its_sandbox_cannot_finish_is_refused_on_its_paths_until_it_is_finished() {
    let tmp = tempfile::tempdir().unwrap();
    let base = crate::paths::canonical::canonicalize_existing(tmp.path()).unwrap();
    let (root, data) = (base.join("root"), base.join("data"));
    let (a, b) = (root.join("a"), root.join("b"));
    fs::create_dir_all(&a).unwrap();
    fs::create_dir_all(&b).unwrap();
    fs::write(a.join("f.txt"), "f old\n").unwrap();
    fs::write(b.join("g.txt"), "g old\n").unwrap();
    let root_hash = sha256_hex(root.as_os_str().as_encoded_bytes());
    let journal = Journal::new(
        Arc::new(DataDir::new(data.clone())),
        Path::new("journal").join(root_hash),
    );
    let mut commit = journal.commit();
    put(&mut commit, &a, "f.txt", "f new\n");
    put(&mut commit, &b, "g.txt", "g new\n");
    kill_before_commit_point(&journal, commit);
    let options = |allowed: &Path| {
        json!({
            "root": root,
            "allowedPaths": [allowed],
            "trash": { "dataDir": data },
            "permissions": { "cwdReadFile": true, "cwdWriteFile": true, "cwdRemoveFile": true },
        })
    };

    let narrow = Toolset::new(&options(&a)).unwrap();
    let read = call(&narrow, "read_file", json!({ "path": "a/f.txt" })).await;
    assert_eq!(read.status, "ok", "{}", read.output);
    let refused = call(
        &narrow,
        "write_file",
        json!({ "path": "a/f.txt", "content": "mine\n" }),
    )
    .await;
    assert_eq!(
        (refused.status, refused.code),
        ("error", Some(ErrorCode::Conflict)),
        "{}",
        refused.output
    );
    assert!(
        refused.output.contains("a crash cut short")
            && refused.output.contains(&*b.to_string_lossy()),
        "{}",
        refused.output
    );
    let moved = call(
        &narrow,
        "move_file",
        json!({ "source": "a/f.txt", "destination": "a/h.txt" }),
    )
    .await;
    assert_eq!(moved.code, Some(ErrorCode::Conflict), "{}", moved.output);
    assert_eq!(fs::read_to_string(a.join("f.txt")).unwrap(), "f new\n");
    assert_eq!(fs::read_to_string(b.join("g.txt")).unwrap(), "g new\n");
    let elsewhere = call(
        &narrow,
        "write_file",
        json!({ "path": "a/other.txt", "content": "other\n" }),
    )
    .await;
    assert_eq!(elsewhere.status, "ok", "{}", elsewhere.output);

    // A workspace that reaches all of it finishes it (here: takes it back, as the kill came
    // before its commit point); the paths are free again.
    let wide = Toolset::new(&options(&root)).unwrap();
    let listed = call(&wide, "list_directory", json!({ "path": "." })).await;
    assert_eq!(listed.status, "ok", "{}", listed.output);
    assert_eq!(fs::read_to_string(a.join("f.txt")).unwrap(), "f old\n");
    assert_eq!(fs::read_to_string(b.join("g.txt")).unwrap(), "g old\n");
    let read = call(&narrow, "read_file", json!({ "path": "a/f.txt" })).await;
    assert_eq!(read.status, "ok", "{}", read.output);
    let written = call(
        &narrow,
        "write_file",
        json!({ "path": "a/f.txt", "content": "mine\n" }),
    )
    .await;
    assert_eq!(written.status, "ok", "{}", written.output);
    assert_eq!(fs::read_to_string(a.join("f.txt")).unwrap(), "mine\n");
}

/// A sequel as this version writes it ({ record, consume }) and as older versions wrote it (the
/// record alone) are both performed by recovery, once however often: the consumed archive is
/// deleted and the record appended once; anything else is not ours.
#[test]
fn recovery_performs_both_forms_of_a_sequel_once() {
    use super::{AfterCommit, Aftermath};
    use crate::history::{ChangeRecord, Heading};
    use crate::journal::commit::Aftermath as _;
    use crate::trash::{archive_relative_path, TrashItem};

    let dir = tempfile::tempdir().unwrap();
    let base = crate::paths::canonical::canonicalize_existing(dir.path()).unwrap();
    let root = base.join("root");
    fs::create_dir(&root).unwrap();
    fs::write(root.join("f.txt"), "kept\n").unwrap();
    let options = json!({ "root": root, "trash": { "dataDir": base.join("data") } });
    let ws = super::Workspace::new(&options, &[]).unwrap();
    let parent = fsops::open_dir(&root, &root, false).unwrap();
    let path = root.join("f.txt");
    let item = TrashItem {
        parent: parent.as_dir(),
        name: OsStr::new("f.txt"),
        original_path: &path,
        relative_path: &archive_relative_path(&root, &path),
    };
    let archive = ws.bucket().archive(&item, &|| false).unwrap().archive_path;
    let heading = |id: &str| Heading {
        id: id.into(),
        tool: "t".into(),
        summary: "s".into(),
        author: crate::history::Author {
            session_id: "s".into(),
            run_id: "r".into(),
            agent_name: "a".into(),
        },
        undoes: Vec::new(),
    };
    let record = |id: &str| -> ChangeRecord {
        let file = crate::change::FileChange::new(path.clone(), crate::change::Action::Modified);
        ws.history().prepare(&heading(id), &[file]).unwrap()
    };
    let new_form = serde_json::to_value(AfterCommit {
        record: record("new-form"),
        consume: vec![archive.file_name().unwrap().into()],
    })
    .unwrap();
    let old_form = serde_json::to_value(record("old-form")).unwrap();
    let aftermath = Aftermath {
        history: ws.history(),
        bucket: ws.bucket(),
    };
    for _ in 0..2 {
        aftermath.perform(&new_form).unwrap();
        aftermath.perform(&old_form).unwrap();
        aftermath.perform(&json!({ "what": "not ours" })).unwrap();
    }
    assert!(!archive.exists());
    let ids: Vec<_> = ws
        .history()
        .entries(&|_: &Path| true)
        .unwrap()
        .into_iter()
        .map(|e| e.record.id.clone())
        .collect();
    assert_eq!(ids, ["new-form", "old-form"]);
}
