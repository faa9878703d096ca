//! Putting a staged file in place of the planned one where two names cannot be exchanged
//! (Windows has no `RENAME_EXCHANGE`; ../../../docs/windows.md#renames-that-do-not-replace-and-the-swap):
//! three no-replace renames instead of [`swap_in`](super::swap_in)'s one exchange, ending in the
//! same state — the staged file under the name, the planned file under the staged file's temp
//! name, checked there — for the change's clean-up or undo to finish.
//!
//! 1. the staged file, `temp`, goes to its hold name ([`hold_name`](super::hold_name), which the
//!    change's journal record names), so that `temp` is free;
//! 2. the planned file goes from `name` to `temp`, and is checked there as an exchange's is
//!    (the same file, the same content, nobody writing it); anything else goes back;
//! 3. the staged file goes from the hold name to `name`, free since step 2.
//!
//! What it costs: between steps 2 and 3 the name holds nothing (a reader sees "not found"). What
//! it keeps: every rename is no-replace, so nothing is ever overwritten, and each file always
//! has one of three names the journal record knows, so recovery after a kill at any point puts
//! both back (`journal/commit/undo.rs`). Should someone take the free name in that instant, our
//! staged file goes and the planned file is kept under a visible
//! [`kept_name`](super::kept_name): the write is `Changed`, and nothing is lost.

use std::ffi::{OsStr, OsString};
use std::io;

use super::race_point::{self, RacePoint};
use super::replace::{compare, take_free_name, Found, Planned};
use super::{keep_visible, rename_noreplace, unlink_at, ReplaceError, Replacing};
use crate::paths::{platform, process, BorrowedDir};

/// Whether a change of many files exchanges each staged file with the planned one
/// ([`swap_in`](super::swap_in)); where it does not (Windows), it puts by renames
/// ([`put_by_renames`]).
pub fn exchanges_names() -> bool {
    platform::exchanges_names()
}

/// Puts the staged `temp` in place of `name`, only as planned (`replacing`, as for
/// [`swap_in`](super::swap_in)), by three no-replace renames through `hold` (see the module
/// docs). Where nothing was to be replaced, `temp` takes the free name. Afterwards, as after
/// `swap_in`, the planned file is under `temp`: the caller removes it once the whole change is in
/// place, or puts it back. On any failure `temp` and `hold` are gone and `name` holds what it
/// held — or, if the name was taken while it was free, the planned file is kept under a visible
/// name the error gives.
pub fn put_by_renames(
    dir: BorrowedDir<'_>,
    temp: &OsStr,
    hold: &OsStr,
    name: &OsStr,
    replacing: Replacing<'_>,
) -> Result<(), ReplaceError> {
    race_point::reached(RacePoint::BeforeReplace, name);
    let Replacing::File { stat, same_content } = replacing else {
        return take_free_name(dir, temp, name);
    };
    let planned = Planned { stat, same_content };
    if let Err(e) = rename_noreplace(dir, temp, dir, hold) {
        let _ = unlink_at(dir, temp);
        return Err(e.into());
    }
    process::crash_point("put-held");
    if let Err(e) = rename_noreplace(dir, name, dir, temp) {
        let _ = unlink_at(dir, hold);
        return Err(if e.kind() == io::ErrorKind::NotFound {
            ReplaceError::Changed {
                kept: None,
                being_written: false,
            }
        } else {
            e.into()
        });
    }
    process::crash_point("put-aside");
    race_point::reached(RacePoint::NameFree, name);
    // `temp` holds what `name` held; `name` is free.
    let found = compare(dir, temp, &planned);
    if !matches!(found, Ok(Found::Planned(_))) {
        let _ = unlink_at(dir, hold);
        let kept = put_back(dir, temp, name);
        return Err(match found {
            Err(e) if kept.is_none() => e.into(),
            found => ReplaceError::Changed {
                kept,
                being_written: matches!(found, Ok(Found::BeingWritten)),
            },
        });
    }
    drop(found);
    if let Err(e) = rename_noreplace(dir, hold, dir, name) {
        let _ = unlink_at(dir, hold);
        let kept = put_back(dir, temp, name);
        return Err(
            if e.kind() == io::ErrorKind::AlreadyExists || kept.is_some() {
                ReplaceError::Changed {
                    kept,
                    being_written: false,
                }
            } else {
                e.into()
            },
        );
    }
    Ok(())
}

