//! Removing and copying whole trees, on temporary directories.

use super::metadata::mode_of_copy;
use super::*;
use crate::paths::fsops;
use crate::paths::os_error::libc_codes;
use crate::paths::{platform, xattrs, Stat};
use std::ffi::OsStr;
use std::fs;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
use std::path::Path;
use std::path::PathBuf;

fn open(path: &Path) -> OwnedFd {
    fsops::open_dir(path, path, false).unwrap()
}

/// A fresh temp dir (kept alive by the guard) holding [`sample_tree`].
fn with_sample_tree() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let base = crate::paths::canonical::canonicalize_existing(dir.path()).unwrap();
    sample_tree(&base);
    (dir, base)
}

/// Copies `base/t` to `base/c`.
fn copy_t_to_c(base: &Path, aborted: &dyn Fn() -> bool) -> Result<Copied, CopyError> {
    let fd = open(base);
    copy_tree_at(
        fd.as_fd(),
        OsStr::new("t"),
        fd.as_fd(),
        OsStr::new("c"),
        aborted,
    )
}

fn sample_tree(base: &Path) {
    fs::create_dir_all(base.join("t/a/b")).unwrap();
    fs::create_dir(base.join("keep")).unwrap();
    fs::write(base.join("keep/precious"), "x").unwrap();
    fs::write(base.join("t/a/b/f"), "y").unwrap();
    fs::write(base.join("t/top.sh"), "#!/bin/sh\n").unwrap();
    fs::set_permissions(base.join("t/top.sh"), fs::Permissions::from_mode(0o751)).unwrap();
    symlink(base.join("keep"), base.join("t/a/link")).unwrap();
    symlink("missing", base.join("t/dangling")).unwrap();
}

#[test]
fn removal_never_follows_links() {
    let (_dir, base) = with_sample_tree();
    let kept = remove_tree_at(open(&base).as_fd(), OsStr::new("t"), Removal::EVERYTHING).unwrap();
    assert_eq!(kept, 0);
    assert!(!base.join("t").exists());
    assert_eq!(fs::read(base.join("keep/precious")).unwrap(), b"x");
}

#[test]
fn removal_of_a_file_or_a_missing_name() {
    let dir = tempfile::tempdir().unwrap();
    let base = crate::paths::canonical::canonicalize_existing(dir.path()).unwrap();
    fs::write(base.join("f"), "x").unwrap();
    remove_tree_at(open(&base).as_fd(), OsStr::new("f"), Removal::EVERYTHING).unwrap();
    assert!(!base.join("f").exists());
    let e = remove_tree_at(open(&base).as_fd(), OsStr::new("f"), Removal::EVERYTHING).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::NotFound);
}

#[test]
fn own_temp_trees_go_even_when_read_only() {
    let dir = tempfile::tempdir().unwrap();
    let base = crate::paths::canonical::canonicalize_existing(dir.path()).unwrap();
    fs::create_dir_all(base.join("t/ro/inner")).unwrap();
    fs::write(base.join("t/ro/inner/f"), "y").unwrap();
    fs::set_permissions(base.join("t/ro/inner"), fs::Permissions::from_mode(0o555)).unwrap();
    fs::set_permissions(base.join("t/ro"), fs::Permissions::from_mode(0o555)).unwrap();
    remove_tree_at(open(&base).as_fd(), OsStr::new("t"), Removal::OWN_TEMP).unwrap();
    assert!(!base.join("t").exists());
}

#[test]
fn kept_entries_stay_with_their_directories() {
    let (_dir, base) = with_sample_tree();
    let spared = fs::symlink_metadata(base.join("t/a/b/f")).unwrap().ino();
    let keep = move |s: &Stat| s.ino == spared;
    let how = Removal {
        make_writable: false,
        keep: Some(&keep),
    };
    let kept = remove_tree_at(open(&base).as_fd(), OsStr::new("t"), how).unwrap();
    assert_eq!(kept, 1);
    assert_eq!(fs::read(base.join("t/a/b/f")).unwrap(), b"y");
    assert!(!base.join("t/top.sh").exists());
    assert!(fs::symlink_metadata(base.join("t/a/link")).is_err());
    assert!(fs::symlink_metadata(base.join("t/dangling")).is_err());
}

