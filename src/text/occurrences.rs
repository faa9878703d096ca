//! Substring counting and replacement on top of `memchr::memmem`.

use memchr::memmem::Finder;

/// Overlapping occurrences of a needle in a haystack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Occurrences {
    /// Number of occurrences, overlapping ones included (`aa` in `aaa` is 2).
    pub count: usize,
    /// Byte offset of the first occurrence.
    pub first: Option<usize>,
}

/// Counts the overlapping occurrences of a non-empty `needle` in `haystack`
/// that do not split a CRLF pair (see [`splits_crlf_pair`]).
pub(crate) fn count_matches(haystack: &[u8], needle: &[u8]) -> Occurrences {
    let mut result = Occurrences {
        count: 0,
        first: None,
    };
    each_occurrence(haystack, needle, |pos| {
        if keeps_crlf_pairs(haystack, pos, pos + needle.len()) {
            result.first.get_or_insert(pos);
            result.count += 1;
        }
    });
    result
}

/// The byte offsets of the first `limit` occurrences [`count_matches`] counts.
pub(crate) fn match_starts(haystack: &[u8], needle: &[u8], limit: usize) -> Vec<usize> {
    let mut starts = Vec::new();
    each_occurrence(haystack, needle, |pos| {
        if starts.len() < limit && keeps_crlf_pairs(haystack, pos, pos + needle.len()) {
            starts.push(pos);
        }
    });
    starts
}

/// True when a match of `haystack[start..end]` starts or ends between the
/// `\r` and the `\n` of a CRLF pair. Replacing such a match would leave a
/// lone `\r` or `\n` behind (../../docs/tools.md), so it is not a match.
fn splits_crlf_pair(haystack: &[u8], at: usize) -> bool {
    at > 0 && haystack.get(at - 1) == Some(&b'\r') && haystack.get(at) == Some(&b'\n')
}

fn keeps_crlf_pairs(haystack: &[u8], start: usize, end: usize) -> bool {
    !splits_crlf_pair(haystack, start) && !splits_crlf_pair(haystack, end)
}

/// Calls `found` with the offset of every occurrence of a non-empty `needle`,
/// overlapping ones included, in increasing order.
///
/// Runs in linear time even for periodic needles (`aaaa…` in `aaaa…`): once
/// an occurrence is found, the next overlapping one can only start a whole
/// period later and needs just the last `period` bytes compared.
fn each_occurrence(haystack: &[u8], needle: &[u8], mut found: impl FnMut(usize)) {
    debug_assert!(!needle.is_empty());
    let finder = Finder::new(needle);
    let period = smallest_period(needle);
    let tail = &needle[needle.len() - period..];
    let mut start = 0;
    while let Some(offset) = finder.find(&haystack[start..]) {
        let mut pos = start + offset;
        found(pos);
        while period < needle.len() && extends_run(haystack, pos + needle.len(), tail) {
            pos += period;
            found(pos);
        }
        // No occurrence starts less than a period after `pos`, and one exactly
        // a period later was just ruled out (or the needle is aperiodic).
        start = pos + period;
        if start > haystack.len() {
            break;
        }
    }
}

fn extends_run(haystack: &[u8], end: usize, tail: &[u8]) -> bool {
    haystack.get(end..end + tail.len()) == Some(tail)
}

/// The smallest `p >= 1` with `needle[i] == needle[i + p]` for all valid `i`.
fn smallest_period(needle: &[u8]) -> usize {
    needle.len() - borders(needle).last().copied().unwrap_or(0)
}

/// The Knuth–Morris–Pratt border table of `needle`: for each prefix, the length of its longest
/// proper prefix that is also its suffix.
pub(crate) fn borders<T: PartialEq>(needle: &[T]) -> Vec<usize> {
    let mut border = vec![0usize; needle.len()];
    let mut k = 0;
    for i in 1..needle.len() {
        while k > 0 && needle[i] != needle[k] {
            k = border[k - 1];
        }
        if needle[i] == needle[k] {
            k += 1;
        }
        border[i] = k;
    }
    border
}

/// Replaces the non-overlapping occurrences of a non-empty `needle` that do
/// not split a CRLF pair, left to right, with the literal `replacement`.
/// Returns the new text and the number of replacements.
pub(crate) fn replace_all(haystack: &str, needle: &str, replacement: &str) -> (String, usize) {
    let bytes = haystack.as_bytes();
    let mut out = String::with_capacity(haystack.len());
    let mut copied_up_to = 0;
    let mut count = 0;
    each_occurrence(bytes, needle.as_bytes(), |pos| {
        let end = pos + needle.len();
        if pos >= copied_up_to && keeps_crlf_pairs(bytes, pos, end) {
            out.push_str(&haystack[copied_up_to..pos]);
            out.push_str(replacement);
            copied_up_to = end;
            count += 1;
        }
    });
    out.push_str(&haystack[copied_up_to..]);
    (out, count)
}

/// True when `text` has a `\n` not preceded by `\r`.
pub(crate) fn has_bare_lf(text: &str) -> bool {
    let bytes = text.as_bytes();
    memchr::memchr_iter(b'\n', bytes).any(|i| i == 0 || bytes[i - 1] != b'\r')
}

