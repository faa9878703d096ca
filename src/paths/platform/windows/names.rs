//! Which names may reach the NT layer. `NtCreateFile` takes a name relative to a directory
//! handle as it is: it does not strip what Win32 strips nor refuse what Win32 maps elsewhere, so
//! each name is checked here first (../../../../docs/windows.md#names-case-drive-letters-unc-reserved-names).

use std::ffi::OsStr;
use std::io;
use std::os::windows::ffi::OsStrExt;

use windows_sys::Win32::Foundation::ERROR_INVALID_NAME;

/// The longest name NTFS stores, in UTF-16 code units.
const NAME_MAX_UNITS: usize = 255;

/// `name` as UTF-16, if it is one plain component Windows can store and every program can open
/// again: not empty, not `.` or `..`, no `\`, `/`, `:` (an alternate data stream), NUL or other
/// character Win32 refuses in a name (`<>"|?*`, controls), not ending in `.` or a space (Win32
/// strips those), at most 255 units. Anything else is `ERROR_INVALID_NAME`.
pub fn component(name: &OsStr) -> io::Result<Vec<u16>> {
    let wide: Vec<u16> = name.encode_wide().collect();
    let refused = |unit: &u16| {
        char::from_u32(u32::from(*unit))
            .is_some_and(|c| matches!(c, '\\' | '/') || not_allowed_in_a_name(c))
    };
    let plain = !wide.is_empty()
        && wide.len() <= NAME_MAX_UNITS
        && name != "."
        && name != ".."
        && !wide.iter().any(refused)
        && !matches!(wide.last(), Some(&u) if u == u16::from(b'.') || u == u16::from(b' '));
    if plain {
        Ok(wide)
    } else {
        Err(io::Error::from_raw_os_error(ERROR_INVALID_NAME as i32))
    }
}

/// Whether Win32 refuses `c` in a name, separators aside: a control character or one of
/// `<>:"|?*` (a `:` names an alternate data stream).
pub fn not_allowed_in_a_name(c: char) -> bool {
    c < ' ' || matches!(c, '<' | '>' | ':' | '"' | '|' | '?' | '*')
}

/// Whether `name` is one Win32 maps to a device in every directory: `CON`, `PRN`, `AUX`, `NUL`,
/// `COM1`–`COM9`, `LPT1`–`LPT9` (and `COM¹²³`, `LPT¹²³`), in any case, alone or with any
/// extension (`aux.txt`), with spaces before the dot (`nul .txt`).
pub fn is_reserved_device(name: &OsStr) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    let stem = name.split('.').next().unwrap_or("").trim_end_matches(' ');
    let upper = stem.to_uppercase();
    match upper.as_str() {
        "CON" | "PRN" | "AUX" | "NUL" => true,
        _ => upper
            .strip_prefix("COM")
            .or_else(|| upper.strip_prefix("LPT"))
            .is_some_and(|digit| {
                matches!(
                    digit,
                    "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9" | "¹" | "²" | "³"
                )
            }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_pass_and_the_rest_is_refused() {
        for good in [
            "a",
            "a.txt",
            ".hidden",
            "naïve",
            "a b",
            "x".repeat(255).as_str(),
        ] {
            assert!(component(OsStr::new(good)).is_ok(), "{good}");
        }
        for bad in [
            "",
            ".",
            "..",
            "a\\b",
            "a/b",
            "a.txt:stream",
            "a.",
            "a ",
            "a?",
            "a*",
            "a\u{1}",
        ] {
            assert!(component(OsStr::new(bad)).is_err(), "{bad:?}");
        }
        assert!(component(OsStr::new(&"x".repeat(256))).is_err());
    }

    #[test]
    fn device_names_are_recognised_with_any_extension_and_case() {
        for reserved in [
            "CON",
            "con",
            "aux.txt",
            "Nul.tar.gz",
            "com1",
            "LPT9.log",
            "nul .txt",
            "COM²",
        ] {
            assert!(is_reserved_device(OsStr::new(reserved)), "{reserved}");
        }
        for fine in [
            "console",
            "auxiliary.txt",
            "com10",
            "lpt0",
            "nul_",
            "x.con",
            "COM",
            "éé",
        ] {
            assert!(!is_reserved_device(OsStr::new(fine)), "{fine}");
        }
    }
}
