//! Extended attributes (Linux: user attributes, POSIX ACLs, file capabilities, security labels;
//! macOS: `com.apple.*` and others, without namespaces) read from one open file or directory and
//! given to another: a move between file systems copies them all; the trash archives those
//! [`is_archived`] names (as `SCHILY.xattr.*` PAX records) and a restore puts them back.
//! Symlinks' attributes are not handled: there is no descriptor-based call for them. (macOS's
//! ACLs are not extended attributes: see `platform::copy_acl`.)
//!
//! Windows: no attribute is read or written (../../docs/windows.md#what-windows-cannot-keep).
//! NTFS extended attributes and alternate data streams (`Zone.Identifier` among them) are not
//! kept by a move between volumes, a rewrite or the trash; the access control list is, through
//! `platform::copy_acl`.

use std::io;

#[cfg(unix)]
use rustix::fs::XattrFlags;
#[cfg(unix)]
use rustix::io::Errno;

#[cfg(unix)]
use super::platform;
use crate::paths::{AsDir, BorrowedDir};

/// One extended attribute: its full name (`user.origin`, `system.posix_acl_access`) and value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Xattr {
    pub name: Vec<u8>,
    pub value: Vec<u8>,
}

/// Every extended attribute of `fd` that we may read (none where the file system has none).
#[cfg(unix)]
pub fn read_all(fd: impl AsDir) -> io::Result<Vec<Xattr>> {
    let fd = fd.as_dir();
    let names = match read_sized(
        || rustix::fs::flistxattr_query(fd),
        |buf| rustix::fs::flistxattr(fd, buf),
    ) {
        Ok(names) => names,
        Err(e) if platform::is_unsupported(e) => return Ok(Vec::new()),
        Err(e) => return Err(e.into()),
    };
    let mut all = Vec::new();
    for name in names.split(|&b| b == 0).filter(|n| !n.is_empty()) {
        match read_sized(
            || rustix::fs::fgetxattr_query(fd, name),
            |buf| rustix::fs::fgetxattr(fd, name, buf),
        ) {
            Ok(value) => all.push(Xattr {
                name: name.to_vec(),
                value,
            }),
            // Removed since it was listed, or hidden from us (`trusted.*` without privilege).
            Err(e) if e == platform::NO_SUCH_ATTRIBUTE => {}
            Err(Errno::PERM | Errno::ACCESS) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(all)
}

/// Gives `fd` the attributes `xattrs`, as `mv` does: one its file system does not support or we
/// may not set (`security.*` without the capability, say) is left out silently; any other
/// failure is an error. Call it after changing the owner (which clears file capabilities) and
/// before setting the mode (an ACL sets the group bits).
#[cfg(unix)]
pub fn write_all(fd: impl AsDir, xattrs: &[Xattr]) -> io::Result<()> {
    let fd = fd.as_dir();
    for xattr in xattrs {
        match rustix::fs::fsetxattr(fd, &xattr.name[..], &xattr.value, XattrFlags::empty()) {
            Ok(()) | Err(Errno::PERM | Errno::ACCESS) => {}
            Err(e) if platform::is_unsupported(e) => {}
            // A name or value this file system cannot hold.
            Err(Errno::INVAL | Errno::RANGE | Errno::TOOBIG) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Windows: none is read (see the module docs).
#[cfg(windows)]
pub fn read_all(handle: impl AsDir) -> io::Result<Vec<Xattr>> {
    let _ = handle.as_dir();
    Ok(Vec::new())
}

/// Windows: none is written (see the module docs); an attribute a restore names is left out,
/// as one a Unix file system cannot hold is.
#[cfg(windows)]
pub fn write_all(handle: impl AsDir, xattrs: &[Xattr]) -> io::Result<()> {
    let _ = (handle.as_dir(), xattrs);
    Ok(())
}

/// Whether an attribute is one the trash keeps and a restore gives back. On Linux: user
/// attributes and POSIX ACLs; not `security.*` (file capabilities, SELinux labels), `trusted.*`
/// or other `system.*` ones: an archive is untrusted input, and a restored file should not gain
/// privileges from one. macOS names have no namespace: every attribute is kept (Finder tags,
/// `com.apple.quarantine`, …) but the protected `com.apple.system.*` ones. Each system refuses
/// the other's names it cannot hold, and [`write_all`] leaves those out, so one rule serves both.
pub fn is_archived(name: &[u8]) -> bool {
    if name == b"system.posix_acl_access" || name == b"system.posix_acl_default" {
        return true;
    }
    ![
        &b"security."[..],
        b"trusted.",
        b"system.",
        b"com.apple.system.",
    ]
    .iter()
    .any(|privileged| name.starts_with(privileged))
}

/// Whether an attribute of a file stays with the file's new content when it is rewritten
/// (atomically, through a new file): all but file capabilities (`security.capability`), which
/// new content must not inherit.
pub fn is_kept_on_rewrite(name: &[u8]) -> bool {
    name != b"security.capability"
}

/// Gives `copy` every extended attribute of `source` that it can take (see [`write_all`]).
pub fn copy(source: BorrowedDir<'_>, copy: BorrowedDir<'_>) -> io::Result<()> {
    write_all(copy, &read_all(source)?)
}

/// Reads a list or value of unknown size: `query` tells the size, `read` fills a buffer of it,
/// again if it grew in between (`ERANGE`).
#[cfg(unix)]
fn read_sized(
    query: impl Fn() -> Result<usize, Errno>,
    mut read: impl FnMut(&mut [u8]) -> Result<usize, Errno>,
) -> Result<Vec<u8>, Errno> {
    loop {
        let mut buf = vec![0u8; query()?];
        if buf.is_empty() {
            return Ok(buf); // an empty buffer would be taken for another query
        }
        match read(&mut buf) {
            Ok(n) => {
                buf.truncate(n);
                return Ok(buf);
            }
            Err(Errno::RANGE) => continue,
            Err(e) => return Err(e),
        }
    }
}

/// A POSIX access ACL (`system.posix_acl_access`, as the kernel encodes it): the owner rwx,
/// user 4242 r-x, the group r--, mask r-x, others nothing.
#[cfg(all(test, unix))]
pub(crate) fn sample_access_acl() -> Vec<u8> {
    let entry = |tag: u16, perm: u16, id: u32| {
        [
            &tag.to_le_bytes()[..],
            &perm.to_le_bytes(),
            &id.to_le_bytes(),
        ]
        .concat()
    };
    let undefined = u32::MAX;
    [
        2u32.to_le_bytes().to_vec(),
        entry(0x01, 7, undefined),
        entry(0x02, 5, 4242),
        entry(0x04, 4, undefined),
        entry(0x10, 5, undefined),
        entry(0x20, 0, undefined),
    ]
    .concat()
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::fs::File;
    use std::os::fd::AsFd;

    #[test]
    fn extended_attributes_come_along() {
        let dir = tempfile::tempdir().unwrap();
        let source = File::create(dir.path().join("a")).unwrap();
        let copied = File::create(dir.path().join("b")).unwrap();
        let big = vec![b'v'; 3000];
        for (name, value) in [
            ("user.one", &b"1"[..]),
            ("user.big", &big),
            ("user.empty", b""),
        ] {
            rustix::fs::fsetxattr(&source, name, value, XattrFlags::empty()).unwrap();
        }
        copy(source.as_fd(), copied.as_fd()).unwrap();
        let mut read = read_all(copied.as_fd()).unwrap();
        read.sort_by(|a, b| a.name.cmp(&b.name));
        let names: Vec<&[u8]> = read.iter().map(|x| &x.name[..]).collect();
        assert_eq!(names, [&b"user.big"[..], b"user.empty", b"user.one"]);
        assert_eq!(read[0].value, big);
        assert_eq!(read[1].value, b"");
        assert_eq!(read[2].value, b"1");
    }

    #[test]
    fn the_trash_keeps_no_attribute_that_carries_privileges() {
        for kept in [
            &b"user.origin"[..],
            b"system.posix_acl_access",
            b"system.posix_acl_default",
            b"com.apple.quarantine",
            b"com.apple.metadata:_kMDItemUserTags",
        ] {
            assert!(is_archived(kept), "{}", String::from_utf8_lossy(kept));
        }
        for refused in [
            &b"security.capability"[..],
            b"security.selinux",
            b"trusted.overlay.opaque",
            b"system.nfs4_acl",
            b"com.apple.system.Security",
        ] {
            assert!(
                !is_archived(refused),
                "{}",
                String::from_utf8_lossy(refused)
            );
        }
        assert!(!is_kept_on_rewrite(b"security.capability"));
        assert!(is_kept_on_rewrite(b"com.apple.quarantine"));
    }

    #[test]
    fn what_a_file_system_refuses_is_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let file = File::create(dir.path().join("a")).unwrap();
        let refused = Xattr {
            name: b"nonsense.namespace".to_vec(),
            value: b"x".to_vec(),
        };
        let kept = Xattr {
            name: b"user.kept".to_vec(),
            value: b"y".to_vec(),
        };
        write_all(file.as_fd(), &[refused, kept.clone()]).unwrap();
        assert_eq!(read_all(file.as_fd()).unwrap(), [kept]);
    }
}
