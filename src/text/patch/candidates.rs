//! The places a run of lines occurs in a file, as numbers of interned lines (see
//! [`Haystack`](super::seek::Haystack)), yielded lazily in order.
//!
//! Two ways, whichever bounds the work better for this run: check each line where the run's
//! rarest line is (the usual case: a chunk has a line that occurs a few times at most), or scan
//! the rest of the file with Knuth–Morris–Pratt (a run made only of lines that are everywhere,
//! like `}` and blank lines). Either way a chunk costs at most a scan of the rest of the file,
//! and usually a handful of comparisons.

use crate::text::occurrences::borders;

/// The starts of a run's occurrences at or after a line, in order.
pub(super) struct Candidates<'h> {
    way: Way<'h>,
}

enum Way<'h> {
    None,
    /// Each start the rarest line (at `pivot` in the run) implies, checked whole.
    ByRarestLine {
        ids: &'h [u32],
        needle: Vec<u32>,
        pivot: usize,
        lines: std::slice::Iter<'h, u32>,
    },
    /// Knuth–Morris–Pratt from line `at`, `matched` numbers of the needle matched so far.
    Scan {
        ids: &'h [u32],
        needle: Vec<u32>,
        border: Vec<usize>,
        at: usize,
        matched: usize,
    },
}

impl<'h> Candidates<'h> {
    pub(super) fn none() -> Self {
        Candidates { way: Way::None }
    }

    /// The occurrences of `needle` (not empty, at most as long as `ids[from..]`) in `ids` at or
    /// after `from`; `lines_of(id)` lists the lines of number `id`, in order.
    pub(super) fn new(
        ids: &'h [u32],
        needle: Vec<u32>,
        from: usize,
        lines_of: impl Fn(u32) -> &'h [u32],
    ) -> Self {
        let (n, m) = (ids.len(), needle.len());
        // The run's line with the fewest lines where it could put the run's start in range.
        let (pivot, lines) = needle
            .iter()
            .enumerate()
            .map(|(pivot, &id)| {
                let all = lines_of(id);
                let first = all.partition_point(|&line| (line as usize) < from + pivot);
                let end = all.partition_point(|&line| (line as usize) <= n - m + pivot);
                (pivot, &all[first..end.max(first)])
            })
            .min_by_key(|(_, lines)| lines.len())
            .expect("the needle is not empty");
        // Checking a start costs up to `m` comparisons; a scan, one per line left.
        let way = if lines.len().saturating_mul(m) <= n - from + m {
            Way::ByRarestLine {
                ids,
                needle,
                pivot,
                lines: lines.iter(),
            }
        } else {
            Way::Scan {
                ids,
                border: borders(&needle),
                needle,
                at: from,
                matched: 0,
            }
        };
        Candidates { way }
    }
}

impl Iterator for Candidates<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        match &mut self.way {
            Way::None => None,
            Way::ByRarestLine {
                ids,
                needle,
                pivot,
                lines,
            } => lines.find_map(|&line| {
                let start = line as usize - *pivot;
                (ids[start..start + needle.len()] == needle[..]).then_some(start)
            }),
            Way::Scan {
                ids,
                needle,
                border,
                at,
                matched,
            } => {
                while *at < ids.len() {
                    let id = ids[*at];
                    *at += 1;
                    while *matched > 0 && id != needle[*matched] {
                        *matched = border[*matched - 1];
                    }
                    if id == needle[*matched] {
                        *matched += 1;
                    }
                    if *matched == needle.len() {
                        *matched = border[*matched - 1];
                        return Some(*at - needle.len());
                    }
                }
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The lines of each number of `ids`, as the haystack lists them.
    fn lines_of(ids: &[u32]) -> Vec<Vec<u32>> {
        let mut out = vec![Vec::new(); ids.iter().max().map_or(0, |&m| m as usize + 1)];
        for (line, &id) in ids.iter().enumerate() {
            out[id as usize].push(line as u32);
        }
        out
    }

    fn found(ids: &[u32], needle: &[u32], from: usize) -> Vec<usize> {
        let table = lines_of(ids);
        Candidates::new(ids, needle.to_vec(), from, |id| {
            table.get(id as usize).map_or(&[][..], |v| &v[..])
        })
        .collect()
    }

    #[test]
    fn a_run_of_common_lines_is_scanned_and_a_rare_line_is_looked_up() {
        // All `0` but one `1`: the run `0 0` is everywhere (scanned), `0 1` is at one place.
        let mut ids = vec![0u32; 1000];
        ids[500] = 1;
        assert_eq!(found(&ids, &[0, 1], 0), [499]);
        assert_eq!(found(&ids, &[0, 0], 990), (990..999).collect::<Vec<_>>());
        assert_eq!(found(&ids, &[1, 0], 501), Vec::<usize>::new());
    }

    proptest! {
        #[test]
        fn candidates_are_every_occurrence_in_order(
            ids in proptest::collection::vec(0u32..3, 1..40),
            needle in proptest::collection::vec(0u32..3, 1..5),
            from in 0usize..40,
        ) {
            prop_assume!(from < ids.len() && needle.len() <= ids.len() - from);
            let naive: Vec<usize> = (from..=ids.len() - needle.len())
                .filter(|&i| ids[i..i + needle.len()] == needle[..])
                .collect();
            prop_assert_eq!(found(&ids, &needle, from), naive);
        }
    }
}
