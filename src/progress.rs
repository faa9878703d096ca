//! Progress of long operations, for the host (`CallContext.onProgress`, ../docs/hosts.md#the-workspace-api): how much of a
//! recursive trash or restore, a search over a big tree or a patch over many files is done.
//!
//! A call carries a [`Progress`] (empty when the host gave no `onProgress`). A tool starts a
//! [`Meter`] for one operation, in one [`Unit`] and with a total when it is known, and advances
//! it as the work goes; the meter tells the host at once when it starts, then at most once per
//! [`INTERVAL`] (≤ 10 a second, whatever the number of threads advancing it), and never blocks:
//! the host's sink must not wait for JavaScript (the bindings queue the update for the JS thread).
//!
//! **Scoped meters.** The trash runs many layers deep on one blocking thread (walk, tar, stream,
//! extraction). Rather than thread a meter through every signature there, a tool runs that work
//! inside [`Meter::scoped`], and the engine's loops call [`advance`] with what they did (bytes
//! copied, an entry done); with no scope on the thread, [`advance`] does nothing. A meter counts
//! only the steps of its own unit, so an undo counting files can run a restore that reports bytes.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;

/// The shortest time between two updates of one meter.
pub const INTERVAL: Duration = Duration::from_millis(100);

/// What a meter counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    /// Files (a search, a patch, an undo).
    Files,
    /// Bytes of content (a trash or restore of a tree).
    Bytes,
    /// Entries of a tree: files, directories and links (a tree without content bytes).
    Entries,
}

/// One update for the host: `{ done, total?, unit }`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Update {
    pub done: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    pub unit: Unit,
}

/// Where updates go: the host's `onProgress`. Must return at once (never wait for the host).
pub trait Sink: Send + Sync {
    fn report(&self, update: Update);
}

/// A call's way to report progress: to the host's sink, or nowhere.
#[derive(Clone, Default)]
pub struct Progress(Option<Arc<dyn Sink>>);

impl Progress {
    /// Progress reported to `sink`.
    pub fn to(sink: Arc<dyn Sink>) -> Self {
        Self(Some(sink))
    }

    /// Starts a meter for one operation of `total` units (when known), reporting `done: 0` now.
    pub fn meter(&self, unit: Unit, total: Option<u64>) -> Meter {
        let Some(sink) = self.0.clone() else {
            return Meter(None);
        };
        let meter = Meter(Some(Arc::new(Inner {
            sink,
            unit,
            total,
            done: AtomicU64::new(0),
            throttle: Mutex::new(Throttle::new(INTERVAL)),
        })));
        meter.report(Instant::now());
        meter
    }
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Progress(to host)"
        } else {
            "Progress(none)"
        })
    }
}

/// The progress of one operation. Cheap to clone and to share between threads; does nothing
/// when the call has no progress sink.
#[derive(Clone, Default)]
pub struct Meter(Option<Arc<Inner>>);

struct Inner {
    sink: Arc<dyn Sink>,
    unit: Unit,
    total: Option<u64>,
    done: AtomicU64,
    throttle: Mutex<Throttle>,
}

impl Meter {
    /// A meter that reports nothing.
    pub fn none() -> Self {
        Self(None)
    }

    /// Counts `n` more units done; tells the host if the last update is old enough.
    pub fn advance(&self, n: u64) {
        let Some(inner) = &self.0 else { return };
        if n == 0 {
            return;
        }
        inner.done.fetch_add(n, Ordering::Relaxed);
        self.report(Instant::now());
    }

    /// Counts a step the engine reported (see [`advance`]), if it is in this meter's unit.
    fn step(&self, unit: Unit, n: u64) {
        if self.0.as_ref().is_some_and(|inner| inner.unit == unit) {
            self.advance(n);
        }
    }

    fn report(&self, now: Instant) {
        let Some(inner) = &self.0 else { return };
        let ready = inner
            .throttle
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .ready(now);
        if ready {
            let done = inner.done.load(Ordering::Relaxed);
            // A tree that grew while it was worked on: the total was a floor, not a promise.
            let total = inner.total.map(|total| total.max(done));
            inner.sink.report(Update {
                done,
                total,
                unit: inner.unit,
            });
        }
    }

