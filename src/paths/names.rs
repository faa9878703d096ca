//! A name's bytes, for what stores or compares names as bytes (journal records, archive
//! members, listings): the only place outside the platform code that knows a name *is* its
//! bytes, as it is on every Unix. Reading a name's bytes needs no help (`as_encoded_bytes`).

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

/// The name whose bytes are `bytes`.
pub fn from_bytes(bytes: &[u8]) -> &OsStr {
    OsStr::from_bytes(bytes)
}

/// The name whose bytes are `bytes`, owned.
pub fn from_vec(bytes: Vec<u8>) -> OsString {
    OsString::from_vec(bytes)
}

/// The bytes of `name`, owned.
pub fn into_vec(name: OsString) -> Vec<u8> {
    name.into_vec()
}

#[cfg(test)]
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
