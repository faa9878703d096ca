//! What an OS error means, named once: the errno values the crate branches on differ between
//! Linux and macOS (and Windows has its own error numbers), and only this layer knows them. The rest of the crate asks [`cause`] and
//! compares [`Cause`]s; it never reads a raw error number.

use std::io;

/// Why an OS call failed, as far as the crate tells failures apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// `ENOENT`: the entry (or a directory above it) does not exist.
    NotFound,
    /// `ENOTDIR`: a component that had to be a directory is not one.
    NotADirectory,
    /// `ENOTEMPTY`: the directory is not empty.
    NotEmpty,
    /// `EEXIST`: the name is taken.
    Exists,
    /// `ELOOP`: a symbolic link where none may be followed.
    Loop,
    /// `EXDEV`: across file systems, or out of the tree a lookup was confined to.
    CrossDevice,
    /// `ENXIO`: no device behind the name (a FIFO opened without a writer, a socket).
    NoDevice,
    /// `EACCES` or `EPERM`: the operating system denied it.
    Permission,
    /// `EROFS`: a read-only file system.
    ReadOnly,
    /// `ENOSPC`: no space left on the device.
    NoSpace,
    /// `EINVAL`: an argument the call refused (a rename into a directory's own subtree).
    Invalid,
    /// `ESRCH`: no such process.
    NoProcess,
    /// Windows only: another program has the file open without sharing what was asked
    /// (`ERROR_SHARING_VIOLATION`, `ERROR_LOCK_VIOLATION`).
    #[cfg(windows)]
    InUse,
    /// Anything else, or an error that is not the operating system's.
    Other,
}

/// Why `err` happened.
pub fn cause(err: &io::Error) -> Cause {
    #[cfg(unix)]
    use libc_codes::*;
    #[cfg(windows)]
    use win_codes::*;
    match err.raw_os_error() {
        Some(ENOENT) => Cause::NotFound,
        Some(ENOTDIR) => Cause::NotADirectory,
        Some(ENOTEMPTY) => Cause::NotEmpty,
        Some(EEXIST) => Cause::Exists,
        Some(ELOOP) => Cause::Loop,
        Some(EXDEV) => Cause::CrossDevice,
        Some(ENXIO) => Cause::NoDevice,
        Some(EACCES | EPERM) => Cause::Permission,
        Some(EROFS) => Cause::ReadOnly,
        Some(ENOSPC) => Cause::NoSpace,
        Some(EINVAL) => Cause::Invalid,
        Some(ESRCH) => Cause::NoProcess,
        #[cfg(windows)]
        Some(code) => windows_cause(code),
        _ => Cause::Other,
    }
}

/// The Windows errors that have a cause beyond the first one each [`win_codes`] name has.
#[cfg(windows)]
fn windows_cause(code: i32) -> Cause {
    use windows_sys::Win32::Foundation::*;
    match code as u32 {
        ERROR_PATH_NOT_FOUND | ERROR_INVALID_DRIVE | ERROR_BAD_NETPATH => Cause::NotFound,
        ERROR_ALREADY_EXISTS => Cause::Exists,
        ERROR_CANT_RESOLVE_FILENAME => Cause::Loop,
        ERROR_PRIVILEGE_NOT_HELD => Cause::Permission,
        ERROR_HANDLE_DISK_FULL => Cause::NoSpace,
        ERROR_INVALID_NAME | ERROR_BAD_PATHNAME => Cause::Invalid,
        ERROR_SHARING_VIOLATION | ERROR_LOCK_VIOLATION => Cause::InUse,
        _ => Cause::Other,
    }
}

/// The OS error that has `cause` (`EACCES` for [`Cause::Permission`]); `Other` is a plain
/// error of kind `Other`.
pub fn error(cause: Cause) -> io::Error {
    #[cfg(unix)]
    use libc_codes::*;
    #[cfg(windows)]
    use win_codes::*;
    let code = match cause {
        Cause::NotFound => ENOENT,
        Cause::NotADirectory => ENOTDIR,
        Cause::NotEmpty => ENOTEMPTY,
        Cause::Exists => EEXIST,
        Cause::Loop => ELOOP,
        Cause::CrossDevice => EXDEV,
        Cause::NoDevice => ENXIO,
        Cause::Permission => EACCES,
        Cause::ReadOnly => EROFS,
        Cause::NoSpace => ENOSPC,
        Cause::Invalid => EINVAL,
        Cause::NoProcess => ESRCH,
        #[cfg(windows)]
        Cause::InUse => windows_sys::Win32::Foundation::ERROR_SHARING_VIOLATION as i32,
        Cause::Other => return io::Error::other("other"),
    };
    io::Error::from_raw_os_error(code)
}

