//! Stale views (../../docs/tools.md#stale-views) across the tools: `write_file` never replaces what the model has not seen as it is;
//! edit, append and patch say when the file had changed since the model's view. Every change
//! "by the user" here changes the file's size or inode, so the check sees it whatever the
//! resolution of the file system's clock.

use serde_json::json;

use crate::error::ErrorCode;
use crate::tools::testing::TestWorkspace;

fn user_writes(ws: &TestWorkspace, name: &str, content: &str) {
    std::fs::write(ws.root.join(name), content).unwrap();
}

#[tokio::test]
async fn a_write_over_a_file_never_read_is_refused_and_writes_nothing() {
    let ws = TestWorkspace::new();
    user_writes(&ws, "cfg.txt", "user\n");
    let result = ws
        .call(
            "write_file",
            json!({ "path": "cfg.txt", "content": "model\n" }),
        )
        .await;
    assert_eq!(result.code, Some(ErrorCode::Stale), "{}", result.output);
    assert_eq!(
        result.output,
        format!(
            "{} exists and you have not read it. Read it first (read_file), then write it; to change a part of it, use edit_file.",
            ws.root.join("cfg.txt").display()
        )
    );
    assert_eq!(ws.read("cfg.txt"), "user\n");
    // Read (any range of it), then written.
    let read = ws
        .call(
            "read_file",
            json!({ "path": "cfg.txt", "startLine": 1, "endLine": 1 }),
        )
        .await;
    assert_eq!(read.status, "ok", "{}", read.output);
    let result = ws
        .call(
            "write_file",
            json!({ "path": "cfg.txt", "content": "model\n" }),
        )
        .await;
    assert_eq!(result.status, "ok", "{}", result.output);
    assert_eq!(ws.read("cfg.txt"), "model\n");
}

#[tokio::test]
async fn a_write_over_a_file_changed_since_it_was_read_is_refused() {
    let ws = TestWorkspace::new();
    user_writes(&ws, "cfg.txt", "a = 1\n");
    ws.call("read_file", json!({ "path": "cfg.txt" })).await;
    user_writes(&ws, "cfg.txt", "a = 1\nb = 2\n");
    let result = ws
        .call(
            "write_file",
            json!({ "path": "cfg.txt", "content": "a = 3\n" }),
        )
        .await;
    assert_eq!(result.code, Some(ErrorCode::Stale), "{}", result.output);
    assert_eq!(
        result.output,
        format!(
            "{} has changed since you last read it (by the user or another program). Read it again before you overwrite it; edit_file changes only the text you name.",
            ws.root.join("cfg.txt").display()
        )
    );
    assert_eq!(ws.read("cfg.txt"), "a = 1\nb = 2\n");
    // Another file put in its place, same size: a change too.
    ws.call("read_file", json!({ "path": "cfg.txt" })).await;
    user_writes(&ws, "other.txt", "a = 1\nb = 3\n");
    std::fs::rename(ws.root.join("other.txt"), ws.root.join("cfg.txt")).unwrap();
    let result = ws
        .call(
            "write_file",
            json!({ "path": "cfg.txt", "content": "a = 3\n" }),
        )
        .await;
    assert_eq!(result.code, Some(ErrorCode::Stale), "{}", result.output);
}

#[tokio::test]
async fn what_the_model_wrote_itself_counts_as_seen() {
    let ws = TestWorkspace::new();
    let write = |content: &str| json!({ "path": "new/a.txt", "content": content });
    // A new file needs no read; a rewrite of the model's own file none either.
    for content in ["one\n", "one\ntwo\n", "one\ntwo\n", "three\n"] {
        let result = ws.call("write_file", write(content)).await;
        assert_eq!(result.status, "ok", "{content}: {}", result.output);
    }
    let edit =
        json!({ "path": "new/a.txt", "edits": [{ "oldString": "three", "newString": "four" }] });
    assert_eq!(ws.call("edit_file", edit).await.status, "ok");
    let append = json!({ "path": "new/a.txt", "content": "five\n" });
    assert_eq!(ws.call("append_file", append).await.status, "ok");
    let patch =
        "*** Begin Patch\n*** Update File: new/a.txt\n@@\n four\n-five\n+six\n*** End Patch";
    let patched = ws.call("apply_patch", json!({ "input": patch })).await;
    assert_eq!(patched.status, "ok", "{}", patched.output);
    let moved = json!({ "source": "new/a.txt", "destination": "moved/b.txt" });
    assert_eq!(ws.call("move_file", moved).await.status, "ok");
    let result = ws
        .call(
            "write_file",
            json!({ "path": "moved/b.txt", "content": "seven\n" }),
        )
        .await;
    assert_eq!(result.status, "ok", "{}", result.output);
    assert!(!result.output.contains("Note:"), "{}", result.output);
    assert_eq!(ws.read("moved/b.txt"), "seven\n");
}

#[tokio::test]
async fn a_moved_directory_keeps_the_model_s_view_of_its_files() {
    let ws = TestWorkspace::new();
    std::fs::create_dir(ws.root.join("d")).unwrap();
    user_writes(&ws, "d/a.txt", "x\n");
    ws.call("read_file", json!({ "path": "d/a.txt" })).await;
    let moved = ws
        .call("move_file", json!({ "source": "d", "destination": "e" }))
        .await;
    assert_eq!(moved.status, "ok", "{}", moved.output);
    let result = ws
        .call("write_file", json!({ "path": "e/a.txt", "content": "y\n" }))
        .await;
    assert_eq!(result.status, "ok", "{}", result.output);
}

