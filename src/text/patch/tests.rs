//! Tests of the engine as the tool uses it (parse, then apply per file), one group per
//! statement of apply_patch's contract (../../../docs/tools.md#apply_patch) that the engine owns, then properties and real `git diff` output.

use super::*;
use crate::cancel::CancelToken;
use crate::error::{ErrorCode, ToolError};

mod properties;
mod real_diffs;
mod reference;

fn codex(body: &str) -> String {
    format!("*** Begin Patch\n{body}*** End Patch\n")
}

/// The chunks of the patch's only file, which must be an update.
fn only_update(patch: &Patch) -> (&str, Option<&str>, &[Chunk]) {
    assert_eq!(patch.files.len(), 1, "{patch:#?}");
    match &patch.files[0].change {
        PatchChange::Update {
            path,
            move_to,
            chunks,
        } => (path, move_to.as_deref(), chunks),
        other => panic!("not an update: {other:?}"),
    }
}

/// Parses `patch` (one updated file) and applies it to `text`.
fn patched(text: &str, patch: &str) -> Result<Applied, PatchError> {
    let patch = parse(patch)?;
    let (path, _, chunks) = only_update(&patch);
    apply(path, text, chunks, &CancelToken::new())
}

fn patched_text(text: &str, patch: &str) -> String {
    match patched(text, patch) {
        Ok(applied) => applied.text,
        Err(e) => panic!("{}", e.message()),
    }
}

fn syntax_line(result: Result<Patch, PatchError>) -> (usize, String) {
    match result {
        Err(PatchError::Syntax { line, message }) => (line, message),
        other => panic!("expected a syntax error, got {other:?}"),
    }
}

fn context(text: &str) -> ChunkLine {
    ChunkLine::Context(text.to_owned())
}
fn remove(text: &str) -> ChunkLine {
    ChunkLine::Remove(text.to_owned())
}
fn add(text: &str) -> ChunkLine {
    ChunkLine::Add(text.to_owned())
}

// --- Codex format -------------------------------------------------------------------------

#[test]
fn codex_add_delete_update_and_move() {
    let patch = parse(&codex(
        "*** Add File: docs/hello.md\n+# Hello\n+\n+world\n\
         *** Delete File: old.txt\n\
         *** Update File: src/app.py\n\
         *** Move to: src/main.py\n\
         @@ def greet():\n\
         -    print(\"Hi\")\n\
         +    print(\"Hello, world!\")\n",
    ))
    .unwrap();
    assert_eq!(patch.format, PatchFormat::Codex);
    assert_eq!(
        patch.files,
        [
            FilePatch {
                line: 2,
                change: PatchChange::Add {
                    path: "docs/hello.md".into(),
                    text: "# Hello\n\nworld\n".into()
                }
            },
            FilePatch {
                line: 6,
                change: PatchChange::Delete {
                    path: "old.txt".into()
                }
            },
            FilePatch {
                line: 7,
                change: PatchChange::Update {
                    path: "src/app.py".into(),
                    move_to: Some("src/main.py".into()),
                    chunks: vec![Chunk {
                        line: 9,
                        anchors: vec!["def greet():".into()],
                        lines: vec![
                            remove("    print(\"Hi\")"),
                            add("    print(\"Hello, world!\")")
                        ],
                        ..Chunk::default()
                    }]
                }
            },
        ]
    );
}

#[test]
fn codex_spaces_around_markers_and_any_case() {
    let patch = parse(
        " *** Begin Patch \n  *** Update File:  foo.txt \n@@\n-old\n+new\n***  end of file\n*** end patch  \n",
    )
    .unwrap();
    let (path, _, chunks) = only_update(&patch);
    assert_eq!(path, "foo.txt");
    assert!(chunks[0].end_of_file);
    // The last line may be indented too (a model's padding).
    let patch =
        parse("*** Begin Patch\n*** Update File: f\n@@\n-one\n+two\n *** End Patch\n").unwrap();
    assert_eq!(only_update(&patch).2[0].lines, [remove("one"), add("two")]);
}

#[test]
fn codex_heredoc_wrappers() {
    for input in [
        "<<'EOF'\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nEOF\n",
        "<<EOF\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nEOF",
        "apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nEOF\n",
        "apply_patch <<\"PATCH\"\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nPATCH\n",
        "\n\n*** Begin Patch\n*** Delete File: a\n*** End Patch\n\n",
    ] {
        let patch = parse(input).unwrap_or_else(|e| panic!("{input:?}: {}", e.message()));
        assert_eq!(patch.files[0].path(), "a", "{input:?}");
    }
    // Line numbers in errors count the wrapper's lines.
    let (line, _) = syntax_line(parse("<<'EOF'\n*** Begin Patch\nbogus\n*** End Patch\nEOF"));
    assert_eq!(line, 3);
}

#[test]
fn codex_first_chunk_needs_no_at_at() {
    let patch = parse(&codex("*** Update File: f.py\n import foo\n+bar\n")).unwrap();
    let chunks = only_update(&patch).2;
    assert_eq!(chunks[0].lines, [context("import foo"), add("bar")]);
    assert!(chunks[0].anchors.is_empty());
}

#[test]
fn codex_bare_empty_line_is_an_empty_context_line() {
    let patch = parse(&codex(
        "*** Update File: f\n@@\n a\n\n-b\n+c\n\n@@\n d\n\n\n*** Delete File: g\n",
    ))
    .unwrap();
    let PatchChange::Update { chunks, .. } = &patch.files[0].change else {
        panic!()
    };
    assert_eq!(
        chunks[0].lines,
        [context("a"), context(""), remove("b"), add("c")],
        "a blank line before the next @@ only separates chunks"
    );
    assert_eq!(chunks[1].lines, [context("d")]);
    assert_eq!(
        patched_text("a\n\nb\nz\n", &codex("*** Update File: f\n a\n\n-b\n+c\n")),
        "a\n\nc\nz\n"
    );
}

