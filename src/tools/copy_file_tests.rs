//! `copy_file` through the whole call flow, on temporary directories.

use std::fs;
use std::path::Path;

use serde_json::json;

use super::{format_call, too_large};
use crate::error::ErrorCode;
use crate::paths::testing::{kept_mode, symlink, Modes};
use crate::tools::testing::TestWorkspace;

fn history(ws: &TestWorkspace) -> Vec<crate::history::ChangeRecord> {
    let entries = ws
        .toolset
        .workspace()
        .history()
        .entries(&|_: &Path| true)
        .unwrap();
    entries.into_iter().map(|e| (*e.record).clone()).collect()
}

fn journal_records(ws: &TestWorkspace) -> usize {
    fs::read_dir(ws.toolset.workspace().journal().dir()).map_or(0, Iterator::count)
}

#[test]
fn format_call_is_source_to_destination_and_overwrite() {
    assert_eq!(
        format_call(&json!({ "source": "a", "destination": "b" })),
        "a → b"
    );
    assert_eq!(
        format_call(&json!({ "source": "a", "destination": "b", "overwrite": true })),
        "a → b (overwrite)"
    );
}

/// The fit check's arithmetic: a copy fits in exactly the bytes free, not in one fewer.
#[test]
fn a_copy_fits_in_the_bytes_free_and_not_one_fewer() {
    assert!(!too_large(0, 0));
    assert!(!too_large(4096, 4096));
    assert!(too_large(4097, 4096));
    assert!(too_large(u64::MAX, u64::MAX - 1));
}

/// A file is copied (bytes, mode) into new parents as one change with its record: the history
/// lists the copy as added, with its digest and the parents made for it.
#[tokio::test]
async fn a_file_and_its_record_are_made_as_one_change() {
    let ws = TestWorkspace::new();
    fs::write(ws.root.join("a.txt"), "hello\n").unwrap();
    fs::set_permissions(ws.root.join("a.txt"), fs::Permissions::from_mode(0o751)).unwrap();
    let result = ws
        .call(
            "copy_file",
            json!({ "source": "a.txt", "destination": "x/y/b.txt" }),
        )
        .await;
    assert_eq!(result.code, None, "{}", result.output);
    let (a, b) = (ws.at("a.txt"), ws.at("x/y/b.txt"));
    assert_eq!(
        result.output,
        format!("Copied {} → {}", a.display(), b.display())
    );
    assert_eq!(fs::read_to_string(&b).unwrap(), "hello\n");
    assert_eq!(
        fs::metadata(&b).unwrap().permissions().mode() & 0o7777,
        kept_mode(0o751)
    );
    assert_eq!(ws.names(), ["a.txt", "x"]);
    assert_eq!(journal_records(&ws), 0);
    let history = history(&ws);
    assert_eq!(history.len(), 1);
    let file = &history[0].files[0];
    assert_eq!(file.path, b);
    assert_eq!(file.action, crate::change::Action::Added);
    assert_eq!(
        file.sha256_after.as_deref(),
        Some(crate::hashing::sha256_hex(b"hello\n").as_str())
    );
    assert_eq!(file.created_dirs, [ws.at("x"), ws.at("x/y")]);
}

/// A tree is copied with its counts in the output; links inside stay links.
#[tokio::test]
async fn a_tree_is_copied_with_its_counts() {
    let ws = TestWorkspace::new();
    fs::create_dir_all(ws.root.join("t/a")).unwrap();
    fs::write(ws.root.join("t/a/f"), "f").unwrap();
    fs::write(ws.root.join("t/g"), "g").unwrap();
    symlink("/etc/passwd", ws.root.join("t/l")).unwrap();
    let result = ws
        .call("copy_file", json!({ "source": "t", "destination": "u" }))
        .await;
    assert_eq!(result.code, None, "{}", result.output);
    assert!(
        result.output.ends_with(" (2 files, 1 directory, 1 link)"),
        "{}",
        result.output
    );
    assert_eq!(
        fs::read_link(ws.root.join("u/l")).unwrap(),
        Path::new("/etc/passwd")
    );
    assert_eq!(ws.read("u/a/f"), "f");
}

/// An existing destination needs overwrite; with it, the old one goes to the trash and the
/// change is Modified (a file replaced) with the archive named.
#[tokio::test]
async fn an_existing_destination_needs_overwrite_and_goes_to_the_trash() {
    let ws = TestWorkspace::new();
    fs::write(ws.root.join("a.txt"), "new\n").unwrap();
    fs::write(ws.root.join("b.txt"), "old\n").unwrap();
    let refused = ws
        .call(
            "copy_file",
            json!({ "source": "a.txt", "destination": "b.txt" }),
        )
        .await;
    assert_eq!(
        refused.code,
        Some(ErrorCode::AlreadyExists),
        "{}",
        refused.output
    );
    let args = json!({ "source": "a.txt", "destination": "b.txt", "overwrite": true });
    let result = ws.call("copy_file", args).await;
    assert_eq!(result.code, None, "{}", result.output);
    assert_eq!(ws.read("b.txt"), "new\n");
    assert!(result.output.contains("The previous"), "{}", result.output);
    let history = history(&ws);
    let file = &history[0].files[0];
    assert_eq!(file.action, crate::change::Action::Modified);
    assert!(file.trashed_to.as_ref().unwrap().exists());
}

