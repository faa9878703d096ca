//! Every path of a patch resolved through the sandbox before anything is read: no path named
//! twice (as spelled or once resolved), no `*** Move to:` of a symlink.

use std::path::PathBuf;

use crate::call::Call;
use crate::error::ToolError;
use crate::paths::resolve::file_path_not_directory_syntax;
use crate::paths::sandbox::FinalLink;
use crate::paths::shown::Shown;
use crate::paths::Target;
use crate::text::patch::{FilePatch, PatchChange};

/// A file's paths, resolved: the one the patch names first (the source of a move), and a move's
/// destination.
#[derive(Clone)]
pub(super) struct Resolved {
    pub(super) target: Target,
    pub(super) destination: Option<Target>,
}

pub(super) fn resolve_all(call: &Call, files: &[FilePatch]) -> Result<Vec<Resolved>, ToolError> {
    let mut resolved = Vec::with_capacity(files.len());
    let mut seen: Vec<(PathBuf, usize)> = Vec::new();
    for (index, file) in files.iter().enumerate() {
        let field = format!("input (file {})", index + 1);
        let resolve = |path: &str, final_link| {
            let target = call.resolve(path, &field, final_link)?;
            // `*** Add File: src/` names a directory: never a file called `src`.
            file_path_not_directory_syntax(path, &field, &target.path)?;
            Ok::<_, ToolError>(target)
        };
        let (target, destination) = match &file.change {
            // A deleted entry is the entry itself, as delete_file takes it.
            PatchChange::Delete { path } => (resolve(path, FinalLink::Keep)?, None),
            PatchChange::Add { path, .. } => (resolve(path, FinalLink::Follow)?, None),
            PatchChange::Update { path, move_to, .. } => {
                let target = resolve(path, FinalLink::Follow)?;
                let destination = move_to
                    .as_deref()
                    .map(|to| resolve(to, FinalLink::Follow))
                    .transpose()?;
                if destination.is_some() {
                    refuse_moving_a_link(call, path, &field, &target)?;
                }
                (target, destination)
            }
        };
        for path in [Some(&target.path), destination.as_ref().map(|d| &d.path)]
            .into_iter()
            .flatten()
        {
            if let Some((_, first)) = seen.iter().find(|(p, _)| p == path) {
                return Err(ToolError::invalid(format!(
                    "apply_patch: invalid arguments: {} is named by file {} and file {} of the patch (line {}); name each file once, with all its changes in one section",
                    path.shown(),
                    first + 1,
                    index + 1,
                    file.line
                )));
            }
            seen.push((path.clone(), index));
        }
        resolved.push(Resolved {
            target,
            destination,
        });
    }
    Ok(resolved)
}

/// A move of a path that is a symlink would move the file it points to and leave the link
/// dangling: refused, saying what to do instead.
fn refuse_moving_a_link(
    call: &Call,
    path: &str,
    field: &str,
    followed: &Target,
) -> Result<(), ToolError> {
    let link = call.resolve(path, field, FinalLink::Keep)?;
    if link.path == followed.path {
        return Ok(());
    }
    Err(ToolError::invalid(format!(
        "{field}: {} is a symlink to {}; a `*** Move to:` would move the file it points to and leave the link dangling. To change that file, update it without `*** Move to:`; to move the link itself, use {}; to move the file it points to, name {} in the patch",
        link.path.shown(),
        followed.path.shown(),
        call.names.offered("move_file").unwrap_or("move_file"),
        followed.path.shown(),
    )))
}
