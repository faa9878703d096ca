//! Why a patch cannot be parsed or a chunk cannot be placed, worded for the model.

use std::fmt;

use crate::error::{ErrorCode, ToolError};
use crate::text::closest::ClosestMatch;

/// Candidate line numbers listed at most in a `MULTIPLE_MATCHES` message.
const MAX_LISTED_CANDIDATES: usize = 10;

/// A failure of [`parse`](super::parse) or [`apply`](super::apply).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatchError {
    /// The patch text is malformed at `line` (1-based, in the patch); `message` says what is
    /// wrong and how to write it.
    Syntax { line: usize, message: String },
    /// The patch changes no file.
    Empty,
    /// `path` is named by the section at `line` and already by the one at `first_line`.
    DuplicatePath {
        path: String,
        line: usize,
        first_line: usize,
    },
    /// A chunk's lines (or the line one of its `@@` anchors names) are not in the file.
    NoMatch {
        path: String,
        /// 1-based chunk number within the file.
        chunk: usize,
        /// The `@@` anchor that was not found, if it was the anchor.
        anchor: Option<String>,
        /// A fact that explains the miss, e.g. the lines exist before the previous chunk.
        note: Option<String>,
        /// The most similar lines of the file, if any are plausible.
        closest: Option<ClosestMatch>,
    },
    /// A chunk's lines occur more than once where it may be.
    MultipleMatches {
        path: String,
        /// 1-based chunk number within the file.
        chunk: usize,
        /// 1-based line numbers where the candidates start.
        lines: Vec<usize>,
        /// The chunk came from a unified diff (disambiguated differently).
        unified: bool,
    },
    /// The call was aborted while the chunks were being placed.
    Aborted,
}

impl PatchError {
    pub(super) fn syntax(line: usize, message: impl Into<String>) -> Self {
        PatchError::Syntax {
            line,
            message: message.into(),
        }
    }

    /// The message for the model: the fact first, then what to do.
    pub fn message(&self) -> String {
        match self {
            PatchError::Syntax { line, message } => format!("patch line {line}: {message}"),
            PatchError::Empty => "The patch changes no files. Send `*** Begin Patch`, then `*** Add File: <path>`, `*** Update File: <path>` or `*** Delete File: <path>` sections, then `*** End Patch` (or a unified diff with `--- a/<path>` / `+++ b/<path>` headers and `@@` hunks).".to_owned(),
            PatchError::DuplicatePath {
                path,
                line,
                first_line,
            } => format!(
                "patch line {line}: {path} is already named at patch line {first_line}; put all the changes to one file in one section"
            ),
            PatchError::NoMatch {
                path,
                chunk,
                anchor,
                note,
                closest,
            } => {
                let (mut message, what_to_do) = match anchor {
                    Some(anchor) => (
                        format!("{path}: chunk {chunk}: could not find the line `@@ {anchor}` names"),
                        "Copy that line exactly from the file, or leave the `@@` line empty.",
                    ),
                    None if closest.is_some() => (
                        format!("{path}: chunk {chunk}: could not find the lines to replace"),
                        "Copy the context and `-` lines exactly as the file has them.",
                    ),
                    None => (
                        format!("{path}: chunk {chunk}: could not find the lines to replace"),
                        "Read the file again and copy the context and `-` lines exactly as it has them.",
                    ),
                };
                if let Some(note) = note {
                    message.push_str(&format!(" ({note})"));
                }
                match closest {
                    Some(closest) => {
                        message.push('\n');
                        message.push_str(&closest.describe());
                        message.push('\n');
                    }
                    None => message.push_str(". "),
                }
                message.push_str(what_to_do);
                message
            }
            PatchError::MultipleMatches {
                path,
                chunk,
                lines,
                unified,
            } => {
                let mut listed = lines
                    .iter()
                    .take(MAX_LISTED_CANDIDATES)
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(", ");
                if lines.len() > MAX_LISTED_CANDIDATES {
                    listed.push_str(&format!(" and {} more", lines.len() - MAX_LISTED_CANDIDATES));
                }
                let advice = if *unified {
                    "add context lines until they occur once, or give the hunk the line numbers of the intended place (an exact match at the hunk's line wins)"
                } else {
                    "start the chunk with an `@@` line naming the enclosing function or class (e.g. `@@ def handler(request):`), or add context lines until they occur once"
                };
                format!(
                    "{path}: chunk {chunk}: the lines to replace occur {} times (at lines {listed}); {advice}",
                    lines.len()
                )
            }
            PatchError::Aborted => ToolError::aborted().message,
        }
    }
}

impl fmt::Display for PatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for PatchError {}

/// The one mapping of a patch failure to its error code (../../../docs/tools.md#error-codes), with [`PatchError::message`].
impl From<PatchError> for ToolError {
    fn from(e: PatchError) -> Self {
        let code = match e {
            PatchError::Syntax { .. } | PatchError::Empty | PatchError::DuplicatePath { .. } => {
                ErrorCode::InvalidArguments
            }
            PatchError::NoMatch { .. } => ErrorCode::NoMatch,
            PatchError::MultipleMatches { .. } => ErrorCode::MultipleMatches,
            PatchError::Aborted => return ToolError::aborted(),
        };
        ToolError::new(code, e.message())
    }
}
