//! `trash_list`: what this workspace's trash holds, newest first, with the archive path to pass
//! to `restore_file`. Files in the bucket that are not readable archives are skipped. Paths are
//! shown as every tool shows them (`paths::shown`): the original path is recorded in that form,
//! and one recorded by an older version with control characters in it is escaped here.

use serde::Deserialize;
use serde_json::{json, Value};

use super::{object_schema, parse_args, ToolSpec};
use crate::call::{BoxFuture, Call, Outcome, Success, ToolNames};
use crate::error::ToolError;
use crate::options::WorkspaceOptions;
use crate::paths::shown::{echo, Shown};
use crate::trash::TrashEntry;

pub static SPEC: ToolSpec = ToolSpec {
    name: "trash_list",
    description,
    schema,
    mutates: false,
    destructive: false,
    idempotent: true,
    asks: false,
    path_argument: None,
    summarizes_itself: false,
    format_call: |_| String::new(),
    run,
};

fn description(names: &ToolNames, _: &WorkspaceOptions) -> String {
    let restore = names.hint("restore_file", |restore| format!(" (to pass to {restore})"));
    format!(
        "List what was deleted or overwritten in this workspace and can still be restored. Newest first, each \
entry gives its archive path{restore}, the original path, its kind and size, when and by which agent."
    )
}

fn schema() -> Value {
    object_schema(json!({}), &[])
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {}

/// The JSON form of an entry, shared by the tool's `data` and the host's `ws.trashList()`.
pub fn entry_json(entry: &TrashEntry) -> Value {
    let m = &entry.metadata;
    let mut v = json!({
        "archivePath": entry.archive_path.shown(),
        "originalPath": echo(&m.original_path),
        "relativePath": echo(&m.relative_path),
        "kind": m.kind.as_str(),
        "size": m.size,
        "trashedAt": m.trashed_at,
        "sessionId": m.session_id,
        "runId": m.run_id,
        "agentName": m.agent_name,
        "originalSha256": m.original_sha256,
        "archiveBytes": entry.archive_bytes,
    });
    if let Some(n) = m.file_count {
        v["fileCount"] = json!(n);
    }
    v
}

fn run(call: &Call, args: Value) -> BoxFuture<'_, Outcome> {
    Box::pin(async move {
        let _: Args = parse_args("trash_list", args)?;
        let ws = call.ws.clone();
        let entries = call
            .reading(move || {
                ws.bucket()
                    .list()
                    .map_err(|e| ToolError::io(&e, "list the trash", ws.bucket().dir()))
            })
            .await?;
        let mut text = if entries.is_empty() {
            "The trash is empty.".to_owned()
        } else {
            format!(
                "{} in the trash, newest first:",
                super::quantity(entries.len() as u64, "entry", "entries")
            )
        };
        // Bounded like a listing (entries) and a read (bytes): the newest first.
        let (max_entries, max_bytes) = (
            call.limits().list_max_entries as usize,
            call.limits().read_max_bytes as usize,
        );
        let mut shown = 0;
        for entry in entries.iter().take(max_entries) {
            let m = &entry.metadata;
            let files = m
                .file_count
                .map(|n| format!(", {}", super::quantity(n, "file", "files")))
                .unwrap_or_default();
            let line = format!(
                "\n{}\n    was {} ({}{files}, {}), trashed {} by {}",
                entry.archive_path.shown(),
                echo(&m.original_path),
                m.kind.as_str(),
                super::bytes(m.size),
                m.trashed_at,
                echo(&m.agent_name)
            );
            if shown > 0 && text.len() + line.len() > max_bytes {
                break;
            }
            text.push_str(&line);
            shown += 1;
        }
        if shown < entries.len() {
            text.push_str(&format!(
                "\n[{} not shown: the output limit is reached.]",
                super::quantity(
                    (entries.len() - shown) as u64,
                    "older entry is",
                    "older entries are"
                )
            ));
        }
        Ok(Success::text(text)
            .with_data(
                "entries",
                entries[..shown].iter().map(entry_json).collect::<Vec<_>>(),
            )
            .with_data("total", entries.len()))
    })
}

#[cfg(test)]
mod tests {
    use crate::tools::testing::TestWorkspace;
    use serde_json::json;

    /// One of anything is singular, in the list and in what a removal says.
    #[tokio::test]
    async fn one_entry_and_one_file_are_singular() {
        let ws = TestWorkspace::new();
        std::fs::create_dir(ws.root.join("d")).unwrap();
        std::fs::write(ws.root.join("d/a.txt"), "hello").unwrap();
        let removed = ws
            .call("remove_dir", json!({ "path": "d", "recursive": true }))
            .await;
        assert!(
            removed
                .output
                .contains("\nThe directory, with 1 file (5 bytes), is in the trash at "),
            "{}",
            removed.output
        );
        let listed = ws.call("trash_list", json!({})).await;
        assert!(
            listed
                .output
                .starts_with("1 entry in the trash, newest first:\n"),
            "{}",
            listed.output
        );
        assert!(
            listed
                .output
                .contains("(directory, 1 file, 5 bytes), trashed "),
            "{}",
            listed.output
        );
    }

    /// The list is bounded like a listing: the newest entries, then how many more there are.
    #[tokio::test]
    async fn a_long_trash_shows_the_newest_within_the_limits() {
        let ws = TestWorkspace::with(json!({ "limits": { "listMaxEntries": 3 } }));
        for i in 0..5 {
            std::fs::write(ws.root.join(format!("f{i}.txt")), "x").unwrap();
            let deleted = ws
                .call("delete_file", json!({ "path": format!("f{i}.txt") }))
                .await;
            assert_eq!(deleted.status, "ok", "{}", deleted.output);
        }
        let listed = ws.call("trash_list", json!({})).await;
        let data = listed.data.unwrap();
        assert_eq!(data["entries"].as_array().unwrap().len(), 3);
        assert_eq!(data["total"], 5);
        assert!(
            listed
                .output
                .starts_with("5 entries in the trash, newest first:\n"),
            "{}",
            listed.output
        );
        assert!(
            listed
                .output
                .ends_with("\n[2 older entries are not shown: the output limit is reached.]"),
            "{}",
            listed.output
        );
        assert_eq!(
            listed.output.matches(".tar.gz\n").count(),
            3,
            "{}",
            listed.output
        );
    }
}
