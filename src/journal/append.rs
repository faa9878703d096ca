//! Replay of `append` records (see the journal's docs): those versions before the change
//! executor left, and the test-only writer that stages them.

use std::fs::File;
use std::io::{self, Seek, SeekFrom};

use super::tail::{roll_back_if_ours, Tail};
use super::{open_beneath_allowed, AppendRecord, Recovered};
#[cfg(test)]
use super::{Journal, Record, WrittenRecord};
use crate::paths::AsDir;
use crate::paths::{fsops, EntryKind, Sandbox};
#[cfg(test)]
use std::path::Path;

#[cfg(test)]
impl Journal {
    /// Writes and fsyncs an `append` record for appending `content` to `file` (at `path`) of
    /// `old_size` bytes, and a copy of `content` beside it (written and fsynced first, so a
    /// record that says `keptBytes` always has them) — as versions before the change executor
    /// did. `append_file` now appends in a commit record's step (`commit::StepAction::Append`);
    /// this writer stays for the tests of replaying the records such versions left.
    #[cfg(test)]
    pub fn begin(
        &self,
        path: &Path,
        file: &File,
        old_size: u64,
        content: &[u8],
    ) -> io::Result<WrittenRecord> {
        let (dev, ino) = fsops::fstat(file)?.identity();
        let record = Record::Append(AppendRecord {
            path: path.to_owned(),
            dev,
            ino,
            old_size,
            append_len: content.len() as u64,
            append_sha256: crate::hashing::sha256_hex(content),
            pid: std::process::id(),
            kept_bytes: true,
        });
        self.write_with_kept(&record, &[content])
    }
}

/// Applies one append record to its file, with the copy of the appended bytes kept beside the
/// record (`kept`, when there is one); `Err` only for an I/O failure worth retrying next time.
pub fn replay(
    record: &AppendRecord,
    kept: Option<File>,
    sandbox: &Sandbox,
) -> io::Result<Recovered> {
    // Reached beneath the allowed tree holding it without following any symlink, as every user
    // path is.
    let (Some(parent), Some(name)) = (record.path.parent(), record.path.file_name()) else {
        return Ok(Recovered::LeftAlone);
    };
    let Ok(dir) = open_beneath_allowed(sandbox, parent) else {
        return Ok(Recovered::LeftAlone);
    };
    let Ok(mut file) = fsops::open_for_update(dir.as_dir(), name) else {
        return Ok(Recovered::LeftAlone);
    };
    let stat = fsops::fstat(&file)?;
    if stat.kind() != EntryKind::File || stat.identity() != (record.dev, record.ino) {
        return Ok(Recovered::LeftAlone);
    }
    let Some(ours) = kept_bytes(record, kept)? else {
        let complete = stat.size == record.old_size + record.append_len
            && tail_sha256(&mut file, record.old_size)? == record.append_sha256;
        return Ok(if complete {
            Recovered::Complete
        } else {
            Recovered::LeftAlone
        });
    };
    Ok(
        match roll_back_if_ours(&file, record.old_size, ours, record.append_len, true)? {
            Tail::Whole => Recovered::Complete,
            Tail::CutShort => Recovered::RolledBack,
            Tail::Absent | Tail::Other => Recovered::LeftAlone,
        },
    )
}

/// The kept copy of the appended bytes, opened at its start, if the record has one and it is
/// intact: exactly `appendLen` bytes hashing to `appendSha256` (a copy torn by a power cut
/// proves nothing).
fn kept_bytes(record: &AppendRecord, kept: Option<File>) -> io::Result<Option<File>> {
    let (true, Some(mut copy)) = (record.kept_bytes, kept) else {
        return Ok(None);
    };
    let meta = copy.metadata()?;
    if !meta.is_file()
        || meta.len() != record.append_len
        || crate::hashing::sha256_reader(&mut copy)? != record.append_sha256
    {
        return Ok(None);
    }
    copy.rewind()?;
    Ok(Some(copy))
}

fn tail_sha256(file: &mut File, from: u64) -> io::Result<String> {
    file.seek(SeekFrom::Start(from))?;
    crate::hashing::sha256_reader(file)
}