    /// Runs `work` with this meter as the thread's current one: [`advance`] calls made by `work`
    /// on this thread count here. Scopes nest; the previous one is back afterwards.
    pub fn scoped<T>(&self, work: impl FnOnce() -> T) -> T {
        struct Restore(Option<Meter>);
        impl Drop for Restore {
            fn drop(&mut self) {
                CURRENT.with(|current| *current.borrow_mut() = self.0.take());
            }
        }
        let previous = CURRENT.with(|current| current.borrow_mut().replace(self.clone()));
        let _restore = Restore(previous);
        work()
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Meter>> = const { RefCell::new(None) };
}

/// Tells the thread's current meter (see [`Meter::scoped`]) that `n` units of `unit` are done.
/// Engines call it from their loops; it does nothing outside a scope or for another unit.
pub fn advance(unit: Unit, n: u64) {
    // Cloned out first: the sink must not run while the thread's slot is borrowed.
    let meter = CURRENT.with(|current| current.borrow().clone());
    if let Some(meter) = meter {
        meter.step(unit, n);
    }
}

/// At most one update per `interval`, the first at once.
#[derive(Debug)]
struct Throttle {
    interval: Duration,
    last: Option<Instant>,
}

impl Throttle {
    fn new(interval: Duration) -> Self {
        Self {
            interval,
            last: None,
        }
    }

    /// Whether an update may go out at `now` (and if so, counts it as sent).
    fn ready(&mut self, now: Instant) -> bool {
        let due = self
            .last
            .is_none_or(|last| now.saturating_duration_since(last) >= self.interval);
        if due {
            self.last = Some(now);
        }
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Recorder(Mutex<Vec<Update>>);

    impl Sink for Recorder {
        fn report(&self, update: Update) {
            self.0.lock().unwrap().push(update);
        }
    }

    fn recorded(progress: &Arc<Recorder>) -> Vec<Update> {
        progress.0.lock().unwrap().clone()
    }

    #[test]
    fn the_throttle_lets_one_update_through_per_interval() {
        let start = Instant::now();
        let at = |ms| start + Duration::from_millis(ms);
        let mut throttle = Throttle::new(INTERVAL);
        let sent: Vec<u64> = (0..=350)
            .step_by(10)
            .filter(|&ms| throttle.ready(at(ms)))
            .collect();
        assert_eq!(sent, [0, 100, 200, 300]);
    }

    #[test]
    fn a_meter_reports_its_start_at_once_then_throttles() {
        let recorder = Arc::new(Recorder::default());
        let progress = Progress::to(recorder.clone());
        let meter = progress.meter(Unit::Files, Some(1000));
        // A thousand steps in far less than the interval: only the start went out.
        for _ in 0..1000 {
            meter.advance(1);
        }
        let updates = recorded(&recorder);
        assert_eq!(
            updates.first(),
            Some(&Update {
                done: 0,
                total: Some(1000),
                unit: Unit::Files
            })
        );
        // Each update went out at least INTERVAL after the one before; a slow machine may
        // let a second through, never one per step.
        assert!(updates.len() < 100, "{} updates", updates.len());
    }

    #[test]
    fn a_total_that_was_passed_grows_with_what_was_done() {
        let recorder = Arc::new(Recorder::default());
        let meter = Progress::to(recorder.clone()).meter(Unit::Bytes, Some(5));
        meter.0.as_ref().unwrap().done.store(9, Ordering::Relaxed);
        // Make the next report due.
        meter.0.as_ref().unwrap().throttle.lock().unwrap().last = None;
        meter.advance(1);
        assert_eq!(recorded(&recorder).last().unwrap().total, Some(10));
    }

    #[test]
    fn scoped_steps_count_in_the_current_meter_and_only_in_its_unit() {
        let recorder = Arc::new(Recorder::default());
        let meter = Progress::to(recorder.clone()).meter(Unit::Bytes, None);
        advance(Unit::Bytes, 7); // no scope: nowhere
        meter.scoped(|| {
            advance(Unit::Bytes, 5);
            advance(Unit::Entries, 1); // another unit: not counted
            let inner = Progress::default().meter(Unit::Bytes, None);
            inner.scoped(|| advance(Unit::Bytes, 100)); // the inner scope's
            advance(Unit::Bytes, 2);
        });
        advance(Unit::Bytes, 7); // the scope has ended
        let done = meter.0.as_ref().unwrap().done.load(Ordering::Relaxed);
        assert_eq!(done, 7);
    }

    #[test]
    fn without_a_sink_nothing_is_counted_or_sent() {
        let meter = Progress::default().meter(Unit::Files, Some(3));
        meter.advance(3);
        assert!(meter.0.is_none());
    }

    #[test]
    fn an_update_is_the_json_the_host_reads() {
        let update = Update {
            done: 3,
            total: None,
            unit: Unit::Entries,
        };
        assert_eq!(
            serde_json::to_string(&update).unwrap(),
            r#"{"done":3,"unit":"entries"}"#
        );
    }
}
