//! Replacing a file atomically — and only the file that was planned on (../../../docs/permissions-and-prompts.md: a change is
//! applied only if the file is still what was diffed; nothing it did not plan on is destroyed).
//!
//! The new content is written to a temp file beside the target and fsynced; then it takes the
//! name:
//!
//! - where the target was absent, with `RENAME_NOREPLACE`: a file that appeared meanwhile stays,
//!   and the write is [`ReplaceError::Changed`];
//! - where it existed, with `RENAME_EXCHANGE`, which leaves the old entry under the temp name.
//!   It must be exactly the entry planned on: a regular file with the same device, inode, owner
//!   and mode, whose content the caller checks (an editor's in-place save keeps the inode but
//!   not the bytes), and that no other process has open for writing. Only then is it unlinked;
//!   otherwise the two are swapped back and the write is `Changed`.
//!
//! Swapping back can find that the name changed again in the meantime: what comes back is not
//! our new file as written. It is not removed then, but kept under a visible
//! [`kept_name`](super::kept_name), and the error says so.
//!
//! Why "open for writing" matters: an editor's save (`open(O_TRUNC)`, `write`) can be blocked in
//! the kernel for milliseconds between the open and the truncation (ext4 waits for the journal
//! commit our own fsync started), with the old file already open. Its bytes would land in the
//! old file after we unlinked it. Such a writer is seen (Linux: a read lease is refused while
//! the file is open for writing; see
//! [`open_for_writing_elsewhere`](super::open_for_writing_elsewhere)) and the write is
//! `Changed`.
//!
//! Where the system cannot tell (macOS, which has no leases; not the file's owner and no
//! `CAP_LEASE`; a file system without leases), and for a process that looked the name up before
//! the swap but opens the old file only after the check, the replaced file is checked once more
//! after it was unlinked, through the descriptor the check opened: bytes written into it since
//! the check (by anyone who has it open) go back under the name as a swap back would put them,
//! and the write is `Changed`. Our own new file, when a swap back removes it, is checked the same
//! way (it had the name for a moment, an editor may have opened it): bytes written into it are
//! kept under a visible [`kept_name`](super::kept_name). So a save is never lost whose bytes
//! reached the file while it still had a name, nor any that reached it before that last check;
//! what is left is a writer
//! that opened the file before the swap and writes only after the last check, into a file that
//! no longer has a name (the editor still holds what it saved: saving again puts it on disk).
//!
//! Without `RENAME_EXCHANGE` (some network and FUSE file systems) the same check runs by name
//! right before a plain `rename`: a change in that window — microseconds, where it used to be an
//! fsync — is replaced.

use crate::paths::{BorrowedDir, EntryKind, Stat};
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read, Seek, Write};

use super::meta::keep_metadata_of;
use super::race_point::{self, RacePoint};
use super::{
    create_file_umasked_at, fstat, fsync_dir, is_unsupported_rename, keep_visible, lstat_at,
    open_for_read, open_for_writing_elsewhere, rename_exchange, rename_noreplace, rename_replacing,
    unlink_at,
};

/// What [`write_atomic`] may replace.
pub enum Replacing<'a> {
    /// Nothing: the name must still be free when the new file takes it.
    Nothing,
    /// The regular file `stat` describes (same device, inode, owner and mode), if
    /// `same_content` (given that file, opened for reading) says it still holds what was planned
    /// on.
    File {
        stat: &'a Stat,
        same_content: &'a dyn Fn(&mut File) -> io::Result<bool>,
    },
}

/// Why [`write_atomic`] wrote nothing.
#[derive(Debug)]
pub enum ReplaceError {
    /// The name no longer holds what was planned on (a file appeared there, was swapped in, or
    /// was written in place), or `being_written`: it does, but another process has it open for
    /// writing. It was left as it was found. `kept`: the name under which an entry displaced by
    /// the name changing again was kept (see the module docs).
    Changed {
        kept: Option<OsString>,
        being_written: bool,
    },
    Io(io::Error),
}

impl From<io::Error> for ReplaceError {
    fn from(e: io::Error) -> Self {
        ReplaceError::Io(e)
    }
}

