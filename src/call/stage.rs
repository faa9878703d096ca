//! Building entries for a plan before its commit: each is made under a journaled temp name
//! beside its place, so a kill before the commit record leaves nothing the next recovery does
//! not remove, and the commit only renames it into place.

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::cancel::CancelToken;
use crate::hashing::sha256_reader;
use crate::journal::{Journal, MadeDirRecord, WrittenRecord};
use crate::paths::trees::{Copied, CopyCounts, CopyError};
use crate::paths::{fsops, trees, AsDir, BorrowedDir, Dir, EntryKind, Stat};
use crate::trash::{Archived, TrashError};
use crate::workspace::Workspace;

/// An entry built under `aside`, with the temp record that answers for it until the commit
/// record takes over (`None` when the data directory could not record it).
pub struct Built {
    pub aside: OsString,
    pub temp: Option<WrittenRecord>,
}

/// Makes a directory beside `name` in `dir` (canonical path `dir_path`): `mode` exactly, or,
/// without one, as any new directory is made (0777 less the umask); then the directories
/// `below` inside it, each as a new directory is made.
pub fn new_dir(
    journal: &Journal,
    dir: BorrowedDir<'_>,
    dir_path: &Path,
    name: &OsStr,
    mode: Option<u32>,
    below: &Path,
) -> io::Result<Built> {
    let aside = fsops::temp_name(name);
    let temp = journal.begin_temp(dir_path, dir, &aside);
    let made = match mode {
        None => fsops::mkdir_umasked_at(dir, &aside, 0o777),
        Some(mode) => fsops::mkdir_at(dir, &aside).and_then(|()| {
            let made = fsops::open_subdir(dir, &aside)?;
            fsops::set_mode_fd(&made, mode)
        }),
    };
    let made = made.and_then(|()| {
        let mut inner = fsops::open_subdir(dir, &aside)?;
        for part in below.iter() {
            fsops::mkdir_umasked_at(inner.as_dir(), part, 0o777)?;
            inner = fsops::open_subdir(inner.as_dir(), part)?;
        }
        Ok(())
    });
    match made {
        Ok(()) => Ok(Built { aside, temp }),
        Err(e) => {
            let _ = trees::remove_tree_at(dir, &aside, trees::Removal::OWN_TEMP);
            if let Some(temp) = temp {
                temp.finish();
            }
            Err(e)
        }
    }
}

/// Extracts the entry `archive` (in `ws`'s trash) holds in `dir` (canonical path `dir_path`),
/// beside where it goes, verified against the archive and durable, under a journaled temp name. The
/// returned [`Archived`] holds the archive (no other call restores or clears it) until dropped.
/// `made_above`: the directories made for it, which recovery removes with the temp name.
pub fn restored(
    ws: &Workspace,
    dir: BorrowedDir<'_>,
    dir_path: &Path,
    archive: &Path,
    made_above: Vec<MadeDirRecord>,
    cancel: &CancelToken,
) -> Result<(Built, Archived), TrashError> {
    // Named as any restore's temp root (`.restore-<hex>.partial`), whatever the target's name.
    let aside = crate::trash::restore_temp_name();
    let temp = ws
        .journal()
        .begin_temp_in_made_dirs(dir_path, dir, &aside, made_above);
    match ws
        .bucket()
        .stage(archive, dir, &aside, &|| cancel.is_aborted())
    {
        Ok(held) => Ok((Built { aside, temp }, held)),
        Err(e) => {
            // The extraction removes what it made; the temp record goes with it.
            let _ = trees::remove_tree_at(dir, &aside, trees::Removal::OWN_TEMP);
            if let Some(temp) = temp {
                temp.finish();
            }
            Err(e)
        }
    }
}

/// What a copy built, besides its temp name.
#[derive(Debug, Clone)]
pub struct CopyMade {
    /// What the copy holds beneath its root.
    pub counts: CopyCounts,
    /// The SHA-256 of a copied regular file, read back from the copy (streamed; `None` for a
    /// link or a tree).
    pub sha256: Option<String>,
    /// Every source entry as the copy read it (what a move across file systems checks its
    /// source against before removing it).
    pub read: Arc<Copied>,
}

/// Why a copy was not built (nothing of it is left).
#[derive(Debug)]
pub struct CopyFailed(pub CopyError);

