//! Names as the tools show them: one line of plain text per name, the same name always shown the
//! same way, and any name given back in its shown form reaches that name.
//!
//! A file name is any bytes but `/` and NUL: newlines, terminal escape sequences (`ESC ] 0 ; … BEL`
//! retitles a terminal, `ESC [ 2 J` clears it), Unicode bidi overrides that reorder a line, bytes
//! that are not UTF-8. Printed verbatim, such a name splits a listing into two entries or reaches
//! the host's terminal as commands; printed lossily (`Path::display`), it cannot be given back.
//!
//! **The shown form.** Each component (the text between `/`s) is shown as it is when it is
//! *plain*: valid UTF-8, no [unsafe character](is_unsafe), and not itself the escaped form of
//! another name. Otherwise it is shown escaped:
//!
//! | in the name | shown as |
//! |---|---|
//! | `\` | `\\` |
//! | tab, newline, carriage return | `\t`, `\n`, `\r` |
//! | other C0 controls, DEL | `\x00`–`\x1f`, `\x7f` |
//! | C1 controls, bidi controls, U+2028/U+2029 | `\u0085`, `\u202e`, … (four lowercase hex digits) |
//! | a byte that is not part of valid UTF-8 | `\xff` |
//! | anything else | itself |
//!
//! So ordinary names never change, backslashes included (`C:\Users`, `a\x41`: `\U` is no
//! escape, and `\x41` is not how `A` is shown). The only names without an unsafe character that
//! are shown differently are those that read as the escaped form of another name (a literal
//! `a\nb`, which is how `a`⏎`b` is shown, is shown `a\\nb`), since two names must never look
//! alike: [`unescape`] of any shown form gives back exactly the name's bytes.
//!
//! On Windows, where `\` separates components too and no name holds one, a path with an escaped
//! component is shown with `/` between its components (`C:/work/\u202eevil.txt`), so that every
//! `\` in it starts an escape; see [`Separators`].
//!
//! **Reading a name back.** Paths are taken literally (../../docs/paths-and-sandbox.md#resolving-a-path); the shown form is accepted only
//! as a fallback, in [`super::resolve::prefer_shown_names`], which every tool's path goes
//! through: a component that exists literally always means itself; one that does not, and is
//! exactly the shown form of an existing entry (in a directory inside the allowed trees), means
//! that entry; one that exists under neither spelling stays literal. So a tool that acts on an
//! existing entry reaches it by the name it was shown (`write_file` over an existing file too),
//! and a new file or directory is created under the name as the model wrote it, also inside a
//! directory given by its shown form. `restore_file` does not guess: the original path is
//! recorded in its shown form and decoded exactly ([`unescape`]).
//!
//! **Echoes.** Text that came to us as text (a model's argument, a label we stored) is not a
//! name read from the disk: [`echo`] quotes it unchanged unless it holds an unsafe character.

use std::borrow::Cow;
use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Characters that never appear in a shown name: C0 controls (tab, newline and ESC included),
/// DEL, C1 controls, the bidi marks, embeddings, overrides and isolates (which reorder the text
/// around them), and the line and paragraph separators (which break lines in renderers).
pub fn is_unsafe(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        | '\u{61c}'
        | '\u{200e}'
        | '\u{200f}'
        | '\u{2028}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}')
}

/// A component shown as it is: valid UTF-8 without an unsafe character that is not the escaped
/// form of another name.
fn is_plain(text: &str) -> bool {
    let escaped = || text.contains('\\') && escaped_name(text).is_some();
    !text.chars().any(is_unsafe) && !escaped()
}

/// What separates a path's components in the text of a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Separators {
    /// `/` (Unix): `\` is part of a name.
    Slash,
    /// `/` and `\` (Windows, where no name holds a `\`). A path whose components are all plain
    /// is shown as it is, `\`s included; one with an escaped component is shown with `/`
    /// between its components, so that every `\` in it starts an escape (`C:/work/\u202eevil.txt`).
    SlashAndBackslash,
}