/// With a keep rule (a moved source), an entry swapped in under a name after its check is
/// checked again and kept: only what the rule lets go is removed.
#[test]
fn an_entry_swapped_in_after_its_check_is_kept() {
    use crate::paths::fsops::race_point::{self, RacePoint};
    let dir = tempfile::tempdir().unwrap();
    let base = crate::paths::canonical::canonicalize_existing(dir.path()).unwrap();
    fs::create_dir_all(base.join("t")).unwrap();
    fs::write(base.join("t/tr-copied"), "copied").unwrap();
    fs::write(base.join("elsewhere"), "not copied").unwrap();
    let copied = fs::symlink_metadata(base.join("t/tr-copied"))
        .unwrap()
        .ino();
    let keep = move |s: &Stat| s.ino != copied;
    let (a, b) = (base.join("t/tr-copied"), base.join("elsewhere"));
    race_point::at(RacePoint::BeforeRemove, "tr-copied", move || {
        rustix::fs::renameat_with(
            rustix::fs::CWD,
            &a,
            rustix::fs::CWD,
            &b,
            rustix::fs::RenameFlags::EXCHANGE,
        )
        .unwrap()
    });
    let how = Removal {
        make_writable: false,
        keep: Some(&keep),
    };
    let kept = remove_tree_at(open(&base).as_fd(), OsStr::new("t"), how).unwrap();
    assert_eq!(kept, 1);
    assert_eq!(fs::read(base.join("t/tr-copied")).unwrap(), b"not copied");
    assert_eq!(fs::read(base.join("elsewhere")).unwrap(), b"copied");
}

#[test]
fn removal_goes_on_past_what_it_cannot_remove() {
    let (_dir, base) = with_sample_tree();
    let stuck = base.join("t/a/b/f");
    let chattr = |flag: &str| {
        std::process::Command::new("chattr")
            .arg(flag)
            .arg(&stuck)
            .status()
            .is_ok_and(|s| s.success())
    };
    if !chattr("+i") {
        eprintln!("skipped: chattr +i is not possible here (not root, or no ext4)");
        return;
    }
    let result = remove_tree_at(open(&base).as_fd(), OsStr::new("t"), Removal::EVERYTHING);
    assert!(chattr("-i"));
    assert_eq!(result.unwrap_err().raw_os_error(), Some(libc_codes::EPERM));
    assert_eq!(fs::read(&stuck).unwrap(), b"y");
    assert!(!base.join("t/top.sh").exists() && !base.join("t/dangling").exists());
    assert_eq!(fs::read(base.join("keep/precious")).unwrap(), b"x");
}

/// A tree holding mount points (another file system; a bind mount of a directory outside
/// it, where mounts of one file system are told apart): the removal removes everything
/// around them, never what is mounted, and names the first; a removal of a mount point
/// itself removes nothing.
#[test]
fn removal_never_crosses_into_another_mount() {
    use crate::paths::test_mounts::Mounted;
    let (_dir, base) = with_sample_tree();
    let Some(_tmpfs) = Mounted::tmpfs(&base.join("t/other")) else {
        eprintln!("skipped: mounting is not permitted here (not root)");
        return;
    };
    fs::write(base.join("t/other/data"), "on tmpfs").unwrap();
    let binds = platform::linux_fast_paths();
    let _bind = binds.then(|| Mounted::bind(&base.join("keep"), &base.join("t/a/bound")));
    let fd = open(&base);
    let e = remove_tree_at(fd.as_fd(), OsStr::new("t"), Removal::EVERYTHING).unwrap_err();
    let first = if binds { "t/a/bound" } else { "t/other" };
    assert_eq!(MountPointInside::of(&e), Some(Path::new(first)), "{e}");
    assert_eq!(fs::read(base.join("keep/precious")).unwrap(), b"x");
    assert_eq!(fs::read(base.join("t/other/data")).unwrap(), b"on tmpfs");
    assert!(!base.join("t/top.sh").exists() && !base.join("t/a/b").exists());
    let t = open(&base.join("t"));
    let e = remove_tree_at(t.as_fd(), OsStr::new("other"), Removal::EVERYTHING).unwrap_err();
    assert_eq!(MountPointInside::of(&e), Some(Path::new("other")));
    assert_eq!(fs::read(base.join("t/other/data")).unwrap(), b"on tmpfs");
}

