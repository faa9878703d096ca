//! The data directory (../docs/security.md#the-data-directory): the trash, the audit log, the crash journal and the history of
//! every workspace. What is in it decides what undo and recovery write into the user's files, so
//! it is trusted only as far as nobody else can have put anything there:
//!
//! - its path is canonical (symlinks the user set up are resolved once, when the options are
//!   read), and it is opened — and created where missing, private (0700) — one component at a
//!   time from `/` without following a symlink, then held by descriptor — for the workspace's
//!   life on Unix; on Windows only while a call needs it, reopened for the next and refused if
//!   it is no longer the directory first checked (see [`DataDir`]);
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
use std::sync::{Arc, Mutex, Weak};

use crate::paths::shown::Shown;
use crate::paths::{canonical, fsops};
use crate::paths::{AsDir, BorrowedDir, Dir};
use crate::paths::{EntryKind, FileId};

/// Mode of the directories we create in the data directory (and of the data directory itself).
const PRIVATE_DIR: u32 = 0o700;

/// One data directory, opened lazily, then held as its platform allows ([`Holding`]).
#[derive(Debug)]
pub struct DataDir {
    path: PathBuf,
    holding: Holding,
    held: Mutex<Held>,
}

/// How long the data directory's descriptor is held once opened and checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Holding {
    /// For the workspace's life: a directory moved or swapped in at its path later is never
    /// the one used (Unix).
    ForLife,
    /// While a use needs it (the uses in flight share one), then closed: a host can remove the
    /// data directory while a workspace lives also where a directory held open cannot go
    /// (`fsops::open_handles_block_removal`: Windows). The next use reopens it by path, checks
    /// it again, and refuses it unless it is the directory first checked, so a directory moved
    /// or swapped in is never the one used here either: refused where Unix keeps the old one.
    WhileInUse,
}

/// The descriptor held, and what was checked.
#[derive(Debug, Default)]
struct Held {
    /// [`Holding::ForLife`]: the descriptor, from the first use on.
    for_life: Option<Arc<Dir>>,
    /// [`Holding::WhileInUse`]: the descriptor the uses in flight share.
    in_use: Weak<Dir>,
    /// The directory first opened and checked (with every directory in it).
    checked: Option<FileId>,
}

impl DataDir {
    /// The data directory at the canonical `path` (not opened yet), held as this platform
    /// allows.
    pub fn new(path: PathBuf) -> Self {
        let holding = if fsops::open_handles_block_removal() {
            Holding::WhileInUse
        } else {
            Holding::ForLife
        };
        Self::holding(path, holding)
    }

    fn holding(path: PathBuf, holding: Holding) -> Self {
        Self {
            path,
            holding,
            held: Mutex::new(Held::default()),
        }
    }

    /// Its canonical path (for messages, and for the sandbox to hide).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The descriptor of the data directory: the one held ([`Holding`]), else opened (and, with
    /// `create`, created on first use) and checked — the first time, every directory in it too.
    /// `NotFound` when it does not exist and `create` is false; an [`Untrusted`] error when it
    /// is not private to this user (checked again on the next use, so fixing it needs no
    /// restart), or when it is no longer the directory first checked.
    fn root(&self, create: bool) -> io::Result<Arc<Dir>> {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(fd) = held.for_life.clone().or_else(|| held.in_use.upgrade()) {
            return Ok(fd);
        }
        let anchor = canonical::root_of(&self.path);
        let fd = match held.checked {
            None if create => fsops::ensure_dir_mode(&anchor, &self.path, PRIVATE_DIR)?.0,
            None => fsops::open_dir(&anchor, &self.path, false)?,
            // Not made again: one made now would not be the directory checked.
            Some(_) => fsops::open_dir(&anchor, &self.path, false).map_err(|e| {
                if e.kind() == io::ErrorKind::NotFound {
                    untrusted(&self.path, Place::DataDir, Why::Replaced)
                } else {
                    e
                }
            })?,
        };
        let stat = fsops::snapshot_fd(fd.as_dir())?;
        check(stat, Some(fd.as_dir()), &self.path, Place::DataDir)?;
        let identity = FileId {
            dev: stat.dev,
            ino: stat.ino,
        };
        match held.checked {
            None => {
                check_dirs_in(fd.as_dir(), &self.path, &mut Vec::new())?;
                held.checked = Some(identity);
            }
            Some(checked) if checked != identity => {
                return Err(untrusted(&self.path, Place::DataDir, Why::Replaced));
            }
            Some(_) => {}
        }
        let fd = Arc::new(fd);
        match self.holding {
            Holding::ForLife => held.for_life = Some(fd.clone()),
            Holding::WhileInUse => held.in_use = Arc::downgrade(&fd),
        }
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
    } else if let Some(others) = fsops::others_may_write(stat.permissions(), handle, &path.shown())?
    {
        Why::Writable { others }
    } else {
        return Ok(());
    };
    Err(untrusted(path, place, why))
}

