use crate::tools::testing::TestWorkspace;
use serde_json::json;

/// Tomo calls delete_file remove_file: the messages pointing from one to the other use it.
#[tokio::test]
async fn hints_use_the_host_s_names() {
    let ws = TestWorkspace::with(json!({ "tools": { "delete_file": { "name": "remove_file" } } }));
    std::fs::write(ws.root.join("f.txt"), "x\n").unwrap();
    std::fs::create_dir(ws.root.join("d")).unwrap();
    let result = ws.call("remove_dir", json!({ "path": "f.txt" })).await;
    assert!(
        result
            .output
            .ends_with("f.txt is a file, use remove_file instead"),
        "{}",
        result.output
    );
    let result = ws.call("remove_file", json!({ "path": "d" })).await;
    assert!(
        result.output.ends_with(&format!(
            "{} is a directory, use remove_dir instead",
            ws.at("d").display()
        )),
        "{}",
        result.output
    );
}

/// A hint never points at a tool the model cannot call: disabled, or hidden by readOnly.
#[tokio::test]
async fn hints_name_only_the_tools_offered() {
    let ws = TestWorkspace::with(json!({
        "tools": { "restore_file": { "enabled": false }, "glob": { "enabled": false }, "write_file": { "enabled": false } },
    }));
    std::fs::write(ws.root.join("f.txt"), "x\n").unwrap();
    let deleted = ws.call("delete_file", json!({ "path": "f.txt" })).await;
    assert_eq!(deleted.status, "ok", "{}", deleted.output);
    assert!(
        deleted.output.contains("\nIt is in the trash at "),
        "{}",
        deleted.output
    );
    assert!(!deleted.output.contains("restore"), "{}", deleted.output);
    let missing = ws
        .call("grep", json!({ "pattern": "x", "path": "nowhere" }))
        .await;
    assert!(
        missing
            .output
            .ends_with("check the path (list_directory can show what exists)"),
        "{}",
        missing.output
    );
    let edit = json!({ "path": "nowhere.txt", "edits": [{ "oldString": "a", "newString": "b" }] });
    let missing = ws.call("edit_file", edit).await;
    assert!(
        missing.output.ends_with("nowhere.txt; check the path"),
        "{}",
        missing.output
    );

    let ws = TestWorkspace::with(json!({ "readOnly": true }));
    std::fs::write(ws.root.join("latin1.txt"), b"caf\xe9\n").unwrap();
    let read = ws.call("read_file", json!({ "path": "latin1.txt" })).await;
    assert!(
        read.output
            .ends_with("[Note: this file is not valid UTF-8; invalid bytes are shown as U+FFFD.]"),
        "{}",
        read.output
    );
    let ws = TestWorkspace::new();
    std::fs::write(ws.root.join("latin1.txt"), b"caf\xe9\n").unwrap();
    let read = ws.call("read_file", json!({ "path": "latin1.txt" })).await;
    assert!(
        read.output
            .ends_with("U+FFFD, and edit_file will refuse to edit it.]"),
        "{}",
        read.output
    );
}
