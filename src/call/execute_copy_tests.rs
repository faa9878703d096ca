//! Copy steps ([`Act::Copy`]), run on temporary directories: a copy is built beside its place
//! and placed by the commit, or nothing of it is left.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::json;

use super::stage::CopyFailed;
use super::*;
use crate::call::plan::{Act, ChangePlan, Expect, Found, Keep, Place, Step};
use crate::change::Action;
use crate::hashing::sha256_hex;
use crate::paths::fsops::race_point::{self, RacePoint};
use crate::paths::testing::{kept_mode, symlink, Modes};
use crate::paths::trees::{CopyCounts, CopyError};
use crate::paths::Stat;

struct Setup {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
    ws: Workspace,
    heading: Heading,
}

/// A root holding `f.txt` (mode 0640), `link -> f.txt` and the tree `t/` (`t/a/b.txt` mode
/// 0600, `t/a/up -> ../../outside`, `t/empty/`), beside a file outside the root.
fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let base = crate::paths::canonical::canonicalize_existing(tmp.path()).unwrap();
    let root = base.join("root");
    fs::create_dir_all(root.join("t/a")).unwrap();
    fs::create_dir(root.join("t/empty")).unwrap();
    fs::write(root.join("f.txt"), "file\n").unwrap();
    fs::set_permissions(root.join("f.txt"), fs::Permissions::from_mode(0o640)).unwrap();
    symlink("f.txt", root.join("link")).unwrap();
    fs::write(root.join("t/a/b.txt"), "b\n").unwrap();
    fs::set_permissions(root.join("t/a/b.txt"), fs::Permissions::from_mode(0o600)).unwrap();
    symlink("../../../outside", root.join("t/a/up")).unwrap();
    fs::write(base.join("outside"), "SECRET\n").unwrap();
    let options = json!({ "root": root, "trash": { "dataDir": base.join("data") } });
    let ws = Workspace::new(&options, &[]).unwrap();
    let heading = Heading::for_test("test", "a copy");
    Setup {
        _tmp: tmp,
        base,
        root,
        ws,
        heading,
    }
}

impl Setup {
    fn place(&self, rel: &str) -> Place {
        let path = crate::paths::testing::below(&self.root, rel);
        Place {
            anchor: self.root.clone(),
            dir: path.parent().unwrap().to_owned(),
            name: path.file_name().unwrap().to_owned(),
        }
    }

    fn stat(&self, rel: &str) -> Stat {
        crate::paths::testing::lstat(&self.root.join(rel)).unwrap()
    }

    /// Copying `from` to the free name `to`.
    fn copy(&self, from: &str, to: &str) -> Step {
        Step {
            at: self.place(to),
            expect: Expect::Nothing,
            keep: Keep::Nothing,
            act: Act::Copy {
                from: self.place(from),
                source: self.stat(from),
                below: PathBuf::new(),
            },
        }
    }

    /// Copying `from` to `top/below`, where `top` (free) is built with `below` in it.
    fn copy_below(&self, from: &str, top: &str, below: &str) -> Step {
        let mut step = self.copy(from, top);
        if let Act::Copy { below: b, .. } = &mut step.act {
            *b = PathBuf::from(below);
        }
        step
    }

    fn run(&self, steps: Vec<Step>) -> Result<Executed, ExecuteError> {
        let plan = ChangePlan {
            consume: Vec::new(),
            steps,
        };
        let listed = |_: &Done| vec![FileChange::new(self.root.join("listed"), Action::Added)];
        execute(&self.ws, plan, &self.heading, &CancelToken::new(), listed)
    }

    /// Every name under the root, sorted (temp names included: none may be left).
    fn names(&self) -> Vec<String> {
        crate::paths::testing::names_below(&self.root)
    }

    fn records(&self) -> usize {
        fs::read_dir(self.ws.journal().dir()).map_or(0, Iterator::count)
    }

    fn history(&self) -> usize {
        self.ws.history().entries(&|_: &Path| true).unwrap().len()
    }
}

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().permissions().mode() & 0o7777
}

fn copy_error(e: &ExecuteError) -> &CopyError {
    match &e.failure {
        Failure::Io(e) => CopyFailed::of(e).expect("a copy's failure"),
        other => panic!("not a copy's failure: {other:?}"),
    }
}

/// A file is copied with its bytes, mode and mtime, into parents made for it; the step reports
/// its digest; nothing of the build is left.
#[test]
fn a_file_is_copied_with_its_mode_and_times_into_new_parents() {
    let s = setup();
    let executed = s
        .run(vec![s.copy_below("f.txt", "new", "deep/g.txt")])
        .unwrap();
    let copy = s.root.join("new/deep/g.txt");
    assert_eq!(fs::read_to_string(&copy).unwrap(), "file\n");
    assert_eq!(mode(&copy), kept_mode(0o640));
    let (source, copied) = (s.stat("f.txt"), s.stat("new/deep/g.txt"));
    assert_eq!(source.mtime, copied.mtime);
    assert_ne!(source.identity(), copied.identity());
    let made = executed.done.copies[0].as_ref().unwrap();
    assert_eq!(made.sha256.as_deref(), Some(sha256_hex(b"file\n").as_str()));
    assert_eq!(made.counts, CopyCounts::default());
    assert_eq!(
        s.names(),
        [
            "f.txt",
            "link",
            "new",
            "new/deep",
            "new/deep/g.txt",
            "t",
            "t/a",
            "t/a/b.txt",
            "t/a/up",
            "t/empty"
        ]
    );
    assert_eq!((s.records(), s.history()), (0, 1));
}

