//! The question a copy asks: what it reads and writes, and the tree it would replace.

use super::plan::Planned;
use crate::call::Authorization;
use crate::paths::shown::Shown;
use crate::paths::Target;
use crate::permissions::Operation;
use crate::tools::blast_radius;

/// The authorization of copying `source` to `destination`, as planned (`replaced_tree`: the
/// words for the tree it replaces, if it replaces one).
pub(super) fn authorization<'a>(
    source: &'a Target,
    destination: &'a Target,
    found: &Planned,
    replaced_tree: Option<&str>,
) -> Authorization<'a> {
    Authorization {
        needs: vec![
            (Operation::Read, source.inside_root),
            (Operation::Write, destination.inside_root),
        ],
        always_ask: replaced_tree.is_some(),
        label: "Copy file?",
        path: &source.path,
        paths: vec![
            (&source.path, source.inside_root),
            (&destination.path, destination.inside_root),
        ],
        detail: format!(
            "{} → {}{}",
            source.path.shown(),
            destination.path.shown(),
            replaced_tree.unwrap_or("")
        ),
        diff: None,
        recursive: replaced_tree.is_some().then_some(true),
        permanent: None,
        summary: found
            .replaced_tree
            .as_ref()
            .map(|count| blast_radius::tree_summary(&destination.path, count)),
        denial: "The user denied this copy.",
    }
}
