//! What the model reads of a copy made: both paths, what a tree held, where the old
//! destination went.

use super::make::Made;
use crate::call::execute::CopyMade;
use crate::call::{Call, Success};
use crate::paths::shown::Shown;
use crate::paths::{EntryKind, Target};
use crate::text::quantity::quantity;
use crate::tools::trashing::in_trash;

/// The result of copying `source` (of kind `kind`) to `destination`, which made `made`.
pub(super) fn success(
    call: &Call,
    source: &Target,
    destination: &Target,
    kind: EntryKind,
    made: Made,
) -> Success {
    let mut output = format!(
        "Copied {} → {}",
        source.path.shown(),
        destination.path.shown()
    );
    if let (EntryKind::Directory, Some(copy)) = (kind, &made.copy) {
        output.push_str(&format!(" ({})", counts(copy)));
    }
    let mut success = Success::text(output)
        .with_data("source", source.path.shown().into_owned())
        .with_data("destination", destination.path.shown().into_owned());
    if let Some(archived) = &made.archived {
        let subject = format!("The previous {}", destination.path.shown());
        success
            .output
            .push_str(&in_trash(call, &subject, &archived.archive_path));
        success = success.with_data("trashedTo", archived.archive_path.shown().into_owned());
    }
    success = success.with_change(made.change);
    success.recorded = made.recorded;
    success
}

/// `N files, M directories, K links` of a copied tree (every kind named, none left out).
fn counts(copy: &CopyMade) -> String {
    let c = copy.counts;
    format!(
        "{}, {}, {}",
        quantity(c.files, "file", "files"),
        quantity(c.dirs, "directory", "directories"),
        quantity(c.links, "link", "links")
    )
}
