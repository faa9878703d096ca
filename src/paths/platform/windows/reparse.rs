//! Reading a link: the reparse data of a symbolic link or junction, through a handle opened on
//! the link itself (`FSCTL_GET_REPARSE_POINT`).

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::windows::ffi::OsStringExt;
use std::os::windows::io::{AsHandle, AsRawHandle, BorrowedHandle};
use std::ptr;

use windows_sys::Win32::Foundation::{ERROR_NOT_A_REPARSE_POINT, HANDLE};
use windows_sys::Win32::Storage::FileSystem::MAXIMUM_REPARSE_DATA_BUFFER_SIZE;
use windows_sys::Win32::System::Ioctl::FSCTL_GET_REPARSE_POINT;
use windows_sys::Win32::System::IO::DeviceIoControl;

use super::nt;

/// `IO_REPARSE_TAG_SYMLINK` and `IO_REPARSE_TAG_MOUNT_POINT` (a junction).
const TAG_SYMLINK: u32 = 0xA000_000C;
const TAG_MOUNT_POINT: u32 = 0xA000_0003;
/// The NT prefix of an absolute target (`\??\C:\dir`).
const NT_PREFIX: &str = r"\??\";

/// The target of the link `name` in `dir`: a symbolic link's as stored (relative, or absolute
/// without its `\??\` prefix), a junction's absolute path. Anything else (a file, a reparse
/// point that names nothing) is `ERROR_NOT_A_REPARSE_POINT`.
pub fn read_link_at(dir: BorrowedHandle<'_>, name: &OsStr) -> io::Result<OsString> {
    let link = nt::open_entry(dir, name, 0, nt::Disposition::Existing, 0)?;
    let data = reparse_data(link.as_handle())?;
    target_of(&data)
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

    /// A reparse buffer as Windows writes one for a symbolic link.
    fn symlink_buffer(substitute: &str, relative: bool) -> Vec<u8> {
        let wide: Vec<u8> = substitute
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        let mut data = Vec::new();
        data.extend(TAG_SYMLINK.to_le_bytes());
        data.extend(((12 + wide.len()) as u16).to_le_bytes());
        data.extend(0u16.to_le_bytes());
        data.extend(0u16.to_le_bytes()); // substitute name offset
        data.extend((wide.len() as u16).to_le_bytes());
        data.extend((wide.len() as u16).to_le_bytes()); // print name offset (unused here)
        data.extend(0u16.to_le_bytes());
        data.extend(u32::from(relative).to_le_bytes());
        data.extend(wide);
        data
    }

    #[test]
    fn a_symlink_target_is_read_as_stored() {
        assert_eq!(
            target_of(&symlink_buffer(r"..\a.txt", true)).unwrap(),
            r"..\a.txt"
        );
        assert_eq!(
            target_of(&symlink_buffer(r"\??\C:\work", false)).unwrap(),
            r"C:\work"
        );
        assert!(target_of(&[0u8; 3]).is_err());
    }
}
