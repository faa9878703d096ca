//! SHA-256 as lowercase hex, streaming where the input is large.

use std::io::{self, Read};

use sha2::{Digest, Sha256};

/// Lowercase hex of a digest.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// SHA-256 of `bytes`, as hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// From this many bytes on, [`sha256_hex_beside`] hashes on a thread of its own: below, starting
/// one costs about what it saves (SHA-256 runs at 1–2 GB/s).
const HASHED_BESIDE_FROM: usize = 1 << 20;

/// [`sha256_hex`] of `bytes`, and what `work` returns: for large `bytes` the hash is taken on a
/// thread of its own while `work` runs on this one (a large file's hash beside its diff), else
/// (or when no thread can be started) one after the other.
pub fn sha256_hex_beside<R>(bytes: &[u8], work: impl FnOnce() -> R) -> (String, R) {
    if bytes.len() < HASHED_BESIDE_FROM {
        return (sha256_hex(bytes), work());
    }
    std::thread::scope(|scope| {
        match std::thread::Builder::new().spawn_scoped(scope, || sha256_hex(bytes)) {
            Ok(hashing) => {
                let done = work();
                let hash = hashing
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                (hash, done)
            }
            Err(_) => (sha256_hex(bytes), work()),
        }
    })
}

/// SHA-256 of everything `reader` yields, with a fixed-size buffer.
pub fn sha256_reader(mut reader: impl Read) -> io::Result<String> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            return Ok(hex(&hasher.finalize()));
        }
        hasher.update(&buf[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_vectors() {
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(sha256_reader(&b"abc"[..]).unwrap(), sha256_hex(b"abc"));
    }

    #[test]
    fn a_hash_beside_other_work_is_the_same_hash_small_or_large() {
        for len in [0, 3, HASHED_BESIDE_FROM, HASHED_BESIDE_FROM + 7] {
            let bytes: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let (hash, done) = sha256_hex_beside(&bytes, || len * 2);
            assert_eq!((hash, done), (sha256_hex(&bytes), len * 2));
        }
    }
}