/// Replaces (or creates) `name` in `dir` with `data`, atomically and only as planned
/// (`replacing`; see the module docs). The temp file `temp` (a [`temp_name`](super::temp_name)
/// of `name`, which the caller may journal first) gets what the file it replaces had (see
/// [`keep_metadata_of`]); a new file gets mode 0666 minus umask. The directory is fsynced after.
/// On any failure the temp file is gone and `name` holds what it held.
pub fn write_atomic(
    dir: BorrowedDir<'_>,
    name: &OsStr,
    temp: &OsStr,
    data: &[u8],
    replacing: Replacing<'_>,
) -> Result<(), ReplaceError> {
    write_atomic_with(dir, name, temp, data, replacing, rename_exchange)
}

/// Stages `data` as the new file `temp` beside `name`, durable, with what `metadata_of` has (the
/// file it will replace, or the one it moves; see [`keep_metadata_of`]); for a change of many
/// files that puts every file in place only once every one is staged ([`swap_in`]). On failure
/// nothing this made is left under `temp` (see [`stage_unsynced`]).
pub fn stage(
    dir: BorrowedDir<'_>,
    name: &OsStr,
    temp: &OsStr,
    data: &[u8],
    metadata_of: Option<&Stat>,
) -> io::Result<()> {
    stage_unsynced(dir, name, temp, data, metadata_of).and_then(|file| {
        file.sync_all().inspect_err(|_| {
            let _ = unlink_at(dir, temp);
        })
    })
}

/// [`stage`], but not yet durable: the file is returned, open for writing, for the caller to
/// sync (`sync_all`) before anything depends on it — for a change of many files, all of them at
/// once. On failure nothing this made is left under `temp`; a `temp` that is taken already
/// (another program's file) fails with `AlreadyExists` and is left as it is.
pub fn stage_unsynced(
    dir: BorrowedDir<'_>,
    name: &OsStr,
    temp: &OsStr,
    data: &[u8],
    metadata_of: Option<&Stat>,
) -> io::Result<File> {
    let mut file = create_file_umasked_at(dir, temp)?;
    let written = file.write_all(data).and_then(|()| match metadata_of {
        Some(old) => keep_metadata_of(dir, name, old, &file),
        None => Ok(()),
    });
    match written {
        Ok(()) => Ok(file),
        Err(e) => {
            let _ = unlink_at(dir, temp);
            Err(e)
        }
    }
}

/// Puts the staged `temp` in place of `name`, only as planned (`replacing`, as for
/// [`write_atomic`]); `ours` tells the staged file by its content (given it, opened for
/// reading), should it have to be swapped back. Where nothing was to be replaced, `temp` takes
/// the free name. Where a file was, the two are exchanged and checked, and the planned file is
/// left under `temp`: the caller removes it once the whole change is in place, or exchanges it
/// back. On any failure `name` holds what it held and `temp` is gone. A file system that cannot
/// exchange names fails with `Unsupported` (a change of many files could not be undone halfway
/// otherwise).
pub fn swap_in(
    dir: BorrowedDir<'_>,
    temp: &OsStr,
    name: &OsStr,
    ours: &dyn Fn(&mut File) -> io::Result<bool>,
    replacing: Replacing<'_>,
) -> Result<(), ReplaceError> {
    race_point::reached(RacePoint::BeforeReplace, name);
    match replacing {
        Replacing::Nothing => take_free_name(dir, temp, name),
        Replacing::File { stat, same_content } => {
            let planned = Planned { stat, same_content };
            take_planned_name_keeping(dir, temp, name, ours, &planned, rename_exchange, true)
        }
    }
}

/// How two names are swapped: [`rename_exchange`], or in tests a file system without it.
type Swap = fn(BorrowedDir<'_>, &OsStr, BorrowedDir<'_>, &OsStr) -> io::Result<()>;

