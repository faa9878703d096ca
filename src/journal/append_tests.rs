//! Replay of `append` records, and which records recovery trusts and reaches.

use std::ffi::OsStr;
use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};

use super::test_support::*;
use super::*;

#[test]
fn record_fields() {
    let (_tmp, journal, file) = setup();
    let f = File::open(&file).unwrap();
    let entry = journal.begin(&file, &f, 3, b"new").unwrap();
    let bytes = journal.read(&entry.path()).unwrap();
    let Record::Append(record) = Record::parse(&bytes).unwrap() else {
        panic!("not an append record")
    };
    assert!(String::from_utf8(bytes)
        .unwrap()
        .contains(r#""kind":"append""#));
    assert_eq!(record.path, file);
    assert_eq!(record.ino, crate::paths::fsops::fstat(&f).unwrap().ino);
    assert_eq!((record.old_size, record.append_len), (3, 3));
    assert_eq!(record.append_sha256, crate::hashing::sha256_hex(b"new"));
    assert_eq!(record.pid, std::process::id());
    assert!(record.kept_bytes);
    assert_eq!(fs::read(kept_bytes_path(&entry.path())).unwrap(), b"new");
    // A fresh record of this (live) process is not replayed.
    assert_eq!(
        journal.recover(&anywhere(), &no_sequel),
        vec![Recovered::Skipped]
    );
    entry.finish();
    assert_eq!(fs::read_dir(journal.dir()).unwrap().count(), 0);
    assert!(journal.recover(&anywhere(), &no_sequel).is_empty());
}

/// Rewrites the append record at `rec` in a format before kept bytes: no `keptBytes`, and
/// (the oldest) no `kind`; the kept copy is gone.
fn as_old_record(journal: &Journal, rec: &Path, with_kind: bool) {
    let Record::Append(record) = Record::parse(&journal.read(rec).unwrap()).unwrap() else {
        panic!("not an append record")
    };
    let mut old = serde_json::to_value(Record::Append(record)).unwrap();
    let fields = old.as_object_mut().unwrap();
    fields.remove("keptBytes");
    if !with_kind {
        fields.remove("kind");
    }
    journal.rewrite(rec, &serde_json::to_vec(&old).unwrap());
    fs::remove_file(kept_bytes_path(rec)).unwrap();
}

#[test]
fn records_without_kept_bytes_keep_a_complete_append_and_cut_nothing() {
    for with_kind in [false, true] {
        let (_tmp, journal, file) = setup();
        let rec = begin(&journal, &file, b"new");
        as_old_record(&journal, &rec, with_kind);
        fs::write(&file, b"oldnew").unwrap();
        assert_eq!(
            journal.recover(&anywhere(), &no_sequel),
            vec![Recovered::Complete]
        );
        assert_eq!(fs::read(&file).unwrap(), b"oldnew");
        assert!(!rec.exists());
        // Without our bytes, a partial append cannot be told from someone else's.
        let rec = begin(&journal, &file, b"new");
        as_old_record(&journal, &rec, with_kind);
        fs::write(&file, b"oldne").unwrap();
        assert_eq!(
            journal.recover(&anywhere(), &no_sequel),
            vec![Recovered::LeftAlone]
        );
        assert_eq!(fs::read(&file).unwrap(), b"oldne");
        assert_eq!(records(&journal), 0);
    }
}

#[test]
fn a_missing_or_torn_copy_of_our_bytes_proves_nothing() {
    let (_tmp, journal, file) = setup();
    let rec = begin(&journal, &file, b"new");
    fs::remove_file(kept_bytes_path(&rec)).unwrap();
    append(&file, b"ne");
    assert_eq!(
        journal.recover(&anywhere(), &no_sequel),
        vec![Recovered::LeftAlone]
    );
    assert_eq!(fs::read(&file).unwrap(), b"oldne");
    // A copy of the right length that is not what was appended (a power cut's zeros).
    let (_tmp, journal, file) = setup();
    let rec = begin(&journal, &file, b"new");
    fs::write(kept_bytes_path(&rec), b"\0\0\0").unwrap();
    append(&file, b"\0\0");
    assert_eq!(
        journal.recover(&anywhere(), &no_sequel),
        vec![Recovered::LeftAlone]
    );
    assert_eq!(fs::read(&file).unwrap(), b"old\0\0");
    assert_eq!(records(&journal), 0);
}

#[test]
fn kept_bytes_without_a_record_are_swept_unless_their_writer_is_alive() {
    let (_tmp, journal, file) = setup();
    let rec = begin(&journal, &file, b"new");
    // A dead writer's copy (the name says whose it is), its record gone.
    let dead = journal
        .dir()
        .join(format!("{DEAD_PID}-1-2.{KEPT_EXTENSION}"));
    fs::rename(kept_bytes_path(&rec), &dead).unwrap();
    fs::remove_file(&rec).unwrap();
    let live = journal
        .dir()
        .join(format!("{}-1-1.{KEPT_EXTENSION}", std::process::id()));
    fs::write(&live, b"being recorded").unwrap();
    assert!(journal.recover(&anywhere(), &no_sequel).is_empty());
    assert!(!dead.exists() && live.exists());
}

#[test]
fn recover_complete() {
    let (_tmp, journal, file) = setup();
    let rec = begin(&journal, &file, b"new");
    fs::write(&file, b"oldnew").unwrap();
    assert_eq!(
        journal.recover(&anywhere(), &no_sequel),
        vec![Recovered::Complete]
    );
    assert_eq!(fs::read(&file).unwrap(), b"oldnew");
    assert!(!rec.exists());
}

/// Appends `bytes` to `file` as another process would.
fn append(file: &Path, bytes: &[u8]) {
    OpenOptions::new()
        .append(true)
        .open(file)
        .unwrap()
        .write_all(bytes)
        .unwrap();
}

#[test]
fn a_cut_short_append_with_nothing_after_it_is_rolled_back() {
    let (_tmp, journal, file) = setup();
    let rec = begin(&journal, &file, b"new");
    append(&file, b"ne");
    assert_eq!(
        journal.recover(&anywhere(), &no_sequel),
        vec![Recovered::RolledBack]
    );
    assert_eq!(fs::read(&file).unwrap(), b"old");
    assert_eq!(records(&journal), 0);
    assert!(!rec.exists());
}

#[test]
fn what_others_appended_after_a_cut_short_append_is_never_cut() {
    // The user appends after the crash: the file is the old bytes, a prefix of ours, then
    // theirs — as long as ours (an exact fit) or shorter.
    for theirs in [
        &b"Z"[..],
        b"ab",
        b"
",
    ] {
        let (_tmp, journal, file) = setup();
        begin(&journal, &file, b"0123456789");
        append(&file, b"0123");
        append(&file, theirs);
        let expected = [&b"old0123"[..], theirs].concat();
        assert_eq!(
            journal.recover(&anywhere(), &no_sequel),
            vec![Recovered::LeftAlone]
        );
        assert_eq!(fs::read(&file).unwrap(), expected);
        assert_eq!(records(&journal), 0);
    }
    let (_tmp, journal, file) = setup();
    begin(&journal, &file, b"new");
    append(&file, b"ne");
    append(&file, b"Z");
    assert_eq!(
        journal.recover(&anywhere(), &no_sequel),
        vec![Recovered::LeftAlone]
    );
    assert_eq!(fs::read(&file).unwrap(), b"oldneZ");
}

#[test]
fn bytes_that_are_not_a_prefix_of_ours_are_left_alone() {
    let (_tmp, journal, file) = setup();
    begin(&journal, &file, b"new");
    append(&file, b"\0\0\0");
    assert_eq!(
        journal.recover(&anywhere(), &no_sequel),
        vec![Recovered::LeftAlone]
    );
    assert_eq!(fs::read(&file).unwrap(), b"old\0\0\0");
    // Nothing of ours went through, and the user appended: theirs stays too.
    begin(&journal, &file, b"new");
    append(&file, b"x");
    assert_eq!(
        journal.recover(&anywhere(), &no_sequel),
        vec![Recovered::LeftAlone]
    );
    assert_eq!(fs::read(&file).unwrap(), b"old\0\0\0x");
}

#[test]
fn an_append_that_never_began_leaves_the_file_as_it_is() {
    let (_tmp, journal, file) = setup();
    begin(&journal, &file, b"new");
    assert_eq!(
        journal.recover(&anywhere(), &no_sequel),
        vec![Recovered::LeftAlone]
    );
    assert_eq!(fs::read(&file).unwrap(), b"old");
    assert_eq!(records(&journal), 0);
}

#[test]
fn recover_replaced_or_shorter_is_left_alone() {
    let (_tmp, journal, file) = setup();
    begin(&journal, &file, b"new");
    let other = file.with_extension("other");
    fs::write(&other, b"oldne").unwrap();
    fs::rename(&other, &file).unwrap();
    assert_eq!(
        journal.recover(&anywhere(), &no_sequel),
        vec![Recovered::LeftAlone]
    );
    assert_eq!(fs::read(&file).unwrap(), b"oldne");
    let (_tmp2, journal, file) = setup();
    begin(&journal, &file, b"new");
    fs::write(&file, b"o").unwrap();
    assert_eq!(
        journal.recover(&anywhere(), &no_sequel),
        vec![Recovered::LeftAlone]
    );
    assert_eq!(fs::read(&file).unwrap(), b"o");
    assert_eq!(fs::read_dir(journal.dir()).unwrap().count(), 0);
}

/// A record that looks right but was not written by us (unsealed, sealed under another key,
/// or not this user's) is never acted on, and stays where it is.
#[test]
fn only_records_we_wrote_are_replayed() {
    let (tmp, journal, file) = setup();
    let rec = begin(&journal, &file, b"new");
    append(&file, b"ne");
    let body = journal.read(&rec).unwrap();
    // Under a dead writer's name (a record named for a live one is taken to be in flight).
    let planted = journal.dir().join(format!("{DEAD_PID}-1-9.json"));
    fs::rename(kept_bytes_path(&rec), kept_bytes_path(&planted)).unwrap();
    fs::remove_file(&rec).unwrap();
    let rec = planted;
    // Planted: the same body, unsealed.
    fs::write(&rec, &body).unwrap();
    assert_eq!(
        journal.recover(&anywhere(), &no_sequel),
        vec![Recovered::Untrusted]
    );
    assert_eq!(fs::read(&file).unwrap(), b"oldne");
    assert!(!rec.exists(), "dropped");
    // Sealed under another data directory's key.
    let other = journal_in(&tmp.path().join("other-data").tap_mkdir());
    other
        .store
        .write_sealed(OsStr::new("x.json"), &body, false)
        .unwrap();
    fs::copy(other.dir().join("x.json"), &rec).unwrap();
    fs::write(kept_bytes_path(&rec), b"new").unwrap();
    assert_eq!(
        journal.recover(&anywhere(), &no_sequel),
        vec![Recovered::Untrusted]
    );
    assert_eq!(fs::read(&file).unwrap(), b"oldne");
    // Ours again: replayed.
    fs::write(kept_bytes_path(&rec), b"new").unwrap();
    journal.rewrite(&rec, &body);
    assert_eq!(
        journal.recover(&anywhere(), &no_sequel),
        vec![Recovered::RolledBack]
    );
    assert_eq!(fs::read(&file).unwrap(), b"old");
}

/// Recovery acts only inside the allowed trees of the workspace recovering; a record it
/// cannot finish there stays, whole, for a workspace whose sandbox reaches it.
#[test]
fn a_record_outside_the_allowed_trees_stays_for_a_workspace_that_reaches_it() {
    let (tmp, journal, file) = setup();
    let rec = begin(&journal, &file, b"new");
    append(&file, b"ne");
    let elsewhere = crate::paths::canonical::canonicalize_existing(tmp.path())
        .unwrap()
        .join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    let bounded = Sandbox::new(elsewhere.clone(), Some(vec![elsewhere]), vec![]);
    let recovery = journal.recover_all(&bounded, &no_sequel);
    assert_eq!(recovery.outcomes, vec![Recovered::Deferred]);
    assert_eq!(fs::read(&file).unwrap(), b"oldne");
    assert!(rec.exists() && kept_bytes_path(&rec).exists());
    let [pending] = &recovery.pending[..] else {
        panic!("{:?}", recovery.pending)
    };
    assert_eq!(pending.paths, vec![file.clone()]);
    assert!(pending.covers(&file) && pending.covers(file.parent().unwrap()));
    assert!(!pending.covers(&file.with_extension("other")));
    assert!(journal.holds(pending));
    // The data directory's own journal is hidden from the tools: never reached either.
    let hidden = Sandbox::new(
        PathBuf::from("/"),
        None,
        vec![file.parent().unwrap().into()],
    );
    assert_eq!(
        journal.recover(&hidden, &no_sequel),
        vec![Recovered::Deferred]
    );
    assert_eq!(
        journal.recover(&anywhere(), &no_sequel),
        vec![Recovered::RolledBack]
    );
    assert_eq!(fs::read(&file).unwrap(), b"old");
    assert!(!rec.exists() && !journal.holds(pending));
}

trait TapMkdir {
    fn tap_mkdir(self) -> Self;
}

impl TapMkdir for PathBuf {
    fn tap_mkdir(self) -> Self {
        fs::create_dir_all(&self).unwrap();
        self
    }
}
