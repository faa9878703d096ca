//! `temp` and `removal` records: written, kept while needed, and replayed.

use std::ffi::OsStr;
use std::fs;
use std::sync::Arc;

use super::test_support::*;
use super::*;
use crate::datadir::DataDir;
use crate::paths::testing::{open_dir_from_root, symlink, Modes};
use crate::paths::AsDir;

#[test]
fn temp_record_fields() {
    let (_tmp, journal, dir) = temp_setup();
    let fd = open_dir_from_root(&dir);
    let temp = fsops::temp_name(OsStr::new("f.txt"));
    let entry = journal.begin_temp(&dir, fd.as_dir(), &temp).unwrap();
    let bytes = journal.read(&entry.path()).unwrap();
    let Record::Temp(record) = Record::parse(&bytes).unwrap() else {
        panic!("not a temp record")
    };
    let meta = crate::paths::testing::stat(&dir).unwrap();
    assert_eq!(record.dir, dir);
    assert_eq!((record.dir_dev, record.dir_ino), (meta.dev, meta.ino));
    assert_eq!(record.name.as_os_str(), temp);
    assert_eq!(record.pid, std::process::id());
    entry.finish();
    assert_eq!(records(&journal), 0);
}

#[test]
fn a_dead_writers_temp_is_removed() {
    let (_tmp, journal, dir) = temp_setup();
    let name = ".f.txt.1234.0.agent-fs-tools.tmp";
    let rec = crashed_temp(&journal, &dir, name, true);
    fs::write(dir.join("f.txt"), b"keep").unwrap();
    assert_eq!(
        journal.recover(&anywhere(), &no_sequel),
        vec![Recovered::TempRemoved]
    );
    assert!(!dir.join(name).exists() && !rec.exists());
    assert_eq!(fs::read(dir.join("f.txt")).unwrap(), b"keep");
}

#[test]
fn a_removal_cut_short_leaves_no_temp_of_its_process_and_nothing_else_goes() {
    let (_tmp, journal, dir) = temp_setup();
    let tree = dir.join("tree");
    fs::create_dir_all(tree.join("sub")).unwrap();
    let ours = format!(".f.txt.{DEAD_PID}.7.agent-fs-tools.tmp");
    let theirs = ".g.txt.12345.7.agent-fs-tools.tmp";
    fs::write(tree.join("sub").join(&ours), b"archived").unwrap();
    fs::write(tree.join("sub").join(theirs), b"another process's").unwrap();
    fs::write(tree.join("kept.txt"), b"not yet removed").unwrap();
    // The tree's own root, set aside before its rmdir.
    let root_aside = format!(".tree2.{DEAD_PID}.9.agent-fs-tools.tmp");
    fs::create_dir(dir.join(&root_aside)).unwrap();
    let own_aside = format!(".tree.{DEAD_PID}.3.agent-fs-tools.tmp");
    fs::write(dir.join(&own_aside), b"set aside").unwrap();
    let fd = open_dir_from_root(&dir);
    let mut entry = None;
    journal.with_removal(&dir, fd.as_dir(), OsStr::new("tree"), || {
        // The record exists while the removal runs; keep a copy of it as a kill would.
        let name = fs::read_dir(journal.dir())
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        entry = Some((name.clone(), fs::read(&name).unwrap()));
    });
    let (path, bytes) = entry.unwrap();
    fs::write(&path, bytes).unwrap();
    kill_writer(&journal, &path);
    assert_eq!(
        journal.recover(&anywhere(), &no_sequel),
        vec![Recovered::TempRemoved]
    );
    assert!(!tree.join("sub").join(&ours).exists());
    assert!(!dir.join(&own_aside).exists());
    assert!(
        tree.join("sub").join(theirs).exists(),
        "another process's temp stays"
    );
    assert_eq!(fs::read(tree.join("kept.txt")).unwrap(), b"not yet removed");
    assert!(
        dir.join(&root_aside).exists(),
        "only the recorded entry's own asides go"
    );
}

#[test]
fn temp_names_tell_their_process() {
    let name = fsops::temp_name(OsStr::new("f.txt"));
    assert!(fsops::is_temp_name_of(&name, std::process::id()));
    assert!(!fsops::is_temp_name_of(&name, std::process::id() + 1));
    assert!(!fsops::is_temp_name_of(
        OsStr::new("f.txt"),
        std::process::id()
    ));
}

