//! Windows' twin of `meta.rs` (../../../docs/windows.md#durability-locks-the-rest-of-fsops):
//! owner, mode, times, durability and locks, each set through a handle.
//!
//! A rewrite keeps the file's access control list and read-only bit ([`keep_metadata_of`]);
//! not its NTFS extended attributes or alternate data streams, and owners are not compared
//! ([`effective_uid`]): both named in docs/windows.md.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::mem;
use std::os::windows::io::AsRawHandle;

use windows_sys::Wdk::Storage::FileSystem::{
    FileFsFullSizeInformation, NtQueryVolumeInformationFile,
};
use windows_sys::Win32::Foundation::{
    ERROR_ACCESS_DENIED, ERROR_LOCK_VIOLATION, ERROR_WRITE_PROTECT, HANDLE,
};
use windows_sys::Win32::Storage::FileSystem::{
    FileBasicInfo, FlushFileBuffers, LockFileEx, SetFileInformationByHandle, FILE_ADD_FILE,
    FILE_ADD_SUBDIRECTORY, FILE_ATTRIBUTE_NORMAL, FILE_ATTRIBUTE_READONLY, FILE_BASIC_INFO,
    FILE_WRITE_ATTRIBUTES, FILE_WRITE_DATA, LOCKFILE_EXCLUSIVE_LOCK, LOCKFILE_FAIL_IMMEDIATELY,
};
use windows_sys::Win32::System::IO::{IO_STATUS_BLOCK, OVERLAPPED};

use super::OthersMayWrite;
use crate::paths::platform::{self, info, nt, nt::Disposition};
use crate::paths::{AsDir, BorrowedDir};

/// Gives `new` (the next version of `name` in `dir`, whose stat was `old`) what a rewrite keeps
/// on Windows: the access control list of `name` (if it is still that file and readable), then
/// the read-only bit. Extended attributes and alternate data streams are not kept
/// (docs/windows.md).
pub(super) fn keep_metadata_of(
    dir: BorrowedDir<'_>,
    name: &OsStr,
    old: &crate::paths::Stat,
    new: &File,
) -> io::Result<()> {
    if let Ok(current) = super::open_for_read(dir, name) {
        if super::fstat(&current).is_ok_and(|now| (now.dev, now.ino) == (old.dev, old.ino)) {
            platform::copy_acl(current.as_dir(), new.as_dir())?;
        }
    }
    set_mode_fd(new, old.mode)
}

/// The user id `Stat.uid` compares with: `0` on Windows, as every `Stat.uid` is there (owners
/// are SIDs: [`owned_by_user`] is the check).
pub fn effective_uid() -> u32 {
    crate::paths::process::effective_user()
}

/// Whether the entry open as `handle` belongs to the user this process runs as: its owner SID
/// is the token's user or default owner ([`platform::owned_by_user`]). `uid` means nothing on
/// Windows; without a handle (an entry looked at before it is opened) nothing can be told, and
/// the check is made again on the handle once it is open.
pub fn owned_by_user(uid: u32, handle: Option<BorrowedDir<'_>>) -> io::Result<bool> {
    let _ = uid;
    handle.map_or(Ok(true), platform::owned_by_user)
}

/// Whether an account other than this process's user (nor the system or the Administrators)
/// may write the entry open as `handle`, by its access list; `path` as shown, for the fix. The
/// synthesised `mode` never has group or other bits, so it says nothing here; an entry not open
/// (`handle` is `None`) is checked once it is.
pub fn others_may_write(
    mode: u32,
    handle: Option<BorrowedDir<'_>>,
    path: &str,
) -> io::Result<Option<OthersMayWrite>> {
    let _ = mode;
    let Some(handle) = handle else {
        return Ok(None);
    };
    Ok(platform::others_may_write(handle)?.map(|who| {
        let fix = if who.starts_with("S-") {
            format!("icacls \"{path}\" /remove:g *{who}")
        } else {
            format!("icacls \"{path}\" /reset")
        };
        OthersMayWrite {
            how: format!("its access list lets {who} write it"),
            fix,
        }
    }))
}

/// How an owner that is not this process's user is named in a message.
pub fn other_owner(uid: u32) -> String {
    let _ = uid;
    "its owner is not the account this process runs as".to_owned()
}

