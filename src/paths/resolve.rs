//! Turning the model's path string into an absolute path: relative to the workspace cwd (never
//! `process.cwd()`), `~/` for the home directory, bytes taken literally (no trimming, unquoting,
//! percent-decoding or Unicode normalisation). The one exception is a fallback, never a
//! rewrite: a component that does not exist but is the [shown form](super::shown) of an entry
//! that does names that entry ([`prefer_shown_names`]).

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

use super::shown::{echo, unescape_component, windows_escaped, Shown};
use crate::error::ToolError;

/// `~/rest` expands to the home directory (../../docs/paths-and-sandbox.md#resolving-a-path); anything else is returned as it is, a
/// bare `~` included (a name like any other). `None` when `~/` is used and no home directory is
/// known.
pub fn expand_home(raw: &str, home: Option<&Path>) -> Option<PathBuf> {
    if let Some(rest) = raw.strip_prefix("~/") {
        return home.map(|h| h.join(rest));
    }
    Some(PathBuf::from(raw))
}

/// Linux's `PATH_MAX`: the kernel refuses any longer path, so a longer argument is refused up front.
pub const PATH_MAX_BYTES: usize = 4096;

/// Linux's `NAME_MAX`: no file name (one path component) can be longer.
pub const NAME_MAX_BYTES: usize = 255;

/// The absolute (not yet canonical) path for `raw`, named `field` in errors.
pub fn absolute_input(
    raw: &str,
    field: &str,
    cwd: &Path,
    home: Option<&Path>,
) -> Result<PathBuf, ToolError> {
    if raw.is_empty() {
        return Err(ToolError::invalid(format!(
            "{field}: must not be empty; give a file path"
        )));
    }
    // A shown name is up to four times as long as the name (`\xff` for one byte): measured as
    // the name it shows, once it is not too long to be one.
    if raw.len() > 4 * PATH_MAX_BYTES
        || (raw.len() > PATH_MAX_BYTES
            && raw
                .split('/')
                .map(|part| shortest_len(part) + 1)
                .sum::<usize>()
                - 1
                > PATH_MAX_BYTES)
    {
        // Not echoed: no file path is this long, and the text goes to the model.
        return Err(ToolError::invalid(format!(
            "{field}: is {} bytes long, over the {PATH_MAX_BYTES} bytes a file path can have; give a shorter path",
            raw.len()
        )));
    }
    if raw.contains('\0') {
        return Err(ToolError::invalid(format!(
            "{field}: contains a NUL byte, which no file path can contain"
        )));
    }
    if let Some(long) = raw
        .split('/')
        .find(|part| part.len() > NAME_MAX_BYTES && shortest_len(part) > NAME_MAX_BYTES)
    {
        // Refused before anything is created (write_file would otherwise make the parents first).
        return Err(name_too_long(field, OsStr::new(long)));
    }
    #[cfg(windows)]
    refuse_windows_names(raw, field)?;
    let expanded = expand_home(raw, home).ok_or_else(|| {
        ToolError::invalid(format!(
            "{field}: `~/` needs a home directory, and none is known; use an absolute path"
        ))
    })?;
    Ok(if expanded.is_absolute() {
        expanded
    } else {
        cwd.join(expanded)
    })
}

