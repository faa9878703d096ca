//! The platform seam on Windows (../../../../docs/windows.md): what `platform/mod.rs` is on
//! Unix, with Windows handles. Every guarantee is kept the portable way (a component walk through
//! held handles, never following a reparse point); what Windows cannot keep is named in
//! docs/windows.md.
//!
//! | need | Windows |
//! |---|---|
//! | open beneath an allowed tree, no link followed | one `NtCreateFile` per component relative to the handle of the one before, `FILE_OPEN_REPARSE_POINT`, a link refused ([`nt::open_no_follow`]) |
//! | a directory handle for `*at` calls | `FILE_TRAVERSE` (no read permission needed) |
//! | a directory's entries | `GetFileInformationByHandleEx(FileFullDirectoryInfo)` into a reused buffer |
//! | a new tree made durable | `FlushFileBuffers` of each file written (NTFS journals its metadata) |
//! | is a file open for writing elsewhere? | cannot tell (`None`) |
//! | is an entry a mount point? | another volume (a volume mounted in a folder is a junction: a link) |

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::windows::ffi::OsStringExt;
use std::os::windows::io::{AsHandle, AsRawHandle, BorrowedHandle, OwnedHandle};
use std::path::{Component, Path};

use windows_sys::Wdk::Storage::FileSystem::FILE_DIRECTORY_FILE;
use windows_sys::Win32::Foundation::{ERROR_NOT_SAME_DEVICE, ERROR_NO_MORE_FILES, HANDLE};
use windows_sys::Win32::Storage::FileSystem::{
    FileFullDirectoryInfo, FileFullDirectoryRestartInfo, FlushFileBuffers,
    GetFileInformationByHandleEx, FILE_ACCESS_RIGHTS, FILE_ATTRIBUTE_DIRECTORY,
    FILE_ATTRIBUTE_REPARSE_POINT, FILE_LIST_DIRECTORY, FILE_TRAVERSE,
};

use crate::paths::{EntryKind, Stat};

mod acl;
pub mod dispose;
pub mod info;
pub mod names;
pub mod nt;
pub mod reparse;

/// The environment variable that switches Linux's fast paths off; read on Linux only.
pub const PORTABLE_ENV: &str = "AGENT_FS_TOOLS_PORTABLE";

pub use acl::{copy_acl, others_may_write, owned_by_user};

/// Whether Linux's fast paths are in use: never on Windows.
pub fn linux_fast_paths() -> bool {
    false
}

/// Whether a change of many files puts each staged file in place of the planned one by
/// exchanging their names: never on Windows, which has no such rename (`fsops::put_by_renames`
/// takes three).
pub fn exchanges_names() -> bool {
    false
}

/// Whether a directory (or a file in it) held open keeps it from being removed: yes where
/// deletes lack POSIX semantics (Wine, FAT, exFAT, some shares), where a removed name stays
/// until its last handle closes and its parent cannot go meanwhile. Which a volume does is not
/// known before a removal, so it is assumed of every one.
pub fn open_handles_block_removal() -> bool {
    true
}

/// What a directory handle may do: traverse (a directory we may pass through but not list can
/// be on the way, as Linux's `O_PATH`), and list when `readable`.
pub fn dir_access(readable: bool) -> FILE_ACCESS_RIGHTS {
    if readable {
        FILE_TRAVERSE | FILE_LIST_DIRECTORY
    } else {
        FILE_TRAVERSE
    }
}

/// Opens the directory `rel` (plain components only; empty for `start` itself) beneath `start`
/// without following any link on the way, nor climbing out of `start`: `ERROR_STOPPED_ON_SYMLINK`
/// for a link, `ERROR_DIRECTORY` for a file, `ERROR_NOT_SAME_DEVICE` (as `EXDEV`) for anything
/// but a plain component. The last directory's handle may list it when `readable`.
pub fn open_beneath(start: OwnedHandle, rel: &Path, readable: bool) -> io::Result<OwnedHandle> {
    let parts = rel
        .components()
        .map(|component| match component {
            Component::Normal(part) => Ok(part),
            _ => Err(io::Error::from_raw_os_error(ERROR_NOT_SAME_DEVICE as i32)),
        })
        .collect::<io::Result<Vec<&OsStr>>>()?;
    let Some((last, on_the_way)) = parts.split_last() else {
        return nt::reopen(start.as_handle(), dir_access(readable));
    };
    let mut current = start;
    for part in on_the_way {
        current = open_dir_at(current.as_handle(), part, false)?;
    }
    open_dir_at(current.as_handle(), last, readable)
}

