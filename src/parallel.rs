//! Independent jobs run a few at a time on scoped threads: the files of one change, each
//! archived or synced on its own, where one file's wait for the disk need not hold up the next.

use std::collections::VecDeque;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Condvar, Mutex, MutexGuard, PoisonError};

/// How many files of one change are synced or let go of at once (more than the cores: each job
/// is a wait for the disk, which several threads overlap), or planned past the one taken.
pub const FILES_AT_ONCE: usize = 8;

/// How many threads jobs that mostly compute (planning, compressing) get: the cores, at most
/// [`FILES_AT_ONCE`] — more would only take turns on them, and starve the host's event loop.
pub fn computing_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(FILES_AT_ONCE))
}

/// `job` run on every item, on up to `threads` threads (the caller's among them), the results
/// in the items' order. A thread the system will not start leaves its share to the others; a
/// job that panics panics the caller.
pub fn map<T: Sync, R: Send>(items: &[T], threads: usize, job: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = threads.min(items.len());
    if threads <= 1 {
        return items.iter().map(job).collect();
    }
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let index = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(index) else {
                return done;
            };
            done.push((index, job(item)));
        }
    };
    let mut results: Vec<Option<R>> = items.iter().map(|_| None).collect();
    std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads)
            .filter_map(|_| std::thread::Builder::new().spawn_scoped(scope, work).ok())
            .collect();
        let mut done = work();
        for helper in helpers {
            match helper.join() {
                Ok(more) => done.extend(more),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        for (index, result) in done {
            results[index] = Some(result);
        }
    });
    results
        .into_iter()
        .map(|result| result.expect("every item was taken by a thread"))
        .collect()
}

/// `job` run on every item on up to `threads` threads of their own, its results handed to `take`
/// on the caller's thread in the items' order as they are ready; no job starts more than `ahead`
/// items past the last result taken, so that many results at most are held at once. Once `take`
/// breaks, no other job starts (those running finish; their results are dropped). A job that
/// panics panics the caller, once the other jobs running have finished.
///
/// The threads are started once for all the items, and the caller only waits and takes: a
/// thread started while its caller computes may wait a whole scheduler slice (milliseconds) for
/// a core, where one woken from a wait gets one at once (files planned in windows of new threads
/// took twice as long as their work on two cores).
pub fn map_in_order<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    ahead: usize,
    job: impl Fn(&T) -> R + Sync,
    mut take: impl FnMut(R) -> ControlFlow<()>,
) {
    let threads = threads.min(items.len());
    if threads <= 1 {
        return one_by_one(items, job, take);
    }
    let gate = Gate::new(ahead.max(1));
    let (sender, results) = mpsc::channel::<(usize, R)>();
    let work = |sender: mpsc::Sender<(usize, R)>| {
        let _stop = StopOnDrop(&gate, true);
        while let Some(index) = gate.next(items.len()) {
            if sender.send((index, job(&items[index]))).is_err() {
                return;
            }
        }
    };
    let work = &work;
    std::thread::scope(|scope| {
        // Whatever way the caller leaves (done, a break, a panic in `take`), no job starts after.
        let _stop = StopOnDrop(&gate, false);
        let started = (0..threads)
            .filter(|_| {
                let sender = sender.clone();
                std::thread::Builder::new()
                    .spawn_scoped(scope, move || work(sender))
                    .is_ok()
            })
            .count();
        drop(sender);
        if started == 0 {
            // No thread could be started: the caller does the work.
            return one_by_one(items, &job, &mut take);
        }
        // Results that came before their turn, by index from the next to take.
        let mut waiting: VecDeque<Option<R>> = VecDeque::new();
        let mut taken = 0;
        for (index, result) in results {
            let at = index - taken;
            if waiting.len() <= at {
                waiting.resize_with(at + 1, || None);
            }
            waiting[at] = Some(result);
            while let Some(Some(_)) = waiting.front() {
                let result = waiting.pop_front().flatten().expect("checked");
                taken += 1;
                if take(result).is_break() {
                    return;
                }
                gate.taken(taken);
            }
        }
    });
}

/// [`map_in_order`] on the caller's thread.
fn one_by_one<T, R>(
    items: &[T],
    job: impl Fn(&T) -> R,
    mut take: impl FnMut(R) -> ControlFlow<()>,
) {
    for item in items {
        if take(job(item)).is_break() {
            return;
        }
    }
}

