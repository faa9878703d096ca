//! What the journal's tests of append, temp and removal records share.

use std::ffi::OsStr;
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::*;
use crate::datadir::DataDir;
use crate::paths::AsDir;

/// A journal at `<base>/journal/x` in the data directory `base`.
pub(super) fn journal_in(base: &Path) -> Journal {
    let base = crate::paths::canonical::canonicalize_existing(base).unwrap();
    Journal::new(Arc::new(DataDir::new(base)), "journal/x")
}

/// No allowedPaths: every path is reachable.
pub(super) fn anywhere() -> Sandbox {
    Sandbox::new(PathBuf::from("/"), None, vec![])
}

/// For records that carry no sequel.
pub(super) fn no_sequel(_: &serde_json::Value) -> io::Result<()> {
    unreachable!("no record here carries a sequel")
}

pub(super) fn kept_bytes_path(record: &Path) -> PathBuf {
    record.with_extension(KEPT_EXTENSION)
}

/// A pid no process has (above any `pid_max`): the writer of a record "died".
pub(super) const DEAD_PID: u32 = u32::MAX - 1;

pub(super) fn setup() -> (tempfile::TempDir, Journal, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let journal = journal_in(tmp.path());
    let file = tmp.path().join("f.txt");
    fs::write(&file, b"old").unwrap();
    (tmp, journal, file)
}

/// Rewrites the record at `path` as if its writer were dead, in the current format (as it
/// is: a record naming what recovery must refuse is kept as written).
pub(super) fn kill_writer(journal: &Journal, path: &Path) {
    let mut record: serde_json::Value =
        serde_json::from_slice(&journal.read(path).unwrap()).unwrap();
    record["pid"] = DEAD_PID.into();
    journal.rewrite(path, &serde_json::to_vec(&record).unwrap());
}

pub(super) fn begin(journal: &Journal, file: &Path, content: &[u8]) -> PathBuf {
    let f = File::open(file).unwrap();
    let entry = journal.begin(file, &f, 3, content).unwrap();
    kill_writer(journal, &entry.path());
    entry.path()
}

/// A journal and a canonical directory `d` for temp files.
pub(super) fn temp_setup() -> (tempfile::TempDir, Journal, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let base = crate::paths::canonical::canonicalize_existing(tmp.path()).unwrap();
    let journal = journal_in(&base);
    let dir = base.join("d");
    fs::create_dir(&dir).unwrap();
    (tmp, journal, dir)
}

/// A temp record for `name` in `dir` whose writer is dead, and the record's path. `name` is
/// created as a regular file first when `create`.
pub(super) fn crashed_temp(journal: &Journal, dir: &Path, name: &str, create: bool) -> PathBuf {
    if create {
        fs::write(dir.join(name), b"a whole copy").unwrap();
    }
    let fd = crate::paths::testing::open_dir_from_root(dir);
    let entry = journal
        .begin_temp(dir, fd.as_dir(), OsStr::new(name))
        .unwrap();
    kill_writer(journal, &entry.path());
    entry.path()
}

pub(super) fn records(journal: &Journal) -> usize {
    fs::read_dir(journal.dir()).map_or(0, Iterator::count)
}
