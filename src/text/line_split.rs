//! Splitting a text into its lines, each with the `\n` that ends it.

/// What `text.split_inclusive('\n')` yields: every line with its `\n` (a last line without one
/// as it is; no line for an empty text). Found with one SIMD scan (`memchr_iter`) rather than a
/// search started again for every line: twice as fast on a file of short lines, which every
/// patch, diff and delta splits several times.
pub fn lines_inclusive(text: &str) -> impl Iterator<Item = &str> {
    let mut newlines = memchr::memchr_iter(b'\n', text.as_bytes());
    let mut start = 0;
    std::iter::from_fn(move || {
        let end = match newlines.next() {
            Some(newline) => newline + 1,
            None if start < text.len() => text.len(),
            None => return None,
        };
        let line = &text[start..end];
        start = end;
        Some(line)
    })
}

/// How many lines `text` has, as `str::lines` counts them (a last line without a newline
/// counts; none for an empty text), with the same SIMD scan: counting the lines an output or a
/// diff left out went through `lines()`, a search started again for every line.
pub fn line_count(text: &[u8]) -> usize {
    let newlines = memchr::memchr_iter(b'\n', text).count();
    newlines + usize::from(text.last().is_some_and(|b| *b != b'\n'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn lines(text: &str) -> Vec<&str> {
        lines_inclusive(text).collect()
    }

    #[test]
    fn lines_keep_their_endings_and_a_last_line_without_one() {
        assert_eq!(lines(""), Vec::<&str>::new());
        assert_eq!(lines("\n"), ["\n"]);
        assert_eq!(lines("a\r\nb\n\nc"), ["a\r\n", "b\n", "\n", "c"]);
        assert_eq!(lines("é\nü"), ["é\n", "ü"]);
    }

    proptest! {
        #[test]
        fn the_same_lines_as_split_inclusive(text in "(\\PC|\r|\n){0,80}") {
            let expected: Vec<&str> = text.split_inclusive('\n').collect();
            prop_assert_eq!(lines(&text), expected);
        }

        #[test]
        fn as_many_lines_as_str_lines_counts(text in "(\\PC|\r|\n){0,80}") {
            prop_assert_eq!(line_count(text.as_bytes()), text.lines().count());
        }
    }
}