#[test]
fn codex_nested_anchors_and_hint_headers() {
    let patch = parse(&codex(
        "*** Update File: f\n@@ class Base\n@@   def run(self):\n-        pass\n+        return 1\n@@ -40,3 +40,3 @@\n-x\n+y\n",
    ))
    .unwrap();
    let chunks = only_update(&patch).2;
    assert_eq!(chunks[0].anchors, ["class Base", "def run(self):"]);
    assert_eq!(
        chunks[1].hint,
        Some(Hint {
            old_start: 40,
            old_len: 3,
            new_start: 40,
            new_len: 3
        })
    );
}

#[test]
fn codex_added_file_tolerates_empty_lines_without_plus() {
    let patch = parse(&codex(
        "*** Add File: a.txt\n+one\n\n+three\n\n*** Add File: b.txt\n",
    ))
    .unwrap();
    assert_eq!(
        patch.files[0].change,
        PatchChange::Add {
            path: "a.txt".into(),
            text: "one\n\nthree\n".into()
        }
    );
    assert_eq!(
        patch.files[1].change,
        PatchChange::Add {
            path: "b.txt".into(),
            text: String::new()
        }
    );
}

#[test]
fn codex_pure_move_is_allowed() {
    let patch = parse(&codex("*** Update File: a.rs\n*** Move to: b.rs\n")).unwrap();
    assert_eq!(only_update(&patch), ("a.rs", Some("b.rs"), &[][..]));
}

#[test]
fn codex_syntax_errors_name_the_line_and_the_fix() {
    let (line, message) = syntax_line(parse("*** Begin Patch\n*** Update File: f\n@@\n-a\n+b\n"));
    assert_eq!(line, 5);
    assert!(
        message.contains("does not end with `*** End Patch`"),
        "{message}"
    );
    assert!(message.contains("cut short"), "{message}");

    let (line, message) = syntax_line(parse(&codex("*** Update File: f\n@@\n-a\nb\n")));
    assert_eq!(line, 5);
    assert!(
        message.starts_with("`b` is not a chunk line of f: each line starts with ` `"),
        "{message}"
    );

    // An unprefixed line starting with a multi-byte character is an error too, not a crash.
    let (line, message) = syntax_line(parse(&codex("*** Update File: f\n@@\n-a\n“b”\n")));
    assert_eq!(line, 5);
    assert!(
        message.starts_with("`“b”` is not a chunk line"),
        "{message}"
    );

    let (line, message) = syntax_line(parse(&codex("*** Update File: f\n")));
    assert_eq!(line, 2);
    assert!(message.contains("has no chunks"), "{message}");

    let (line, message) = syntax_line(parse(&codex(
        "*** Update File: f\n@@ fn x\n*** Delete File: g\n",
    )));
    assert_eq!(line, 3);
    assert!(message.contains("has no lines"), "{message}");

    let (line, message) = syntax_line(parse(&codex("*** Frobnicate File: f\n")));
    assert_eq!(line, 2);
    assert!(
        message.contains("expected `*** Add File: <path>`"),
        "{message}"
    );

    let (line, message) = syntax_line(parse(&codex("*** Add File: a\n+x\ny\n")));
    assert_eq!(line, 4);
    assert!(message.contains("starts with `+`"), "{message}");

    let (line, message) = syntax_line(parse(&codex("*** Add File:\n+x\n")));
    assert_eq!(line, 2);
    assert!(message.contains("needs a path"), "{message}");

    let (line, message) = syntax_line(parse(&codex("*** Delete File: a\n*** Move to: b\n")));
    assert_eq!(line, 3);
    assert!(
        message.contains("right after the `*** Update File: <path>`"),
        "{message}"
    );

    let (line, message) = syntax_line(parse(
        "*** Begin Patch\n*** End Patch\n*** Delete File: a\n*** End Patch",
    ));
    assert_eq!(line, 2);
    assert!(message.contains("before the end of the input"), "{message}");

    let err = parse(&codex("*** Update File: f\n@@\n-a\nb\n")).unwrap_err();
    assert!(
        err.message()
            .starts_with("patch line 5: `b` is not a chunk line"),
        "{}",
        err.message()
    );
    assert_eq!(ToolError::from(err).code, ErrorCode::InvalidArguments);
}

#[test]
fn the_first_line_tells_the_format() {
    let (line, message) = syntax_line(parse("\n\nplease apply this\n*** Begin Patch"));
    assert_eq!(line, 3);
    assert!(
        message.contains("`*** Begin Patch`") && message.contains("`--- a/<path>`"),
        "{message}"
    );
    assert_eq!(
        parse("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n")
            .unwrap()
            .format,
        PatchFormat::Unified
    );
}

#[test]
fn an_empty_patch_is_an_error() {
    for input in [
        "",
        "  \n\n",
        "*** Begin Patch\n*** End Patch",
        "<<'EOF'\nEOF",
    ] {
        assert_eq!(parse(input), Err(PatchError::Empty), "{input:?}");
    }
    let err = ToolError::from(PatchError::Empty);
    assert_eq!(err.code, ErrorCode::InvalidArguments);
    assert!(err.message.starts_with("The patch changes no files."));
}