/// The errno values, named (rustix exposes them as `Errno`, but `std::io::Error` carries the
/// raw number, which differs between Linux and macOS). For this layer only.
#[cfg(unix)]
pub(in crate::paths) mod libc_codes {
    use rustix::io::Errno;

    pub const EPERM: i32 = Errno::PERM.raw_os_error();
    pub const ENXIO: i32 = Errno::NXIO.raw_os_error();
    pub const ENOENT: i32 = Errno::NOENT.raw_os_error();
    pub const EACCES: i32 = Errno::ACCESS.raw_os_error();
    pub const EEXIST: i32 = Errno::EXIST.raw_os_error();
    pub const EXDEV: i32 = Errno::XDEV.raw_os_error();
    pub const ENOTDIR: i32 = Errno::NOTDIR.raw_os_error();
    pub const ENOSPC: i32 = Errno::NOSPC.raw_os_error();
    pub const EROFS: i32 = Errno::ROFS.raw_os_error();
    pub const ELOOP: i32 = Errno::LOOP.raw_os_error();
    pub const ENOTEMPTY: i32 = Errno::NOTEMPTY.raw_os_error();
    pub const EINVAL: i32 = Errno::INVAL.raw_os_error();
    pub const ESRCH: i32 = Errno::SRCH.raw_os_error();
}

/// The Windows error numbers that first mean each errno's cause, under the errno's name, so
/// that [`cause`] and [`error`] read the same on every platform. For this layer only.
#[cfg(windows)]
pub(in crate::paths) mod win_codes {
    use windows_sys::Win32::Foundation::*;

    pub const EPERM: i32 = ERROR_PRIVILEGE_NOT_HELD as i32;
    /// No device behind a name: Windows has no FIFOs; a device that is not there.
    pub const ENXIO: i32 = ERROR_DEV_NOT_EXIST as i32;
    pub const ENOENT: i32 = ERROR_FILE_NOT_FOUND as i32;
    pub const EACCES: i32 = ERROR_ACCESS_DENIED as i32;
    pub const EEXIST: i32 = ERROR_FILE_EXISTS as i32;
    pub const EXDEV: i32 = ERROR_NOT_SAME_DEVICE as i32;
    /// A directory was needed (`STATUS_NOT_A_DIRECTORY`).
    pub const ENOTDIR: i32 = ERROR_DIRECTORY as i32;
    pub const ENOSPC: i32 = ERROR_DISK_FULL as i32;
    pub const EROFS: i32 = ERROR_WRITE_PROTECT as i32;
    /// A link where none may be followed (`FILE_OPEN_REPARSE_POINT` and a link found).
    pub const ELOOP: i32 = ERROR_STOPPED_ON_SYMLINK as i32;
    pub const ENOTEMPTY: i32 = ERROR_DIR_NOT_EMPTY as i32;
    pub const EINVAL: i32 = ERROR_INVALID_PARAMETER as i32;
    /// No such process (`OpenProcess` of a pid no process has).
    pub const ESRCH: i32 = ERROR_NOT_FOUND as i32;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every cause is the cause of the error made for it.
    #[test]
    fn each_cause_round_trips() {
        let causes = [
            Cause::NotFound,
            Cause::NotADirectory,
            Cause::NotEmpty,
            Cause::Exists,
            Cause::Loop,
            Cause::CrossDevice,
            Cause::NoDevice,
            Cause::Permission,
            Cause::ReadOnly,
            Cause::NoSpace,
            Cause::Invalid,
            Cause::NoProcess,
            Cause::Other,
        ];
        #[cfg(windows)]
        let causes = [causes.as_slice(), &[Cause::InUse]].concat();
        for c in causes {
            assert_eq!(cause(&error(c)), c);
        }
        #[cfg(unix)]
        let eperm = io::Error::from_raw_os_error(libc_codes::EPERM);
        #[cfg(windows)]
        let eperm = io::Error::from_raw_os_error(win_codes::EPERM);
        assert_eq!(cause(&eperm), Cause::Permission);
        assert_eq!(cause(&io::Error::other("not the OS's")), Cause::Other);
    }
}
