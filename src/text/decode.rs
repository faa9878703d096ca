//! Bytes ↔ text: binary detection, strict UTF-8 decoding for editing, and a
//! lossy decoder for display.

use std::fmt;

use crate::paths::shown::Shown;
use std::path::Path;

use memchr::memmem;

use crate::error::{ErrorCode, ToolError};

/// How many leading bytes are inspected when deciding whether a file is binary.
pub const BINARY_SNIFF_BYTES: usize = 8192;

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// True when the first [`BINARY_SNIFF_BYTES`] of `prefix` contain a NUL byte.
///
/// `prefix` may be longer than the sniff window; only the window is checked.
pub fn looks_binary(prefix: &[u8]) -> bool {
    let window = &prefix[..prefix.len().min(BINARY_SNIFF_BYTES)];
    memchr::memchr(0, window).is_some()
}

/// A text file decoded for editing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextFile {
    /// Whether the file started with a UTF-8 byte order mark.
    pub bom: bool,
    /// The file's text, without the byte order mark.
    pub text: String,
}

impl TextFile {
    /// Encodes the text back to bytes, re-adding the byte order mark if the
    /// file had one. `decode_for_edit(b)?.to_bytes() == b` for every accepted `b`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(self.text.len() + UTF8_BOM.len());
        if self.bom {
            bytes.extend_from_slice(UTF8_BOM);
        }
        bytes.extend_from_slice(self.text.as_bytes());
        bytes
    }
}

/// Why a file cannot be edited as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    /// A NUL byte in the first [`BINARY_SNIFF_BYTES`] bytes.
    Binary,
    /// The bytes are not valid UTF-8; `byte_offset` is the offset (in the
    /// whole file, BOM included) of the first invalid sequence.
    Encoding { byte_offset: usize },
}

impl DecodeError {
    /// The one mapping of a decoding failure to its error code (../../docs/tools.md#error-codes), with the message for the
    /// model: `path` is the file, `tool` the host's name of the tool that refuses it
    /// (`edit_file`, `apply_patch`), `write_file` the host's name of the tool that could replace
    /// it whole, if the workspace offers one.
    pub fn into_tool_error(self, path: &Path, tool: &str, write_file: Option<&str>) -> ToolError {
        let path = path.shown();
        let replace = match write_file {
            Some(write) => format!(", or replace it whole with {write} if it must change"),
            None => String::new(),
        };
        match self {
            DecodeError::Binary => ToolError::new(
                ErrorCode::BinaryFile,
                format!("{path} is a binary file (it has a NUL byte near its start); {tool} edits text files only. Leave it as it is{replace}"),
            ),
            DecodeError::Encoding { byte_offset } => ToolError::new(
                ErrorCode::Encoding,
                format!(
                    "{path} is not valid UTF-8 (first invalid byte at offset {byte_offset}); {tool} refuses it so that no bytes are lost. Leave it as it is{replace}"
                ),
            ),
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Binary => write!(f, "binary file (contains a NUL byte)"),
            DecodeError::Encoding { byte_offset } => {
                write!(
                    f,
                    "not valid UTF-8 (first invalid byte at offset {byte_offset})"
                )
            }
        }
    }
}

impl std::error::Error for DecodeError {}

/// Decodes a whole file for editing: refuses binary files, then requires strict
/// UTF-8 (never lossy), then strips a leading UTF-8 BOM.
pub fn decode_for_edit(bytes: &[u8]) -> Result<TextFile, DecodeError> {
    let (bom, text) = split_bom(text_for_edit(bytes)?);
    Ok(TextFile {
        bom,
        text: text.to_owned(),
    })
}

/// What [`decode_for_edit`] checks, without copying: the whole file as text, its byte order
/// mark (U+FEFF) kept; [`split_bom`] tells it apart.
pub fn text_for_edit(bytes: &[u8]) -> Result<&str, DecodeError> {
    if looks_binary(bytes) {
        return Err(DecodeError::Binary);
    }
    std::str::from_utf8(bytes).map_err(|e| DecodeError::Encoding {
        byte_offset: e.valid_up_to(),
    })
}

/// Decodes bytes for display, replacing invalid UTF-8 with U+FFFD. A leading
/// BOM is dropped, as [`decode_for_edit`] does, so text copied from the display
/// matches what `edit_file` searches. Returns the text and whether the bytes
/// were valid UTF-8.
pub fn decode_lossy(bytes: &[u8]) -> (String, bool) {
    let decoded = lossy(bytes);
    let valid = matches!(decoded, std::borrow::Cow::Borrowed(_));
    let (_, text) = split_bom(&decoded);
    (text.to_owned(), valid)
}