/// The subdirectory `name` of `dir`, never through a link.
pub fn open_dir_at(
    dir: BorrowedHandle<'_>,
    name: &OsStr,
    readable: bool,
) -> io::Result<OwnedHandle> {
    nt::open_no_follow(
        dir,
        name,
        dir_access(readable),
        nt::Disposition::Existing,
        FILE_DIRECTORY_FILE,
    )
}

/// `lstat` of a whole path (the entry itself, a link described, not followed), for
/// [`canonical`](crate::paths::canonical), which walks paths before any tree is open: opened by
/// path with `FILE_FLAG_OPEN_REPARSE_POINT` and only to read its attributes.
pub fn lstat_path(path: &Path) -> io::Result<Stat> {
    use windows_sys::Win32::Storage::FileSystem::{
        CreateFileW, FILE_FLAG_BACKUP_SEMANTICS, FILE_FLAG_OPEN_REPARSE_POINT,
        FILE_READ_ATTRIBUTES, OPEN_EXISTING,
    };
    let mut wide: Vec<u16> =
        std::os::windows::ffi::OsStrExt::encode_wide(path.as_os_str()).collect();
    if wide.contains(&0) {
        return Err(crate::paths::os_error::error(
            crate::paths::os_error::Cause::Invalid,
        ));
    }
    wide.push(0);
    // SAFETY: a NUL-terminated path that lives across the call; the result is checked.
    let raw = unsafe {
        CreateFileW(
            wide.as_ptr(),
            FILE_READ_ATTRIBUTES,
            nt::SHARE_ALL,
            std::ptr::null(),
            OPEN_EXISTING,
            FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT,
            std::ptr::null_mut(),
        )
    };
    info::stat(nt::owned(raw)?.as_handle())
}

