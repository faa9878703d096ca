//! Granting, upgrading and releasing the requests of the lock table, in arrival order as far as
//! conflicts allow (see [`super`]'s "Rules" and "Cost").

use std::ops::Bound;
use std::path::PathBuf;

use tokio::sync::oneshot;

use super::asker::{Asker, WaitsForItsAsker};
use super::mode::Mode;
use super::table::{Request, Table, Waiting, ROOT};

impl Request {
    /// The modes whose granted locks and earlier waiting requests keep this waiting one waiting.
    fn blocked_by(&self, waiting: Mode) -> &'static [Mode] {
        match self.held {
            // An upgrade: no other change can overlap the one it holds, and the requests waiting
            // for a change or an exclusive lock here wait for it.
            Some(_) => &[Mode::Read],
            None => waiting.conflicting(),
        }
    }
}

impl Table {
    /// Adds a request for `paths` in `mode`: granted at once (no receiver), or waiting (the
    /// receiver hears of the grant), or refused.
    pub(super) fn request(
        &mut self,
        paths: Vec<PathBuf>,
        mode: Mode,
        asker: Asker<'_>,
    ) -> Result<(u64, Option<oneshot::Receiver<()>>), WaitsForItsAsker> {
        let nodes: Vec<usize> = paths.iter().map(|path| self.node(path)).collect();
        let ticket = self.ticket();
        let blocked = self.is_blocked(&nodes, ticket, mode.conflicting());
        if blocked {
            if let Some(call) = self.held_by_asker(&nodes, mode, asker.answering) {
                for &node in &nodes {
                    self.prune(node);
                }
                return Err(WaitsForItsAsker { call });
            }
        }
        let (held, waiting, granted) = if blocked {
            let (wake, granted) = oneshot::channel();
            (None, Some(Waiting { mode, ticket, wake }), Some(granted))
        } else {
            self.count_held(&nodes, mode, true);
            (Some(mode), None, None)
        };
        if blocked {
            self.enqueue(&nodes, mode, ticket, ticket);
        }
        let call = asker.call.filter(|_| mode == Mode::Change);
        if let Some(call) = call {
            self.changes_by_call.insert(call, ticket);
        }
        self.requests.insert(
            ticket,
            Request {
                call,
                nodes,
                held,
                waiting,
            },
        );
        Ok((ticket, granted))
    }

    /// The first of the calls `answering` that holds a change (not yet committing: it may be
    /// waiting for its answer) overlapping `nodes` and conflicting with `mode`.
    fn held_by_asker(&self, nodes: &[usize], mode: Mode, answering: &[u32]) -> Option<u32> {
        if !mode.conflicting().contains(&Mode::Change) {
            return None;
        }
        let inside = |inner: usize, outer: usize| self.up_from(inner).any(|n| n == outer);
        answering.iter().copied().find(|call| {
            let Some(request) = self
                .changes_by_call
                .get(call)
                .and_then(|id| self.requests.get(id))
            else {
                return false;
            };
            request.held == Some(Mode::Change)
                && request
                    .nodes
                    .iter()
                    .any(|&a| nodes.iter().any(|&b| inside(a, b) || inside(b, a)))
        })
    }

    /// Asks for the change `id` holds to become exclusive.
    pub(super) fn upgrade(&mut self, id: u64) -> Option<oneshot::Receiver<()>> {
        let ticket = self.ticket();
        let request = &self.requests[&id];
        debug_assert_eq!(request.held, Some(Mode::Change));
        debug_assert!(request.waiting.is_none());
        if !self.is_blocked(&request.nodes, ticket, request.blocked_by(Mode::Exclusive)) {
            let nodes = std::mem::take(&mut self.request_mut(id).nodes);
            self.count_held(&nodes, Mode::Change, false);
            self.count_held(&nodes, Mode::Exclusive, true);
            let request = self.request_mut(id);
            request.nodes = nodes;
            request.held = Some(Mode::Exclusive);
            return None;
        }
        let (wake, granted) = oneshot::channel();
        let nodes = std::mem::take(&mut self.request_mut(id).nodes);
        self.enqueue(&nodes, Mode::Exclusive, ticket, id);
        let request = self.request_mut(id);
        request.nodes = nodes;
        request.waiting = Some(Waiting {
            mode: Mode::Exclusive,
            ticket,
            wake,
        });
        Some(granted)
    }

