//! Links as reparse points: reading a symbolic link's or junction's target through a handle
//! opened on the link itself (`FSCTL_GET_REPARSE_POINT`), and making a symbolic link by name
//! relative to a directory handle (`FSCTL_SET_REPARSE_POINT` on a new, empty entry).

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::windows::ffi::OsStringExt;
use std::os::windows::io::{AsHandle, AsRawHandle, BorrowedHandle};
use std::ptr;

use windows_sys::Wdk::Storage::FileSystem::{FILE_DIRECTORY_FILE, FILE_NON_DIRECTORY_FILE};
use windows_sys::Win32::Foundation::{ERROR_INVALID_NAME, ERROR_NOT_A_REPARSE_POINT, HANDLE};
use windows_sys::Win32::Storage::FileSystem::{
    GetFinalPathNameByHandleW, DELETE, FILE_WRITE_ATTRIBUTES, FILE_WRITE_DATA,
    MAXIMUM_REPARSE_DATA_BUFFER_SIZE,
};
use windows_sys::Win32::System::Ioctl::{FSCTL_GET_REPARSE_POINT, FSCTL_SET_REPARSE_POINT};
use windows_sys::Win32::System::IO::DeviceIoControl;

use super::{dispose, nt};

/// `IO_REPARSE_TAG_SYMLINK` and `IO_REPARSE_TAG_MOUNT_POINT` (a junction).
const TAG_SYMLINK: u32 = 0xA000_000C;
const TAG_MOUNT_POINT: u32 = 0xA000_0003;
/// The NT prefix of an absolute target (`\??\C:\dir`).
const NT_PREFIX: &str = r"\??\";
/// `SYMLINK_FLAG_RELATIVE`: the target is relative to the link's directory.
const SYMLINK_FLAG_RELATIVE: u32 = 1;

/// The target of the link `name` in `dir`: a symbolic link's as stored (relative, or absolute
/// without its `\??\` prefix), a junction's absolute path. Anything else (a file, a reparse
/// point that names nothing) is `ERROR_NOT_A_REPARSE_POINT`.
pub fn read_link_at(dir: BorrowedHandle<'_>, name: &OsStr) -> io::Result<OsString> {
    let link = nt::open_entry(dir, name, 0, nt::Disposition::Existing, 0)?;
    let data = reparse_data(link.as_handle())?;
    target_of(&data)
}

/// Makes the symbolic link `name` in `dir` pointing at `target` (`/` read as `\`): a new, empty
/// entry made by name relative to `dir` (refused if anything is there, a link included), given
/// the link's reparse data. A Windows link is a file link or a directory link: a directory link
/// when `target`, looked up now from `dir`, is a directory. Making one needs
/// `SeCreateSymbolicLinkPrivilege` (administrator rights); without it the new entry is removed
/// again and the error is `ERROR_PRIVILEGE_NOT_HELD`.
pub fn symlink_at(target: &OsStr, dir: BorrowedHandle<'_>, name: &OsStr) -> io::Result<()> {
    let target = windows_target(target)?;
    let relative = !is_absolute(&target);
    let kind = if points_at_directory(dir, &target, relative) {
        FILE_DIRECTORY_FILE
    } else {
        FILE_NON_DIRECTORY_FILE
    };
    let access = FILE_WRITE_DATA | FILE_WRITE_ATTRIBUTES | DELETE;
    let link = nt::open_entry(dir, name, access, nt::Disposition::New, kind)?;
    let data = symlink_buffer(&target, relative);
    let mut returned = 0u32;
    // SAFETY: `data` is readable for its length, `returned` writable, during the call.
    let ok = unsafe {
        DeviceIoControl(
            link.as_raw_handle() as HANDLE,
            FSCTL_SET_REPARSE_POINT,
            data.as_ptr().cast(),
            data.len() as u32,
            ptr::null_mut(),
            0,
            &mut returned,
            ptr::null_mut(),
        )
    };
    if ok == 0 {
        let e = io::Error::last_os_error();
        // Nothing half made: the empty entry goes again.
        let _ = dispose::delete(link.as_handle());
        return Err(e);
    }
    Ok(())
}

/// A link target as Windows stores it: `\` separators, no NUL.
fn windows_target(target: &OsStr) -> io::Result<Vec<u16>> {
    use std::os::windows::ffi::OsStrExt;
    let wide: Vec<u16> = target
        .encode_wide()
        .map(|unit| {
            if unit == u16::from(b'/') {
                u16::from(b'\\')
            } else {
                unit
            }
        })
        .collect();
    if wide.is_empty() || wide.contains(&0) {
        return Err(io::Error::from_raw_os_error(ERROR_INVALID_NAME as i32));
    }
    Ok(wide)
}

/// `C:\…` or `\\server\…`: an absolute target.
fn is_absolute(target: &[u16]) -> bool {
    let backslash = u16::from(b'\\');
    matches!(target, [_, colon, slash, ..] if *colon == u16::from(b':') && *slash == backslash)
        || matches!(target, [a, b, ..] if *a == backslash && *b == backslash)
}

/// Whether `target` names a directory now, looked up from `dir` (by path: this only chooses the
/// kind of link, it acts on nothing).
fn points_at_directory(dir: BorrowedHandle<'_>, target: &[u16], relative: bool) -> bool {
    let target = std::path::PathBuf::from(OsString::from_wide(target));
    let path = if relative {
        match final_path(dir) {
            Some(dir) => dir.join(target),
            None => return false,
        }
    } else {
        target
    };
    std::fs::metadata(path).is_ok_and(|meta| meta.is_dir())
}