/// A symlink is copied as a link (its target text), never through it.
#[test]
fn a_link_is_copied_as_a_link() {
    let s = setup();
    s.run(vec![s.copy("link", "link2")]).unwrap();
    let copy = s.root.join("link2");
    assert!(fs::symlink_metadata(&copy).unwrap().is_symlink());
    assert_eq!(fs::read_link(&copy).unwrap(), Path::new("f.txt"));
}

/// A tree is copied whole (modes, links inside as links, empty directories), and counted.
#[test]
fn a_tree_is_copied_whole_with_its_links_as_links() {
    let s = setup();
    let executed = s.run(vec![s.copy("t", "u")]).unwrap();
    assert_eq!(fs::read_to_string(s.root.join("u/a/b.txt")).unwrap(), "b\n");
    assert_eq!(mode(&s.root.join("u/a/b.txt")), kept_mode(0o600));
    assert_eq!(
        fs::read_link(s.root.join("u/a/up")).unwrap(),
        Path::new("../../../outside")
    );
    assert!(s.root.join("u/empty").is_dir());
    let made = executed.done.copies[0].as_ref().unwrap();
    let counts = CopyCounts {
        files: 1,
        dirs: 2,
        links: 1,
    };
    assert_eq!((made.counts, made.sha256.as_deref()), (counts, None));
}

/// An overwrite archives the destination, removes it and takes its name with the copy.
#[test]
fn an_overwrite_keeps_the_destination_then_copies_over_it() {
    let s = setup();
    let removed = Step {
        at: s.place("t"),
        expect: Expect::Entry { stat: s.stat("t") },
        keep: Keep::Archive,
        act: Act::Remove,
    };
    let executed = s.run(vec![removed, s.copy("f.txt", "t")]).unwrap();
    assert_eq!(fs::read_to_string(s.root.join("t")).unwrap(), "file\n");
    let archived = executed.done.archives[0].as_ref().unwrap();
    assert!(archived.archive_path.exists());
    assert_eq!(s.records(), 0);
}

/// A FIFO deep inside the tree stops the copy: nothing is left of it (no temp names, no
/// parents made for it, no journal record) and nothing is recorded.
/// A FIFO: Unix only (Windows has none in a directory).
#[cfg(unix)]
#[test]
fn a_special_file_deep_inside_leaves_nothing() {
    let s = setup();
    crate::paths::platform::make_fifo(&s.root.join("t/a/pipe"));
    let before = s.names();
    let error = s.run(vec![s.copy_below("t", "new", "u")]).err().unwrap();
    assert!(
        matches!(copy_error(&error), CopyError::Special(at) if at == Path::new("a/pipe")),
        "{error:?}"
    );
    assert_eq!(s.names(), before);
    assert_eq!((s.records(), s.history()), (0, 0));
}

/// A file of the tree swapped for a link to a file outside the root while the copy looks at it
/// is never read through: the copy fails and leaves nothing, and the outside bytes are nowhere.
#[test]
fn a_link_swapped_in_during_the_copy_is_never_followed() {
    let s = setup();
    let file = s.root.join("t/a/cp-swapped");
    fs::write(&file, "inside\n").unwrap();
    let link = s.base.join("cp-link");
    symlink(s.base.join("outside"), &link).unwrap();
    let (from, to) = (file.clone(), link.clone());
    race_point::at(RacePoint::CopyLooked, "cp-swapped", move || {
        crate::testing::exchange(&from, &to)
    });
    let before = s.names();
    let error = s.run(vec![s.copy("t", "u")]).err().unwrap();
    assert!(matches!(copy_error(&error), CopyError::Io(..)), "{error:?}");
    assert_eq!(s.names(), before);
    assert!(
        fs::symlink_metadata(&file).unwrap().is_symlink(),
        "the swap happened"
    );
    assert_eq!(s.records(), 0);
}

/// A source replaced after the plan is refused before anything is built.
#[test]
fn a_source_replaced_after_the_plan_is_refused() {
    let s = setup();
    let step = s.copy("f.txt", "g.txt");
    // Renamed away rather than removed, so the new file cannot reuse its inode.
    fs::rename(s.root.join("f.txt"), s.root.join("f.old")).unwrap();
    fs::write(s.root.join("f.txt"), "another\n").unwrap();
    let error = s.run(vec![step]).err().unwrap();
    assert!(matches!(
        error.failure,
        Failure::NotAsExpected(Found::Replaced)
    ));
    assert!(!s.root.join("g.txt").exists());
}

/// A copy only takes a free name; a plan that copies over an entry it expects is refused.
#[test]
fn a_copy_over_an_expected_entry_is_a_plan_mistake() {
    let s = setup();
    let mut step = s.copy("f.txt", "link");
    step.expect = Expect::Entry {
        stat: s.stat("link"),
    };
    let error = s.run(vec![step]).err().unwrap();
    assert!(matches!(error.failure, Failure::Invalid(_)));
    let taken = s.run(vec![s.copy("f.txt", "link")]).err().unwrap();
    assert!(matches!(
        taken.failure,
        Failure::NotAsExpected(Found::Taken)
    ));
    assert_eq!(
        crate::paths::testing::stat(&s.root.join("f.txt"))
            .unwrap()
            .nlink,
        1
    );
}
