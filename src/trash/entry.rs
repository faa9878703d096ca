//! Reading one entry of an untrusted archive: its type, path, mode, mtime and link target,
//! each checked before anything is created from it.
//!
//! Only regular files, directories, symlinks and hard links pass (devices and FIFOs are corrupt);
//! a path must be relative, made of plain components (no `..`, `.` or empty parts) and lie at or
//! under the archived `relativePath`; so must a hard link's target, which the restore then accepts
//! only if it names a regular file it extracted earlier; a symlink needs a non-empty target
//! without NUL; the mtime comes from the PAX record when there is one, and so do extended
//! attributes.

use std::io::{self, Read};

use tar::{Entry, EntryType};

use super::error::{Signal, TrashError};
use super::read;
use super::tarx;
use crate::paths::xattrs::{self, Xattr};
use crate::paths::EntryKind;

/// An entry's facts, read from its headers.
pub(crate) struct EntryInfo {
    /// What to create (a hard link is a [`EntryKind::File`] with `hard_link` set).
    pub kind: EntryKind,
    /// Its path below the archived root (`""` for the root itself).
    pub sub: Vec<u8>,
    /// A hard-link entry: the path below the archived root of the file it is another name of.
    pub hard_link: Option<Vec<u8>>,
    pub mode: u32,
    pub mtime: (i64, u32),
    pub link: Option<Vec<u8>>,
    /// Its owner and group (uid, gid), to give back as far as we may.
    pub owner: Option<(u32, u32)>,
    /// Extended attributes (`SCHILY.xattr.*` PAX records), to give back where possible.
    pub xattrs: Vec<Xattr>,
}

/// Read and check an entry's type, path, mode, mtime and link target; read its owner and
/// extended attributes.
pub(crate) fn entry_info<R: Read>(
    entry: &mut Entry<'_, R>,
    relative_path: &str,
) -> Result<EntryInfo, TrashError> {
    let entry_type = entry.header().entry_type();
    let kind = entry_kind(entry_type)?;
    let sub = sub_path(&entry.path_bytes(), kind, relative_path)?;
    let hard_link = match entry_type {
        EntryType::Link => Some(hard_link_target(entry, relative_path)?),
        _ => None,
    };
    let mode = entry.header().mode().map_err(read::unreadable)? & 0o7777;
    let link = match kind {
        EntryKind::Symlink => Some(link_target(entry)?),
        _ => None,
    };
    let (mtime, xattrs) = pax_facts(entry)?;
    let id = |n: io::Result<u64>| n.ok().and_then(|n| u32::try_from(n).ok());
    let owner = id(entry.header().uid()).zip(id(entry.header().gid()));
    Ok(EntryInfo {
        kind,
        sub,
        hard_link,
        mode,
        mtime,
        link,
        owner,
        xattrs,
    })
}

/// The entry's path below the archived root (`""` for the root itself), or corrupt.
fn sub_path(path: &[u8], kind: EntryKind, relative_path: &str) -> Result<Vec<u8>, TrashError> {
    let shown = String::from_utf8_lossy(path);
    let trimmed = match kind {
        EntryKind::Directory => path.strip_suffix(b"/").unwrap_or(path),
        _ => path,
    };
    if trimmed.starts_with(b"/") {
        return Err(TrashError::corrupt(format!(
            "entry {shown:?} has an absolute path"
        )));
    }
    let parts: Vec<&[u8]> = trimmed.split(|b| *b == b'/').collect();
    let plain = |p: &&[u8]| !p.is_empty() && *p != b"." && *p != b"..";
    if !parts.iter().all(plain) {
        return Err(TrashError::corrupt(format!(
            "entry {shown:?} is not a plain relative path"
        )));
    }
    let prefix: Vec<&[u8]> = relative_path.as_bytes().split(|b| *b == b'/').collect();
    if parts.len() < prefix.len() || parts[..prefix.len()] != prefix[..] {
        return Err(TrashError::corrupt(format!(
            "entry {shown:?} is outside {:?}",
            relative_path
        )));
    }
    Ok(parts[prefix.len()..].join(&b'/'))
}