#[test]
fn a_path_named_twice_is_an_error() {
    let err = parse(&codex(
        "*** Add File: a.txt\n+x\n*** Update File: ./a.txt\n@@\n-x\n+y\n",
    ))
    .unwrap_err();
    assert_eq!(
        err,
        PatchError::DuplicatePath {
            path: "./a.txt".into(),
            line: 4,
            first_line: 2
        }
    );
    assert_eq!(
        err.message(),
        "patch line 4: ./a.txt is already named at patch line 2; put all the changes to one file in one section"
    );
    assert_eq!(ToolError::from(err).code, ErrorCode::InvalidArguments);
    // A move's destination counts.
    let err = parse(&codex(
        "*** Update File: a\n*** Move to: b\n*** Delete File: b\n",
    ))
    .unwrap_err();
    assert!(
        matches!(
            err,
            PatchError::DuplicatePath {
                line: 4,
                first_line: 2,
                ..
            }
        ),
        "{err:?}"
    );
    let err =
        parse("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n--- a/x\n+++ b/x\n@@ -3 +3 @@\n-c\n+d\n")
            .unwrap_err();
    assert!(
        matches!(
            err,
            PatchError::DuplicatePath {
                line: 6,
                first_line: 1,
                ..
            }
        ),
        "{err:?}"
    );
}

// --- Unified diffs ------------------------------------------------------------------------

const GIT_DIFF: &str = "\
diff --git a/src/lib.rs b/src/lib.rs
index 83db48f..bf269f4 100644
--- a/src/lib.rs
+++ b/src/lib.rs
@@ -1,3 +1,4 @@ mod a;
 mod a;
+mod b;
 mod c;
 mod d;
diff --git a/new.txt b/new.txt
new file mode 100644
index 0000000..3b18e51
--- /dev/null
+++ b/new.txt
@@ -0,0 +1,2 @@
+hello
+world
\\ No newline at end of file
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
index 3b18e51..0000000
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
diff --git a/old name.rs b/new name.rs
similarity index 90%
rename from old name.rs
rename to new name.rs
index 1111111..2222222 100644
--- a/old name.rs
+++ b/new name.rs
@@ -10,2 +10,2 @@
-x
+y
 z
diff --git a/script.sh b/script.sh
old mode 100644
new mode 100755
diff --git a/moved.txt b/elsewhere/moved.txt
similarity index 100%
rename from moved.txt
rename to elsewhere/moved.txt
";

#[test]
fn unified_git_diff_with_every_kind_of_section() {
    let patch = parse(GIT_DIFF).unwrap();
    assert_eq!(patch.format, PatchFormat::Unified);
    let changes: Vec<&PatchChange> = patch.files.iter().map(|f| &f.change).collect();
    assert_eq!(
        changes.len(),
        5,
        "the mode-only section is dropped: {changes:#?}"
    );
    let PatchChange::Update {
        path,
        move_to: None,
        chunks,
    } = changes[0]
    else {
        panic!("{:?}", changes[0])
    };
    assert_eq!(path, "src/lib.rs");
    assert_eq!(
        chunks[0],
        Chunk {
            line: 5,
            hint: Some(Hint {
                old_start: 1,
                old_len: 3,
                new_start: 1,
                new_len: 4
            }),
            lines: vec![
                context("mod a;"),
                add("mod b;"),
                context("mod c;"),
                context("mod d;")
            ],
            ..Chunk::default()
        }
    );
    assert_eq!(
        changes[1],
        &PatchChange::Add {
            path: "new.txt".into(),
            text: "hello\nworld".into()
        }
    );
    assert_eq!(
        changes[2],
        &PatchChange::Delete {
            path: "gone.txt".into()
        }
    );
    let PatchChange::Update {
        path,
        move_to,
        chunks,
    } = changes[3]
    else {
        panic!("{:?}", changes[3])
    };
    assert_eq!(
        (path.as_str(), move_to.as_deref()),
        ("old name.rs", Some("new name.rs"))
    );
    assert_eq!(chunks[0].lines, [remove("x"), add("y"), context("z")]);
    assert_eq!(
        changes[4],
        &PatchChange::Update {
            path: "moved.txt".into(),
            move_to: Some("elsewhere/moved.txt".into()),
            chunks: vec![]
        }
    );
    assert_eq!(patch.files[4].line, 40);
}

#[test]
fn unified_diff_u_with_timestamps_and_no_prefixes() {
    let patch = parse(
        "--- config.ini\t2024-05-01 10:00:00.000000000 +0200\n\
         +++ config.ini\t2024-05-01 10:05:00.000000000 +0200\n\
         @@ -2 +2 @@\n-port=80\n+port=8080\n",
    )
    .unwrap();
    let (path, _, chunks) = only_update(&patch);
    assert_eq!(path, "config.ini");
    assert_eq!(chunks[0].lines, [remove("port=80"), add("port=8080")]);
}

#[test]
fn unified_counts_tell_a_removed_dashes_line_from_a_header() {
    // Removing the SQL comment `-- a` and adding `++ b` look like headers; the counts say not.
    let patch = parse(
        "--- a/q.sql\n+++ b/q.sql\n@@ -1,3 +1,3 @@\n select 1;\n--- a\n+++ b\n select 2;\n--- a/r.sql\n+++ b/r.sql\n@@ -1 +1 @@\n-x\n+y\n",
    )
    .unwrap();
    assert_eq!(patch.files.len(), 2);
    let PatchChange::Update { chunks, .. } = &patch.files[0].change else {
        panic!()
    };
    assert_eq!(
        chunks[0].lines,
        [
            context("select 1;"),
            remove("-- a"),
            add("++ b"),
            context("select 2;")
        ]
    );
    assert_eq!(patch.files[1].path(), "r.sql");
}

