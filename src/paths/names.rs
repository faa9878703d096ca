//! A name's bytes, for what stores or compares names as bytes (journal records, archive
//! members, listings): the only place outside the platform code that knows a name *is* its
//! bytes, as it is on every Unix. Reading a name's bytes needs no help (`as_encoded_bytes`).
//!
//! On Windows a name is UTF-16 and its bytes are its WTF-8 form (UTF-8, in which an unpaired
//! surrogate is encoded as if it were a character: what `as_encoded_bytes` gives there).
//! Bytes that are not WTF-8 (a name made on Unix that is not UTF-8) name nothing on Windows.

use std::ffi::{OsStr, OsString};
#[cfg(unix)]
use std::os::unix::ffi::{OsStrExt, OsStringExt};

/// The name whose bytes are `bytes`.
#[cfg(unix)]
pub fn from_bytes(bytes: &[u8]) -> &OsStr {
    OsStr::from_bytes(bytes)
}

/// The name whose bytes are `bytes`, owned.
#[cfg(unix)]
pub fn from_vec(bytes: Vec<u8>) -> OsString {
    OsString::from_vec(bytes)
}

/// The bytes of `name`, owned.
#[cfg(unix)]
pub fn into_vec(name: OsString) -> Vec<u8> {
    name.into_vec()
}

/// What bytes that are no Windows name stand for: a name every open refuses (it holds NUL), so
/// a record or archive member made on Unix with such a name fails closed rather than naming
/// another entry.
#[cfg(windows)]
const NO_WINDOWS_NAME: &str = "\0not a Windows name";

/// The name whose bytes are `bytes`: UTF-8 as it is; anything else (an unpaired surrogate, or
/// bytes that are no name on Windows) is a name no open accepts (see [`NO_WINDOWS_NAME`]). Use
/// [`from_vec`] where an owned name will do: it keeps unpaired surrogates.
#[cfg(windows)]
pub fn from_bytes(bytes: &[u8]) -> &OsStr {
    OsStr::new(std::str::from_utf8(bytes).unwrap_or(NO_WINDOWS_NAME))
}

/// The name whose bytes (WTF-8) are `bytes`, owned; bytes that are not WTF-8 give the name no
/// open accepts (see [`NO_WINDOWS_NAME`]).
#[cfg(windows)]
pub fn from_vec(bytes: Vec<u8>) -> OsString {
    use std::os::windows::ffi::OsStringExt;
    match wtf8_units(&bytes) {
        Some(units) => OsString::from_wide(&units),
        None => OsString::from(NO_WINDOWS_NAME),
    }
}

/// The bytes (WTF-8) of `name`, owned.
#[cfg(windows)]
pub fn into_vec(name: OsString) -> Vec<u8> {
    name.as_encoded_bytes().to_vec()
}

/// The UTF-16 units WTF-8 `bytes` encode: UTF-8 whose three-byte sequences may also encode a
/// lone surrogate (a pair must be encoded as one four-byte character, as WTF-8 requires).
#[cfg(windows)]
fn wtf8_units(bytes: &[u8]) -> Option<Vec<u16>> {
    let mut units = Vec::with_capacity(bytes.len());
    let mut rest = bytes;
    let mut last_was_lead = false;
    while !rest.is_empty() {
        let (valid, after) = match std::str::from_utf8(rest) {
            Ok(text) => (text, &[][..]),
            Err(e) => {
                let (valid, after) = rest.split_at(e.valid_up_to());
                (std::str::from_utf8(valid).ok()?, after)
            }
        };
        if !valid.is_empty() {
            units.extend(valid.encode_utf16());
            last_was_lead = false;
        }
        if after.is_empty() {
            break;
        }
        // Not UTF-8 here: only an encoded surrogate (ED A0..BF xx) is WTF-8.
        let [0xED, second @ 0xA0..=0xBF, third @ 0x80..=0xBF, ..] = *after else {
            return None;
        };
        let unit = 0xD000 | (u16::from(second & 0x3F) << 6) | u16::from(third & 0x3F);
        let is_lead = unit < 0xDC00;
        if last_was_lead && !is_lead {
            return None; // a pair written as two surrogates is not WTF-8
        }
        units.push(unit);
        last_was_lead = is_lead;
        rest = &after[3..];
    }
    Some(units)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// Any bytes but `/` and NUL make a name, and come back as they went in.
    #[test]
    fn bytes_round_trip() {
        let raw = b"caf\xe9 \x01name".to_vec();
        assert_eq!(from_bytes(&raw).as_encoded_bytes(), &raw[..]);
        assert_eq!(into_vec(from_vec(raw.clone())), raw);
    }
}

/// Windows only: type-checked by `check:targets`, run where the crate's tests run on Windows.
#[cfg(all(test, windows))]
mod windows_tests {
    use super::*;
    use std::os::windows::ffi::{OsStrExt, OsStringExt};

    /// A name with an unpaired surrogate comes back from its WTF-8 bytes unchanged.
    #[test]
    fn wtf8_bytes_round_trip_with_a_lone_surrogate() {
        let name = OsString::from_wide(&[0x61, 0xD800, 0x62]);
        let bytes = into_vec(name.clone());
        assert_eq!(from_vec(bytes), name);
        assert_eq!(from_bytes("caf\u{e9}".as_bytes()), OsStr::new("caf\u{e9}"));
    }

    /// Bytes that are no Windows name give a name every open refuses (it holds NUL).
    #[test]
    fn bytes_that_are_no_windows_name_fail_closed() {
        for bytes in [&b"bad\xff"[..], b"\xed\xa0\x80\xed\xb0\x80"] {
            assert!(from_vec(bytes.to_vec()).encode_wide().any(|unit| unit == 0));
        }
        assert!(from_bytes(b"bad\xff").encode_wide().any(|unit| unit == 0));
    }
}