/// Unix only: bytes that are not UTF-8 make no Windows name (`paths::names`' Windows tests).
#[cfg(unix)]
#[test]
fn paths_that_are_not_utf8_are_journaled_as_bytes() {
    let (_tmp, journal, dir) = temp_setup();
    let odd = dir.join(crate::paths::names::from_bytes(b"caf\xe9"));
    fs::create_dir(&odd).unwrap();
    // An append to a file there is journaled and rolled back like any other.
    let file = odd.join(crate::paths::names::from_bytes(b"n\xffe.log"));
    fs::write(&file, b"old").unwrap();
    let rec = begin(&journal, &file, b"new");
    let stored = journal.read(&rec).unwrap();
    assert!(
        std::str::from_utf8(&fs::read(&rec).unwrap()).is_ok(),
        "the record stays text: JSON and its seal"
    );
    let Record::Append(record) = Record::parse(&stored).unwrap() else {
        panic!("not an append record")
    };
    assert_eq!(record.path, file);
    fs::write(&file, b"oldne").unwrap();
    assert_eq!(
        journal.recover(&anywhere(), &no_sequel),
        vec![Recovered::RolledBack]
    );
    assert_eq!(fs::read(&file).unwrap(), b"old");
    // A temp file of a name that is not UTF-8 is recorded and swept.
    let temp = fsops::temp_name(crate::paths::names::from_bytes(b"\xfe.txt"));
    fs::write(odd.join(&temp), b"a whole copy").unwrap();
    let fd = open_dir_from_root(&odd);
    let entry = journal.begin_temp(&odd, fd.as_dir(), &temp).unwrap();
    kill_writer(&journal, &entry.path());
    assert_eq!(
        journal.recover(&anywhere(), &no_sequel),
        vec![Recovered::TempRemoved]
    );
    assert!(!odd.join(&temp).exists());
}

#[test]
fn a_dead_restores_temp_tree_is_removed_without_following_links() {
    let (tmp, journal, dir) = temp_setup();
    let outside = tmp.path().join("outside");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("keep.txt"), b"outside").unwrap();
    let temp = crate::trash::restore_temp_name();
    let root = dir.join(&temp);
    fs::create_dir_all(root.join("sub")).unwrap();
    fs::write(root.join("sub/f.txt"), b"half restored").unwrap();
    symlink(&outside, root.join("link")).unwrap();
    // The restore may already have given a directory its archived read-only mode (this
    // bites only when not running as root, which ignores modes).
    fs::set_permissions(root.join("sub"), fs::Permissions::from_mode(0o555)).unwrap();
    let fd = open_dir_from_root(&dir);
    let entry = journal.begin_temp(&dir, fd.as_dir(), &temp).unwrap();
    kill_writer(&journal, &entry.path());
    assert_eq!(
        journal.recover(&anywhere(), &no_sequel),
        vec![Recovered::TempRemoved]
    );
    assert!(!root.exists() && records(&journal) == 0);
    assert_eq!(fs::read(outside.join("keep.txt")).unwrap(), b"outside");
    // A move's copied tree under a temp name goes too, read-only parts and all.
    let name = ".d.1234.0.agent-fs-tools.tmp";
    fs::create_dir_all(dir.join(name).join("inner")).unwrap();
    fs::set_permissions(
        dir.join(name).join("inner"),
        fs::Permissions::from_mode(0o555),
    )
    .unwrap();
    crashed_temp(&journal, &dir, name, false);
    assert_eq!(
        journal.recover(&anywhere(), &no_sequel),
        vec![Recovered::TempRemoved]
    );
    assert!(!dir.join(name).exists());
}

#[test]
fn a_live_young_writers_temp_is_left_alone() {
    let (_tmp, journal, dir) = temp_setup();
    let name = ".f.txt.1234.0.agent-fs-tools.tmp";
    fs::write(dir.join(name), b"in flight").unwrap();
    let fd = open_dir_from_root(&dir);
    let entry = journal
        .begin_temp(&dir, fd.as_dir(), OsStr::new(name))
        .unwrap();
    assert_eq!(
        journal.recover(&anywhere(), &no_sequel),
        vec![Recovered::Skipped]
    );
    assert!(dir.join(name).exists() && entry.path().exists());
}