fn untrusted(path: &Path, place: Place, why: Why) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        Untrusted {
            path: path.to_owned(),
            place,
            why,
        },
    )
}

/// A directory or file of the data directory that someone other than this user could have
/// written: it, or what it holds, may have been planted (a history entry whose undo writes a git
/// hook; an archive swapped for another), so nothing in it is used; or, where the data directory
/// is not held between calls (Windows), a data directory that is no longer the one first checked.
/// Its text names the fix.
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
        others: fsops::OthersMayWrite,
    },
    /// Not the directory first checked at its path ([`Holding::WhileInUse`]): moved, or
    /// removed (and maybe made again), while the workspace lived.
    Replaced,
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
            Why::Writable { others } => write!(
                f,
                "{what} {path} can be written by others ({how}), so nothing in the \
                 data directory can be trusted and nothing was read from it. Run {fix} once \
                 you have checked what it holds, or choose another data directory \
                 (trash.dataDir, or AGENT_FS_TOOLS_DATA_DIR)",
                how = others.how,
                fix = others.fix,
            ),
            Why::Replaced => write!(
                f,
                "{what} {path} is not the directory this workspace checked when it first used \
                 it: it was moved or removed while the workspace was open, so nothing was read \
                 from or written to it. Open the workspace again (restart the host) to use what \
                 is at {path} now"
            ),
        }
    }
}

impl std::error::Error for Untrusted {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::testing::symlink;
    #[cfg(unix)]
    use crate::paths::testing::{chown, Modes};
    use std::fs;

