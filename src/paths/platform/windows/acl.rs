//! Access control lists: what a rewrite or a copy gives the new file so that it is exactly as
//! open or as private as the one it replaces (the Windows twin of copying POSIX ACLs with the
//! extended attributes, or macOS's `copy_acl`), owners: whether an entry is this user's, and
//! whether anyone else may write it (the Windows form of a group or other write bit).

use std::io;
use std::os::windows::io::{AsHandle, AsRawHandle, BorrowedHandle, FromRawHandle, OwnedHandle};
use std::ptr;

use windows_sys::core::PWSTR;
use windows_sys::Win32::Foundation::{
    LocalFree, ERROR_SUCCESS, GENERIC_ALL, GENERIC_WRITE, HANDLE,
};
use windows_sys::Win32::Security::Authorization::{
    ConvertSidToStringSidW, GetSecurityInfo, SetSecurityInfo, SE_FILE_OBJECT,
};
use windows_sys::Win32::Security::{
    EqualSid, GetAce, GetLengthSid, GetTokenInformation, IsWellKnownSid, TokenOwner, TokenUser,
    WinBuiltinAdministratorsSid, WinCreatorOwnerSid, WinLocalSystemSid, ACCESS_ALLOWED_ACE, ACL,
    DACL_SECURITY_INFORMATION, INHERIT_ONLY_ACE, OBJECT_SECURITY_INFORMATION,
    OWNER_SECURITY_INFORMATION, PSECURITY_DESCRIPTOR, PSID, TOKEN_QUERY,
};
use windows_sys::Win32::Storage::FileSystem::{
    FILE_APPEND_DATA, FILE_DELETE_CHILD, FILE_WRITE_DATA, READ_CONTROL, WRITE_DAC, WRITE_OWNER,
};
use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};

use super::nt;

/// Gives `copy` the discretionary access control list of `source` (its inherited entries are
/// recomputed from `copy`'s own parent, as Windows does for any DACL set), as far as we may: a
/// list we may not read or set, or a file system without them, leaves `copy` with the list its
/// directory passes on, as an extended attribute we may not set is left out on Unix.
pub fn copy_acl(source: BorrowedHandle<'_>, copy: BorrowedHandle<'_>) -> io::Result<()> {
    match copy_dacl(source, copy) {
        Err(e) if not_ours_to_set(&e) => Ok(()),
        other => other,
    }
}

/// Whether an access control list could not be read or set because we may not, or because the
/// file system has none.
fn not_ours_to_set(e: &io::Error) -> bool {
    use windows_sys::Win32::Foundation::{
        ERROR_ACCESS_DENIED, ERROR_INVALID_FUNCTION, ERROR_NOT_SUPPORTED, ERROR_PRIVILEGE_NOT_HELD,
    };
    matches!(
        e.raw_os_error().map(|code| code as u32),
        Some(
            ERROR_ACCESS_DENIED
                | ERROR_PRIVILEGE_NOT_HELD
                | ERROR_NOT_SUPPORTED
                | ERROR_INVALID_FUNCTION
        )
    )
}

fn copy_dacl(source: BorrowedHandle<'_>, copy: BorrowedHandle<'_>) -> io::Result<()> {
    let read = Security::of(source, DACL_SECURITY_INFORMATION)?;
    let writable = nt::reopen(copy, WRITE_DAC)?;
    // SAFETY: a valid handle and the DACL read above, alive while `read` is.
    let status = unsafe {
        SetSecurityInfo(
            writable.as_handle().as_raw_handle() as HANDLE,
            SE_FILE_OBJECT,
            DACL_SECURITY_INFORMATION,
            ptr::null_mut(),
            ptr::null_mut(),
            read.dacl,
            ptr::null(),
        )
    };
    if status == ERROR_SUCCESS {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(status as i32))
    }
}

/// What `GetSecurityInfo` read of an entry: its owner and DACL (each null unless asked for, the
/// DACL also when the entry has none), pointing into the descriptor it allocated, which is freed
/// when this is dropped.
struct Security {
    owner: PSID,
    dacl: *mut ACL,
    descriptor: PSECURITY_DESCRIPTOR,
}

