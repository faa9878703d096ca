//! Windows' twin of `change.rs` (../../../docs/windows.md#renames-that-do-not-replace-and-the-swap):
//! renames, links, removals and new directories, each through a handle of the entry opened by
//! one name relative to a held directory handle (never following a link), and a destination
//! named relative to the destination directory's handle. No path is rebuilt from a handle.

use std::ffi::OsStr;
use std::io;
use std::mem;
use std::os::windows::io::{AsHandle, AsRawHandle};

use windows_sys::Wdk::Storage::FileSystem::{
    FileLinkInformation, FileRenameInformation, FileRenameInformationEx, NtSetInformationFile,
    FILE_DIRECTORY_FILE, FILE_INFORMATION_CLASS,
};
use windows_sys::Win32::Foundation::{
    ERROR_ACCESS_DENIED, ERROR_DIRECTORY, ERROR_INVALID_FUNCTION, ERROR_INVALID_NAME,
    ERROR_INVALID_PARAMETER, ERROR_NOT_SUPPORTED, HANDLE,
};
use windows_sys::Win32::Storage::FileSystem::{DELETE, FILE_LIST_DIRECTORY};
use windows_sys::Win32::System::WindowsProgramming::{
    FILE_RENAME_FLAG_POSIX_SEMANTICS, FILE_RENAME_FLAG_REPLACE_IF_EXISTS,
};
use windows_sys::Win32::System::IO::IO_STATUS_BLOCK;

use crate::paths::platform::{dispose, info, names, nt, nt::Disposition, reparse};
use crate::paths::BorrowedDir;

/// Swaps two entries atomically: Windows has no such operation, so this is always the error
/// for which [`is_unsupported_rename`] is true, and callers take the way they take on a Unix
/// file system without `RENAME_EXCHANGE` (docs/windows.md names what that costs).
pub fn rename_exchange(
    dir_a: BorrowedDir<'_>,
    a: &OsStr,
    dir_b: BorrowedDir<'_>,
    b: &OsStr,
) -> io::Result<()> {
    let _ = (dir_a, a, dir_b, b);
    Err(io::Error::from_raw_os_error(ERROR_NOT_SUPPORTED as i32))
}

/// Whether a rename failed only because the system or file system lacks what was asked (a
/// swap; a rename class it does not know).
pub fn is_unsupported_rename(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error().map(|code| code as u32),
        Some(ERROR_NOT_SUPPORTED | ERROR_INVALID_PARAMETER | ERROR_INVALID_FUNCTION)
    )
}

/// Renames `from_name` in `from_dir` to `to_name` in `to_dir` without replacing an existing
/// destination (an existing one, a link included → `ERROR_ALREADY_EXISTS`, kind
/// `AlreadyExists`), atomically in the file system: `FileRenameInformationEx` with POSIX
/// semantics and without `REPLACE_IF_EXISTS`, else the plain `FileRenameInformation` with
/// `ReplaceIfExists = FALSE` (the same guarantee). The entry is renamed as itself: a link is
/// renamed, never its target.
pub fn rename_noreplace(
    from_dir: BorrowedDir<'_>,
    from_name: &OsStr,
    to_dir: BorrowedDir<'_>,
    to_name: &OsStr,
) -> io::Result<()> {
    rename(from_dir, from_name, to_dir, to_name, false)
}

/// Renames `from_name` in `from_dir` to `to_name` in `to_dir`, replacing whatever file is there
/// (a file of ours taking its final name, as in the data directory).
pub fn rename_replacing(
    from_dir: BorrowedDir<'_>,
    from_name: &OsStr,
    to_dir: BorrowedDir<'_>,
    to_name: &OsStr,
) -> io::Result<()> {
    rename(from_dir, from_name, to_dir, to_name, true)
}

fn rename(
    from_dir: BorrowedDir<'_>,
    from_name: &OsStr,
    to_dir: BorrowedDir<'_>,
    to_name: &OsStr,
    replace: bool,
) -> io::Result<()> {
    let target = new_name(to_name)?;
    let entry = nt::open_entry(from_dir, from_name, DELETE, Disposition::Existing, 0)?;
    let flags = FILE_RENAME_FLAG_POSIX_SEMANTICS
        | if replace {
            FILE_RENAME_FLAG_REPLACE_IF_EXISTS
        } else {
            0
        };
    let handle = entry.as_handle();
    match set_name_info(handle, FileRenameInformationEx, flags, to_dir, &target) {
        Err(e) if is_unsupported_rename(&e) => set_name_info(
            handle,
            FileRenameInformation,
            u32::from(replace),
            to_dir,
            &target,
        ),
        other => other,
    }
}

/// Gives the file `from_name` in `from_dir` the new name `to_name` in `to_dir` (a hard link; a
/// link is linked itself, never followed; an existing `to_name` → `AlreadyExists`).
pub fn hard_link_at(
    from_dir: BorrowedDir<'_>,
    from_name: &OsStr,
    to_dir: BorrowedDir<'_>,
    to_name: &OsStr,
) -> io::Result<()> {
    let target = new_name(to_name)?;
    let entry = nt::open_entry(from_dir, from_name, 0, Disposition::Existing, 0)?;
    set_name_info(entry.as_handle(), FileLinkInformation, 0, to_dir, &target)
}