#[tokio::test]
async fn a_restored_file_counts_as_seen() {
    let ws = TestWorkspace::new();
    user_writes(&ws, "a.txt", "x\n");
    let deleted = ws.call("delete_file", json!({ "path": "a.txt" })).await;
    let archive = deleted.data.as_ref().unwrap()["trashedTo"].clone();
    let restored = ws
        .call("restore_file", json!({ "trashedPath": archive }))
        .await;
    assert_eq!(restored.status, "ok", "{}", restored.output);
    let result = ws
        .call("write_file", json!({ "path": "a.txt", "content": "y\n" }))
        .await;
    assert_eq!(result.status, "ok", "{}", result.output);
}

#[tokio::test]
async fn edit_append_and_patch_say_the_file_had_changed() {
    let ws = TestWorkspace::new();
    user_writes(&ws, "a.txt", "one\n");
    user_writes(&ws, "b.txt", "one\n");
    for name in ["a.txt", "b.txt"] {
        ws.call("read_file", json!({ "path": name })).await;
    }
    let note = |path: &str| {
        format!(
            "Note: {} had changed since you last read it (by the user or another program); this change was made to what it holds now. Read it again before relying on what you saw.",
            ws.root.join(path).display()
        )
    };
    user_writes(&ws, "a.txt", "one\ntwo\n");
    let edit = json!({ "path": "a.txt", "edits": [{ "oldString": "one", "newString": "1" }] });
    let edited = ws.call("edit_file", edit).await;
    assert_eq!(edited.status, "ok", "{}", edited.output);
    assert!(edited.output.contains(&note("a.txt")), "{}", edited.output);
    // The edit left a version the model has seen: no note the next time.
    let again = json!({ "path": "a.txt", "edits": [{ "oldString": "two", "newString": "2" }] });
    let edited = ws.call("edit_file", again).await;
    assert!(!edited.output.contains("Note:"), "{}", edited.output);

    user_writes(&ws, "a.txt", "1\n2\n3\n");
    let appended = ws
        .call("append_file", json!({ "path": "a.txt", "content": "4\n" }))
        .await;
    assert_eq!(appended.status, "ok", "{}", appended.output);
    assert!(
        appended.output.contains(&note("a.txt")),
        "{}",
        appended.output
    );

    user_writes(&ws, "a.txt", "1\n2\n3\n4\n5\n");
    user_writes(&ws, "b.txt", "one\ntwo\n");
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-5\n+five\n*** Update File: b.txt\n@@\n-two\n+2\n*** End Patch";
    let patched = ws.call("apply_patch", json!({ "input": patch })).await;
    assert_eq!(patched.status, "ok", "{}", patched.output);
    let both = format!(
        "Note: {}, {} had changed since you last read them (by the user or another program); this change was made to what they hold now. Read them again before relying on what you saw.",
        ws.root.join("a.txt").display(),
        ws.root.join("b.txt").display()
    );
    assert!(patched.output.contains(&both), "{}", patched.output);
    // A file never read is not "changed since": nothing to say.
    user_writes(&ws, "c.txt", "x\n");
    let appended = ws
        .call("append_file", json!({ "path": "c.txt", "content": "y\n" }))
        .await;
    assert!(!appended.output.contains("Note:"), "{}", appended.output);
}

#[tokio::test]
async fn an_old_string_not_found_in_a_changed_file_says_to_read_it_again() {
    let ws = TestWorkspace::new();
    user_writes(&ws, "a.txt", "fn old() {}\n");
    ws.call("read_file", json!({ "path": "a.txt" })).await;
    let edit = json!({ "path": "a.txt", "edits": [{ "oldString": "fn old() {}", "newString": "fn new() {}" }] });
    user_writes(&ws, "a.txt", "fn renamed_by_the_user() {}\n");
    let result = ws.call("edit_file", edit.clone()).await;
    assert_eq!(result.code, Some(ErrorCode::NoMatch), "{}", result.output);
    assert!(
        result
            .output
            .contains("\nNote: it changed since you read it (by the user or another program); read it again and copy the lines from what it holds now."),
        "{}",
        result.output
    );
    // Read again: the same miss no longer blames a change.
    ws.call("read_file", json!({ "path": "a.txt" })).await;
    let result = ws.call("edit_file", edit).await;
    assert!(
        !result.output.contains("changed since"),
        "{}",
        result.output
    );
}

#[tokio::test]
async fn stale_writes_allow_writes_and_says_what_it_replaced() {
    let ws = TestWorkspace::with(json!({ "staleWrites": "allow" }));
    user_writes(&ws, "never-read.txt", "user\n");
    let result = ws
        .call(
            "write_file",
            json!({ "path": "never-read.txt", "content": "model\n" }),
        )
        .await;
    assert_eq!(result.status, "ok", "{}", result.output);
    assert!(!result.output.contains("Note:"), "{}", result.output);
    ws.call("read_file", json!({ "path": "never-read.txt" }))
        .await;
    user_writes(&ws, "never-read.txt", "user again\n");
    let result = ws
        .call(
            "write_file",
            json!({ "path": "never-read.txt", "content": "model\n" }),
        )
        .await;
    assert_eq!(result.status, "ok", "{}", result.output);
    assert!(
        result.output.contains("had changed since you last read it"),
        "{}",
        result.output
    );
    assert_eq!(ws.read("never-read.txt"), "model\n");
}

/// The refusals point at the tools by the host's names, and only at tools it offers.
#[tokio::test]
async fn the_refusal_names_the_host_s_tools() {
    let ws = TestWorkspace::with(json!({ "tools": {
        "read_file": { "name": "view" }, "edit_file": { "enabled": false } } }));
    user_writes(&ws, "a.txt", "x\n");
    let result = ws
        .call("write_file", json!({ "path": "a.txt", "content": "y\n" }))
        .await;
    assert!(
        result
            .output
            .ends_with("exists and you have not read it. Read it first (view), then write it."),
        "{}",
        result.output
    );
}
