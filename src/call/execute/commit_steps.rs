//! The journal commit's steps of a plan's step: what it needs staged (new bytes, a new
//! directory, a restored entry, under journaled temp names) and the step that puts, removes,
//! renames, appends or places it.

use std::io;

use super::dirs::Dirs;
use super::failure::Failure;
use crate::call::plan::{Act, Expect, Found, Place, Source, Step};
use crate::call::stage;
use crate::cancel::CancelToken;
use crate::journal::commit::{holds, Commit, PlannedFile};
use crate::journal::Journal;
use crate::paths::fsops::{self, Snapshot};
use crate::paths::{AsDir, EntryKind};
use crate::trash::Archived;
use crate::workspace::Workspace;

/// Stages what the step needs and adds it to the commit.
pub(super) fn add(
    journal: &Journal,
    commit: &mut Commit<'_>,
    step: Step,
    dirs: Dirs,
) -> io::Result<()> {
    let Step {
        at, expect, act, ..
    } = step;
    let Place { dir, name, .. } = &at;
    match (act, expect) {
        (
            Act::Put {
                data,
                like,
                sha256: hashed,
            },
            Expect::File {
                stat,
                sha256,
                bytes,
            },
        ) => {
            let planned = PlannedFile {
                stat,
                sha256,
                bytes,
            };
            let metadata_of = like.unwrap_or(stat);
            let data = (data, hashed);
            commit.put_hashed(dirs.at, dir, name, data, Some(&metadata_of), Some(planned))
        }
        (Act::Put { data, like, sha256 }, _) => {
            let data = (data, sha256);
            commit.put_hashed(dirs.at, dir, name, data, like.as_ref(), None)
        }
        (Act::Remove, Expect::File { stat, .. } | Expect::Entry { stat }) => {
            commit.remove(dirs.at, dir, name, Snapshot::of(&stat))
        }
        (Act::Remove, Expect::EmptyDir { stat }) => {
            commit.remove_empty_dir(dirs.at, dir, name, Snapshot::of(&stat))
        }
        // As it is when the step comes (see [`Expect::Tree`]): what it holds is in the trash.
        (Act::Remove, Expect::Tree { stat, .. }) => {
            commit.remove(dirs.at, dir, name, Snapshot::of(&stat))
        }
        (Act::Build(Source::Bytes { data, mode }), _) => {
            let made_above = commit.made_above(dir);
            let built = stage::bytes(
                journal,
                dirs.at.as_dir(),
                dir,
                name,
                &data,
                mode,
                made_above,
            )?;
            commit.place(dirs.at, dir, &built.aside, name, built.temp)
        }
        (Act::Move { to }, Expect::File { stat, .. } | Expect::Entry { stat }) => {
            let to_dir = dirs.to.expect("a move's destination was opened");
            // The directories made for the destination are answered for (removed by recovery
            // if still empty) until the commit record is written.
            let made_above = commit.made_above(&to.dir);
            let temp = (!made_above.is_empty())
                .then(|| {
                    let unused = fsops::temp_name(&to.name);
                    journal.begin_temp_in_made_dirs(&to.dir, to_dir.as_dir(), &unused, made_above)
                })
                .flatten();
            let expected = Snapshot::of(&stat);
            let added = commit.rename(dirs.at, dir, name, expected, to_dir, &to.dir, &to.name);
            match added {
                Ok(()) => commit.hand_over(temp),
                Err(e) => {
                    if let Some(temp) = temp {
                        temp.finish();
                    }
                    return Err(e);
                }
            }
            Ok(())
        }
        (Act::MakeDir { mode, below }, _) => {
            let built = stage::new_dir(journal, dirs.at.as_dir(), dir, name, mode, &below)?;
            commit.place(dirs.at, dir, &built.aside, name, built.temp)
        }
        (Act::Remove | Act::Move { .. }, Expect::Nothing)
        | (Act::Remove, Expect::Built)
        | (Act::Move { .. }, Expect::EmptyDir { .. } | Expect::Tree { .. }) => {
            unreachable!("refused by check before anything was opened")
        }
        (Act::Move { .. }, Expect::Built) => {
            unreachable!("a move out of a built tree is add_move_out")
        }
        (Act::Copy { .. }, _) => unreachable!("staged by add_by_copy, which returns what it built"),
        (Act::Append { .. }, _) => unreachable!("an append is added by add_append"),
        (Act::Restore { .. }, _) => unreachable!("a restore is added by add_restore"),
        (Act::Archive, _) => unreachable!("an entry kept alone adds no step"),
        (Act::Build(_), _) => unreachable!("a directory built whole is placed as built"),
    }
}

/// Adds an append step: the file opened for update, checked through that handle — the file
/// the step expects (its identity, still a regular file), a single link where the step says
/// so, and its bytes by their SHA-256 — then handed to the commit, which appends through it.
/// Nothing can be swapped in under the name between the check and the write: the bytes go
/// through the handle checked.
pub(super) fn add_append(commit: &mut Commit<'_>, step: Step, dirs: Dirs) -> Result<(), Failure> {
    let (Act::Append { data, single_link }, Expect::File { stat, sha256, .. }) =
        (step.act, step.expect)
    else {
        unreachable!("refused by check: an append expects a file read")
    };
    let Place { dir, name, .. } = &step.at;
    let mut file = match fsops::open_for_update(dirs.at.as_dir(), name) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(Failure::NotAsExpected(Found::Gone))
        }
        Err(e) => return Err(Failure::Io(e)),
    };
    let now = fsops::fstat(&file).map_err(Failure::Io)?;
    if now.identity() != stat.identity() || now.kind() != EntryKind::File {
        return Err(Failure::NotAsExpected(Found::Replaced));
    }
    let links = fsops::link_count(&now);
    if single_link && links > 1 {
        return Err(Failure::NotAsExpected(Found::Linked(links)));
    }
    if !holds(&mut file, stat.size, &sha256).map_err(Failure::Io)? {
        return Err(Failure::NotAsExpected(Found::Changed));
    }
    commit
        .append(dirs.at, dir, name, file, data)
        .map_err(Failure::Io)
}

/// Adds a restore: the archive's entry extracted under a journaled temp name beside the place
/// ([`stage::restored`]), then placed by the commit. Returns the archive, held.
pub(super) fn add_restore(
    ws: &Workspace,
    commit: &mut Commit<'_>,
    step: Step,
    dirs: Dirs,
    cancel: &CancelToken,
) -> Result<Archived, Failure> {
    let Act::Restore { archive } = &step.act else {
        unreachable!("the caller matched a restore")
    };
    let Place { dir, name, .. } = &step.at;
    // Readable: the extraction syncs the directory it builds in.
    let readable = fsops::reopen_readable(dirs.at.as_dir()).map_err(Failure::Io)?;
    let made_above = commit.made_above(dir);
    let (built, held) = stage::restored(ws, readable.as_dir(), dir, archive, made_above, cancel)
        .map_err(Failure::Trash)?;
    commit
        .place(dirs.at, dir, &built.aside, name, built.temp)
        .map_err(Failure::Io)?;
    Ok(held)
}
