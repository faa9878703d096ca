//! What the `cargo bench` programs share: the median time of a closure's runs.

use std::time::{Duration, Instant};

/// The median of `runs` timed calls of `f`, after one untimed call to warm it up.
pub fn time(runs: usize, mut f: impl FnMut()) -> Duration {
    f();
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}