fn describe(path: &Path) -> Vec<(String, u32, i64, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    let mut walk = vec![path.to_owned()];
    while let Some(p) = walk.pop() {
        let meta = fs::symlink_metadata(&p).unwrap();
        let rel = p.strip_prefix(path).unwrap().display().to_string();
        let content = if meta.is_file() {
            Some(fs::read(&p).unwrap())
        } else if meta.file_type().is_symlink() {
            Some(
                fs::read_link(&p)
                    .unwrap()
                    .into_os_string()
                    .into_encoded_bytes(),
            )
        } else {
            let mut children: Vec<_> = fs::read_dir(&p)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            children.sort();
            walk.extend(children);
            None
        };
        out.push((rel, meta.mode(), meta.mtime(), content));
    }
    out.sort();
    out
}

#[test]
fn a_copy_has_the_same_entries_bytes_modes_and_times() {
    let (_dir, base) = with_sample_tree();
    fs::write(base.join("t/a/big"), vec![7u8; 3 << 20]).unwrap();
    fs::set_permissions(base.join("t/a"), fs::Permissions::from_mode(0o555)).unwrap();
    let copied = copy_t_to_c(&base, &|| false).unwrap();
    assert_eq!(describe(&base.join("t")), describe(&base.join("c")));
    let fd = open(&base);
    let stat_f = || {
        fsops::lstat_at(fd.as_fd(), OsStr::new("t/a/b/f"))
            .unwrap()
            .unwrap()
    };
    let original = fs::symlink_metadata(base.join("t/a/b/f")).unwrap();
    let stat = stat_f();
    assert!(copied.unchanged(&stat) && original.ino() == stat.ino);
    fs::write(base.join("t/a/b/f"), "changed").unwrap();
    let stat = stat_f();
    assert!(!copied.unchanged(&stat));
    fs::set_permissions(base.join("t/a"), fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn a_copy_to_another_file_system_keeps_holes_acls_and_extended_attributes() {
    let (_dir, base) = with_sample_tree();
    // /dev/shm is a tmpfs: another file system than the temp dir's, where there is one.
    let other = tempfile::tempdir_in("/dev/shm").or_else(|_| tempfile::tempdir());
    let other = other.unwrap();
    let sparse = fs::File::create(base.join("t/a/disk.img")).unwrap();
    sparse.set_len(256 << 20).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&sparse, b"boot", 0).unwrap();
    let flags = rustix::fs::XattrFlags::empty();
    for path in ["t/top.sh", "t/a"] {
        let path = base.join(path);
        rustix::fs::setxattr(&path, "user.origin", b"bench", flags).unwrap();
        rustix::fs::setxattr(
            &path,
            "system.posix_acl_access",
            &xattrs::sample_access_acl(),
            flags,
        )
        .unwrap();
    }
    let mode_before = fs::metadata(base.join("t/top.sh")).unwrap().mode();
    let (src, dst) = (open(&base), open(other.path()));
    let (t, c) = (OsStr::new("t"), OsStr::new("c"));
    copy_tree_at(src.as_fd(), t, dst.as_fd(), c, &|| false).unwrap();
    let copy = other.path().join("c");
    let image = fs::metadata(copy.join("a/disk.img")).unwrap();
    assert_eq!(image.len(), 256 << 20);
    assert!(image.blocks() * 512 < 1 << 20, "{} blocks", image.blocks());
    assert_eq!(&fs::read(copy.join("a/disk.img")).unwrap()[..4], b"boot");
    let get = |path: &Path, name: &str| {
        let mut buf = vec![0u8; 4096];
        let n = rustix::fs::getxattr(path, name, &mut buf[..]).unwrap();
        buf.truncate(n);
        buf
    };
    for path in ["top.sh", "a"] {
        assert_eq!(get(&copy.join(path), "user.origin"), b"bench", "{path}");
        let acl = get(&copy.join(path), "system.posix_acl_access");
        assert_eq!(acl, xattrs::sample_access_acl(), "{path}");
    }
    assert_eq!(
        fs::metadata(copy.join("top.sh")).unwrap().mode(),
        mode_before
    );
}

#[test]
fn names_of_one_file_stay_links_of_one_copy() {
    let (_dir, base) = with_sample_tree();
    fs::hard_link(base.join("t/a/b/f"), base.join("t/f-again")).unwrap();
    fs::hard_link(base.join("t/a/b/f"), base.join("t/a/f-third")).unwrap();
    fs::hard_link(base.join("t/top.sh"), base.join("keep/outside-link")).unwrap();
    copy_t_to_c(&base, &|| false).unwrap();
    let ino = |p: &str| fs::symlink_metadata(base.join(p)).unwrap().ino();
    assert_eq!(ino("c/a/b/f"), ino("c/f-again"));
    assert_eq!(ino("c/a/b/f"), ino("c/a/f-third"));
    assert_ne!(ino("c/a/b/f"), ino("t/a/b/f"));
    assert_eq!(
        fs::symlink_metadata(base.join("c/a/b/f")).unwrap().nlink(),
        3
    );
    // A link from outside the tree is not carried along: the copy has one name.
    assert_eq!(
        fs::symlink_metadata(base.join("c/top.sh")).unwrap().nlink(),
        1
    );
    assert_eq!(fs::read(base.join("c/f-again")).unwrap(), b"y");
}

#[test]
fn owners_are_kept_where_we_may_give_files_away() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: only root may give a copy another owner");
        return;
    }
    let (_dir, base) = with_sample_tree();
    for path in ["t", "t/a", "t/top.sh", "t/dangling"] {
        std::os::unix::fs::lchown(base.join(path), Some(1234), Some(5678)).unwrap();
    }
    copy_t_to_c(&base, &|| false).unwrap();
    for path in ["c", "c/a", "c/top.sh", "c/dangling"] {
        let meta = fs::symlink_metadata(base.join(path)).unwrap();
        assert_eq!((meta.uid(), meta.gid()), (1234, 5678), "{path}");
    }
    let ours = fs::symlink_metadata(base.join("c/a/b/f")).unwrap();
    assert_eq!(ours.uid(), 0);
    assert_eq!(
        fs::symlink_metadata(base.join("c/top.sh")).unwrap().mode() & 0o777,
        0o751
    );
}