/// `String::from_utf8_lossy`, borrowed when the bytes are valid UTF-8. Checked with
/// `str::from_utf8` first: the usual text is valid, and that check runs words at a time
/// where the lossy one goes byte by byte.
pub fn lossy(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// True when the text contains at least one CRLF line ending.
pub fn has_crlf(text: &str) -> bool {
    memmem::find(text.as_bytes(), b"\r\n").is_some()
}

/// Whether `text` starts with a byte order mark, and the text after it.
pub fn split_bom(text: &str) -> (bool, &str) {
    match text.strip_prefix('\u{FEFF}') {
        Some(rest) => (true, rest),
        None => (false, text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nul_in_sniff_window_is_binary() {
        assert!(looks_binary(b"abc\0def"));
        assert!(!looks_binary(b"plain text\n"));
        assert!(!looks_binary(b""));
    }

    #[test]
    fn nul_after_sniff_window_is_not_binary() {
        let mut bytes = vec![b'a'; BINARY_SNIFF_BYTES];
        bytes.push(0);
        assert!(!looks_binary(&bytes));
        bytes[BINARY_SNIFF_BYTES - 1] = 0;
        assert!(looks_binary(&bytes));
    }

    #[test]
    fn decode_rejects_binary_before_encoding() {
        let err = decode_for_edit(b"\xFF\0").unwrap_err();
        assert_eq!(err, DecodeError::Binary);
        let tool_error =
            err.into_tool_error(Path::new("/w/b.bin"), "apply_patch", Some("write_file"));
        assert_eq!(tool_error.code, ErrorCode::BinaryFile);
        assert_eq!(
            tool_error.message,
            "/w/b.bin is a binary file (it has a NUL byte near its start); apply_patch edits text files only. Leave it as it is, or replace it whole with write_file if it must change"
        );
    }

    #[test]
    fn decode_reports_first_invalid_byte_offset() {
        let err = decode_for_edit(b"ok\n\xC3(").unwrap_err();
        assert_eq!(err, DecodeError::Encoding { byte_offset: 3 });
        assert!(err.to_string().contains("offset 3"));
        let tool_error = err.into_tool_error(Path::new("/w/f.txt"), "edit_file", None);
        assert_eq!(tool_error.code, ErrorCode::Encoding);
        assert_eq!(
            tool_error.message,
            "/w/f.txt is not valid UTF-8 (first invalid byte at offset 3); edit_file refuses it so that no bytes are lost. Leave it as it is"
        );
        // Offsets count the BOM: they are file offsets.
        let err = decode_for_edit(b"\xEF\xBB\xBFab\xFF").unwrap_err();
        assert_eq!(err, DecodeError::Encoding { byte_offset: 5 });
    }

    #[test]
    fn bom_round_trip_is_byte_exact() {
        let bytes = b"\xEF\xBB\xBFline 1\r\nline 2";
        let file = decode_for_edit(bytes).unwrap();
        assert!(file.bom);
        assert_eq!(file.text, "line 1\r\nline 2");
        assert_eq!(file.to_bytes(), bytes);
    }

    #[test]
    fn no_bom_round_trip_is_byte_exact() {
        for bytes in [
            &b""[..],
            b"a",
            b"a\n",
            b"a\r\nb\n\n",
            "é\u{FEFF}".as_bytes(),
        ] {
            let file = decode_for_edit(bytes).unwrap();
            assert!(!file.bom);
            assert_eq!(file.to_bytes(), bytes);
        }
    }

    #[test]
    fn only_one_leading_bom_is_stripped() {
        let file = decode_for_edit("\u{FEFF}\u{FEFF}x".as_bytes()).unwrap();
        assert!(file.bom);
        assert_eq!(file.text, "\u{FEFF}x");
        assert_eq!(file.to_bytes(), "\u{FEFF}\u{FEFF}x".as_bytes());
    }

    #[test]
    fn lossy_decoding_flags_invalid_utf8_and_drops_bom() {
        assert_eq!(decode_lossy(b"ok"), ("ok".to_owned(), true));
        assert_eq!(decode_lossy(b"a\xFFb"), ("a\u{FFFD}b".to_owned(), false));
        assert_eq!(
            decode_lossy(b"\xEF\xBB\xBFx\xFF"),
            ("x\u{FFFD}".to_owned(), false)
        );
    }

    #[test]
    fn crlf_detection() {
        assert!(has_crlf("a\r\nb"));
        assert!(!has_crlf("a\nb\r"));
        assert!(!has_crlf("a\r\rb\n"));
    }
}