fn write_atomic_with(
    dir: BorrowedDir<'_>,
    name: &OsStr,
    temp: &OsStr,
    data: &[u8],
    replacing: Replacing<'_>,
    swap: Swap,
) -> Result<(), ReplaceError> {
    let planned = match replacing {
        Replacing::Nothing => None,
        Replacing::File { stat, .. } => Some(stat),
    };
    stage(dir, name, temp, data, planned)?;
    race_point::reached(RacePoint::BeforeReplace, name);
    let result = match replacing {
        Replacing::Nothing => take_free_name(dir, temp, name),
        Replacing::File { stat, same_content } => {
            let planned = Planned { stat, same_content };
            let ours = |file: &mut File| same_bytes(file, data);
            take_planned_name(dir, temp, name, &ours, &planned, swap)
        }
    };
    if result.is_ok() {
        fsync_dir(dir);
    }
    result
}

/// The file to be replaced, as planned.
pub(super) struct Planned<'a> {
    pub(super) stat: &'a Stat,
    pub(super) same_content: &'a dyn Fn(&mut File) -> io::Result<bool>,
}

/// `temp` takes `name` if nothing is there.
pub(super) fn take_free_name(
    dir: BorrowedDir<'_>,
    temp: &OsStr,
    name: &OsStr,
) -> Result<(), ReplaceError> {
    rename_noreplace(dir, temp, dir, name).map_err(|e| {
        let _ = unlink_at(dir, temp);
        if e.kind() == io::ErrorKind::AlreadyExists {
            ReplaceError::Changed {
                kept: None,
                being_written: false,
            }
        } else {
            e.into()
        }
    })
}

/// `temp` takes `name` from the planned file, which is then unlinked; anything else found there
/// goes back.
fn take_planned_name(
    dir: BorrowedDir<'_>,
    temp: &OsStr,
    name: &OsStr,
    ours: &dyn Fn(&mut File) -> io::Result<bool>,
    planned: &Planned<'_>,
    swap: Swap,
) -> Result<(), ReplaceError> {
    take_planned_name_keeping(dir, temp, name, ours, planned, swap, false)
}

/// [`take_planned_name`]; with `keep_old`, the planned file stays under `temp` (see [`swap_in`]).
fn take_planned_name_keeping(
    dir: BorrowedDir<'_>,
    temp: &OsStr,
    name: &OsStr,
    ours: &dyn Fn(&mut File) -> io::Result<bool>,
    planned: &Planned<'_>,
    swap: Swap,
    keep_old: bool,
) -> Result<(), ReplaceError> {
    match swap(dir, temp, dir, name) {
        Ok(()) => {}
        Err(e) if is_unsupported_rename(&e) && keep_old => {
            let _ = unlink_at(dir, temp);
            return Err(ReplaceError::Io(io::Error::from(
                io::ErrorKind::Unsupported,
            )));
        }
        Err(e) if is_unsupported_rename(&e) => {
            return replace_after_check(dir, temp, name, planned)
        }
        Err(e) => {
            let _ = unlink_at(dir, temp);
            return Err(if e.kind() == io::ErrorKind::NotFound {
                ReplaceError::Changed {
                    kept: None,
                    being_written: false,
                }
            } else {
                e.into()
            });
        }
    }
    // `temp` now holds what `name` held.
    match compare(dir, temp, planned) {
        Ok(Found::Planned(old)) if keep_old => {
            drop(old);
            Ok(())
        }
        Ok(Found::Planned(old)) => let_go(dir, temp, name, ours, old, planned, swap),
        Ok(found) => Err(swap_back(dir, temp, name, ours, swap, found)),
        Err(e) => match swap_back(dir, temp, name, ours, swap, Found::Changed) {
            kept @ ReplaceError::Changed { kept: Some(_), .. } => Err(kept),
            _ => Err(e.into()),
        },
    }
}

