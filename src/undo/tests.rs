//! Undo of short sequences of tool calls on a real temporary workspace: each test is the
//! smallest sequence that reproduces a defect the undo property (`__test__/undo-property.test.ts`)
//! found, checked byte for byte against the tree it started from.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::{Selector, UndoRequest};
use crate::call::{CallContext, ToolResult};
use crate::confirm::{Answer, ConfirmRequest, Confirmer};
use crate::dispatch::Toolset;
use crate::paths::testing::Modes;

/// A user who says yes to every prompt (a recursive removal always asks).
struct Yes;

impl Confirmer for Yes {
    fn ask(&self, _request: ConfirmRequest) -> Answer {
        Box::pin(async { true })
    }
}

fn yes() -> CallContext {
    CallContext {
        confirmer: Some(std::sync::Arc::new(Yes)),
        ..CallContext::default()
    }
}

/// A workspace whose calls all belong to the session `S`, every permission granted.
struct Session {
    _dir: tempfile::TempDir,
    root: PathBuf,
    toolset: Toolset,
    /// The same workspace for the session `before`, whose archives `S` may restore.
    before: Toolset,
}

/// What undo must give back of an entry: kind, permission bits, content or link target.
type Tree = BTreeMap<String, (char, u32, Vec<u8>)>;

impl Session {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = crate::paths::canonical::canonicalize_existing(dir.path()).unwrap();
        let root = base.join("root");
        std::fs::create_dir(&root).unwrap();
        let permission = |name: &str| (name.to_owned(), json!(true));
        let permissions: serde_json::Map<String, Value> = [
            "cwdReadFile",
            "cwdWriteFile",
            "cwdRemoveFile",
            "cwdRemoveDir",
        ]
        .into_iter()
        .map(permission)
        .collect();
        let toolset = |session: &str| {
            Toolset::new(&json!({
                "root": root,
                "trash": { "dataDir": base.join("data"), "sessionId": session },
                "permissions": permissions,
                "staleWrites": "allow",
            }))
            .unwrap()
        };
        Session {
            toolset: toolset("S"),
            before: toolset("before"),
            _dir: dir,
            root,
        }
    }

    /// Trashes `rel` in the session `before`: the archive's path.
    async fn trashed_before(&self, rel: &str) -> String {
        let result = self
            .before
            .call("delete_file", json!({ "path": rel }), yes())
            .await;
        assert_eq!(result.status, "ok", "{}", result.output);
        trashed_to(&result)
    }

    /// Calls `tool`; it must succeed.
    async fn call(&self, tool: &str, args: Value) -> ToolResult {
        let result = self.toolset.call(tool, args.clone(), yes()).await;
        assert_eq!(result.status, "ok", "{tool} {args}: {}", result.output);
        result
    }

    /// Undoes what `selector` selects; returns the result as it came.
    async fn undo(&self, selector: Selector) -> ToolResult {
        let request = UndoRequest {
            selector,
            dry_run: false,
        };
        self.toolset.undo(request, CallContext::default()).await
    }

    /// Undoes the whole session `S`; it must succeed. Returns the undo's id.
    async fn undo_session(&self, when: &str) -> String {
        let result = self
            .undo(Selector {
                session_id: Some("S".into()),
                id: None,
            })
            .await;
        assert_eq!(result.status, "ok", "{when}: {}", result.output);
        change_id(&result)
    }

    /// Undoes the change `id` (an undo's id redoes it); it must succeed.
    async fn undo_id(&self, id: &str, when: &str) -> String {
        let result = self
            .undo(Selector {
                id: Some(id.into()),
                session_id: None,
            })
            .await;
        assert_eq!(result.status, "ok", "{when}: {}", result.output);
        change_id(&result)
    }

    /// Undoes the latest change; it must succeed.
    async fn undo_latest(&self, when: &str) {
        let result = self.undo(Selector::default()).await;
        assert_eq!(result.status, "ok", "{when}: {}", result.output);
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// Every entry under the root, never following links.
    fn tree(&self) -> Tree {
        let mut out = Tree::new();
        walk(&self.root, Path::new(""), &mut out);
        out
    }
}