    /// Removes the request `id` (granted or waiting) and grants what it held back.
    pub(super) fn release(&mut self, id: u64) {
        let Some(request) = self.requests.remove(&id) else {
            return;
        };
        if let Some(call) = request.call {
            if self.changes_by_call.get(&call) == Some(&id) {
                self.changes_by_call.remove(&call);
            }
        }
        if let Some(waiting) = &request.waiting {
            self.dequeue(&request.nodes, waiting.mode, waiting.ticket);
        }
        if let Some(held) = request.held {
            self.count_held(&request.nodes, held, false);
            self.wake_overlapping(&request.nodes, held, 0);
        }
        if let Some(waiting) = &request.waiting {
            // Only later requests can have waited for this one.
            self.wake_overlapping(&request.nodes, waiting.mode, waiting.ticket);
        }
        for &node in &request.nodes {
            self.prune(node);
        }
        if self.requests.is_empty() {
            debug_assert!(self.nodes[ROOT].children.is_empty());
            self.nodes.truncate(1);
            self.free_nodes.clear();
        }
    }

    /// Grants the waiting request `id` if nothing blocks it any more.
    fn try_grant(&mut self, id: u64) -> bool {
        let Some(request) = self.requests.get(&id) else {
            return false;
        };
        let Some(waiting) = &request.waiting else {
            return false;
        };
        if self.is_blocked(
            &request.nodes,
            waiting.ticket,
            request.blocked_by(waiting.mode),
        ) {
            return false;
        }
        let request = self.request_mut(id);
        let waiting = request.waiting.take().expect("checked above");
        let before = request.held.replace(waiting.mode);
        let nodes = std::mem::take(&mut request.nodes);
        self.dequeue(&nodes, waiting.mode, waiting.ticket);
        if let Some(before) = before {
            self.count_held(&nodes, before, false);
        }
        self.count_held(&nodes, waiting.mode, true);
        self.request_mut(id).nodes = nodes;
        let _ = waiting.wake.send(());
        true
    }

    /// After a lock or request in mode `removed` left `nodes`: grants the requests it may have
    /// held back (those overlapping it in a conflicting mode, with a ticket above `after`).
    /// Granting never blocks a request that was free, so the order of these grants is free too.
    fn wake_overlapping(&mut self, nodes: &[usize], removed: Mode, after: u64) {
        for &node in nodes {
            for &mode in removed.conflicting() {
                self.wake_queue(node, mode, after, Queue::Within);
                let mut at = node;
                while at != ROOT {
                    at = self.nodes[at].parent;
                    self.wake_queue(at, mode, after, Queue::Here);
                }
            }
        }
    }

    /// Grants, in arrival order, the requests of one of `node`'s queues that are free, and stops
    /// at one still blocked when it blocks all the later ones.
    fn wake_queue(&mut self, node: usize, mode: Mode, after: u64, queue: Queue) {
        let m = mode.index();
        let mut from = Bound::Excluded(after);
        loop {
            let n = &self.nodes[node];
            let next = match queue {
                Queue::Here => n.waiting_here[m]
                    .range((from, Bound::Unbounded))
                    .next()
                    .map(|(&ticket, &id)| (ticket, id)),
                Queue::Within => n.waiting_within[m]
                    .range((from, Bound::Unbounded))
                    .next()
                    .map(|(&ticket, &(id, _))| (ticket, id)),
            };
            let Some((ticket, id)) = next else {
                return;
            };
            self.examine();
            from = Bound::Excluded(ticket);
            if !self.try_grant(id) && self.blocks_the_rest(id, node, mode, queue) {
                return;
            }
        }
    }

    /// Whether the blocked request `id`, met in `node`'s `queue` of `mode`, blocks every later
    /// request in that queue: a change waiting on `node` overlaps all of them and conflicts
    /// with their mode; a read on `node` alone is blocked by what blocks the later reads there.
    fn blocks_the_rest(&self, id: u64, node: usize, mode: Mode, queue: Queue) -> bool {
        let nodes = &self.requests[&id].nodes;
        match mode {
            Mode::Change => nodes.contains(&node),
            Mode::Read => queue == Queue::Here && nodes.len() == 1,
            // Upgrades: at most one per path, as at most one change holds it.
            Mode::Exclusive => false,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Queue {
    /// Waiting on exactly the node.
    Here,
    /// Waiting on the node or below.
    Within,
}
