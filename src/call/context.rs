//! What the host passes with one call, and where a checked call (`ws.check`) leaves what it
//! would have asked.

use std::sync::Arc;

use crate::cancel::CancelToken;
use crate::confirm::{ConfirmRequest, Confirmer};
use crate::permissions::Permissions;
use crate::progress::Progress;

/// What the host passes with one call (`CallContext`, ../../docs/hosts.md#the-workspace-api).
#[derive(Clone, Default)]
pub struct CallContext {
    pub confirmer: Option<Arc<dyn Confirmer>>,
    /// This call's permissions, when the host overrides the workspace's
    /// ([`crate::dispatch::Toolset::call_permissions`] merges a partial object).
    pub permissions: Option<Permissions>,
    pub cancel: CancelToken,
    /// The host's id for this call.
    pub id: Option<u32>,
    /// The calls whose confirm handlers made this call, outermost first.
    pub answering: Vec<u32>,
    /// Where long operations report how far they are (the host's `onProgress`).
    pub progress: Progress,
    /// Set for a call that is only checked (`ws.check`): it stops at its permission decision.
    pub check: Option<Arc<CheckSlot>>,
}

/// What a call would do about asking the user, learnt without doing it (`ws.check`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// The permissions grant it: it would run without asking.
    Allow,
    /// It would ask this.
    Ask(Box<ConfirmRequest>),
}

/// Where a checked call leaves its [`Decision`]: [`Call::authorize`](super::Call::authorize) records it there and stops
/// the call as an abort would, before anything is changed.
#[derive(Debug, Default)]
pub struct CheckSlot(std::sync::Mutex<Option<Decision>>);

impl CheckSlot {
    /// The decision recorded, if the call got that far.
    pub fn take(&self) -> Option<Decision> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    pub(super) fn record(&self, decision: Decision) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(decision);
    }
}
