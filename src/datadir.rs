//! The data directory (../docs/security.md#the-data-directory): the trash, the audit log, the crash journal and the history of
//! every workspace. What is in it decides what undo and recovery write into the user's files, so
//! it is trusted only as far as nobody else can have put anything there:
//!
//! - its path is canonical (symlinks the user set up are resolved once, when the options are
//!   read), and it is opened — and created where missing, private (0700) — one component at a
//!   time from `/` without following a symlink, then held by descriptor;
//! - it, and every directory in it, is used only if it is owned by this process's effective user
//!   and neither its group nor others may write to it (see [`Untrusted`]); root is no exception:
//!   its directories are owned by uid 0. The check is made on the descriptor that is then used,
//!   each time a directory in it is opened, so a directory swapped in after a check is never the
//!   one acted on;
//! - everything in it is opened relative to those descriptors, also without following links, so
//!   a symlink put in its place or inside it later redirects nothing we write or read; files read
//!   from it are checked the same way ([`check_file`]);
//! - the tools cannot reach it at all (the sandbox hides it, and a missing folder that is to
//!   hold it, see `paths::sandbox`).
//!
//! Since nobody but the user (and root) can write in it, what it holds is the user's own record,
//! and history records and deltas are not sealed (the journal's records are, see
//! `journal::seal`, for what might be copied in from elsewhere; the README's security section
//! says why the history needs no seal).
//!
//! The directory is opened on first use, not when the workspace is created: a read-only host
//! never creates it, and one whose data directory cannot be created learns it from the call that
//! needed it.

use std::fmt;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::paths::shown::Shown;
use crate::paths::EntryKind;
use crate::paths::{canonical, fsops};
use crate::paths::{AsDir, BorrowedDir, Dir};

/// Mode of the directories we create in the data directory (and of the data directory itself).
const PRIVATE_DIR: u32 = 0o700;

/// Group and other write bits: a directory or file with any of them is not private.
const WRITABLE_BY_OTHERS: u32 = 0o022;

/// One data directory, opened lazily and then held.
#[derive(Debug)]
pub struct DataDir {
    path: PathBuf,
    fd: Mutex<Option<Arc<Dir>>>,
}

impl DataDir {
    /// The data directory at the canonical `path` (not opened yet).
    pub fn new(path: PathBuf) -> Self {
        Self {
            path,
            fd: Mutex::new(None),
        }
    }

    /// Its canonical path (for messages, and for the sandbox to hide).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The held descriptor of the data directory, opened (and, with `create`, created) and
    /// checked on first use. `NotFound` when it does not exist and `create` is false; an
    /// [`Untrusted`] error when it is not private to this user (not held then: checked again on
    /// the next use, so fixing it needs no restart).
    fn root(&self, create: bool) -> io::Result<Arc<Dir>> {
        let mut slot = self.fd.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(fd) = slot.as_ref() {
            return Ok(fd.clone());
        }
        let anchor = canonical::root_of(&self.path);
        let fd = if create {
            fsops::ensure_dir_mode(&anchor, &self.path, PRIVATE_DIR)?.0
        } else {
            fsops::open_dir(&anchor, &self.path, false)?
        };
        check_dir(fd.as_dir(), &self.path, Place::DataDir)?;
        check_dirs_in(fd.as_dir(), &self.path, &mut Vec::new())?;
        let fd = Arc::new(fd);
        *slot = Some(fd.clone());
        Ok(fd)
    }

    /// A descriptor (`O_PATH` on Linux) of `<data dir>/<sub>`, `sub` being plain relative
    /// components such as `trash/<hash>`; with `create`, what is missing is created private
    /// (0700). Each directory on the way is opened from the one before without following a link
    /// and checked to be private to this user (an [`Untrusted`] error otherwise). `NotFound` when
    /// it does not exist and `create` is false.
    pub fn open(&self, sub: &Path, create: bool) -> io::Result<Dir> {
        let root = self.root(create)?;
        let mut current = fsops::open_dir_beneath(root.as_dir(), Path::new(""), false)?;
        let mut path = self.path.clone();
        for component in sub.components() {
            let Component::Normal(part) = component else {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{} is not a plain relative path", sub.display()),
                ));
            };
            path.push(part);
            current = if create {
                fsops::make_dirs_beneath(current, Path::new(part), PRIVATE_DIR)?.0
            } else {
                fsops::open_dir_beneath(current.as_dir(), Path::new(part), false)?
            };
            check_dir(current.as_dir(), &path, Place::Inside)?;
        }
        Ok(current)
    }
}

