//! Independent jobs run a few at a time on scoped threads: the files of one change, each
//! archived or synced on its own, where one file's wait for the disk need not hold up the next.

use std::sync::atomic::{AtomicUsize, Ordering};

/// How many files of one change are synced at once (more than the cores: each job is a wait
/// for the disk, which several threads overlap), or planned in one window.
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
}
