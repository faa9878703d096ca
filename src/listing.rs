//! `list_directory`'s engine: the entries of a directory, or of the tree below it, one line
//! each (`name/`, `link -> target`, `file (12 bytes, 2024-05-01)`), bounded by a count.
//!
//! Both listings read through the directory's descriptor, never by path, so what is listed is
//! the directory that was checked. Symlinks are shown as links with their own `lstat` data and
//! never descended. A direct listing is sorted by name (bytes) and `lstat`s only the entries it
//! shows; a recursive one is [`crate::walk`] (depth first in name order, `.git` and, unless
//! asked, what `.gitignore` ignores skipped), which `lstat`s only regular files and reads only
//! symlinks. Our own atomic-write temp files and the hidden trash directories are never listed.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::cancel::CancelToken;
use crate::error::ToolError;
use crate::paths::fsops;
use crate::paths::shown::Shown;
use crate::paths::EntryKind;
use crate::paths::{AsDir, Dir};
use crate::paths::{Sandbox, Target};
use crate::text::bounded::{bounded, lines_within, NOTE_ROOM};
use crate::text::quantity::bytes;
use crate::walk::{self, WalkOptions};

/// The lines of a listing, at most the bound asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    pub lines: Vec<String>,
    /// There were more entries than the bound.
    pub truncated: bool,
    /// How many entries there are in all, when known (a direct listing reads every name).
    pub total: Option<usize>,
}

impl Listing {
    /// The listing as the model reads it, and how many entries it shows: at most `max` entries
    /// and about `max_bytes` bytes (deep paths and long names), with a note saying how to reach
    /// the rest when it was cut: a recursive listing narrows to a subdirectory or to the direct
    /// entries; a flat directory has no smaller listing, so `glob` (the host's name for it, if
    /// offered) finds its files by pattern.
    pub fn text(
        &self,
        max: usize,
        max_bytes: usize,
        recursive: bool,
        glob: Option<&str>,
    ) -> (String, usize) {
        let shown = lines_within(&self.lines, max_bytes.saturating_sub(NOTE_ROOM));
        let mut text = self.lines[..shown].join("\n");
        if self.lines.is_empty() {
            text = "(empty directory)".into();
        }
        let cut_by_bytes = shown < self.lines.len();
        if self.truncated || cut_by_bytes {
            let of = match (self.total, cut_by_bytes) {
                (Some(total), _) => format!(" of {total}"),
                (None, true) if !self.truncated => format!(" of {}", self.lines.len()),
                _ => String::new(),
            };
            let (at, why) = if cut_by_bytes {
                (shown, format!(" (the output limit of {max_bytes} bytes)"))
            } else {
                (max, String::new())
            };
            let find = glob.map(|glob| {
                format!("use {glob} with a pattern (e.g. `*.rs`, or `name*`) to find files in it")
            });
            let rest = match (recursive, find) {
                (true, Some(find)) => format!(
                    "List a subdirectory, or list without recursive, to see the rest; or {find}."
                ),
                (true, None) => {
                    "List a subdirectory, or list without recursive, to see the rest.".to_owned()
                }
                (false, Some(find)) => format!("To see the rest, {find}."),
                (false, None) => {
                    "The entries after these, by name, cannot be listed in one call.".to_owned()
                }
            };
            text.push_str(&format!(
                "\n[Listing truncated at {at}{of} entries{why}, sorted by name. {rest}]"
            ));
        }
        // A single entry longer than the limit (a link to a very long target) is cut too.
        let text = bounded(&text, max_bytes, |left| {
            format!("[… {} more bytes not shown]", left.bytes)
        });
        (text, shown)
    }
}

/// The direct entries of `fd` (the directory `target`, open for reading), the first `max` by
/// name.
pub fn direct_entries(
    fd: Dir,
    target: &Target,
    sandbox: &Sandbox,
    max: usize,
) -> Result<Listing, ToolError> {
    let entries = fsops::read_entries(fd.as_dir(), &mut Vec::new())
        .map_err(|e| ToolError::io(&e, "list", &target.path))?;
    let mut names: Vec<Vec<u8>> = Vec::new();
    for (name, _) in entries {
        if fsops::is_temp_name(&name) || sandbox.is_hidden(&target.path.join(&name)) {
            continue;
        }
        names.push(crate::paths::names::into_vec(name));
    }
    names.sort();
    let truncated = names.len() > max;
    let mut lines = Vec::with_capacity(names.len().min(max));
    // The data directory reached under another name (a bind mount, a macOS firmlink).
    let hidden = sandbox.hidden_identities();
    for name in names.iter().take(max) {
        let name = crate::paths::names::from_bytes(name);
        let Some(stat) = fsops::lstat_at(fd.as_dir(), name)
            .map_err(|e| ToolError::io(&e, "list", &target.path))?
        else {
            continue; // removed while listing
        };
        if hidden.contains(&stat.id()) {
            continue;
        }
        let link = || {
            fsops::read_link_at(fd.as_dir(), name)
                .ok()
                .map(PathBuf::from)
        };
        lines.push(entry_line(
            Path::new(name),
            EntryKind::of(&stat),
            stat.size,
            stat.mtime.0,
            link,
        ));
    }
    Ok(Listing {
        lines,
        truncated,
        total: Some(names.len()),
    })
}

