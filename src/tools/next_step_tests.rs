//! Messages that say what to do next (../../docs/tools.md#error-codes, issue "What the model sees, round 2" item 3): each
//! keeps the documented exact text where there is one, then gives the step that follows.

use serde_json::json;

use crate::error::ErrorCode;
use crate::tools::testing::TestWorkspace;

#[tokio::test]
async fn a_missing_file_points_out_whitespace_and_near_names() {
    let ws = TestWorkspace::new();
    std::fs::create_dir(ws.root.join("src")).unwrap();
    std::fs::write(ws.root.join("src/config.ts"), "x\n").unwrap();
    std::fs::write(ws.root.join("src/main.ts"), "x\n").unwrap();
    let abs = |p: &str| ws.at(p).display().to_string();
    let spaced = ws
        .call("read_file", json!({ "path": "src/config.ts " }))
        .await;
    if cfg!(windows) {
        // Windows strips a trailing space from a name: such a path is refused before any lookup.
        assert_eq!(spaced.code, Some(ErrorCode::InvalidArguments));
        assert_eq!(
            spaced.output,
            "path: `config.ts ` ends with a dot or a space, which Windows strips from a name; choose a name without it"
        );
    } else {
        assert_eq!(spaced.code, Some(ErrorCode::NotFound), "{}", spaced.output);
        assert_eq!(
            spaced.output,
            format!(
                "file not found: {}; the path you gave, \"src/config.ts \", ends with whitespace, which is part of the name; similar names in {}: \"config.ts\"",
                abs("src/config.ts "),
                abs("src")
            )
        );
    }
    let typo = ws
        .call("read_file", json!({ "path": "src/confg.js" }))
        .await;
    assert_eq!(
        typo.output,
        format!(
            "file not found: {}; similar names in {}: \"config.ts\"",
            abs("src/confg.js"),
            abs("src")
        )
    );
    let nothing_near = ws.call("read_file", json!({ "path": "src/zzz.py" })).await;
    assert_eq!(
        nothing_near.output,
        format!("file not found: {}", abs("src/zzz.py"))
    );
    let no_dir = ws.call("read_file", json!({ "path": "lib/a.ts" })).await;
    assert_eq!(
        no_dir.output,
        format!(
            "file not found: {}; its directory {} does not exist either",
            abs("lib/a.ts"),
            abs("lib")
        )
    );
    // Names differing in case only are one name on Windows: there `src/Main.ts` is main.ts.
    if cfg!(windows) {
        return;
    }
    let edit = json!({ "path": "src/Main.ts", "edits": [{ "oldString": "x", "newString": "y" }] });
    let edited = ws.call("edit_file", edit).await;
    assert_eq!(
        edited.output,
        format!(
            "file not found: {}; similar names in {}: \"main.ts\"; check the path, or use write_file to create a new file",
            abs("src/Main.ts"),
            abs("src")
        )
    );
}

/// A directory the call may not read is not listed for a hint.
#[tokio::test]
async fn near_names_are_shown_only_where_the_call_may_read() {
    let ws = TestWorkspace::with(json!({ "permissions": { "cwdReadFile": false } }));
    std::fs::write(ws.root.join("secret-plan.txt"), "x\n").unwrap();
    let result = ws
        .call("read_file", json!({ "path": "secret-plan.tx" }))
        .await;
    assert_eq!(result.code, Some(ErrorCode::NotFound), "{}", result.output);
    assert!(
        !result.output.contains("secret-plan.txt"),
        "{}",
        result.output
    );
}

#[tokio::test]
async fn a_move_onto_a_directory_says_the_destination_is_the_new_path() {
    let ws = TestWorkspace::new();
    std::fs::create_dir(ws.root.join("src")).unwrap();
    std::fs::write(ws.root.join("src/keep.txt"), "x\n").unwrap();
    std::fs::write(ws.root.join("b.txt"), "b\n").unwrap();
    let result = ws
        .call(
            "move_file",
            json!({ "source": "b.txt", "destination": "src/" }),
        )
        .await;
    assert_eq!(
        result.code,
        Some(ErrorCode::AlreadyExists),
        "{}",
        result.output
    );
    assert_eq!(
        result.output,
        format!(
            "{} already exists and is a directory. destination is the new path of what you move, not a directory to move it into: to move it into that directory, give destination \"src/b.txt\". overwrite: true would replace the entire directory and everything in it (it goes to the trash)",
            ws.root.join("src").display()
        )
    );
    assert!(ws.root.join("b.txt").exists() && ws.root.join("src/keep.txt").exists());
}

#[tokio::test]
async fn a_move_onto_itself_says_so() {
    let ws = TestWorkspace::new();
    std::fs::write(ws.root.join("a.txt"), "a\n").unwrap();
    let result = ws
        .call(
            "move_file",
            json!({ "source": "a.txt", "destination": "./a.txt" }),
        )
        .await;
    assert_eq!(
        result.code,
        Some(ErrorCode::InvalidArguments),
        "{}",
        result.output
    );
    assert_eq!(
        result.output,
        format!(
            "move_file: invalid arguments: source and destination are the same path ({}); nothing to move. Give the new path as destination",
            ws.root.join("a.txt").display()
        )
    );
}

