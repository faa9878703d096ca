//! Changes of many entries: applied whole or not at all, in process and after a kill.

use super::apply::apply_step;
use super::*;
use crate::datadir::DataDir;
use crate::journal::{Record, Recovered};
use crate::paths::fsops::race_point::{self, RacePoint};
use crate::paths::Sandbox;
use serde::Deserialize;
use serde_json::Value;
use std::ffi::OsString;
use std::fs;
use std::sync::Arc;

/// No copies of someone else's bytes: the records recovered here have none.
pub(super) fn no_copies(s: &Setup) -> super::splice::ForeignCopies<'_> {
    super::splice::ForeignCopies::new(&s.journal.store, OsStr::new("none.json"))
}

pub(super) struct Setup {
    _tmp: tempfile::TempDir,
    pub(super) root: PathBuf,
    pub(super) journal: Journal,
}

pub(super) fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let base = crate::paths::canonical::canonicalize_existing(tmp.path()).unwrap();
    let root = base.join("root");
    fs::create_dir(&root).unwrap();
    fs::write(root.join("a.txt"), "a old\n").unwrap();
    fs::write(root.join("b.txt"), "b old\n").unwrap();
    fs::write(root.join("gone.txt"), "to remove\n").unwrap();
    let journal = Journal::new(Arc::new(DataDir::new(base.join("data"))), "journal/x");
    Setup {
        _tmp: tmp,
        root,
        journal,
    }
}

pub(super) fn no_sequel(_: &Value) -> io::Result<()> {
    unreachable!("these records carry no sequel")
}

pub(super) fn dir(root: &Path) -> Dir {
    fsops::open_dir(root, root, false).unwrap()
}

pub(super) fn planned(root: &Path, name: &str) -> PlannedFile {
    let stat = fsops::lstat_at(dir(root).as_dir(), OsStr::new(name))
        .unwrap()
        .unwrap();
    PlannedFile::new(stat, &fs::read(root.join(name)).unwrap())
}

/// `data` put at `name` in `root` over the file `plan` read there.
fn put_over(commit: &mut Commit<'_>, root: &Path, name: &str, plan: PlannedFile, data: Vec<u8>) {
    let stat = plan.stat;
    commit
        .put(
            dir(root),
            root,
            OsStr::new(name),
            data,
            Some(&stat),
            Some(plan),
        )
        .unwrap();
}

/// a.txt and b.txt rewritten, c.txt added, gone.txt removed.
fn stage_all<'a>(s: &'a Setup) -> Commit<'a> {
    stage_all_in(s, s.journal.commit())
}

/// [`stage_all`] in `commit`.
pub(super) fn stage_all_in<'a>(s: &'a Setup, mut commit: Commit<'a>) -> Commit<'a> {
    let root = &s.root;
    for (name, data) in [("a.txt", "a new\n"), ("b.txt", "b new\n")] {
        put_over(&mut commit, root, name, planned(root, name), data.into());
    }
    commit
        .put(
            dir(root),
            root,
            OsStr::new("c.txt"),
            b"c new\n".to_vec(),
            None,
            None,
        )
        .unwrap();
    let gone = Snapshot::of(&planned(root, "gone.txt").stat);
    commit
        .remove(dir(root), root, OsStr::new("gone.txt"), gone)
        .unwrap();
    staged(commit)
}

/// `commit` with its puts staged, as the apply stages them first: what tests that make its
/// steps one by one need.
pub(super) fn staged(mut commit: Commit<'_>) -> Commit<'_> {
    commit.stage_puts().unwrap();
    commit
}

pub(super) fn tree(root: &Path) -> Vec<(String, String)> {
    let mut entries: Vec<_> = fs::read_dir(root)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            (name, fs::read_to_string(e.path()).unwrap_or_default())
        })
        .collect();
    entries.sort();
    entries
}

pub(super) fn before() -> Vec<(String, String)> {
    vec![
        ("a.txt".into(), "a old\n".into()),
        ("b.txt".into(), "b old\n".into()),
        ("gone.txt".into(), "to remove\n".into()),
    ]
}

