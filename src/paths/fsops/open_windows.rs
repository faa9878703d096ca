//! Windows' twin of `open.rs` (../../../docs/windows.md): the same functions, each a relative
//! `NtCreateFile` through a held directory handle that never follows a link
//! ([`platform::nt`]), so the guarantees are the ones `open.rs` states.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::windows::io::{AsHandle, OwnedHandle};
use std::path::{Component, Path, PathBuf};

use windows_sys::Wdk::Storage::FileSystem::{FILE_DIRECTORY_FILE, FILE_NON_DIRECTORY_FILE};
use windows_sys::Win32::Foundation::ERROR_NOT_SAME_DEVICE;
use windows_sys::Win32::Storage::FileSystem::{
    CreateFileW, DELETE, FILE_ACCESS_RIGHTS, FILE_FLAG_BACKUP_SEMANTICS,
    FILE_FLAG_OPEN_REPARSE_POINT, FILE_GENERIC_READ, FILE_GENERIC_WRITE, FILE_WRITE_DATA,
    OPEN_EXISTING,
};

use crate::paths::os_error::win_codes;
use crate::paths::platform::{self, nt, nt::Disposition};
use crate::paths::{BorrowedDir, Dir};

fn cross_device() -> io::Error {
    io::Error::from_raw_os_error(ERROR_NOT_SAME_DEVICE as i32)
}

/// Opens the anchor (canonical: every link on its path already resolved; the one thing opened
/// by path, as on Unix) as a directory handle, refusing it if it is itself a link.
fn open_anchor(anchor: &Path) -> io::Result<OwnedHandle> {
    let mut wide: Vec<u16> =
        std::os::windows::ffi::OsStrExt::encode_wide(anchor.as_os_str()).collect();
    if wide.contains(&0) {
        return Err(io::Error::from_raw_os_error(win_codes::EINVAL));
    }
    wide.push(0);
    // SAFETY: a NUL-terminated path that lives across the call; the result is checked.
    let raw = unsafe {
        CreateFileW(
            wide.as_ptr(),
            platform::dir_access(false),
            nt::SHARE_ALL,
            std::ptr::null(),
            OPEN_EXISTING,
            FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT,
            std::ptr::null_mut(),
        )
    };
    let handle = nt::owned(raw)?;
    if platform::info::attribute_tag(handle.as_handle())?.is_link() {
        return Err(io::Error::from_raw_os_error(win_codes::ELOOP));
    }
    Ok(handle)
}

fn relative<'a>(anchor: &Path, dir: &'a Path) -> io::Result<&'a Path> {
    dir.strip_prefix(anchor).map_err(|_| cross_device())
}

/// Opens the directory `dir` (canonical, inside `anchor`) without following any link on the
/// way. `readable` gives a handle that can also be listed.
pub fn open_dir(anchor: &Path, dir: &Path, readable: bool) -> io::Result<Dir> {
    let rel = relative(anchor, dir)?;
    platform::open_beneath(open_anchor(anchor)?, rel, readable)
}

/// `mkdir -p dir` beneath `anchor`, each missing component created relative to the handle of
/// the one before and opened without following a link. Returns a handle of `dir` and whether
/// anything was created. An existing non-directory component → `ERROR_DIRECTORY`.
pub fn ensure_dir(anchor: &Path, dir: &Path) -> io::Result<(Dir, bool)> {
    ensure_dir_mode(anchor, dir, 0o777)
}

