//! The engines behind the search tools, over the tree walk ([`crate::walk`]) and below the
//! tools: a tool file parses its arguments, resolves and authorizes its target, and calls in
//! here; nothing here knows a call, a workspace or a confirmation.
//!
//! - [`glob`]: the glob syntax both tools take (a name at any depth, or a relative path);
//! - [`find`]: `glob`'s files that match, newest first, and their listing;
//! - [`grep`]: `grep`'s regex search of file contents, bounded, in path order, and its output.

pub mod find;
pub mod glob;
pub mod grep;
