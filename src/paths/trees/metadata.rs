//! What a copy takes of its source besides the bytes: owner, extended attributes and ACL,
//! permission bits (set-ID bits only where they stay safe) and times.

use std::io;

use crate::paths::fsops::{self, Snapshot};
use crate::paths::{platform, xattrs, BorrowedDir, Stat};

/// Gives `copy` the metadata of `source` (whose stat is `stat`): its owner (where we may, see
/// [`fsops::give_owner`]), then its extended attributes (a change of owner clears file
/// capabilities), then its mode (after any ACL, which sets the group bits; see
/// [`mode_of_copy`]) and times.
pub(super) fn give_metadata(
    source: BorrowedDir<'_>,
    copy: BorrowedDir<'_>,
    stat: &Stat,
) -> io::Result<()> {
    fsops::give_owner(copy, stat.uid, stat.gid)?;
    xattrs::copy(source, copy)?;
    platform::copy_acl(source, copy)?;
    let owned = fsops::fstat(copy)?;
    let mode = mode_of_copy(
        Snapshot::of(stat).mode,
        (stat.uid, stat.gid),
        (owned.uid, owned.gid),
    );
    fsops::set_mode_fd(copy, mode)?;
    fsops::set_times_fd(copy, stat.atime, stat.mtime)?;
    Ok(())
}

/// The permission bits a copy gets, as `mv` and `cp -p` decide: all of the source's, except that
/// set-user-ID survives only when the copy has the source's owner, and set-group-ID only when
/// it has the source's group (a program must not run as someone it does not belong to).
pub(super) fn mode_of_copy(
    source_mode: u32,
    source_owner: (u32, u32),
    copy_owner: (u32, u32),
) -> u32 {
    let mut mode = source_mode & 0o1777;
    if copy_owner.0 == source_owner.0 {
        mode |= source_mode & 0o4000;
    }
    if copy_owner.1 == source_owner.1 {
        mode |= source_mode & 0o2000;
    }
    mode
}
