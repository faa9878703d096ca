//! Reverse deltas: what turns a file's new bytes back into its old ones, for undo (../../docs/history-and-undo.md). An
//! edit keeps its file's previous bytes this way rather than as a copy in the trash: a delta of
//! the changed regions is a few bytes for a typical edit, and it comes from the diff the call
//! computes anyway for its prompt, so keeping it costs almost nothing.
//!
//! A delta is a list of replacements in the new bytes (`start`, `len`) by old bytes, in order
//! and not overlapping. Undo applies it only to bytes whose SHA-256 is the change's "after" and
//! checks the result against "before", so a delta never has to be trusted blindly.

use std::io;

/// One replacement: `len` bytes of the new content at `start` were `old`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Op {
    start: u64,
    len: u64,
    old: Vec<u8>,
}

/// What turns new bytes back into old ones.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Delta {
    ops: Vec<Op>,
}

/// Magic and version of the stored form.
const MAGIC: &[u8; 8] = b"AFSDLT1\n";

impl Delta {
    /// The delta from `new` back to `old`, given the line ranges that differ: each item is
    /// (old byte range, new byte range), in order and not overlapping. Unchanged bytes around
    /// them are not stored.
    pub fn from_ranges(
        old: &[u8],
        ranges: impl IntoIterator<Item = (std::ops::Range<usize>, std::ops::Range<usize>)>,
    ) -> Self {
        let ops = ranges
            .into_iter()
            .filter(|(o, n)| !(o.is_empty() && n.is_empty()))
            .map(|(o, n)| Op {
                start: n.start as u64,
                len: n.len() as u64,
                old: old[o].to_vec(),
            })
            .collect();
        Self { ops }
    }

    /// The delta from `new` back to `old` by their common start and end alone: exact for any two
    /// contents, small when the change is in one place (an append, one edit).
    pub fn around_common_ends(old: &[u8], new: &[u8]) -> Self {
        let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
        let max_suffix = old.len().min(new.len()) - prefix;
        let suffix = old
            .iter()
            .rev()
            .zip(new.iter().rev())
            .take(max_suffix)
            .take_while(|(a, b)| a == b)
            .count();
        Self::from_ranges(
            old,
            [(prefix..old.len() - suffix, prefix..new.len() - suffix)],
        )
    }

    /// The old bytes, from `new`. Fails if the delta does not fit `new` (a range past its end).
    pub fn apply(&self, new: &[u8]) -> io::Result<Vec<u8>> {
        let mut old = Vec::with_capacity(new.len());
        let mut at = 0usize;
        for op in &self.ops {
            let (start, end) = (op.start as usize, (op.start + op.len) as usize);
            if start < at || end > new.len() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "the delta does not fit the content",
                ));
            }
            old.extend_from_slice(&new[at..start]);
            old.extend_from_slice(&op.old);
            at = end;
        }
        old.extend_from_slice(&new[at..]);
        Ok(old)
    }

    /// The stored form: a magic line, then per replacement its start, length and old length
    /// (little-endian u64) and the old bytes.
    pub fn encode(&self) -> Vec<u8> {
        let size: usize = self.ops.iter().map(|op| 24 + op.old.len()).sum();
        let mut out = Vec::with_capacity(MAGIC.len() + size);
        out.extend_from_slice(MAGIC);
        for op in &self.ops {
            out.extend_from_slice(&op.start.to_le_bytes());
            out.extend_from_slice(&op.len.to_le_bytes());
            out.extend_from_slice(&(op.old.len() as u64).to_le_bytes());
            out.extend_from_slice(&op.old);
        }
        out
    }

    /// Reads the stored form back.
    pub fn decode(bytes: &[u8]) -> io::Result<Self> {
        let bad = || io::Error::new(io::ErrorKind::InvalidData, "not a delta");
        let mut rest = bytes.strip_prefix(MAGIC.as_slice()).ok_or_else(bad)?;
        let mut take = |n: usize| -> io::Result<&[u8]> {
            if rest.len() < n {
                return Err(bad());
            }
            let (head, tail) = rest.split_at(n);
            rest = tail;
            Ok(head)
        };
        let mut ops = Vec::new();
        while let Ok(head) = take(24) {
            let word =
                |i: usize| u64::from_le_bytes(head[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
            let (start, len, old_len) = (word(0), word(1), word(2));
            let old = take(usize::try_from(old_len).map_err(|_| bad())?)?.to_vec();
            ops.push(Op { start, len, old });
        }
        if !rest.is_empty() {
            return Err(bad());
        }
        Ok(Self { ops })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn an_append_is_a_few_bytes() {
        let old = b"line one\nline two\n".to_vec();
        let mut new = old.clone();
        new.extend_from_slice(b"appended\n");
        let delta = Delta::around_common_ends(&old, &new);
        assert_eq!(delta.apply(&new).unwrap(), old);
        assert!(delta.encode().len() < 40);
    }

    #[test]
    fn a_delta_that_does_not_fit_is_an_error() {
        let delta = Delta::around_common_ends(b"abcdef", b"abXYZdef");
        assert!(delta.apply(b"ab").is_err());
        assert!(Delta::decode(b"garbage").is_err());
        let mut stored = delta.encode();
        stored.pop();
        assert!(Delta::decode(&stored).is_err());
    }

    proptest! {
        #[test]
        fn the_old_bytes_come_back(old in proptest::collection::vec(any::<u8>(), 0..200), new in proptest::collection::vec(any::<u8>(), 0..200)) {
            let delta = Delta::around_common_ends(&old, &new);
            let stored = Delta::decode(&delta.encode()).unwrap();
            prop_assert_eq!(stored.apply(&new).unwrap(), old);
        }
    }
}