/// The whole tree below `dir` (open, at `listed`), the first `max` entries in walk order, `.git`
/// and (unless `include_ignored`) ignored files skipped.
pub fn walk_tree(
    dir: Dir,
    listed: &Target,
    sandbox: &Sandbox,
    include_ignored: bool,
    max: usize,
    cancel: &CancelToken,
) -> Result<Listing, ToolError> {
    let options = WalkOptions {
        sandbox,
        include_ignored,
        limit: Some(max),
        cancel,
    };
    let walked = walk::walk(dir, listed, &options, |entry| {
        let (kind, size, mtime) = match entry.kind {
            EntryKind::File => {
                // Whatever it is now, as of this lstat (or gone: removed while listing).
                let stat = fsops::lstat_at(entry.dir, entry.name).ok()??;
                (EntryKind::of(&stat), stat.size, stat.mtime.0)
            }
            kind => (kind, 0, 0),
        };
        let link = || {
            fsops::read_link_at(entry.dir, entry.name)
                .ok()
                .map(PathBuf::from)
        };
        Some(entry_line(entry.rel, kind, size, mtime, link))
    })?;
    Ok(Listing {
        lines: walked.items,
        truncated: walked.truncated,
        total: None,
    })
}

/// `dir/`, `link -> target`, `file (N bytes, YYYY-MM-DD)`.
fn entry_line(
    rel: &Path,
    kind: EntryKind,
    size: u64,
    mtime: i64,
    link: impl FnOnce() -> Option<PathBuf>,
) -> String {
    let name = rel.shown();
    match kind {
        EntryKind::Directory => format!("{name}/"),
        EntryKind::Symlink => match link() {
            Some(target) => format!("{name} -> {}", target.shown()),
            None => format!("{name} -> (unreadable link)"),
        },
        EntryKind::File => format!("{name} ({}, {})", bytes(size), date(mtime)),
        EntryKind::Special => format!("{name} (special file)"),
    }
}

/// The UTC date of a Unix time, `YYYY-MM-DD`.
fn date(unix_seconds: i64) -> String {
    let time = if unix_seconds >= 0 {
        UNIX_EPOCH + Duration::from_secs(unix_seconds as u64)
    } else {
        UNIX_EPOCH
    };
    let stamp = humantime::format_rfc3339_seconds(
        time.max(UNIX_EPOCH)
            .min(SystemTime::UNIX_EPOCH + Duration::from_secs(253_402_300_799)),
    );
    stamp.to_string()[..10].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_lines_follow_the_spec() {
        assert_eq!(
            entry_line(Path::new("src"), EntryKind::Directory, 0, 0, || None),
            "src/"
        );
        assert_eq!(
            entry_line(Path::new("l"), EntryKind::Symlink, 0, 0, || Some(
                PathBuf::from("../x")
            )),
            "l -> ../x"
        );
        assert_eq!(
            entry_line(
                Path::new("a/b.txt"),
                EntryKind::File,
                12,
                1_700_000_000,
                || None
            ),
            "a/b.txt (12 bytes, 2023-11-14)"
        );
    }

    #[test]
    fn names_and_link_targets_are_shown_escaped() {
        // Bytes that are not UTF-8 make no Windows name (`paths::names`' Windows tests).
        #[cfg(unix)]
        {
            let name = Path::new(crate::paths::names::from_bytes(b"a\nb\xff"));
            assert_eq!(
                entry_line(name, EntryKind::Directory, 0, 0, || None),
                "a\\nb\\xff/"
            );
        }
        assert_eq!(
            entry_line(Path::new("l"), EntryKind::Symlink, 0, 0, || Some(
                PathBuf::from("\x1b]0;t\x07")
            )),
            "l -> \\x1b]0;t\\x07"
        );
    }

    #[test]
    fn the_text_says_empty_or_how_to_see_the_rest() {
        let empty = Listing {
            lines: vec![],
            truncated: false,
            total: Some(0),
        };
        let text = |l: &Listing, max, recursive, glob| l.text(max, 65536, recursive, glob).0;
        assert_eq!(text(&empty, 500, false, Some("glob")), "(empty directory)");
        let flat = Listing {
            lines: vec!["a".into(), "b/".into()],
            truncated: true,
            total: Some(7),
        };
        assert_eq!(
            text(&flat, 2, false, Some("glob")),
            "a\nb/\n[Listing truncated at 2 of 7 entries, sorted by name. To see the rest, use glob with a pattern (e.g. `*.rs`, or `name*`) to find files in it.]"
        );
        assert!(text(&flat, 2, false, None)
            .ends_with("The entries after these, by name, cannot be listed in one call.]"));
        let tree = Listing {
            total: None,
            ..flat
        };
        assert!(text(&tree, 2, true, None).ends_with(
            "[Listing truncated at 2 entries, sorted by name. List a subdirectory, or list without recursive, to see the rest.]"
        ));
    }

    /// Long names and deep paths: the listing stops near the output limit, in bytes, and says
    /// where and why; the count of entries it shows is what it shows.
    #[test]
    fn a_listing_of_long_paths_is_bounded_in_bytes() {
        let deep = Listing {
            lines: (0..500)
                .map(|i| format!("{}/{i}.txt", "d".repeat(3000)))
                .collect(),
            truncated: false,
            total: None,
        };
        let (text, shown) = deep.text(500, 65536, true, Some("glob"));
        assert!(text.len() <= 65536, "{}", text.len());
        assert_eq!(text.lines().count(), shown + 1);
        assert!(
            text.ends_with(&format!("\n[Listing truncated at {shown} of 500 entries (the output limit of 65536 bytes), sorted by name. List a subdirectory, or list without recursive, to see the rest; or use glob with a pattern (e.g. `*.rs`, or `name*`) to find files in it.]")),
            "{}",
            &text[text.len() - 300..]
        );
        let one = Listing {
            lines: vec![format!("l -> {}", "t".repeat(100_000))],
            truncated: false,
            total: Some(1),
        };
        let (text, shown) = one.text(500, 65536, false, None);
        assert!(text.len() <= 65536 && shown == 1, "{}", text.len());
        assert!(
            text.ends_with(" more bytes not shown]"),
            "{}",
            &text[text.len() - 100..]
        );
    }
}
