//! The combined diff of a patch (the prompt's `diff` and the result's `diff`), built file by
//! file and never longer than a bound: a patch may delete or rewrite far more than a host can
//! show or a JavaScript string can hold (V8 refuses a string of about 512 MiB), so once the next
//! file's diff does not fit, what fits of it is kept, cut at a line, and a last line says what
//! was left out.

use crate::text::line_split::line_count;

/// A combined diff is never longer than this, whatever the limits say (far below V8's largest
/// string, so that the result always reaches the host).
const CEILING: u64 = 256 * 1024 * 1024;

/// The combined diff being built.
pub(super) struct CombinedDiff {
    text: String,
    max: usize,
    /// What was left out: the file cut midway (if any), and how many lines and files.
    cut_in: Option<String>,
    lines_left_out: usize,
    files_left_out: Vec<String>,
}

impl CombinedDiff {
    /// A diff of at most `max_bytes` (the limit `patchMaxBytes`: no longer than a patch may be),
    /// and never over [`CEILING`].
    pub fn new(max_bytes: u64) -> Self {
        CombinedDiff {
            text: String::new(),
            max: max_bytes.min(CEILING) as usize,
            cut_in: None,
            lines_left_out: 0,
            files_left_out: Vec::new(),
        }
    }

    /// Adds the diff of the file the patch calls `path`.
    pub fn push(&mut self, path: &str, diff: &str) {
        if diff.is_empty() {
            return;
        }
        if self.cut_in.is_none() && self.files_left_out.is_empty() {
            let room = self.max - self.text.len();
            if diff.len() <= room {
                self.text.push_str(diff);
                return;
            }
            let mut cut = room;
            while !diff.is_char_boundary(cut) {
                cut -= 1;
            }
            let cut = diff[..cut].rfind('\n').map_or(0, |i| i + 1);
            self.text.push_str(&diff[..cut]);
            self.lines_left_out += line_count(&diff.as_bytes()[cut..]);
            if cut > 0 {
                self.cut_in = Some(path.to_owned());
            } else {
                self.files_left_out.push(path.to_owned());
            }
            return;
        }
        self.lines_left_out += line_count(diff.as_bytes());
        self.files_left_out.push(path.to_owned());
    }

    /// The diff, with a last line saying what was left out, if anything was.
    pub fn finish(mut self) -> String {
        let shown = 3;
        let mut files: Vec<String> = self
            .cut_in
            .iter()
            .map(|f| format!("the rest of {f}"))
            .collect();
        files.extend(self.files_left_out.iter().take(shown).cloned());
        if files.is_empty() {
            return self.text;
        }
        let more = self.files_left_out.len().saturating_sub(shown);
        let mut named = files.join(", ");
        if more > 0 {
            named.push_str(&format!(" and {more} more files"));
        }
        self.text.push_str(&format!(
            "[diff truncated at {} bytes (patchMaxBytes): {} more lines not shown, of {named}]\n",
            self.max, self.lines_left_out
        ));
        self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, lines: usize) -> String {
        let mut diff = format!("--- a/{name}\n+++ /dev/null\n@@ -1,{lines} +0,0 @@\n");
        for i in 0..lines {
            diff.push_str(&format!("-line {i}\n"));
        }
        diff
    }

    #[test]
    fn diffs_that_fit_are_kept_whole() {
        let mut diff = CombinedDiff::new(1000);
        diff.push("a", &file("a", 3));
        diff.push("b", "");
        diff.push("c", &file("c", 2));
        assert_eq!(diff.finish(), file("a", 3) + &file("c", 2));
    }

    #[test]
    fn the_first_file_that_does_not_fit_is_cut_at_a_line_and_the_rest_named() {
        let (a, b) = (file("a", 3), file("b", 100));
        let mut diff = CombinedDiff::new((a.len() + 60) as u64);
        diff.push("a", &a);
        diff.push("b", &b);
        for name in ["c", "d", "e", "f", "g"] {
            diff.push(name, &file(name, 10));
        }
        let text = diff.finish();
        let (shown, note) = text.trim_end().rsplit_once('\n').unwrap();
        assert!(shown.len() < a.len() + 60, "{shown}");
        assert!(shown.starts_with(&(a.clone() + "--- a/b\n")), "{shown}");
        assert!(b.starts_with(&shown[a.len()..]), "cut at a line of b");
        let b_shown = shown[a.len()..].lines().count();
        let left_out = (b.lines().count() - b_shown) + 5 * 13;
        assert_eq!(
            note,
            format!(
                "[diff truncated at {} bytes (patchMaxBytes): {left_out} more lines not shown, of the rest of b, c, d, e and 2 more files]",
                a.len() + 60
            )
        );
    }

    #[test]
    fn a_file_of_which_no_line_fits_is_left_out_whole() {
        let mut diff = CombinedDiff::new(9);
        diff.push("big", &file("big", 2));
        assert_eq!(
            diff.finish(),
            "[diff truncated at 9 bytes (patchMaxBytes): 5 more lines not shown, of big]\n"
        );
    }

    #[test]
    fn the_ceiling_holds_whatever_the_limit() {
        assert_eq!(CombinedDiff::new(u64::MAX).max as u64, CEILING);
    }
}