/// `lstat`: the entry `name` of `dir` as itself (a link is described, not followed); `None` if
/// there is no such entry.
pub fn lstat_at(dir: BorrowedHandle<'_>, name: &OsStr) -> io::Result<Option<Stat>> {
    match nt::open_entry(dir, name, 0, nt::Disposition::Existing, 0) {
        Ok(handle) => info::stat(handle.as_handle()).map(Some),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The entries of the directory `dir` (a handle that may list it), without `.` and `..`, each
/// with its kind as the listing gives it (a name-surrogate reparse point is a link). `buffer` is
/// reused from call to call.
pub fn read_entries(
    dir: BorrowedHandle<'_>,
    buffer: &mut Vec<u8>,
) -> io::Result<Vec<(OsString, Option<EntryKind>)>> {
    // Offsets of `FILE_FULL_DIR_INFO`'s fields (the layout is fixed by the ABI).
    const NEXT: usize = 0;
    const ATTRIBUTES: usize = 56;
    const NAME_LENGTH: usize = 60;
    const EA_SIZE_OR_TAG: usize = 64;
    const NAME: usize = 68;
    buffer.resize(64 * 1024, 0);
    let read_u32 = |bytes: &[u8], at: usize| {
        u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
    };
    let mut entries = Vec::new();
    let mut class = FileFullDirectoryRestartInfo;
    loop {
        // SAFETY: `buffer` is writable for its length during the call.
        let ok = unsafe {
            GetFileInformationByHandleEx(
                dir.as_raw_handle() as HANDLE,
                class,
                buffer.as_mut_ptr().cast(),
                buffer.len() as u32,
            )
        };
        if ok == 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(ERROR_NO_MORE_FILES as i32) {
                return Ok(entries);
            }
            return Err(e);
        }
        class = FileFullDirectoryInfo;
        let mut at = 0;
        loop {
            let record = &buffer[at..];
            let name_bytes = read_u32(record, NAME_LENGTH) as usize;
            let name: Vec<u16> = record[NAME..NAME + name_bytes]
                .chunks_exact(2)
                .map(|pair| u16::from_le_bytes([pair[0], pair[1]]))
                .collect();
            let name = OsString::from_wide(&name);
            if name != "." && name != ".." {
                let attributes = read_u32(record, ATTRIBUTES);
                // For a reparse point, the listing gives its tag where the EA size would be.
                let is_link = attributes & FILE_ATTRIBUTE_REPARSE_POINT != 0
                    && read_u32(record, EA_SIZE_OR_TAG) & 0x2000_0000 != 0;
                let kind = if is_link {
                    EntryKind::Symlink
                } else if attributes & FILE_ATTRIBUTE_DIRECTORY != 0 {
                    EntryKind::Directory
                } else {
                    EntryKind::File
                };
                entries.push((name, Some(kind)));
            }
            match read_u32(record, NEXT) as usize {
                0 => break,
                next => at += next,
            }
        }
    }
}

/// The id of the mount an entry is on where the system tells mounts apart on one volume: never
/// on Windows (a folder a volume is mounted in is a junction, so a link already).
pub fn mount_id(dir: BorrowedHandle<'_>, name: &OsStr) -> io::Result<Option<u64>> {
    let _ = (dir, name);
    Ok(None)
}

/// Whether another process has `file` open for writing: Windows cannot tell (`None`).
pub fn open_for_writing_elsewhere(file: &File) -> Option<bool> {
    let _ = file;
    None
}

/// Copies up to `len` bytes from `source`'s offset to `copy`'s; returns how many (fewer at the
/// end of the file), through a buffer.
pub fn copy_bytes(source: &File, copy: &mut File, len: u64) -> io::Result<u64> {
    let mut buffer = vec![0u8; 256 * 1024];
    let mut reader = source;
    let mut copied = 0u64;
    while copied < len {
        let want = (len - copied).min(buffer.len() as u64) as usize;
        let read = match reader.read(&mut buffer[..want]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        copy.write_all(&buffer[..read])?;
        copied += read as u64;
    }
    Ok(copied)
}

/// A file of a new tree is written: flushed now (`FlushFileBuffers`). A directory needs nothing:
/// NTFS journals its metadata, and a directory handle cannot be flushed without write access.
pub fn sync_written(handle: BorrowedHandle<'_>) -> io::Result<()> {
    if info::attribute_tag(handle)?.is_directory() {
        return Ok(());
    }
    // SAFETY: a valid handle for the call.
    if unsafe { FlushFileBuffers(handle.as_raw_handle() as HANDLE) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Makes a new tree in `parent` durable before it is published: every file of it was flushed as
/// it was written ([`sync_written`]), and its directories are in the file system's journal.
pub fn sync_new_tree(parent: BorrowedHandle<'_>) -> io::Result<()> {
    let _ = parent;
    Ok(())
}

/// The name under which the existing entry `path` is stored in its directory, which can differ
/// in case from the name used to find it (names are case-insensitive on Windows), so that the
/// same entry always has the same canonical path: the directory's own record of it
/// (`FindFirstFileW` of the path, which names one entry when it holds no wildcard). `None`: no
/// such entry, or a name with a character `FindFirstFileW` would take as a wildcard.
pub fn stored_name(path: &Path) -> Option<OsString> {
    use std::os::windows::ffi::OsStrExt;
    use windows_sys::Win32::Storage::FileSystem::{FindClose, FindFirstFileW, WIN32_FIND_DATAW};
    let name = path.file_name()?;
    if name
        .encode_wide()
        .any(|unit| matches!(unit, 0x2A | 0x3F | 0x3C | 0x3E | 0x22 | 0))
    {
        return None; // `*`, `?`, `<`, `>`, `"` are wildcards to it; NUL ends the path
    }
    let mut wide: Vec<u16> = path.as_os_str().encode_wide().collect();
    wide.push(0);
    // SAFETY: zeroes are a valid `WIN32_FIND_DATAW`; the path is NUL-terminated and both live
    // across the call; the search handle is closed below.
    let mut found: WIN32_FIND_DATAW = unsafe { std::mem::zeroed() };
    let search = unsafe { FindFirstFileW(wide.as_ptr(), &mut found) };
    if search == windows_sys::Win32::Foundation::INVALID_HANDLE_VALUE {
        return None;
    }
    // SAFETY: a search handle FindFirstFileW just returned.
    unsafe { FindClose(search) };
    let length = found
        .cFileName
        .iter()
        .position(|&unit| unit == 0)
        .unwrap_or(found.cFileName.len());
    Some(OsString::from_wide(&found.cFileName[..length]))
}