pub(super) fn after() -> Vec<(String, String)> {
    vec![
        ("a.txt".into(), "a new\n".into()),
        ("b.txt".into(), "b new\n".into()),
        ("c.txt".into(), "c new\n".into()),
    ]
}

#[test]
fn every_step_is_made_and_nothing_is_left_behind() {
    let s = setup();
    assert_eq!(tree(&s.root), before());
    stage_all(&s).apply().unwrap();
    assert_eq!(tree(&s.root), after());
    assert_eq!(s.journal.store.names().unwrap(), Vec::<OsString>::new());
}

#[test]
fn a_change_of_many_files_writes_them_when_it_is_applied() {
    let s = setup();
    let mut commit = s.journal.commit();
    // More than the files staged at once, so that each of them stages several.
    let names: Vec<String> = (0..4 * crate::parallel::FILES_AT_ONCE + 3)
        .map(|i| format!("n{i}.txt"))
        .collect();
    for name in &names {
        let data = name.clone().into_bytes();
        let root = &s.root;
        commit
            .put(dir(root), root, OsStr::new(name), data, None, None)
            .unwrap();
    }
    assert_eq!(
        tree(&s.root),
        before(),
        "nothing is written before the apply"
    );
    commit.apply().unwrap();
    for name in &names {
        assert_eq!(fs::read_to_string(s.root.join(name)).unwrap(), *name);
    }
    assert_eq!(tree(&s.root).len(), before().len() + names.len());
    assert_eq!(s.journal.store.names().unwrap(), Vec::<OsString>::new());
}

#[test]
fn a_put_that_cannot_be_staged_stops_the_change_and_names_its_step() {
    let s = setup();
    let root = &s.root;
    let mut commit = s.journal.commit();
    for name in ["first.txt", "second.txt", "third.txt"] {
        let data = name.as_bytes().to_vec();
        commit
            .put(dir(root), root, OsStr::new(name), data, None, None)
            .unwrap();
    }
    // Another program takes the second file's temp name before the change is applied.
    let taken = commit.steps[1].record.aside.clone();
    fs::write(root.join(&taken), "someone else's\n").unwrap();
    let error = commit.apply().unwrap_err();
    assert_eq!(error.step, 1, "{error:?}");
    assert!(
        matches!(&error.reason, StepFailure::Io(e) if e.kind() == io::ErrorKind::AlreadyExists),
        "{error:?}"
    );
    let mut expected = before();
    expected.push((
        taken.to_string_lossy().into_owned(),
        "someone else's\n".into(),
    ));
    expected.sort();
    assert_eq!(
        tree(root),
        expected,
        "the files staged beside it are gone, the other program's file is left alone"
    );
    assert_eq!(s.journal.store.names().unwrap(), Vec::<OsString>::new());
}

#[test]
fn a_file_written_in_place_after_planning_stops_the_whole_change() {
    let s = setup();
    let commit = stage_all(&s);
    // An editor saves b.txt in place after it was planned on (same inode, other bytes).
    fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(s.root.join("b.txt"))
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"b edited\n"))
        .unwrap();
    let error = commit.apply().unwrap_err();
    assert_eq!(error.step, 1);
    assert!(matches!(error.reason, StepFailure::Changed { .. }));
    let mut expected = before();
    expected[1].1 = "b edited\n".into();
    assert_eq!(
        tree(&s.root),
        expected,
        "a.txt is back, nothing staged is left"
    );
}

#[test]
fn a_file_that_appears_at_an_added_name_stops_the_whole_change() {
    let s = setup();
    let commit = stage_all(&s);
    fs::write(s.root.join("c.txt"), "someone else's\n").unwrap();
    let error = commit.apply().unwrap_err();
    assert_eq!(error.step, 2);
    let mut expected = before();
    expected.insert(2, ("c.txt".into(), "someone else's\n".into()));
    assert_eq!(tree(&s.root), expected);
}

#[test]
fn a_dropped_change_leaves_nothing_staged() {
    let s = setup();
    drop(stage_all(&s));
    assert_eq!(tree(&s.root), before());
}

