//! Append steps ([`Act::Append`]), run on temporary directories: the bytes go in place through
//! the handle checked, with the change's record, or the file is left as it was.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::json;

use super::*;
use crate::call::plan::{Act, ChangePlan, Expect, Found, Keep, Place, Step};
use crate::change::Action;
use crate::hashing::sha256_hex;

const OLD: &str = "old line\n";
const NEW: &str = "new line\n";

struct Setup {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    ws: Workspace,
    heading: Heading,
}

/// A root holding `log.txt` (`OLD`) and `other.txt`.
fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let base = crate::paths::canonical::canonicalize_existing(tmp.path()).unwrap();
    let root = base.join("root");
    fs::create_dir(&root).unwrap();
    fs::write(root.join("log.txt"), OLD).unwrap();
    fs::write(root.join("other.txt"), "other\n").unwrap();
    let options = json!({ "root": root, "trash": { "dataDir": base.join("data") } });
    let ws = Workspace::new(&options, &[]).unwrap();
    let heading = Heading::for_test("test", "an append");
    Setup {
        _tmp: tmp,
        root,
        ws,
        heading,
    }
}

impl Setup {
    fn place(&self, rel: &str) -> Place {
        Place {
            anchor: self.root.clone(),
            dir: self.root.clone(),
            name: rel.into(),
        }
    }

    /// The file `rel` as read now.
    fn file(&self, rel: &str) -> Expect {
        let path = crate::paths::testing::below(&self.root, rel);
        Expect::File {
            stat: crate::paths::testing::lstat(&path).unwrap(),
            sha256: sha256_hex(&fs::read(&path).unwrap()),
            bytes: None,
        }
    }

    fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.root.join(rel)).unwrap()
    }

    fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(&self.root)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn records(&self) -> usize {
        fs::read_dir(self.ws.journal().dir()).map_or(0, Iterator::count)
    }

    fn history(&self) -> usize {
        self.ws.history().entries(&|_: &Path| true).unwrap().len()
    }

    /// Runs `steps` as one plan, listing log.txt as modified.
    fn run(&self, steps: Vec<Step>) -> Result<Executed, ExecuteError> {
        let plan = ChangePlan {
            consume: Vec::new(),
            steps,
        };
        let listed = |_: &Done| vec![FileChange::new(self.root.join("log.txt"), Action::Modified)];
        execute(&self.ws, plan, &self.heading, &CancelToken::new(), listed)
    }
}

fn append(s: &Setup, single_link: bool) -> Step {
    Step {
        at: s.place("log.txt"),
        expect: s.file("log.txt"),
        keep: Keep::Nothing,
        act: Act::Append {
            data: NEW.into(),
            single_link,
        },
    }
}

#[test]
fn an_append_is_made_in_place_with_its_record() {
    let s = setup();
    fs::hard_link(s.root.join("log.txt"), s.root.join("link.txt")).unwrap();
    let executed = s.run(vec![append(&s, false)]).unwrap();
    assert!(matches!(executed.recorded, Recorded::Written { .. }));
    assert_eq!(s.read("log.txt"), format!("{OLD}{NEW}"));
    assert_eq!(s.read("link.txt"), format!("{OLD}{NEW}"), "in place");
    assert_eq!(s.names(), ["link.txt", "log.txt", "other.txt"]);
    assert_eq!((s.records(), s.history()), (0, 1));
}

#[test]
fn a_file_with_other_links_is_refused_where_the_step_wants_one_link() {
    let s = setup();
    fs::hard_link(s.root.join("log.txt"), s.root.join("link.txt")).unwrap();
    let error = s.run(vec![append(&s, true)]).err().unwrap();
    assert!(
        matches!(error.failure, Failure::NotAsExpected(Found::Linked(2))),
        "{error:?}"
    );
    assert_eq!(s.read("link.txt"), OLD);
    assert_eq!((s.records(), s.history()), (0, 0));
}

#[test]
fn a_file_written_since_it_was_read_is_refused_and_kept() {
    let s = setup();
    let step = append(&s, true);
    // The same inode and size, other bytes: only the hash through the handle tells.
    fs::write(s.root.join("log.txt"), "OLD LINE\n").unwrap();
    let error = s.run(vec![step]).err().unwrap();
    assert!(
        matches!(error.failure, Failure::NotAsExpected(Found::Changed)),
        "{error:?}"
    );
    assert_eq!(s.read("log.txt"), "OLD LINE\n");
    assert_eq!((s.records(), s.history()), (0, 0));
}

#[test]
fn a_file_touched_but_holding_the_bytes_read_is_appended_to() {
    let s = setup();
    let step = append(&s, true);
    // Its times move (an editor saving the same bytes); its content is what was read.
    let file = fs::File::options()
        .write(true)
        .open(s.root.join("log.txt"))
        .unwrap();
    file.set_modified(std::time::SystemTime::UNIX_EPOCH)
        .unwrap();
    s.run(vec![step]).unwrap();
    assert_eq!(s.read("log.txt"), format!("{OLD}{NEW}"));
}

#[test]
fn a_file_swapped_in_under_the_name_is_refused() {
    let s = setup();
    let step = append(&s, true);
    fs::rename(s.root.join("other.txt"), s.root.join("log.txt")).unwrap();
    let error = s.run(vec![step]).err().unwrap();
    assert!(
        matches!(error.failure, Failure::NotAsExpected(Found::Replaced)),
        "{error:?}"
    );
    assert_eq!(s.read("log.txt"), "other\n");
}

#[test]
fn an_append_is_taken_back_when_a_later_step_fails() {
    let s = setup();
    let other = Step {
        at: s.place("other.txt"),
        expect: Expect::Entry {
            stat: crate::paths::testing::lstat(&s.root.join("other.txt")).unwrap(),
        },
        keep: Keep::Nothing,
        act: Act::Remove,
    };
    // Same inode, same kind: the executor's check passes; the journal's sees new bytes.
    fs::write(s.root.join("other.txt"), "written meanwhile, longer\n").unwrap();
    let error = s.run(vec![append(&s, true), other]).err().unwrap();
    assert_eq!(error.step, 1);
    assert!(
        matches!(error.failure, Failure::Changed { .. }),
        "{error:?}"
    );
    assert_eq!(s.read("log.txt"), OLD);
    assert_eq!(s.names(), ["log.txt", "other.txt"]);
    assert_eq!((s.records(), s.history()), (0, 0));
}

#[test]
fn an_append_pairs_only_with_a_file_read_and_keeps_nothing() {
    let s = setup();
    let free = Step {
        expect: Expect::Nothing,
        ..append(&s, true)
    };
    let kept = Step {
        keep: Keep::Archive,
        ..append(&s, true)
    };
    for case in [free, kept] {
        let error = s.run(vec![case]).err().unwrap();
        assert!(matches!(error.failure, Failure::Invalid(_)), "{error:?}");
    }
    assert_eq!(s.read("log.txt"), OLD);
}
