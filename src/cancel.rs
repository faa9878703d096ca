//! Abort signals: the host's `AbortSignal` becomes a token that every phase of a call checks,
//! and that wakes a call waiting for a confirmation.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::sync::Notify;

/// A cloneable abort flag.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<Inner>);

#[derive(Debug, Default)]
struct Inner {
    aborted: AtomicBool,
    notify: Notify,
}

impl CancelToken {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn abort(&self) {
        self.0.aborted.store(true, Ordering::SeqCst);
        self.0.notify.notify_waiters();
    }

    pub fn is_aborted(&self) -> bool {
        self.0.aborted.load(Ordering::SeqCst)
    }

    /// Resolves once the token is aborted.
    pub async fn aborted(&self) {
        loop {
            let notified = self.0.notify.notified();
            if self.is_aborted() {
                return;
            }
            notified.await;
        }
    }
}