/// A crash at every point of the apply: the next recovery leaves all as before, or all as
/// the change says.
#[test]
fn a_crash_at_any_step_is_undone_or_finished_by_recovery() {
    for crash_after in 0..=5 {
        let s = setup();
        let mut commit = stage_all(&s);
        let mut record = CommitRecord {
            applied: false,
            steps: commit.steps.iter().map(|st| st.record.clone()).collect(),
            pid: u32::MAX - 1,
            sequel: None,
            made_dirs: Vec::new(),
            archives: Vec::new(),
        };
        for step in commit.steps.iter().take(crash_after.min(4)) {
            apply_step(step).unwrap();
        }
        if crash_after == 5 {
            record.applied = true;
        }
        // The process dies: nothing of `commit` runs any more.
        for step in &mut commit.steps {
            step.temp_entry = None;
        }
        commit.abandon();
        let outcome = recover(
            &record,
            None,
            &no_copies(&s),
            &Sandbox::new(s.root.clone(), None, vec![]),
            &no_sequel,
        )
        .unwrap();
        if crash_after == 5 {
            assert_eq!(outcome, Recovered::CommitFinished);
            assert_eq!(tree(&s.root), after(), "finished after {crash_after}");
        } else {
            assert_eq!(outcome, Recovered::CommitUndone);
            assert_eq!(tree(&s.root), before(), "undone after {crash_after}");
        }
    }
}

/// A staged tree takes a free name, and an entry moves to another directory, in one change;
/// a crash before the commit point takes both back.
#[test]
fn a_staged_tree_and_a_move_go_in_together_or_not_at_all() {
    for crash in [false, true] {
        let s = setup();
        fs::create_dir_all(s.root.join(".staged/sub")).unwrap();
        fs::write(s.root.join(".staged/sub/f.txt"), "tree\n").unwrap();
        fs::create_dir(s.root.join("to")).unwrap();
        let mut commit = s.journal.commit();
        commit
            .place(
                dir(&s.root),
                &s.root,
                OsStr::new(".staged"),
                OsStr::new("restored"),
                None,
            )
            .unwrap();
        let moved = Snapshot::of(&planned(&s.root, "a.txt").stat);
        let to = s.root.join("to");
        commit
            .rename(
                dir(&s.root),
                &s.root,
                OsStr::new("a.txt"),
                moved,
                dir(&to),
                &to,
                OsStr::new("a.txt"),
            )
            .unwrap();
        if !crash {
            commit.apply().unwrap();
            assert_eq!(
                fs::read_to_string(s.root.join("restored/sub/f.txt")).unwrap(),
                "tree\n"
            );
            assert_eq!(
                fs::read_to_string(s.root.join("to/a.txt")).unwrap(),
                "a old\n"
            );
            assert!(!s.root.join("a.txt").exists() && !s.root.join(".staged").exists());
            continue;
        }
        let record = CommitRecord {
            applied: false,
            steps: commit.steps.iter().map(|st| st.record.clone()).collect(),
            pid: u32::MAX - 1,
            sequel: None,
            made_dirs: Vec::new(),
            archives: Vec::new(),
        };
        for step in &commit.steps {
            apply_step(step).unwrap();
        }
        commit.abandon();
        recover(
            &record,
            None,
            &no_copies(&s),
            &Sandbox::new(s.root.clone(), None, vec![]),
            &no_sequel,
        )
        .unwrap();
        assert!(
            !s.root.join("restored").exists(),
            "the staged tree is taken back and removed"
        );
        assert!(!s.root.join(".staged").exists());
        assert_eq!(fs::read_to_string(s.root.join("a.txt")).unwrap(), "a old\n");
        assert!(!s.root.join("to/a.txt").exists());
    }
}

/// The history the commit records to, beside the journal in the same data directory.
fn history(s: &Setup) -> crate::history::History {
    let data = s.root.parent().unwrap().join("data");
    crate::history::History::new(Arc::new(DataDir::new(data)), "history/x")
}

fn heading() -> crate::history::Heading {
    crate::history::Heading::for_test("apply_patch", "apply_patch")
}

