//! What a handle says of the entry it is open on, in the crate's units ([`Stat`]): one
//! `GetFileInformationByHandleEx` per class, never a path.

use std::io;
use std::mem::{self, MaybeUninit};
use std::os::windows::io::{AsRawHandle, BorrowedHandle};

use windows_sys::Win32::Foundation::HANDLE;
use windows_sys::Win32::Storage::FileSystem::{
    FileAttributeTagInfo, FileBasicInfo, FileIdInfo, FileStandardInfo,
    GetFileInformationByHandleEx, FILE_ATTRIBUTE_DIRECTORY, FILE_ATTRIBUTE_READONLY,
    FILE_ATTRIBUTE_REPARSE_POINT, FILE_ATTRIBUTE_TAG_INFO, FILE_BASIC_INFO, FILE_ID_INFO,
    FILE_INFO_BY_HANDLE_CLASS, FILE_STANDARD_INFO,
};

use crate::paths::{FileId, Stat};

/// The `st_mode` kind bits the crate's [`Stat`] carries (the same numbers on every Unix).
const S_IFREG: u32 = 0o100_000;
const S_IFDIR: u32 = 0o040_000;
const S_IFLNK: u32 = 0o120_000;

/// Seconds from 1601-01-01 (Windows' epoch) to 1970-01-01.
const EPOCH_DIFFERENCE_SECS: i64 = 11_644_473_600;
/// Windows times count 100-ns intervals.
const TICKS_PER_SEC: i64 = 10_000_000;

/// A handle's attributes and reparse tag (`FILE_ATTRIBUTE_TAG_INFO`).
#[derive(Debug, Clone, Copy)]
pub struct Tag {
    attributes: u32,
    reparse_tag: u32,
}

impl Tag {
    /// A reparse point of any kind.
    pub fn is_reparse_point(&self) -> bool {
        self.attributes & FILE_ATTRIBUTE_REPARSE_POINT != 0
    }

    /// A reparse point that names another entry (`IsReparseTagNameSurrogate`: symbolic links,
    /// junctions, WSL's links, app execution aliases): a link, never followed.
    pub fn is_link(&self) -> bool {
        self.is_reparse_point() && self.reparse_tag & 0x2000_0000 != 0
    }

    /// A directory (a junction or a directory symbolic link is one too: see [`Tag::is_link`]).
    pub fn is_directory(&self) -> bool {
        self.attributes & FILE_ATTRIBUTE_DIRECTORY != 0
    }
}

/// The attributes and reparse tag of what `handle` is open on.
pub fn attribute_tag(handle: BorrowedHandle<'_>) -> io::Result<Tag> {
    let info: FILE_ATTRIBUTE_TAG_INFO = query(handle, FileAttributeTagInfo)?;
    Ok(Tag {
        attributes: info.FileAttributes,
        reparse_tag: info.ReparseTag,
    })
}

/// Which entry `handle` is open on: the volume's serial number and the file id.
pub fn id(handle: BorrowedHandle<'_>) -> io::Result<FileId> {
    let info: FILE_ID_INFO = query(handle, FileIdInfo)?;
    let bytes = info.FileId.Identifier;
    let (low, high) = bytes.split_at(8);
    let as_u64 = |half: &[u8]| u64::from_le_bytes(half.try_into().expect("8 bytes"));
    if as_u64(high) != 0 {
        // ReFS: the id needs all 128 bits, and the crate's identity (records included) has 64.
        return Err(io::Error::other(
            "this volume's file ids are 128-bit (ReFS), which agent-fs-tools does not support yet; use a folder on an NTFS volume",
        ));
    }
    Ok(FileId {
        dev: info.VolumeSerialNumber,
        ino: as_u64(low),
    })
}

/// What `handle` is open on, in the crate's units (docs/windows.md#identity-volume-serial--file-id):
/// a synthesised mode (kind bits; `0o644`/`0o755`, without the write bit when read-only: the
/// modes of a private checkout, since who else may write is the DACL's to say, which the mode
/// does not read), no owner (0), times from 100-ns ticks since 1601, blocks of 512 bytes.
pub fn stat(handle: BorrowedHandle<'_>) -> io::Result<Stat> {
    let id = id(handle)?;
    let tag = attribute_tag(handle)?;
    let basic: FILE_BASIC_INFO = query(handle, FileBasicInfo)?;
    let standard: FILE_STANDARD_INFO = query(handle, FileStandardInfo)?;
    let read_only = basic.FileAttributes & FILE_ATTRIBUTE_READONLY != 0;
    let mode = if tag.is_link() {
        S_IFLNK | 0o777
    } else if tag.is_directory() {
        // The read-only attribute of a directory means nothing to Windows (Explorer uses it
        // to mark customised folders): a directory's mode says so.
        S_IFDIR | 0o755
    } else if read_only {
        S_IFREG | 0o444
    } else {
        S_IFREG | 0o644
    };
    Ok(Stat {
        dev: id.dev,
        ino: id.ino,
        mode,
        uid: 0,
        gid: 0,
        size: standard.EndOfFile.max(0) as u64,
        blocks: standard.AllocationSize.max(0) as u64 / 512,
        nlink: u64::from(standard.NumberOfLinks),
        atime: unix_time(basic.LastAccessTime),
        mtime: unix_time(basic.LastWriteTime),
        ctime: unix_time(basic.ChangeTime),
    })
}

/// A Windows time (100-ns ticks since 1601) as seconds and nanoseconds since 1970.
pub fn unix_time(ticks: i64) -> (i64, u32) {
    let secs = ticks.div_euclid(TICKS_PER_SEC) - EPOCH_DIFFERENCE_SECS;
    let nanos = ticks.rem_euclid(TICKS_PER_SEC) * 100;
    (secs, nanos as u32)
}

/// Seconds and nanoseconds since 1970 as a Windows time (nanoseconds rounded down to 100 ns).
pub fn windows_time(time: (i64, u32)) -> i64 {
    (time.0 + EPOCH_DIFFERENCE_SECS) * TICKS_PER_SEC + i64::from(time.1 / 100)
}

/// One `GetFileInformationByHandleEx` of a fixed-size class `T`.
fn query<T>(handle: BorrowedHandle<'_>, class: FILE_INFO_BY_HANDLE_CLASS) -> io::Result<T> {
    let mut info = MaybeUninit::<T>::zeroed();
    // SAFETY: `info` is a writable buffer of the class's size, for the duration of the call.
    let ok = unsafe {
        GetFileInformationByHandleEx(
            handle.as_raw_handle() as HANDLE,
            class,
            info.as_mut_ptr().cast(),
            mem::size_of::<T>() as u32,
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the call succeeded, so it filled the buffer (and zeroes are valid for every class
    // used here: plain integers).
    Ok(unsafe { info.assume_init() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_convert_both_ways() {
        assert_eq!(unix_time(EPOCH_DIFFERENCE_SECS * TICKS_PER_SEC), (0, 0));
        assert_eq!(
            unix_time(EPOCH_DIFFERENCE_SECS * TICKS_PER_SEC - 1),
            (-1, 999_999_900)
        );
        let time = (1_700_000_000, 123_456_700);
        assert_eq!(unix_time(windows_time(time)), time);
        // Below 100 ns is not kept.
        assert_eq!(unix_time(windows_time((5, 99))), (5, 0));
    }
}
