//! A directory handle: what every `*at` call acts through, without the rest of the crate naming
//! the operating system's descriptor types.
//!
//! A [`Dir`] is a directory opened beneath an allowed tree (or the data directory) by
//! [`fsops`](super::fsops); a [`BorrowedDir`] is the same handle lent for a call, got with
//! [`AsDir::as_dir`]. On Unix they are the descriptor types themselves (`OwnedFd`,
//! `BorrowedFd`), on Windows the handle types (`OwnedHandle`, `BorrowedHandle`), so code still written against those compiles unchanged; outside `paths/` only
//! these names, [`AsDir::as_dir`] and the methods every platform's handle has (`try_clone`,
//! `From<File>`) are used, so a port gives them its own handle type here and nothing else moves.

#[cfg(unix)]
use std::os::fd::{AsFd as AsOsHandle, BorrowedFd as BorrowedOsHandle, OwnedFd as OwnedOsHandle};
#[cfg(windows)]
use std::os::windows::io::{
    AsHandle as AsOsHandle, BorrowedHandle as BorrowedOsHandle, OwnedHandle as OwnedOsHandle,
};

/// A directory handle the holder owns (closed when dropped): `OwnedFd` on Unix, `OwnedHandle`
/// on Windows.
pub type Dir = OwnedOsHandle;

/// A directory handle lent for a call: `Copy`, and valid as long as what it was borrowed from.
pub type BorrowedDir<'a> = BorrowedOsHandle<'a>;

/// Lends a handle for a call: every owned or borrowed directory handle (and, where a call takes
/// any open entry, an open file) has it.
pub trait AsDir {
    /// The handle, lent.
    fn as_dir(&self) -> BorrowedDir<'_>;
}

impl<T: AsOsHandle + ?Sized> AsDir for T {
    fn as_dir(&self) -> BorrowedDir<'_> {
        #[cfg(unix)]
        {
            self.as_fd()
        }
        #[cfg(windows)]
        {
            self.as_handle()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lent handle is the handle it was lent from: a name made through one is seen through
    /// the other.
    #[test]
    fn a_lent_handle_acts_on_its_directory() {
        let dir = tempfile::tempdir().unwrap();
        let owned: Dir = crate::paths::testing::open_dir(dir.path());
        crate::paths::fsops::mkdir_at(owned.as_dir(), "made".as_ref()).unwrap();
        let copy = owned.try_clone().unwrap();
        let seen = crate::paths::fsops::lstat_at(copy.as_dir(), "made".as_ref()).unwrap();
        assert_eq!(
            seen.map(|s| s.kind()),
            Some(crate::paths::EntryKind::Directory)
        );
    }
}
