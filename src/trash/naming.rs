//! Names: the bucket directory, archive file names, temp names, archive-relative paths.
//!
//! Archive names are `<timestamp>-<session8>-<run8>-<unique>-<basename>.tar.gz`. The timestamp is
//! the compact form of the RFC 3339 `trashedAt` (`20261122T051717123Z`), so names sort by time.
//! Uniqueness does not rest on the clock: `<unique>` is 12 hex digits from a per-process random
//! key, the process id and a process-wide counter, and the final rename refuses to replace an
//! existing name anyway (a clash just draws a new `<unique>`).
//!
//! Everything the trash writes before it is complete starts with `.` and ends with `.partial`;
//! listings and `clear` only ever look at names that do not start with `.` and end in `.tar.gz`.

use std::collections::hash_map::RandomState;
use std::ffi::OsStr;
use std::hash::{BuildHasher, Hasher};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

/// Suffix of every finished archive.
pub(crate) const ARCHIVE_SUFFIX: &str = ".tar.gz";
/// Suffix of every temporary file or directory the trash creates.
pub(crate) const TEMP_SUFFIX: &str = ".partial";
/// Longest file name the common Linux filesystems accept, in bytes.
const NAME_MAX: usize = 255;
/// How many characters of the session and run ids go into a name.
const ID_CHARS: usize = 8;

/// `trash/<lowercase hex sha256 of the canonical root's bytes>`: the bucket, in the data
/// directory.
pub(crate) fn bucket_rel(canonical_root: &Path) -> PathBuf {
    let digest = Sha256::digest(canonical_root.as_os_str().as_encoded_bytes());
    Path::new("trash").join(hex(&digest))
}

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The path of `original` as stored in an archive: relative to `canonical_root` when inside it,
/// otherwise `absolute/` followed by the absolute path without its leading `/`.
///
/// Both paths are expected to be canonical (no `.`/`..`, no symlinks); containment is decided by
/// whole components, so `/w/root-evil` is not inside `/w/root`. The root itself has no relative
/// form and is stored under `absolute/` too. Non-UTF-8 bytes are replaced (U+FFFD): the string is
/// only a label inside the archive, restores are told their target by the caller.
pub fn archive_relative_path(canonical_root: &Path, original: &Path) -> String {
    match original.strip_prefix(canonical_root) {
        Ok(rel) if rel.components().next().is_some() => join_normal(rel),
        _ => format!("absolute/{}", join_normal(original)),
    }
}

/// The normal components of `path` joined by `/` (root, `.` and `..` components dropped).
fn join_normal(path: &Path) -> String {
    let parts: Vec<_> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(part) => Some(part.to_string_lossy()),
            _ => None,
        })
        .collect();
    parts.join("/")
}

/// `2026-11-22T05:17:17.123Z` → `20261122T051717123Z` (filename-safe, sorts like the original).
pub(crate) fn compact_timestamp(rfc3339: &str) -> String {
    rfc3339
        .chars()
        .filter(|c| !matches!(c, '-' | ':' | '.'))
        .collect()
}

/// The first eight characters of an id, reduced to `[A-Za-z0-9_-]` (`_` replaces the rest).
pub(crate) fn short_id(id: &str) -> String {
    let short: String = id
        .chars()
        .take(ID_CHARS)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if short.is_empty() {
        "none".to_owned()
    } else {
        short
    }
}

/// The archive file name; the basename is made printable and truncated (at a character
/// boundary) so the whole name fits in 255 bytes.
pub(crate) fn archive_file_name(
    trashed_at: &str,
    session_id: &str,
    run_id: &str,
    unique: &str,
    basename: &OsStr,
) -> String {
    let prefix = format!(
        "{}-{}-{}-{}-",
        compact_timestamp(trashed_at),
        short_id(session_id),
        short_id(run_id),
        unique
    );
    let room = NAME_MAX.saturating_sub(prefix.len() + ARCHIVE_SUFFIX.len());
    let printable = printable(basename);
    let base = truncate_at_char(&printable, room);
    format!("{prefix}{base}{ARCHIVE_SUFFIX}")
}

