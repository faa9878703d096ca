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

use std::fs::File;
use std::io::{self, Seek};

use super::place::ArchiveFile;
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

    /// Opens `archive` (see [`ArchiveFile::open`]) and takes its lock without waiting:
    /// `Ok(None)` while another call holds it. `NotFound` if it is gone, or if its name no longer
    /// holds the file that was locked (a restore that just finished deleted it).
    pub(crate) fn try_claim(archive: &ArchiveFile) -> io::Result<Option<Self>> {
        let file = archive.open()?;
        match fsops::try_lock_exclusive(&file) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
            Err(e) => return Err(e),
        }
        let hold = ArchiveHold {
            file,
            mark_release: false,
        };
        hold.check_named(archive)?;
        Ok(Some(hold))
    }

    /// `NotFound` unless `archive`'s name still holds the held file.
    pub(crate) fn check_named(&self, archive: &ArchiveFile) -> io::Result<()> {
        archive.check_named(&self.file)
    }

    /// The held file.
    pub(crate) fn file(&self) -> &File {
        &self.file
    }

    /// The held file's ctime as `(seconds, nanoseconds)`.
    pub(crate) fn ctime(&self) -> io::Result<(i64, u32)> {
        Ok(fsops::snapshot_fd(&self.file)?.ctime)
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
            // Best effort: should it fail, a clear that began earlier may remove the archive
            // now, as it could before locks.
            let _ = fsops::mark_changed(&self.file);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trash::place::testing::bucket_at;
    use std::ffi::OsStr;
    use std::fs;

    #[test]
    fn one_claim_at_a_time_and_a_reader_shares_it() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("a.tar.gz");
        fs::write(&path, b"archive").unwrap();
        let archive = bucket_at(tmp.path())
            .archive(OsStr::new("a.tar.gz"))
            .unwrap();
        let held = ArchiveHold::try_claim(&archive).unwrap().unwrap();
        assert!(ArchiveHold::try_claim(&archive).unwrap().is_none());
        let mut reader = held.reader().unwrap();
        let mut text = String::new();
        std::io::Read::read_to_string(&mut reader, &mut text).unwrap();
        assert_eq!(text, "archive");
        drop(reader);
        assert!(ArchiveHold::try_claim(&archive).unwrap().is_none());
        drop(held);
        assert!(ArchiveHold::try_claim(&archive).unwrap().is_some());
    }

    #[test]
    fn a_claim_on_a_gone_or_replaced_name_is_not_found() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("a.tar.gz");
        let archive = bucket_at(tmp.path())
            .archive(OsStr::new("a.tar.gz"))
            .unwrap();
        let missing = ArchiveHold::try_claim(&archive).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        fs::write(&path, b"one").unwrap();
        let held = ArchiveHold::try_claim(&archive).unwrap().unwrap();
        fs::remove_file(&path).unwrap();
        fs::write(&path, b"another").unwrap();
        assert_eq!(
            held.check_named(&archive).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
    }
}