/// Which item [`map_in_order`]'s threads start next, and how far they may run ahead.
struct Gate {
    state: Mutex<GateState>,
    moved: Condvar,
    ahead: usize,
}

struct GateState {
    next: usize,
    taken: usize,
    stopped: bool,
}

impl Gate {
    fn new(ahead: usize) -> Self {
        Gate {
            state: Mutex::new(GateState {
                next: 0,
                taken: 0,
                stopped: false,
            }),
            moved: Condvar::new(),
            ahead,
        }
    }

    fn lock(&self) -> MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The next item to start, once it is within reach; `None` when all are started or the
    /// work stopped.
    fn next(&self, len: usize) -> Option<usize> {
        let mut state = self.lock();
        loop {
            if state.stopped || state.next >= len {
                return None;
            }
            if state.next < state.taken + self.ahead {
                state.next += 1;
                return Some(state.next - 1);
            }
            state = self
                .moved
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn taken(&self, taken: usize) {
        self.lock().taken = taken;
        self.moved.notify_all();
    }

    fn stop(&self) {
        self.lock().stopped = true;
        self.moved.notify_all();
    }
}

/// Stops the gate when dropped: always (`false`), or only while panicking (`true`: a job's
/// panic must not leave the other threads waiting for a result that will never be taken).
struct StopOnDrop<'a>(&'a Gate, bool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        if !self.1 || std::thread::panicking() {
            self.0.stop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_item_runs_once_and_results_keep_the_items_order() {
        let items: Vec<usize> = (0..100).collect();
        let runs = AtomicUsize::new(0);
        let squares = map(&items, 8, |&i| {
            runs.fetch_add(1, Ordering::Relaxed);
            i * i
        });
        assert_eq!(runs.load(Ordering::Relaxed), 100);
        assert_eq!(squares, items.iter().map(|i| i * i).collect::<Vec<_>>());
    }

    #[test]
    fn one_thread_or_one_item_runs_on_the_callers_thread() {
        let caller = std::thread::current().id();
        assert_eq!(
            map(&[1, 2, 3], 1, |_| std::thread::current().id()),
            vec![caller; 3]
        );
        assert_eq!(map(&[1], 8, |_| std::thread::current().id()), vec![caller]);
        assert!(map(&[] as &[u8], 8, |_| ()).is_empty());
    }

    #[test]
    fn in_order_every_result_is_taken_in_the_items_order() {
        let items: Vec<usize> = (0..200).collect();
        for threads in [1, 2, 8] {
            let mut taken = Vec::new();
            map_in_order(
                &items,
                threads,
                4,
                |&i| {
                    // Later items finish first, so results come out of order.
                    std::thread::sleep(std::time::Duration::from_micros(
                        ((200 - i) % 7) as u64 * 50,
                    ));
                    i * 3
                },
                |r| {
                    taken.push(r);
                    ControlFlow::Continue(())
                },
            );
            assert_eq!(taken, items.iter().map(|i| i * 3).collect::<Vec<_>>());
        }
    }

    #[test]
    fn in_order_no_job_starts_past_ahead_nor_after_a_break() {
        let items: Vec<usize> = (0..100).collect();
        let taken = AtomicUsize::new(0);
        let started = AtomicUsize::new(0);
        map_in_order(
            &items,
            4,
            3,
            |&i| {
                started.fetch_add(1, Ordering::SeqCst);
                assert!(
                    i < taken.load(Ordering::SeqCst) + 3,
                    "item {i} started too early"
                );
                i
            },
            |i| {
                taken.store(i + 1, Ordering::SeqCst);
                if i == 10 {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            },
        );
        assert_eq!(taken.load(Ordering::SeqCst), 11);
        // Started: those taken, and at most `ahead` - 1 more in flight when the break came.
        assert!(started.load(Ordering::SeqCst) <= 11 + 2, "{started:?}");
    }

    #[test]
    fn in_order_a_panicking_job_panics_the_caller_without_a_hang() {
        let items: Vec<usize> = (0..50).collect();
        let outcome = std::panic::catch_unwind(|| {
            map_in_order(
                &items,
                2,
                2,
                |&i| assert!(i != 5, "job 5 fails"),
                |()| ControlFlow::Continue(()),
            )
        });
        assert!(outcome.is_err());
    }
}
