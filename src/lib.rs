//! agent-fs-tools: a filesystem toolset for LLM agents that they can be trusted with.
//!
//! The core (everything but `bindings`) is plain Rust with no Node-API in it; `bindings` turns
//! the [`workspace::Workspace`] into the JS class the npm package wraps.

pub mod audit;
pub mod call;
pub mod cancel;
pub mod change;
pub mod confirm;
pub mod datadir;
pub mod dispatch;
pub mod error;
pub mod hashing;
pub mod history;
pub mod journal;
pub mod listing;
pub mod locks;
pub mod options;
pub mod parallel;
pub mod paths;
pub mod permissions;
pub mod progress;
pub mod search;
#[cfg(test)]
pub(crate) mod testing;
pub mod text;
pub mod tools;
pub mod trash;
pub mod undo;
pub mod views;
pub mod walk;
pub mod workspace;

mod bindings;