/// Gives `handle` the owner `uid` and group `gid`, as far as we may: Windows has neither (a
/// `Stat` says 0 for both, and a new file's owner is the user who made it, as an unprivileged
/// `chown` leaves it on Unix), so there is nothing to give.
pub fn give_owner(handle: impl AsDir, uid: u32, gid: u32) -> io::Result<()> {
    let _ = (handle.as_dir(), uid, gid);
    Ok(())
}

/// [`give_owner`] for the link `name` in `dir` itself: nothing to give on Windows.
pub fn give_link_owner(dir: BorrowedDir<'_>, name: &OsStr, uid: u32, gid: u32) -> io::Result<()> {
    let _ = (dir, name, uid, gid);
    Ok(())
}

/// Flushes a directory given any handle of it (best effort, as on Unix: NTFS journals a rename,
/// and a directory we may not write cannot be flushed).
pub fn fsync_dir(dir: BorrowedDir<'_>) {
    if let Ok(writable) = nt::reopen(dir, FILE_ADD_FILE) {
        let _ = flush(std::os::windows::io::AsHandle::as_handle(&writable));
    }
}

/// Flushes an open file (or a directory, through a handle that may write it) to the disk.
pub fn sync_fd(handle: impl AsDir) -> io::Result<()> {
    let handle = handle.as_dir();
    if info::attribute_tag(handle)?.is_directory() {
        let writable = nt::reopen(handle, FILE_ADD_FILE)?;
        return flush(std::os::windows::io::AsHandle::as_handle(&writable));
    }
    flush(handle)
}