impl Separators {
    /// This system's.
    const HOST: Separators = if cfg!(windows) {
        Separators::SlashAndBackslash
    } else {
        Separators::Slash
    };

    /// Whether `c` separates two components.
    fn separates(self, c: char) -> bool {
        c == '/' || (self == Separators::SlashAndBackslash && c == '\\')
    }
}

/// The shown form of a name or path (components shown one by one, separators kept; on Windows
/// see [`Separators::SlashAndBackslash`]): borrowed, and equal to the name, whenever every
/// component is plain.
pub fn shown(name: &OsStr) -> Cow<'_, str> {
    shown_with(name, Separators::HOST)
}

fn shown_with(name: &OsStr, separators: Separators) -> Cow<'_, str> {
    let bytes = name.as_encoded_bytes();
    if let Ok(text) = std::str::from_utf8(bytes) {
        if text.split(|c| separators.separates(c)).all(is_plain) {
            return Cow::Borrowed(text);
        }
    }
    let mut out = String::with_capacity(bytes.len() + 16);
    for (i, part) in bytes
        .split(|b| separators.separates(char::from(*b)))
        .enumerate()
    {
        if i > 0 {
            out.push('/');
        }
        push_shown_component(&mut out, part);
    }
    Cow::Owned(out)
}

fn push_shown_component(out: &mut String, part: &[u8]) {
    if let Ok(text) = std::str::from_utf8(part) {
        if is_plain(text) {
            out.push_str(text);
            return;
        }
    }
    for chunk in part.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\t' => out.push_str("\\t"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                c if c.is_ascii() && is_unsafe(c) => {
                    let _ = write!(out, "\\x{:02x}", c as u32);
                }
                c if is_unsafe(c) => {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                }
                c => out.push(c),
            }
        }
        for byte in chunk.invalid() {
            let _ = write!(out, "\\x{byte:02x}");
        }
    }
}

/// The name or path whose shown form is `text`: `text` itself where a component is plain, the
/// name it is the escaped form of otherwise; `None` if `text` holds an unsafe character (no
/// shown form does). `unescape(&shown(n)) == Some(n)` for every name or path `n` (on Windows a
/// path with an escaped name comes back with `/` between its components: the same path).
pub fn unescape(text: &str) -> Option<OsString> {
    unescape_with(text, Separators::HOST)
}

fn unescape_with(text: &str, separators: Separators) -> Option<OsString> {
    if separators == Separators::SlashAndBackslash && !text.contains('/') {
        // Shown as it is: an escaped Windows path has `/` between its components.
        return (!text.chars().any(is_unsafe)).then(|| OsString::from(text));
    }
    let mut out = Vec::with_capacity(text.len());
    for (i, part) in text.split('/').enumerate() {
        if i > 0 {
            out.push(b'/');
        }
        match separators {
            Separators::Slash => out.extend_from_slice(&unescape_component(part)?),
            Separators::SlashAndBackslash => {
                out.extend_from_slice(&unescape_windows_component(part)?)
            }
        }
    }
    Some(super::names::from_vec(out))
}

/// [`unescape_component`] for a component of a Windows path shown with `/`: the name it is the
/// escaped form of ([`windows_escaped`]), else itself, as plain text whose `\`s are separators.
fn unescape_windows_component(text: &str) -> Option<Vec<u8>> {
    if text.chars().any(is_unsafe) {
        return None;
    }
    Some(windows_escaped(text).unwrap_or_else(|| text.as_bytes().to_vec()))
}

/// The name `text` (a piece of a Windows path between `/`s) is the escaped form of, if it is one
/// and Windows can hold that name (no `\`, no C0 control): `C:\tmp` is `C:` then the folder
/// `tmp`, never `C:` + tab + `mp`; `\u202eevil.txt` is U+202E + `evil.txt`.
pub fn windows_escaped(text: &str) -> Option<Vec<u8>> {
    let holdable = |name: &Vec<u8>| !name.iter().any(|&b| b == b'\\' || b < 0x20);
    if text.contains('\\') {
        escaped_name(text).filter(holdable)
    } else {
        None
    }
}

