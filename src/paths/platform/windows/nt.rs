//! Opening one name relative to a directory handle: `NtCreateFile` with
//! `OBJECT_ATTRIBUTES.RootDirectory`, as cap-primitives' `CreateFileAtW` does (cap-std,
//! Apache-2.0 WITH LLVM-exception OR MIT), always with `FILE_OPEN_REPARSE_POINT` so that a
//! reparse point is opened as itself, never followed. No path is ever rebuilt from a handle.

use std::ffi::OsStr;
use std::io;
use std::mem;
use std::os::windows::io::{AsRawHandle, BorrowedHandle, FromRawHandle, OwnedHandle};
use std::ptr;

use windows_sys::Wdk::Foundation::OBJECT_ATTRIBUTES;
use windows_sys::Wdk::Storage::FileSystem::{
    NtCreateFile, FILE_CREATE, FILE_OPEN, FILE_OPEN_IF, FILE_OPEN_REPARSE_POINT,
    FILE_SYNCHRONOUS_IO_NONALERT, NTCREATEFILE_CREATE_DISPOSITION, NTCREATEFILE_CREATE_OPTIONS,
};
use windows_sys::Win32::Foundation::{
    RtlNtStatusToDosError, ERROR_STOPPED_ON_SYMLINK, HANDLE, INVALID_HANDLE_VALUE, NTSTATUS,
    OBJ_CASE_INSENSITIVE, UNICODE_STRING,
};
use windows_sys::Win32::Storage::FileSystem::{
    ReOpenFile, FILE_ACCESS_RIGHTS, FILE_ATTRIBUTE_NORMAL, FILE_FLAG_BACKUP_SEMANTICS,
    FILE_FLAG_OPEN_REPARSE_POINT, FILE_READ_ATTRIBUTES, FILE_SHARE_DELETE, FILE_SHARE_READ,
    FILE_SHARE_WRITE, SYNCHRONIZE,
};
use windows_sys::Win32::System::IO::IO_STATUS_BLOCK;

use super::info;
use super::names;

/// What every open shares: reading, writing and deleting. We never lock another program out of
/// its own file; what it refuses us is a sharing violation (docs/windows.md).
pub const SHARE_ALL: u32 = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;

/// Whether an open may create the entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disposition {
    /// Only an existing entry (`FILE_OPEN`).
    Existing,
    /// Only a new one: anything already there, a link included, is `ERROR_ALREADY_EXISTS`
    /// (`FILE_CREATE`, as `O_CREAT | O_EXCL`).
    New,
    /// The existing one, or a new one (`FILE_OPEN_IF`, as `O_CREAT`).
    Either,
}

impl Disposition {
    fn nt(self) -> NTCREATEFILE_CREATE_DISPOSITION {
        match self {
            Disposition::Existing => FILE_OPEN,
            Disposition::New => FILE_CREATE,
            Disposition::Either => FILE_OPEN_IF,
        }
    }
}

/// Opens the entry `name` (one plain component, see [`names::component`]) of the directory `dir`
/// as itself: a symbolic link or junction is opened as the link, never followed. `access` is
/// what the handle may do (`SYNCHRONIZE` and `FILE_READ_ATTRIBUTES` are always added), `options`
/// the `NtCreateFile` create options (`FILE_DIRECTORY_FILE`, `FILE_NON_DIRECTORY_FILE`, …).
/// Creating an entry whose name Win32 reserves for a device (`aux.txt`) is refused
/// (`ERROR_INVALID_NAME`): no other program could open it.
pub fn open_entry(
    dir: BorrowedHandle<'_>,
    name: &OsStr,
    access: FILE_ACCESS_RIGHTS,
    disposition: Disposition,
    options: NTCREATEFILE_CREATE_OPTIONS,
) -> io::Result<OwnedHandle> {
    let wide = names::component(name)?;
    if disposition != Disposition::Existing && names::is_reserved_device(name) {
        return Err(io::Error::from_raw_os_error(
            windows_sys::Win32::Foundation::ERROR_INVALID_NAME as i32,
        ));
    }
    create_relative(
        dir,
        &wide,
        access,
        disposition,
        options | FILE_OPEN_REPARSE_POINT,
    )
}

