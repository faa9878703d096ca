//! Opening an archive and reading its first entry, `metadata.json`.
//!
//! Listing reads only that entry: the first gzip member is a few hundred bytes, so a listing
//! costs one small read per archive however large the content is. Errors while decoding are
//! [`TrashError::Corrupt`]; errors opening the file keep their I/O meaning.

use std::fs::File;
use std::io::{BufReader, Read};

use flate2::read::MultiGzDecoder;
use tar::{Archive, Entries, EntryType};

use super::error::TrashError;
use super::metadata::{Metadata, METADATA_ENTRY, METADATA_MAX_BYTES};

/// A decoding reader over every gzip member of an archive file.
pub(crate) type ArchiveReader = Archive<MultiGzDecoder<BufReader<File>>>;

/// Read an archive from an already open file.
pub(crate) fn from_file(file: File) -> ArchiveReader {
    Archive::new(MultiGzDecoder::new(BufReader::new(file)))
}

/// The metadata of the archive open as `file` (reads the first entry only).
pub(crate) fn read_metadata(file: File) -> Result<Metadata, TrashError> {
    let mut archive = from_file(file);
    let mut entries = archive.entries().map_err(unreadable)?;
    read_metadata_entry(&mut entries)
}

/// Read the next entry, which must be `metadata.json`, and parse it.
pub(crate) fn read_metadata_entry<R: Read>(
    entries: &mut Entries<'_, R>,
) -> Result<Metadata, TrashError> {
    let mut entry = entries
        .next()
        .ok_or_else(|| TrashError::corrupt("it has no metadata.json entry"))?
        .map_err(unreadable)?;
    let is_metadata = entry.path_bytes().as_ref() == METADATA_ENTRY.as_bytes()
        && entry.header().entry_type() == EntryType::Regular;
    if !is_metadata {
        return Err(TrashError::corrupt("its first entry is not metadata.json"));
    }
    if entry.size() > METADATA_MAX_BYTES {
        return Err(TrashError::corrupt("its metadata.json is too large"));
    }
    let mut json = Vec::new();
    entry.read_to_end(&mut json).map_err(unreadable)?;
    Metadata::from_json(&json)
}

/// A decoding error as a corrupt-archive error.
pub(crate) fn unreadable(e: std::io::Error) -> TrashError {
    TrashError::corrupt(format!("it cannot be decoded ({e})"))
}

/// The bytes of the file the archive open as `file` keeps (its kind must be a file), verified
/// against the metadata's SHA-256; at most `max_bytes` (else `None`, nothing read beyond the
/// metadata).
pub(crate) fn read_file_content(
    file: File,
    max_bytes: u64,
) -> Result<Option<(Metadata, Vec<u8>)>, TrashError> {
    let mut archive = from_file(file);
    let mut entries = archive.entries().map_err(unreadable)?;
    let metadata = read_metadata_entry(&mut entries)?;
    if metadata.kind != crate::paths::EntryKind::File {
        return Err(TrashError::corrupt("it does not keep a file"));
    }
    if metadata.size > max_bytes {
        return Ok(None);
    }
    let mut entry = entries
        .next()
        .ok_or_else(|| TrashError::corrupt("it has no content entry"))?
        .map_err(unreadable)?;
    let mut bytes = Vec::with_capacity(metadata.size as usize);
    entry
        .by_ref()
        .take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if crate::hashing::sha256_hex(&bytes) != metadata.original_sha256 {
        return Err(TrashError::corrupt(
            "its content does not match its recorded SHA-256",
        ));
    }
    Ok(Some((metadata, bytes)))
}