fn flush(handle: BorrowedDir<'_>) -> io::Result<()> {
    // SAFETY: a valid handle for the call.
    if unsafe { FlushFileBuffers(handle.as_raw_handle() as HANDLE) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// A file or directory of a new tree is complete: make it durable (see
/// [`platform::sync_written`]).
pub fn sync_written(handle: impl AsDir) -> io::Result<()> {
    platform::sync_written(handle.as_dir())
}

/// Makes a new tree in `parent` durable, before it is renamed into place there (see
/// [`platform::sync_new_tree`]).
pub fn sync_new_tree(parent: BorrowedDir<'_>) -> io::Result<()> {
    platform::sync_new_tree(parent)
}

/// `FILE_FS_FULL_SIZE_INFORMATION` (declared here: its feature of `windows-sys` is the whole
/// kernel-mode API).
#[repr(C)]
struct FullSize {
    total_units: i64,
    caller_available_units: i64,
    actual_available_units: i64,
    sectors_per_unit: u32,
    bytes_per_sector: u32,
}

/// The bytes this user may still write on the volume `dir` is on (quotas included): the
/// allocation units available to the caller × their size.
pub fn free_space(dir: BorrowedDir<'_>) -> io::Result<u64> {
    // SAFETY: zeroes are a valid `FullSize` and `IO_STATUS_BLOCK`.
    let mut size: FullSize = unsafe { mem::zeroed() };
    let mut io_status: IO_STATUS_BLOCK = unsafe { mem::zeroed() };
    // SAFETY: both buffers are writable locals for the duration of the call.
    let status = unsafe {
        NtQueryVolumeInformationFile(
            dir.as_raw_handle() as HANDLE,
            &mut io_status,
            (&mut size as *mut FullSize).cast(),
            mem::size_of::<FullSize>() as u32,
            FileFsFullSizeInformation,
        )
    };
    if status < 0 {
        return Err(nt::status_error(status));
    }
    let unit = u64::from(size.sectors_per_unit) * u64::from(size.bytes_per_sector);
    Ok((size.caller_available_units.max(0) as u64).saturating_mul(unit))
}

/// Sets what `FILE_BASIC_INFO` carries of an open entry (a zero time or attribute is left as
/// it is): through the handle itself when it may write attributes (a file opened to write),
/// else through one reopened to. (Wine reopens a handle by the name it was opened by, so a
/// file renamed since, an archive put in place, could only be reached the first way.)
fn set_basic(handle: BorrowedDir<'_>, basic: &FILE_BASIC_INFO) -> io::Result<()> {
    let set = |handle: HANDLE| {
        // SAFETY: `basic` is a readable value of the class's type for the duration of the call.
        let ok = unsafe {
            SetFileInformationByHandle(
                handle,
                FileBasicInfo,
                (basic as *const FILE_BASIC_INFO).cast(),
                mem::size_of::<FILE_BASIC_INFO>() as u32,
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    };
    match set(handle.as_raw_handle() as HANDLE) {
        Err(e) if e.raw_os_error() == Some(ERROR_ACCESS_DENIED as i32) => {
            let writable = nt::reopen(handle, FILE_WRITE_ATTRIBUTES)?;
            set(writable.as_raw_handle() as HANDLE)
        }
        done => done,
    }
}

/// The modification time `mtime` only (100-ns precision), every other field left alone.
fn mtime_only(mtime: (i64, u32)) -> FILE_BASIC_INFO {
    FILE_BASIC_INFO {
        CreationTime: 0,
        LastAccessTime: 0,
        LastWriteTime: info::windows_time(mtime),
        ChangeTime: 0,
        FileAttributes: 0,
    }
}

/// Sets the modification time of an open file or directory.
pub fn set_mtime_fd(handle: impl AsDir, mtime: (i64, u32)) -> io::Result<()> {
    set_basic(handle.as_dir(), &mtime_only(mtime))
}

/// Sets the modification time of the link `name` itself (not its target).
pub fn set_link_mtime_at(dir: BorrowedDir<'_>, name: &OsStr, mtime: (i64, u32)) -> io::Result<()> {
    let link = nt::open_entry(dir, name, FILE_WRITE_ATTRIBUTES, Disposition::Existing, 0)?;
    set_basic(
        std::os::windows::io::AsHandle::as_handle(&link),
        &mtime_only(mtime),
    )
}

/// Sets the access and modification times of an open file or directory (100-ns precision).
pub fn set_times_fd(handle: impl AsDir, atime: (i64, u32), mtime: (i64, u32)) -> io::Result<()> {
    set_basic(handle.as_dir(), &both_times(atime, mtime))
}

/// Sets the access and modification times of the link `name` itself (not its target).
pub fn set_link_times_at(
    dir: BorrowedDir<'_>,
    name: &OsStr,
    atime: (i64, u32),
    mtime: (i64, u32),
) -> io::Result<()> {
    let link = nt::open_entry(dir, name, FILE_WRITE_ATTRIBUTES, Disposition::Existing, 0)?;
    set_basic(
        std::os::windows::io::AsHandle::as_handle(&link),
        &both_times(atime, mtime),
    )
}

/// The access and modification times, every other field left alone.
fn both_times(atime: (i64, u32), mtime: (i64, u32)) -> FILE_BASIC_INFO {
    FILE_BASIC_INFO {
        LastAccessTime: info::windows_time(atime),
        ..mtime_only(mtime)
    }
}

/// Sets the permission bits of an open file, as far as Windows has them: no write bit at all
/// makes it read-only (`FILE_ATTRIBUTE_READONLY`), any write bit clears that. A directory's
/// mode is not kept (Windows gives its read-only attribute another meaning).
pub fn set_mode_fd(handle: impl AsDir, mode: u32) -> io::Result<()> {
    let handle = handle.as_dir();
    let stat = info::stat(handle)?;
    if stat.kind() != crate::paths::EntryKind::File {
        return Ok(());
    }
    let current = attributes(handle)?;
    let wanted = if mode & 0o222 == 0 {
        current | FILE_ATTRIBUTE_READONLY
    } else {
        current & !FILE_ATTRIBUTE_READONLY
    };
    if wanted == current {
        return Ok(());
    }
    set_basic(
        handle,
        &FILE_BASIC_INFO {
            CreationTime: 0,
            LastAccessTime: 0,
            LastWriteTime: 0,
            ChangeTime: 0,
            // Zero would mean "leave them": no attribute at all is `FILE_ATTRIBUTE_NORMAL`.
            FileAttributes: if wanted == 0 {
                FILE_ATTRIBUTE_NORMAL
            } else {
                wanted
            },
        },
    )
}

/// Moves an open entry's change time to now, nothing else that matters: its `ChangeTime` and
/// its access time are set to now (Wine, which cannot set a change time, moves it when a time
/// is set; Windows sets it as told).
pub fn mark_changed(handle: impl AsDir) -> io::Result<()> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(io::Error::other)?;
    let now = info::windows_time((now.as_secs() as i64, now.subsec_nanos()));
    set_basic(
        handle.as_dir(),
        &FILE_BASIC_INFO {
            CreationTime: 0,
            LastAccessTime: now,
            LastWriteTime: 0,
            ChangeTime: now,
            FileAttributes: 0,
        },
    )
}

/// The attributes of an open entry.
fn attributes(handle: BorrowedDir<'_>) -> io::Result<u32> {
    let mut basic: FILE_BASIC_INFO = unsafe { mem::zeroed() };
    // SAFETY: `basic` is a writable local of the class's size for the duration of the call.
    let ok = unsafe {
        windows_sys::Win32::Storage::FileSystem::GetFileInformationByHandleEx(
            handle.as_raw_handle() as HANDLE,
            FileBasicInfo,
            (&mut basic as *mut FILE_BASIC_INFO).cast(),
            mem::size_of::<FILE_BASIC_INFO>() as u32,
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(basic.FileAttributes)
}

/// The byte the advisory locks lock: far past the end of any lock file, so that a lock (which
/// Windows enforces on reads and writes of its range) never stands in the way of reading or
/// writing the file's content.
const LOCK_OFFSET: u64 = i64::MAX as u64 - 1;

fn lock(handle: impl AsDir, wait: bool) -> io::Result<()> {
    let handle = handle.as_dir();
    // SAFETY: zeroes are a valid `OVERLAPPED`.
    let mut overlapped: OVERLAPPED = unsafe { mem::zeroed() };
    overlapped.Anonymous.Anonymous.Offset = LOCK_OFFSET as u32;
    overlapped.Anonymous.Anonymous.OffsetHigh = (LOCK_OFFSET >> 32) as u32;
    let flags = LOCKFILE_EXCLUSIVE_LOCK | if wait { 0 } else { LOCKFILE_FAIL_IMMEDIATELY };
    // SAFETY: a valid handle (opened for synchronous I/O, so a wait completes in the call) and a
    // live `OVERLAPPED` naming the range.
    let ok = unsafe {
        LockFileEx(
            handle.as_raw_handle() as HANDLE,
            flags,
            0,
            1,
            0,
            &mut overlapped,
        )
    };
    if ok != 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(ERROR_LOCK_VIOLATION as i32) {
        return Err(io::ErrorKind::WouldBlock.into());
    }
    Err(e)
}

/// Takes an exclusive advisory lock on `handle` without waiting; `WouldBlock` if someone holds
/// it. Released when the handle is closed.
pub fn try_lock_exclusive(handle: impl AsDir) -> io::Result<()> {
    lock(handle, false)
}

/// Takes an exclusive advisory lock on `handle`, waiting for whoever holds it to let go.
pub fn lock_exclusive(handle: impl AsDir) -> io::Result<()> {
    lock(handle, true)
}

/// Whether a refusal says we may not (`ERROR_ACCESS_DENIED`, a read-only volume).
fn refused(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error().map(|code| code as u32),
        Some(ERROR_ACCESS_DENIED | ERROR_WRITE_PROTECT)
    )
}

/// Whether this process may write the existing entry `name` of `dir`, as the system decides
/// (its access control list, the read-only attribute, a read-only volume): the entry opened for
/// writing and closed at once. `Ok(false)` when refused.
pub fn may_write_at(dir: BorrowedDir<'_>, name: &OsStr) -> io::Result<bool> {
    match nt::open_no_follow(dir, name, FILE_WRITE_DATA, Disposition::Existing, 0) {
        Ok(_) => Ok(true),
        Err(e) if refused(&e) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Whether this process may add entries to the directory `dir` (removing one Windows decides per
/// entry: `DELETE` on it, or `FILE_DELETE_CHILD` here): `Ok(())`, or the refusal
/// (`ERROR_ACCESS_DENIED`, `ERROR_WRITE_PROTECT`) as the error a change would meet.
pub fn may_change_entries(dir: BorrowedDir<'_>) -> io::Result<()> {
    nt::reopen(dir, FILE_ADD_FILE | FILE_ADD_SUBDIRECTORY).map(drop)
}

/// Whether another process has `file` open for writing: Windows cannot tell (`None`, see
/// [`platform::open_for_writing_elsewhere`]).
pub fn open_for_writing_elsewhere(file: &File) -> Option<bool> {
    platform::open_for_writing_elsewhere(file)
}

/// Whether we may create entries in the directory `dir`.
pub fn check_writable_dir(dir: BorrowedDir<'_>) -> io::Result<()> {
    nt::reopen(dir, FILE_ADD_FILE).map(drop)
}