impl Security {
    /// The parts `what` (`OWNER_SECURITY_INFORMATION`, `DACL_SECURITY_INFORMATION`) of the
    /// security descriptor of the entry open as `handle`, read through a handle reopened with
    /// `READ_CONTROL`.
    fn of(handle: BorrowedHandle<'_>, what: OBJECT_SECURITY_INFORMATION) -> io::Result<Self> {
        let readable = nt::reopen(handle, READ_CONTROL)?;
        let mut read = Security {
            owner: ptr::null_mut(),
            dacl: ptr::null_mut(),
            descriptor: ptr::null_mut(),
        };
        // SAFETY: a valid handle; the out-pointers are live fields; the descriptor the call
        // allocates (which `owner` and `dacl` point into) is freed in `drop`, as documented.
        let status = unsafe {
            GetSecurityInfo(
                readable.as_raw_handle() as HANDLE,
                SE_FILE_OBJECT,
                what,
                &mut read.owner,
                ptr::null_mut(),
                &mut read.dacl,
                ptr::null_mut(),
                &mut read.descriptor,
            )
        };
        if status != ERROR_SUCCESS {
            return Err(io::Error::from_raw_os_error(status as i32));
        }
        Ok(read)
    }
}

impl Drop for Security {
    fn drop(&mut self) {
        // SAFETY: allocated by `GetSecurityInfo` for us to free (or null), not used after this.
        unsafe { LocalFree(self.descriptor) };
    }
}

/// Whether the entry open as `handle` is owned by the user this process runs as: its owner SID
/// is the process token's user, or the token's default owner (an elevated process makes its
/// files owned by the Administrators group). The Windows form of "owned by the effective uid".
pub fn owned_by_user(handle: BorrowedHandle<'_>) -> io::Result<bool> {
    let read = Security::of(handle, OWNER_SECURITY_INFORMATION)?;
    let sids = token_sids()?;
    Ok(sids.iter().any(|sid| {
        // SAFETY: both are valid SIDs, alive for the call (`read` holds the owner's).
        unsafe { EqualSid(read.owner, sid.as_ptr() as PSID) != 0 }
    }))
}

/// `ACCESS_ALLOWED_ACE_TYPE` and `ACCESS_ALLOWED_CALLBACK_ACE_TYPE` (winnt.h): the entries that
/// grant, both laid out as `ACCESS_ALLOWED_ACE` up to the SID.
const GRANTING_ACE_TYPES: [u8; 2] = [0, 9];

/// The rights that let an account put something in a directory or change a file (a file's or
/// subdirectory's creation, data, removal of what it holds, or its access list and owner): what
/// a group or other write bit gives on Unix.
const WRITE_RIGHTS: u32 = FILE_WRITE_DATA
    | FILE_APPEND_DATA
    | FILE_DELETE_CHILD
    | WRITE_DAC
    | WRITE_OWNER
    | GENERIC_WRITE
    | GENERIC_ALL;

/// Whether an account other than this process's user may write the entry open as `handle`:
/// the SID (`S-1-1-0`, say) its access list grants write rights to, or `Everyone` for an entry
/// without any list (which grants all to all). The system (`S-1-5-18`) and the Administrators
/// group are not others (they can do anything anyway, as root on Unix), nor is `CREATOR OWNER`;
/// entries that apply only to what is created inside are not the entry's own. Denying entries
/// are not weighed against granting ones: a grant is reported even if a deny before it takes it
/// back (safe: a refusal, with the SID to look at).
pub fn others_may_write(handle: BorrowedHandle<'_>) -> io::Result<Option<String>> {
    let read = Security::of(handle, DACL_SECURITY_INFORMATION)?;
    if read.dacl.is_null() {
        return Ok(Some("Everyone".to_owned()));
    }
    let ours = token_sids()?;
    // SAFETY: a valid DACL inside the descriptor `read` holds.
    Ok(unsafe { writer_other_than(read.dacl, &ours) })
}

