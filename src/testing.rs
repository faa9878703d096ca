//! What tests that run calls through the whole flow share (the tools' and the dispatcher's): a
//! workspace on a fresh temporary directory, every permission granted and a user who says yes to
//! every prompt. It stands above the dispatcher it drives, beside the crate's other rooms.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::call::{CallContext, ToolResult};
use crate::confirm::{Answer, ConfirmRequest, Confirmer};
use crate::dispatch::Toolset;

struct Yes;

impl Confirmer for Yes {
    fn ask(&self, _request: ConfirmRequest) -> Answer {
        Box::pin(async { true })
    }
}

/// Answers no to every prompt, keeping what it was asked.
#[derive(Default)]
pub struct Recorder(std::sync::Mutex<Vec<ConfirmRequest>>);

impl Confirmer for Recorder {
    fn ask(&self, request: ConfirmRequest) -> Answer {
        self.0.lock().unwrap().push(request);
        Box::pin(async { false })
    }
}

/// A workspace whose root is `root` (canonical), its data dir beside it.
pub struct TestWorkspace {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub toolset: Toolset,
}

impl TestWorkspace {
    pub fn new() -> Self {
        Self::with(json!({}))
    }

    /// Every entry of the history, once a change is done: asserts that nothing of it is left
    /// in the journal (no record, no temp name it answers for).
    pub fn settled_history(&self) -> Vec<crate::history::HistoryEntry> {
        let workspace = self.toolset.workspace();
        let journal = std::fs::read_dir(workspace.journal().dir()).map_or(0, Iterator::count);
        assert_eq!(journal, 0, "the journal still holds records");
        workspace
            .history()
            .entries(&|_: &std::path::Path| true)
            .unwrap()
    }

    /// A workspace with these options too (e.g. `tools`, `readOnly`, `limits`).
    pub fn with(options: Value) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = crate::paths::canonical::canonicalize_existing(dir.path()).unwrap();
        let (root, data) = (base.join("root"), base.join("data"));
        std::fs::create_dir(&root).unwrap();
        let mut all = json!({
            "root": root,
            "trash": { "dataDir": data },
            "permissions": { "cwdWriteFile": true, "cwdRemoveFile": true },
        });
        for (key, value) in options.as_object().expect("options are an object") {
            all[key] = value.clone();
        }
        let toolset = Toolset::new(&all).unwrap();
        TestWorkspace {
            _dir: dir,
            root,
            toolset,
        }
    }

    /// Calls `tool` with `args`, answering yes to any prompt.
    pub async fn call(&self, tool: &str, args: Value) -> ToolResult {
        let ctx = CallContext {
            confirmer: Some(Arc::new(Yes)),
            ..CallContext::default()
        };
        self.toolset.call(tool, args, ctx).await
    }

    /// Calls `tool` with `args`, answering no to any prompt: what the prompts asked.
    pub async fn asked(&self, tool: &str, args: Value) -> Vec<ConfirmRequest> {
        let recorder = Arc::new(Recorder::default());
        let ctx = CallContext {
            confirmer: Some(recorder.clone()),
            ..CallContext::default()
        };
        self.toolset.call(tool, args, ctx).await;
        let asked = recorder.0.lock().unwrap().clone();
        asked
    }

    /// The names in `root`, sorted (our temp files included: a test checks none is left).
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.root)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// `rel` (`/` between its names) below `root`, joined as the tools join it, with this
    /// system's separator: a path in an expected message, on Windows too.
    pub fn at(&self, rel: &str) -> PathBuf {
        crate::paths::testing::below(&self.root, rel)
    }

    /// The content of `name` in `root`.
    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.root.join(name)).unwrap()
    }
}

/// Overwrites the file at `path` in place, as an editor saves: `open(O_TRUNC)`, `write`.
pub fn save_in_place(path: &std::path::Path, content: &str) {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .unwrap();
    file.write_all(content.as_bytes()).unwrap();
}

/// Swaps the entries `a` and `b`: atomically (`RENAME_EXCHANGE`) on Unix, by three renames on
/// Windows (`paths::testing::exchange`).
pub fn exchange(a: &std::path::Path, b: &std::path::Path) {
    crate::paths::testing::exchange(a, b)
}
