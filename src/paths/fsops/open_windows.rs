//! Windows' twin of `open.rs` (../../../docs/windows.md): the same functions, each a relative
//! `NtCreateFile` through a held directory handle that never follows a link
//! ([`platform::nt`]), so the guarantees are the ones `open.rs` states; the primitives
//! [`make_dirs`](super::make_dirs) makes missing directories with.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::windows::io::{AsHandle, OwnedHandle};
use std::path::Path;

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

/// The error of a path that leaves the tree it was confined to (`ERROR_NOT_SAME_DEVICE`).
pub(super) fn cross_device() -> io::Error {
    io::Error::from_raw_os_error(ERROR_NOT_SAME_DEVICE as i32)
}

/// Opens the anchor (canonical: every link on its path already resolved; the one thing opened
/// by path, as on Unix) as a directory handle, refusing it if it is itself a link.
pub(super) fn open_anchor(anchor: &Path) -> io::Result<OwnedHandle> {
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

/// `dir` relative to `anchor`, or [`cross_device`] when it is not inside it.
pub(super) fn relative<'a>(anchor: &Path, dir: &'a Path) -> io::Result<&'a Path> {
    dir.strip_prefix(anchor).map_err(|_| cross_device())
}

/// Opens the directory `dir` (canonical, inside `anchor`) without following any link on the
/// way. `readable` gives a handle that can also be listed.
pub fn open_dir(anchor: &Path, dir: &Path, readable: bool) -> io::Result<Dir> {
    let rel = relative(anchor, dir)?;
    platform::open_beneath(open_anchor(anchor)?, rel, readable)
}

/// Opens the subdirectory `name` of `dir` as a handle, never following a link (one component
/// of the walk in [`make_dirs`](super::make_dirs)).
pub(super) fn open_handle_at(dir: BorrowedDir<'_>, name: &OsStr) -> io::Result<Dir> {
    platform::open_dir_at(dir, name, false)
}

/// Makes the directory `name` in `dir` if it is missing: `Ok(true)` when this call made it,
/// `Ok(false)` when an entry was there already. `mode` has no meaning on Windows (a new
/// directory takes the access control list its parent passes on).
pub(super) fn make_dir(dir: BorrowedDir<'_>, name: &OsStr, mode: u32) -> io::Result<bool> {
    let _ = mode;
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

/// Removes the empty directory `name` of `parent` that a failed [`make_dirs`](super::make_dirs)
/// call made, if it is still the one with `identity`: opened, checked and deleted through one
/// handle.
pub(super) fn remove_made_dir(
    parent: BorrowedDir<'_>,
    name: &OsStr,
    identity: (u64, u64),
) -> io::Result<()> {
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

/// Opens the many files a search reads, as [`open_for_read`] does (the Unix one also keeps
/// their access times where it can).
#[derive(Debug, Default)]
pub struct SearchOpener;

impl SearchOpener {
    /// Opens `name` in `dir` for reading (see [`open_for_read`]).
    pub fn open(&self, dir: BorrowedDir<'_>, name: &OsStr) -> io::Result<File> {
        open_for_read(dir, name)
    }
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

/// [`create_file_at`]: a new file takes the access control list its directory passes on, as
/// one made with 0666 minus umask takes the umask on Unix.
pub fn create_file_umasked_at(dir: BorrowedDir<'_>, name: &OsStr) -> io::Result<File> {
    create_file_at(dir, name)
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
