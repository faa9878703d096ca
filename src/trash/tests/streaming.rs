//! A 50 MB file goes through in fixed-size chunks both ways.
//!
//! The cancel callback is polled once per chunk (never less often), so the number of polls
//! proves the data moved in steps of at most `CHUNK` bytes rather than as one buffer.

use std::cell::Cell;
use std::fs::File;
use std::io::{Read, Write};

use sha2::{Digest, Sha256};

use super::support::*;
use crate::trash::stream::CHUNK;

const SIZE: usize = 50 * 1024 * 1024;

/// Write `SIZE` bytes of a non-repeating-looking pattern, one 1 MiB block at a time.
fn write_big(path: &std::path::Path) -> String {
    let mut file = File::create(path).unwrap();
    let mut hasher = Sha256::new();
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut block = vec![0u8; 1 << 20];
    for _ in 0..SIZE / block.len() {
        for byte in block.iter_mut() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            *byte = (state >> 56) as u8 & 0x0f;
        }
        hasher.update(&block);
        file.write_all(&block).unwrap();
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// SHA-256 of a file, streamed.
fn sha_of(path: &std::path::Path) -> String {
    let mut file = File::open(path).unwrap();
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn fifty_megabytes_stream_in_bounded_chunks() {
    let env = Env::with_level(1);
    let path = env.path("big.bin");
    let sha = write_big(&path);
    let min_polls = SIZE / CHUNK;

    let polls = Cell::new(0usize);
    let count = || {
        polls.set(polls.get() + 1);
        false
    };
    let archived = env.trash_with(&path, &count).unwrap();
    assert!(
        polls.get() >= min_polls,
        "{} polls while archiving",
        polls.get()
    );
    assert_eq!(archived.metadata.original_sha256, sha);
    assert_eq!(archived.metadata.size, SIZE as u64);

    polls.set(0);
    env.restore_with(&archived.archive_path, &path, &count)
        .unwrap();
    assert!(
        polls.get() >= min_polls,
        "{} polls while restoring",
        polls.get()
    );
    assert_eq!(sha_of(&path), sha);
}