/// The path of what `handle` is open on (`GetFinalPathNameByHandleW`).
fn final_path(handle: BorrowedHandle<'_>) -> Option<std::path::PathBuf> {
    let mut buffer = vec![0u16; 32 * 1024];
    // SAFETY: `buffer` is writable for its length during the call.
    let length = unsafe {
        GetFinalPathNameByHandleW(
            handle.as_raw_handle() as HANDLE,
            buffer.as_mut_ptr(),
            buffer.len() as u32,
            0,
        )
    } as usize;
    (length > 0 && length < buffer.len()).then(|| OsString::from_wide(&buffer[..length]).into())
}

/// A symbolic link's `REPARSE_DATA_BUFFER` (see [`target_of`] for the layout): the substitute
/// name (`\??\` before an absolute target), then the print name (the target as given).
fn symlink_buffer(target: &[u16], relative: bool) -> Vec<u8> {
    let prefix: Vec<u16> = if relative {
        Vec::new()
    } else {
        NT_PREFIX.encode_utf16().collect()
    };
    let substitute: Vec<u8> = prefix
        .iter()
        .chain(target)
        .flat_map(|u| u.to_le_bytes())
        .collect();
    let print: Vec<u8> = target.iter().flat_map(|u| u.to_le_bytes()).collect();
    let mut data = Vec::with_capacity(20 + substitute.len() + print.len());
    data.extend(TAG_SYMLINK.to_le_bytes());
    data.extend(((12 + substitute.len() + print.len()) as u16).to_le_bytes());
    data.extend(0u16.to_le_bytes());
    data.extend(0u16.to_le_bytes());
    data.extend((substitute.len() as u16).to_le_bytes());
    data.extend((substitute.len() as u16).to_le_bytes());
    data.extend((print.len() as u16).to_le_bytes());
    data.extend((if relative { SYMLINK_FLAG_RELATIVE } else { 0 }).to_le_bytes());
    data.extend(substitute);
    data.extend(print);
    data
}

/// The raw reparse data buffer of what `handle` is open on.
fn reparse_data(handle: BorrowedHandle<'_>) -> io::Result<Vec<u8>> {
    let mut buffer = vec![0u8; MAXIMUM_REPARSE_DATA_BUFFER_SIZE as usize];
    let mut returned = 0u32;
    // SAFETY: `buffer` is writable for its length, `returned` for a u32, during the call.
    let ok = unsafe {
        DeviceIoControl(
            handle.as_raw_handle() as HANDLE,
            FSCTL_GET_REPARSE_POINT,
            ptr::null(),
            0,
            buffer.as_mut_ptr().cast(),
            buffer.len() as u32,
            &mut returned,
            ptr::null_mut(),
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    buffer.truncate(returned as usize);
    Ok(buffer)
}

/// The target a `REPARSE_DATA_BUFFER` names: `ReparseTag` (u32), `ReparseDataLength` (u16),
/// `Reserved` (u16), then for both kinds `SubstituteNameOffset`, `SubstituteNameLength`,
/// `PrintNameOffset`, `PrintNameLength` (u16 each, bytes into the path buffer), then a symbolic
/// link's `Flags` (u32), then the path buffer.
fn target_of(data: &[u8]) -> io::Result<OsString> {
    let not_a_link = || io::Error::from_raw_os_error(ERROR_NOT_A_REPARSE_POINT as i32);
    let u16_at = |at: usize| -> io::Result<usize> {
        let bytes = data.get(at..at + 2).ok_or_else(not_a_link)?;
        Ok(usize::from(u16::from_le_bytes([bytes[0], bytes[1]])))
    };
    let tag = u32::from_le_bytes(
        data.get(0..4)
            .ok_or_else(not_a_link)?
            .try_into()
            .expect("4 bytes"),
    );
    let path_buffer = match tag {
        TAG_SYMLINK => 20,
        TAG_MOUNT_POINT => 16,
        _ => return Err(not_a_link()),
    };
    let (offset, length) = (u16_at(8)?, u16_at(10)?);
    let start = path_buffer + offset;
    let bytes = data.get(start..start + length).ok_or_else(not_a_link)?;
    let wide: Vec<u16> = bytes
        .chunks_exact(2)
        .map(|pair| u16::from_le_bytes([pair[0], pair[1]]))
        .collect();
    let target = OsString::from_wide(&wide);
    Ok(
        match target.to_str().and_then(|t| t.strip_prefix(NT_PREFIX)) {
            Some(absolute) => OsString::from(absolute),
            None => target,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symlink_is_written_and_read_back() {
        let wide = |text: &str| windows_target(OsStr::new(text)).unwrap();
        let relative = wide("../a.txt");
        assert!(!is_absolute(&relative));
        assert_eq!(
            target_of(&symlink_buffer(&relative, true)).unwrap(),
            r"..\a.txt"
        );
        let absolute = wide(r"C:\work");
        assert!(is_absolute(&absolute) && is_absolute(&wide(r"\\server\share")));
        assert_eq!(
            target_of(&symlink_buffer(&absolute, false)).unwrap(),
            r"C:\work"
        );
        assert!(target_of(&[0u8; 3]).is_err());
        assert!(windows_target(OsStr::new("")).is_err())
    }
}