    /// Unix modes and owners (Windows' access lists: `scripts/windows/data-dir-acl.mjs`).
    #[cfg(unix)]
    #[test]
    fn it_is_created_private_and_held_by_descriptor() {
        let tmp = tempfile::tempdir().unwrap();
        let base = crate::paths::canonical::canonicalize_existing(tmp.path()).unwrap();
        let data = DataDir::holding(base.join("data"), Holding::ForLife);
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

    /// Unix holds the data directory for the workspace's life; Windows cannot (a directory held
    /// open cannot be removed there) and lets go between uses.
    #[test]
    fn each_platform_holds_it_as_it_can() {
        let data = DataDir::new(PathBuf::from("/nowhere"));
        let expected = if cfg!(windows) {
            Holding::WhileInUse
        } else {
            Holding::ForLife
        };
        assert_eq!(data.holding, expected);
    }

    /// Issue 31: held only while a use needs it, nothing of the data directory stays open
    /// between calls, so a host can remove it while a workspace lives; uses in flight share one
    /// descriptor.
    #[cfg(target_os = "linux")]
    #[test]
    fn while_in_use_nothing_of_it_stays_open_between_uses() {
        use crate::paths::testing::descriptors_on;
        let tmp = tempfile::tempdir().unwrap();
        let base = crate::paths::canonical::canonicalize_existing(tmp.path()).unwrap();
        let data = DataDir::holding(base.join("data"), Holding::WhileInUse);
        let audit = data.open(Path::new("audit"), true).unwrap();
        assert_eq!(descriptors_on(&base.join("data")), 0);
        drop(audit);
        let (first, second) = (data.root(false).unwrap(), data.root(false).unwrap());
        assert!(Arc::ptr_eq(&first, &second), "one descriptor in flight");
        assert_eq!(descriptors_on(&base.join("data")), 1);
        drop((first, second));
        assert_eq!(descriptors_on(&base.join("data")), 0);
        fs::remove_dir_all(base.join("data")).unwrap();
    }

    /// Reopened by path, the data directory is used only if it is still the one first checked:
    /// one moved away, swapped for another (even this user's own, private one) or replaced by a
    /// link is refused, naming the fix; one removed is not made again; the one checked, back in
    /// its place, is used again.
    #[test]
    fn while_in_use_only_the_directory_first_checked_is_used() {
        let tmp = tempfile::tempdir().unwrap();
        let base = crate::paths::canonical::canonicalize_existing(tmp.path()).unwrap();
        let data = DataDir::holding(base.join("data"), Holding::WhileInUse);
        data.open(Path::new("trash"), true).unwrap();
        fs::rename(base.join("data"), base.join("moved")).unwrap();
        for create in [false, true] {
            let text = refusal(data.open(Path::new("audit"), create).unwrap_err());
            assert!(
                text.contains("is not the directory this workspace checked"),
                "{text}"
            );
            assert!(text.contains("restart the host"), "{text}");
            assert!(
                !base.join("data").exists(),
                "a removed one is not made again"
            );
        }
        DataDir::new(base.join("data"))
            .open(Path::new(""), true)
            .unwrap();
        let text = refusal(data.open(Path::new("audit"), true).unwrap_err());
        assert!(text.contains("is not the directory"), "{text}");
        fs::remove_dir(base.join("data")).unwrap();
        symlink(base.join("moved"), base.join("data")).unwrap();
        assert!(data.open(Path::new("audit"), true).is_err());
        fs::remove_file(base.join("data")).unwrap();
        assert!(!base.join("moved/audit").exists());
        fs::rename(base.join("moved"), base.join("data")).unwrap();
        data.open(Path::new("audit"), true).unwrap();
        assert!(base.join("data/audit").is_dir());
    }

    /// Reopened for each use, the data directory itself is checked each time: made writable by
    /// others after its first use, it is refused from the next one on.
    /// Unix modes and owners (Windows' access lists: `scripts/windows/data-dir-acl.mjs`).
    #[cfg(unix)]
    #[test]
    fn while_in_use_it_is_checked_on_every_use() {
        let tmp = tempfile::tempdir().unwrap();
        let base = crate::paths::canonical::canonicalize_existing(tmp.path()).unwrap();
        let data = DataDir::holding(base.join("data"), Holding::WhileInUse);
        data.open(Path::new("trash"), true).unwrap();
        fs::set_permissions(base.join("data"), fs::Permissions::from_mode(0o777)).unwrap();
        let text = refusal(data.open(Path::new("trash"), false).unwrap_err());
        assert!(text.contains("the data directory"), "{text}");
        assert!(text.contains("can be written by others"), "{text}");
        fs::set_permissions(base.join("data"), fs::Permissions::from_mode(0o700)).unwrap();
        data.open(Path::new("trash"), false).unwrap();
    }

    #[test]
    fn a_symlink_in_its_place_is_never_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let base = crate::paths::canonical::canonicalize_existing(tmp.path()).unwrap();
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
    #[cfg(unix)]
    fn someone_else() -> Option<u32> {
        (crate::paths::process::effective_user() == 0).then_some(65534)
    }

    fn refusal(e: io::Error) -> String {
        assert!(is_untrusted(&e), "{e:?}");
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
        e.to_string()
    }

    /// Unix modes and owners (Windows' access lists: `scripts/windows/data-dir-acl.mjs`).
    #[cfg(unix)]
    #[test]
    fn a_data_dir_someone_else_owns_is_refused_naming_the_fix() {
        let Some(other) = someone_else() else {
            eprintln!("skipped: not root, cannot give a directory to another user");
            return;
        };
        let tmp = tempfile::tempdir().unwrap();
        let base = crate::paths::canonical::canonicalize_existing(tmp.path()).unwrap();
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

    /// Unix modes and owners (Windows' access lists: `scripts/windows/data-dir-acl.mjs`).
    #[cfg(unix)]
    #[test]
    fn a_data_dir_others_can_write_is_refused_naming_the_fix() {
        let tmp = tempfile::tempdir().unwrap();
        let base = crate::paths::canonical::canonicalize_existing(tmp.path()).unwrap();
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

    /// Unix modes and owners (Windows' access lists: `scripts/windows/data-dir-acl.mjs`).
    #[cfg(unix)]
    #[test]
    fn every_directory_in_it_is_checked_on_every_open() {
        let tmp = tempfile::tempdir().unwrap();
        let base = crate::paths::canonical::canonicalize_existing(tmp.path()).unwrap();
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

    /// Unix modes and owners (Windows' access lists: `scripts/windows/data-dir-acl.mjs`).
    #[cfg(unix)]
    #[test]
    fn a_directory_others_can_write_anywhere_in_it_refuses_all_of_it() {
        let tmp = tempfile::tempdir().unwrap();
        let base = crate::paths::canonical::canonicalize_existing(tmp.path()).unwrap();
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

    /// Unix modes and owners (Windows' access lists: `scripts/windows/data-dir-acl.mjs`).
    #[cfg(unix)]
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