/// [`unescape`] for one component (no `/`).
pub fn unescape_component(text: &str) -> Option<Vec<u8>> {
    if is_plain(text) {
        Some(text.as_bytes().to_vec())
    } else {
        escaped_name(text)
    }
}

/// The name `text` is the escaped form of, if it is one: its escapes decode, and the name it
/// decodes to is shown exactly as `text` (one spelling per name, nothing unsafe left in it). The
/// check recurses into the decoded name, which has at most half as many backslashes, so it ends
/// within a few levels.
fn escaped_name(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            let mut utf8 = [0; 4];
            out.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
            continue;
        }
        match chars.next()? {
            '\\' => out.push(b'\\'),
            't' => out.push(b'\t'),
            'n' => out.push(b'\n'),
            'r' => out.push(b'\r'),
            'x' => out.push(hex(&mut chars, 2)? as u8),
            'u' => {
                let c = char::from_u32(hex(&mut chars, 4)?)?;
                let mut utf8 = [0; 4];
                out.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
            }
            _ => return None,
        }
    }
    let mut again = String::with_capacity(text.len());
    push_shown_component(&mut again, &out);
    (again == text).then_some(out)
}

/// The value of the next `digits` hex digits.
fn hex(chars: &mut std::str::Chars<'_>, digits: usize) -> Option<u32> {
    let mut value = 0;
    for _ in 0..digits {
        value = value * 16 + chars.next()?.to_digit(16)?;
    }
    Some(value)
}

/// Text we were given as text (a model's argument, a label stored earlier), quoted back: as it
/// is unless it holds an unsafe character, its [`shown`] form then.
pub fn echo(text: &str) -> Cow<'_, str> {
    if text.chars().any(is_unsafe) {
        Cow::Owned(shown(OsStr::new(text)).into_owned())
    } else {
        Cow::Borrowed(text)
    }
}

/// `.shown()` on paths and names, where `.display()` would have been.
pub trait Shown {
    /// The [`shown`] form.
    fn shown(&self) -> Cow<'_, str>;
}

impl Shown for OsStr {
    fn shown(&self) -> Cow<'_, str> {
        shown(self)
    }
}

impl Shown for Path {
    fn shown(&self) -> Cow<'_, str> {
        shown(self.as_os_str())
    }
}

impl Shown for PathBuf {
    fn shown(&self) -> Cow<'_, str> {
        shown(self.as_os_str())
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::os::unix::ffi::OsStrExt;

    fn show(bytes: &[u8]) -> String {
        shown(OsStr::from_bytes(bytes)).into_owned()
    }

    #[test]
    fn ordinary_names_are_shown_as_they_are() {
        for name in [
            "src/main.rs",
            "My Notes (1).txt",
            "café/日本語.md",
            "C:\\Users\\me",
            "back\\slash",
            "ends\\",
            "a\\x41",
            "",
            "/",
        ] {
            assert!(matches!(shown(OsStr::new(name)), Cow::Borrowed(s) if s == name));
            assert_eq!(unescape(name), Some(OsString::from(name)), "{name:?}");
        }
    }

    #[test]
    fn controls_are_escaped() {
        assert_eq!(show(b"a\nb"), "a\\nb");
        assert_eq!(show(b"t\tr\r"), "t\\tr\\r");
        assert_eq!(
            show(b"\x1b]0;title\x07\x1b[2J"),
            "\\x1b]0;title\\x07\\x1b[2J"
        );
        assert_eq!(show(b"nul\0del\x7f"), "nul\\x00del\\x7f");
        assert_eq!(show("c1\u{85}\u{9b}".as_bytes()), "c1\\u0085\\u009b");
        assert_eq!(
            show("\u{202e}txt.exe\u{2066}\u{2069}\u{200f}\u{61c}".as_bytes()),
            "\\u202etxt.exe\\u2066\\u2069\\u200f\\u061c"
        );
        assert_eq!(show("p\u{2028}q\u{2029}".as_bytes()), "p\\u2028q\\u2029");
    }