/// The change's history record: a.txt's edit, kept as a delta.
fn files() -> Vec<crate::change::FileChange> {
    let mut edit = crate::change::FileChange::new("/w/a.txt", crate::change::Action::Modified);
    edit.undo.reverse = Some(Arc::new(b"delta".to_vec()));
    vec![edit]
}

/// How many records of `id` the history's log holds.
fn logged(history: &crate::history::History, id: &str) -> usize {
    history
        .entries(&|_| true)
        .unwrap()
        .iter()
        .filter(|e| e.record.id == id)
        .count()
}

/// Applies `commit`, carrying `heading`'s record, and "kills" the process where `prepare`
/// or `perform` panics (nothing after that point runs; the journal record stays as a kill
/// leaves it). Then the record is made a dead process's, as the next process sees it.
fn apply_and_kill(
    s: &Setup,
    commit: Commit<'_>,
    history: &crate::history::History,
    heading: &crate::history::Heading,
    kill: Kill,
) {
    let run = std::panic::AssertUnwindSafe(|| {
        let _ = commit.apply_then(
            || {
                let record = history.prepare(heading, &files())?;
                if kill == Kill::BeforeCommitPoint {
                    panic!("killed before the commit point");
                }
                Ok(Some(serde_json::to_value(record).unwrap()))
            },
            |sequel| {
                if kill == Kill::AfterAppend {
                    append_once(history, sequel)?;
                }
                panic!("killed before the record's removal")
            },
        );
    });
    assert!(std::panic::catch_unwind(run).is_err(), "the kill came");
    let names = s.journal.store.names().unwrap();
    assert_eq!(names.len(), 1, "the commit's record is left: {names:?}");
    let path = s.journal.dir().join(&names[0]);
    let Record::Commit(mut record) = Record::parse(&s.journal.read(&path).unwrap()).unwrap() else {
        panic!("not a commit record")
    };
    record.pid = u32::MAX - 1;
    s.journal
        .rewrite(&path, &serde_json::to_vec(&Record::Commit(record)).unwrap());
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kill {
    BeforeCommitPoint,
    AfterCommitPoint,
    AfterAppend,
}

/// What a workspace's recovery does with a finished change's sequel.
fn append_once(history: &crate::history::History, sequel: &Value) -> io::Result<()> {
    let record = crate::history::ChangeRecord::deserialize(sequel).map_err(io::Error::other)?;
    history.append_once(&record).map(drop)
}

/// A change that stands after a kill has exactly one history record once recovered, however
/// close to the end the kill came; a change recovery undoes has none.
#[test]
fn the_record_a_commit_carries_is_in_the_history_once_exactly_when_the_change_stands() {
    for kill in [
        Kill::BeforeCommitPoint,
        Kill::AfterCommitPoint,
        Kill::AfterAppend,
    ] {
        let s = setup();
        let history = history(&s);
        let heading = heading();
        apply_and_kill(&s, stage_all(&s), &history, &heading, kill);
        let expected_before = usize::from(kill == Kill::AfterAppend);
        assert_eq!(logged(&history, &heading.id), expected_before, "{kill:?}");
        let sandbox = Sandbox::new(s.root.clone(), None, vec![]);
        let perform = |sequel: &Value| append_once(&history, sequel);
        let outcome = s.journal.recover(&sandbox, &perform);
        if kill == Kill::BeforeCommitPoint {
            assert_eq!(outcome, vec![Recovered::CommitUndone]);
            assert_eq!(tree(&s.root), before());
            assert_eq!(logged(&history, &heading.id), 0, "{kill:?}");
        } else {
            assert_eq!(outcome, vec![Recovered::CommitFinished]);
            assert_eq!(tree(&s.root), after());
            assert_eq!(logged(&history, &heading.id), 1, "{kill:?}");
            let entries = history.entries(&|_| true).unwrap();
            let delta = entries[0].record.files[0].delta.as_ref().unwrap();
            assert_eq!(history.read_delta(delta, None).unwrap(), b"delta");
        }
        assert!(s.journal.store.names().unwrap().is_empty(), "{kill:?}");
        // A second recovery finds nothing more to do.
        assert!(s.journal.recover(&sandbox, &perform).is_empty());
        assert!(logged(&history, &heading.id) <= 1);
    }
}

/// Without a kill, the record is appended once and the journal is empty; a sequel that
/// cannot be performed now is left to the next recovery.
#[test]
fn a_commit_performs_its_sequel_then_removes_its_record() {
    let s = setup();
    let history = history(&s);
    let heading = heading();
    let prepare = || {
        let record = history.prepare(&heading, &files())?;
        Ok(Some(serde_json::to_value(record).unwrap()))
    };
    let perform = |sequel: &Value| append_once(&history, sequel);
    let sequel = stage_all(&s).apply_then(prepare, perform).unwrap();
    assert_eq!(sequel, Sequel::Performed);
    assert_eq!(logged(&history, &heading.id), 1);
    assert!(s.journal.store.names().unwrap().is_empty());

    let s = setup();
    let history = crate::history::History::new(
        Arc::new(DataDir::new(s.root.parent().unwrap().join("data"))),
        "history/x",
    );
    let prepare = || Ok(Some(Value::from("the record")));
    let sequel = stage_all(&s)
        .apply_then(prepare, |_| Err(io::Error::other("the log is full")))
        .unwrap();
    assert_eq!(sequel, Sequel::LeftToRecovery);
    assert_eq!(tree(&s.root), after());
    assert_eq!(s.journal.store.names().unwrap().len(), 1);
    assert_eq!(history.entries(&|_| true).unwrap().len(), 0);
}

/// What the user put in place after the crash is never taken back.
#[test]
fn recovery_leaves_what_is_neither_ours_nor_planned() {
    let s = setup();
    let commit = stage_all(&s);
    let record = CommitRecord {
        applied: false,
        steps: commit.steps.iter().map(|st| st.record.clone()).collect(),
        pid: u32::MAX - 1,
        sequel: None,
        made_dirs: Vec::new(),
        archives: Vec::new(),
    };
    apply_step(&commit.steps[0]).unwrap();
    commit.abandon();
    // After the crash, the user replaces a.txt (which holds ours) with a new file.
    fs::remove_file(s.root.join("a.txt")).unwrap();
    fs::write(s.root.join("a.txt"), "user\n").unwrap();
    recover(
        &record,
        None,
        &no_copies(&s),
        &Sandbox::new(s.root.clone(), None, vec![]),
        &no_sequel,
    )
    .unwrap();
    let found = tree(&s.root);
    assert!(
        found.contains(&("a.txt".into(), "user\n".into())),
        "{found:?}"
    );
}

/// The archives recovery was asked to discard.
struct Discards(std::cell::RefCell<Vec<OsString>>);

impl Aftermath for Discards {
    fn perform(&self, _: &Value) -> io::Result<()> {
        Ok(())
    }

    fn discard_archive(&self, name: &OsStr) {
        self.0.borrow_mut().push(name.to_owned());
    }
}

/// [`stage_all`], plus `new/sub/n.txt` in directories made for it and an archive.
fn stage_in_made_dirs(s: &Setup) -> Commit<'_> {
    let mut commit = stage_all(s);
    let sub = s.root.join("new").join("sub");
    let handle = commit.make_dirs(&s.root, &sub).unwrap();
    let dir = fsops::reopen_readable(handle.as_dir()).unwrap();
    commit
        .put(dir, &sub, OsStr::new("n.txt"), b"n\n".to_vec(), None, None)
        .unwrap();
    commit.archived(OsStr::new("x-a.txt.tar.gz"));
    staged(commit)
}