/// Unlinks the replaced file, found as planned under `temp` and still open as `old`, then checks
/// it one last time through `old`: a writer that had it open from before the swap (an editor's
/// save blocked between its `open` and its `write`; where no lease tells, see the module docs)
/// may have written into it since it was checked. Its bytes then go back under `name` as a swap
/// back would put them, and the write is `Changed` (being written): nothing is lost that reached
/// the file before this check.
fn let_go(
    dir: BorrowedDir<'_>,
    temp: &OsStr,
    name: &OsStr,
    ours: &dyn Fn(&mut File) -> io::Result<bool>,
    mut old: File,
    planned: &Planned<'_>,
    swap: Swap,
) -> Result<(), ReplaceError> {
    race_point::reached(RacePoint::ReplacedChecked, name);
    let _ = unlink_at(dir, temp);
    race_point::reached(RacePoint::ReplacedUnlinked, name);
    let unchanged = old.rewind().and_then(|()| (planned.same_content)(&mut old));
    if unchanged.unwrap_or(true) {
        return Ok(());
    }
    let mut late = Vec::new();
    if let Err(e) = old.rewind().and_then(|()| old.read_to_end(&mut late)) {
        return Err(e.into());
    }
    // `temp` is free again: the late bytes take it, then the name (if it still holds our file).
    stage(dir, name, temp, &late, Some(planned.stat))?;
    Err(swap_back(dir, temp, name, ours, swap, Found::BeingWritten))
}

/// What is under a name, compared with the plan.
#[derive(Debug)]
pub(super) enum Found {
    /// The planned file with the planned content, and nobody has it open for writing; open.
    Planned(File),
    /// Something else, or the planned file with other content.
    Changed,
    /// The planned file, but another process has it open for writing: its next write (an
    /// editor's save blocked in the kernel, say) would land in a file about to lose its name.
    BeingWritten,
}

/// What the entry `name` of `dir` is, compared with `planned`.
pub(super) fn compare(
    dir: BorrowedDir<'_>,
    name: &OsStr,
    planned: &Planned<'_>,
) -> io::Result<Found> {
    // Compared before opening it, so that nothing else (a device, a FIFO) is ever opened.
    match lstat_at(dir, name)? {
        Some(now) if same_file(&now, planned.stat) => {}
        _ => return Ok(Found::Changed),
    }
    let mut file = match open_for_read(dir, name) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Found::Changed),
        Err(e) => return Err(e),
    };
    if !same_file(&fstat(&file)?, planned.stat) {
        return Ok(Found::Changed);
    }
    // Writers first: one that writes after this is caught by the content check below.
    if open_for_writing_elsewhere(&file) == Some(true) {
        return Ok(Found::BeingWritten);
    }
    Ok(if (planned.same_content)(&mut file)? {
        Found::Planned(file)
    } else {
        Found::Changed
    })
}

/// The same file, with the owner and mode it had (and so the same type).
fn same_file(a: &Stat, b: &Stat) -> bool {
    (a.dev, a.ino, a.mode, a.uid, a.gid) == (b.dev, b.ino, b.mode, b.uid, b.gid)
}

/// Undoes the swap after the entry swapped out turned out not to be the planned one: it goes
/// back to `name`, and our new file, which comes back to `temp`, is removed — if it is still our
/// new file as written; anything else is kept under a visible name.
fn swap_back(
    dir: BorrowedDir<'_>,
    temp: &OsStr,
    name: &OsStr,
    ours: &dyn Fn(&mut File) -> io::Result<bool>,
    swap: Swap,
    found: Found,
) -> ReplaceError {
    let being_written = matches!(found, Found::BeingWritten);
    let displaced_ours = match swap(dir, temp, dir, name) {
        Ok(()) => holds_ours(dir, temp, ours).unwrap_or(None),
        // `name` is gone (or cannot be swapped): put back what was there if the name is free.
        Err(_) => match rename_noreplace(dir, temp, dir, name) {
            Ok(()) => {
                return ReplaceError::Changed {
                    kept: None,
                    being_written,
                }
            }
            Err(_) => None,
        },
    };
    let kept = match displaced_ours {
        Some(file) => {
            race_point::reached(RacePoint::ReplacedChecked, name);
            let _ = unlink_at(dir, temp);
            race_point::reached(RacePoint::ReplacedUnlinked, name);
            keep_late_bytes(dir, name, file, ours)
        }
        None => Some(keep_visible(dir, temp, name).unwrap_or_else(|_| temp.to_owned())),
    };
    ReplaceError::Changed {
        kept,
        being_written,
    }
}