    #[test]
    fn bytes_that_are_not_utf8_are_hex() {
        assert_eq!(show(b"bad\xff\xfe.txt"), "bad\\xff\\xfe.txt");
        // A cut-short sequence is bytes; the valid character after it is itself.
        assert_eq!(show(b"\xe2\x82\xc3\xa9"), "\\xe2\\x82\u{e9}");
        assert_eq!(
            unescape("bad\\xff\\xfe.txt").unwrap().as_bytes(),
            b"bad\xff\xfe.txt"
        );
    }

    #[test]
    fn backslashes_are_doubled_only_in_escaped_components() {
        assert_eq!(show(b"dir\\x/f\n"), "dir\\x/f\\n");
        assert_eq!(show(b"a\\b\n"), "a\\\\b\\n");
        assert_eq!(show(b"a\\\\b"), "a\\\\b");
        // A name that reads as the escaped form of another is escaped itself, so that two names
        // never look alike.
        assert_eq!(show(b"a\\nb"), "a\\\\nb");
        assert_eq!(show(b"a\\\\nb"), "a\\\\\\\\nb");
        assert_eq!(show(b"C:\\new"), "C:\\\\new");
        assert_eq!(unescape("a\\\\nb").unwrap(), OsStr::new("a\\nb"));
        assert_eq!(unescape("a\\nb").unwrap(), OsStr::new("a\nb"));
    }

    #[test]
    fn only_the_shown_spelling_is_read_back() {
        // Escapes that `shown` never writes leave the text plain: it names itself.
        for text in [
            "a\\x41",
            "\\X1b",
            "\\x1B",
            "\\u00e9\\n",
            "\\ud800",
            "\\x1",
            "\\q\\n",
            "tail\\",
        ] {
            assert_eq!(shown(OsStr::new(text)), text);
            assert_eq!(unescape(text), Some(OsString::from(text)), "{text:?}");
        }
        assert_eq!(unescape("raw\ncontrol"), None);
        assert_eq!(unescape("ok/raw\u{202e}"), None);
    }

    #[test]
    fn echo_keeps_text_unless_it_is_unsafe() {
        assert_eq!(echo("a\\nb"), "a\\nb");
        assert_eq!(echo("a\nb"), "a\\nb");
        assert_eq!(echo("x\\n\u{1b}"), "x\\\\n\\x1b");
    }

    fn name_bytes() -> impl Strategy<Value = Vec<u8>> {
        // Bytes weighted towards the interesting ones.
        let byte = prop_oneof![
            any::<u8>(),
            Just(b'\\'),
            Just(b'/'),
            Just(b'n'),
            Just(b'x'),
            Just(b'u'),
            Just(0x1b),
            Just(0xc2),
            Just(0x85),
            Just(0xe2),
            Just(0x80),
            Just(0xae),
        ];
        proptest::collection::vec(byte, 0..24)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(5000))]

        #[test]
        fn every_name_reads_back_and_shows_no_control(bytes in name_bytes()) {
            let name = OsStr::from_bytes(&bytes);
            let text = shown(name);
            prop_assert!(!text.chars().any(is_unsafe), "{text:?}");
            prop_assert!(!text.chars().any(char::is_control), "{text:?}");
            prop_assert_eq!(text.matches('/').count(), bytes.iter().filter(|b| **b == b'/').count());
            prop_assert_eq!(unescape(&text), Some(name.to_owned()));
        }

        #[test]
        fn unicode_names_read_back(name in "\\PC{0,12}|[\\x00-\\x{9f}\\u{2028}-\\u{202e}\\\\a-z/]{0,12}") {
            let text = shown(OsStr::new(&name));
            prop_assert!(!text.chars().any(is_unsafe));
            prop_assert_eq!(unescape(&text), Some(OsString::from(&name)));
        }

        #[test]
        fn what_reads_back_is_what_is_shown(text in "[\\\\a-z0-9xuntr/\\x1b]{0,16}") {
            if let Some(name) = unescape(&text) {
                prop_assert_eq!(shown(&name), text);
            }
        }
    }
}