/// Unlinks a file or link `name` in `dir` (a directory is refused with `ERROR_ACCESS_DENIED`, as
/// `DeleteFileW` refuses it; a link to a directory is a link, and goes).
pub fn unlink_at(dir: BorrowedDir<'_>, name: &OsStr) -> io::Result<()> {
    let entry = nt::open_entry(dir, name, DELETE, Disposition::Existing, 0)?;
    let tag = info::attribute_tag(entry.as_handle())?;
    if tag.is_directory() && !tag.is_link() {
        return Err(io::Error::from_raw_os_error(ERROR_ACCESS_DENIED as i32));
    }
    dispose::delete(entry.as_handle())
}

/// Removes the empty directory `name` in `dir` (a link there is `ERROR_DIRECTORY`, as `rmdir`
/// of a symlink is `ENOTDIR`; a directory with entries is `ERROR_DIR_NOT_EMPTY`).
pub fn rmdir_at(dir: BorrowedDir<'_>, name: &OsStr) -> io::Result<()> {
    let entry = nt::open_entry(
        dir,
        name,
        DELETE,
        Disposition::Existing,
        FILE_DIRECTORY_FILE,
    )?;
    if info::attribute_tag(entry.as_handle())?.is_link() {
        return Err(io::Error::from_raw_os_error(ERROR_DIRECTORY as i32));
    }
    dispose::delete(entry.as_handle())
}

/// Creates the directory `name` in `dir`. Windows has no mode: the new directory takes the
/// access control list `dir` passes on.
pub fn mkdir_umasked_at(dir: BorrowedDir<'_>, name: &OsStr, mode: u32) -> io::Result<()> {
    let _ = mode;
    mkdir_at(dir, name)
}

/// Creates the directory `name` in `dir` (it takes the access control list `dir` passes on: in
/// the data directory, under the user's profile, that is private to the user).
pub fn mkdir_at(dir: BorrowedDir<'_>, name: &OsStr) -> io::Result<()> {
    nt::open_entry(
        dir,
        name,
        FILE_LIST_DIRECTORY,
        Disposition::New,
        FILE_DIRECTORY_FILE,
    )
    .map(drop)
}

/// A name an entry is about to take, checked as [`nt::open_entry`] checks a name it creates.
fn new_name(name: &OsStr) -> io::Result<Vec<u16>> {
    let wide = names::component(name)?;
    if names::is_reserved_device(name) {
        return Err(io::Error::from_raw_os_error(ERROR_INVALID_NAME as i32));
    }
    Ok(wide)
}

/// `NtSetInformationFile` of a `FILE_RENAME_INFORMATION` or `FILE_LINK_INFORMATION` (one layout:
/// `Flags`/`ReplaceIfExists` at 0, `RootDirectory` at 8, `FileNameLength` at 16, the name at 20)
/// naming `name` relative to the directory `to_dir`.
fn set_name_info(
    entry: BorrowedDir<'_>,
    class: FILE_INFORMATION_CLASS,
    flags: u32,
    to_dir: BorrowedDir<'_>,
    name: &[u16],
) -> io::Result<()> {
    const ROOT: usize = 8;
    const LENGTH: usize = 16;
    const NAME: usize = 20;
    // The structure's own size (its one-character name array and the padding after it): the
    // least length the system takes. A one-character name would make 22 bytes, refused with
    // STATUS_INVALID_PARAMETER (Wine checks it; so may Windows).
    const WHOLE: usize = 24;
    let name_bytes = name.len() * mem::size_of::<u16>();
    let size = (NAME + name_bytes).max(WHOLE);
    // u64s: the structure holds a handle, so it is 8-byte aligned.
    let mut buffer = vec![0u64; size.div_ceil(8)];
    // SAFETY: the writes stay inside `buffer` (`size` bytes, rounded up to whole u64s).
    unsafe {
        let base = buffer.as_mut_ptr().cast::<u8>();
        base.cast::<u32>().write(flags);
        base.add(ROOT)
            .cast::<HANDLE>()
            .write(to_dir.as_raw_handle() as HANDLE);
        base.add(LENGTH).cast::<u32>().write(name_bytes as u32);
        std::ptr::copy_nonoverlapping(name.as_ptr(), base.add(NAME).cast::<u16>(), name.len());
    }
    // SAFETY: zeroes are a valid `IO_STATUS_BLOCK`.
    let mut io_status: IO_STATUS_BLOCK = unsafe { mem::zeroed() };
    // SAFETY: `buffer` holds a complete structure of `size` bytes for the duration of the call.
    let status = unsafe {
        NtSetInformationFile(
            entry.as_raw_handle() as HANDLE,
            &mut io_status,
            buffer.as_ptr().cast(),
            size as u32,
            class,
        )
    };
    if status < 0 {
        return Err(nt::status_error(status));
    }
    Ok(())
}

/// Creates the symbolic link `name` in `dir` pointing at `target` (see
/// [`reparse::symlink_at`]: a new entry only; it needs administrator rights on Windows).
pub fn symlink_at(target: &OsStr, dir: BorrowedDir<'_>, name: &OsStr) -> io::Result<()> {
    reparse::symlink_at(target, dir, name)
}
