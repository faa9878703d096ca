//! The in-place append step of a change ([`Commit::append`]): made through the checked handle,
//! taken back as far as it went when the change does not happen — in process or by recovery
//! after a kill — and kept once the record says `applied`.

use super::splice::ForeignCopies;
use super::*;
use crate::datadir::DataDir;
use crate::journal::{Record, Recovered};
use crate::paths::Sandbox;
use serde_json::Value;
use std::ffi::OsString;
use std::fs;
use std::sync::Arc;

struct Setup {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    journal: Journal,
}

const OLD: &str = "old line\n";
const NEW: &str = "new line\n";

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let base = crate::paths::canonical::canonicalize_existing(tmp.path()).unwrap();
    let root = base.join("root");
    fs::create_dir(&root).unwrap();
    fs::write(root.join("log.txt"), OLD).unwrap();
    let journal = Journal::new(Arc::new(DataDir::new(base.join("data"))), "journal/x");
    Setup {
        _tmp: tmp,
        root,
        journal,
    }
}

fn dir(root: &Path) -> Dir {
    fsops::open_dir(root, root, false).unwrap()
}

fn sandbox(s: &Setup) -> Sandbox {
    Sandbox::new(s.root.clone(), None, vec![])
}

fn no_sequel(_: &Value) -> io::Result<()> {
    unreachable!("these records carry no sequel")
}

/// A change appending `NEW` to log.txt.
fn stage(s: &Setup) -> Commit<'_> {
    let name = OsStr::new("log.txt");
    let file = fsops::open_for_update(dir(&s.root).as_dir(), name).unwrap();
    let mut commit = s.journal.commit();
    commit
        .append(dir(&s.root), &s.root, name, file, NEW.into())
        .unwrap();
    commit
}

fn log(s: &Setup) -> String {
    fs::read_to_string(s.root.join("log.txt")).unwrap()
}

fn journal_names(s: &Setup) -> Vec<OsString> {
    s.journal.store.names().unwrap()
}

/// Appends `text` to log.txt as someone else would.
fn append_as_someone_else(s: &Setup, text: &str) {
    use std::io::Write;
    let mut file = fs::OpenOptions::new()
        .append(true)
        .open(s.root.join("log.txt"))
        .unwrap();
    file.write_all(text.as_bytes()).unwrap();
}

#[test]
fn an_append_goes_through_and_leaves_no_record_nor_kept_bytes() {
    let s = setup();
    stage(&s).apply().unwrap();
    assert_eq!(log(&s), format!("{OLD}{NEW}"));
    assert_eq!(journal_names(&s), Vec::<OsString>::new());
}

#[test]
fn the_record_keeps_the_appended_bytes_beside_it_until_the_change_is_over() {
    let s = setup();
    let record = kill_before_commit_point(&s.journal, stage(&s));
    assert_eq!(
        fs::read(record.with_extension("bytes")).unwrap(),
        NEW.as_bytes()
    );
    let body = s.journal.read(&record).unwrap();
    let Record::Commit(commit) = Record::parse(&body).unwrap() else {
        panic!("not a commit record")
    };
    let [step] = &commit.steps[..] else {
        panic!("one step: {:?}", commit.steps)
    };
    let StepAction::Append {
        old_size,
        len,
        kept_from,
        ..
    } = step.action
    else {
        panic!("an append step: {:?}", step.action)
    };
    assert_eq!(
        (old_size, len, kept_from),
        (OLD.len() as u64, NEW.len() as u64, 0)
    );
}

#[test]
fn an_append_killed_before_the_commit_point_is_taken_back_by_recovery() {
    let s = setup();
    kill_before_commit_point(&s.journal, stage(&s));
    assert_eq!(log(&s), format!("{OLD}{NEW}"), "the append was made");
    let outcomes = s.journal.recover(&sandbox(&s), &no_sequel);
    assert_eq!(outcomes, vec![Recovered::CommitUndone]);
    assert_eq!(log(&s), OLD);
    assert_eq!(journal_names(&s), Vec::<OsString>::new());
}

#[test]
fn an_append_a_kill_cut_short_is_taken_back_by_recovery() {
    let s = setup();
    kill_before_commit_point(&s.journal, stage(&s));
    let file = fs::OpenOptions::new()
        .write(true)
        .open(s.root.join("log.txt"))
        .unwrap();
    file.set_len((OLD.len() + 3) as u64).unwrap();
    s.journal.recover(&sandbox(&s), &no_sequel);
    assert_eq!(log(&s), OLD);
}

