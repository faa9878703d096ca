//! A gzip writer that compresses on every core: the input is cut into blocks of [`BLOCK`] bytes,
//! each block becomes its own gzip member (RFC 1952 §2.2: a concatenation of members is one gzip
//! file; `gzip -d`, `tar -xzf` and our `MultiGzDecoder` read it whole), and the members are
//! written in input order. A block whose sample does not compress (random or already compressed
//! data) is stored (level 0) instead of spending a core on it.
//!
//! Why not the `gzp` crate: its pigz-style single member needs a C zlib backend (for preset
//! dictionaries); independent members cost under 0.1 % in size at this block size and keep the
//! pure-Rust `zlib-rs` backend.
//!
//! Memory is bounded: at most [`IN_FLIGHT_PER_WORKER`] blocks per worker are queued or being
//! compressed, whatever the input size, and their buffers are reused. Input smaller than one block
//! is compressed on the caller's thread, so small archives start no threads.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;

use flate2::write::GzEncoder;
use flate2::Compression;

use super::stream::is_all_zeros;

/// Bytes per gzip member.
pub(crate) const BLOCK: usize = 1 << 20;
/// Blocks queued or compressing per worker before `write` waits for the oldest.
const IN_FLIGHT_PER_WORKER: usize = 2;
/// Bytes of a block compressed at the fastest level to tell whether it compresses at all.
const SAMPLE: usize = 16 << 10;
/// A sample that shrinks by less than this share is taken as incompressible.
const INCOMPRESSIBLE_RATIO: f64 = 0.97;

/// How many blocks were stored rather than compressed (tests tell the stored path was taken).
#[cfg(test)]
pub(crate) static STORED_BLOCKS: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

/// A compressed member, and the block it came from (emptied, for reuse).
type Member = io::Result<(Vec<u8>, Vec<u8>)>;

/// One block to compress, a buffer for its member, and where the member goes.
struct Job {
    block: Vec<u8>,
    member: Vec<u8>,
    done: SyncSender<Member>,
}

/// The compressing threads, started when the first block is complete.
struct Workers {
    jobs: Option<SyncSender<Job>>,
    threads: Vec<JoinHandle<()>>,
    in_flight: VecDeque<Receiver<Member>>,
    limit: usize,
}

/// A `Write` that gzips what it is given into `out` as described in the module docs.
pub(crate) struct ParallelGzWriter<W: Write> {
    out: Option<W>,
    level: Compression,
    block: Vec<u8>,
    workers: Option<Workers>,
    /// Buffers of compressed blocks and of written members, reused so that memory stays flat.
    spare_blocks: Vec<Vec<u8>>,
    spare_members: Vec<Vec<u8>>,
}

impl<W: Write> ParallelGzWriter<W> {
    pub(crate) fn new(out: W, level: Compression) -> Self {
        Self {
            out: Some(out),
            level,
            block: Vec::with_capacity(BLOCK),
            workers: None,
            spare_blocks: Vec::new(),
            spare_members: Vec::new(),
        }
    }

    /// Compresses what is left, writes every member and returns `out`.
    pub(crate) fn finish(mut self) -> io::Result<W> {
        if !self.block.is_empty() || self.workers.is_none() {
            // Even empty input gives one (empty) member: a gzip file is never zero bytes.
            let block = std::mem::take(&mut self.block);
            self.submit(block)?;
        }
        if let Some(workers) = &mut self.workers {
            workers.jobs = None;
            let out = self.out.as_mut().expect("taken only here");
            while let Some(member) = workers.in_flight.pop_front() {
                out.write_all(&receive(member)?.0)?;
            }
        }
        Ok(self.out.take().expect("taken only here"))
    }

    /// Compresses `block` (on a worker once there is more than one block), writing out members
    /// as they come due.
    fn submit(&mut self, block: Vec<u8>) -> io::Result<()> {
        let out = self.out.as_mut().expect("taken only in finish");
        let Some(workers) = &mut self.workers else {
            let (member, _) = compress(block, Vec::new(), self.level)?;
            return out.write_all(&member);
        };
        if workers.in_flight.len() >= workers.limit {
            let oldest = workers.in_flight.pop_front().expect("limit is at least 1");
            let (member, used) = receive(oldest)?;
            out.write_all(&member)?;
            self.spare_members.push(member);
            self.spare_blocks.push(used);
        }
        let member = self.spare_members.pop().unwrap_or_default();
        let (done, result) = mpsc::sync_channel(1);
        let jobs = workers.jobs.as_ref().expect("dropped only in finish");
        jobs.send(Job {
            block,
            member,
            done,
        })
        .map_err(|_| io::Error::other("the compressing threads stopped"))?;
        workers.in_flight.push_back(result);
        Ok(())
    }

