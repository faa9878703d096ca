//! Archives in use. An exclusive `flock` on an archive says a call still needs it: the trash
//! that wrote it holds one from before the archive is renamed into place until the original is
//! removed and the call has reported where the archive is (or, before an overwrite, until the
//! overwrite is done); a restore holds one while it reads the archive and deletes it. `clear`
//! takes the lock without waiting and skips what it cannot take, and a second restore of an
//! archive in use is refused. The lock dies with the process, so a crash leaves nothing to undo.
//!
//! When the trash lets go, it first bumps the archive's ctime: `clear` removes only archives
//! whose ctime is older than its own start, so an archive is cleared only by a clear that began
//! after the call that made it was done with it, never by one that merely reached it late.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Seek};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

use crate::paths::fsops;

/// An exclusive `flock` on one archive, held while this value lives.
#[derive(Debug)]
pub struct ArchiveHold {
    file: File,
    /// Bump the ctime when letting go (the hold of the trash that made the archive).
    mark_release: bool,
}

impl ArchiveHold {
    /// Locks `file`, a temp archive not yet renamed into place (nobody else can have it open
    /// under an archive name, so the lock is free).
    pub(crate) fn lock_new(file: File) -> io::Result<Self> {
        fsops::try_lock_exclusive(&file)?;
        Ok(ArchiveHold {
            file,
            mark_release: true,
        })
    }

    /// Opens the archive at `path` and takes its lock without waiting: `Ok(None)` while another
    /// call holds it. `NotFound` if it is gone, or if `path` no longer names the file that was
    /// locked (a restore that just finished deleted it).
    pub(crate) fn try_claim(path: &Path) -> io::Result<Option<Self>> {
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(path)?;
        match fsops::try_lock_exclusive(&file) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
            Err(e) => return Err(e),
        }
        let hold = ArchiveHold {
            file,
            mark_release: false,
        };
        hold.check_named(path)?;
        Ok(Some(hold))
    }

    /// `NotFound` unless `path` still names the held file.
    pub(crate) fn check_named(&self, path: &Path) -> io::Result<()> {
        let held = self.file.metadata()?;
        let named = fs::symlink_metadata(path)?;
        if (named.dev(), named.ino()) != (held.dev(), held.ino()) {
            return Err(io::ErrorKind::NotFound.into());
        }
        Ok(())
    }

    /// The held file.
    pub(crate) fn file(&self) -> &File {
        &self.file
    }

    /// The held file's ctime as `(seconds, nanoseconds)`.
    pub(crate) fn ctime(&self) -> io::Result<(i64, i64)> {
        let meta = self.file.metadata()?;
        Ok((meta.ctime(), meta.ctime_nsec()))
    }

    /// A descriptor of the held file to read from its start. It shares the lock (and the file
    /// offset) with this hold, so reading through it needs no second claim.
    pub(crate) fn reader(&self) -> io::Result<File> {
        let mut file = self.file.try_clone()?;
        file.rewind()?;
        Ok(file)
    }
}

impl Drop for ArchiveHold {
    fn drop(&mut self) {
        if self.mark_release {
            // Setting the same mode changes nothing but the ctime (best effort: should it fail,
            // a clear that began earlier may remove the archive now, as it could before locks).
            let _ = fsops::set_mode_fd(&self.file, 0o600);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_claim_at_a_time_and_a_reader_shares_it() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("a.tar.gz");
        fs::write(&path, b"archive").unwrap();
        let held = ArchiveHold::try_claim(&path).unwrap().unwrap();
        assert!(ArchiveHold::try_claim(&path).unwrap().is_none());
        let mut reader = held.reader().unwrap();
        let mut text = String::new();
        std::io::Read::read_to_string(&mut reader, &mut text).unwrap();
        assert_eq!(text, "archive");
        drop(reader);
        assert!(ArchiveHold::try_claim(&path).unwrap().is_none());
        drop(held);
        assert!(ArchiveHold::try_claim(&path).unwrap().is_some());
    }

    #[test]
    fn a_claim_on_a_gone_or_replaced_name_is_not_found() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("a.tar.gz");
        let missing = ArchiveHold::try_claim(&path).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        fs::write(&path, b"one").unwrap();
        let held = ArchiveHold::try_claim(&path).unwrap().unwrap();
        fs::remove_file(&path).unwrap();
        fs::write(&path, b"another").unwrap();
        assert_eq!(
            held.check_named(&path).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
    }
}