#[test]
fn unified_miscounted_hunks_are_read_by_their_lines() {
    // Counts too small: the hunk goes on while its lines are hunk lines.
    let patch = parse("--- a/f\n+++ b/f\n@@ -1,1 +1,1 @@\n a\n-b\n+c\n d\n").unwrap();
    assert_eq!(
        only_update(&patch).2[0].lines,
        [context("a"), remove("b"), add("c"), context("d")]
    );
    // Counts too large: the hunk ends where the next file's headers start.
    let patch = parse(
        "--- a/f\n+++ b/f\n@@ -1,9 +1,9 @@\n a\n-b\n+c\n--- a/g\n+++ b/g\n@@ -1 +1 @@\n-x\n+y\n",
    )
    .unwrap();
    assert_eq!(patch.files.len(), 2);
    assert_eq!(patch.files[1].path(), "g");
}

#[test]
fn unified_bare_empty_line_and_bare_at_at() {
    let patch =
        parse("--- a/f\n+++ b/f\n@@\n a\n\n-b\n+c\n\n\n--- a/g\n+++ b/g\n@@ -1 +1 @@\n-x\n+y\n")
            .unwrap();
    let PatchChange::Update { chunks, .. } = &patch.files[0].change else {
        panic!()
    };
    assert_eq!(chunks[0].hint, None);
    assert_eq!(
        chunks[0].lines,
        [context("a"), context(""), remove("b"), add("c")]
    );
}

#[test]
fn unified_no_newline_markers() {
    let patch =
        parse("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n")
            .unwrap();
    let chunk = &only_update(&patch).2[0];
    assert!(chunk.old_missing_newline && !chunk.new_missing_newline);
    assert_eq!(
        patched_text(
            "a\nb",
            "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"
        ),
        "a\nb\n"
    );
    assert_eq!(
        patched_text(
            "a\nb\n",
            "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n"
        ),
        "a\nc"
    );
}

#[test]
fn unified_syntax_errors() {
    let (line, message) = syntax_line(parse("--- a/f\n+++ b/f\n@@ -1,x +1 @@\n-a\n"));
    assert_eq!(line, 3);
    assert!(message.starts_with("malformed hunk header"), "{message}");
    let (line, message) = syntax_line(parse("--- a/f\nnot plus\n"));
    assert_eq!(line, 1);
    assert!(message.contains("followed by a `+++ <path>`"), "{message}");
    let (line, message) = syntax_line(parse(
        "diff --git a/i.png b/i.png\nindex 1..2 100644\nBinary files a/i.png and b/i.png differ\n",
    ));
    assert_eq!(line, 3);
    assert!(
        message.contains("binary patches are not supported"),
        "{message}"
    );
    let (line, message) = syntax_line(parse("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\nsome prose\n"));
    assert_eq!(line, 6);
    assert!(message.contains("found `some prose`"), "{message}");
    let (line, message) = syntax_line(parse("--- /dev/null\n+++ b/n\n@@ -0,0 +1,2 @@\n+a\n b\n"));
    assert_eq!(line, 3);
    assert!(message.contains("only `+` lines"), "{message}");
    assert_eq!(
        parse("diff --git a/s b/s\nold mode 100644\nnew mode 100755\n"),
        Err(PatchError::Empty)
    );
}

// --- Finding a chunk ----------------------------------------------------------------------

#[test]
fn minus_lines_replaced_by_plus_lines_context_kept_as_the_file_has_it() {
    let text = "fn main() {   \n    let x = 1;\t\n    run(x);\n}\n";
    let applied = patched(text, &codex("*** Update File: m.rs\n@@\n fn main() {\n-    let x = 1;\n+    let x = 2;\n     run(x);\n")).unwrap();
    assert_eq!(
        applied.text,
        "fn main() {   \n    let x = 2;\n    run(x);\n}\n"
    );
    assert_eq!(
        applied.fuzzy,
        [FuzzyMatch {
            chunk: 1,
            line: 1,
            level: MatchLevel::TrailingWhitespace
        }]
    );
    assert_eq!(
        applied.fuzzy[0].describe("m.rs"),
        "m.rs: chunk 1 matched at line 1 ignoring trailing whitespace"
    );
}

#[test]
fn the_ladder_is_tried_in_order_and_each_level_is_reported() {
    let text = "a\n  b  \nc “quoted” — dash\nd\n";
    let cases = [
        (
            " a\n-  b  \n+B\n",
            MatchLevel::Exact,
            "a\nB\nc “quoted” — dash\nd\n",
        ),
        (
            " a\n-  b\n+B\n",
            MatchLevel::TrailingWhitespace,
            "a\nB\nc “quoted” — dash\nd\n",
        ),
        (
            " a\n-b\n+B\n",
            MatchLevel::Whitespace,
            "a\nB\nc “quoted” — dash\nd\n",
        ),
        (
            "-c \"quoted\" - dash\n+C\n d\n",
            MatchLevel::Punctuation,
            "a\n  b  \nC\nd\n",
        ),
    ];
    for (chunk, level, expected) in cases {
        let applied = patched(text, &codex(&format!("*** Update File: f\n@@\n{chunk}"))).unwrap();
        assert_eq!(applied.text, expected, "{chunk:?}");
        let reported: Vec<MatchLevel> = applied.fuzzy.iter().map(|m| m.level).collect();
        let expected_levels = if level == MatchLevel::Exact {
            vec![]
        } else {
            vec![level]
        };
        assert_eq!(reported, expected_levels, "{chunk:?}");
    }
}

#[test]
fn a_codex_chunk_is_sought_after_the_previous_one() {
    let text = "x = 1\nsep\nx = 1\nend\n";
    let patch = codex("*** Update File: f\n@@\n-x = 1\n+x = 2\n sep\n@@\n-x = 1\n+x = 3\n");
    assert_eq!(patched_text(text, &patch), "x = 2\nsep\nx = 3\nend\n");
}

