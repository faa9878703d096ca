//! What only macOS has (see the table in [`super`]). Type-checked by `npm run check:targets`;
//! it cannot run on the Linux machines the tests run on.

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// `fcopyfile(COPYFILE_ACL)`: macOS's ACLs are not listed among the extended attributes.
pub(super) fn copy_acl(source: BorrowedFd<'_>, copy: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: two descriptors the caller keeps open; no copyfile state is passed.
    let done = unsafe {
        libc::fcopyfile(
            source.as_raw_fd(),
            copy.as_raw_fd(),
            std::ptr::null_mut(),
            libc::COPYFILE_ACL,
        )
    };
    match done {
        0 => Ok(()),
        _ => match io::Error::last_os_error() {
            // A file system without ACLs.
            e if e.raw_os_error() == Some(libc::ENOTSUP) => Ok(()),
            e => Err(e),
        },
    }
}

/// `fsync` on macOS leaves the data in the drive's cache; `F_FULLFSYNC` flushes that cache (for
/// everything written before, on the whole drive). Where the file system does not support it,
/// `fsync` is all there is (as SQLite does).
pub(super) fn flush_drive_cache(fd: BorrowedFd<'_>) -> io::Result<()> {
    match rustix::fs::fcntl_fullfsync(fd) {
        Ok(()) => Ok(()),
        Err(_) => rustix::fs::fsync(fd).map_err(io::Error::from),
    }
}

/// The name the volume stores the entry `path` under (`getattrlist(ATTR_CMN_NAME)`, not
/// following a final symlink): on a case-insensitive volume `README.MD` finds `README.md`, and
/// this says `README.md`. `None` if the system would not say.
pub(super) fn stored_name(path: &Path) -> Option<OsString> {
    /// What `getattrlist` writes for `ATTR_CMN_NAME`: the length of what it wrote, then a
    /// reference (offset from the reference itself, length with the final NUL) to the name,
    /// which follows (at most 255 UTF-16 units on HFS+, so at most 765 bytes of UTF-8).
    #[repr(C)]
    struct NameBuffer {
        length: u32,
        name: libc::attrreference_t,
        bytes: [u8; 1024],
    }
    let path = CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut request = libc::attrlist {
        bitmapcount: libc::ATTR_BIT_MAP_COUNT,
        reserved: 0,
        commonattr: libc::ATTR_CMN_NAME,
        volattr: 0,
        dirattr: 0,
        fileattr: 0,
        forkattr: 0,
    };
    let mut buffer = NameBuffer {
        length: 0,
        name: libc::attrreference_t {
            attr_dataoffset: 0,
            attr_length: 0,
        },
        bytes: [0; 1024],
    };
    // SAFETY: a NUL-terminated path, a request and a buffer that live across the call, and the
    // buffer's true size.
    let done = unsafe {
        libc::getattrlist(
            path.as_ptr(),
            (&mut request as *mut libc::attrlist).cast(),
            (&mut buffer as *mut NameBuffer).cast(),
            std::mem::size_of::<NameBuffer>(),
            libc::FSOPT_NOFOLLOW,
        )
    };
    if done != 0 {
        return None;
    }
    // The offset is from the reference, which is 4 bytes into the buffer; `bytes` starts 12
    // bytes in.
    let start = usize::try_from(buffer.name.attr_dataoffset)
        .ok()?
        .checked_sub(8)?;
    let length = usize::try_from(buffer.name.attr_length).ok()?;
    let name = buffer.bytes.get(start..start + length)?;
    let name = name.strip_suffix(b"\0").unwrap_or(name);
    (!name.is_empty() && !name.contains(&b'/')).then(|| OsStr::from_bytes(name).to_owned())
}
