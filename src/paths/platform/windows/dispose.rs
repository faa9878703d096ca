//! Deleting through a handle: the entry removed is the one the handle was opened on (and
//! checked through), never whatever holds its name by then.

use std::io;
use std::mem;
use std::os::windows::io::{AsRawHandle, BorrowedHandle};

use windows_sys::Win32::Foundation::{ERROR_INVALID_PARAMETER, ERROR_NOT_SUPPORTED, HANDLE};
use windows_sys::Win32::Storage::FileSystem::{
    FileDispositionInfo, FileDispositionInfoEx, SetFileInformationByHandle,
    FILE_DISPOSITION_FLAG_DELETE, FILE_DISPOSITION_FLAG_IGNORE_READONLY_ATTRIBUTE,
    FILE_DISPOSITION_FLAG_POSIX_SEMANTICS, FILE_DISPOSITION_INFO, FILE_DISPOSITION_INFO_EX,
    FILE_INFO_BY_HANDLE_CLASS,
};

/// Deletes what `handle` is open on (it was opened with `DELETE` access; a link is deleted as
/// itself). With POSIX semantics the name is gone at once, even while another program has the
/// file open, and the read-only attribute does not stop it (as `unlink` on Unix). Where the file
/// system lacks them (FAT, exFAT, some network shares) the plain disposition is set: the name
/// then stays until the last handle on the entry is closed (docs/windows.md).
pub fn delete(handle: BorrowedHandle<'_>) -> io::Result<()> {
    let posix = FILE_DISPOSITION_INFO_EX {
        Flags: FILE_DISPOSITION_FLAG_DELETE
            | FILE_DISPOSITION_FLAG_POSIX_SEMANTICS
            | FILE_DISPOSITION_FLAG_IGNORE_READONLY_ATTRIBUTE,
    };
    match set(handle, FileDispositionInfoEx, &posix) {
        Err(e) if is_unknown_class(&e) => set(
            handle,
            FileDispositionInfo,
            &FILE_DISPOSITION_INFO { DeleteFile: true },
        ),
        other => other,
    }
}

/// Whether a `SetFileInformationByHandle` failed only because the system or file system does
/// not know the class asked for (an `…Ex` class before Windows 10 1709, or on FAT).
pub fn is_unknown_class(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error().map(|code| code as u32),
        Some(ERROR_INVALID_PARAMETER | ERROR_NOT_SUPPORTED)
    )
}

/// One `SetFileInformationByHandle` of a fixed-size class.
fn set<T>(
    handle: BorrowedHandle<'_>,
    class: FILE_INFO_BY_HANDLE_CLASS,
    info: &T,
) -> io::Result<()> {
    // SAFETY: `info` is a readable value of the class's type for the duration of the call.
    let ok = unsafe {
        SetFileInformationByHandle(
            handle.as_raw_handle() as HANDLE,
            class,
            (info as *const T).cast(),
            mem::size_of::<T>() as u32,
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