#[test]
fn set_id_bits_stay_only_with_the_owner_and_group_they_belong_to() {
    assert_eq!(mode_of_copy(0o104755, (7, 8), (7, 8)), 0o4755);
    assert_eq!(mode_of_copy(0o102755, (7, 8), (7, 8)), 0o2755);
    assert_eq!(mode_of_copy(0o106755, (7, 8), (9, 8)), 0o2755);
    assert_eq!(mode_of_copy(0o106755, (7, 8), (7, 9)), 0o4755);
    assert_eq!(mode_of_copy(0o101777, (7, 8), (9, 9)), 0o1777);
}

#[test]
fn a_set_user_id_program_keeps_its_bit_when_its_owner_is_kept() {
    let (_d, base) = with_sample_tree();
    let program = base.join("t/tool");
    fs::write(&program, "#!/bin/sh\n").unwrap();
    fs::set_permissions(&program, fs::Permissions::from_mode(0o4755)).unwrap();
    copy_t_to_c(&base, &|| false).unwrap();
    let mode = fs::metadata(base.join("c/tool"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o7777, 0o4755);
}

#[test]
fn a_fifo_stops_the_copy_and_names_itself() {
    let (_dir, base) = with_sample_tree();
    let fifo = base.join("t/a/pipe");
    crate::paths::platform::make_fifo(&fifo);
    let e = copy_t_to_c(&base, &|| false).unwrap_err();
    assert!(
        matches!(e, CopyError::Special(ref p) if p == Path::new("a/pipe")),
        "{e:?}"
    );
}

#[test]
fn an_abort_stops_the_copy() {
    let (_dir, base) = with_sample_tree();
    let e = copy_t_to_c(&base, &|| true).unwrap_err();
    assert!(matches!(e, CopyError::Aborted));
}
