//! Changes whose files are put in place by three renames, as on Windows, which cannot exchange
//! two names (`fsops::put_by_renames`): the same outcomes as by exchange, in process and after a
//! kill between any two renames.

use super::apply::apply_step;
use super::tests::{after, before, no_copies, no_sequel, setup, stage_all_in, tree, Setup};
use super::*;
use crate::journal::Recovered;
use crate::paths::Sandbox;
use std::ffi::OsString;
use std::fs;

/// a.txt and b.txt rewritten (by renames), c.txt added, gone.txt removed.
fn stage_by_renames(s: &Setup) -> Commit<'_> {
    stage_all_in(s, s.journal.commit().by_renames())
}

/// The record `commit` writes before its steps, as a dead process leaves it.
fn record_of(commit: &Commit<'_>) -> CommitRecord {
    CommitRecord {
        applied: false,
        steps: commit.steps.iter().map(|st| st.record.clone()).collect(),
        pid: u32::MAX - 1,
        sequel: None,
        made_dirs: Vec::new(),
        archives: Vec::new(),
    }
}

fn hold_of(step: &StepRecord) -> Option<&Path> {
    match &step.action {
        StepAction::Put { hold, .. } => hold.as_ref().map(|HoldName(hold)| hold.as_path()),
        _ => None,
    }
}

fn recover_in(s: &Setup, record: &CommitRecord) -> Recovered {
    recover(
        record,
        None,
        &no_copies(s),
        &Sandbox::new(s.root.clone(), None, vec![]),
        &no_sequel,
    )
    .unwrap()
}

#[test]
fn the_record_names_a_hold_for_each_file_replaced() {
    let s = setup();
    let commit = stage_by_renames(&s);
    let holds: Vec<_> = commit.steps.iter().map(|st| hold_of(&st.record)).collect();
    let a = &commit.steps[0].record;
    assert_eq!(
        holds[0].map(|h| h.as_os_str().to_owned()),
        Some(fsops::hold_name(a.aside.as_os_str()))
    );
    assert!(holds[1].is_some());
    assert_eq!(holds[2..], [None, None], "a new file takes a free name");
    // A record whose hold name is not one of ours is refused whole.
    let mut record = record_of(&commit);
    if let StepAction::Put { hold, .. } = &mut record.steps[0].action {
        *hold = Some(HoldName(PathBuf::from("b.txt")));
    }
    assert!(record.check().is_err());
    assert!(record_of(&commit).check().is_ok());
}

#[test]
fn every_step_is_made_by_renames_and_nothing_is_left_behind() {
    let s = setup();
    stage_by_renames(&s).apply().unwrap();
    assert_eq!(tree(&s.root), after());
    assert_eq!(s.journal.store.names().unwrap(), Vec::<OsString>::new());
}

/// b.txt was saved in place after planning: the change stops, and a.txt, already put by
/// renames, is taken back by renames.
#[test]
fn a_file_written_in_place_stops_the_change_and_the_puts_before_go_back() {
    let s = setup();
    let commit = stage_by_renames(&s);
    fs::write(s.root.join("b.txt"), "b edited\n").unwrap();
    let error = commit.apply().unwrap_err();
    assert_eq!(error.step, 1);
    assert!(matches!(error.reason, StepFailure::Changed { .. }));
    let mut expected = before();
    expected[1].1 = "b edited\n".into();
    assert_eq!(tree(&s.root), expected, "nothing staged or held is left");
}

/// A kill after any of the three renames of either file replaced (the steps before it made):
/// recovery puts every file back — also when run again, as after a kill of recovery itself,
/// whose own renames go through the same states.
#[test]
fn a_kill_between_any_two_renames_is_undone_by_recovery() {
    for step in 0..2 {
        for renames in 0..=3 {
            let s = setup();
            let mut commit = stage_by_renames(&s);
            let record = record_of(&commit);
            for made in &commit.steps[..step] {
                apply_step(made).unwrap();
            }
            let st = &commit.steps[step].record;
            let at = |name: &Path| s.root.join(name);
            let hold = hold_of(st).unwrap();
            let (aside, name) = (st.aside.as_path(), st.name.as_path());
            let moves = [(aside, hold), (name, aside), (hold, name)];
            for (from, to) in &moves[..renames] {
                fs::rename(at(from), at(to)).unwrap();
            }
            // The process dies: nothing of `commit` runs any more.
            for staged in &mut commit.steps {
                staged.temp_entry = None;
            }
            commit.abandon();
            let when = format!("killed after {renames} renames of step {step}");
            assert_eq!(recover_in(&s, &record), Recovered::CommitUndone, "{when}");
            assert_eq!(tree(&s.root), before(), "{when}");
            assert_eq!(recover_in(&s, &record), Recovered::CommitUndone, "{when}");
            assert_eq!(tree(&s.root), before(), "{when}: recovered again");
        }
    }
}

/// Killed after the commit point: recovery finishes the change.
#[test]
fn a_kill_after_the_commit_point_is_finished_by_recovery() {
    let s = setup();
    let mut commit = stage_by_renames(&s);
    let mut record = record_of(&commit);
    for step in &commit.steps {
        apply_step(step).unwrap();
    }
    record.applied = true;
    for staged in &mut commit.steps {
        staged.temp_entry = None;
    }
    commit.abandon();
    assert_eq!(recover_in(&s, &record), Recovered::CommitFinished);
    assert_eq!(tree(&s.root), after());
}

/// Killed with the name free; the user then makes a new file under it: theirs stays, and the
/// file the change moved aside is kept under a visible name, not left under our temp name.
#[test]
fn a_name_taken_after_the_kill_keeps_the_planned_file_visible() {
    let s = setup();
    let mut commit = stage_by_renames(&s);
    let record = record_of(&commit);
    let st = &commit.steps[0].record;
    let hold = hold_of(st).unwrap();
    fs::rename(s.root.join(&st.aside), s.root.join(hold)).unwrap();
    fs::rename(s.root.join(&st.name), s.root.join(&st.aside)).unwrap();
    for staged in &mut commit.steps {
        staged.temp_entry = None;
    }
    commit.abandon();
    fs::write(s.root.join("a.txt"), "user\n").unwrap();
    assert_eq!(recover_in(&s, &record), Recovered::CommitUndone);
    let found = tree(&s.root);
    let mut expected = before();
    expected[0].1 = "user\n".into();
    let kept: Vec<_> = found
        .iter()
        .filter(|(name, _)| name.contains(fsops::KEPT_MARKER))
        .collect();
    assert_eq!(kept.len(), 1, "{found:?}");
    assert_eq!(kept[0].1, "a old\n");
    expected.push(kept[0].clone());
    expected.sort();
    assert_eq!(found, expected);
}