/// [`open_entry`] refusing a link: a symbolic link, junction or any other name-surrogate reparse
/// point is `ERROR_STOPPED_ON_SYMLINK` (as `O_NOFOLLOW`'s `ELOOP`). Any other reparse point (a
/// cloud placeholder, a deduplicated file) is the file itself: it is opened again by the same
/// name, this time through its file system filter, and accepted only if it is the same file.
pub fn open_no_follow(
    dir: BorrowedHandle<'_>,
    name: &OsStr,
    access: FILE_ACCESS_RIGHTS,
    disposition: Disposition,
    options: NTCREATEFILE_CREATE_OPTIONS,
) -> io::Result<OwnedHandle> {
    let handle = open_entry(dir, name, access, disposition, options)?;
    let tag = info::attribute_tag(as_borrowed(&handle))?;
    if tag.is_link() {
        return Err(io::Error::from_raw_os_error(
            ERROR_STOPPED_ON_SYMLINK as i32,
        ));
    }
    if !tag.is_reparse_point() {
        return Ok(handle);
    }
    let wide = names::component(name)?;
    let served = create_relative(dir, &wide, access, Disposition::Existing, options)?;
    if info::id(as_borrowed(&served))? != info::id(as_borrowed(&handle))? {
        // Another entry took the name in between: nothing is followed.
        return Err(io::Error::from_raw_os_error(
            ERROR_STOPPED_ON_SYMLINK as i32,
        ));
    }
    Ok(served)
}

/// Another handle of what `handle` is open on, with `access` (`ReOpenFile`; the entry itself,
/// a link included, is reopened, never what a link points to).
pub fn reopen(handle: BorrowedHandle<'_>, access: FILE_ACCESS_RIGHTS) -> io::Result<OwnedHandle> {
    // SAFETY: a valid handle for the call; the result is checked before it is owned.
    let raw = unsafe {
        ReOpenFile(
            handle.as_raw_handle() as HANDLE,
            access | SYNCHRONIZE | FILE_READ_ATTRIBUTES,
            SHARE_ALL,
            FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT,
        )
    };
    owned(raw)
}

/// The handle `raw` a Win32 call returned, owned, or the thread's last error.
pub(in crate::paths) fn owned(raw: HANDLE) -> io::Result<OwnedHandle> {
    if raw == INVALID_HANDLE_VALUE || raw.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a handle just returned to us and owned by no one else.
    Ok(unsafe { OwnedHandle::from_raw_handle(raw as _) })
}

/// The Win32 error an NT status means, as an `io::Error`.
pub(in crate::paths) fn status_error(status: NTSTATUS) -> io::Error {
    // SAFETY: a pure conversion.
    io::Error::from_raw_os_error(unsafe { RtlNtStatusToDosError(status) } as i32)
}

fn as_borrowed(handle: &OwnedHandle) -> BorrowedHandle<'_> {
    std::os::windows::io::AsHandle::as_handle(handle)
}

/// `NtCreateFile` of the (checked) UTF-16 name `wide` relative to `dir`, looked up without
/// regard to case as every Win32 program looks it up (a directory marked case-sensitive is
/// still exact).
fn create_relative(
    dir: BorrowedHandle<'_>,
    wide: &[u16],
    access: FILE_ACCESS_RIGHTS,
    disposition: Disposition,
    options: NTCREATEFILE_CREATE_OPTIONS,
) -> io::Result<OwnedHandle> {
    // `names::component` keeps names to 255 units, so the byte length fits.
    let length = (wide.len() * mem::size_of::<u16>()) as u16;
    let object_name = UNICODE_STRING {
        Length: length,
        MaximumLength: length,
        Buffer: wide.as_ptr() as *mut u16,
    };
    let attributes = OBJECT_ATTRIBUTES {
        Length: mem::size_of::<OBJECT_ATTRIBUTES>() as u32,
        RootDirectory: dir.as_raw_handle() as HANDLE,
        ObjectName: &object_name,
        Attributes: OBJ_CASE_INSENSITIVE,
        SecurityDescriptor: ptr::null(),
        SecurityQualityOfService: ptr::null(),
    };
    // SAFETY: every pointer is to a live local for the duration of the call; zeroed is a valid
    // `IO_STATUS_BLOCK`.
    let mut io_status: IO_STATUS_BLOCK = unsafe { mem::zeroed() };
    let mut handle: HANDLE = ptr::null_mut();
    // SAFETY: as above; `handle` is written only on success.
    let status = unsafe {
        NtCreateFile(
            &mut handle,
            access | SYNCHRONIZE | FILE_READ_ATTRIBUTES,
            &attributes,
            &mut io_status,
            ptr::null(),
            FILE_ATTRIBUTE_NORMAL,
            SHARE_ALL,
            disposition.nt(),
            options | FILE_SYNCHRONOUS_IO_NONALERT,
            ptr::null(),
            0,
        )
    };
    if status < 0 {
        return Err(status_error(status));
    }
    // SAFETY: a handle NtCreateFile just opened for us.
    Ok(unsafe { OwnedHandle::from_raw_handle(handle as _) })
}