#[test]
fn ambiguous_lines_are_multiple_matches_naming_the_candidates() {
    let text = "def a():\n    return 0\n\ndef b():\n    return 0\n";
    let err = patched(
        text,
        &codex("*** Update File: m.py\n@@\n-    return 0\n+    return 1\n"),
    )
    .unwrap_err();
    assert_eq!(
        err,
        PatchError::MultipleMatches {
            path: "m.py".into(),
            chunk: 1,
            lines: vec![2, 5],
            unified: false
        }
    );
    assert_eq!(
        err.message(),
        "m.py: chunk 1: the lines to replace occur 2 times (at lines 2, 5); start the chunk with an `@@` line naming the enclosing function or class (e.g. `@@ def handler(request):`), or add context lines until they occur once"
    );
    assert_eq!(ToolError::from(err).code, ErrorCode::MultipleMatches);
    // The anchor the message suggests disambiguates.
    let patch = codex("*** Update File: m.py\n@@ def b():\n-    return 0\n+    return 1\n");
    assert_eq!(
        patched_text(text, &patch),
        "def a():\n    return 0\n\ndef b():\n    return 1\n"
    );
}

#[test]
fn ambiguity_is_decided_at_the_first_level_that_finds() {
    // Exact finds one place, so the trailing-space twin does not make it ambiguous.
    let text = "k = 1\nk = 1 \n";
    assert_eq!(
        patched_text(text, &codex("*** Update File: f\n-k = 1\n+k = 2\n")),
        "k = 2\nk = 1 \n"
    );
    // Exact finds none, trailing whitespace finds two: ambiguous.
    let text = "k = 1 \nk = 1\t\n";
    let err = patched(text, &codex("*** Update File: f\n-k = 1\n+k = 2\n")).unwrap_err();
    assert!(
        matches!(err, PatchError::MultipleMatches { ref lines, .. } if lines == &[1, 2]),
        "{err:?}"
    );
}

#[test]
fn nested_anchors_narrow_down_and_the_anchor_line_may_be_context() {
    let text =
        "class A:\n    def run(self):\n        pass\nclass B:\n    def run(self):\n        pass\n";
    let patch = codex(
        "*** Update File: f\n@@ class B:\n@@ def run(self):\n-        pass\n+        return 2\n",
    );
    assert_eq!(patched_text(text, &patch), "class A:\n    def run(self):\n        pass\nclass B:\n    def run(self):\n        return 2\n");
    let patch = codex("*** Update File: f\n@@ class B:\n class B:\n     def run(self):\n-        pass\n+        return 2\n");
    assert!(patched_text(text, &patch).ends_with("        return 2\n"));
    // A shortened signature still anchors.
    let patch =
        codex("*** Update File: f\n@@ class B\n@@ def run\n-        pass\n+        return 2\n");
    assert!(patched_text(text, &patch).ends_with("        return 2\n"));
}

/// Lines that are all whitespace are matched exactly only: read loosely, the blank lines an
/// applied patch left would match its old lines again, and a retry would apply it twice (found
/// by the retry property).
#[test]
fn whitespace_only_lines_match_exactly_so_a_retry_is_seen_as_applied() {
    let text = "\n \n  \n\n\n";
    let patch = codex("*** Update File: f.txt\n@@\n  \n   \n \n+ \n \n*** End of File\n");
    let once = patched_text(text, &patch);
    assert_eq!(once, "\n \n  \n\n \n\n");
    let parsed = parse(&patch).unwrap();
    let (_, _, chunks) = only_update(&parsed);
    assert!(
        is_applied(&once, chunks, &CancelToken::new()),
        "a retry is answered 'already applied'"
    );
    assert!(
        patched(&once, &patch).is_err(),
        "and never applied a second time"
    );
}

/// Two chunks in one function, each naming it (as `git diff` prints the enclosing function for
/// every hunk): the second's anchor is behind the cursor, and the chunk goes on from there.
#[test]
fn an_anchor_named_again_for_a_later_chunk_in_the_same_scope() {
    let text = "fn run() {\n    a();\n    b();\n    c();\n    d();\n    e();\n}\n";
    let patch = codex(
        "*** Update File: f.rs\n@@ fn run() {\n-    a();\n+    A();\n@@ fn run() {\n-    e();\n+    E();\n",
    );
    assert_eq!(
        patched_text(text, &patch),
        "fn run() {\n    A();\n    b();\n    c();\n    d();\n    E();\n}\n"
    );
    // It never moves a chunk back before the cursor.
    let patch = codex(
        "*** Update File: f.rs\n@@ fn run() {\n-    d();\n+    D();\n@@ fn run() {\n-    a();\n+    A();\n",
    );
    let error = ToolError::from(patched(text, &patch).unwrap_err());
    assert_eq!(error.code, ErrorCode::NoMatch);
}

/// A chunk of added lines only whose anchor is behind the cursor (an earlier chunk already went
/// past it) goes at the cursor, never back into lines the earlier chunk changed (found by the
/// never-panics property: it panicked slicing backwards).
#[test]
fn an_added_only_chunk_anchored_behind_the_cursor_goes_at_the_cursor() {
    let patch = codex("*** Update File: f\n-b\n@@ a\n+a\n");
    assert_eq!(patched_text("a\nb", &patch), "a\na");
    let patch = codex("*** Update File: f\n@@ fn run() {\n-    a();\n@@ fn run() {\n+    z();\n");
    assert_eq!(
        patched_text("fn run() {\n    a();\n    b();\n}\n", &patch),
        "fn run() {\n    z();\n    b();\n}\n"
    );
}