/// Puts what was moved from `name` to `temp` back under `name` if it is free; else (someone took
/// it meanwhile) keeps it under a visible name, which this returns.
fn put_back(dir: BorrowedDir<'_>, temp: &OsStr, name: &OsStr) -> Option<OsString> {
    match rename_noreplace(dir, temp, dir, name) {
        Ok(()) => None,
        Err(_) => Some(keep_visible(dir, temp, name).unwrap_or_else(|_| temp.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::fsops::{lstat_at, open_dir, same_bytes, temp_name, KEPT_MARKER};
    use crate::paths::{AsDir, Dir, Stat};
    use std::fs::File;
    use std::path::PathBuf;

    /// A directory holding `<tag>.txt` ("old") and our staged new content ("new") under a temp
    /// name of it; names are prefixed with `tag` so that race points of parallel tests do not
    /// meet.
    struct Staged {
        _tmp: tempfile::TempDir,
        path: PathBuf,
        dir: Dir,
        name: OsString,
        temp: OsString,
        hold: OsString,
        planned: Stat,
    }

    impl Staged {
        fn new(tag: &str) -> Self {
            let tmp = tempfile::tempdir().unwrap();
            let path = crate::paths::canonical::canonicalize_existing(tmp.path()).unwrap();
            let name = OsString::from(format!("{tag}.txt"));
            std::fs::write(path.join(&name), "old").unwrap();
            let temp = temp_name(&name);
            std::fs::write(path.join(&temp), "new").unwrap();
            let dir = open_dir(&path, &path, false).unwrap();
            let planned = lstat_at(dir.as_dir(), &name).unwrap().unwrap();
            let hold = crate::paths::fsops::hold_name(&temp);
            Staged {
                _tmp: tmp,
                path,
                dir,
                name,
                temp,
                hold,
                planned,
            }
        }

        fn put(&self) -> Result<(), ReplaceError> {
            let holds_old = |file: &mut File| same_bytes(file, b"old");
            let replacing = Replacing::File {
                stat: &self.planned,
                same_content: &holds_old,
            };
            put_by_renames(
                self.dir.as_dir(),
                &self.temp,
                &self.hold,
                &self.name,
                replacing,
            )
        }

        /// The names in the directory and what each holds.
        fn contents(&self) -> Vec<(OsString, String)> {
            let mut found: Vec<_> = std::fs::read_dir(&self.path)
                .unwrap()
                .map(|e| {
                    let e = e.unwrap();
                    (e.file_name(), std::fs::read_to_string(e.path()).unwrap())
                })
                .collect();
            found.sort();
            found
        }
    }

    /// As after an exchange: ours under the name, the planned file under the temp name.
    #[test]
    fn the_staged_file_takes_the_name_and_the_planned_one_its_temp_name() {
        let s = Staged::new("pr-done");
        s.put().unwrap();
        let mut expected = vec![
            (s.name.clone(), "new".to_owned()),
            (s.temp.clone(), "old".to_owned()),
        ];
        expected.sort();
        assert_eq!(s.contents(), expected);
        let aside = lstat_at(s.dir.as_dir(), &s.temp).unwrap().unwrap();
        assert_eq!(
            aside.identity(),
            s.planned.identity(),
            "the planned file itself"
        );
    }

    /// A file written in place after planning is put back, and nothing of ours is left.
    #[test]
    fn a_file_written_in_place_goes_back_under_its_name() {
        let s = Staged::new("pr-in-place");
        let file = s.path.join(&s.name);
        race_point::at(RacePoint::BeforeReplace, "pr-in-place.txt", move || {
            std::fs::write(file, "saved").unwrap()
        });
        let result = s.put();
        assert!(
            matches!(
                result,
                Err(ReplaceError::Changed {
                    kept: None,
                    being_written: false
                })
            ),
            "{result:?}"
        );
        assert_eq!(s.contents(), [(s.name.clone(), "saved".to_owned())]);
    }

    /// Someone makes a new file under the name in the instant it is free: theirs stays, ours
    /// goes, and the planned file is kept under a visible name, not lost.
    #[test]
    fn a_file_made_while_the_name_is_free_stays_and_the_planned_one_is_kept() {
        let s = Staged::new("pr-free");
        let file = s.path.join(&s.name);
        race_point::at(RacePoint::NameFree, "pr-free.txt", move || {
            std::fs::write(file, "theirs").unwrap()
        });
        let kept = match s.put() {
            Err(ReplaceError::Changed {
                kept: Some(kept),
                being_written: false,
            }) => kept,
            other => panic!("expected Changed with a kept file, got {other:?}"),
        };
        assert!(kept.to_string_lossy().contains(KEPT_MARKER), "{kept:?}");
        let mut expected = vec![
            (s.name.clone(), "theirs".to_owned()),
            (kept, "old".to_owned()),
        ];
        expected.sort();
        assert_eq!(s.contents(), expected);
    }

    /// The name gone before the put: nothing to replace, nothing of ours left.
    #[test]
    fn a_name_removed_before_the_put_stays_free() {
        let s = Staged::new("pr-gone");
        let file = s.path.join(&s.name);
        race_point::at(RacePoint::BeforeReplace, "pr-gone.txt", move || {
            std::fs::remove_file(file).unwrap()
        });
        assert!(matches!(
            s.put(),
            Err(ReplaceError::Changed { kept: None, .. })
        ));
        assert_eq!(s.contents(), []);
    }
}