/// Windows: refuses a path with a component Win32 would take for a device (`CON`, `NUL`,
/// `aux.txt`: in every directory), would strip (a trailing `.` or space) or does not allow in a
/// name (a control character, `<>:"|?*`; a `:` names an alternate data stream), before anything
/// is opened: such an entry, made through a relative NT open, no other program could open or
/// remove, and the NT layer refuses the rest only as an invalid argument
/// (../../docs/windows.md#names-case-drive-letters-unc-reserved-names).
#[cfg(windows)]
fn refuse_windows_names(raw: &str, field: &str) -> Result<(), ToolError> {
    let plain = |part: &&str| !matches!(*part, "" | "." | ".." | "~");
    // What comes before the first name: a verbatim or device prefix (`\\?\`, `\\.\`), then
    // a drive (`C:`).
    let names = [r"\\?\", "//?/", r"\\.\", "//./"]
        .iter()
        .find_map(|prefix| raw.strip_prefix(prefix))
        .unwrap_or(raw);
    let names = match names.as_bytes() {
        [letter, b':', ..] if letter.is_ascii_alphabetic() => &names[2..],
        _ => names,
    };
    for part in names.split(['/', '\\']).filter(plain) {
        if part.contains(super::platform::names::not_allowed_in_a_name) {
            return Err(ToolError::invalid(format!(
                "{field}: `{}` holds a character Windows does not allow in a name (a control character, or one of < > : \" | ? *); choose another name",
                echo(part)
            )));
        }
        if super::platform::names::is_reserved_device(OsStr::new(part)) {
            return Err(ToolError::invalid(format!(
                "{field}: `{}` is a name Windows reserves for a device (CON, PRN, AUX, NUL, COM1-9, LPT1-9, with any extension); choose another name",
                echo(part)
            )));
        }
        if part.ends_with(['.', ' ']) {
            return Err(ToolError::invalid(format!(
                "{field}: `{}` ends with a dot or a space, which Windows strips from a name; choose a name without it",
                echo(part)
            )));
        }
    }
    Ok(())
}

/// The length of the name `part` stands for: itself, or the name it is the shown form of.
fn shortest_len(part: &str) -> usize {
    unescape_component(part).map_or(part.len(), |name| name.len())
}

fn name_too_long(field: &str, name: &OsStr) -> ToolError {
    let shown = name.shown();
    let start: String = shown.chars().take(40).collect();
    ToolError::invalid(format!(
        "{field}: the name `{start}…` is {} bytes long, over the {NAME_MAX_BYTES} bytes a file name can have; use a shorter name",
        name.len()
    ))
}

/// Refuses a path with a component longer than a file name can be (after
/// [`prefer_shown_names`] chose the names, a shown form that named nothing is taken literally).
pub fn check_name_lengths(path: &Path, field: &str) -> Result<(), ToolError> {
    match path
        .components()
        .find(|c| c.as_os_str().len() > NAME_MAX_BYTES)
    {
        Some(long) => Err(name_too_long(field, long.as_os_str())),
        None => Ok(()),
    }
}

/// `absolute` with each component that does not exist, but is the shown form of an entry that
/// does, replaced by that entry's name; `None` when no component was replaced (the path means
/// itself). A component that exists literally always means itself, and one that exists under
/// neither name stays literal, so a new file gets the name the model wrote. `raw` is the text the
/// model gave, which `absolute` ends with (joined to the directory it is relative to): on
/// Windows only it is read for shown names.
///
/// Only directories for which `may_look_in` (given their canonical path) is true are looked
/// into, so that what lies outside the allowed trees decides nothing. The chosen path is checked
/// like any other afterwards.
pub fn prefer_shown_names(
    absolute: &Path,
    raw: &str,
    may_look_in: impl Fn(&Path) -> bool,
) -> Option<PathBuf> {
    if cfg!(windows) {
        return prefer_shown_windows_names(absolute, raw, may_look_in);
    }
    let decoded = |name: &OsStr| {
        unescape_component(name.to_str()?)
            .filter(|bytes| bytes.as_slice() != name.as_encoded_bytes())
    };
    if !absolute.components().any(|c| match c {
        Component::Normal(name) => decoded(name).is_some(),
        _ => false,
    }) {
        return None;
    }
    let exists = |p: &Path| std::fs::symlink_metadata(p).is_ok();
    let mut out = PathBuf::new();
    let mut replaced = false;
    for component in absolute.components() {
        if let Component::Normal(name) = component {
            if let Some(bytes) = decoded(name) {
                let shown_name = super::names::from_bytes(&bytes);
                let look =
                    || super::canonical::resolve(&out).is_ok_and(|dir| may_look_in(&dir.path));
                if look() && !exists(&out.join(name)) && exists(&out.join(shown_name)) {
                    out.push(shown_name);
                    replaced = true;
                    continue;
                }
            }
        }
        out.push(component);
    }
    replaced.then_some(out)
}

/// [`prefer_shown_names`] where `\` separates components too (Windows): `Path` would split a
/// shown name such as `\u202eevil.txt` at its escape, so what the model gave (`raw`, the end of
/// `absolute` after the directory it was joined to) is read as a shown Windows path is written,
/// in pieces between `/`s, a piece that is the escaped form of a name ([`windows_escaped`])
/// standing for that one name, every other piece literal.
fn prefer_shown_windows_names(
    absolute: &Path,
    raw: &str,
    may_look_in: impl Fn(&Path) -> bool,
) -> Option<PathBuf> {
    let text = absolute.to_str()?;
    let raw = match raw.strip_prefix("~/") {
        Some(rest) if !text.ends_with(raw) => rest,
        _ => raw,
    };
    let (base, given) = text.split_at(text.strip_suffix(raw).map_or(0, str::len));
    if !given
        .split('/')
        .any(|piece| windows_escaped(piece).is_some())
    {
        return None;
    }
    let path = |bytes: &[u8]| PathBuf::from(super::names::from_vec(bytes.to_vec()));
    let exists = |bytes: &[u8]| std::fs::symlink_metadata(path(bytes)).is_ok();
    let joined = |dir: &[u8], name: &[u8]| [dir, name].concat();
    let mut out = base.as_bytes().to_vec();
    let mut replaced = false;
    for (i, piece) in given.split('/').enumerate() {
        if i > 0 {
            out.push(b'\\');
        }
        if let Some(name) = windows_escaped(piece) {
            let look =
                || super::canonical::resolve(&path(&out)).is_ok_and(|dir| may_look_in(&dir.path));
            if look() && !exists(&joined(&out, piece.as_bytes())) && exists(&joined(&out, &name)) {
                out.extend_from_slice(&name);
                replaced = true;
                continue;
            }
        }
        out.extend_from_slice(piece.as_bytes());
    }
    replaced.then(|| path(&out))
}

/// Whether `raw` names a directory by its form: it ends with `/` or `/.` (`src/`, `src/.`).
fn directory_syntax(raw: &str) -> bool {
    let trimmed = raw.trim_end_matches('/');
    !trimmed.is_empty() && (trimmed.len() < raw.len() || trimmed.ends_with("/."))
}

/// For tools that act on a file: `raw` ending in `/` or `/.` names a directory, so unless it is
/// one (then the tool's own "is a directory" error applies) it is refused rather than silently
/// read, written, appended or deleted as the file without the slash (`write_file("src/")` must
/// not create a file called `src`, `delete_file("f/.")` must not delete the file `f`).
pub fn file_path_not_directory_syntax(
    raw: &str,
    field: &str,
    resolved: &Path,
) -> Result<(), ToolError> {
    if directory_syntax(raw) && !resolved.is_dir() {
        return Err(ToolError::invalid(format!(
            "{field}: `{}` names a directory (it ends with `/` or `/.`), but {} is not a directory; give the file path without the trailing `/` or `/.`",
            echo(raw),
            resolved.shown()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_join_the_workspace_cwd_literally() {
        let cwd = Path::new("/w/sub");
        let home = Some(Path::new("/home/u"));
        assert_eq!(
            absolute_input("a.txt", "path", cwd, home).unwrap(),
            Path::new("/w/sub/a.txt")
        );
        // Windows refuses a name ending in a space (windows_tests).
        #[cfg(unix)]
        assert_eq!(
            absolute_input(" a.txt ", "path", cwd, home).unwrap(),
            Path::new("/w/sub/ a.txt ")
        );
        assert_eq!(
            absolute_input("'a'", "path", cwd, home).unwrap(),
            Path::new("/w/sub/'a'")
        );
        assert_eq!(
            absolute_input("%41", "path", cwd, home).unwrap(),
            Path::new("/w/sub/%41")
        );
        assert_eq!(
            absolute_input("/etc/x", "path", cwd, home).unwrap(),
            Path::new("/etc/x")
        );
    }

    #[test]
    fn directory_syntax_is_a_trailing_slash_or_slash_dot() {
        for raw in ["f/", "f/.", "f//", "f/./", "a/f/.//", "/f/"] {
            assert!(directory_syntax(raw), "{raw}");
        }
        for raw in ["f", "/", "//", ".", "f/..", "f.", "f/.x", "a/.f"] {
            assert!(!directory_syntax(raw), "{raw}");
        }
    }

    #[test]
    fn tilde_means_home_only_at_the_start() {
        let home = Some(Path::new("/home/u"));
        assert_eq!(
            absolute_input("~/a", "path", Path::new("/w"), home).unwrap(),
            Path::new("/home/u/a")
        );
        assert_eq!(
            absolute_input("~", "path", Path::new("/w"), home).unwrap(),
            Path::new("/w/~")
        );
        assert_eq!(
            absolute_input("~/", "path", Path::new("/w"), home).unwrap(),
            Path::new("/home/u/")
        );
        assert_eq!(
            absolute_input("a/~/b", "path", Path::new("/w"), home).unwrap(),
            Path::new("/w/a/~/b")
        );
        assert_eq!(
            absolute_input("~user", "path", Path::new("/w"), home).unwrap(),
            Path::new("/w/~user")
        );
        assert!(absolute_input("~/a", "path", Path::new("/w"), None).is_err());
    }

    #[test]
    fn overlong_paths_and_names_are_invalid_without_being_echoed() {
        let cwd = Path::new("/w");
        let e = absolute_input(&"a/".repeat(3000), "path", cwd, None).unwrap_err();
        assert!(
            e.message.starts_with("path:") && e.message.len() < 200,
            "{}",
            e.message
        );
        let e = absolute_input(&format!("d/{}", "n".repeat(256)), "path", cwd, None).unwrap_err();
        assert!(
            e.message.contains("256 bytes") && e.message.len() < 200,
            "{}",
            e.message
        );
        assert!(absolute_input(&format!("d/{}", "n".repeat(255)), "path", cwd, None).is_ok());
    }

    #[test]
    fn nul_and_empty_are_invalid() {
        assert!(absolute_input("a\0b", "path", Path::new("/w"), None)
            .unwrap_err()
            .message
            .starts_with("path:"));
        assert!(absolute_input("", "source", Path::new("/w"), None)
            .unwrap_err()
            .message
            .starts_with("source:"));
    }

    #[test]
    #[cfg(unix)]
    fn a_shown_name_is_read_back_only_when_the_literal_does_not_exist() {
        use std::os::unix::ffi::OsStrExt;
        let tmp = tempfile::tempdir().unwrap();
        let d = crate::paths::canonical::canonicalize_existing(tmp.path()).unwrap();
        for name in [&b"a\nb"[..], b"x\\ny", b"x\ny", b"bad\xff", b"a\\x41"] {
            std::fs::write(d.join(OsStr::from_bytes(name)), "").unwrap();
        }
        std::fs::create_dir(d.join("dir\n")).unwrap();
        let pick = |raw: &str| prefer_shown_names(&d.join(raw), raw, |_| true);
        assert_eq!(pick("a\\nb"), Some(d.join("a\nb")));
        assert_eq!(
            pick("bad\\xff"),
            Some(d.join(OsStr::from_bytes(b"bad\xff")))
        );
        // The directory is found, the new name below it stays literal.
        assert_eq!(pick("dir\\n/new\\t"), Some(d.join("dir\n/new\\t")));
        // Literal names mean themselves: `x\ny` exists (and is shown `x\\ny`).
        assert_eq!(pick("x\\ny"), None);
        assert_eq!(pick("x\\\\ny"), Some(d.join("x\\ny")));
        assert_eq!(pick("a\\x41"), None);
        // Nothing by either name: literal.
        assert_eq!(pick("new\\n"), None);
        assert_eq!(pick("plain"), None);
        // Not allowed to look: literal.
        assert_eq!(
            prefer_shown_names(&d.join("a\\nb"), "a\\nb", |_| false),
            None
        );
    }

    /// Unix only: on Windows `\` separates names.
    #[cfg(unix)]
    #[test]
    fn shown_forms_of_long_names_are_measured_as_the_names() {
        let cwd = Path::new("/w");
        let long = "\\x1b".repeat(200);
        assert!(absolute_input(&long, "path", cwd, None).is_ok());
        assert!(absolute_input(&"\\x1b".repeat(256), "path", cwd, None).is_err());
        assert!(check_name_lengths(&cwd.join(&long), "path")
            .unwrap_err()
            .message
            .contains("800 bytes"));
        let deep = format!("{}/f", vec!["\\x1b\\x1b"; 1000].join("/"));
        assert!(deep.len() > PATH_MAX_BYTES);
        assert!(absolute_input(&deep, "path", cwd, None).is_ok());
    }

    #[test]
    fn a_trailing_slash_names_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), "").unwrap();
        let check = |raw: &str, p: &Path| file_path_not_directory_syntax(raw, "path", p);
        assert!(check("f/", &dir.path().join("f")).is_err());
        assert!(check("new/", &dir.path().join("new")).is_err());
        assert!(check("f", &dir.path().join("f")).is_ok());
        assert!(check("./", dir.path()).is_ok());
        assert!(check("/", Path::new("/")).is_ok());
    }
}

/// Windows only: type-checked by `check:targets`, run where the crate's tests run on Windows.
#[cfg(all(test, windows))]
mod windows_tests {
    use super::*;

    /// Device names (with any extension, in any case), names Win32 would strip and characters it
    /// does not allow in a name are refused before anything is opened; ordinary names pass, and
    /// so do a drive's colon and a verbatim prefix's question mark.
    #[test]
    fn reserved_and_stripped_names_are_refused() {
        let cwd = Path::new(r"C:\work");
        for raw in [
            "aux.txt",
            r"src\CON",
            "src/nul.tar.gz",
            "notes.",
            "dir /x",
            "a.txt:stream",
            r"C:\work\what?.txt",
            "gone\u{1b}]0;x\u{7}",
            r"\\?\C:\work\a|b",
        ] {
            let e = absolute_input(raw, "path", cwd, None).unwrap_err();
            assert!(e.message.starts_with("path: `"), "{raw}: {}", e.message);
        }
        for raw in [
            "auxiliary.txt",
            r"src\main.ts",
            "..",
            "a.b",
            r"C:\work\a.txt",
            r"\\?\C:\work\a.txt",
            r"\\server\share\a.txt",
        ] {
            assert!(absolute_input(raw, "path", cwd, None).is_ok(), "{raw}");
        }
    }
}