    fn start_workers(&mut self) -> io::Result<()> {
        let count = std::thread::available_parallelism().map_or(1, |n| n.get());
        let (jobs, queue) = mpsc::sync_channel::<Job>(count);
        let queue = Arc::new(Mutex::new(queue));
        let level = self.level;
        let threads = (0..count)
            .map(|i| {
                let queue = Arc::clone(&queue);
                std::thread::Builder::new()
                    .name(format!("afs-gzip-{i}"))
                    .spawn(move || compress_jobs(&queue, level))
            })
            .collect::<io::Result<Vec<_>>>()?;
        self.workers = Some(Workers {
            jobs: Some(jobs),
            threads,
            in_flight: VecDeque::new(),
            limit: count * IN_FLIGHT_PER_WORKER,
        });
        Ok(())
    }
}

impl<W: Write> Write for ParallelGzWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = buf.len().min(BLOCK - self.block.len());
        self.block.extend_from_slice(&buf[..n]);
        if self.block.len() == BLOCK {
            // Input of a block or more is worth the threads; less is compressed in `finish`.
            if self.workers.is_none() {
                self.start_workers()?;
            }
            let block = std::mem::take(&mut self.block);
            self.submit(block)?;
            self.block = self
                .spare_blocks
                .pop()
                .unwrap_or_else(|| Vec::with_capacity(BLOCK));
        }
        Ok(n)
    }

    /// Members are only written whole; this flushes what is already written out.
    fn flush(&mut self) -> io::Result<()> {
        self.out.as_mut().map_or(Ok(()), Write::flush)
    }
}

impl<W: Write> Drop for ParallelGzWriter<W> {
    /// Stops the workers (after an error or an abort, with blocks still queued) and waits for
    /// them, so no thread outlives the archive it was writing.
    fn drop(&mut self) {
        if let Some(mut workers) = self.workers.take() {
            workers.jobs = None;
            workers.in_flight.clear();
            for thread in workers.threads {
                let _ = thread.join();
            }
        }
    }
}

/// A worker: compresses jobs until the queue closes; a job whose result nobody waits for any
/// more (the writer was dropped) is simply discarded.
fn compress_jobs(queue: &Mutex<Receiver<Job>>, level: Compression) {
    loop {
        let job = {
            let queue = queue.lock().unwrap_or_else(|e| e.into_inner());
            queue.recv()
        };
        let Ok(job) = job else { return };
        let _ = job.done.send(compress(job.block, job.member, level));
    }
}

fn receive(member: Receiver<Member>) -> Member {
    member
        .recv()
        .unwrap_or_else(|_| Err(io::Error::other("a compressing thread stopped")))
}

/// One block as one gzip member, written into `member` (emptied first); stored if a sample
/// shows it does not compress. Returns the member and the emptied block.
fn compress(mut block: Vec<u8>, mut member: Vec<u8>, level: Compression) -> Member {
    if block.len() == BLOCK && is_all_zeros(&block) {
        // The holes of a sparse file or a zero-filled image: every such block gives the same
        // member, so it is compressed once per level, not once per megabyte.
        member.clear();
        member.extend_from_slice(zero_block_member(level)?);
        block.clear();
        return Ok((member, block));
    }
    let level = if level.level() > 0 && !compresses(&block) {
        #[cfg(test)]
        STORED_BLOCKS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Compression::none()
    } else {
        level
    };
    member.clear();
    let mut encoder = GzEncoder::new(member, level);
    encoder.write_all(&block)?;
    let member = encoder.finish()?;
    block.clear();
    Ok((member, block))
}

/// The gzip member of a [`BLOCK`] of zeros at `level` (the same bytes `compress` would produce:
/// the header carries no name or time), computed on first use.
fn zero_block_member(level: Compression) -> io::Result<&'static [u8]> {
    static MEMBERS: [OnceLock<Vec<u8>>; 10] = [const { OnceLock::new() }; 10];
    let slot = &MEMBERS[(level.level() as usize).min(9)];
    if let Some(member) = slot.get() {
        return Ok(member);
    }
    let mut encoder = GzEncoder::new(Vec::new(), level);
    encoder.write_all(&vec![0u8; BLOCK])?;
    let member = encoder.finish()?;
    Ok(slot.get_or_init(|| member))
}