/// Our bytes never stand without the change's record: an append someone made after ours, once
/// we were killed before the commit point, stays, and ours are cut out from before it.
#[test]
fn recovery_cuts_our_append_out_from_before_one_someone_wrote_after() {
    let s = setup();
    kill_before_commit_point(&s.journal, stage(&s));
    append_as_someone_else(&s, "theirs\n");
    let outcomes = s.journal.recover(&sandbox(&s), &no_sequel);
    assert_eq!(outcomes, vec![Recovered::CommitUndone]);
    assert_eq!(log(&s), format!("{OLD}theirs\n"));
    assert_eq!(journal_names(&s), Vec::<OsString>::new());
}

/// A splice a kill cut short (their bytes partly moved down over ours) is finished from the
/// copy of theirs kept beside the record, byte-exact; one that cannot be what a splice left is
/// not touched.
#[test]
fn a_splice_cut_short_is_finished_from_the_copy_of_their_bytes() {
    let theirs = "theirs, longer than ours\n";
    for written in [0, 3, NEW.len(), theirs.len()] {
        let s = setup();
        let record = kill_before_commit_point(&s.journal, stage(&s));
        let name = record.file_name().unwrap().to_owned();
        ForeignCopies::new(&s.journal.store, &name)
            .keep(0, theirs.as_bytes())
            .unwrap();
        // Their first `written` bytes over ours, the rest as it was.
        let was = format!("{NEW}{theirs}");
        let now = format!("{OLD}{}{}", &theirs[..written], &was[written..]);
        fs::write(s.root.join("log.txt"), &now).unwrap();
        let outcomes = s.journal.recover(&sandbox(&s), &no_sequel);
        assert_eq!(outcomes, vec![Recovered::CommitUndone], "{written}");
        assert_eq!(log(&s), format!("{OLD}{theirs}"), "{written}");
        assert_eq!(journal_names(&s), Vec::<OsString>::new(), "{written}");
    }
    // Not a state a splice leaves (a byte of neither): left as it is.
    let s = setup();
    let record = kill_before_commit_point(&s.journal, stage(&s));
    let name = record.file_name().unwrap().to_owned();
    ForeignCopies::new(&s.journal.store, &name)
        .keep(0, theirs.as_bytes())
        .unwrap();
    let odd = format!("{OLD}{}X{}", &theirs[..3], &format!("{NEW}{theirs}")[4..]);
    fs::write(s.root.join("log.txt"), &odd).unwrap();
    s.journal.recover(&sandbox(&s), &no_sequel);
    assert_eq!(log(&s), odd);
    assert_eq!(journal_names(&s), Vec::<OsString>::new());
}

/// A change that fails at its commit point after someone appended behind our bytes takes ours
/// out the same way, in process.
#[test]
fn an_append_taken_back_in_process_leaves_one_someone_wrote_after() {
    let s = setup();
    let failed = stage(&s).apply_then(
        || {
            append_as_someone_else(&s, "theirs\n");
            Err(io::Error::other("no history"))
        },
        |_| Ok(()),
    );
    assert!(failed.is_err());
    assert_eq!(log(&s), format!("{OLD}theirs\n"));
    assert_eq!(journal_names(&s), Vec::<OsString>::new());
}

#[test]
fn recovery_cuts_nothing_without_an_intact_copy_of_the_bytes() {
    let s = setup();
    let record = kill_before_commit_point(&s.journal, stage(&s));
    // A copy that is not what the record says proves nothing about the file's end.
    fs::write(record.with_extension("bytes"), "x".repeat(NEW.len())).unwrap();
    s.journal.recover(&sandbox(&s), &no_sequel);
    assert_eq!(log(&s), format!("{OLD}{NEW}"));
    assert_eq!(journal_names(&s), Vec::<OsString>::new());
}

#[test]
fn an_append_whose_record_says_applied_stands_after_recovery() {
    let s = setup();
    let record = kill_before_commit_point(&s.journal, stage(&s));
    let body = s.journal.read(&record).unwrap();
    let Record::Commit(mut commit) = Record::parse(&body).unwrap() else {
        panic!("not a commit record")
    };
    commit.applied = true;
    s.journal.rewrite(
        &record,
        &serde_json::to_vec(&Record::Commit(commit)).unwrap(),
    );
    let outcomes = s.journal.recover(&sandbox(&s), &no_sequel);
    assert_eq!(outcomes, vec![Recovered::CommitFinished]);
    assert_eq!(log(&s), format!("{OLD}{NEW}"));
    assert_eq!(journal_names(&s), Vec::<OsString>::new());
}

#[test]
fn an_append_is_taken_back_when_the_commit_point_is_not_reached() {
    let s = setup();
    let failed = stage(&s).apply_then(|| Err(io::Error::other("no history")), |_| Ok(()));
    assert!(failed.is_err());
    assert_eq!(log(&s), OLD);
    assert_eq!(journal_names(&s), Vec::<OsString>::new());
}