/// [`ensure_dir`]; `mode` has no meaning on Windows (a new directory takes the access control
/// list its parent passes on).
pub fn ensure_dir_mode(anchor: &Path, dir: &Path, mode: u32) -> io::Result<(Dir, bool)> {
    match open_dir(anchor, dir, false) {
        Ok(handle) => return Ok((handle, false)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    make_dirs_beneath(open_anchor(anchor)?, relative(anchor, dir)?, mode)
}

/// Makes the directory `name` in `dir` if it is missing: `Ok(true)` when this call made it,
/// `Ok(false)` when an entry was there already.
fn make_dir(dir: BorrowedDir<'_>, name: &OsStr) -> io::Result<bool> {
    match nt::open_entry(
        dir,
        name,
        platform::dir_access(false),
        Disposition::New,
        FILE_DIRECTORY_FILE,
    ) {
        Ok(_made) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e),
    }
}

/// `mkdir -p` of the relative path `rel` beneath the directory `start`, one component at a time:
/// a link on the way is `ERROR_STOPPED_ON_SYMLINK`, never followed. Returns a handle of the last
/// directory and whether anything was created. (`mode`: see [`ensure_dir_mode`].)
pub fn make_dirs_beneath(start: Dir, rel: &Path, mode: u32) -> io::Result<(Dir, bool)> {
    let _ = mode;
    let mut current = start;
    let mut created = false;
    for component in rel.components() {
        let Component::Normal(part) = component else {
            return Err(cross_device());
        };
        created |= make_dir(current.as_handle(), part)?;
        current = platform::open_dir_at(current.as_handle(), part, false)?;
    }
    Ok((current, created))
}

/// A directory [`ensure_dir_made`] made: its path, a handle of its parent, and the volume and
/// file id of both (so that it can be removed again, only if it is still this one and empty).
#[derive(Debug)]
pub struct MadeDir {
    pub path: PathBuf,
    pub parent: Dir,
    pub parent_identity: (u64, u64),
    pub identity: (u64, u64),
}

/// [`ensure_dir`], telling which directories it made (shallowest first): only those its own
/// create made, not one that another process made meanwhile.
pub fn ensure_dir_made(anchor: &Path, dir: &Path) -> io::Result<(Dir, Vec<MadeDir>)> {
    ensure_dir_made_with(anchor, dir, |parent, _, name| make_dir(parent, name))
}

/// [`ensure_dir_made`], each missing directory made by `make(parent, path, name)` (never
/// called for one that exists): `Ok(true)` when it made the directory `name` of `parent`
/// (canonical path `path`), `Ok(false)` when one was there already.
pub fn ensure_dir_made_with(
    anchor: &Path,
    dir: &Path,
    mut make: impl FnMut(BorrowedDir<'_>, &Path, &OsStr) -> io::Result<bool>,
) -> io::Result<(Dir, Vec<MadeDir>)> {
    match open_dir(anchor, dir, false) {
        Ok(handle) => return Ok((handle, Vec::new())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut made = Vec::new();
    let result = make_dirs_reporting(anchor, dir, &mut made, &mut make);
    if result.is_err() {
        // Nothing half made: what was made before the error goes again (if still empty and
        // still the directory made).
        for dir in made.iter().rev() {
            if let Some(name) = dir.path.file_name() {
                let _ = remove_made_dir(dir.parent.as_handle(), name, dir.identity);
            }
        }
    }
    result.map(|handle| (handle, made))
}

/// Removes the empty directory `name` of `parent` if it is still the one with `identity`:
/// opened, checked and deleted through one handle.
fn remove_made_dir(parent: BorrowedDir<'_>, name: &OsStr, identity: (u64, u64)) -> io::Result<()> {
    let handle = nt::open_entry(
        parent,
        name,
        DELETE,
        Disposition::Existing,
        FILE_DIRECTORY_FILE,
    )?;
    if super::identity(&super::fstat(&handle)?) != identity {
        return Ok(());
    }
    platform::dispose::delete(handle.as_handle())
}

/// The work of [`ensure_dir_made_with`]: each directory made is pushed to `made` as it is.
fn make_dirs_reporting(
    anchor: &Path,
    dir: &Path,
    made: &mut Vec<MadeDir>,
    make: &mut impl FnMut(BorrowedDir<'_>, &Path, &OsStr) -> io::Result<bool>,
) -> io::Result<Dir> {
    let mut current = open_anchor(anchor)?;
    let mut path = anchor.to_path_buf();
    for component in relative(anchor, dir)?.components() {
        let Component::Normal(part) = component else {
            return Err(cross_device());
        };
        path.push(part);
        match platform::open_dir_at(current.as_handle(), part, false) {
            Ok(next) => {
                current = next;
                continue;
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        let created = make(current.as_handle(), &path, part)?;
        let next = platform::open_dir_at(current.as_handle(), part, false)?;
        if created {
            made.push(MadeDir {
                path: path.clone(),
                parent_identity: super::identity(&super::fstat(&current)?),
                identity: super::identity(&super::fstat(&next)?),
                parent: current,
            });
        }
        current = next;
    }
    Ok(current)
}

/// Opens the directory `rel` (relative, plain components) beneath `dir` without following any
/// link: a handle, or one that can also list it when `readable`.
pub fn open_dir_beneath(dir: BorrowedDir<'_>, rel: &Path, readable: bool) -> io::Result<Dir> {
    let start = nt::reopen(dir, platform::dir_access(false))?;
    platform::open_beneath(start, rel, readable)
}

/// Opens the subdirectory `name` of `dir` for listing its entries, never following a link.
pub fn open_subdir(dir: BorrowedDir<'_>, name: &OsStr) -> io::Result<Dir> {
    platform::open_dir_at(dir, name, true)
}

/// A handle of the same directory as `dir` that can list it.
pub fn reopen_readable(dir: BorrowedDir<'_>) -> io::Result<Dir> {
    nt::reopen(dir, platform::dir_access(true))
}

/// Opens `name` in `dir` for reading without following a link; the caller checks the kind with
/// `fstat` before reading.
pub fn open_for_read(dir: BorrowedDir<'_>, name: &OsStr) -> io::Result<File> {
    file_at(dir, name, FILE_GENERIC_READ, Disposition::Existing, 0)
}

/// Opens the existing file `name` in `dir` for reading and appending through one handle (no
/// write access but `FILE_APPEND_DATA`, so every write lands at the end), without following a
/// link: the caller checks the file on this very handle before it appends.
pub fn open_for_update(dir: BorrowedDir<'_>, name: &OsStr) -> io::Result<File> {
    let access = FILE_GENERIC_READ | (FILE_GENERIC_WRITE & !FILE_WRITE_DATA);
    file_at(
        dir,
        name,
        access,
        Disposition::Existing,
        FILE_NON_DIRECTORY_FILE,
    )
}

/// Opens the existing file `name` in `dir` for reading and writing in place (at offsets),
/// without following a link; the caller checks with `fstat` that it is the file it means.
pub fn open_in_place(dir: BorrowedDir<'_>, name: &OsStr) -> io::Result<File> {
    let access = FILE_GENERIC_READ | FILE_GENERIC_WRITE;
    file_at(
        dir,
        name,
        access,
        Disposition::Existing,
        FILE_NON_DIRECTORY_FILE,
    )
}

/// Opens `name` in `dir` for appending whole records, creating it (it takes the access control
/// list of the data directory, which is private to the user), never following a link.
pub fn open_for_log(dir: BorrowedDir<'_>, name: &OsStr) -> io::Result<File> {
    let access = FILE_GENERIC_WRITE & !FILE_WRITE_DATA;
    file_at(
        dir,
        name,
        access,
        Disposition::Either,
        FILE_NON_DIRECTORY_FILE,
    )
}

/// Creates `name` in `dir` for writing; fails if anything (even a dangling link) is there.
pub fn create_file_at(dir: BorrowedDir<'_>, name: &OsStr) -> io::Result<File> {
    file_at(
        dir,
        name,
        FILE_GENERIC_WRITE,
        Disposition::New,
        FILE_NON_DIRECTORY_FILE,
    )
}

/// [`create_file_at`] for reading as well as writing (a file written, then read back).
pub fn create_read_write_at(dir: BorrowedDir<'_>, name: &OsStr) -> io::Result<File> {
    let access = FILE_GENERIC_READ | FILE_GENERIC_WRITE;
    file_at(dir, name, access, Disposition::New, FILE_NON_DIRECTORY_FILE)
}

/// Opens (creating it) the lock file `name` in `dir` for reading and writing, never following
/// a link; the caller checks with `fstat` that it is a regular file of ours.
pub fn open_lock_file(dir: BorrowedDir<'_>, name: &OsStr) -> io::Result<File> {
    let access = FILE_GENERIC_READ | FILE_GENERIC_WRITE;
    file_at(
        dir,
        name,
        access,
        Disposition::Either,
        FILE_NON_DIRECTORY_FILE,
    )
}

/// The entry `name` of `dir` opened with `access`, never through a link, as a [`File`].
fn file_at(
    dir: BorrowedDir<'_>,
    name: &OsStr,
    access: FILE_ACCESS_RIGHTS,
    disposition: Disposition,
    options: u32,
) -> io::Result<File> {
    nt::open_no_follow(dir, name, access, disposition, options).map(File::from)
}