/// A directory copied into itself, or onto its own path, is refused before anything happens.
#[tokio::test]
async fn a_directory_is_never_copied_into_itself() {
    let ws = TestWorkspace::new();
    fs::create_dir(ws.root.join("d")).unwrap();
    for destination in ["d", "d/inner", "d/a/b"] {
        let args = json!({ "source": "d", "destination": destination });
        let result = ws.call("copy_file", args).await;
        assert_eq!(
            result.code,
            Some(ErrorCode::InvalidArguments),
            "{}",
            result.output
        );
    }
    assert_eq!(ws.names(), ["d"]);
    assert!(fs::read_dir(ws.root.join("d")).unwrap().next().is_none());
}

/// A FIFO deep inside the tree is refused, named, before anything is asked or written (Unix
/// only: Windows has none in a directory).
#[cfg(unix)]
#[tokio::test]
async fn a_special_file_deep_inside_is_refused_before_anything_is_written() {
    let ws = TestWorkspace::new();
    fs::create_dir_all(ws.root.join("t/a/b")).unwrap();
    fs::write(ws.root.join("t/a/f"), "f").unwrap();
    crate::paths::platform::make_fifo(&ws.root.join("t/a/b/pipe"));
    let asked = ws
        .asked("copy_file", json!({ "source": "t", "destination": "n/u" }))
        .await;
    assert!(asked.is_empty(), "refused before asking");
    let result = ws
        .call("copy_file", json!({ "source": "t", "destination": "n/u" }))
        .await;
    assert_eq!(
        result.code,
        Some(ErrorCode::NotARegularFile),
        "{}",
        result.output
    );
    assert!(
        result
            .output
            .contains(&ws.root.join("t/a/b/pipe").display().to_string()),
        "{}",
        result.output
    );
    assert_eq!(ws.names(), ["t"]);
    assert!(history(&ws).is_empty());
}

/// A missing source is NOT_FOUND, in the move's words.
#[tokio::test]
async fn a_missing_source_is_not_found() {
    let ws = TestWorkspace::new();
    let result = ws
        .call("copy_file", json!({ "source": "nope", "destination": "b" }))
        .await;
    assert_eq!(result.code, Some(ErrorCode::NotFound));
    assert_eq!(
        result.output,
        format!(
            "source not found: {}; check the path",
            ws.root.join("nope").display()
        )
    );
}

/// Replacing a tree asks always (whatever the permissions), counted, as a recursive remove_dir.
#[tokio::test]
async fn replacing_a_tree_always_asks_with_its_counts() {
    let ws = TestWorkspace::with(
        json!({ "permissions": { "cwdReadFile": true, "cwdWriteFile": true } }),
    );
    fs::write(ws.root.join("a.txt"), "a").unwrap();
    fs::create_dir_all(ws.root.join("d/e")).unwrap();
    fs::write(ws.root.join("d/e/f"), "ff").unwrap();
    let args = json!({ "source": "a.txt", "destination": "d", "overwrite": true });
    let asked = ws.asked("copy_file", args).await;
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].label, "Copy file?");
    assert_eq!(asked[0].recursive, Some(true));
    assert!(
        asked[0].detail.contains("1 file and 1 directory"),
        "{}",
        asked[0].detail
    );
    assert!(ws.root.join("d/e/f").exists());
    let plain = ws
        .asked(
            "copy_file",
            json!({ "source": "a.txt", "destination": "b.txt" }),
        )
        .await;
    assert!(plain.is_empty(), "read and write granted: {plain:?}");
    assert_eq!(ws.read("b.txt"), "a");
}

/// While the copy is being built nothing of it has a real name yet, not even the parents made
/// for it: they are built inside the journaled temp name with it, so a kill at any moment before
/// the commit leaves nothing the next Workspace would not remove.
#[tokio::test]
async fn the_parents_made_for_a_copy_are_built_with_it_under_its_temp_name() {
    use crate::paths::fsops::race_point::{self, RacePoint};
    use std::sync::{Arc, Mutex};
    let ws = TestWorkspace::new();
    fs::write(ws.root.join("cp-parents.txt"), "p\n").unwrap();
    let seen: Arc<Mutex<Option<Vec<String>>>> = Arc::default();
    let (root, during) = (ws.root.clone(), seen.clone());
    race_point::at(RacePoint::CopyLooked, "cp-parents.txt", move || {
        let mut names: Vec<String> = fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        *during.lock().unwrap() = Some(names);
    });
    let args = json!({ "source": "cp-parents.txt", "destination": "x/y/b.txt" });
    let result = ws.call("copy_file", args).await;
    assert_eq!(result.code, None, "{}", result.output);
    let during = seen
        .lock()
        .unwrap()
        .clone()
        .expect("the copy reached its race point");
    assert_eq!(during.len(), 2, "{during:?}");
    assert_eq!(during[1], "cp-parents.txt");
    assert!(
        during[0].starts_with(".x.") && during[0].ends_with(".agent-fs-tools.tmp"),
        "{during:?}"
    );
    assert_eq!(ws.read("x/y/b.txt"), "p\n");
}
