//! `metadata.json`, the first entry of every archive (../../docs/trash.md#archive-format).
//!
//! It is written before the content in the archive but computed after it (the digest needs the
//! content), which is why the writer produces the content first; see the module docs of
//! [`super`]. Reading is strict: a listing or a restore only trusts an archive whose metadata parses
//! and is self-consistent.

use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use super::error::TrashError;
use crate::paths::EntryKind;

/// Name of the first entry of every archive.
pub(crate) const METADATA_ENTRY: &str = "metadata.json";
/// Upper bound on the size of `metadata.json`; anything larger is not ours.
pub(crate) const METADATA_MAX_BYTES: u64 = 64 * 1024;

/// The contents of `metadata.json` (serialised in camelCase, in this field order).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    /// Session that trashed the entry (as given, not shortened).
    pub session_id: String,
    /// Run that trashed the entry.
    pub run_id: String,
    /// Agent that trashed the entry.
    pub agent_name: String,
    /// When the entry was archived: RFC 3339, UTC, milliseconds (`2026-11-22T05:17:17.123Z`).
    pub trashed_at: String,
    /// Absolute path of the entry when it was trashed, in its shown form (`paths::shown`: exact
    /// for any bytes, control characters escaped).
    pub original_path: String,
    /// Where the content sits inside the archive (see [`super::archive_relative_path`]).
    pub relative_path: String,
    /// What the entry was.
    pub kind: EntryKind,
    /// Lowercase hex SHA-256: of the file's bytes, of a symlink's target bytes, or the tree
    /// digest of a directory (defined in the module docs of [`super`]).
    pub original_sha256: String,
    /// Bytes of file content: the file's size, the sum over a tree's regular files (a file with
    /// several names in the tree counted once), or the length of a symlink's target.
    pub size: u64,
    /// Permission bits (`st_mode & 0o7777`) of the entry itself.
    pub mode: u32,
    /// Directories only: how many names of regular files the tree holds (a file with three
    /// names in it counts three, as `find -type f` would).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_count: Option<u64>,
}

impl Metadata {
    /// `trashed_at` as a time, if it parses.
    pub fn trashed_at_time(&self) -> Option<SystemTime> {
        humantime::parse_rfc3339(&self.trashed_at).ok()
    }

    /// The JSON bytes stored in the archive.
    pub(crate) fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec_pretty(self).expect("metadata always serialises")
    }

    /// Parse and check `metadata.json`; anything off is [`TrashError::Corrupt`].
    pub(crate) fn from_json(bytes: &[u8]) -> Result<Self, TrashError> {
        let metadata: Metadata = serde_json::from_slice(bytes)
            .map_err(|e| TrashError::corrupt(format!("metadata.json is not valid: {e}")))?;
        metadata.check()?;
        Ok(metadata)
    }

    /// Self-consistency: a digest that looks like one, a safe relative path, a parsable time,
    /// and `fileCount` exactly for directories.
    fn check(&self) -> Result<(), TrashError> {
        let hex_ok = self.original_sha256.len() == 64
            && self
                .original_sha256
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !hex_ok {
            return Err(TrashError::corrupt(
                "originalSha256 is not a SHA-256 hex digest",
            ));
        }
        if !is_safe_relative(&self.relative_path) {
            return Err(TrashError::corrupt(format!(
                "relativePath {:?} is not a plain relative path",
                self.relative_path
            )));
        }
        if self.trashed_at_time().is_none() {
            return Err(TrashError::corrupt("trashedAt is not an RFC 3339 time"));
        }
        if self.file_count.is_some() != (self.kind == EntryKind::Directory) {
            return Err(TrashError::corrupt("fileCount does not match the kind"));
        }
        Ok(())
    }
}

/// A non-empty relative path of plain components only (no `/` prefix, `.`, `..` or empty parts).
pub(crate) fn is_safe_relative(path: &str) -> bool {
    !path.is_empty()
        && !path.contains('\0')
        && path
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Metadata {
        Metadata {
            session_id: "s".into(),
            run_id: "r".into(),
            agent_name: "a".into(),
            trashed_at: "2026-11-22T05:17:17.123Z".into(),
            original_path: "/w/a.txt".into(),
            relative_path: "a.txt".into(),
            kind: EntryKind::File,
            original_sha256: "0".repeat(64),
            size: 3,
            mode: 0o644,
            file_count: None,
        }
    }

    #[test]
    fn json_is_camel_case_in_order_and_omits_file_count_for_files() {
        let text = String::from_utf8(sample().to_json()).unwrap();
        let keys: Vec<_> =
            serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&text)
                .unwrap()
                .keys()
                .cloned()
                .collect();
        assert_eq!(
            keys,
            [
                "sessionId",
                "runId",
                "agentName",
                "trashedAt",
                "originalPath",
                "relativePath",
                "kind",
                "originalSha256",
                "size",
                "mode"
            ]
        );
        assert_eq!(Metadata::from_json(text.as_bytes()).unwrap(), sample());
    }

    /// Metadata as this crate wrote it before the entry kinds became one enum reads back, and
    /// is written again byte for byte; a special file's kind is not a stored form.
    #[test]
    fn metadata_written_before_reads_and_writes_the_same() {
        let written = [
            r#"{"sessionId":"s","runId":"r","agentName":"a","trashedAt":"2026-11-22T05:17:17.123Z","originalPath":"/w/a.txt","relativePath":"a.txt","kind":"file","originalSha256":"abababababababababababababababababababababababababababababababab","size":3,"mode":420}"#,
            r#"{"sessionId":"s","runId":"r","agentName":"a","trashedAt":"2026-11-22T05:17:17.123Z","originalPath":"/w/l","relativePath":"l","kind":"symlink","originalSha256":"abababababababababababababababababababababababababababababababab","size":1,"mode":511}"#,
            r#"{"sessionId":"s","runId":"r","agentName":"a","trashedAt":"2026-11-22T05:17:17.123Z","originalPath":"/w/d","relativePath":"d","kind":"directory","originalSha256":"abababababababababababababababababababababababababababababababab","size":0,"mode":493,"fileCount":2}"#,
        ];
        let kinds = [EntryKind::File, EntryKind::Symlink, EntryKind::Directory];
        for (text, kind) in written.into_iter().zip(kinds) {
            let meta = Metadata::from_json(text.as_bytes()).unwrap();
            assert_eq!(meta.kind, kind);
            assert_eq!(serde_json::to_string(&meta).unwrap(), text);
        }
        let special = written[0].replace(r#""kind":"file""#, r#""kind":"special""#);
        assert!(Metadata::from_json(special.as_bytes()).is_err());
    }

    #[test]
    fn unsafe_or_inconsistent_metadata_is_corrupt() {
        for bad in ["../x", "/etc/passwd", "a//b", "a/./b", ""] {
            let mut m = sample();
            m.relative_path = bad.into();
            assert!(matches!(
                Metadata::from_json(&m.to_json()),
                Err(TrashError::Corrupt(_))
            ));
        }
        let mut m = sample();
        m.file_count = Some(1);
        assert!(Metadata::from_json(&m.to_json()).is_err());
        assert!(Metadata::from_json(b"{}").is_err());
    }
}