/// `name` in `dir`, open, if it is a regular file holding what `ours` recognises, which nobody
/// has open for writing (it had the name for a moment: an editor may have opened it).
fn holds_ours(
    dir: BorrowedDir<'_>,
    name: &OsStr,
    ours: &dyn Fn(&mut File) -> io::Result<bool>,
) -> io::Result<Option<File>> {
    let mut file = open_for_read(dir, name)?;
    let recognised = EntryKind::of(&fstat(&file)?) == EntryKind::File
        && open_for_writing_elsewhere(&file) != Some(true)
        && ours(&mut file)?;
    Ok(recognised.then_some(file))
}

/// A file `file`, unlinked after `ours` recognised it, checked once more:
/// bytes someone wrote into it since (an editor that opened it while it had a name) are kept
/// in a new file under a visible [`kept_name`](super::kept_name) of `name`, whose name this
/// returns. (Our new file in a swap back; the file a commit displaced, once it is let go.)
pub fn keep_late_bytes(
    dir: BorrowedDir<'_>,
    name: &OsStr,
    mut file: File,
    ours: &dyn Fn(&mut File) -> io::Result<bool>,
) -> Option<OsString> {
    if file.rewind().and_then(|()| ours(&mut file)).unwrap_or(true) {
        return None;
    }
    let mut late = Vec::new();
    file.rewind()
        .and_then(|()| file.read_to_end(&mut late))
        .ok()?;
    let mode = fstat(&file).ok()?.mode;
    loop {
        let kept = super::kept_name(name);
        let mut copy = match super::create_file_at(dir, &kept) {
            Ok(copy) => copy,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(_) => return None,
        };
        let written = copy
            .write_all(&late)
            .and_then(|()| super::set_mode_fd(&copy, mode))
            .and_then(|()| copy.sync_all());
        return written.is_ok().then_some(kept);
    }
}

/// Does `reader` yield exactly `expected`?
pub fn same_bytes(reader: impl Read, expected: &[u8]) -> io::Result<bool> {
    let mut bytes = Vec::with_capacity(expected.len());
    reader
        .take(expected.len() as u64 + 1)
        .read_to_end(&mut bytes)?;
    Ok(bytes == expected)
}