#[test]
fn a_gone_temp_only_drops_the_record() {
    let (_tmp, journal, dir) = temp_setup();
    let rec = crashed_temp(&journal, &dir, ".f.1.2.agent-fs-tools.tmp", false);
    assert_eq!(
        journal.recover(&anywhere(), &no_sequel),
        vec![Recovered::LeftAlone]
    );
    assert!(!rec.exists());
}

#[test]
fn only_our_temp_names_are_ever_removed_and_links_never_followed() {
    let (_tmp, journal, dir) = temp_setup();
    // Not a temp name; a name leading out of the directory: refused as the record is read
    // (under a dead writer's name: a record that does not read is judged by its name).
    fs::write(dir.join("notes.txt"), b"user").unwrap();
    let refused = crashed_temp(&journal, &dir, "notes.txt", false);
    fs::rename(&refused, journal.dir().join(format!("{DEAD_PID}-9-1.json"))).unwrap();
    fs::write(dir.join(".x.1.2.agent-fs-tools.tmp"), b"user").unwrap();
    let sub = dir.join("sub");
    fs::create_dir(&sub).unwrap();
    let refused = crashed_temp(&journal, &sub, "../.x.1.2.agent-fs-tools.tmp", false);
    fs::rename(&refused, journal.dir().join(format!("{DEAD_PID}-9-2.json"))).unwrap();
    // A symlink under a temp name goes, its target stays; so does a linked directory's content.
    let target = dir.join("target.txt");
    fs::write(&target, b"user").unwrap();
    symlink(&target, dir.join(".l.1.2.agent-fs-tools.tmp")).unwrap();
    crashed_temp(&journal, &dir, ".l.1.2.agent-fs-tools.tmp", false);
    symlink(&sub, dir.join(".d.1.2.agent-fs-tools.tmp")).unwrap();
    fs::write(sub.join("kept.txt"), b"user").unwrap();
    crashed_temp(&journal, &dir, ".d.1.2.agent-fs-tools.tmp", false);
    let mut outcomes = journal.recover(&anywhere(), &no_sequel);
    outcomes.sort_by_key(|o| format!("{o:?}"));
    assert_eq!(
        outcomes,
        [
            vec![Recovered::TempRemoved; 2],
            vec![Recovered::Untrusted; 2]
        ]
        .concat()
    );
    assert_eq!(fs::read(dir.join("notes.txt")).unwrap(), b"user");
    assert_eq!(
        fs::read(dir.join(".x.1.2.agent-fs-tools.tmp")).unwrap(),
        b"user"
    );
    assert!(fs::symlink_metadata(dir.join(".l.1.2.agent-fs-tools.tmp")).is_err());
    assert!(fs::symlink_metadata(dir.join(".d.1.2.agent-fs-tools.tmp")).is_err());
    assert_eq!(fs::read(&target).unwrap(), b"user");
    assert_eq!(fs::read(sub.join("kept.txt")).unwrap(), b"user");
    assert_eq!(records(&journal), 0);
}

#[test]
fn a_temp_reached_through_a_symlink_or_in_another_directory_is_kept() {
    let (_tmp, journal, dir) = temp_setup();
    let name = ".f.1.2.agent-fs-tools.tmp";
    // The recorded directory became a symlink to one holding such a name.
    let real = dir.join("real");
    fs::create_dir(&real).unwrap();
    let linked = dir.join("linked");
    fs::create_dir(&linked).unwrap();
    crashed_temp(&journal, &linked, name, false);
    fs::remove_dir(&linked).unwrap();
    symlink(&real, &linked).unwrap();
    fs::write(real.join(name), b"user").unwrap();
    // The recorded directory was replaced by another one (other inode).
    let replaced = dir.join("replaced");
    fs::create_dir(&replaced).unwrap();
    crashed_temp(&journal, &replaced, name, false);
    let other = dir.join("other");
    fs::create_dir(&other).unwrap();
    fs::write(other.join(name), b"user").unwrap();
    fs::remove_dir(&replaced).unwrap();
    fs::rename(&other, &replaced).unwrap();
    assert_eq!(
        journal.recover(&anywhere(), &no_sequel),
        vec![Recovered::LeftAlone; 2]
    );
    assert!(real.join(name).exists() && replaced.join(name).exists());
    assert_eq!(records(&journal), 0);
}