#[test]
fn an_anchor_that_is_not_there_is_no_match() {
    let text = "fn alpha(items: &[Item]) -> usize {\n    1\n}\n";
    let err = patched(
        text,
        &codex("*** Update File: f.rs\n@@ fn alpah(items: &[Item]) -> usize {\n-    1\n+    2\n"),
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "f.rs: chunk 1: could not find the line `@@ fn alpah(items: &[Item]) -> usize {` names\n\
         The closest match is at line 1 (similar, not identical):\n   \
         1 | fn alpha(items: &[Item]) -> usize {\n\
         Copy that line exactly from the file, or leave the `@@` line empty."
    );
    assert_eq!(ToolError::from(err).code, ErrorCode::NoMatch);
    let err = patched(
        text,
        &codex("*** Update File: f.rs\n@@ class Nothing\n-    1\n+    2\n"),
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "f.rs: chunk 1: could not find the line `@@ class Nothing` names. Copy that line exactly from the file, or leave the `@@` line empty."
    );
}

#[test]
fn not_found_is_no_match_with_the_closest_lines() {
    let text = "def total(items):\n\tresult = 0\n\tfor item in items:\n\t\tresult += item.price\n\treturn result\n";
    let patch = codex("*** Update File: shop.py\n@@\n for item in items:\n-    result += item.cost\n+    result += item.price * item.qty\n");
    let err = patched(text, &patch).unwrap_err();
    assert_eq!(
        err.message(),
        "shop.py: chunk 1: could not find the lines to replace\n\
         The closest match is at lines 3-4 (similar, not identical):\n   \
         3 | \tfor item in items:\n   \
         4 | \t\tresult += item.price\n\
         Copy the context and `-` lines exactly as the file has them."
    );
    assert_eq!(ToolError::from(err).code, ErrorCode::NoMatch);
    let err = patched("unrelated\n", &patch).unwrap_err();
    assert_eq!(
        err.message(),
        "shop.py: chunk 1: could not find the lines to replace. Read the file again and copy the context and `-` lines exactly as it has them."
    );
}

#[test]
fn chunks_out_of_order_are_explained() {
    let text = "one\ntwo\nthree\nfour\n";
    let patch = codex("*** Update File: f\n@@\n-three\n+3\n@@\n-one\n+1\n");
    let err = patched(text, &patch).unwrap_err();
    let message = err.message();
    assert!(
        message.starts_with("f: chunk 2: could not find the lines to replace (they are at line 1, above the lines of chunk 1: chunks must follow the order of the file)"),
        "{message}"
    );
}

#[test]
fn unified_exact_match_at_the_hinted_line_wins() {
    let text = "x\nsame\nx\nsame\nx\n";
    let diff = "--- a/f\n+++ b/f\n@@ -4 +4 @@\n-same\n+other\n";
    assert_eq!(patched_text(text, diff), "x\nsame\nx\nother\nx\n");
    // Off the hint, two candidates: ambiguous, with advice for unified diffs.
    let diff = "--- a/f\n+++ b/f\n@@ -3 +3 @@\n-same\n+other\n";
    let err = patched(text, diff).unwrap_err();
    assert_eq!(
        err.message(),
        "f: chunk 1: the lines to replace occur 2 times (at lines 2, 4); add context lines until they occur once, or give the hunk the line numbers of the intended place (an exact match at the hunk's line wins)"
    );
    // A wrong hint does not matter when the lines occur once.
    let diff = "--- a/f\n+++ b/f\n@@ -90 +90 @@\n-x\n+y\n x\n-same\n+SAME\n";
    assert!(patched(text, diff).is_err());
    assert_eq!(
        patched_text("a\nb\nc\n", "--- a/f\n+++ b/f\n@@ -90 +90 @@\n-b\n+B\n"),
        "a\nB\nc\n"
    );
}

#[test]
fn unified_hints_shift_by_where_the_previous_hunk_landed() {
    // The file gained 3 lines at the top since the diff was made; both hunks' hints are off by
    // 3, and the second hunk's lines occur twice: the shifted hint picks the intended one.
    let body = "a\nb\nTARGET\nc\nd\ne\nf\ng\nTARGET\nh\n";
    let text = format!("new1\nnew2\nnew3\n{body}");
    let diff = "--- a/f\n+++ b/f\n@@ -2 +2 @@\n-b\n+B\n@@ -9 +9 @@\n-TARGET\n+HIT\n";
    let applied = patched(&text, diff).unwrap();
    assert_eq!(
        applied.text,
        "new1\nnew2\nnew3\na\nB\nTARGET\nc\nd\ne\nf\ng\nHIT\nh\n"
    );
}

#[test]
fn only_added_lines_go_after_the_anchor_at_the_hint_or_at_the_end() {
    let text = "fn a() {}\nfn b() {}\n";
    assert_eq!(
        patched_text(text, &codex("*** Update File: f\n@@\n+fn c() {}\n")),
        "fn a() {}\nfn b() {}\nfn c() {}\n"
    );
    assert_eq!(
        patched_text(
            text,
            &codex("*** Update File: f\n@@ fn a() {}\n+// after a\n")
        ),
        "fn a() {}\n// after a\nfn b() {}\n"
    );
    assert_eq!(
        patched_text(text, "--- a/f\n+++ b/f\n@@ -0,0 +1 @@\n+// top\n"),
        "// top\nfn a() {}\nfn b() {}\n"
    );
    assert_eq!(
        patched_text(text, "--- a/f\n+++ b/f\n@@ -1,0 +2 @@\n+// between\n"),
        "fn a() {}\n// between\nfn b() {}\n"
    );
    assert_eq!(
        patched_text("", &codex("*** Update File: f\n+first\n+second\n")),
        "first\nsecond\n"
    );
}

#[test]
fn end_of_file_chunks_match_at_the_end() {
    let text = "}\nfn x() {\n}\n";
    let patch = codex("*** Update File: f\n@@\n-}\n+} // x\n*** End of File\n");
    assert_eq!(patched_text(text, &patch), "}\nfn x() {\n} // x\n");
}

