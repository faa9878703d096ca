//! Asking the user: the request a host's confirm handler receives (`ConfirmRequest`, ../docs/hosts.md#the-workspace-api)
//! and the trait the bindings implement to route it to JavaScript.

use std::future::Future;
use std::pin::Pin;

use serde::Serialize;

/// What the user is asked to approve.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfirmRequest {
    /// The tool's name as the host exposes it.
    pub tool: String,
    /// E.g. `Edit file?`.
    pub label: String,
    /// The absolute path acted on (of a patch: its first file written, else its first removed).
    pub path: String,
    /// Every absolute path the change touches, each once: a patch's files, a move's source and
    /// destination. A host with per-path rules checks them all.
    pub paths: Vec<String>,
    /// The absolute path, plus ` (recursive)`, ` (permanent)` or ` → <destination>`; then, when
    /// a path is outside the root, a last line `Outside the project (<root>): <abs>, …`.
    pub detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recursive: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permanent: Option<bool>,
    /// What the action removes, replaces or changes, counted before asking.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<Summary>,
}

/// The blast radius of an action, counted before the user is asked (../docs/permissions-and-prompts.md, issue 21).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Summary {
    /// A whole directory tree goes (to the trash, or for good): a recursive `remove_dir`, or a
    /// move or restore that replaces a directory.
    Tree(TreeSummary),
    /// Many files change as one: `apply_patch` (and an undo).
    Files(FilesSummary),
}

/// What a directory tree holds (the directory itself not counted). When counting stopped
/// early (a huge tree, bounded in time), the numbers are a floor and `complete` is false.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TreeSummary {
    /// The directory's absolute path.
    pub path: String,
    pub files: u64,
    pub dirs: u64,
    pub links: u64,
    /// The regular files' sizes, summed.
    pub bytes: u64,
    pub complete: bool,
    /// The largest files, biggest first.
    pub largest: Vec<LargestFile>,
}

/// One of the largest files of a tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LargestFile {
    /// Its absolute path.
    pub path: String,
    pub bytes: u64,
}

/// What a change over many files does, file by file and line by line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FilesSummary {
    pub added: u64,
    pub updated: u64,
    pub deleted: u64,
    pub moved: u64,
    pub lines_added: u64,
    pub lines_removed: u64,
}

/// A boxed answer: `true` only for an explicit yes.
pub type Answer = Pin<Box<dyn Future<Output = bool> + Send>>;

/// Something that can ask the user. Any failure to get an answer must resolve to `false`.
pub trait Confirmer: Send + Sync {
    fn ask(&self, request: ConfirmRequest) -> Answer;
}