/// Converts every bare `\n` to `\r\n`, leaving existing `\r\n` alone.
pub(crate) fn lf_to_crlf(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    let mut copied_up_to = 0;
    for i in memchr::memchr_iter(b'\n', bytes) {
        if i == 0 || bytes[i - 1] != b'\r' {
            out.push_str(&text[copied_up_to..i]);
            out.push_str("\r\n");
            copied_up_to = i + 1;
        }
    }
    out.push_str(&text[copied_up_to..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn naive_count(haystack: &[u8], needle: &[u8]) -> usize {
        haystack
            .windows(needle.len())
            .filter(|w| *w == needle)
            .count()
    }

    #[test]
    fn counts_overlapping_occurrences() {
        assert_eq!(count_matches(b"aaa", b"aa").count, 2);
        assert_eq!(count_matches(b"ababa", b"aba").count, 2);
        assert_eq!(count_matches(b"aabaabaa", b"aabaa").count, 2);
        let none = count_matches(b"xyz", b"q");
        assert_eq!((none.count, none.first), (0, None));
        let one = count_matches(b"xyz", b"yz");
        assert_eq!((one.count, one.first), (1, Some(1)));
    }

    #[test]
    fn a_match_never_splits_a_crlf_pair() {
        assert_eq!(count_matches(b"a\r\nb", b"\nb").count, 0);
        assert_eq!(count_matches(b"a\r\nb", b"a\r").count, 0);
        assert_eq!(count_matches(b"a\r\nb", b"\r\nb").count, 1);
        // A lone `\r` or a bare `\n` may start or end a match.
        assert_eq!(count_matches(b"a\rb\n\nc", b"\nc").count, 1);
        assert_eq!(count_matches(b"a\rb", b"a\r").count, 1);
        let found = count_matches(b"\r\n\n", b"\n");
        assert_eq!((found.count, found.first), (1, Some(2)));
        assert_eq!(
            replace_all("a\r\nb\nc", "\n", "|"),
            ("a\r\nb|c".to_owned(), 1)
        );
        // A skipped occurrence does not hide an overlapping one that is allowed.
        assert_eq!(
            replace_all("\r\n\n\n", "\n\n", "X"),
            ("\r\nX".to_owned(), 1)
        );
    }

    #[test]
    fn skipping_split_pairs_stays_linear() {
        let haystack = "\r\n".repeat(1 << 19);
        let needle = format!("{}\r", "\r\n".repeat(2048));
        assert_eq!(
            count_matches(haystack.as_bytes(), needle.as_bytes()).count,
            0
        );
        assert_eq!(replace_all(&haystack, &needle, "x").1, 0);
    }

    #[test]
    fn periodic_needle_in_periodic_haystack_is_linear() {
        let haystack = vec![b'a'; 1 << 20];
        let needle = vec![b'a'; 4096];
        let found = count_matches(&haystack, &needle);
        assert_eq!(found.count, haystack.len() - needle.len() + 1);
        assert_eq!(found.first, Some(0));
    }

    #[test]
    fn periods() {
        assert_eq!(smallest_period(b"a"), 1);
        assert_eq!(smallest_period(b"aaaa"), 1);
        assert_eq!(smallest_period(b"abab"), 2);
        assert_eq!(smallest_period(b"aabaa"), 3);
        assert_eq!(smallest_period(b"abc"), 3);
    }

    #[test]
    fn replace_all_is_non_overlapping_left_to_right_and_literal() {
        assert_eq!(replace_all("aaa", "aa", "$&"), ("$&a".to_owned(), 1));
        assert_eq!(replace_all("x.x.x", "x", "$1"), ("$1.$1.$1".to_owned(), 3));
        assert_eq!(replace_all("abc", "z", "y"), ("abc".to_owned(), 0));
    }

    #[test]
    fn line_ending_conversion_touches_only_bare_lf() {
        assert_eq!(lf_to_crlf("a\nb\r\nc\n"), "a\r\nb\r\nc\r\n");
        assert_eq!(lf_to_crlf("\n\r\r\n"), "\r\n\r\r\n");
        assert!(has_bare_lf("\n"));
        assert!(has_bare_lf("a\r\nb\n"));
        assert!(!has_bare_lf("a\r\nb\r\n"));
        assert!(!has_bare_lf("a\rb"));
    }

    proptest! {
        #[test]
        fn count_matches_naive(haystack in "[ab\n]{0,40}", needle in "[ab\n]{1,5}") {
            let found = count_matches(haystack.as_bytes(), needle.as_bytes());
            prop_assert_eq!(found.count, naive_count(haystack.as_bytes(), needle.as_bytes()));
            prop_assert_eq!(found.first, haystack.find(&needle));
        }

        #[test]
        fn crlf_aware_matching_agrees_with_a_naive_scan(
            haystack in "[ab\r\n]{0,40}",
            needle in "[ab\r\n]{1,5}",
            with in "[xa]{0,3}",
        ) {
            let (h, n) = (haystack.as_bytes(), needle.as_bytes());
            let allowed = |i: usize| {
                h[i..].starts_with(n) && !splits_crlf_pair(h, i) && !splits_crlf_pair(h, i + n.len())
            };
            let starts: Vec<usize> = (0..h.len()).filter(|&i| allowed(i)).collect();
            let found = count_matches(h, n);
            prop_assert_eq!((found.count, found.first), (starts.len(), starts.first().copied()));
            let (mut expected, mut i, mut count) = (String::new(), 0, 0);
            while i < h.len() {
                if allowed(i) {
                    expected.push_str(&with);
                    i += n.len();
                    count += 1;
                } else {
                    expected.push(h[i] as char);
                    i += 1;
                }
            }
            prop_assert_eq!(replace_all(&haystack, &needle, &with), (expected, count));
        }

        #[test]
        fn replace_all_matches_std(haystack in "[ab\n]{0,40}", needle in "[ab\n]{1,4}", with in "[xa]{0,3}") {
            let (out, count) = replace_all(&haystack, &needle, &with);
            prop_assert_eq!(out, haystack.replace(&needle, &with));
            prop_assert_eq!(count, haystack.matches(&needle).count());
        }
    }
}