/// A file holds what was planned exactly when it reads as the bytes kept (over blocks, at
/// their edges too) or, without them, hashes as planned.
#[test]
fn a_file_holds_what_was_planned_by_its_bytes_or_its_hash() {
    let tmp = tempfile::tempdir().unwrap();
    let block = 64 * 1024;
    let planned: Vec<u8> = (0..2 * block + 1).map(|i| (i % 251) as u8).collect();
    let held_by = |on_disk: &[u8], kept: bool| {
        let path = tmp.path().join("f");
        fs::write(&path, on_disk).unwrap();
        let stat = crate::paths::testing::lstat(&path).unwrap();
        let mut file = PlannedFile::new(stat, &planned);
        if kept {
            file.bytes = Some(BytesRead(Arc::new(planned.clone())));
        }
        file.held_by(&mut fs::File::open(&path).unwrap()).unwrap()
    };
    let mut last_differs = planned.clone();
    *last_differs.last_mut().unwrap() ^= 1;
    let mut edge_differs = planned.clone();
    edge_differs[block] ^= 1;
    for kept in [false, true] {
        assert!(held_by(&planned, kept));
        assert!(!held_by(&planned[..planned.len() - 1], kept));
        assert!(!held_by(&[&planned[..], b"x"].concat(), kept));
        assert!(!held_by(&last_differs, kept));
        assert!(!held_by(&edge_differs, kept));
    }
}

