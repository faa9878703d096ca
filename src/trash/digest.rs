//! The tree digest: one SHA-256 that pins down a whole directory tree.
//!
//! Every entry of the tree (the root directory included) contributes one record:
//!
//! ```text
//! tag      1 byte    b'd' directory, b'f' regular file, b'l' symlink, b'h' another name of a file
//! path     u64 BE length, then the bytes of the path relative to the tree root
//!          (components joined by '/'; the root itself is the empty path)
//! mode     u32 BE    permission bits (st_mode & 0o7777); 0 for symlinks, whose mode means nothing
//! content  32 bytes  SHA-256 of the file's bytes / of the link target's bytes; zeros for
//!                    directories; for b'h', SHA-256 of the path (as above) of the file's first name
//! ```
//!
//! A file with several names inside the tree (hard links) contributes a b'f' record for its first
//! name in the walk (depth first, bytewise name order) and a b'h' record for each other name, so
//! the digest pins down which names are one file. A tree without hard links has no b'h' record:
//! its digest is the same as before b'h' existed, and archives written then still verify.
//!
//! Records are sorted by path, comparing component by component as byte strings (so a directory
//! precedes everything beneath it and `a/b` precedes `a.b`), and hashed in that order after the
//! domain tag `agent-fs-tools tree v1\n`. Length prefixes make the encoding unambiguous for any
//! file name. The order of entries in an archive therefore does not matter; their content does.
//! Memory is one small record per entry, never file content.

use sha2::{Digest, Sha256};

use crate::paths::EntryKind;

/// Domain tag hashed before the records.
const DOMAIN: &[u8] = b"agent-fs-tools tree v1\n";

/// One entry's contribution.
struct Record {
    path: Vec<u8>,
    tag: u8,
    mode: u32,
    content: [u8; 32],
}

/// Collects records while a tree is archived or extracted, then hashes them.
#[derive(Default)]
pub(crate) struct TreeDigest {
    records: Vec<Record>,
}

impl TreeDigest {
    /// Add the entry at `path` (relative to the tree root, `""` for the root).
    pub(crate) fn add(&mut self, path: &[u8], kind: EntryKind, mode: u32, content: [u8; 32]) {
        let (tag, mode, content) = match kind {
            EntryKind::Directory => (b'd', mode & 0o7777, [0; 32]),
            EntryKind::File => (b'f', mode & 0o7777, content),
            EntryKind::Symlink => (b'l', 0, content),
            EntryKind::Special => unreachable!("a special file is refused before it is archived"),
        };
        self.records.push(Record {
            path: path.to_vec(),
            tag,
            mode,
            content,
        });
    }

    /// Add `path`, another name of the file first recorded at `first` (a hard link).
    pub(crate) fn add_hard_link(&mut self, path: &[u8], mode: u32, first: &[u8]) {
        self.records.push(Record {
            path: path.to_vec(),
            tag: b'h',
            mode: mode & 0o7777,
            content: Sha256::digest(first).into(),
        });
    }

    /// The digest over all records, in path order.
    pub(crate) fn finish(mut self) -> [u8; 32] {
        self.records
            .sort_by(|a, b| components(&a.path).cmp(components(&b.path)));
        let mut hasher = Sha256::new();
        hasher.update(DOMAIN);
        for record in &self.records {
            hasher.update([record.tag]);
            hasher.update((record.path.len() as u64).to_be_bytes());
            hasher.update(&record.path);
            hasher.update(record.mode.to_be_bytes());
            hasher.update(record.content);
        }
        hasher.finalize().into()
    }
}

/// The components of a `/`-joined relative path (the empty path has none).
fn components(path: &[u8]) -> impl Iterator<Item = &[u8]> {
    path.split(|b| *b == b'/').filter(|part| !part.is_empty())
}

/// `parent/name`, or `name` when `parent` is the root (`""`).
pub(crate) fn child_path(parent: &[u8], name: &[u8]) -> Vec<u8> {
    if parent.is_empty() {
        return name.to_vec();
    }
    let mut path = Vec::with_capacity(parent.len() + 1 + name.len());
    path.extend_from_slice(parent);
    path.push(b'/');
    path.extend_from_slice(name);
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest(entries: &[(&str, EntryKind, u32)]) -> [u8; 32] {
        let mut d = TreeDigest::default();
        for (path, kind, mode) in entries {
            d.add(
                path.as_bytes(),
                *kind,
                *mode,
                Sha256::digest(path.as_bytes()).into(),
            );
        }
        d.finish()
    }

    #[test]
    fn order_does_not_matter_but_content_does() {
        let a = [
            ("", EntryKind::Directory, 0o755),
            ("a", EntryKind::Directory, 0o755),
            ("a/b", EntryKind::File, 0o644),
            ("a.b", EntryKind::Symlink, 0o777),
        ];
        let mut b = a;
        b.reverse();
        assert_eq!(digest(&a), digest(&b));
        let mut c = a;
        c[2].2 = 0o755;
        assert_ne!(digest(&a), digest(&c));
        let mut d = a;
        d[3].2 = 0o700;
        assert_eq!(digest(&a), digest(&d), "symlink modes are ignored");
    }

    #[test]
    fn which_names_are_one_file_is_part_of_the_digest() {
        let tree = |link: Option<(&str, &str)>| {
            let mut d = TreeDigest::default();
            d.add(b"", EntryKind::Directory, 0o755, [0; 32]);
            for path in ["a", "b"] {
                d.add(path.as_bytes(), EntryKind::File, 0o644, [7; 32]);
            }
            match link {
                Some((path, first)) => d.add_hard_link(path.as_bytes(), 0o644, first.as_bytes()),
                None => d.add(b"c", EntryKind::File, 0o644, [7; 32]),
            }
            d.finish()
        };
        let copies = tree(None);
        let linked_to_a = tree(Some(("c", "a")));
        let linked_to_b = tree(Some(("c", "b")));
        assert_ne!(copies, linked_to_a);
        assert_ne!(linked_to_a, linked_to_b);
    }

    #[test]
    fn components_sort_before_siblings_with_smaller_bytes() {
        let mut paths = vec![
            b"a.b".to_vec(),
            b"a/b".to_vec(),
            b"".to_vec(),
            b"a".to_vec(),
        ];
        paths.sort_by(|x, y| components(x).cmp(components(y)));
        assert_eq!(paths, [&b""[..], b"a", b"a/b", b"a.b"]);
    }
}