// --- Line endings, BOM, final newline -----------------------------------------------------

#[test]
fn crlf_file_keeps_crlf_and_added_lines_take_it() {
    let text = "one\r\ntwo\r\nthree\r\n";
    let patch = codex("*** Update File: f\n one\n-two\n+2\n+2b\n three\n");
    assert_eq!(patched_text(text, &patch), "one\r\n2\r\n2b\r\nthree\r\n");
    // A patch written with CRLF itself reads the same.
    assert_eq!(
        patched_text(text, &patch.replace('\n', "\r\n")),
        "one\r\n2\r\n2b\r\nthree\r\n"
    );
}

#[test]
fn mixed_endings_are_kept_line_by_line_and_added_lines_take_the_usual_one() {
    let text = "a\r\nb\nc\r\nd\r\n";
    let patch = codex("*** Update File: f\n a\n b\n+new\n c\n");
    assert_eq!(patched_text(text, &patch), "a\r\nb\nnew\r\nc\r\nd\r\n");
    // A lone `\r` inside a line is part of its text.
    assert_eq!(
        patched_text("x\ry\nz\n", &codex("*** Update File: f\n x\ry\n-z\n+Z\n")),
        "x\ry\nZ\n"
    );
}

#[test]
fn missing_final_newline_is_kept() {
    assert_eq!(
        patched_text("a\nb", &codex("*** Update File: f\n a\n-b\n+c\n")),
        "a\nc"
    );
    assert_eq!(
        patched_text("a\r\nb", &codex("*** Update File: f\n a\n b\n+c\n")),
        "a\r\nb\r\nc"
    );
    assert_eq!(
        patched_text("a\nb", &codex("*** Update File: f\n-a\n+A\n")),
        "A\nb"
    );
    assert_eq!(
        patched_text("a\nb\n", &codex("*** Update File: f\n a\n-b\n")),
        "a\n"
    );
    assert_eq!(
        patched_text("a\nb", &codex("*** Update File: f\n a\n-b\n")),
        "a"
    );
}

#[test]
fn bom_is_kept_by_the_caller_and_ignored_in_patch_lines() {
    use crate::text::decode::{decode_for_edit, TextFile};
    let file = decode_for_edit(b"\xEF\xBB\xBFfirst\r\nsecond\r\n").unwrap();
    // A git diff of the raw file shows the BOM on line 1.
    let diff = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-\u{FEFF}first\r\n+\u{FEFF}FIRST\r\n second\r\n";
    let applied = patched(&file.text, diff).unwrap();
    let out = TextFile {
        bom: file.bom,
        text: applied.text,
    }
    .to_bytes();
    assert_eq!(out, b"\xEF\xBB\xBFFIRST\r\nsecond\r\n");
    assert!(applied.fuzzy.is_empty());
}

// --- Already applied ----------------------------------------------------------------------

#[test]
fn already_applied_is_detected_and_a_fresh_file_is_not() {
    let before = "import os\n\ndef main():\n    print('hi')\n    return 0\n";
    let patch = parse(&codex(
        "*** Update File: m.py\n@@ def main():\n-    print('hi')\n+    print('hello')\n     return 0\n",
    ))
    .unwrap();
    let (path, _, chunks) = only_update(&patch);
    assert!(!is_applied(before, chunks, &CancelToken::new()));
    let after = apply(path, before, chunks, &CancelToken::new())
        .unwrap()
        .text;
    assert!(is_applied(&after, chunks, &CancelToken::new()));
    // Applying again fails, and the message says why.
    let err = apply(path, &after, chunks, &CancelToken::new()).unwrap_err();
    assert!(
        err.message()
            .contains("its new lines are already at line 4; was the chunk applied already?"),
        "{}",
        err.message()
    );
}

#[test]
fn already_applied_when_the_added_lines_end_the_context() {
    // The old lines (all context) are still in the file after the change: inside the new lines.
    let before = "a\nb\nc\n";
    let patch = parse(&codex("*** Update File: f\n a\n b\n c\n+d\n")).unwrap();
    let chunks = only_update(&patch).2;
    assert!(!is_applied(before, chunks, &CancelToken::new()));
    let after = patched_text(before, &codex("*** Update File: f\n a\n b\n c\n+d\n"));
    assert_eq!(after, "a\nb\nc\nd\n");
    assert!(is_applied(&after, chunks, &CancelToken::new()));
    // Only-added lines count as applied only where they would have gone.
    let patch = parse(&codex("*** Update File: f\n+}\n")).unwrap();
    let chunks = only_update(&patch).2;
    assert!(!is_applied("}\nfn x() {\n", chunks, &CancelToken::new()));
    assert!(is_applied("fn x() {\n}\n", chunks, &CancelToken::new()));
}

#[test]
fn already_applied_unified_diff_uses_new_side_hints() {
    // After the change its new lines occur twice; the hunk's `+` line number picks the right one.
    let before = "x\nother\ny\nx\nsame\ny\n";
    let diff = "--- a/f\n+++ b/f\n@@ -4,3 +4,3 @@\n x\n-same\n+other\n y\n";
    let patch = parse(diff).unwrap();
    let chunks = only_update(&patch).2;
    assert!(!is_applied(before, chunks, &CancelToken::new()));
    let after = apply("f", before, chunks, &CancelToken::new())
        .unwrap()
        .text;
    assert_eq!(after, "x\nother\ny\nx\nother\ny\n");
    assert!(is_applied(&after, chunks, &CancelToken::new()));
    assert!(is_applied("anything", &[], &CancelToken::new()));
}