/// A temp name: `.<what>-<unique>.partial`, created exclusively by the caller.
pub(crate) fn temp_name(what: &str) -> String {
    format!(".{what}-{}{TEMP_SUFFIX}", unique_token())
}

/// A fresh name for the temp root of a restore, `.restore-<unique>.partial`, created beside the
/// target and renamed to it once complete.
pub fn restore_temp_name() -> std::ffi::OsString {
    temp_name("restore").into()
}

/// Is this the name of a restore's temp root (in flight, or left by a crash)?
pub fn is_restore_temp_name(name: &OsStr) -> bool {
    name.as_encoded_bytes().starts_with(b".restore-") && is_temp_name(name)
}

/// Is this the name of a finished archive (not a temp file, not something foreign)?
pub(crate) fn is_archive_name(name: &OsStr) -> bool {
    let bytes = name.as_encoded_bytes();
    !bytes.starts_with(b".") && bytes.ends_with(ARCHIVE_SUFFIX.as_bytes())
}

/// Is this the name of a temp file the trash created (in flight, or left by a crash)?
pub(crate) fn is_temp_name(name: &OsStr) -> bool {
    let bytes = name.as_encoded_bytes();
    bytes.starts_with(b".") && bytes.ends_with(TEMP_SUFFIX.as_bytes())
}

/// Twelve hex digits that differ between calls, threads and processes.
pub(crate) fn unique_token() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    static KEYS: OnceLock<RandomState> = OnceLock::new();
    let mut hasher = KEYS.get_or_init(RandomState::new).build_hasher();
    hasher.write_u32(std::process::id());
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    hasher.write_u128(nanos);
    format!("{:012x}", hasher.finish() & 0xffff_ffff_ffff)
}

/// `name` as text with control characters (and any `/`) replaced by `_`, so listings stay one
/// line per archive.
fn printable(name: &OsStr) -> String {
    name.to_string_lossy()
        .chars()
        .map(|c| if c.is_control() || c == '/' { '_' } else { c })
        .collect()
}

/// The longest prefix of `text` that is at most `max` bytes and ends on a character boundary.
fn truncate_at_char(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_inside_and_outside_the_root() {
        let root = Path::new("/w/root");
        assert_eq!(
            archive_relative_path(root, Path::new("/w/root/a/b.txt")),
            "a/b.txt"
        );
        assert_eq!(
            archive_relative_path(root, Path::new("/w/root-evil/x")),
            "absolute/w/root-evil/x"
        );
        assert_eq!(
            archive_relative_path(root, Path::new("/etc/hosts")),
            "absolute/etc/hosts"
        );
        assert_eq!(archive_relative_path(root, root), "absolute/w/root");
    }

    #[test]
    fn names_are_safe_sortable_and_bounded() {
        let long = "é".repeat(300);
        let name = archive_file_name(
            "2026-11-22T05:17:17.123Z",
            "sess/ion:1234567",
            "",
            "0123456789ab",
            OsStr::new(&long),
        );
        assert!(name.len() <= NAME_MAX, "{} bytes", name.len());
        assert!(name.starts_with("20261122T051717123Z-sess_ion-none-0123456789ab-é"));
        assert!(name.ends_with(".tar.gz"));
        assert!(is_archive_name(OsStr::new(&name)));
        assert!(!is_archive_name(OsStr::new(".x.tar.gz")));
        assert!(is_temp_name(OsStr::new(&temp_name("content"))));
    }

    #[test]
    fn unique_tokens_differ() {
        let tokens: std::collections::HashSet<_> = (0..10_000).map(|_| unique_token()).collect();
        assert_eq!(tokens.len(), 10_000);
    }

    proptest::proptest! {
        #[test]
        fn any_basename_gives_a_valid_name(base in "\\PC{0,400}") {
            let name = archive_file_name("2026-01-01T00:00:00.000Z", "s", "r", "u", OsStr::new(&base));
            proptest::prop_assert!(name.len() <= NAME_MAX);
            proptest::prop_assert!(!name.contains('/') && !name.contains('\0'));
            proptest::prop_assert!(is_archive_name(OsStr::new(&name)));
        }
    }
}
