//! Tar headers as this module writes and reads them.
//!
//! Entries use GNU headers (large sizes, long names via `././@LongLink`) preceded by a PAX
//! extended header that carries what a plain header cannot hold exactly: the nanosecond `mtime`
//! and, for symlinks, the exact `linkpath` bytes (the `tar` crate's own link-name setter
//! normalises paths, which would change a target like `dir/` or `a//b` and break its digest);
//! for files and directories, their extended attributes (`SCHILY.xattr.*`, which
//! `tar --xattrs` restores too). GNU tar and the `tar` crate both honour these records.

use std::io::{self, Write};
use std::path::Path;

use tar::{EntryType, Header};

use super::metadata::METADATA_ENTRY;
use crate::paths::fsops::Snapshot;
use crate::paths::xattrs::{self, Xattr};

/// Tar block size.
const BLOCK: usize = 512;
/// Room for a link name in a plain header.
const LINK_NAME_ROOM: usize = 100;

/// A header for a content entry of `entry_type`, with mode, owner and mtime from `snap`.
/// Size is zero; the caller sets it for regular files.
pub(crate) fn content_header(entry_type: EntryType, snap: &Snapshot) -> Header {
    let mut header = Header::new_gnu();
    header.set_entry_type(entry_type);
    header.set_mode(snap.permissions());
    header.set_uid(snap.uid.into());
    header.set_gid(snap.gid.into());
    header.set_mtime(u64::try_from(snap.mtime.0).unwrap_or(0));
    header.set_size(0);
    header
}

/// A member's path as tar stores it (a hard link's target, a key of [`super::Members`]): `/`
/// between its components on every platform, as the `tar` crate writes member names (on
/// Windows `\` only ever separates components, so the bytes are otherwise the path's own).
pub(crate) fn member_path_bytes(path: &Path) -> Vec<u8> {
    let bytes = path.as_os_str().as_encoded_bytes();
    if cfg!(windows) {
        bytes
            .iter()
            .map(|&b| if b == b'\\' { b'/' } else { b })
            .collect()
    } else {
        bytes.to_vec()
    }
}

/// Put a symlink target into a header when it fits verbatim (the PAX `linkpath` record is
/// authoritative either way).
pub(crate) fn set_link_target(header: &mut Header, target: &[u8]) -> io::Result<()> {
    if target.len() <= LINK_NAME_ROOM {
        header.set_link_name_literal(target)?;
    }
    Ok(())
}

/// The prefix of the PAX records that carry extended attributes (as GNU tar, bsdtar and star
/// write them): `SCHILY.xattr.<name>=<value bytes>`.
pub(crate) const XATTR_PAX_PREFIX: &str = "SCHILY.xattr.";

/// The PAX records that precede a content entry: its mtime, a symlink's target, and the
/// extended attributes of a file or directory that the trash keeps ([`xattrs::is_archived`]; a
/// name that is not UTF-8 or holds `=` cannot be a PAX keyword and is left out).
pub(crate) fn pax_records(
    mtime: (i64, u32),
    link_target: Option<&[u8]>,
    xattrs: &[Xattr],
) -> Vec<(String, Vec<u8>)> {
    let mut records = vec![("mtime".to_owned(), format_pax_time(mtime).into_bytes())];
    if let Some(target) = link_target {
        records.push(("linkpath".to_owned(), target.to_vec()));
    }
    for xattr in xattrs.iter().filter(|x| xattrs::is_archived(&x.name)) {
        if let Ok(name) = std::str::from_utf8(&xattr.name) {
            if !name.contains('=') {
                records.push((format!("{XATTR_PAX_PREFIX}{name}"), xattr.value.clone()));
            }
        }
    }
    records
}

/// `(seconds, nanoseconds)` as a PAX time: `-1.500000000` for 1.5 s before the epoch.
pub(crate) fn format_pax_time((secs, nanos): (i64, u32)) -> String {
    let total = i128::from(secs) * 1_000_000_000 + i128::from(nanos);
    let sign = if total < 0 { "-" } else { "" };
    let abs = total.unsigned_abs();
    format!("{sign}{}.{:09}", abs / 1_000_000_000, abs % 1_000_000_000)
}

/// Parse a PAX time (`[-]seconds[.fraction]`) into `(seconds, nanoseconds)` with
/// `0 <= nanoseconds < 1e9`.
pub(crate) fn parse_pax_time(text: &str) -> Option<(i64, u32)> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secs: i128 = whole.parse().ok()?;
    let nanos: i128 = format!("{:0<9}", &fraction[..fraction.len().min(9)])
        .parse()
        .ok()?;
    let mut total = secs.checked_mul(1_000_000_000)? + nanos;
    if negative {
        total = -total;
    }
    let secs = i64::try_from(total.div_euclid(1_000_000_000)).ok()?;
    Some((secs, total.rem_euclid(1_000_000_000) as u32))
}

/// Write the `metadata.json` entry (header, data, padding) without an end-of-archive marker:
/// the content member that follows continues the same tar stream.
pub(crate) fn write_metadata_entry(
    out: &mut dyn Write,
    json: &[u8],
    mtime_secs: u64,
) -> io::Result<()> {
    let mut header = Header::new_gnu();
    header.set_path(METADATA_ENTRY)?;
    header.set_entry_type(EntryType::Regular);
    header.set_mode(0o644);
    header.set_mtime(mtime_secs);
    header.set_size(json.len() as u64);
    header.set_cksum();
    out.write_all(header.as_bytes())?;
    out.write_all(json)?;
    let padding = (BLOCK - json.len() % BLOCK) % BLOCK;
    out.write_all(&[0u8; BLOCK][..padding])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pax_times_round_trip() {
        for t in [
            (0, 0),
            (1_700_000_000, 123_456_789),
            (-2, 500_000_000),
            (-1, 0),
            (5, 1),
        ] {
            assert_eq!(parse_pax_time(&format_pax_time(t)), Some(t), "{t:?}");
        }
        assert_eq!(parse_pax_time("12"), Some((12, 0)));
        assert_eq!(parse_pax_time("12.5"), Some((12, 500_000_000)));
        assert_eq!(parse_pax_time("x"), None);
        assert_eq!(parse_pax_time("1.2.3"), None);
    }
}