/// An end-of-file chunk of blank lines, sent again: its old text is only at the top now (its
/// whitespace-only lines are matched exactly) and its new text ends the file, so it is not
/// found, never applied a second time at the top (proptest seed 05753c77…).
#[test]
fn an_end_of_file_chunk_already_at_the_end_is_not_applied_higher_up() {
    let patch = parse("*** Begin Patch\n*** Update File: f.txt\n@@\n \n \n \n-\n+ \n*** End of File\n*** End Patch\n").unwrap();
    let PatchChange::Update { path, chunks, .. } = &patch.files[0].change else {
        panic!("an update")
    };
    let once = apply(path, "\n\n\n\n\n", chunks, &CancelToken::new())
        .unwrap()
        .text;
    assert_eq!(once, "\n\n\n\n \n");
    let again = apply(path, &once, chunks, &CancelToken::new());
    assert!(
        matches!(again, Err(PatchError::NoMatch { .. })),
        "{again:?}"
    );
}

#[test]
fn old_lines_found_elsewhere_mean_not_applied() {
    // ../../../docs/tools.md#apply_patch: applied only if none of the old text is found.
    let diff = "--- a/f\n+++ b/f\n@@ -2 +2 @@\n-same\n+other\n";
    let patch = parse(diff).unwrap();
    let chunks = only_update(&patch).2;
    assert!(!is_applied("x\nother\nsame\n", chunks, &CancelToken::new()));
}

#[test]
fn large_file_many_chunks() {
    let line = |i: usize| format!("    let value_{i} = compute({i}); // ordinary source text");
    let mut text = String::new();
    for i in 0..60_000 {
        text.push_str(&line(i));
        text.push('\n');
        if i % 20 == 0 {
            text.push_str("    }\n\n");
        }
    }
    let mut patch = String::from("*** Begin Patch\n*** Update File: big.rs\n");
    for k in 0..50 {
        let i = k * 1_000 + 7;
        patch.push_str(&format!(
            "@@\n {}\n-{}\n+    let value_{i} = compute({i} * 2);\n {}\n",
            line(i - 1),
            line(i),
            line(i + 1)
        ));
    }
    patch.push_str("*** End Patch\n");
    let parsed = parse(&patch).unwrap();
    let (path, _, chunks) = only_update(&parsed);
    let started = std::time::Instant::now();
    let applied = apply(path, &text, chunks, &CancelToken::new()).unwrap();
    eprintln!(
        "{} bytes, {} chunks: {:?}",
        text.len(),
        chunks.len(),
        started.elapsed()
    );
    assert_eq!(applied.text.matches(" * 2);").count(), 50);
    let shorter = " // ordinary source text".len() - " * 2".len();
    assert_eq!(applied.text.len(), text.len() - 50 * shorter);
    assert!(is_applied(&applied.text, chunks, &CancelToken::new()));
}

#[test]
fn already_applied_with_chunks_of_only_removed_lines() {
    let before = "import os\nimport sys\n\ndef main():\n    debug()\n    run()\n";
    let patch = codex("*** Update File: m.py\n@@\n-import sys\n@@ def main():\n-    debug()\n");
    let parsed = parse(&patch).unwrap();
    let chunks = only_update(&parsed).2;
    assert!(!is_applied(before, chunks, &CancelToken::new()));
    let after = patched_text(before, &patch);
    assert_eq!(after, "import os\n\ndef main():\n    run()\n");
    assert!(is_applied(&after, chunks, &CancelToken::new()));
}

#[test]
fn already_applied_judges_old_lines_at_the_first_level_that_finds_them() {
    // Found by the retry property: after the change the old lines occur exactly only inside
    // the new ones; a looser level also finds them elsewhere, but apply never looks there.
    let before = "a\n \n \n\n\n";
    let patch = codex("*** Update File: f\n@@\n  \n \n \n+\n*** End of File\n");
    let parsed = parse(&patch).unwrap();
    let chunks = only_update(&parsed).2;
    let once = patched_text(before, &patch);
    assert_eq!(once, "a\n \n \n\n\n\n");
    assert!(is_applied(&once, chunks, &CancelToken::new()));
}

#[test]
fn unified_paths_differing_only_by_a_prefix_name_one_file_and_only_git_moves() {
    // A model's one-sided prefix names one file.
    let patch = parse("--- src/x.rs\n+++ b/src/x.rs\n@@ -1 +1 @@\n-a\n+b\n").unwrap();
    assert_eq!(only_update(&patch).0, "src/x.rs");
    assert_eq!(only_update(&patch).1, None);
    // Two different files without rename lines or a git header: not a move, an error.
    let (line, message) = syntax_line(parse("--- x.orig\n+++ x\n@@ -1 +1 @@\n-a\n+b\n"));
    assert_eq!(line, 1);
    assert!(
        message.contains("name different files (x.orig, x)"),
        "{message}"
    );
    // A git header naming two paths is a move, as git means it.
    let patch = parse("diff --git a/x b/y\n--- a/x\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n").unwrap();
    assert_eq!(only_update(&patch).1, Some("y"));
}

#[test]
fn an_abort_stops_the_placement_and_the_applied_check() {
    let text = "a\nb\nc\n";
    let patch = parse(&codex("*** Update File: f\n@@\n a\n-b\n+B\n")).unwrap();
    let (path, _, chunks) = only_update(&patch);
    let aborted = CancelToken::new();
    aborted.abort();
    assert_eq!(
        apply(path, text, chunks, &aborted),
        Err(PatchError::Aborted)
    );
    let after = apply(path, text, chunks, &CancelToken::new()).unwrap().text;
    assert!(is_applied(&after, chunks, &CancelToken::new()));
    assert!(!is_applied(&after, chunks, &aborted));
    assert_eq!(
        ToolError::from(PatchError::Aborted).code,
        ErrorCode::Aborted
    );
}