impl std::fmt::Display for CopyFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            CopyError::Special(at) => write!(f, "{} is a FIFO, socket or device", at.display()),
            CopyError::Changed(at) => write!(f, "{} changed while it was copied", at.display()),
            CopyError::Aborted => f.write_str("aborted"),
            CopyError::Io(e, at) => write!(f, "{}: {e}", at.display()),
        }
    }
}

impl std::error::Error for CopyFailed {}

impl CopyFailed {
    /// The copy's failure an `io::Error` carries (the executor reports a staging failure as
    /// one), if it is one.
    pub fn of(e: &io::Error) -> Option<&CopyError> {
        e.get_ref()?.downcast_ref::<CopyFailed>().map(|f| &f.0)
    }
}

/// Where a copy comes from: `name` in `dir`, which must still be the entry `stat` describes.
pub struct CopySource<'a> {
    pub dir: BorrowedDir<'a>,
    pub name: &'a OsStr,
    pub stat: &'a Stat,
}

/// Copies `from` (a file, a symlink as a link, or a whole tree: through descriptors only, never
/// following a link; see [`trees::copy_tree_at`]) beside `name` in `dir` (canonical path
/// `dir_path`, in the directories `made_above` made for the change), synced, under a journaled
/// temp name; with `below` (`a/b/copy`), the temp name is a new directory holding `a/b` and the
/// copy as `a/b/copy` (see [`super::plan::Act::Copy`]). A failure (also a FIFO, socket or device
/// found inside, or an entry other than `from.stat` at its name) removes the partial copy and
/// is an `io::Error` carrying [`CopyFailed`].
pub fn copy(
    journal: &Journal,
    (dir, dir_path, name): (BorrowedDir<'_>, &Path, &OsStr),
    made_above: Vec<MadeDirRecord>,
    from: CopySource<'_>,
    below: &Path,
    aborted: &dyn Fn() -> bool,
) -> io::Result<(Built, CopyMade)> {
    let aside = fsops::temp_name(name);
    let temp = journal.begin_temp_in_made_dirs(dir_path, dir, &aside, made_above);
    let built = copy_aside(dir, &aside, below, &from, aborted);
    match built {
        Ok(made) => Ok((Built { aside, temp }, made)),
        Err(e) => {
            let _ = trees::remove_tree_at(dir, &aside, trees::Removal::OWN_TEMP);
            if let Some(temp) = temp {
                temp.finish();
            }
            Err(io::Error::other(CopyFailed(e)))
        }
    }
}

/// Builds the copy under `aside` in `dir` (with `below`, inside the directories it names): see
/// [`copy`].
fn copy_aside(
    dir: BorrowedDir<'_>,
    aside: &OsStr,
    below: &Path,
    from: &CopySource<'_>,
    aborted: &dyn Fn() -> bool,
) -> Result<CopyMade, CopyError> {
    let at_root = |e: io::Error| CopyError::Io(e, PathBuf::new());
    // The copy's parents, made inside the temp name: `made[i]` holds the next one (or the copy).
    let mut made: Vec<Dir> = Vec::new();
    let mut copy_name = aside.to_owned();
    for part in below.iter() {
        let parent = made.last().map_or(dir, AsDir::as_dir);
        fsops::mkdir_umasked_at(parent, &copy_name, 0o777).map_err(at_root)?;
        made.push(fsops::open_subdir(parent, &copy_name).map_err(at_root)?);
        copy_name = part.to_owned();
    }
    let into = made.last().map_or(dir, AsDir::as_dir);
    let copied = trees::copy_tree_at(from.dir, from.name, into, &copy_name, aborted)?;
    // The name held another entry by the time it was copied (or none).
    if !copied.read(from.stat.identity()) {
        return Err(CopyError::Changed(PathBuf::new()));
    }
    for parent in made.iter().rev() {
        fsops::sync_written(parent.as_dir()).map_err(at_root)?;
    }
    fsops::sync_new_tree(dir).map_err(at_root)?;
    let sha256 = match EntryKind::of(from.stat) {
        EntryKind::File => {
            let copy = fsops::open_for_read(into, &copy_name).map_err(at_root)?;
            Some(sha256_reader(copy).map_err(at_root)?)
        }
        _ => None,
    };
    Ok(CopyMade {
        counts: copied.counts,
        sha256,
        read: Arc::new(copied),
    })
}

/// Writes `data` as a new file beside `name` in `dir` (canonical path `dir_path`, in the
/// directories `made_above` made for the change), synced, with exactly the permission bits
/// `mode`, under a journaled temp name.
pub fn bytes(
    journal: &Journal,
    dir: BorrowedDir<'_>,
    dir_path: &Path,
    name: &OsStr,
    data: &[u8],
    mode: u32,
    made_above: Vec<MadeDirRecord>,
) -> io::Result<Built> {
    let aside = fsops::temp_name(name);
    let temp = journal.begin_temp_in_made_dirs(dir_path, dir, &aside, made_above);
    let made = fsops::stage(dir, name, &aside, data, None)
        .and_then(|()| fsops::open_for_read(dir, &aside))
        .and_then(|file| fsops::set_mode_fd(&file, mode));
    match made {
        Ok(()) => Ok(Built { aside, temp }),
        Err(e) => {
            let _ = fsops::unlink_at(dir, &aside);
            if let Some(temp) = temp {
                temp.finish();
            }
            Err(e)
        }
    }
}

/// Why a built entry was not built (nothing of it is left).
#[derive(Debug)]
pub enum BuildError {
    /// An archive it comes from could not be extracted.
    Trash(TrashError),
    Io(io::Error),
}

impl From<io::Error> for BuildError {
    fn from(e: io::Error) -> Self {
        BuildError::Io(e)
    }
}

/// A directory built beside its place under a journaled temp name ([`tree`]): removed again,
/// with its temp record, unless [`StagedTree::take`] hands it to the commit.
pub struct StagedTree {
    built: Option<Built>,
    /// The directory it was built in, and its canonical path.
    dir: Dir,
    pub dir_path: PathBuf,
    /// The built directory itself (readable), which moves into it are made beneath (`None`:
    /// a file or link was built).
    pub root: Option<Dir>,
    /// The archives it was built from, held (no other call restores or clears one).
    pub held: Vec<Archived>,
}

impl StagedTree {
    /// Its temp name and temp record, for the commit to place it (which answers for it then).
    pub fn take(&mut self) -> Built {
        self.built.take().expect("a staged tree is placed once")
    }

    /// The directory it was built in (and is placed in), opened again.
    pub fn parent(&self) -> io::Result<Dir> {
        fsops::reopen_readable(self.dir.as_dir())
    }

    /// Its temp name in the directory it was built in.
    pub fn aside(&self) -> &OsStr {
        &self.built.as_ref().expect("not placed yet").aside
    }
}

impl Drop for StagedTree {
    fn drop(&mut self) {
        if let Some(built) = self.built.take() {
            let _ =
                trees::remove_tree_at(self.dir.as_dir(), &built.aside, trees::Removal::OWN_TEMP);
            if let Some(temp) = built.temp {
                temp.finish();
            }
        }
    }
}

/// Builds the directory `source` describes ([`super::plan::Source::Tree`], or an archive's tree,
/// or an empty directory) beside its place in `dir` (canonical path `dir_path`, in the
/// directories `made_above` made for the change), under a journaled temp name. Permission bits
/// of the empty directories built are set last, deepest first, once everything inside is in.
pub fn tree(
    ws: &Workspace,
    dir: BorrowedDir<'_>,
    dir_path: &Path,
    source: &super::plan::Source,
    made_above: Vec<MadeDirRecord>,
    cancel: &CancelToken,
) -> Result<StagedTree, BuildError> {
    // Named as any restore's temp root (`.restore-<hex>.partial`).
    let aside = crate::trash::restore_temp_name();
    let temp = ws
        .journal()
        .begin_temp_in_made_dirs(dir_path, dir, &aside, made_above);
    let mut staged = StagedTree {
        built: Some(Built { aside, temp }),
        dir: fsops::reopen_readable(dir)?,
        dir_path: dir_path.to_owned(),
        root: None,
        held: Vec::new(),
    };
    let mut modes = Vec::new();
    let aside = staged.aside().to_owned();
    let mut held = Vec::new();
    build_at(ws, dir, &aside, source, cancel, &mut held, &mut modes)?;
    staged.held = held;
    for (made, mode) in modes.iter().rev() {
        fsops::set_mode_fd(made, *mode)?;
    }
    let is_dir = fsops::lstat_at(dir, &aside)?.is_some_and(|s| s.kind() == EntryKind::Directory);
    if is_dir {
        staged.root = Some(fsops::open_subdir(dir, &aside)?);
    }
    Ok(staged)
}

/// Builds `source` as `name` in `dir` (see [`tree`]): the archives it comes from held in `held`,
/// each empty directory made noted in `modes` with its permission bits.
fn build_at(
    ws: &Workspace,
    dir: BorrowedDir<'_>,
    name: &OsStr,
    source: &super::plan::Source,
    cancel: &CancelToken,
    held: &mut Vec<Archived>,
    modes: &mut Vec<(Dir, u32)>,
) -> Result<(), BuildError> {
    use super::plan::Source;
    if cancel.is_aborted() {
        return Err(BuildError::Trash(TrashError::Aborted));
    }
    match source {
        Source::Bytes { data, mode } => {
            fsops::stage(dir, name, name, data, None)
                .and_then(|()| fsops::open_for_read(dir, name))
                .and_then(|file| fsops::set_mode_fd(&file, *mode))?;
        }
        Source::Archive { archive } => {
            let aborted = || cancel.is_aborted();
            let archived = ws
                .bucket()
                .stage(archive, dir, name, &aborted)
                .map_err(BuildError::Trash)?;
            held.push(archived);
        }
        Source::EmptyDir { mode } => {
            fsops::mkdir_at(dir, name)?;
            modes.push((fsops::open_subdir(dir, name)?, *mode));
        }
        Source::Tree {
            root,
            moves,
            drops,
            inside,
        } => {
            build_at(ws, dir, name, root, cancel, held, modes)?;
            let tree = fsops::open_subdir(dir, name)?;
            change_inside(tree.as_dir(), moves, drops)?;
            for (path, source) in inside {
                let parent = in_tree(tree.as_dir(), path.parent())?;
                let name = path.file_name().unwrap_or_default();
                build_at(ws, parent.as_dir(), name, source, cancel, held, modes)?;
            }
        }
    }
    Ok(())
}

/// The directory `rel` (a path inside `tree`; `None` or empty: `tree` itself), opened beneath
/// it, readable.
pub fn in_tree(tree: BorrowedDir<'_>, rel: Option<&Path>) -> io::Result<Dir> {
    match rel.filter(|rel| !rel.as_os_str().is_empty()) {
        Some(rel) => fsops::open_dir_beneath(tree, rel, true),
        None => fsops::reopen_readable(tree),
    }
}

/// In the tree just built (ours, under a temp name): each entry `moves` names moved to its new
/// place, and what `drops` names removed (it stays in its archive). Each moves first to a temp
/// name at the top, the deepest first (an entry moves out of a directory that moves too before
/// that one does), so that entries trading places and the drops leave them be; a drop beneath
/// an entry that moved aside is made where that entry is then; then each goes on to its place,
/// the shallowest first (a directory is in place before what moves into it).
fn change_inside(
    tree: BorrowedDir<'_>,
    moves: &[(PathBuf, PathBuf)],
    drops: &[PathBuf],
) -> io::Result<()> {
    let mut order: Vec<usize> = (0..moves.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(moves[i].0.components().count()));
    let mut aside: Vec<Option<OsString>> = vec![None; moves.len()];
    for &i in &order {
        let from = &moves[i].0;
        let name = from.file_name().unwrap_or_default();
        let temp = fsops::temp_name(name);
        let dir = in_tree(tree, from.parent())?;
        fsops::rename_noreplace(dir.as_dir(), name, tree, &temp)?;
        aside[i] = Some(temp);
    }
    // Where the archive's `member` is once the moves have set their entries aside.
    let now_at = |member: &Path| -> PathBuf {
        let set_aside = moves
            .iter()
            .zip(&aside)
            .filter(|((from, _), _)| member.starts_with(from))
            .max_by_key(|((from, _), _)| from.components().count());
        match set_aside {
            Some(((from, _), Some(temp))) => {
                let rest = member.strip_prefix(from).expect("beneath");
                Path::new(temp).join(rest)
            }
            _ => member.to_owned(),
        }
    };
    for member in drops {
        let member = now_at(member);
        let Some(name) = member.file_name() else {
            continue;
        };
        let dir = in_tree(tree, member.parent())?;
        trees::remove_tree_at(dir.as_dir(), name, trees::Removal::OWN_TEMP)?;
    }
    order.sort_by_key(|&i| moves[i].1.components().count());
    for i in order {
        let to = &moves[i].1;
        let temp = aside[i].as_ref().expect("set aside above");
        let dir = in_tree(tree, to.parent())?;
        let name = to.file_name().unwrap_or_default();
        fsops::rename_noreplace(tree, temp, dir.as_dir(), name)?;
    }
    Ok(())
}
