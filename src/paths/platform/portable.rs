//! The portable ways (see the table in [`super`]): what macOS runs, and Linux with
//! `AGENT_FS_TOOLS_PORTABLE=1`.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};

use rustix::fs::{Dir, Mode, OFlags};

use crate::paths::os_error::libc_codes;
use crate::paths::EntryKind;

/// One `openat(O_NOFOLLOW | O_DIRECTORY)` per component, each on the descriptor the previous one
/// gave: a symlink anywhere is `ELOOP` (or `ENOTDIR`), and with plain components only there is
/// no `..` to climb out with — the guarantee `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` gives in one
/// call.
pub(super) fn open_beneath(start: OwnedFd, rel: &Path, flags: OFlags) -> io::Result<OwnedFd> {
    let parts: Vec<&OsStr> = rel
        .components()
        .map(|c| match c {
            Component::Normal(n) => Ok(n),
            _ => Err(io::Error::from_raw_os_error(libc_codes::EXDEV)),
        })
        .collect::<io::Result<_>>()?;
    let Some((last, on_the_way)) = parts.split_last() else {
        return rustix::fs::openat(&start, ".", flags, Mode::empty()).map_err(io::Error::from);
    };
    let step = super::handle_access() | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut current = start;
    for part in on_the_way {
        current = rustix::fs::openat(&current, *part, step, Mode::empty())?;
    }
    rustix::fs::openat(&current, *last, flags, Mode::empty()).map_err(io::Error::from)
}

/// `readdir` on a descriptor of its own (`dir` is left where it is).
pub(super) fn read_entries(dir: BorrowedFd<'_>) -> io::Result<Vec<(OsString, Option<EntryKind>)>> {
    let mut reader = Dir::read_from(dir)?;
    let mut entries = Vec::new();
    while let Some(entry) = reader.read() {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        entries.push((
            OsStr::from_bytes(name).to_owned(),
            super::listed_kind(entry.file_type()),
        ));
    }
    Ok(entries)
}

/// `fsync` of the directory `dir` (any descriptor of it), so that the names written in it last.
pub(super) fn sync_dir(dir: BorrowedFd<'_>) -> io::Result<()> {
    let readable = rustix::fs::openat(
        dir,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    rustix::fs::fsync(readable).map_err(io::Error::from)
}

/// `read` and `write` through a buffer.
pub(super) fn copy_bytes(source: &File, copy: &mut File, len: u64) -> io::Result<u64> {
    let mut buffer = vec![0u8; (256 << 10).min(len.max(1) as usize)];
    let mut source = source;
    let mut copied = 0;
    while copied < len {
        let want = buffer.len().min((len - copied) as usize);
        let n = match source.read(&mut buffer[..want]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        copy.write_all(&buffer[..n])?;
        copied += n as u64;
    }
    Ok(copied)
}
