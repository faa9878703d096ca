//! The recoverable trash: nothing an agent destroys is lost (../../docs/trash.md).
//!
//! Every delete, recursive `remove_dir` and overwrite first puts the old entry — a file, a
//! symlink (as a link) or a whole tree — into one gzip'd tar archive in the workspace's bucket,
//! `<dataDir>/trash/<sha256 of the canonical root>/`, and only then removes it. `restore_file`
//! puts it back. This module is the core of that; it decides no permissions and resolves no
//! user paths. The caller hands it a directory fd it already opened race-free inside the
//! sandbox plus an entry name ([`TrashItem`]), and everything done to the original goes through
//! that fd with `*at` calls and `O_NOFOLLOW` (`paths::fsops`), so a symlink swapped in meanwhile cannot
//! redirect a read or a removal. The bucket is reached the same way, through the data directory's
//! descriptor, and only once it and every archive read from it is checked to be this user's alone
//! (`place.rs`, `datadir`).
//!
//! # Archive format
//!
//! An archive is one gzip stream made of **two gzip members** (RFC 1952 §2.2: a gzip file is a
//! series of members; `gzip -d`, GNU `tar -z`, Node's `zlib.gunzip` and
//! `flate2::read::MultiGzDecoder` all read them as one stream). Decompressed, it is one tar:
//!
//! 1. member 1: the `metadata.json` entry (no end-of-archive marker);
//! 2. member 2: the content at `relativePath` — for a tree the directory entry, then everything
//!    beneath it depth-first in bytewise name order — and the end-of-archive marker.
//!
//! Content entries are GNU headers preceded by a PAX header carrying the nanosecond `mtime`
//! and, for symlinks and hard links, the exact `linkpath` (`tarx.rs`). Modes and owners are
//! recorded. A file with several names inside a tree is stored once, at its first name; its other
//! names are hard-link entries naming that one (as GNU tar writes them, and extracts them), and a
//! restore makes them names of one file again (`tree.rs`, `restore.rs`). Names of it outside the
//! tree are not the tree's: what is restored is a file of its own, with all the names it had
//! inside. Archives written before hard links were kept hold each name as a regular file and
//! restore as copies, as they were archived.
//!
//! **Why two members.** The metadata must come first (a listing reads only the first entry,
//! i.e. the first few hundred bytes), yet it holds the SHA-256 of the content, which is known
//! only after the content has been read. The options were: read the original twice (hash, then
//! archive, then compare — twice the I/O on the user's disk, and the digest is over a different
//! read than the archived bytes) or buffer. Instead the content is streamed once, hashing the
//! very bytes handed to the tar writer (`stream.rs`), into its own gzip member(s) written
//! straight into the archive file after room kept for the metadata member; once the content is
//! done, the metadata member is written into that room, made exactly as long by padding its gzip
//! header's extra field (`first_member.rs`). The digest is therefore over exactly what was
//! archived, the original is read once, the archive is written once, and memory is a few fixed
//! buffers whatever the size. (Before issue 33 the content went to a temp file first and was
//! copied after the metadata member; archives of both kinds read the same.)
//!
//! **Digests.** A file: SHA-256 of its bytes. A symlink: SHA-256 of its target's bytes. A
//! directory: the tree digest defined in `digest.rs` (records of path, type, mode and content
//! digest, sorted by path, length-prefixed; a hard link records which name it shares a file
//! with). `size` is the bytes of file content (a symlink's target length), each file counted once
//! however many names it has; `fileCount` (directories only) counts the names of regular files.
//!
//! # Order of operations (loses nothing)
//!
//! [`Bucket::trash`]: stream the content into a temp archive while checking that every entry
//! keeps its inode, size, mtime and ctime while read (directories: from listing to last child)
//! → write the final temp archive, `fsync` it → re-verify the whole original against what was
//! archived → rename into place with `RENAME_NOREPLACE` and `fsync` the bucket → remove exactly
//! the archived entries, children first, re-checking each. The archive is locked from before its
//! rename until the caller drops the [`Archived`] (after it has reported where the archive is),
//! and a restore locks the archive it reads: [`Bucket::clear`] skips locked archives, so it never
//! removes an archive a call still stands on (`hold.rs`). A change anywhere before the commit is
//! a [`TrashError::Conflict`] with the original untouched and no archive; cancellation
//! ([`TrashError::Aborted`]) likewise. Temp files are `.<what>-<unique>.partial` and are never
//! listed or cleared ([`Bucket::sweep_partials`] removes stale ones left by a crash).
//!
//! [`Bucket::restore`] treats the archive as hostile; see `restore.rs`.

mod bucket;
mod digest;
mod entry;
mod error;
mod first_member;
mod hold;
mod item;
mod members;
mod metadata;
mod naming;
mod observed;
mod parallel_gz;
mod place;
mod put_back;
mod read;
mod remove;
mod restore;
mod stream;
mod tarx;
mod tree;
mod write;

#[cfg(test)]
mod tests;

pub use bucket::{Archived, Bucket, ClearStats, TrashEntry};
pub use error::{mount_point, PartlyRemoved, TrashError};
pub use item::{Identity, TrashItem};
pub use members::{empty_tree_digest, Member, Members, Override};
pub use metadata::Metadata;
pub use naming::{archive_relative_path, is_restore_temp_name, restore_temp_name};
pub(crate) use observed::Observed;
pub(crate) use tarx::member_path_bytes;