fn walk(root: &Path, rel: &Path, out: &mut Tree) {
    let mut names: Vec<_> = std::fs::read_dir(root.join(rel))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    for name in names {
        let child = rel.join(&name);
        let full = root.join(&child);
        let meta = std::fs::symlink_metadata(&full).unwrap();
        let mode = meta.permissions().mode() & 0o7777;
        let key = child.to_string_lossy().into_owned();
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&full).unwrap();
            out.insert(key, ('l', 0, target.into_os_string().into_encoded_bytes()));
        } else if meta.is_dir() {
            out.insert(key, ('d', mode, Vec::new()));
            walk(root, &child, out);
        } else {
            out.insert(key, ('f', mode, std::fs::read(&full).unwrap()));
        }
    }
}

fn trashed_to(result: &ToolResult) -> String {
    result.data.as_ref().expect("data")["trashedTo"]
        .as_str()
        .expect("trashedTo")
        .to_owned()
}

fn change_id(result: &ToolResult) -> String {
    result.data.as_ref().expect("data")["changeId"]
        .as_str()
        .expect("changeId")
        .to_owned()
}

fn write(path: &Path, content: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

/// Undoes the session, redoes it, and undoes it again: the tree is `start`, then `after`,
/// then `start`.
async fn undo_redo_undo(s: &Session, start: &Tree) {
    let after = s.tree();
    let undo = s.undo_session("session undo").await;
    assert_eq!(&s.tree(), start, "after the session undo");
    s.undo_id(&undo, "redo").await;
    assert_eq!(s.tree(), after, "after the redo");
    s.undo_session("session undo after the redo").await;
    assert_eq!(&s.tree(), start, "after the session undo after the redo");
}

#[tokio::test]
async fn a_session_undo_after_a_redo_finds_a_directory_made_inside_one_moved_since() {
    // Seed 230651: the redo recreates c100 inside src, then moves src back to n101.
    let s = Session::new();
    write(&s.path("src/main.ts"), "main\n");
    let start = s.tree();
    s.call("create_directory", json!({ "path": "src/c100" }))
        .await;
    s.call(
        "move_file",
        json!({ "source": "src", "destination": "n101" }),
    )
    .await;
    undo_redo_undo(&s, &start).await;
}

#[tokio::test]
async fn a_session_undo_knows_a_restored_tree_by_the_restore() {
    // Seed 1000: the directory the move made was removed and restored since; the restored tree
    // stands in for the archive, and is known by what the restore recorded of it.
    let s = Session::new();
    write(&s.path("docs/readme.md"), "docs\n");
    let start = s.tree();
    s.call(
        "move_file",
        json!({ "source": "docs", "destination": "n112" }),
    )
    .await;
    let removed = s
        .call("remove_dir", json!({ "path": "n112", "recursive": true }))
        .await;
    s.call(
        "restore_file",
        json!({ "trashedPath": trashed_to(&removed) }),
    )
    .await;
    undo_redo_undo(&s, &start).await;
}

#[tokio::test]
async fn a_session_undo_after_a_redo_finds_a_restored_file_moved_since() {
    // Seed 16838: the redo restores old.txt and moves it on; the session undo after it moves it
    // back and must know it by what the redo recorded where it left it.
    let s = Session::new();
    write(&s.path("old.txt"), "old\n");
    let archive = s.trashed_before("old.txt").await;
    let start = s.tree();
    s.call("restore_file", json!({ "trashedPath": archive }))
        .await;
    s.call(
        "move_file",
        json!({ "source": "old.txt", "destination": "d/m/n.txt" }),
    )
    .await;
    undo_redo_undo(&s, &start).await;
}

#[tokio::test]
async fn a_restore_into_directories_it_made_is_undone_one_by_one() {
    // Seed 64352 (and 175218): the restore made src and src/lib again (src was moved away);
    // taking it back trashes the restored file with them, and on its own too, where the delete
    // before it finds it.
    let s = Session::new();
    write(&s.path("src/lib/util.ts"), "util\n");
    write(&s.path("src/main.ts"), "main\n");
    let start = s.tree();
    let deleted = s
        .call("delete_file", json!({ "path": "src/lib/util.ts" }))
        .await;
    s.call(
        "move_file",
        json!({ "source": "src", "destination": "n106" }),
    )
    .await;
    s.call(
        "restore_file",
        json!({ "trashedPath": trashed_to(&deleted) }),
    )
    .await;
    let after = s.tree();
    for step in 1..=3 {
        s.undo_latest(&format!("undo {step} of 3")).await;
    }
    assert_eq!(s.tree(), start, "after undoing each change");
    assert!(after.contains_key("src/lib/util.ts"), "{after:?}");
}

#[tokio::test]
async fn a_session_undo_removes_directories_made_inside_a_directory_it_moves_back() {
    // Seed 103947: write_file made d104/e105 inside n100, which the session had moved there
    // from docs; the directories it made follow n100 back and go.
    let s = Session::new();
    write(&s.path("docs/readme.md"), "docs\n");
    let start = s.tree();
    s.call(
        "move_file",
        json!({ "source": "docs", "destination": "n100" }),
    )
    .await;
    s.call(
        "write_file",
        json!({ "path": "n100/d104/e105/n106.txt", "content": "new\n" }),
    )
    .await;
    undo_redo_undo(&s, &start).await;
}

#[tokio::test]
async fn a_directory_a_change_made_goes_when_its_removal_is_taken_back_too() {
    // Seed 119785: write_file made d101/e102, e102 moved away, then d101 (empty) was removed;
    // the session undo makes d101 again for the removal, then takes it away with the write.
    let s = Session::new();
    write(&s.path("src/main.ts"), "main\n");
    let start = s.tree();
    s.call(
        "write_file",
        json!({ "path": "d101/e102/n103.txt", "content": "new\n" }),
    )
    .await;
    s.call(
        "move_file",
        json!({ "source": "d101/e102", "destination": "src/n114" }),
    )
    .await;
    s.call("remove_dir", json!({ "path": "d101" })).await;
    undo_redo_undo(&s, &start).await;
}

#[tokio::test]
async fn a_session_undo_redone_moves_a_directory_out_of_a_restored_tree_after_its_files() {
    // Seed 1000: the file written inside src/lib goes back to its bytes, src/lib comes back
    // from n113 into src, which comes back from the trash; the redo takes them out again in
    // the reverse order.
    let s = Session::new();
    write(&s.path("src/main.ts"), "main\n");
    write(&s.path("src/lib/data.bin"), "data\n");
    let start = s.tree();
    s.call(
        "write_file",
        json!({ "path": "src/lib/data.bin", "content": "new\n" }),
    )
    .await;
    s.call(
        "move_file",
        json!({ "source": "src/lib", "destination": "n113" }),
    )
    .await;
    s.call("remove_dir", json!({ "path": "src", "recursive": true }))
        .await;
    undo_redo_undo(&s, &start).await;
}

#[tokio::test]
async fn a_session_undo_takes_back_moves_within_a_removed_tree() {
    // A file moved inside a directory, two that trade places there, then the directory
    // removed: the tree comes back from the trash with each entry at its place before.
    let s = Session::new();
    write(&s.path("a/f"), "f\n");
    write(&s.path("a/x"), "x\n");
    write(&s.path("a/y"), "y\n");
    write(&s.path("a/d/z"), "z\n");
    let start = s.tree();
    s.call(
        "move_file",
        json!({ "source": "a/f", "destination": "a/g" }),
    )
    .await;
    s.call(
        "move_file",
        json!({ "source": "a/x", "destination": "a/t" }),
    )
    .await;
    s.call(
        "move_file",
        json!({ "source": "a/y", "destination": "a/x" }),
    )
    .await;
    s.call(
        "move_file",
        json!({ "source": "a/t", "destination": "a/y" }),
    )
    .await;
    s.call(
        "move_file",
        json!({ "source": "a/d/z", "destination": "a/z" }),
    )
    .await;
    s.call("remove_dir", json!({ "path": "a", "recursive": true }))
        .await;
    undo_redo_undo(&s, &start).await;
}

#[tokio::test]
async fn a_session_undo_takes_back_a_restore_into_directories_it_made() {
    // Seed 64352: the restore made src and src/lib again (src was moved away to n106); the
    // session undo removes them with the restored file, moves n106 back to src and gives the
    // file back beneath it; the redo takes that back the same way.
    let s = Session::new();
    write(&s.path("src/lib/util.ts"), "util\n");
    write(&s.path("src/main.ts"), "main\n");
    let start = s.tree();
    let deleted = s
        .call("delete_file", json!({ "path": "src/lib/util.ts" }))
        .await;
    s.call(
        "move_file",
        json!({ "source": "src", "destination": "n106" }),
    )
    .await;
    s.call(
        "restore_file",
        json!({ "trashedPath": trashed_to(&deleted) }),
    )
    .await;
    undo_redo_undo(&s, &start).await;
}

#[tokio::test]
async fn a_session_undo_takes_back_a_restore_into_a_directory_removed_since() {
    // Seed 175218: a link deleted from src, then src removed; the restore of the link made src
    // again. The session undo takes the restore back with the directory it made, then brings
    // src back from the trash and the link into it; the redo takes that back the same way.
    let s = Session::new();
    write(&s.path("src/main.ts"), "main\n");
    crate::paths::testing::symlink("main.ts", s.path("src/to-main")).unwrap();
    let start = s.tree();
    let deleted = s
        .call("delete_file", json!({ "path": "src/to-main" }))
        .await;
    s.call("remove_dir", json!({ "path": "src", "recursive": true }))
        .await;
    s.call(
        "restore_file",
        json!({ "trashedPath": trashed_to(&deleted) }),
    )
    .await;
    undo_redo_undo(&s, &start).await;
}

/// An undo is a change even when nothing on disk had to move (a file written, then deleted,
/// in the session): recorded with its commit like any other, its id in the result, and the
/// session's changes undone by it.
#[tokio::test]
async fn an_undo_with_nothing_on_disk_to_change_is_recorded_all_the_same() {
    let s = Session::new();
    let start = s.tree();
    let written = s
        .call("write_file", json!({ "path": "a.txt", "content": "a\n" }))
        .await;
    assert_eq!(written.status, "ok", "{}", written.output);
    let deleted = s.call("delete_file", json!({ "path": "a.txt" })).await;
    assert_eq!(deleted.status, "ok", "{}", deleted.output);
    let result = s
        .undo(Selector {
            session_id: Some("S".into()),
            id: None,
        })
        .await;
    assert_eq!(result.status, "ok", "{}", result.output);
    assert!(
        result.output.contains("(nothing on disk to change)"),
        "{}",
        result.output
    );
    let id = change_id(&result);
    assert_eq!(s.tree(), start);
    let history: Value =
        serde_json::from_str(&s.toolset.history(None, None).await.unwrap()).unwrap();
    let listed = history.as_array().unwrap();
    assert!(listed.iter().any(|c| c["id"] == json!(id)), "{history}");
    let undone = listed.iter().filter(|c| c["undoneBy"] == json!(id)).count();
    assert_eq!(undone, 2, "{history}");
}

#[tokio::test]
async fn a_session_undo_moves_an_entry_out_of_a_removed_tree_it_was_moved_into() {
    // A file moved into a directory, then the directory removed: the tree comes back from the
    // trash, and the file comes out of it to its place before, all in one step.
    let s = Session::new();
    write(&s.path("a/x"), "x\n");
    write(&s.path("b.txt"), "b\n");
    let start = s.tree();
    s.call(
        "move_file",
        json!({ "source": "b.txt", "destination": "a/b-in.txt" }),
    )
    .await;
    s.call("remove_dir", json!({ "path": "a", "recursive": true }))
        .await;
    undo_redo_undo(&s, &start).await;
}

#[tokio::test]
async fn a_session_undo_moves_entries_back_into_a_removed_tree_they_came_from() {
    // A file and a directory moved from d into a, then a and d removed: both trees come back
    // from the trash, and the entries go from the one to the other, all in one step.
    let s = Session::new();
    write(&s.path("a/x"), "x\n");
    write(&s.path("d/f"), "f\n");
    write(&s.path("d/inner/g"), "g\n");
    let start = s.tree();
    s.call(
        "move_file",
        json!({ "source": "d/f", "destination": "a/f" }),
    )
    .await;
    s.call(
        "move_file",
        json!({ "source": "d/inner", "destination": "a/inner" }),
    )
    .await;
    s.call("remove_dir", json!({ "path": "a", "recursive": true }))
        .await;
    s.call("remove_dir", json!({ "path": "d", "recursive": true }))
        .await;
    undo_redo_undo(&s, &start).await;
}

#[tokio::test]
async fn a_session_undo_moves_an_entry_out_of_a_removed_tree_whose_place_in_it_comes_back_too() {
    // A file moved over another inside a directory (the one it replaced archived), then the
    // directory removed: the tree comes back from the trash with the replaced file at its place,
    // and the moved file comes out of it to its place before, all in one step (seed 198975).
    let s = Session::new();
    write(&s.path("a/x"), "x\n");
    write(&s.path("a/y"), "y\n");
    write(&s.path("b.txt"), "b\n");
    let start = s.tree();
    s.call(
        "move_file",
        json!({ "source": "b.txt", "destination": "a/y", "overwrite": true }),
    )
    .await;
    s.call("remove_dir", json!({ "path": "a", "recursive": true }))
        .await;
    undo_redo_undo(&s, &start).await;
}

#[tokio::test]
async fn a_session_undo_moves_an_entry_out_of_a_directory_made_in_a_removed_tree() {
    // A file moved into a directory made inside another, then that other removed: the tree
    // comes back from the trash without the directory made, and the file comes out of it to
    // its place before, all in one step (seed 610763).
    let s = Session::new();
    write(&s.path("a/x"), "x\n");
    write(&s.path("b.txt"), "b\n");
    let start = s.tree();
    s.call("create_directory", json!({ "path": "a/c" })).await;
    s.call(
        "move_file",
        json!({ "source": "b.txt", "destination": "a/c/n.txt" }),
    )
    .await;
    s.call("remove_dir", json!({ "path": "a", "recursive": true }))
        .await;
    undo_redo_undo(&s, &start).await;
}

#[tokio::test]
async fn a_session_undo_moves_a_directory_out_of_a_removed_tree_with_its_place_taken() {
    // A directory moved over a file inside another (the file archived), a file written in it,
    // then the other removed: the moved directory comes out of the tree with its file's older
    // bytes, and the replaced file comes back at its place in the tree.
    let s = Session::new();
    write(&s.path("a/x"), "x\n");
    write(&s.path("d/f"), "f\n");
    let start = s.tree();
    s.call(
        "move_file",
        json!({ "source": "d", "destination": "a/x", "overwrite": true }),
    )
    .await;
    s.call(
        "write_file",
        json!({ "path": "a/x/f", "content": "f two\n" }),
    )
    .await;
    s.call("remove_dir", json!({ "path": "a", "recursive": true }))
        .await;
    undo_redo_undo(&s, &start).await;
}
