//! The first gzip member of an archive, `metadata.json` alone, written into room kept for it at
//! the start of the archive file.
//!
//! The metadata holds the digest of the content, known only once the content has been read, yet
//! it must come first. The content is written once, straight into the archive file after
//! [`room`] bytes kept free; then the metadata member is written into that room, made exactly
//! as long as it by padding the extra field of its gzip header (`FEXTRA`, RFC 1952 §2.3.1.1: one
//! subfield of zeros). Every gzip reader skips that field (`gzip`, GNU `tar -z`, Node's `zlib`,
//! flate2), so the archive stays a plain `.tar.gz` of two members. The room is measured on the
//! metadata with every field archiving fills in at its widest, so the real one always fits.

use std::io::{self, Write};
use std::time::SystemTime;

use flate2::{Compression, GzBuilder};

use super::metadata::Metadata;
use super::tarx;

/// Bytes of a gzip header and trailer around the deflate stream (no optional fields).
const FRAMING: usize = 10 + 8;
/// Bytes of the extra field's length (`XLEN`) and of its one subfield's header (`SI1 SI2 LEN`).
const EXTRA_HEADERS: usize = 2 + 4;
/// The subfield's id: "AF", agent-fs-tools.
const SUBFIELD_ID: [u8; 2] = *b"AF";

/// The bytes to keep for the metadata member of any metadata no wider than `widest`: its tar
/// entry stored (or compressed, never larger than deflate's bound) plus the gzip framing.
pub(crate) fn room(widest: &Metadata) -> io::Result<usize> {
    let entry = metadata_entry(widest)?.len();
    // Deflate's worst case (zlib's `deflateBound`), which also covers stored blocks.
    let deflated = entry + entry / 4096 + entry / 16384 + 64;
    Ok(FRAMING + EXTRA_HEADERS + deflated)
}

/// The gzip member holding `metadata`'s tar entry alone, exactly `room` bytes long: compressed at
/// `level`, or stored should that not fit.
pub(crate) fn metadata_member(
    metadata: &Metadata,
    level: Compression,
    room: usize,
) -> io::Result<Vec<u8>> {
    let entry = metadata_entry(metadata)?;
    for level in [level, Compression::none()] {
        let bare = gzip(&entry, level, None)?;
        let Some(field) = room.checked_sub(bare.len() + EXTRA_HEADERS) else {
            continue;
        };
        let Ok(len) = u16::try_from(field) else {
            continue;
        };
        let mut extra = Vec::with_capacity(4 + field);
        extra.extend_from_slice(&SUBFIELD_ID);
        extra.extend_from_slice(&len.to_le_bytes());
        extra.resize(4 + field, 0);
        let member = gzip(&entry, level, Some(extra))?;
        if member.len() == room {
            return Ok(member);
        }
    }
    Err(io::Error::other(
        "the metadata did not fit the room kept for it in the archive",
    ))
}

/// The `metadata.json` tar entry (header, JSON, padding), stamped with the time of trashing.
fn metadata_entry(metadata: &Metadata) -> io::Result<Vec<u8>> {
    let mtime = metadata
        .trashed_at_time()
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs());
    let mut entry = Vec::new();
    tarx::write_metadata_entry(&mut entry, &metadata.to_json(), mtime)?;
    Ok(entry)
}

/// `data` as one gzip member, with `extra` as the header's extra field if given.
fn gzip(data: &[u8], level: Compression, extra: Option<Vec<u8>>) -> io::Result<Vec<u8>> {
    let builder = match extra {
        Some(extra) => GzBuilder::new().extra(extra),
        None => GzBuilder::new(),
    };
    let mut encoder = builder.write(Vec::new(), level);
    encoder.write_all(data)?;
    encoder.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::EntryKind;
    use flate2::read::GzDecoder;
    use std::io::Read;

    fn metadata(path: &str, size: u64) -> Metadata {
        Metadata {
            session_id: "session".into(),
            run_id: "run".into(),
            agent_name: "agent".into(),
            trashed_at: "2026-11-26T00:08:32.901Z".into(),
            original_path: format!("/root/{path}"),
            relative_path: path.into(),
            kind: EntryKind::File,
            original_sha256: "ab".repeat(32),
            size,
            mode: 0o644,
            file_count: None,
        }
    }

    /// Paths that compress well, not at all, or are long, at every level: the member fills its
    /// room exactly, carries one well-formed subfield, and decodes to the very tar entry.
    #[test]
    fn the_member_fills_its_room_and_decodes_to_the_entry() {
        let mut x = 7u64;
        let noisy: String = (0..3000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                char::from_u32(0x21 + (x % 0x5d) as u32).unwrap()
            })
            .filter(|c| *c != '"' && *c != '\\')
            .collect();
        for path in ["a", "src/lib.rs", &"deep/".repeat(800), &noisy, "é😀\u{7}"] {
            let mut widest = metadata(path, u64::MAX);
            widest.kind = EntryKind::Directory;
            widest.mode = u32::MAX;
            widest.file_count = Some(u64::MAX);
            let room = room(&widest).unwrap();
            for level in 0..=9 {
                let real = metadata(path, 12_345);
                let member = metadata_member(&real, Compression::new(level), room).unwrap();
                assert_eq!(member.len(), room, "level {level}, path of {}", path.len());
                assert_eq!(member[3] & 0x04, 0x04, "FEXTRA set");
                let xlen = u16::from_le_bytes([member[10], member[11]]) as usize;
                let sublen = u16::from_le_bytes([member[14], member[15]]) as usize;
                assert_eq!((&member[12..14], sublen + 4), (&SUBFIELD_ID[..], xlen));
                let mut decoded = Vec::new();
                GzDecoder::new(&member[..])
                    .read_to_end(&mut decoded)
                    .unwrap();
                assert_eq!(decoded, metadata_entry(&real).unwrap());
            }
        }
    }

    /// `gzip -t` accepts a padded member (followed by a content member, as in an archive).
    #[test]
    fn gzip_accepts_the_padded_member() {
        let real = metadata("x/y.txt", 3);
        let member = metadata_member(&real, Compression::new(3), 4000).unwrap();
        let content = gzip(b"content", Compression::new(3), None).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.gz");
        std::fs::write(&path, [member, content].concat()).unwrap();
        let out = std::process::Command::new("gzip")
            .arg("-dc")
            .arg(&path)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let mut expected = metadata_entry(&real).unwrap();
        expected.extend_from_slice(b"content");
        assert_eq!(out.stdout, expected);
    }

    /// A room too small is an error, never a member of another length.
    #[test]
    fn a_room_too_small_is_an_error() {
        assert!(metadata_member(&metadata("x", 1), Compression::new(3), 40).is_err());
    }
}