/// The kind of an entry, or corrupt for anything a restore refuses to create.
fn entry_kind(entry_type: EntryType) -> Result<EntryKind, TrashError> {
    match entry_type {
        EntryType::Directory => Ok(EntryKind::Directory),
        EntryType::Symlink => Ok(EntryKind::Symlink),
        EntryType::Regular | EntryType::Link => Ok(EntryKind::File),
        EntryType::Char | EntryType::Block | EntryType::Fifo => {
            Err(TrashError::corrupt("it holds a device or FIFO entry"))
        }
        other => Err(TrashError::corrupt(format!(
            "it holds an entry of unsupported type {:?}",
            other.as_byte() as char
        ))),
    }
}

/// A hard-link entry's target, as a path below the archived root: it must be a plain relative
/// path inside the archived tree (whether it names a file extracted earlier is the restore's
/// check).
fn hard_link_target<R: Read>(
    entry: &Entry<'_, R>,
    relative_path: &str,
) -> Result<Vec<u8>, TrashError> {
    let target = entry.link_name_bytes().unwrap_or_default();
    sub_path(&target, EntryKind::File, relative_path).map_err(|_| {
        TrashError::corrupt(format!(
            "its hard link {:?} points at {:?}, which is not inside the archived tree",
            String::from_utf8_lossy(&entry.path_bytes()),
            String::from_utf8_lossy(&target)
        ))
    })
}

/// A symlink entry's target: present, non-empty, without NUL.
fn link_target<R: Read>(entry: &Entry<'_, R>) -> Result<Vec<u8>, TrashError> {
    match entry.link_name_bytes() {
        Some(target) if !target.is_empty() && !target.contains(&0) => Ok(target.into_owned()),
        _ => Err(TrashError::corrupt(
            "it holds a symlink without a valid target",
        )),
    }
}

/// An entry's mtime (the PAX `mtime`, to the nanosecond, if present, else the header's seconds)
/// and its extended attributes.
fn pax_facts<R: Read>(entry: &mut Entry<'_, R>) -> Result<((i64, u32), Vec<Xattr>), TrashError> {
    let mut mtime = None;
    let mut xattrs = Vec::new();
    if let Some(extensions) = entry.pax_extensions().map_err(read::unreadable)? {
        for extension in extensions {
            let extension = extension.map_err(read::unreadable)?;
            let key = extension.key_bytes();
            if key == b"mtime" {
                let value = extension.value().unwrap_or("");
                let parsed = tarx::parse_pax_time(value)
                    .ok_or_else(|| TrashError::corrupt("it holds an invalid mtime"))?;
                mtime = Some(parsed);
            } else if let Some(name) = key.strip_prefix(tarx::XATTR_PAX_PREFIX.as_bytes()) {
                if xattrs::is_archived(name) && !name.contains(&0) {
                    xattrs.push(Xattr {
                        name: name.to_vec(),
                        value: extension.value_bytes().to_vec(),
                    });
                }
            }
        }
    }
    let mtime = match mtime {
        Some(mtime) => mtime,
        None => {
            let secs = entry.header().mtime().map_err(read::unreadable)?;
            let secs = i64::try_from(secs)
                .map_err(|_| TrashError::corrupt("it holds an invalid mtime"))?;
            (secs, 0)
        }
    };
    Ok((mtime, xattrs))
}

/// Reads an archive entry, turning decoding errors into corrupt-archive signals (so they are
/// told apart from errors writing the restored file).
pub(crate) struct Decoding<'e, 'r, R: Read>(pub &'e mut Entry<'r, R>);

impl<R: Read> Read for Decoding<'_, '_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf).map_err(|e| {
            if e.kind() == io::ErrorKind::Interrupted {
                e
            } else {
                Signal::Corrupt(format!("it cannot be decoded ({e})")).into_io()
            }
        })
    }
}
