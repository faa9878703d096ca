//! The parser's front: splitting the input into numbered lines, dropping a wrapper (heredoc,
//! Markdown fence), telling the format by the first non-blank line, and the checks that hold
//! for both formats (not empty, no path twice).

use std::collections::HashMap;

use super::error::PatchError;
use super::model::{ChunkLine, Patch, PatchChange, PatchFormat};
use super::parse_line::{excerpt, Line};
use super::{parse_codex, parse_unified};

/// Parses a patch in Codex's format or as a unified diff (../../../docs/tools.md#apply_patch).
pub fn parse(input: &str) -> Result<Patch, PatchError> {
    let lines = split_lines(input);
    let lines = unwrap(&lines);
    let Some(first) = lines.iter().find(|line| !line.is_blank()) else {
        return Err(PatchError::Empty);
    };
    let (format, files) = if parse_codex::begins(first.text) {
        (PatchFormat::Codex, parse_codex::parse(lines)?)
    } else if parse_unified::begins(first.text) {
        (PatchFormat::Unified, parse_unified::parse(lines)?)
    } else {
        return Err(PatchError::syntax(
            first.no,
            format!(
                "a patch starts with `*** Begin Patch` (Codex format) or with `diff --git` or `--- a/<path>` (unified diff), not `{}`",
                excerpt(first.text)
            ),
        ));
    };
    if files.is_empty() {
        return Err(PatchError::Empty);
    }
    let mut patch = Patch { format, files };
    check_paths_named_once(&patch)?;
    drop_leading_boms(&mut patch);
    Ok(patch)
}

/// A diff of a file with a UTF-8 BOM may show it at the start of the first line. The file's
/// text is matched without its BOM (and the BOM is kept apart, as `TextFile` does), so an
/// update's lines and anchors lose a leading U+FEFF too.
fn drop_leading_boms(patch: &mut Patch) {
    for file in &mut patch.files {
        let PatchChange::Update { chunks, .. } = &mut file.change else {
            continue;
        };
        for chunk in chunks {
            for line in &mut chunk.lines {
                let (ChunkLine::Context(text) | ChunkLine::Remove(text) | ChunkLine::Add(text)) =
                    line;
                if let Some(rest) = text.strip_prefix('\u{FEFF}') {
                    *text = rest.to_owned();
                }
            }
        }
    }
}

/// The input's lines. A patch sent with CRLF line endings (every line ends `\r\n`) loses them; in
/// any other patch a `\r` before a line's `\n` belongs to the content and is noted.
fn split_lines(input: &str) -> Vec<Line<'_>> {
    let ended: Vec<&str> = input.split('\n').collect();
    let transported = ended.len() > 1
        && ended[..ended.len() - 1]
            .iter()
            .all(|line| line.ends_with('\r'));
    ended
        .into_iter()
        .enumerate()
        .map(|(i, text)| {
            let stripped = text.strip_suffix('\r');
            Line {
                no: i + 1,
                text: stripped.unwrap_or(text),
                content_cr: stripped.is_some() && !transported,
            }
        })
        .collect()
}

/// The lines inside a heredoc (`<<'EOF'` … `EOF`, optionally after a command such as
/// `apply_patch`) or a Markdown fence (```` ```diff ```` … ```` ``` ````), or all of them.
fn unwrap<'l, 'a>(lines: &'l [Line<'a>]) -> &'l [Line<'a>] {
    let Some(first) = lines.iter().position(|line| !line.is_blank()) else {
        return lines;
    };
    let last = lines
        .iter()
        .rposition(|line| !line.is_blank())
        .expect("a non-blank line exists");
    let opener = lines[first].text.trim();
    let closer = if opener.starts_with("```") {
        Some("```".to_owned())
    } else {
        heredoc_delimiter(opener)
    };
    let Some(closer) = closer else {
        return lines;
    };
    if last > first && lines[last].text.trim() == closer {
        &lines[first + 1..last]
    } else {
        &lines[first + 1..]
    }
}

/// The delimiter word of a heredoc opener such as `<<'EOF'`, `<<"EOF"`, `<<-EOF` or
/// `apply_patch <<'PATCH'`.
fn heredoc_delimiter(line: &str) -> Option<String> {
    let (command, spec) = line.split_once("<<")?;
    if command.contains("***") || command.starts_with("---") || command.starts_with("diff") {
        return None;
    }
    let spec = spec.trim().trim_start_matches('-').trim();
    let word = spec.trim_matches(|c| c == '\'' || c == '"');
    let valid = !word.is_empty()
        && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && spec.len() - word.len() <= 2;
    valid.then(|| word.to_owned())
}

