//! The permission question one call asks.

use std::path::Path;

use crate::confirm::Summary;
use crate::paths::shown::Shown;
use crate::paths::Target;
use crate::permissions::Operation;

/// The permission question for one call.
pub struct Authorization<'a> {
    /// Every (operation, inside-root) pair the call needs; all must be granted to skip the prompt.
    pub needs: Vec<(Operation, bool)>,
    /// Ask whatever the permissions say (irreversible actions).
    pub always_ask: bool,
    pub label: &'static str,
    pub path: &'a Path,
    /// Every path the change touches (the first is usually `path`), with whether it is inside
    /// the root: the request lists them all, and names those outside the project.
    pub paths: Vec<(&'a Path, bool)>,
    pub detail: String,
    pub diff: Option<String>,
    pub recursive: Option<bool>,
    pub permanent: Option<bool>,
    /// What the action removes, replaces or changes, counted before asking.
    pub summary: Option<Summary>,
    /// E.g. `The user denied this write.`
    pub denial: &'static str,
}

impl<'a> Authorization<'a> {
    /// The common question: one operation on one checked path, the path as the detail, no
    /// flags, granted by the permissions when they allow it. Override fields with `..` syntax.
    pub fn of(
        op: Operation,
        target: &'a Target,
        label: &'static str,
        denial: &'static str,
    ) -> Self {
        Self {
            needs: vec![(op, target.inside_root)],
            always_ask: false,
            label,
            path: &target.path,
            paths: vec![(&target.path, target.inside_root)],
            detail: target.path.shown().into_owned(),
            diff: None,
            recursive: None,
            permanent: None,
            summary: None,
            denial,
        }
    }
}
