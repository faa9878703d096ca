//! Every output is bounded in bytes (../../docs/tools.md#bounded-outputs): cut near the output limit (`readMaxBytes`) at a
//! line boundary, with a last line saying what was left out and how to see it. One helper for
//! every tool; each gives its own note, since only it knows how to see the rest.

/// Room kept below the limit for the note that ends a cut output.
pub const NOTE_ROOM: usize = 512;

/// What a cut left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeftOut {
    /// Lines (a line cut in its middle counts as one).
    pub lines: usize,
    pub bytes: usize,
}

/// `text` whole when it has at most `max` bytes; else its first lines and, on a line of its own,
/// `note(left out)`, the two together within `max` bytes (unless the note itself is longer than
/// [`NOTE_ROOM`]). A single line longer than that is cut inside, at a character boundary.
pub fn bounded(text: &str, max: usize, note: impl FnOnce(LeftOut) -> String) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let cut = cut_point(text, max.saturating_sub(NOTE_ROOM));
    let kept = text[..cut].trim_end_matches('\n');
    let rest = &text[cut..];
    let left_out = LeftOut {
        lines: super::line_split::line_count(rest.as_bytes()).max(1),
        bytes: rest.len(),
    };
    if kept.is_empty() {
        note(left_out)
    } else {
        format!("{kept}\n{}", note(left_out))
    }
}

/// Where to cut `text` to keep at most `budget` bytes: after the last whole line that fits, or
/// inside the first line (at a character boundary) when not even that one does.
pub fn cut_point(text: &str, budget: usize) -> usize {
    if text.len() <= budget {
        return text.len();
    }
    let mut at = budget;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    match text[..at].rfind('\n') {
        Some(newline) => newline + 1,
        None => at,
    }
}

/// How many of `lines`, each followed by a newline, fit in `budget` bytes (at least one, so a
/// listing whose first line is huge still shows it, cut later by [`bounded`]).
pub fn lines_within<S: AsRef<str>>(lines: &[S], budget: usize) -> usize {
    let mut used = 0;
    for (n, line) in lines.iter().enumerate() {
        used += line.as_ref().len() + 1;
        if used > budget && n > 0 {
            return n;
        }
    }
    lines.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_text_is_whole_and_a_long_one_is_cut_at_a_line_with_a_note() {
        assert_eq!(bounded("a\nb\n", 10, |_| unreachable!()), "a\nb\n");
        let text: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        let out = bounded(&text, 2000, |left| {
            format!("[{} more lines, {} bytes]", left.lines, left.bytes)
        });
        assert!(out.len() <= 2000, "{}", out.len());
        let (kept, note) = out.rsplit_once('\n').unwrap();
        assert!(kept.ends_with(|c: char| c.is_ascii_digit()), "{kept}");
        let shown = kept.lines().count();
        assert_eq!(
            note,
            format!(
                "[{} more lines, {} bytes]",
                1000 - shown,
                text.len() - kept.len() - 1
            )
        );
    }

    #[test]
    fn one_huge_line_is_cut_inside_at_a_character_boundary() {
        let text = "é".repeat(5000);
        let out = bounded(&text, 1000, |left| format!("[{} bytes more]", left.bytes));
        assert!(out.len() <= 1000);
        let (kept, note) = out.split_once('\n').unwrap();
        assert!(kept.chars().all(|c| c == 'é'));
        assert_eq!(note, format!("[{} bytes more]", text.len() - kept.len()));
    }

    #[test]
    fn lines_within_keeps_at_least_one() {
        let lines = ["aaaa", "bbbb", "cccc"];
        assert_eq!(lines_within(&lines, 10), 2);
        assert_eq!(lines_within(&lines, 100), 3);
        assert_eq!(lines_within(&["x".repeat(50)], 10), 1);
    }
}
