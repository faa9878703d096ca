use crate::error::ErrorCode;
use crate::tools::testing::TestWorkspace;
use serde_json::json;

/// The arguments are checked before anything else: in a read-only workspace a write with
/// bad arguments is told about its arguments; with good ones, that it cannot write.
#[tokio::test]
async fn arguments_are_checked_before_read_only() {
    let ws = TestWorkspace::with(
        json!({ "readOnly": true, "tools": { "write_file": { "name": "save" } } }),
    );
    let bad = ws.call("save", json!({ "path": 5 })).await;
    assert_eq!(
        bad.code,
        Some(ErrorCode::InvalidArguments),
        "{}",
        bad.output
    );
    assert!(
        bad.output
            .starts_with("save: invalid arguments: path: must be a string, got the integer 5"),
        "{}",
        bad.output
    );
    let empty = ws.call("save", json!({ "path": "", "content": "x" })).await;
    assert_eq!(
        empty.code,
        Some(ErrorCode::InvalidArguments),
        "{}",
        empty.output
    );
    let good = ws
        .call("save", json!({ "path": "a.txt", "content": "x" }))
        .await;
    assert_eq!(good.code, Some(ErrorCode::ReadOnly), "{}", good.output);
    assert!(!ws.root.join("a.txt").exists());
}

/// `null` for an optional argument is "not given" (../../docs/hosts.md#the-workspace-api): what a model held to strict
/// function calling sends for every argument it leaves out. A null required one is refused.
#[tokio::test]
async fn null_is_not_given_for_every_optional_argument() {
    let ws = TestWorkspace::new();
    std::fs::write(ws.root.join("a.txt"), "one\ntwo\n").unwrap();
    let read = json!({ "path": "a.txt", "startLine": null, "endLine": null, "startColumn": null });
    let result = ws.call("read_file", read).await;
    assert_eq!(result.status, "ok", "{}", result.output);
    let edit = json!({ "path": "a.txt", "edits": [{ "oldString": "one", "newString": "1", "replaceAll": null }] });
    let result = ws.call("edit_file", edit).await;
    assert_eq!(result.status, "ok", "{}", result.output);
    let listed = json!({ "path": null, "recursive": null, "includeIgnored": null });
    assert_eq!(ws.call("list_directory", listed).await.status, "ok");
    let grep = json!({ "pattern": "1", "path": null, "include": null, "caseInsensitive": null,
        "contextLines": null, "maxMatches": null, "includeIgnored": null });
    let found = ws.call("grep", grep).await;
    assert_eq!(found.status, "ok", "{}", found.output);
    assert_eq!(
        ws.toolset
            .format_call("read_file", &json!({ "path": "a.txt", "startLine": null })),
        "a.txt"
    );
    let required = ws.call("read_file", json!({ "path": null })).await;
    assert_eq!(
        required.output,
        "read_file: invalid arguments: path: must be a string, got null"
    );
}

/// A host's bad `ctx.permissions` is named for the host, not reported to the model.
#[test]
fn bad_call_permissions_name_the_key() {
    let ws = TestWorkspace::new();
    let e = ws
        .toolset
        .call_permissions(&json!({ "cwdWrite": true }))
        .unwrap_err();
    assert!(
        e.0.starts_with("ctx.permissions.cwdWrite: unknown permission"),
        "{e}"
    );
    let e = ws
        .toolset
        .call_permissions(&json!({ "cwdWriteFile": "yes" }))
        .unwrap_err();
    assert_eq!(e.0, "ctx.permissions.cwdWriteFile: must be a boolean");
    let p = ws
        .toolset
        .call_permissions(&json!({ "cwdReadFile": false }))
        .unwrap();
    assert!(
        !p.cwd_read_file && p.cwd_write_file,
        "merged over the workspace's: {p:?}"
    );
}
