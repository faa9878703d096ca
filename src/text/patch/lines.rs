//! A file's text as lines, each with its own line ending, so that a patch can replace lines
//! without touching the endings of the lines it keeps.

/// One line of a file: its text and the ending that follows it (`"\n"`, `"\r\n"`, or `""` for
/// a last line without a final newline). A `\r` not followed by `\n` is part of the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct FileLine<'t> {
    pub text: &'t str,
    pub ending: &'t str,
}

/// A file split into lines.
pub(super) struct FileLines<'t> {
    pub lines: Vec<FileLine<'t>>,
}

impl<'t> FileLines<'t> {
    pub fn new(text: &'t str) -> Self {
        let lines = crate::text::line_split::lines_inclusive(text)
            .map(|line| {
                if let Some(body) = line.strip_suffix("\r\n") {
                    FileLine {
                        text: body,
                        ending: &line[body.len()..],
                    }
                } else if let Some(body) = line.strip_suffix('\n') {
                    FileLine {
                        text: body,
                        ending: &line[body.len()..],
                    }
                } else {
                    FileLine {
                        text: line,
                        ending: "",
                    }
                }
            })
            .collect();
        FileLines { lines }
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// The lines' texts, without endings.
    pub fn texts(&self) -> Vec<&'t str> {
        self.lines.iter().map(|line| line.text).collect()
    }

    /// True when the file is not empty and its last line has no ending.
    pub fn missing_final_newline(&self) -> bool {
        self.lines.last().is_some_and(|line| line.ending.is_empty())
    }

    /// The ending new lines get: CRLF when more lines end with CRLF than with a bare LF, else LF
    /// (also for a file without any line ending).
    pub fn usual_ending(&self) -> &'static str {
        let crlf = self.lines.iter().filter(|l| l.ending == "\r\n").count();
        let lf = self.lines.iter().filter(|l| l.ending == "\n").count();
        if crlf > lf {
            "\r\n"
        } else {
            "\n"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_keeping_each_ending() {
        let file = FileLines::new("a\r\nb\nc\rd\r\ne");
        let got: Vec<(&str, &str)> = file.lines.iter().map(|l| (l.text, l.ending)).collect();
        assert_eq!(
            got,
            [("a", "\r\n"), ("b", "\n"), ("c\rd", "\r\n"), ("e", "")]
        );
        assert!(file.missing_final_newline());
        assert_eq!(file.usual_ending(), "\r\n");
    }

    #[test]
    fn empty_and_lf_files() {
        let empty = FileLines::new("");
        assert_eq!(empty.len(), 0);
        assert!(!empty.missing_final_newline());
        assert_eq!(empty.usual_ending(), "\n");
        let lf = FileLines::new("x\ny\n");
        assert_eq!(lf.texts(), ["x", "y"]);
        assert!(!lf.missing_final_newline());
        // A tie, or a file without any ending, takes LF.
        assert_eq!(FileLines::new("a\r\nb\n").usual_ending(), "\n");
        assert_eq!(FileLines::new("one line").usual_ending(), "\n");
    }
}