/// ../../../docs/tools.md#apply_patch: one path named twice in a patch is an error. Paths are compared as written, after
/// dropping `.` components and repeated slashes; the tool compares resolved paths too.
fn check_paths_named_once(patch: &Patch) -> Result<(), PatchError> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    for file in &patch.files {
        let paths: Vec<&str> = match &file.change {
            PatchChange::Update {
                path,
                move_to: Some(to),
                ..
            } => vec![path, to],
            _ => vec![file.path()],
        };
        for path in paths {
            if let Some(&first_line) = seen.get(&lexical_key(path)) {
                return Err(PatchError::DuplicatePath {
                    path: path.to_owned(),
                    line: file.line,
                    first_line,
                });
            }
            seen.insert(lexical_key(path), file.line);
        }
    }
    Ok(())
}

fn lexical_key(path: &str) -> String {
    let absolute = path.starts_with('/');
    let parts: Vec<&str> = path
        .split('/')
        .filter(|part| !part.is_empty() && *part != ".")
        .collect();
    let joined = parts.join("/");
    if absolute {
        format!("/{joined}")
    } else {
        joined
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_numbered_and_lose_cr() {
        let lines = split_lines("a\r\nb\n\nc");
        let got: Vec<(usize, &str)> = lines.iter().map(|l| (l.no, l.text)).collect();
        assert_eq!(got, [(1, "a"), (2, "b"), (3, ""), (4, "c")]);
    }

    /// `git diff` of a CRLF file: the headers end `\n`, the content lines `\r\n`. An added file
    /// keeps its CRLF; the same patch sent with CRLF line endings throughout does not.
    #[test]
    fn an_added_file_keeps_the_cr_of_its_content_unless_the_whole_patch_is_crlf() {
        let diff = "diff --git a/w.txt b/w.txt\nnew file mode 100644\n--- /dev/null\n+++ b/w.txt\n@@ -0,0 +1,2 @@\n+one\r\n+two\r\n";
        let added = |input: &str| match &parse(input).unwrap().files[0].change {
            PatchChange::Add { text, .. } => text.clone(),
            other => panic!("not an add: {other:?}"),
        };
        assert_eq!(added(diff), "one\r\ntwo\r\n");
        assert_eq!(
            added(&diff.replace('\n', "\r\n").replace("\r\r", "\r")),
            "one\ntwo\n"
        );
        let codex = "*** Begin Patch\n*** Add File: w.txt\n+one\r\n+two\r\n*** End Patch\n";
        assert_eq!(added(codex), "one\r\ntwo\r\n");
        // An update's added lines take the file's endings: no content `\r` is kept for them.
        let update = "--- a/w.txt\n+++ b/w.txt\n@@ -1 +1 @@\n-one\r\n+ONE\r\n";
        match &parse(update).unwrap().files[0].change {
            PatchChange::Update { chunks, .. } => {
                assert!(chunks[0].lines.contains(&ChunkLine::Add("ONE".into())))
            }
            other => panic!("not an update: {other:?}"),
        }
    }

    #[test]
    fn heredoc_openers() {
        assert_eq!(heredoc_delimiter("<<'EOF'").as_deref(), Some("EOF"));
        assert_eq!(heredoc_delimiter("<<EOF").as_deref(), Some("EOF"));
        assert_eq!(heredoc_delimiter("<<\"EOF\"").as_deref(), Some("EOF"));
        assert_eq!(
            heredoc_delimiter("apply_patch <<'PATCH'").as_deref(),
            Some("PATCH")
        );
        assert_eq!(heredoc_delimiter("cat <<-END").as_deref(), Some("END"));
        assert_eq!(heredoc_delimiter("*** Begin Patch"), None);
        assert_eq!(heredoc_delimiter("<<'two words'"), None);
    }

    #[test]
    fn unwrap_drops_heredoc_and_fence() {
        let input = "\napply_patch <<'EOF'\n*** Begin Patch\n*** End Patch\nEOF\n";
        let lines = split_lines(input);
        let inner: Vec<usize> = unwrap(&lines).iter().map(|l| l.no).collect();
        assert_eq!(inner, [3, 4]);
        let input = "```diff\n--- a/x\n+++ b/x\n```";
        let lines = split_lines(input);
        let inner: Vec<&str> = unwrap(&lines).iter().map(|l| l.text).collect();
        assert_eq!(inner, ["--- a/x", "+++ b/x"]);
        // Without a closing line, everything after the opener.
        let lines = split_lines("<<EOF\n*** Begin Patch\n*** End Patch");
        assert_eq!(unwrap(&lines).len(), 2);
    }

    #[test]
    fn lexical_keys() {
        assert_eq!(lexical_key("./src//a.rs"), "src/a.rs");
        assert_eq!(lexical_key("/abs/./x"), "/abs/x");
        assert_ne!(lexical_key("a/../b"), lexical_key("b"));
    }
}