/// The first SID `dacl` grants write rights to that is not one of `ours` nor the system's, as
/// text.
///
/// # Safety
/// `dacl` is a valid access control list, alive for the call.
unsafe fn writer_other_than(dacl: *const ACL, ours: &[Vec<u64>]) -> Option<String> {
    // SAFETY: the caller's promise.
    let count = unsafe { (*dacl).AceCount };
    for index in 0..u32::from(count) {
        let mut ace: *mut core::ffi::c_void = ptr::null_mut();
        // SAFETY: an index below the list's count and a live out-pointer.
        if unsafe { GetAce(dacl, index, &mut ace) } == 0 {
            continue;
        }
        let ace = ace as *const ACCESS_ALLOWED_ACE;
        // SAFETY: every entry starts with its header; a granting one is an ACCESS_ALLOWED_ACE
        // up to its SID, which starts at `SidStart` and lies within the entry.
        let (kind, flags, mask, sid) = unsafe {
            (
                (*ace).Header.AceType,
                u32::from((*ace).Header.AceFlags),
                (*ace).Mask,
                ptr::addr_of!((*ace).SidStart) as PSID,
            )
        };
        if !GRANTING_ACE_TYPES.contains(&kind)
            || flags & INHERIT_ONLY_ACE != 0
            || mask & WRITE_RIGHTS == 0
        {
            continue;
        }
        // SAFETY: `sid` is a valid SID inside the entry; ours are valid SIDs in their buffers.
        let trusted = unsafe {
            ours.iter()
                .any(|own| EqualSid(sid, own.as_ptr() as PSID) != 0)
                || [
                    WinLocalSystemSid,
                    WinBuiltinAdministratorsSid,
                    WinCreatorOwnerSid,
                ]
                .into_iter()
                .any(|known| IsWellKnownSid(sid, known) != 0)
        };
        if !trusted {
            // SAFETY: a valid SID.
            return Some(unsafe { sid_text(sid) });
        }
    }
    None
}

/// `sid` as text (`S-1-5-21-…`), or `an unknown account` if it cannot be written.
///
/// # Safety
/// `sid` is a valid SID, alive for the call.
unsafe fn sid_text(sid: PSID) -> String {
    let mut text: PWSTR = ptr::null_mut();
    // SAFETY: the caller's promise; a live out-pointer; the string is freed below.
    if unsafe { ConvertSidToStringSidW(sid, &mut text) } == 0 {
        return "an unknown account".to_owned();
    }
    // SAFETY: a NUL-terminated UTF-16 string allocated by the call.
    let len = (0..).take_while(|&i| unsafe { *text.add(i) } != 0).count();
    // SAFETY: `len` code units, read before the string is freed.
    let shown = String::from_utf16_lossy(unsafe { std::slice::from_raw_parts(text, len) });
    // SAFETY: allocated by `ConvertSidToStringSidW` for us to free, not used after this.
    unsafe { LocalFree(text.cast()) };
    shown
}

/// The process token's user SID and default owner SID, each copied into a buffer of its own.
fn token_sids() -> io::Result<Vec<Vec<u64>>> {
    let mut raw: HANDLE = ptr::null_mut();
    // SAFETY: the pseudo-handle of this process and a live out-pointer; the result is checked.
    if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut raw) } == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a token handle just opened, owned here alone (closed when dropped).
    let token = unsafe { OwnedHandle::from_raw_handle(raw as _) };
    let mut sids = Vec::new();
    for class in [TokenUser, TokenOwner] {
        let mut needed = 0u32;
        // SAFETY: a size query: no buffer, a live out-pointer for the size.
        unsafe {
            GetTokenInformation(
                token.as_raw_handle() as HANDLE,
                class,
                ptr::null_mut(),
                0,
                &mut needed,
            )
        };
        // u64 words: aligned for the structures, which begin with a pointer.
        let mut buffer = vec![0u64; (needed as usize).div_ceil(8).max(1)];
        // SAFETY: a writable buffer of at least `needed` bytes for the duration of the call.
        let ok = unsafe {
            GetTokenInformation(
                token.as_raw_handle() as HANDLE,
                class,
                buffer.as_mut_ptr().cast(),
                (buffer.len() * 8) as u32,
                &mut needed,
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        // Both TOKEN_USER (a SID_AND_ATTRIBUTES) and TOKEN_OWNER begin with the SID's pointer,
        // which points into `buffer` itself: the buffer is kept, and the SID read through it.
        let sid = buffer[0] as PSID;
        // SAFETY: a valid SID inside `buffer`, which is alive here.
        let len = unsafe { GetLengthSid(sid) } as usize;
        let mut copy = vec![0u64; len.div_ceil(8)];
        // SAFETY: `copy` has room for `len` bytes; the SID is `len` bytes long.
        unsafe { ptr::copy_nonoverlapping(sid as *const u8, copy.as_mut_ptr().cast::<u8>(), len) };
        sids.push(copy);
    }
    Ok(sids)
}