/// Checks that `file`, opened from the data directory as `path`, is a regular file of this user
/// that neither its group nor others may write to: what the user's own undo, recovery or restore
/// may act on. An [`Untrusted`] error (or `InvalidData` for anything but a regular file)
/// otherwise.
pub fn check_file(file: &std::fs::File, path: &Path) -> io::Result<()> {
    let stat = fsops::snapshot_fd(file)?;
    if stat.kind() != EntryKind::File {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{} is not a regular file", path.shown()),
        ));
    }
    check(stat, Some(file.as_dir()), path, Place::File)
}

/// Whether `e` is the refusal of something in the data directory that is not private to this
/// user (see [`Untrusted`]).
pub fn is_untrusted(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<Untrusted>())
}

/// Checks every directory beneath `dir` (known as `path`), as [`DataDir::open`] checks the ones
/// it opens: a directory others can write anywhere in the data directory refuses all of it, also
/// to a use that would not open that directory (an undo and the audit log, say). Nothing is
/// followed: symlinks are not descended, subdirectories are opened `O_NOFOLLOW` from their
/// parent's descriptor.
fn check_dirs_in(dir: BorrowedDir<'_>, path: &Path, buffer: &mut Vec<u8>) -> io::Result<()> {
    let readable = fsops::reopen_readable(dir)?;
    for (name, kind) in fsops::read_entries(readable.as_dir(), buffer)? {
        if kind.is_some_and(|kind| kind != EntryKind::Directory) {
            continue;
        }
        let Some(stat) = fsops::lstat_at(readable.as_dir(), &name)? else {
            continue;
        };
        if EntryKind::of(&stat) != EntryKind::Directory {
            continue;
        }
        // Checked before it is opened: one of another user's may not be readable by us.
        let sub_path = path.join(&name);
        check(fsops::Snapshot::of(&stat), None, &sub_path, Place::Inside)?;
        let sub = match fsops::open_subdir(readable.as_dir(), &name) {
            Ok(sub) => sub,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        check_dir(sub.as_dir(), &sub_path, Place::Inside)?;
        check_dirs_in(sub.as_dir(), &sub_path, buffer)?;
    }
    Ok(())
}

fn check_dir(dir: BorrowedDir<'_>, path: &Path, place: Place) -> io::Result<()> {
    check(fsops::snapshot_fd(dir)?, Some(dir), path, place)
}

/// Refuses what `stat` describes (open as `handle`, where it is open) unless it is this user's
/// and no one else may write it.
fn check(
    stat: fsops::Snapshot,
    handle: Option<BorrowedDir<'_>>,
    path: &Path,
    place: Place,
) -> io::Result<()> {
    let why = if !fsops::owned_by_user(stat.uid, handle)? {
        Why::Owner {
            owner: fsops::other_owner(stat.uid),
        }
    } else if stat.permissions() & WRITABLE_BY_OTHERS != 0 {
        Why::Writable {
            mode: stat.permissions(),
        }
    } else {
        return Ok(());
    };
    Err(io::Error::new(
        io::ErrorKind::PermissionDenied,
        Untrusted {
            path: path.to_owned(),
            place,
            why,
        },
    ))
}

/// A directory or file of the data directory that someone other than this user could have
/// written: it, or what it holds, may have been planted (a history entry whose undo writes a git
/// hook; an archive swapped for another), so nothing in it is used. Its text names the fix.
#[derive(Debug)]
pub struct Untrusted {
    path: PathBuf,
    place: Place,
    why: Why,
}

#[derive(Debug, Clone, Copy)]
enum Place {
    DataDir,
    Inside,
    File,
}

#[derive(Debug, Clone)]
enum Why {
    /// `owner`: who owns it, as `fsops::other_owner` names them.
    Owner {
        owner: String,
    },
    Writable {
        mode: u32,
    },
}

impl fmt::Display for Untrusted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path.shown();
        let what = match self.place {
            Place::DataDir => "the data directory",
            Place::Inside => "the directory",
            Place::File => "the file",
        };
        match &self.why {
            Why::Owner { owner } => write!(
                f,
                "{what} {path} is owned by another user ({owner}), so nothing in the data directory can be trusted and nothing was read \
                 from it. Choose another data directory (trash.dataDir, or \
                 AGENT_FS_TOOLS_DATA_DIR), or move {path} out of the way"
            ),
            Why::Writable { mode } => write!(
                f,
                "{what} {path} can be written by others (mode {mode:04o}), so nothing in the \
                 data directory can be trusted and nothing was read from it. Run chmod go-w \
                 {path} once you have checked what it holds, or choose another data directory \
                 (trash.dataDir, or AGENT_FS_TOOLS_DATA_DIR)"
            ),
        }
    }
}

