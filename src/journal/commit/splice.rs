//! Taking an append of ours back when someone appended after it: a change killed (or failed)
//! before its commit point whose append went through, and then another process appended to the
//! same file. Our bytes must not stand without the change's record, and theirs must not go: ours
//! are cut out from between the old content and theirs, byte-exact, theirs moved down in their
//! place — only when the file holds exactly its old content, all of our bytes and then theirs.
//!
//! Moving their bytes takes more than one write, so a copy of them is kept beside the record
//! (sealed, fsynced) before the first: a splice a kill cut short is finished from the copy, once
//! the file is checked to be in a state the splice could have left. What a splice cannot judge
//! is left as it is: their bytes over [`MAX_FOREIGN`] or ours over [`MAX_OURS`], a file changed
//! while it was compared, a cut-short append of ours followed by theirs (where ours ends cannot
//! be told for sure).

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::path::Path;

use crate::journal::store::Store;
use crate::paths::io::{read_exact_at, write_all_at};
use crate::paths::{fsops, Stat};

/// The most bytes of someone else's a splice moves (they are held in memory and copied to the
/// journal); beyond it, the file is left as it is.
pub const MAX_FOREIGN: u64 = 16 << 20;

/// The largest append of ours a splice takes out (ours and theirs are compared in memory);
/// a larger one followed by someone else's bytes is left as it is.
pub const MAX_OURS: u64 = 64 << 20;

/// Where the copies of the bytes a splice moves are kept: beside the record, one per step, as
/// `<record stem>.<step>.foreign`, sealed like the record.
pub struct ForeignCopies<'a> {
    store: &'a Store,
    record: &'a OsStr,
}

/// The extension of a copy of moved bytes (after the step's index).
pub const FOREIGN_EXTENSION: &str = "foreign";

impl<'a> ForeignCopies<'a> {
    /// The copies of the record `record` in `store`.
    pub fn new(store: &'a Store, record: &'a OsStr) -> Self {
        Self { store, record }
    }

    fn name(&self, step: usize) -> OsString {
        Path::new(self.record)
            .with_extension(format!("{step}.{FOREIGN_EXTENSION}"))
            .into_os_string()
    }

    /// The copy kept for `step`, if there is one and its seal verifies.
    fn kept(&self, step: usize) -> Option<Vec<u8>> {
        self.store.read_sealed_with(&self.name(step), |body| {
            let mut text = Vec::new();
            body.read_to_end(&mut text).ok()?;
            from_hex(&text)
        })
    }

    /// Keeps `bytes` for `step` (as hex: a sealed body holds no newline), fsynced (and its
    /// name) before this returns.
    pub fn keep(&self, step: usize, bytes: &[u8]) -> io::Result<()> {
        let name = self.name(step);
        let _ = self.store.remove(&name);
        self.store.write_sealed_with(&name, true, &mut |out| {
            for chunk in bytes.chunks(64 * 1024) {
                out.write_all(crate::hashing::hex(chunk).as_bytes())?;
            }
            Ok(())
        })?;
        self.store.sync();
        Ok(())
    }

    /// Removes the copy kept for `step`, if any.
    fn forget(&self, step: usize) {
        let _ = self.store.remove(&self.name(step));
    }

    /// Removes every copy kept beside the record.
    pub fn forget_all(store: &Store, record: &OsStr) {
        let Ok(names) = store.names() else { return };
        for name in names {
            if copy_of(&name).is_some_and(|of| of == record) {
                let _ = store.remove(&name);
            }
        }
    }
}

/// The record a copy of moved bytes named `name` belongs to, if it is one.
pub fn copy_of(name: &OsStr) -> Option<OsString> {
    let path = Path::new(name);
    if path.extension() != Some(OsStr::new(FOREIGN_EXTENSION)) {
        return None;
    }
    let step = Path::new(path.file_stem()?);
    step.extension()?.to_str()?.parse::<usize>().ok()?;
    Some(step.with_extension("json").into_os_string())
}

