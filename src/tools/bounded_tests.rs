//! Every output is bounded in bytes (../../docs/tools.md#bounded-outputs, issue 28 item 2): near `readMaxBytes`, with a line
//! saying what was left out and how to see it; what the model wrote itself is counted, not echoed;
//! `ToolResult.diff` is bounded too, larger, and stays a valid diff.

use serde_json::json;

use crate::dispatch::DIFF_MAX_FACTOR;
use crate::tools::testing::TestWorkspace;

/// The output limit at the defaults, and the room a tool's closing notes may take above it.
const MAX: usize = 65_536;
const SLACK: usize = 1024;

fn lines(n: usize, word: &str) -> String {
    (0..n)
        .map(|i| format!("{word} {i} {}\n", "x".repeat(90)))
        .collect()
}

#[tokio::test]
async fn a_new_file_is_counted_not_echoed_and_the_host_gets_a_bounded_valid_diff() {
    let max = 16_384;
    let ws = TestWorkspace::with(json!({ "limits": { "readMaxBytes": max } }));
    let content = lines(10_000, "new"); // ~1 MB
    let result = ws
        .call(
            "write_file",
            json!({ "path": "big.txt", "content": content }),
        )
        .await;
    assert_eq!(result.status, "ok", "{}", result.output);
    assert_eq!(
        result.output,
        format!(
            "Created {} ({}, 10000 lines)",
            ws.root.join("big.txt").display(),
            crate::text::quantity::bytes(content.len() as u64)
        )
    );
    // The host's diff: cut at 16 × readMaxBytes, a valid diff, and how much was left out.
    let diff = result.diff.unwrap();
    assert!(diff.len() <= max * DIFF_MAX_FACTOR, "{}", diff.len());
    let kept = diff.lines().count() - 3;
    assert!(
        diff.starts_with(&format!(
            "--- /dev/null\n+++ big.txt\n@@ -0,0 +1,{kept} @@\n"
        )),
        "{}",
        &diff[..100]
    );
    let left = result.data.unwrap()["diffLinesLeftOut"].as_u64().unwrap();
    assert_eq!(left as usize + kept, 10_000);
}

#[tokio::test]
async fn a_whole_rewrite_is_counted_and_a_partial_one_shows_a_bounded_diff() {
    let ws = TestWorkspace::new();
    std::fs::write(ws.root.join("a.txt"), lines(10_000, "old")).unwrap();
    ws.call("read_file", json!({ "path": "a.txt" })).await;
    let whole = ws
        .call(
            "write_file",
            json!({ "path": "a.txt", "content": lines(9_000, "new") }),
        )
        .await;
    assert_eq!(whole.status, "ok", "{}", whole.output);
    let first = whole.output.lines().next().unwrap();
    assert!(
        first.ends_with(", 9000 lines), replacing all 10000 lines it had"),
        "{first}"
    );
    assert!(!whole.output.contains("\n@@"), "{}", whole.output);
    assert!(whole
        .output
        .contains("The previous content is in the trash at "));
    // Every other line changed: the diff is what the model needs to see, up to the limit.
    let half: String = lines(9_000, "new")
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i % 2 == 0 {
                format!("{l}\n")
            } else {
                format!("kept {i}\n")
            }
        })
        .collect();
    let partial = ws
        .call("write_file", json!({ "path": "a.txt", "content": half }))
        .await;
    assert_eq!(partial.status, "ok", "{}", partial.output);
    assert!(
        partial.output.len() <= MAX + SLACK,
        "{}",
        partial.output.len()
    );
    assert!(
        partial.output.contains("\n@@ "),
        "{}",
        &partial.output[..200]
    );
    assert!(
        partial
            .output
            .contains(" more lines not shown; read_file shows the file as it is now]"),
        "{}",
        &partial.output[partial.output.len() - 400..]
    );
}

/// Measured before: a patch over 600 files returned 297 KB, a ~450-byte trash note per file.
#[tokio::test]
async fn a_patch_over_many_files_is_bounded_and_names_its_archives_briefly() {
    let ws = TestWorkspace::new();
    let mut patch = String::from("*** Begin Patch\n");
    for i in 0..600 {
        std::fs::write(ws.root.join(format!("f{i:03}.txt")), format!("old {i}\n")).unwrap();
        patch.push_str(&format!("*** Delete File: f{i:03}.txt\n"));
    }
    patch.push_str("*** End Patch\n");
    let result = ws.call("apply_patch", json!({ "input": patch })).await;
    assert_eq!(result.status, "ok", "{}", &result.output[..300]);
    assert!(
        result.output.len() <= MAX + SLACK,
        "{}",
        result.output.len()
    );
    let bucket = ws.toolset.workspace().bucket().dir().display().to_string();
    assert_eq!(
        result.output.matches(&bucket).count(),
        1,
        "{}",
        result.output
    );
    assert!(
        result.output.contains(&format!(
            "\nIn the trash at {bucket} (restore one with restore_file {{ \"trashedPath\": \""
        )),
        "{}",
        result.output
    );
    assert!(result.output.contains(
        "\n  … and 590 more (the result's data.files names every archive; trash_list lists them)"
    ));
    let files = result.data.unwrap()["files"].as_array().unwrap().len();
    assert_eq!(files, 600);
}

/// Measured before: 500 long names listed in 133 KB.
#[tokio::test]
async fn a_listing_of_long_names_is_bounded() {
    let ws = TestWorkspace::new();
    for i in 0..500 {
        std::fs::write(ws.root.join(format!("{i:03}{}", "n".repeat(240))), "").unwrap();
    }
    let result = ws.call("list_directory", json!({})).await;
    assert!(result.output.len() <= MAX, "{}", result.output.len());
    let shown = result.data.as_ref().unwrap()["entries"].as_u64().unwrap() as usize;
    assert!(shown < 500);
    assert!(
        result.output.ends_with(&format!(
            "[Listing truncated at {shown} of 500 entries (the output limit of 65536 bytes), sorted by name. To see the rest, use glob with a pattern (e.g. `*.rs`, or `name*`) to find files in it.]"
        )),
        "{}",
        &result.output[result.output.len() - 300..]
    );
    assert_eq!(result.data.unwrap()["truncated"], true);
}

/// The net under every tool: an output no tool bounded (an error quoting a 4,000-byte pattern
/// three times, 12 KB) is cut near the limit, saying so.
#[tokio::test]
async fn any_output_is_bounded_by_the_dispatcher() {
    let ws = TestWorkspace::with(json!({ "limits": { "readMaxBytes": 2000 } }));
    let pattern = format!("/{}/*.rs", "d".repeat(4000));
    let result = ws.call("glob", json!({ "pattern": pattern })).await;
    assert!(
        result.output.len() <= 2000 + SLACK,
        "{}",
        result.output.len()
    );
    assert!(
        result.output.ends_with(" bytes) not shown]"),
        "{}",
        &result.output[result.output.len() - 100..]
    );
}
