//! The names the changes use beside the user's: temp names a later run recognises as ours, the
//! names of entries about to go, and the visible names of entries kept aside. Each fits in one
//! name (255 bytes on Unix, 255 UTF-16 units on Windows).

use std::ffi::{OsStr, OsString};
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::paths::BorrowedDir;

/// Marker in the names of our temporary files, so a later run can recognise leftovers.
pub const TEMP_MARKER: &str = ".agent-fs-tools.tmp";

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Whether `name` is one of our temporary files (an atomic write in flight, or one a crash left
/// behind): listings and searches skip them, as they are not the user's files.
pub fn is_temp_name(name: &OsStr) -> bool {
    name.as_encoded_bytes().ends_with(TEMP_MARKER.as_bytes())
}

/// Whether `name` is a temp name process `pid` made ([`temp_name`]: `….<pid>.<n>` + marker).
pub fn is_temp_name_of(name: &OsStr, pid: u32) -> bool {
    temp_counter_of(name, pid).is_some()
}

/// The counter `n` of a temp name process `pid` made (`….<pid>.<n>` + marker: [`temp_name`],
/// [`numbered_temp_name`], and the [`doomed_name`] and [`hold_name`] derived from them, which
/// keep their ends).
pub fn temp_counter_of(name: &OsStr, pid: u32) -> Option<u64> {
    let rest = name
        .as_encoded_bytes()
        .strip_suffix(TEMP_MARKER.as_bytes())?;
    let dot = rest.iter().rposition(|&b| b == b'.')?;
    let (before, n) = (&rest[..dot], &rest[dot + 1..]);
    if n.is_empty() || !n.iter().all(u8::is_ascii_digit) {
        return None;
    }
    if !before.ends_with(format!(".{pid}").as_bytes()) {
        return None;
    }
    std::str::from_utf8(n).ok()?.parse().ok()
}

/// A fresh, recognisable temporary name next to `name` (≤ 255 bytes).
pub fn temp_name(name: &OsStr) -> OsString {
    numbered_temp_name(name, reserve_temp_counters(1))
}

/// `count` counters of temp names no other name of this process takes, the first of them
/// returned: a change numbers the names it stages in one directory from them
/// ([`numbered_temp_name`]), so that one journal record answers for all of them.
pub fn reserve_temp_counters(count: u64) -> u64 {
    TEMP_COUNTER.fetch_add(count, Ordering::Relaxed)
}

/// The temporary name next to `name` with the counter `n` (one of
/// [`reserve_temp_counters`]'s): `.<name>.<pid>.<n>` + marker, as [`temp_name`] makes them.
pub fn numbered_temp_name(name: &OsStr, n: u64) -> OsString {
    let pid = std::process::id();
    sibling_name(".", name, &format!(".{pid}.{n}{TEMP_MARKER}"))
}

/// The name an entry under our temp name `temp` is moved to just before it is removed (see
/// [`set_aside`](super::set_aside)): `.gone` and as much of the end of `temp` as fits in 255
/// bytes (where its process and counter are), ending in [`TEMP_MARKER`]. Derived, not fresh, so
/// whoever answers for `temp` (a journal record) finds it should the removal be cut short.
pub fn doomed_name(temp: &OsStr) -> OsString {
    let marker = if is_temp_name(temp) { "" } else { TEMP_MARKER };
    fitted(".gone", temp, marker, Keep::End)
}

/// The name a staged file waits under while the file it replaces is moved aside, where a put
/// takes three renames instead of an exchange (see [`put_by_renames`](super::put_by_renames)):
/// `.held` and as much of the end of `temp` (the staged file's temp name) as fits in one name,
/// ending in [`TEMP_MARKER`]. Derived, as [`doomed_name`] is, and recorded by the change's
/// journal record, so recovery finds what a kill left there.
pub fn hold_name(temp: &OsStr) -> OsString {
    let marker = if is_temp_name(temp) { "" } else { TEMP_MARKER };
    fitted(".held", temp, marker, Keep::End)
}

/// Marker in the names of entries a commit moved aside and could not put back (see
/// [`keep_visible`]).
pub const KEPT_MARKER: &str = ".kept-by-agent-fs-tools";

/// A fresh, visible name next to `name` for an entry kept aside (≤ 255 bytes):
/// `<name>.kept-by-agent-fs-tools.<pid>.<n>`.
pub fn kept_name(name: &OsStr) -> OsString {
    sibling_name("", name, &format!("{KEPT_MARKER}.{}", unique()))
}

/// Moves the entry `from` of `dir` (one of our temp names, holding something that is not ours
/// to remove and cannot go back where it was) to a fresh [`kept_name`] of `name`, without
/// replacing anything, so that the user sees it and no cleanup of temp files removes it.
/// Returns the new name.
pub fn keep_visible(dir: BorrowedDir<'_>, from: &OsStr, name: &OsStr) -> io::Result<OsString> {
    loop {
        let kept = kept_name(name);
        match super::rename_noreplace(dir, from, dir, &kept) {
            Ok(()) => return Ok(kept),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// `<pid>.<n>`, unique in this machine for as long as this process runs.
fn unique() -> String {
    format!("{}.{}", std::process::id(), reserve_temp_counters(1))
}

/// `prefix`, as much of `name` as fits in 255 bytes, and `suffix`.
fn sibling_name(prefix: &str, name: &OsStr, suffix: &str) -> OsString {
    fitted(prefix, name, suffix, Keep::Start)
}

/// Which part of a name is kept when it must be cut.
#[derive(Clone, Copy)]
enum Keep {
    Start,
    End,
}

/// `prefix`, as much of the start or the end of `name` as fits with them in one name, and
/// `suffix` (both ASCII). A name holds 255 bytes on Unix.
#[cfg(unix)]
fn fitted(prefix: &str, name: &OsStr, suffix: &str, keep: Keep) -> OsString {
    use std::os::unix::ffi::OsStrExt;
    let bytes = name.as_bytes();
    let room = bytes.len().min(255 - prefix.len() - suffix.len());
    let kept = match keep {
        Keep::Start => &bytes[..room],
        Keep::End => &bytes[bytes.len() - room..],
    };
    OsStr::from_bytes(&[prefix.as_bytes(), kept, suffix.as_bytes()].concat()).to_owned()
}

/// `prefix`, as much of the start or the end of `name` as fits with them in one name, and
/// `suffix` (both ASCII). A name holds 255 UTF-16 units on Windows; a surrogate pair is never
/// cut in two.
#[cfg(windows)]
fn fitted(prefix: &str, name: &OsStr, suffix: &str, keep: Keep) -> OsString {
    use std::os::windows::ffi::{OsStrExt, OsStringExt};
    let units: Vec<u16> = name.encode_wide().collect();
    let mut room = units.len().min(255 - prefix.len() - suffix.len());
    let is_lead = |u: u16| (0xD800..0xDC00).contains(&u);
    let is_trail = |u: u16| (0xDC00..0xE000).contains(&u);
    let kept = match keep {
        Keep::Start => {
            if room > 0 && room < units.len() && is_lead(units[room - 1]) && is_trail(units[room]) {
                room -= 1;
            }
            &units[..room]
        }
        Keep::End => {
            let from = units.len() - room;
            if from > 0 && from < units.len() && is_trail(units[from]) && is_lead(units[from - 1]) {
                &units[from + 1..]
            } else {
                &units[from..]
            }
        }
    };
    let mut out: Vec<u16> = prefix.encode_utf16().collect();
    out.extend_from_slice(kept);
    out.extend(suffix.encode_utf16());
    OsString::from_wide(&out)
}