/// What a splice found.
#[derive(Debug, PartialEq, Eq)]
pub enum Splice {
    /// Not a case for a splice (nothing of theirs after all of ours): judge it otherwise.
    NotOurs,
    /// Done, or nothing could be judged and the file is left as it is: the step is settled.
    Settled,
}

/// Cuts `ours` (the bytes an append step `step` added at `old_size`) out of `file` (still the
/// step's file, opened without `O_APPEND`) when it holds its old content, all of `ours` and
/// then someone else's bytes, moving theirs down (see the module docs); finishes a splice a kill
/// cut short. `Err` for an I/O failure (the copy stays; the next recovery finishes it).
pub fn splice_out(
    file: &File,
    old_size: u64,
    ours: &[u8],
    step: usize,
    copies: &ForeignCopies<'_>,
) -> io::Result<Splice> {
    let len = ours.len() as u64;
    let before = fsops::fstat(file)?;
    if let Some(theirs) = copies.kept(step) {
        finish_cut_short(file, old_size, ours, &theirs, &before)?;
        copies.forget(step);
        return Ok(Splice::Settled);
    }
    let size = before.size;
    if size <= old_size + len || size - old_size - len > MAX_FOREIGN {
        return Ok(Splice::NotOurs);
    }
    let mut tail = vec![0u8; (size - old_size) as usize];
    read_exact_at(file, &mut tail, old_size)?;
    if tail[..ours.len()] != *ours {
        return Ok(Splice::NotOurs);
    }
    let theirs = &tail[ours.len()..];
    copies.keep(step, theirs)?;
    if !unchanged(file, &before)? {
        copies.forget(step);
        return Ok(Splice::Settled);
    }
    crate::paths::process::crash_point("splice");
    move_down(file, old_size, theirs)?;
    copies.forget(step);
    Ok(Splice::Settled)
}

/// Finishes a splice from the copy of their bytes, if the file is in a state the splice could
/// have left: their first `j` bytes written over ours, the rest as it was (not yet cut), or all
/// done. Anything else is left as it is.
fn finish_cut_short(
    file: &File,
    old_size: u64,
    ours: &[u8],
    theirs: &[u8],
    before: &Stat,
) -> io::Result<()> {
    let (len, n) = (ours.len() as u64, theirs.len() as u64);
    if before.size != old_size + len + n {
        // Done already (`old_size + n`, theirs in place), or changed by someone: left alone.
        return Ok(());
    }
    let mut now = vec![0u8; (len + n) as usize];
    read_exact_at(file, &mut now, old_size)?;
    let was: Vec<u8> = ours.iter().chain(theirs).copied().collect();
    // The longest prefix of theirs written, and the shortest suffix still as it was: a state
    // the splice left if they meet.
    let written = now.iter().zip(theirs).take_while(|(a, b)| a == b).count();
    let as_was = now.len()
        - now
            .iter()
            .rev()
            .zip(was.iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
    if as_was <= written && unchanged(file, before)? {
        move_down(file, old_size, theirs)?;
    }
    Ok(())
}

/// Writes `theirs` at `old_size`, cuts the file after them and syncs it.
fn move_down(file: &File, old_size: u64, theirs: &[u8]) -> io::Result<()> {
    write_all_at(file, theirs, old_size)?;
    file.set_len(old_size + theirs.len() as u64)?;
    file.sync_all()
}

/// Whether `file` is still, by size and times, what `before` describes.
fn unchanged(file: &File, before: &Stat) -> io::Result<bool> {
    let now = fsops::fstat(file)?;
    Ok(now.size == before.size && now.mtime == before.mtime && now.ctime == before.ctime)
}

/// The bytes `text` spells in (lower-case) hex, if it does.
fn from_hex(text: &[u8]) -> Option<Vec<u8>> {
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    if !text.len().is_multiple_of(2) {
        return None;
    }
    text.chunks(2)
        .map(|pair| Some(digit(pair[0])? << 4 | digit(pair[1])?))
        .collect()
}