/// A patch deleting a file that never existed is a wrong path, not a patch already applied; a
/// retry of a patch that did delete it still is one (../../docs/tools.md#apply_patch).
#[tokio::test]
async fn a_patch_deleting_a_missing_file_says_no_such_file_unless_it_deleted_it() {
    let ws = TestWorkspace::new();
    std::fs::write(ws.root.join("notes.txt"), "x\n").unwrap();
    let typo = "*** Begin Patch\n*** Delete File: note.txt\n*** End Patch";
    let result = ws.call("apply_patch", json!({ "input": typo })).await;
    assert_eq!(result.code, Some(ErrorCode::NotFound), "{}", result.output);
    assert_eq!(
        result.output,
        format!(
            "note.txt: the file to delete does not exist ({}), so nothing was deleted; similar names in {}: \"notes.txt\". Check the path\nNo files were modified.",
            ws.root.join("note.txt").display(),
            ws.root.display()
        )
    );
    let patch = "*** Begin Patch\n*** Delete File: notes.txt\n*** End Patch";
    let first = ws.call("apply_patch", json!({ "input": patch })).await;
    assert_eq!(first.status, "ok", "{}", first.output);
    let retry = ws.call("apply_patch", json!({ "input": patch })).await;
    assert_eq!(retry.status, "ok", "{}", retry.output);
    assert_eq!(retry.output, "Patch already applied; nothing changed.");
    // The same for a file that was moved away (by delete_file it is gone the same way).
    std::fs::write(ws.root.join("c.txt"), "c\n").unwrap();
    ws.call(
        "move_file",
        json!({ "source": "c.txt", "destination": "d.txt" }),
    )
    .await;
    let moved_away = "*** Begin Patch\n*** Delete File: c.txt\n*** End Patch";
    let result = ws.call("apply_patch", json!({ "input": moved_away })).await;
    assert_eq!(result.status, "ok", "{}", result.output);
}

#[tokio::test]
async fn an_invalid_regex_is_one_line_with_its_literal_form() {
    let ws = TestWorkspace::new();
    let result = ws.call("grep", json!({ "pattern": "foo(" })).await;
    assert_eq!(
        result.code,
        Some(ErrorCode::InvalidArguments),
        "{}",
        result.output
    );
    assert_eq!(
        result.output,
        "grep: invalid arguments: pattern: not a valid regular expression (unclosed group); to search for the text as written, escape its special characters: pattern `foo\\(`"
    );
}

#[tokio::test]
async fn an_absolute_glob_is_split_into_path_and_pattern() {
    let ws = TestWorkspace::new();
    let pattern = format!("{}/src/*.ts", ws.root.display());
    let result = ws.call("glob", json!({ "pattern": pattern })).await;
    assert_eq!(
        result.output,
        format!(
            "glob: invalid arguments: pattern: `{pattern}` is absolute, but it is matched against paths relative to the searched directory: give path: {} and pattern: \"src/*.ts\" instead",
            json!(ws.root.display().to_string())
        )
    );
}

#[tokio::test]
async fn restore_file_given_an_original_path_names_its_archive() {
    let ws = TestWorkspace::new();
    for content in ["one\n", "two\n"] {
        std::fs::write(ws.root.join("a.txt"), content).unwrap();
        let deleted = ws.call("delete_file", json!({ "path": "a.txt" })).await;
        assert_eq!(deleted.status, "ok", "{}", deleted.output);
    }
    let newest = ws.call("trash_list", json!({})).await.data.unwrap()["entries"][0]["archivePath"]
        .as_str()
        .unwrap()
        .to_owned();
    let name = std::path::Path::new(&newest)
        .file_name()
        .unwrap()
        .to_str()
        .unwrap();
    for given in ["a.txt", &ws.root.join("a.txt").display().to_string()] {
        let result = ws
            .call("restore_file", json!({ "trashedPath": given }))
            .await;
        assert_eq!(result.code, Some(ErrorCode::NotFound), "{}", result.output);
        assert!(
            result.output.starts_with(&format!(
                "{} is the original path of a trashed file, not an archive; trashedPath takes the archive. Its newest archive is {name}, trashed "
            , ws.root.join("a.txt").display())),
            "{}",
            result.output
        );
        assert!(
            result.output.ends_with(&format!(
                " (1 older archive of it is in the trash too; use trash_list to see what can be restored): restore it with restore_file {{ \"trashedPath\": \"{name}\" }}"
            )),
            "{}",
            result.output
        );
    }
    let restored = ws
        .call("restore_file", json!({ "trashedPath": name }))
        .await;
    assert_eq!(restored.status, "ok", "{}", restored.output);
    assert_eq!(ws.read("a.txt"), "two\n");
}

#[tokio::test]
async fn remove_dir_on_the_data_dir_says_it_is_the_tools_own_data() {
    let ws = TestWorkspace::new();
    let data = ws.root.parent().unwrap().join("data");
    std::fs::create_dir_all(data.join("trash")).unwrap();
    let result = ws
        .call("remove_dir", json!({ "path": data, "recursive": true }))
        .await;
    assert_eq!(
        result.code,
        Some(ErrorCode::DangerousPath),
        "{}",
        result.output
    );
    assert_eq!(
        result.output,
        format!(
            "{} is agent-fs-tools' own data (its trash, history and audit log), which no tool changes; nothing was removed. Leave it as it is: it is the user's to manage",
            data.display()
        )
    );
}