/// Whether the first [`SAMPLE`] bytes shrink noticeably at the fastest level.
fn compresses(block: &[u8]) -> bool {
    let sample = &block[..block.len().min(SAMPLE)];
    if sample.len() < 512 {
        return true;
    }
    let mut encoder = flate2::write::DeflateEncoder::new(Vec::new(), Compression::fast());
    match encoder.write_all(sample).and_then(|()| encoder.finish()) {
        Ok(packed) => (packed.len() as f64) < sample.len() as f64 * INCOMPRESSIBLE_RATIO,
        Err(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::read::MultiGzDecoder;
    use std::io::Read;

    fn noise(len: usize, seed: u64) -> Vec<u8> {
        let mut x = seed | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    }

    fn text(len: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(len);
        let mut i = 0u64;
        while out.len() < len {
            out.extend_from_slice(
                format!("line {i}: the quick brown fox {}\n", i * 7919 % 1013).as_bytes(),
            );
            i += 1;
        }
        out.truncate(len);
        out
    }

    /// Writes `data` in uneven pieces, as the tar builder does.
    fn gzip(data: &[u8], level: u32) -> Vec<u8> {
        let mut writer = ParallelGzWriter::new(Vec::new(), Compression::new(level));
        for piece in data.chunks(70_001) {
            writer.write_all(piece).unwrap();
        }
        writer.finish().unwrap()
    }

    fn gunzip(data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        MultiGzDecoder::new(data).read_to_end(&mut out).unwrap();
        out
    }

    #[test]
    fn round_trips_at_every_size_around_the_block_edges() {
        let base = [text(3 * BLOCK), noise(BLOCK, 7)].concat();
        for len in [0, 1, 511, BLOCK - 1, BLOCK, BLOCK + 1, 2 * BLOCK, 4 * BLOCK] {
            let data = &base[..len];
            let packed = gzip(data, 3);
            assert_eq!(gunzip(&packed), data, "len {len}");
        }
    }

    #[test]
    fn the_system_gzip_reads_it_whole() {
        let data = [text(2 * BLOCK + 12_345), noise(BLOCK / 2, 3), text(1000)].concat();
        let packed = gzip(&data, 6);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.gz");
        std::fs::write(&path, &packed).unwrap();
        let out = std::process::Command::new("gzip")
            .arg("-dc")
            .arg(&path)
            .output()
            .unwrap();
        assert!(out.status.success());
        assert_eq!(out.stdout, data);
    }

    /// Zero blocks (a sparse file's holes) take the cached member: the output is byte for byte
    /// what compressing them would give, and a block with one byte set is not taken for zeros.
    #[test]
    fn zero_blocks_give_the_same_members_as_compressing_them() {
        let mut data = vec![0u8; 4 * BLOCK + 100];
        data[2 * BLOCK + 4095] = 1; // the last byte of the first page of block 2
        for level in [1, 3, 9] {
            let ours = gzip(&data, level);
            let mut plain = Vec::new();
            for block in data.chunks(BLOCK) {
                let mut encoder = GzEncoder::new(Vec::new(), Compression::new(level));
                encoder.write_all(block).unwrap();
                plain.extend(encoder.finish().unwrap());
            }
            assert_eq!(ours, plain, "level {level}");
            assert_eq!(gunzip(&ours), data);
        }
        assert!(is_all_zeros(&[0; 10_000]) && !is_all_zeros(&[0, 0, 0, 7]));
    }

    #[test]
    fn text_compresses_and_noise_is_stored() {
        let text = text(3 * BLOCK);
        assert!(gzip(&text, 3).len() < text.len() / 4);
        let noise = noise(3 * BLOCK, 11);
        let packed = gzip(&noise, 9);
        // Stored: the data plus a few bytes of framing per 64 KiB deflate block and per member.
        assert!(
            packed.len() < noise.len() + noise.len() / 1000 + 200,
            "{}",
            packed.len()
        );
        assert_eq!(gunzip(&packed), noise);
    }

    #[test]
    fn a_failing_output_fails_the_write_and_stops_the_threads() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::from(io::ErrorKind::StorageFull))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let mut writer = ParallelGzWriter::new(Full, Compression::new(3));
        let data = text(20 * BLOCK);
        let result = data.chunks(BLOCK).try_for_each(|c| writer.write_all(c));
        let error = result
            .err()
            .or_else(|| writer.finish().err())
            .expect("an error");
        assert_eq!(error.kind(), io::ErrorKind::StorageFull);
    }
}
