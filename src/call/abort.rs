//! When an aborted call may be given up on at once.

use std::sync::atomic::{AtomicU8, Ordering};

/// Whether an aborted call may be given up on at once, shared by the call and the dispatcher
/// running it: yes until the call starts to change something ([`Call::begin_change`](super::Call::begin_change), which
/// [`Call::blocking`](super::Call::blocking) does), never after. Given up on, a call starts no such work: what it reports (`ABORTED`, nothing changed)
/// stays true, even though a thread of it may still be stuck in a read ([`Call::reading`](super::Call::reading)).
#[derive(Debug, Default)]
pub struct AbortGate(AtomicU8);

/// [`AbortGate`] states.
const NOTHING_CHANGED_YET: u8 = 0;
const MAY_CHANGE: u8 = 1;
const GIVEN_UP: u8 = 2;

impl AbortGate {
    /// Work that may change files starts: `false` once the call was given up on.
    pub(super) fn may_change(&self) -> bool {
        let swapped = self.0.compare_exchange(
            NOTHING_CHANGED_YET,
            MAY_CHANGE,
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
        matches!(swapped, Ok(_) | Err(MAY_CHANGE))
    }

    /// Gives up on the call: `true` unless it has started work that may change files (then
    /// its own abort checks decide, and the caller waits for its result).
    pub fn give_up(&self) -> bool {
        let swapped = self.0.compare_exchange(
            NOTHING_CHANGED_YET,
            GIVEN_UP,
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
        matches!(swapped, Ok(_) | Err(GIVEN_UP))
    }
}
