//! A unified diff cut to a size and still a valid diff: `ToolResult.diff` is bounded too (a
//! larger bound than the model's output: it is for a UI), and a UI's diff parser must still read
//! it. The cut keeps whole lines; the hunk it falls in keeps a header that counts only the lines
//! kept; a file header left without its hunk goes.

use super::line_split::{line_count, lines_inclusive};

/// `diff` whole when it has at most `max` bytes, else its longest valid prefix within `max`
/// bytes (see the module documentation). `None` as the second value when nothing was cut, else
/// how many lines were left out.
pub fn cut_diff(diff: &str, max: usize) -> (String, Option<usize>) {
    if diff.len() <= max {
        return (diff.to_owned(), None);
    }
    let left_out = |kept: usize| Some(line_count(&diff.as_bytes()[kept..]));
    // The end of the last complete unit (a hunk, or lines before any hunk), and the hunk being read.
    let mut complete = 0;
    let mut hunk: Option<Hunk> = None;
    let mut at = 0;
    for line in lines_inclusive(diff) {
        let end = at + line.len();
        if end > max {
            break;
        }
        match &mut hunk {
            Some(open) => {
                open.take(line);
                if open.is_done() {
                    hunk = None;
                    complete = end;
                }
            }
            None => match Hunk::parse(line, at) {
                Some(opened) => hunk = Some(opened),
                // A file header: kept only with a hunk after it.
                None if line.starts_with("--- ")
                    || line.starts_with("+++ ")
                    || line.starts_with("diff ") => {}
                None => complete = end,
            },
        }
        at = end;
    }
    match hunk {
        Some(open) if open.kept_old + open.kept_new > 2 * open.both => {
            let header = format!(
                "@@ -{},{} +{},{} @@{}",
                open.old_start, open.kept_old, open.new_start, open.kept_new, open.rest
            );
            let cut = format!("{}{header}{}", &diff[..open.at], &diff[open.body..at]);
            (cut, left_out(at))
        }
        _ => (diff[..complete].to_owned(), left_out(complete)),
    }
}

/// A hunk being read: where it starts, what its header says, and the lines kept so far.
struct Hunk {
    /// Byte offsets of its header and of its first line after the header.
    at: usize,
    body: usize,
    old_start: usize,
    new_start: usize,
    /// What the header's `@@ … @@` is followed by (a function name, the newline).
    rest: String,
    old_left: usize,
    new_left: usize,
    kept_old: usize,
    kept_new: usize,
    /// Context lines kept (counted in both `kept_old` and `kept_new`).
    both: usize,
}

impl Hunk {
    /// The hunk `line` (at byte `at`) opens, if it is a hunk header `@@ -a[,b] +c[,d] @@…`.
    fn parse(line: &str, at: usize) -> Option<Self> {
        let body = line.strip_prefix("@@ -")?;
        let (ranges, rest) = body.split_once(" @@")?;
        let (old, new) = ranges.split_once(" +")?;
        let range = |r: &str| -> Option<(usize, usize)> {
            match r.split_once(',') {
                Some((start, len)) => Some((start.parse().ok()?, len.parse().ok()?)),
                None => Some((r.parse().ok()?, 1)),
            }
        };
        let ((old_start, old_len), (new_start, new_len)) = (range(old)?, range(new)?);
        Some(Self {
            at,
            body: at + line.len(),
            old_start,
            new_start,
            rest: rest.to_owned(),
            old_left: old_len,
            new_left: new_len,
            kept_old: 0,
            kept_new: 0,
            both: 0,
        })
    }

    /// Counts one line of the hunk.
    fn take(&mut self, line: &str) {
        match line.as_bytes().first() {
            Some(b'-') => {
                self.old_left = self.old_left.saturating_sub(1);
                self.kept_old += 1;
            }
            Some(b'+') => {
                self.new_left = self.new_left.saturating_sub(1);
                self.kept_new += 1;
            }
            Some(b'\\') => {}
            _ => {
                self.old_left = self.old_left.saturating_sub(1);
                self.new_left = self.new_left.saturating_sub(1);
                self.kept_old += 1;
                self.kept_new += 1;
                self.both += 1;
            }
        }
    }

    fn is_done(&self) -> bool {
        self.old_left == 0 && self.new_left == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::diff::unified_diff;
    use std::time::Duration;

    /// Every hunk header of `diff` counts exactly the lines that follow it.
    fn headers_agree(diff: &str) {
        let mut lines = diff.lines().peekable();
        while let Some(line) = lines.next() {
            let Some(hunk) = Hunk::parse(&format!("{line}\n"), 0) else {
                continue;
            };
            let (mut old, mut new) = (hunk.old_left, hunk.new_left);
            while old > 0 || new > 0 {
                match lines.next().expect("a hunk line").as_bytes().first() {
                    Some(b'-') => old -= 1,
                    Some(b'+') => new -= 1,
                    _ => {
                        old -= 1;
                        new -= 1;
                    }
                }
            }
        }
    }

    #[test]
    fn a_cut_inside_a_hunk_rewrites_its_header() {
        let new: String = (0..5000).map(|i| format!("line {i}\n")).collect();
        let diff = unified_diff("", &new, "/dev/null", "b/a.txt", Duration::from_secs(1)).text;
        let (cut, left) = cut_diff(&diff, 1000);
        assert!(cut.len() <= 1000);
        assert!(
            cut.starts_with("--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1,"),
            "{cut}"
        );
        headers_agree(&cut);
        assert_eq!(left, Some(diff.lines().count() - cut.lines().count()));
        assert_eq!(cut_diff(&diff, diff.len()), (diff.clone(), None));
    }

    #[test]
    fn a_cut_between_files_drops_a_lone_file_header() {
        let one = unified_diff("a\n", "b\n", "a/x", "b/x", Duration::from_secs(1)).text;
        let two = unified_diff("c\n", "d\n", "a/y", "b/y", Duration::from_secs(1)).text;
        let both = format!("{one}{two}");
        // Room for the first file and the second one's header lines, not its hunk.
        let (cut, left) = cut_diff(&both, one.len() + 20);
        assert_eq!(cut, one);
        assert_eq!(left, Some(two.lines().count()));
        headers_agree(&cut);
    }

    #[test]
    fn context_lines_alone_are_not_kept_as_a_hunk() {
        let old: String = (0..50).map(|i| format!("same {i}\n")).collect();
        let new = old.replace("same 40\n", "changed 40\n");
        let diff = unified_diff(&old, &new, "a/f", "b/f", Duration::from_secs(1)).text;
        let header_and_context = diff.find("\n same 38").unwrap() + 1;
        let (cut, _) = cut_diff(&diff, header_and_context + 5);
        assert_eq!(cut, "");
    }
}