#[test]
fn with_temp_keeps_the_record_only_while_the_temp_is_there() {
    let (_tmp, journal, dir) = temp_setup();
    let fd = open_dir_from_root(&dir);
    let temp = OsStr::new(".f.1.2.agent-fs-tools.tmp");
    let during = journal.with_temp(&dir, fd.as_dir(), temp, || Ok::<_, ()>(records(&journal)));
    assert_eq!((during, records(&journal)), (Ok(1), 0));
    // Failed, temp removed: no record; failed, temp still there: the record stays for recovery.
    let failed: Result<(), ()> = journal.with_temp(&dir, fd.as_dir(), temp, || Err(()));
    assert_eq!((failed, records(&journal)), (Err(()), 0));
    let _ = journal.with_temp(&dir, fd.as_dir(), temp, || {
        fs::write(dir.join(temp), b"x").map_err(drop)?;
        Err::<(), ()>(())
    });
    assert_eq!(records(&journal), 1);
}

#[test]
fn with_temp_goes_on_when_the_journal_cannot_be_written() {
    let (_tmp, _journal, dir) = temp_setup();
    // The journal directory cannot be created: its parent is a file.
    fs::write(dir.join("file"), b"").unwrap();
    let journal = Journal::new(Arc::new(DataDir::new(dir.join("file"))), "journal");
    let fd = open_dir_from_root(&dir);
    let temp = OsStr::new(".f.1.2.agent-fs-tools.tmp");
    assert_eq!(
        journal.with_temp(&dir, fd.as_dir(), temp, || Ok::<_, ()>(7)),
        Ok(7)
    );
}

/// A record answering for a block of temp names (the files a change staged in one directory):
/// recovery removes every entry of that process numbered in the block — the files, what was set
/// aside under their doomed or hold names, a link as a link — and nothing else: a counter past
/// the block, another process's, a name of the user's.
#[test]
fn a_dead_changes_block_of_temps_goes_whole_and_nothing_else() {
    let (tmp, journal, dir) = temp_setup();
    let (first, below) = (40, 44);
    let named = |name: &str, pid: u32, n: u64| format!(".{name}.{pid}.{n}.agent-fs-tools.tmp");
    let ours = [
        named("a.txt", DEAD_PID, first),
        named("b.txt", DEAD_PID, first + 1),
        fsops::doomed_name(OsStr::new(&named("c.txt", DEAD_PID, first + 2)))
            .into_string()
            .unwrap(),
        fsops::hold_name(OsStr::new(&named("d.txt", DEAD_PID, below - 1)))
            .into_string()
            .unwrap(),
    ];
    let kept = [
        named("e.txt", DEAD_PID, below),
        named("f.txt", DEAD_PID + 1, first + 1),
        "g.txt".to_owned(),
    ];
    for name in ours.iter().chain(&kept) {
        fs::write(dir.join(name), b"bytes").unwrap();
    }
    let outside = tmp.path().join("outside.txt");
    fs::write(&outside, b"not ours").unwrap();
    let link = named("h.txt", DEAD_PID, first + 3);
    symlink(&outside, dir.join(&link)).unwrap();
    let meta = crate::paths::testing::stat(&dir).unwrap();
    let record = TempRecord {
        dir: dir.clone(),
        dir_dev: meta.dev,
        dir_ino: meta.ino,
        name: ours[0].clone().into(),
        pid: DEAD_PID,
        made_dirs: Vec::new(),
        counters_below: Some(below),
    };
    // A block must start from a numbered name of its process.
    let unnumbered = TempRecord {
        name: ".a.txt.agent-fs-tools.tmp".into(),
        ..record.clone()
    };
    assert!(Record::Temp(unnumbered).check().is_err());
    let written = journal
        .write(&Record::Temp(record), Durability::PageCache)
        .unwrap();
    assert_eq!(
        journal.recover(&anywhere(), &no_sequel),
        vec![Recovered::TempRemoved]
    );
    let mut left: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    let mut expected = kept.to_vec();
    expected.sort();
    assert_eq!(left, expected);
    assert_eq!(fs::read(&outside).unwrap(), b"not ours");
    assert!(!written.path().exists());
}