/// Race hooks on the put of `name`: a writer opens the file it displaced (under its temp name)
/// once the clean-up checked it, and writes `saved late` into it once it was unlinked.
fn write_late_into_displaced(root: &Path, name: &str) {
    let writer: Arc<std::sync::Mutex<Option<fs::File>>> = Arc::default();
    let (root, opened, wanted) = (root.to_owned(), writer.clone(), name.to_owned());
    race_point::at(RacePoint::ReplacedChecked, name, move || {
        let aside = fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| {
                let file_name = p.file_name().unwrap();
                fsops::is_temp_name(file_name) && file_name.to_string_lossy().contains(&wanted)
            })
            .unwrap();
        let file = fs::OpenOptions::new().write(true).open(aside).unwrap();
        *opened.lock().unwrap() = Some(file);
    });
    race_point::at(RacePoint::ReplacedUnlinked, name, move || {
        let mut file = writer.lock().unwrap().take().unwrap();
        std::io::Write::write_all(&mut file, b"saved late\n").unwrap();
    });
}

/// The files kept beside another (a late write), as (the name they were kept beside, content).
fn kept_beside(found: &[(String, String)]) -> Vec<(&str, &str)> {
    found
        .iter()
        .filter_map(|(n, content)| {
            let (beside, _) = n.split_once(fsops::KEPT_MARKER)?;
            Some((beside, content.as_str()))
        })
        .collect()
}

/// A writer that had the displaced file open writes into it after the clean-up's last check,
/// once it has no name: what it wrote is kept beside the file, whether the plan kept the bytes
/// read (compared) or only their SHA-256 (hashed).
#[test]
fn a_late_write_into_the_displaced_file_is_kept_either_way() {
    for kept_bytes in [false, true] {
        let s = setup();
        let name = if kept_bytes {
            "late-kept.txt"
        } else {
            "late-hashed.txt"
        };
        fs::write(s.root.join(name), "old\n").unwrap();
        let mut plan = planned(&s.root, name);
        if kept_bytes {
            plan.bytes = Some(BytesRead(Arc::new(b"old\n".to_vec())));
        }
        write_late_into_displaced(&s.root, name);
        let mut commit = s.journal.commit();
        put_over(&mut commit, &s.root, name, plan, b"new\n".to_vec());
        commit.apply().unwrap();
        let found = tree(&s.root);
        assert_eq!(kept_beside(&found), [(name, "saved late\n")], "{found:?}");
        assert_eq!(fs::read_to_string(s.root.join(name)).unwrap(), "new\n");
    }
}

/// A change of several puts lets the files they displaced go side by side: every one goes,
/// and a late write into one of them is kept, as when it goes alone.
#[test]
fn the_puts_of_one_change_let_their_displaced_files_go_side_by_side() {
    let s = setup();
    let names = ["side-1.txt", "side-2.txt", "side-3.txt", "side-4.txt"];
    let late = names[2];
    write_late_into_displaced(&s.root, late);
    let mut commit = s.journal.commit();
    for name in names {
        fs::write(s.root.join(name), "old\n").unwrap();
        let plan = planned(&s.root, name);
        put_over(
            &mut commit,
            &s.root,
            name,
            plan,
            format!("new {name}\n").into_bytes(),
        );
    }
    commit.apply().unwrap();
    let found = tree(&s.root);
    assert_eq!(kept_beside(&found), [(late, "saved late\n")], "{found:?}");
    for name in names {
        let now = fs::read_to_string(s.root.join(name)).unwrap();
        assert_eq!(now, format!("new {name}\n"));
    }
    assert!(
        found
            .iter()
            .all(|(n, _)| !fsops::is_temp_name(OsStr::new(n))),
        "nothing displaced left: {found:?}"
    );
}