/// The Windows reading of shown paths, tested on every system.
#[cfg(test)]
mod windows_tests {
    use super::*;
    use proptest::prelude::*;

    const WINDOWS: Separators = Separators::SlashAndBackslash;

    fn show(path: &str) -> String {
        shown_with(OsStr::new(path), WINDOWS).into_owned()
    }

    #[test]
    fn plain_windows_paths_are_shown_as_they_are() {
        // Each of these once read as the escaped form of one name (`\t`, `\n`, `\r`, `\x1b`):
        // its `\`s were all doubled.
        for path in [
            r"C:\Users\me\repo",
            r"C:\tmp\new.txt",
            r"C:\repo\tests\x1b.txt",
            r"\\server\share\tmp",
            r"C:\a\u202e.txt",
            r"C:/mixed\tmp/new.txt",
        ] {
            assert!(
                matches!(shown_with(OsStr::new(path), WINDOWS), Cow::Borrowed(s) if s == path),
                "{path}"
            );
            assert_eq!(unescape_with(path, WINDOWS), Some(OsString::from(path)));
        }
    }

    #[test]
    fn a_windows_path_with_an_escaped_name_is_shown_with_slashes() {
        for (path, text) in [
            (
                "C:\\work\\bidi\u{202e}txt.exe",
                r"C:/work/bidi\u202etxt.exe",
            ),
            (
                "\\\\server\\share\\sep\u{2028}.txt",
                r"//server/share/sep\u2028.txt",
            ),
            ("C:\\tmp\\new\u{85}\\x.txt", r"C:/tmp/new\u0085/x.txt"),
            ("C:/a\\b\u{202e}", r"C:/a/b\u202e"),
        ] {
            assert_eq!(show(path), text);
            let back = unescape_with(text, WINDOWS).unwrap();
            // The same path, every separator a `/`.
            assert_eq!(back, OsString::from(path.replace('\\', "/")), "{text}");
        }
        assert_eq!(unescape_with("C:\\raw\u{202e}", WINDOWS), None);
        assert_eq!(unescape_with("C:/raw\u{202e}", WINDOWS), None);
    }

    #[test]
    fn a_piece_is_a_shown_name_only_if_windows_can_hold_that_name() {
        let escaped = |text| windows_escaped(text).map(String::from_utf8);
        assert_eq!(
            escaped(r"\u202eevil.txt"),
            Some(Ok("\u{202e}evil.txt".into()))
        );
        assert_eq!(escaped(r"del\x7f"), Some(Ok("del\x7f".into())));
        // A tab, a newline, a backslash: no Windows name holds them.
        assert_eq!(escaped(r"C:\tmp"), None);
        assert_eq!(escaped(r"a\nb"), None);
        assert_eq!(escaped(r"a\\b"), None);
        assert_eq!(escaped("plain"), None);
        assert_eq!(escaped(r"\users"), None);
    }

    fn windows_path() -> impl Strategy<Value = String> {
        let component = "[a-z0-9tnrxu\\x7f\u{85}\u{202e}\u{2028} .]{1,8}";
        ("[A-Z]:", proptest::collection::vec(component, 1..5))
            .prop_map(|(drive, parts)| format!("{drive}\\{}", parts.join("\\")))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn every_windows_path_reads_back_and_shows_no_control(path in windows_path()) {
            let text = show(&path);
            prop_assert!(!text.chars().any(is_unsafe), "{text:?}");
            let back = unescape_with(&text, WINDOWS).unwrap();
            if text.contains('/') {
                prop_assert_eq!(back, OsString::from(path.replace('\\', "/")));
            } else {
                prop_assert_eq!(&text, &path);
                prop_assert_eq!(back, OsString::from(path));
            }
        }
    }
}