/// Without a swap: the check by name, then a plain rename over it (see the module docs).
fn replace_after_check(
    dir: BorrowedDir<'_>,
    temp: &OsStr,
    name: &OsStr,
    planned: &Planned<'_>,
) -> Result<(), ReplaceError> {
    let result = match compare(dir, name, planned) {
        Ok(Found::Planned(_)) => rename_replacing(dir, temp, dir, name).map_err(ReplaceError::Io),
        Ok(found) => Err(ReplaceError::Changed {
            kept: None,
            being_written: matches!(found, Found::BeingWritten),
        }),
        Err(e) => Err(e.into()),
    };
    if result.is_err() {
        let _ = unlink_at(dir, temp);
    }
    result
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::paths::fsops::{open_dir, race_point, temp_name};
    use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
    use std::os::unix::fs::FileExt;
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};

    /// A directory with `f.txt` holding "old" (unless `with_file` is false); the file names are
    /// prefixed with `tag` so that race points set by parallel tests do not meet.
    struct Dir {
        _tmp: tempfile::TempDir,
        path: PathBuf,
        fd: OwnedFd,
        name: String,
    }

    impl Dir {
        fn new(tag: &str, with_file: bool) -> Self {
            let tmp = tempfile::tempdir().unwrap();
            let path = crate::paths::canonical::canonicalize_existing(tmp.path()).unwrap();
            let name = format!("{tag}.txt");
            if with_file {
                std::fs::write(path.join(&name), "old").unwrap();
            }
            let fd = open_dir(&path, &path, false).unwrap();
            Dir {
                _tmp: tmp,
                path,
                fd,
                name,
            }
        }

        fn file(&self) -> PathBuf {
            self.path.join(&self.name)
        }

        fn stat(&self) -> Stat {
            lstat_at(self.fd.as_fd(), self.name.as_ref())
                .unwrap()
                .unwrap()
        }

        fn write(&self, data: &[u8], replacing: Replacing<'_>) -> Result<(), ReplaceError> {
            self.write_with(data, replacing, rename_exchange)
        }

        fn write_with(
            &self,
            data: &[u8],
            replacing: Replacing<'_>,
            swap: Swap,
        ) -> Result<(), ReplaceError> {
            let name = OsStr::new(&self.name);
            write_atomic_with(
                self.fd.as_fd(),
                name,
                &temp_name(name),
                data,
                replacing,
                swap,
            )
        }

        /// The names and contents in the directory.
        fn contents(&self) -> Vec<(String, String)> {
            let mut found: Vec<_> = std::fs::read_dir(&self.path)
                .unwrap()
                .map(|e| {
                    let e = e.unwrap();
                    let name = e.file_name().to_string_lossy().into_owned();
                    (name, std::fs::read_to_string(e.path()).unwrap())
                })
                .collect();
            found.sort();
            found
        }
    }

    fn holds_old(file: &mut File) -> io::Result<bool> {
        same_bytes(file, b"old")
    }

    fn save_in_place(path: &Path, content: &str) {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(path)
            .unwrap();
        file.write_all(content.as_bytes()).unwrap();
    }

    fn is_changed(result: Result<(), ReplaceError>) -> Option<OsString> {
        match result {
            Err(ReplaceError::Changed {
                kept,
                being_written: false,
            }) => kept,
            other => panic!("expected Changed, got {other:?}"),
        }
    }

    fn unsupported(_: BorrowedFd<'_>, _: &OsStr, _: BorrowedFd<'_>, _: &OsStr) -> io::Result<()> {
        Err(io::Error::from_raw_os_error(
            rustix::io::Errno::INVAL.raw_os_error(),
        ))
    }

    #[test]
    fn a_temp_name_taken_already_is_left_as_it_is() {
        let d = Dir::new("rp-temp-taken", false);
        let temp = OsString::from("taken.tmp");
        std::fs::write(d.path.join(&temp), "theirs").unwrap();
        let staged = stage(d.fd.as_fd(), OsStr::new(&d.name), &temp, b"new", None);
        assert_eq!(staged.unwrap_err().kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(d.contents(), [("taken.tmp".into(), "theirs".into())]);
    }

    #[test]
    fn the_planned_file_is_replaced() {
        let d = Dir::new("rp-planned", true);
        let stat = d.stat();
        let replacing = Replacing::File {
            stat: &stat,
            same_content: &holds_old,
        };
        d.write(b"new", replacing).unwrap();
        assert_eq!(d.contents(), [(d.name.clone(), "new".into())]);
    }

    #[test]
    fn a_file_that_appears_is_not_replaced() {
        let d = Dir::new("rp-appears", false);
        let file = d.file();
        race_point::at(RacePoint::BeforeReplace, &d.name, move || {
            std::fs::write(file, "theirs").unwrap()
        });
        assert_eq!(is_changed(d.write(b"new", Replacing::Nothing)), None);
        assert_eq!(d.contents(), [(d.name.clone(), "theirs".into())]);
    }

    #[test]
    fn a_file_written_in_place_is_swapped_back() {
        let d = Dir::new("rp-in-place", true);
        let stat = d.stat();
        let file = d.file();
        race_point::at(RacePoint::BeforeReplace, &d.name, move || {
            save_in_place(&file, "saved")
        });
        let replacing = Replacing::File {
            stat: &stat,
            same_content: &holds_old,
        };
        assert_eq!(is_changed(d.write(b"new", replacing)), None);
        assert_eq!(d.contents(), [(d.name.clone(), "saved".into())]);
    }

    #[test]
    fn a_file_swapped_in_is_swapped_back() {
        let d = Dir::new("rp-swapped", true);
        std::fs::write(d.path.join("other"), "other").unwrap();
        let stat = d.stat();
        let (file, other) = (d.file(), d.path.join("other"));
        race_point::at(RacePoint::BeforeReplace, &d.name, move || {
            rustix::fs::renameat_with(
                rustix::fs::CWD,
                &file,
                rustix::fs::CWD,
                &other,
                rustix::fs::RenameFlags::EXCHANGE,
            )
            .unwrap()
        });
        let replacing = Replacing::File {
            stat: &stat,
            same_content: &|_| Ok(true),
        };
        assert_eq!(is_changed(d.write(b"new", replacing)), None);
        assert_eq!(
            d.contents(),
            [
                ("other".into(), "old".into()),
                (d.name.clone(), "other".into())
            ]
        );
    }

    /// Between the swap and the swap back, someone writes into our new file (it has the name):
    /// it is not ours any more, so it is kept under a visible name, not removed.
    #[test]
    fn our_file_written_before_the_swap_back_is_kept_visible() {
        let d = Dir::new("rp-kept", true);
        let stat = d.stat();
        let file = d.file();
        let writes_ours_then_differs = move |_: &mut File| {
            save_in_place(&file, "written into the new file");
            Ok(false)
        };
        let replacing = Replacing::File {
            stat: &stat,
            same_content: &writes_ours_then_differs,
        };
        let kept = is_changed(d.write(b"new", replacing)).expect("kept");
        let kept = kept.to_string_lossy().into_owned();
        assert!(kept.starts_with(&d.name) && kept.contains(".kept-by-agent-fs-tools."));
        let mut expected = vec![
            (d.name.clone(), "old".to_owned()),
            (kept, "written into the new file".to_owned()),
        ];
        expected.sort();
        assert_eq!(d.contents(), expected);
    }

    /// A file open for writing elsewhere (an editor's save blocked between its open and its
    /// write) is not replaced: that write would land in a file without a name.
    #[test]
    fn a_file_open_for_writing_is_not_replaced() {
        let d = Dir::new("rp-open", true);
        let stat = d.stat();
        let writer = std::fs::OpenOptions::new()
            .append(true)
            .open(d.file())
            .unwrap();
        let replacing = Replacing::File {
            stat: &stat,
            same_content: &holds_old,
        };
        let result = d.write(b"new", replacing);
        if open_for_writing_elsewhere(&File::open(d.file()).unwrap()).is_none() {
            eprintln!("leases unavailable here: not checked");
            return;
        }
        assert!(
            matches!(
                result,
                Err(ReplaceError::Changed {
                    kept: None,
                    being_written: true
                })
            ),
            "{result:?}"
        );
        drop(writer);
        assert_eq!(d.contents(), [(d.name.clone(), "old".into())]);
    }

    /// An editor's save into `file`, open since before: truncate, then write.
    fn save_through(file: &Mutex<Option<File>>, content: &str) {
        let mut guard = file.lock().unwrap();
        let file = guard.as_mut().expect("opened");
        file.set_len(0).unwrap();
        file.write_all_at(content.as_bytes(), 0).unwrap();
    }

    fn being_written(result: Result<(), ReplaceError>) {
        assert!(
            matches!(
                result,
                Err(ReplaceError::Changed {
                    kept: None,
                    being_written: true
                })
            ),
            "{result:?}"
        );
    }

    /// Issue 26, item 10: a writer that opened the replaced file only after it was checked (where
    /// no lease can tell: it looked the name up before the swap) writes into it once it has no
    /// name. Its bytes go back under the name; the write is a conflict.
    #[test]
    fn a_write_into_the_replaced_file_after_its_last_check_goes_back() {
        let d = Dir::new("rp-late", true);
        let stat = d.stat();
        let writer: Arc<Mutex<Option<File>>> = Arc::default();
        let (dir, name, opened) = (d.path.clone(), d.name.clone(), writer.clone());
        race_point::at(RacePoint::ReplacedChecked, &d.name, move || {
            // The replaced file, under the temp name the swap gave it.
            let temp = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .find(|p| p.file_name().unwrap() != name.as_str())
                .unwrap();
            let file = std::fs::OpenOptions::new().write(true).open(temp).unwrap();
            *opened.lock().unwrap() = Some(file);
        });
        let late = writer.clone();
        race_point::at(RacePoint::ReplacedUnlinked, &d.name, move || {
            save_through(&late, "saved late")
        });
        let replacing = Replacing::File {
            stat: &stat,
            same_content: &holds_old,
        };
        being_written(d.write(b"new", replacing));
        assert_eq!(d.contents(), [(d.name.clone(), "saved late".into())]);
        let now = d.stat();
        assert_eq!(now.mode, stat.mode, "given back with the file's mode");
    }

    /// A swap back finds our new file as written and removes it, but someone opened it while it
    /// had the name (an editor saving) and writes into it after that check: what they wrote is
    /// kept under a visible name.
    #[test]
    fn a_write_into_our_file_after_the_swap_back_checked_it_is_kept() {
        let d = Dir::new("rp-late-ours", true);
        let stat = d.stat();
        let file = d.file();
        race_point::at(RacePoint::BeforeReplace, &d.name, move || {
            save_in_place(&file, "saved")
        });
        let writer: Arc<Mutex<Option<File>>> = Arc::default();
        let (dir, name, opened) = (d.path.clone(), d.name.clone(), writer.clone());
        race_point::at(RacePoint::ReplacedChecked, &d.name, move || {
            // Our file, back under the temp name the swap back gave it.
            let ours = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .find(|p| p.file_name().unwrap() != name.as_str())
                .unwrap();
            let file = std::fs::OpenOptions::new().write(true).open(ours).unwrap();
            *opened.lock().unwrap() = Some(file);
        });
        let late = writer.clone();
        race_point::at(RacePoint::ReplacedUnlinked, &d.name, move || {
            save_through(&late, "written into ours")
        });
        let replacing = Replacing::File {
            stat: &stat,
            same_content: &holds_old,
        };
        let kept = is_changed(d.write(b"new", replacing)).expect("kept");
        let kept = kept.to_string_lossy().into_owned();
        assert!(kept.contains(".kept-by-agent-fs-tools."), "{kept}");
        let mut expected = vec![
            (d.name.clone(), "saved".to_owned()),
            (kept, "written into ours".to_owned()),
        ];
        expected.sort();
        assert_eq!(d.contents(), expected);
    }

    /// The case macOS cannot see coming: an editor has the file open from before the swap and
    /// writes only once it was replaced. With a lease (Linux) the write is refused before the
    /// swap and the save lands in the file; without one, the save's bytes go back under the
    /// name. Either way nothing is lost and the write is a conflict.
    #[test]
    fn a_writer_open_since_before_the_swap_loses_nothing() {
        let d = Dir::new("rp-open-early", true);
        let stat = d.stat();
        let writer: Arc<Mutex<Option<File>>> = Arc::new(Mutex::new(Some(
            std::fs::OpenOptions::new()
                .write(true)
                .open(d.file())
                .unwrap(),
        )));
        let saved = Arc::new(AtomicBool::new(false));
        let (late, done) = (writer.clone(), saved.clone());
        race_point::at(RacePoint::ReplacedUnlinked, &d.name, move || {
            save_through(&late, "saved late");
            done.store(true, Ordering::SeqCst);
        });
        let replacing = Replacing::File {
            stat: &stat,
            same_content: &holds_old,
        };
        being_written(d.write(b"new", replacing));
        if !saved.load(Ordering::SeqCst) {
            // Refused before the swap (a lease saw the writer): its save lands in the file.
            save_through(&writer, "saved late");
        }
        assert_eq!(d.contents(), [(d.name.clone(), "saved late".into())]);
    }

    /// Without `RENAME_EXCHANGE` the check runs right before a plain rename.
    #[test]
    fn without_a_swap_the_check_runs_before_the_rename() {
        let d = Dir::new("rp-fallback", true);
        let stat = d.stat();
        let replacing = || Replacing::File {
            stat: &stat,
            same_content: &holds_old,
        };
        let file = d.file();
        race_point::at(RacePoint::BeforeReplace, &d.name, move || {
            save_in_place(&file, "saved")
        });
        assert_eq!(
            is_changed(d.write_with(b"new", replacing(), unsupported)),
            None
        );
        assert_eq!(d.contents(), [(d.name.clone(), "saved".into())]);

        save_in_place(&d.file(), "old");
        let stat = d.stat();
        let replacing = Replacing::File {
            stat: &stat,
            same_content: &holds_old,
        };
        d.write_with(b"new", replacing, unsupported).unwrap();
        assert_eq!(d.contents(), [(d.name.clone(), "new".into())]);
    }
}