impl std::error::Error for Untrusted {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::testing::{chown, symlink, Modes};
    use std::fs;

    #[test]
    fn it_is_created_private_and_held_by_descriptor() {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        let data = DataDir::new(base.join("data"));
        assert_eq!(
            data.open(Path::new("trash/abc"), false).unwrap_err().kind(),
            io::ErrorKind::NotFound,
            "nothing is created without asking"
        );
        assert!(!base.join("data").exists());
        let fd = data.open(Path::new("trash/abc"), true).unwrap();
        for dir in ["data", "data/trash", "data/trash/abc"] {
            let mode = fs::metadata(base.join(dir)).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "{dir} is private");
        }
        // Moved away and replaced by a link: what we hold still is the directory we opened.
        fs::rename(base.join("data"), base.join("moved")).unwrap();
        fs::create_dir(base.join("elsewhere")).unwrap();
        symlink(base.join("elsewhere"), base.join("data")).unwrap();
        let again = data.open(Path::new("audit"), true).unwrap();
        drop((fd, again));
        assert!(base.join("moved/audit").is_dir());
        assert!(fs::read_dir(base.join("elsewhere"))
            .unwrap()
            .next()
            .is_none());
    }

    #[test]
    fn a_symlink_in_its_place_is_never_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        fs::create_dir(base.join("outside")).unwrap();
        // Planted before the data directory was ever created.
        symlink(base.join("outside"), base.join("data")).unwrap();
        let data = DataDir::new(base.join("data"));
        assert!(data.open(Path::new("trash"), true).is_err());
        // A link below it is refused as well.
        let real = DataDir::new(base.join("real"));
        real.open(Path::new(""), true).unwrap();
        symlink(base.join("outside"), base.join("real/journal")).unwrap();
        assert!(real.open(Path::new("journal/x"), true).is_err());
        assert!(fs::read_dir(base.join("outside")).unwrap().next().is_none());
    }

    /// Another user's uid to give directories to (tests run as root; as anyone else a
    /// directory cannot be given away and the owner checks are skipped).
    fn someone_else() -> Option<u32> {
        (crate::paths::process::effective_user() == 0).then_some(65534)
    }

    fn refusal(e: io::Error) -> String {
        assert!(is_untrusted(&e), "{e:?}");
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
        e.to_string()
    }

    #[test]
    fn a_data_dir_someone_else_owns_is_refused_naming_the_fix() {
        let Some(other) = someone_else() else {
            eprintln!("skipped: not root, cannot give a directory to another user");
            return;
        };
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        // Made first by another user: private to them, but not ours.
        fs::create_dir(base.join("data")).unwrap();
        fs::set_permissions(base.join("data"), fs::Permissions::from_mode(0o700)).unwrap();
        chown(base.join("data"), Some(other), Some(other)).unwrap();
        let data = DataDir::new(base.join("data"));
        for create in [false, true] {
            let text = refusal(data.open(Path::new("history/x"), create).unwrap_err());
            assert!(
                text.contains("is owned by another user (uid 65534"),
                "{text}"
            );
            assert!(text.contains("Choose another data directory"), "{text}");
        }
        assert!(!base.join("data/history").exists(), "nothing created in it");
    }

    #[test]
    fn a_data_dir_others_can_write_is_refused_naming_the_fix() {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        for mode in [0o777, 0o770, 0o1777, 0o702] {
            fs::create_dir_all(base.join("data")).unwrap();
            fs::set_permissions(base.join("data"), fs::Permissions::from_mode(mode)).unwrap();
            let data = DataDir::new(base.join("data"));
            let text = refusal(data.open(Path::new("trash"), true).unwrap_err());
            assert!(
                text.contains(&format!("can be written by others (mode {mode:04o})")),
                "{text}"
            );
            assert!(
                text.contains(&format!("Run chmod go-w {}", base.join("data").display())),
                "{text}"
            );
            assert!(!base.join("data/trash").exists());
            // Fixed while the host runs: the next use succeeds.
            fs::set_permissions(base.join("data"), fs::Permissions::from_mode(0o755)).unwrap();
            data.open(Path::new("trash"), true).unwrap();
            fs::remove_dir_all(base.join("data")).unwrap();
        }
    }

    #[test]
    fn every_directory_in_it_is_checked_on_every_open() {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        let data = DataDir::new(base.join("data"));
        data.open(Path::new("history/abc/deltas"), true).unwrap();
        for (dir, shown) in [
            ("data/history", "the directory"),
            ("data/history/abc", "the directory"),
            ("data/history/abc/deltas", "the directory"),
        ] {
            fs::set_permissions(base.join(dir), fs::Permissions::from_mode(0o777)).unwrap();
            for create in [false, true] {
                let text = refusal(
                    data.open(Path::new("history/abc/deltas"), create)
                        .unwrap_err(),
                );
                let expected = format!("{shown} {} can be written", base.join(dir).display());
                assert!(text.contains(&expected), "{text}");
            }
            fs::set_permissions(base.join(dir), fs::Permissions::from_mode(0o700)).unwrap();
        }
        if let Some(other) = someone_else() {
            chown(base.join("data/history/abc"), Some(other), None).unwrap();
            let text = refusal(data.open(Path::new("history/abc"), false).unwrap_err());
            assert!(text.contains("is owned by another user"), "{text}");
        }
        data.open(Path::new("journal"), true).unwrap();
    }

    #[test]
    fn a_directory_others_can_write_anywhere_in_it_refuses_all_of_it() {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        DataDir::new(base.join("data"))
            .open(Path::new("trash/other-root"), true)
            .unwrap();
        fs::create_dir(base.join("data/audit")).unwrap();
        symlink("/tmp", base.join("data/link")).unwrap();
        fs::write(base.join("data/file"), "").unwrap();
        fs::set_permissions(base.join("data/file"), fs::Permissions::from_mode(0o666)).unwrap();
        // Checked when the data directory is opened, whatever the use opens in it.
        DataDir::new(base.join("data"))
            .open(Path::new("history"), true)
            .unwrap();
        for dir in ["data/audit", "data/trash/other-root"] {
            fs::set_permissions(base.join(dir), fs::Permissions::from_mode(0o777)).unwrap();
            let fresh = DataDir::new(base.join("data"));
            let text = refusal(fresh.open(Path::new("history"), true).unwrap_err());
            assert!(
                text.contains(&format!("{} can be written", base.join(dir).display())),
                "{text}"
            );
            fs::set_permissions(base.join(dir), fs::Permissions::from_mode(0o700)).unwrap();
        }
        if let Some(other) = someone_else() {
            fs::set_permissions(base.join("data/audit"), fs::Permissions::from_mode(0o700))
                .unwrap();
            chown(base.join("data/audit"), Some(other), Some(other)).unwrap();
            let fresh = DataDir::new(base.join("data"));
            let text = refusal(fresh.open(Path::new("history"), false).unwrap_err());
            assert!(text.contains("is owned by another user"), "{text}");
        }
    }

    #[test]
    fn a_file_read_from_it_must_be_ours_and_private() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("changes.jsonl");
        fs::write(&path, "{}").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        check_file(&fs::File::open(&path).unwrap(), &path).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o666)).unwrap();
        let text = refusal(check_file(&fs::File::open(&path).unwrap(), &path).unwrap_err());
        assert!(text.starts_with("the file "), "{text}");
        if let Some(other) = someone_else() {
            fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
            chown(&path, Some(other), None).unwrap();
            refusal(check_file(&fs::File::open(&path).unwrap(), &path).unwrap_err());
        }
        let dir = fs::File::open(tmp.path()).unwrap();
        let e = check_file(&dir, tmp.path()).unwrap_err();
        assert!(!is_untrusted(&e) && e.kind() == io::ErrorKind::InvalidData);
    }
}
