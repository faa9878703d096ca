//! Tests of the trash against real temp directories.
//!
//! `support` builds workspaces, trashes and restores the way the tools will (a parent directory
//! fd plus a name), snapshots trees for comparison, and hand-builds hostile archives.

mod bucket_ops;
mod conflicts;
mod format;
mod refusals;
mod roundtrip;
mod streaming;
mod support;