#[test]
fn a_file_that_grew_after_the_append_was_staged_stops_the_change() {
    let s = setup();
    let commit = stage(&s);
    append_as_someone_else(&s, "theirs\n");
    let err = commit.apply().unwrap_err();
    assert!(matches!(err.reason, StepFailure::Changed { .. }), "{err:?}");
    assert_eq!(log(&s), format!("{OLD}theirs\n"));
    assert_eq!(journal_names(&s), Vec::<OsString>::new());
}

#[test]
fn two_appends_keep_their_bytes_apart_and_recovery_takes_both_back() {
    let s = setup();
    fs::write(s.root.join("other.txt"), "other\n").unwrap();
    let mut commit = stage(&s);
    let name = OsStr::new("other.txt");
    let file = fsops::open_for_update(dir(&s.root).as_dir(), name).unwrap();
    commit
        .append(dir(&s.root), &s.root, name, file, b"more\n".to_vec())
        .unwrap();
    kill_before_commit_point(&s.journal, commit);
    assert_eq!(
        fs::read_to_string(s.root.join("other.txt")).unwrap(),
        "other\nmore\n"
    );
    s.journal.recover(&sandbox(&s), &no_sequel);
    assert_eq!(log(&s), OLD);
    assert_eq!(
        fs::read_to_string(s.root.join("other.txt")).unwrap(),
        "other\n"
    );
}

/// The directory `at` made read-only (a bind mount of it remounted so): nothing in it can be
/// opened for writing, whoever asks (root too). `None` where mounting is not permitted.
fn read_only(at: &Path) -> Option<()> {
    let done = std::process::Command::new("mount")
        .args(["-o", "remount,bind,ro"])
        .arg(at)
        .status();
    done.is_ok_and(|s| s.success()).then_some(())
}

fn writable(at: &Path) {
    let done = std::process::Command::new("mount")
        .args(["-o", "remount,bind,rw"])
        .arg(at)
        .status();
    assert!(done.is_ok_and(|s| s.success()));
}

/// An append whose rollback in process cannot be done (its file cannot be opened for writing
/// any more) keeps its record and its bytes' copy: the next recovery takes it back.
#[test]
fn an_append_not_taken_back_in_process_keeps_its_record_for_recovery() {
    use crate::paths::test_mounts::Mounted;
    let s = setup();
    let alias = s.root.parent().unwrap().join("alias");
    let Some(_mount) = Mounted::bind(&s.root, &alias) else {
        eprintln!("skipped: mounting is not permitted here");
        return;
    };
    let name = OsStr::new("log.txt");
    // The step writes through a handle opened through the root; the rollback opens the file in
    // the step's directory, reached through the alias.
    let file = fsops::open_for_update(dir(&s.root).as_dir(), name).unwrap();
    let mut commit = s.journal.commit();
    commit
        .append(dir(&alias), &alias, name, file, NEW.into())
        .unwrap();
    let mut mounted_ro = false;
    let failed = commit.apply_then(
        || {
            mounted_ro = read_only(&alias).is_some();
            Err(io::Error::other("no history"))
        },
        |_| Ok(()),
    );
    assert!(failed.is_err());
    if !mounted_ro {
        eprintln!("skipped: a bind mount cannot be made read-only here");
        return;
    }
    assert_eq!(
        log(&s),
        format!("{OLD}{NEW}"),
        "out of reach: not taken back"
    );
    let record = left_by_a_dead_process(&s.journal);
    assert!(record.with_extension("bytes").exists());
    // A recovery that cannot cut it back either keeps the record; one that can, finishes.
    let within = Sandbox::new(alias.clone(), None, vec![]);
    assert_eq!(
        s.journal.recover(&within, &no_sequel),
        vec![Recovered::LeftAlone]
    );
    assert!(record.exists() && record.with_extension("bytes").exists());
    writable(&alias);
    let outcomes = s.journal.recover(&within, &no_sequel);
    assert_eq!(outcomes, vec![Recovered::CommitUndone]);
    assert_eq!(log(&s), OLD);
    assert_eq!(journal_names(&s), Vec::<OsString>::new());
}

/// A copy of someone else's bytes whose record is gone (a kill between the two removals) is
/// swept like kept bytes without a record.
#[test]
fn a_copy_of_their_bytes_without_its_record_is_swept() {
    let s = setup();
    let record = OsString::from(format!("{}-0-0.json", u32::MAX - 1));
    ForeignCopies::new(&s.journal.store, &record)
        .keep(2, b"theirs\n")
        .unwrap();
    assert_eq!(journal_names(&s).len(), 1);
    assert_eq!(s.journal.recover(&sandbox(&s), &no_sequel), vec![]);
    assert_eq!(journal_names(&s), Vec::<OsString>::new());
}