/// The files a change stages in one directory are answered for by one temp record (a patch of
/// 50 files wrote 50), which names the directories made above them; none is left once the
/// change is made.
#[test]
fn one_temp_record_answers_for_the_files_staged_in_a_directory() {
    let s = setup();
    let commit = stage_in_made_dirs(&s);
    let records: Vec<crate::journal::TempRecord> = fs::read_dir(s.journal.dir())
        .unwrap()
        .filter_map(|entry| {
            let bytes = s.journal.read(&entry.unwrap().path())?;
            match Record::parse(&bytes).unwrap() {
                Record::Temp(temp) if temp.counters_below.is_some() => Some(temp),
                _ => None,
            }
        })
        .collect();
    assert_eq!(records.len(), 2, "one a directory: {records:?}");
    let puts = commit
        .steps
        .iter()
        .filter(|step| matches!(step.record.action, StepAction::Put { .. }));
    for step in puts {
        let (dir, aside) = (&step.record.dir, step.record.aside.as_os_str());
        let answering: Vec<_> = records
            .iter()
            .filter(|r| r.answers_for(dir, aside))
            .collect();
        assert_eq!(answering.len(), 1, "{aside:?} in {dir:?}");
        let made_above = !answering[0].made_dirs.is_empty();
        assert_eq!(
            made_above,
            dir.ends_with(Path::new("new").join("sub")),
            "{aside:?}"
        );
    }
    commit.apply().unwrap();
    assert_eq!(s.journal.store.names().unwrap().len(), 0);
}

/// A change that fails, or that a kill cut short and recovery undoes, leaves none of the
/// directories made for it, and recovery discards its archives; one that is made keeps them.
#[test]
fn directories_made_and_archives_go_when_the_change_does_not_happen() {
    // Fails at its last step: c.txt appeared meanwhile.
    let s = setup();
    let commit = stage_in_made_dirs(&s);
    fs::write(s.root.join("c.txt"), "someone else's\n").unwrap();
    assert!(commit.apply().is_err());
    assert!(!s.root.join("new").exists());
    // Made.
    let s = setup();
    stage_in_made_dirs(&s).apply().unwrap();
    assert_eq!(fs::read(s.root.join("new/sub/n.txt")).unwrap(), b"n\n");
    // Killed after some steps; recovery undoes it.
    let s = setup();
    let mut commit = stage_in_made_dirs(&s);
    let record = CommitRecord {
        applied: false,
        steps: commit.steps.iter().map(|st| st.record.clone()).collect(),
        pid: u32::MAX - 1,
        sequel: None,
        made_dirs: commit.made.iter().map(|(m, _)| m.clone()).collect(),
        archives: commit.archives.clone(),
    };
    for step in &commit.steps {
        apply_step(step).unwrap();
    }
    for step in &mut commit.steps {
        step.temp_entry = None;
    }
    commit.abandon();
    let discards = Discards(Default::default());
    let sandbox = Sandbox::new(s.root.clone(), None, vec![]);
    assert_eq!(
        recover(&record, None, &no_copies(&s), &sandbox, &discards).unwrap(),
        Recovered::CommitUndone
    );
    assert_eq!(tree(&s.root), before());
    assert_eq!(*discards.0.borrow(), [OsString::from("x-a.txt.tar.gz")]);
    // The record says what was made: parsed back as written.
    let bytes = serde_json::to_vec(&Record::Commit(record.clone())).unwrap();
    assert_eq!(Record::parse(&bytes).unwrap(), Record::Commit(record));
}
