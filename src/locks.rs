//! Per-path locks (../docs/hosts.md#the-workspace-api): changes to the same canonical path run one after the other, so a
//! change is never lost to a concurrent one; a read never sees half a change; calls on unrelated
//! paths run in parallel.
//!
//! # Modes
//!
//! - **read** ([`PathLocks::read`]), shared: held by `read_file` while it reads from the file.
//! - **change** ([`PathLocks::change`]): held by a change from its plan through its confirmation
//!   prompt. It excludes other changes of overlapping paths and lets reads through, so whoever
//!   answers the prompt (a confirm handler calling `read_file` to show the file, say) can read
//!   the file it is asked about.
//! - **exclusive** ([`ChangeGuard::exclusive`]): the change upgraded for its commit, after the
//!   "yes". It waits for the reads in progress to finish; reads arriving meanwhile queue behind it.
//!
//! Which modes conflict (on overlapping paths; the later request waits):
//!
//! |               | read | change | exclusive |
//! |---------------|------|--------|-----------|
//! | **read**      |      |        | ✗         |
//! | **change**    |      | ✗      | ✗         |
//! | **exclusive** | ✗    | ✗      | ✗         |
//!
//! So two writes to one file issued together both succeed, one after the other: the second plans
//! only once the first has committed. A read while a change waits for its prompt sees the file
//! before the change; the change's re-check after "yes" (../docs/permissions-and-prompts.md) is what catches a writer
//! outside this workspace.
//!
//! # Rules
//!
//! Paths nest by whole components: a lock on `/w/a` covers `/w/a/b`, not `/w/ab`. A call's paths
//! are requested together and granted together, so calls locking crossing sets cannot deadlock.
//! Requests are served in arrival order as far as conflicts allow: a request waits while it
//! conflicts with a granted lock or with an earlier waiting request, so a recursive `remove_dir`
//! is not starved by writes below it, nor a commit by a stream of reads. An upgrade waits only
//! for reads (granted, or waiting since before the upgrade was asked for): nothing else can
//! overlap the change it already holds. A dropped future withdraws its request, and a dropped
//! guard releases its paths; the table is empty when no call holds or waits.
//!
//! # Nothing waits on a prompt but a change
//!
//! Every wait points at a granted lock or at an earlier request, so waits form no cycle among
//! themselves; what could make one last is a lock held across something that waits on the user.
//! Only a change lock is held across a prompt, and only another change (or an upgrade, which never
//! overlaps it) waits for a change. Reads wait only for exclusive locks and upgrades, which wait
//! only for reads, which hold their lock only while reading: a read tool takes its lock after its
//! own prompt, never across it. So no read waits on a prompt.
//!
//! The one wait that lasts as long as a prompt is a change behind another change's prompt, which
//! is the serialisation the Workspace API asks for (../docs/hosts.md#the-workspace-api). A change made from the confirm handler of a change it
//! overlaps would wait for its own answer, forever with the default `confirmTimeoutMs`; it is
//! refused at once instead ([`Asker`]). A change that waits behind an earlier waiting request
//! that waits for that prompt is not recognised and still waits for the answer.
//!
//! `list_directory`, `glob` and `grep` take no lock: a walk can take long, and holding a tree
//! for it would hold up every commit below it (and every read queued behind those). A walk sees
//! each entry as it is when it gets there, as it would while any other process changes the tree.
//!
//! # Cost
//!
//! The table is a tree of path components. Each node counts the locks granted on it and on its
//! subtree, per mode, and orders by arrival the requests waiting on it and on its subtree. A
//! request looks only at the nodes on its paths (its ancestors' own locks and its subtree's), so
//! acquiring and releasing cost O(depth × log(waiting)), whatever the number of locks held. A
//! release or a withdrawal wakes only the waiting requests it overlapped in a conflicting mode,
//! and stops in each queue at the first one still blocked when that one blocks the rest.

use std::collections::{BTreeMap, HashMap};
use std::ffi::{OsStr, OsString};
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use tokio::sync::oneshot;

/// The lock table. Empty when no call holds or waits for a lock.
pub struct PathLocks {
    table: Mutex<Table>,
}

impl Default for PathLocks {
    fn default() -> Self {
        Self {
            table: Mutex::new(Table::new()),
        }
    }
}

/// Read access to some paths; dropping it releases them.
#[must_use = "the paths are released when the guard is dropped"]
pub struct ReadGuard<'a> {
    _held: Held<'a>,
}

/// A change's hold on its paths through plan and prompt; [`ChangeGuard::exclusive`] before the
/// commit. Dropping it releases the paths.
#[must_use = "the paths are released when the guard is dropped"]
pub struct ChangeGuard<'a> {
    held: Held<'a>,
}

/// A change's exclusive hold on its paths for the commit; dropping it releases them.
#[must_use = "the paths are released when the guard is dropped"]
pub struct ExclusiveGuard<'a> {
    _held: Held<'a>,
}

/// Who asks for a change: a call, and the calls whose confirm handlers it was made from,
/// outermost first (none for a call the host made directly).
#[derive(Clone, Copy, Debug, Default)]
pub struct Asker<'a> {
    pub call: Option<u32>,
    pub answering: &'a [u32],
}

/// A change refused because it would wait for a change of the call whose confirm handler made
/// it, which cannot go on before the handler answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitsForItsAsker {
    /// The call that holds the paths.
    pub call: u32,
}

impl PathLocks {
    /// Waits until no exclusive lock (or earlier waiting upgrade) overlaps `paths`, then holds
    /// them for reading. Never waits for a change's prompt.
    pub async fn read(&self, paths: Vec<PathBuf>) -> ReadGuard<'_> {
        let Ok(held) = self.acquire(paths, Mode::Read, Asker::default()).await else {
            unreachable!("only a change made from a confirm handler is refused")
        };
        ReadGuard { _held: held }
    }

    /// Waits until no other change overlaps `paths` (nor an earlier waiting one), then holds
    /// them for a change. Reads go on meanwhile. Refused at once when it would wait for a
    /// change of a call `asker` was made from the confirm handler of.
    pub async fn change(
        &self,
        paths: Vec<PathBuf>,
        asker: Asker<'_>,
    ) -> Result<ChangeGuard<'_>, WaitsForItsAsker> {
        Ok(ChangeGuard {
            held: self.acquire(paths, Mode::Change, asker).await?,
        })
    }

    /// Requests `paths` (all at once; nested ones of the same request never conflict with each
    /// other) and waits for the grant. Dropping the future withdraws the request.
    async fn acquire(
        &self,
        paths: Vec<PathBuf>,
        mode: Mode,
        asker: Asker<'_>,
    ) -> Result<Held<'_>, WaitsForItsAsker> {
        let (id, granted) = self.table().request(outermost(paths), mode, asker)?;
        // Made before waiting, so a dropped wait withdraws the request (granted or not).
        let held = Held { locks: self, id };
        if let Some(granted) = granted {
            // The sender is dropped unsent only when the request is withdrawn, which `held`
            // alone does; so either outcome means granted.
            let _ = granted.await;
        }
        Ok(held)
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl<'a> ChangeGuard<'a> {
    /// Upgrades to exclusive for the commit: waits for the reads of these paths in progress (and
    /// those waiting since before) to finish; reads arriving meanwhile wait behind it. Dropping
    /// the future releases the paths.
    pub async fn exclusive(self) -> ExclusiveGuard<'a> {
        let granted = self.held.locks.table().upgrade(self.held.id);
        if let Some(granted) = granted {
            let _ = granted.await;
        }
        ExclusiveGuard { _held: self.held }
    }
}

/// A request in the table, withdrawn or released when dropped.
struct Held<'a> {
    locks: &'a PathLocks,
    id: u64,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.locks.table().release(self.id);
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Read,
    Change,
    Exclusive,
}

impl Mode {
    fn index(self) -> usize {
        self as usize
    }

    /// The modes that conflict with this one (the relation is symmetric).
    fn conflicting(self) -> &'static [Mode] {
        match self {
            Mode::Read => &[Mode::Exclusive],
            Mode::Change => &[Mode::Change, Mode::Exclusive],
            Mode::Exclusive => &[Mode::Read, Mode::Change, Mode::Exclusive],
        }
    }
}

const ROOT: usize = 0;

struct Table {
    /// The tree of path components, by index; `ROOT` is the empty path.
    nodes: Vec<Node>,
    free_nodes: Vec<usize>,
    requests: HashMap<u64, Request>,
    /// The change request of each call that holds or waits for one.
    changes_by_call: HashMap<u32, u64>,
    /// Arrival order, from 1; a request's id is the ticket of its first wait.
    next_ticket: u64,
    /// Nodes and waiting requests looked at, for the tests' proof that the cost does not grow
    /// with the number of locks held.
    #[cfg(test)]
    examined: std::cell::Cell<usize>,
}

#[derive(Default)]
struct Node {
    parent: usize,
    name: OsString,
    children: HashMap<OsString, usize>,
    /// Granted locks on exactly this path, per mode.
    held_here: [u32; 3],
    /// Granted locks on this path and below it, per mode.
    held_within: [u32; 3],
    /// Requests waiting on exactly this path, per mode: ticket → request id.
    waiting_here: [BTreeMap<u64, u64>; 3],
    /// Requests waiting on this path or below it, per mode: ticket → (request id, how many of
    /// its paths).
    waiting_within: [BTreeMap<u64, (u64, u32)>; 3],
}

struct Request {
    /// The call that made it, for a change.
    call: Option<u32>,
    /// One node per path; no path of a request lies inside another.
    nodes: Vec<usize>,
    held: Option<Mode>,
    waiting: Option<Waiting>,
}

struct Waiting {
    mode: Mode,
    ticket: u64,
    wake: oneshot::Sender<()>,
}

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
    fn new() -> Self {
        Self {
            nodes: vec![Node::default()],
            free_nodes: Vec::new(),
            requests: HashMap::new(),
            changes_by_call: HashMap::new(),
            next_ticket: 1,
            #[cfg(test)]
            examined: Default::default(),
        }
    }

    fn ticket(&mut self) -> u64 {
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        ticket
    }

    /// Adds a request for `paths` in `mode`: granted at once (no receiver), or waiting (the
    /// receiver hears of the grant), or refused.
    fn request(
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
    fn upgrade(&mut self, id: u64) -> Option<oneshot::Receiver<()>> {
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
    fn release(&mut self, id: u64) {
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

    fn request_mut(&mut self, id: u64) -> &mut Request {
        self.requests.get_mut(&id).expect("a request in the table")
    }

    /// The node of `path`, made (with its missing ancestors) if needed.
    fn node(&mut self, path: &Path) -> usize {
        let mut at = ROOT;
        for component in path.components() {
            let name = component.as_os_str();
            at = match self.nodes[at].children.get(name) {
                Some(&child) => child,
                None => self.add_node(at, name),
            };
        }
        at
    }

    fn add_node(&mut self, parent: usize, name: &OsStr) -> usize {
        let node = Node {
            parent,
            name: name.to_owned(),
            ..Node::default()
        };
        let index = match self.free_nodes.pop() {
            Some(index) => {
                self.nodes[index] = node;
                index
            }
            None => {
                self.nodes.push(node);
                self.nodes.len() - 1
            }
        };
        self.nodes[parent].children.insert(name.to_owned(), index);
        index
    }

    /// Removes `node` and its ancestors while they are unused.
    fn prune(&mut self, mut node: usize) {
        while node != ROOT {
            let n = &self.nodes[node];
            let used = !n.children.is_empty()
                || n.held_within.iter().any(|&count| count > 0)
                || n.waiting_within.iter().any(|queue| !queue.is_empty());
            if used {
                return;
            }
            let parent = n.parent;
            let name = std::mem::take(&mut self.nodes[node].name);
            self.nodes[parent].children.remove(&name);
            self.free_nodes.push(node);
            node = parent;
        }
    }

    /// `node`, then its ancestors up to the root.
    fn up_from(&self, node: usize) -> impl Iterator<Item = usize> + '_ {
        std::iter::successors(Some(node), |&n| (n != ROOT).then(|| self.nodes[n].parent))
    }

    /// Whether a request on `nodes` with `ticket` overlaps a granted lock, or a request waiting
    /// since before `ticket`, in one of the modes `against`.
    fn is_blocked(&self, nodes: &[usize], ticket: u64, against: &[Mode]) -> bool {
        let earlier = |first: Option<&u64>| first.is_some_and(|&t| t < ticket);
        nodes.iter().any(|&node| {
            self.up_from(node).any(|at| {
                self.examine();
                let n = &self.nodes[at];
                against.iter().any(|m| {
                    let m = m.index();
                    if at == node {
                        n.held_within[m] > 0 || earlier(n.waiting_within[m].keys().next())
                    } else {
                        n.held_here[m] > 0 || earlier(n.waiting_here[m].keys().next())
                    }
                })
            })
        })
    }

    fn count_held(&mut self, nodes: &[usize], mode: Mode, add: bool) {
        let m = mode.index();
        let step = |count: &mut u32| {
            if add {
                *count += 1;
            } else {
                *count -= 1;
            }
        };
        for &node in nodes {
            step(&mut self.nodes[node].held_here[m]);
            let mut at = node;
            loop {
                step(&mut self.nodes[at].held_within[m]);
                if at == ROOT {
                    break;
                }
                at = self.nodes[at].parent;
            }
        }
    }

    fn enqueue(&mut self, nodes: &[usize], mode: Mode, ticket: u64, id: u64) {
        let m = mode.index();
        for &node in nodes {
            self.nodes[node].waiting_here[m].insert(ticket, id);
            let mut at = node;
            loop {
                self.nodes[at].waiting_within[m]
                    .entry(ticket)
                    .or_insert((id, 0))
                    .1 += 1;
                if at == ROOT {
                    break;
                }
                at = self.nodes[at].parent;
            }
        }
    }

    fn dequeue(&mut self, nodes: &[usize], mode: Mode, ticket: u64) {
        let m = mode.index();
        for &node in nodes {
            self.nodes[node].waiting_here[m].remove(&ticket);
            let mut at = node;
            loop {
                let queue = &mut self.nodes[at].waiting_within[m];
                if let Some(entry) = queue.get_mut(&ticket) {
                    entry.1 -= 1;
                    if entry.1 == 0 {
                        queue.remove(&ticket);
                    }
                }
                if at == ROOT {
                    break;
                }
                at = self.nodes[at].parent;
            }
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

    #[cfg(test)]
    fn examine(&self) {
        self.examined.set(self.examined.get() + 1);
    }

    #[cfg(not(test))]
    fn examine(&self) {}
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Queue {
    /// Waiting on exactly the node.
    Here,
    /// Waiting on the node or below.
    Within,
}

/// `paths` without those inside another (a lock on `/w/a` covers `/w/a/b`), sorted.
fn outermost(mut paths: Vec<PathBuf>) -> Vec<PathBuf> {
    // By components, a path's descendants sort right after it.
    paths.sort();
    let mut kept: Vec<PathBuf> = Vec::with_capacity(paths.len());
    for path in paths {
        if !kept.last().is_some_and(|outer| path.starts_with(outer)) {
            kept.push(path);
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::Poll;
    use std::time::Duration;

    fn p(paths: &[&str]) -> Vec<PathBuf> {
        paths.iter().map(PathBuf::from).collect()
    }

    impl PathLocks {
        /// Requests holding or waiting.
        fn len(&self) -> usize {
            self.table().requests.len()
        }

        /// Nodes in the tree, the root included.
        fn nodes(&self) -> usize {
            let table = self.table();
            table.nodes.len() - table.free_nodes.len()
        }

        fn assert_empty(&self) {
            assert_eq!((self.len(), self.nodes()), (0, 1), "the table empties");
        }

        /// Nodes and waiting requests looked at since the last call.
        fn examined(&self) -> usize {
            self.table().examined.replace(0)
        }

        /// A change by a call the host made directly.
        async fn changing(&self, paths: Vec<PathBuf>) -> ChangeGuard<'_> {
            self.change(paths, Asker::default())
                .await
                .expect("not refused")
        }

        /// Exclusive access straight away, as a change that needs no prompt takes it.
        async fn exclusive(&self, paths: Vec<PathBuf>) -> ExclusiveGuard<'_> {
            self.changing(paths).await.exclusive().await
        }
    }

    /// Polls `fut` once (enqueuing its request on the first poll): its output if it is ready.
    async fn poll_once<F: Future + Unpin>(fut: &mut F) -> Option<F::Output> {
        std::future::poll_fn(|cx| {
            Poll::Ready(match Pin::new(&mut *fut).poll(cx) {
                Poll::Ready(v) => Some(v),
                Poll::Pending => None,
            })
        })
        .await
    }

    type Waiting<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

    /// A future polled once and found waiting.
    async fn waiting<'a, T>(fut: impl Future<Output = T> + 'a) -> Waiting<'a, T> {
        let mut fut: Waiting<'a, T> = Box::pin(fut);
        assert!(poll_once(&mut fut).await.is_none(), "waits");
        fut
    }

    /// A future polled once and found granted.
    async fn granted<T>(fut: impl Future<Output = T>) -> T {
        poll_once(&mut Box::pin(fut))
            .await
            .expect("granted at once")
    }

    /// A write holding `/w/a/b`; a recursive remove of `/w/a` waiting for it; and a later write
    /// to `/w/a/c`, free of held locks, waiting behind the remove.
    async fn remove_queued_behind_a_write(
        locks: &PathLocks,
    ) -> (
        ChangeGuard<'_>,
        Waiting<'_, ChangeGuard<'_>>,
        Waiting<'_, ChangeGuard<'_>>,
    ) {
        let write = locks.changing(p(&["/w/a/b"])).await;
        let remove = waiting(locks.changing(p(&["/w/a"]))).await;
        let later = waiting(locks.changing(p(&["/w/a/c"]))).await;
        (write, remove, later)
    }

    /// Whether a change of `b` must wait while a change of `a` is held.
    async fn blocks(a: &[&str], b: &[&str]) -> bool {
        let locks = PathLocks::default();
        let held = locks.changing(p(a)).await;
        let mut waiting = Box::pin(locks.changing(p(b)));
        let blocked = poll_once(&mut waiting).await.is_none();
        drop(held);
        if blocked {
            assert!(
                poll_once(&mut waiting).await.is_some(),
                "granted on release"
            );
        }
        drop(waiting);
        locks.assert_empty();
        blocked
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn same_path_is_serialised_and_the_table_empties() {
        let locks = Arc::new(PathLocks::default());
        let inside = Arc::new(AtomicUsize::new(0));
        let max_inside = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for _ in 0..20 {
            let (locks, inside, max_inside) = (locks.clone(), inside.clone(), max_inside.clone());
            tasks.push(tokio::spawn(async move {
                let change = locks.changing(p(&["/a", "/b"])).await;
                let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                max_inside.fetch_max(now, Ordering::SeqCst);
                tokio::task::yield_now().await;
                let _commit = change.exclusive().await;
                tokio::task::yield_now().await;
                inside.fetch_sub(1, Ordering::SeqCst);
            }));
        }
        for t in tasks {
            tokio::time::timeout(Duration::from_secs(5), t)
                .await
                .expect("no deadlock")
                .unwrap();
        }
        assert_eq!(max_inside.load(Ordering::SeqCst), 1);
        locks.assert_empty();
    }

    #[tokio::test]
    async fn conflicts_are_by_whole_components() {
        assert!(blocks(&["/w/a"], &["/w/a"]).await);
        assert!(blocks(&["/w/a"], &["/w/a/b/c"]).await, "ancestor held");
        assert!(blocks(&["/w/a/b/c"], &["/w/a"]).await, "descendant held");
        assert!(
            blocks(&["/w/x", "/w/a/b"], &["/y", "/w/a"]).await,
            "any pair"
        );
        assert!(!blocks(&["/w/a"], &["/w/ab"]).await, "string prefix only");
        assert!(!blocks(&["/w/ab"], &["/w/a"]).await, "string prefix only");
        assert!(!blocks(&["/w/a/b"], &["/w/a/c"]).await, "siblings");
        assert!(blocks(&["/"], &["/w"]).await, "the root is a path too");
    }

    #[tokio::test]
    async fn modes_conflict_as_the_module_table_says() {
        // (held, requested, waits): read, change, exclusive (a change upgraded).
        let locks = PathLocks::default();
        for nested in [&["/w/a"][..], &["/w/a/b"], &["/w"]] {
            {
                let _read = locks.read(p(&["/w/a"])).await;
                drop(granted(locks.read(p(nested))).await);
                let change = granted(locks.changing(p(nested))).await;
                drop(waiting(change.exclusive()).await);
            }
            {
                let _change = locks.changing(p(&["/w/a"])).await;
                drop(granted(locks.read(p(nested))).await);
                drop(waiting(locks.changing(p(nested))).await);
            }
            {
                let _exclusive = locks.exclusive(p(&["/w/a"])).await;
                drop(waiting(locks.read(p(nested))).await);
                drop(waiting(locks.changing(p(nested))).await);
            }
            locks.assert_empty();
        }
    }

    #[tokio::test]
    async fn a_change_waiting_for_its_prompt_lets_reads_of_its_path_and_below_through() {
        let locks = PathLocks::default();
        let change = locks.changing(p(&["/w/a"])).await;
        let file = granted(locks.read(p(&["/w/a"]))).await;
        let below = granted(locks.read(p(&["/w/a/b/c"]))).await;
        let above = granted(locks.read(p(&["/w"]))).await;
        // The commit waits for them; reads that come after it wait behind it.
        let mut commit = waiting(change.exclusive()).await;
        let mut late = waiting(locks.read(p(&["/w/a/b"]))).await;
        drop(granted(locks.read(p(&["/w/ab"]))).await);
        drop((file, below));
        assert!(poll_once(&mut commit).await.is_none(), "`/w` is still read");
        drop(above);
        let committing = poll_once(&mut commit).await.expect("the reads drained");
        assert!(poll_once(&mut late).await.is_none());
        drop(committing);
        drop(poll_once(&mut late).await.expect("after the commit"));
        drop((commit, late));
        locks.assert_empty();
    }

    #[tokio::test]
    async fn two_changes_of_one_path_plan_and_commit_one_after_the_other() {
        let locks = PathLocks::default();
        let first = locks.changing(p(&["/w/f"])).await;
        let mut second = waiting(locks.changing(p(&["/w/f"]))).await;
        let commit = first.exclusive().await;
        assert!(poll_once(&mut second).await.is_none());
        drop(commit);
        let second = poll_once(&mut second)
            .await
            .expect("after the first commit");
        drop(second.exclusive().await);
        locks.assert_empty();
    }

    #[tokio::test]
    async fn a_read_waiting_on_a_commit_is_not_overtaken_by_later_commits_below_it() {
        let locks = PathLocks::default();
        let committing = locks.exclusive(p(&["/w/a/b"])).await;
        let mut listing = waiting(locks.read(p(&["/w/a"]))).await;
        // A change below `/w/a` may plan meanwhile, but its commit queues behind the read.
        let change = granted(locks.changing(p(&["/w/a/c"]))).await;
        let mut commit = waiting(change.exclusive()).await;
        drop(committing);
        let listed = poll_once(&mut listing).await.expect("the read goes first");
        assert!(poll_once(&mut commit).await.is_none());
        drop(listed);
        drop(poll_once(&mut commit).await.expect("then the commit"));
        drop((listing, commit));
        locks.assert_empty();
    }

    #[tokio::test]
    async fn a_dropped_upgrade_releases_the_change_and_unblocks_the_reads_behind_it() {
        let locks = PathLocks::default();
        let read = locks.read(p(&["/w/f"])).await;
        let change = locks.changing(p(&["/w/f"])).await;
        let commit = waiting(change.exclusive()).await;
        let mut late = waiting(locks.read(p(&["/w/f"]))).await;
        drop(commit); // the call is aborted while it waits for the readers
        assert!(poll_once(&mut late).await.is_some());
        drop(granted(locks.changing(p(&["/w/f"]))).await);
        drop((read, late));
        locks.assert_empty();
    }

    /// Every task must be inside its lock at once for the barrier to open, so serialisation
    /// would time out.
    async fn all_run_concurrently(requests: Vec<Vec<PathBuf>>) {
        let locks = Arc::new(PathLocks::default());
        let barrier = Arc::new(tokio::sync::Barrier::new(requests.len()));
        let tasks: Vec<_> = requests
            .into_iter()
            .map(|paths| {
                let (locks, barrier) = (locks.clone(), barrier.clone());
                tokio::spawn(async move {
                    let _g = locks.exclusive(paths).await;
                    barrier.wait().await;
                })
            })
            .collect();
        for t in tasks {
            tokio::time::timeout(Duration::from_secs(5), t)
                .await
                .expect("calls overlap")
                .unwrap();
        }
        locks.assert_empty();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn string_prefix_siblings_run_concurrently() {
        all_run_concurrently(vec![p(&["/w/a"]), p(&["/w/ab"]), p(&["/w/a-b/c"])]).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn unrelated_paths_run_concurrently() {
        all_run_concurrently((0..16).map(|i| p(&[&format!("/w/{i}/f")])).collect()).await;
    }

    #[tokio::test]
    async fn paths_of_one_request_never_conflict_with_each_other() {
        let locks = PathLocks::default();
        let change = tokio::time::timeout(
            Duration::from_secs(1),
            locks.changing(p(&["/w/a", "/w/a2", "/w/a/b", "/w/a"])),
        )
        .await
        .expect("no self-deadlock");
        let g = change.exclusive().await;
        let mut inner = waiting(locks.read(p(&["/w/a/b/c"]))).await;
        drop(g);
        assert!(poll_once(&mut inner).await.is_some());
        drop(inner);
        locks.assert_empty();
    }

    #[tokio::test]
    async fn a_later_conflicting_request_never_overtakes_an_earlier_waiter() {
        let locks = PathLocks::default();
        let (write, mut remove, mut later) = remove_queued_behind_a_write(&locks).await;
        // A request conflicting with nothing proceeds at once despite the waiters.
        let unrelated = granted(locks.changing(p(&["/w/ab"]))).await;
        drop(write);
        assert!(poll_once(&mut later).await.is_none(), "still behind remove");
        let removing = poll_once(&mut remove).await.expect("remove goes first");
        assert!(poll_once(&mut later).await.is_none());
        drop(removing);
        assert!(poll_once(&mut later).await.is_some());
        drop((later, remove, unrelated));
        locks.assert_empty();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn waiters_are_served_in_arrival_order() {
        let locks = Arc::new(PathLocks::default());
        let order = Arc::new(Mutex::new(Vec::new()));
        let held = locks.exclusive(p(&["/w"])).await;
        let mut tasks = Vec::new();
        for i in 0..10 {
            // Alternate a subtree and paths inside it: each conflicts with its neighbours.
            let path = if i % 2 == 0 {
                "/w/a".into()
            } else {
                format!("/w/a/{i}")
            };
            let (task_locks, order) = (locks.clone(), order.clone());
            tasks.push(tokio::spawn(async move {
                let _g = task_locks.changing(p(&[&path])).await;
                order.lock().unwrap().push(i);
                tokio::task::yield_now().await;
            }));
            // Wait until the request is queued, so arrival order is i.
            let queued = async {
                while locks.len() < i + 2 {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            };
            tokio::time::timeout(Duration::from_secs(5), queued)
                .await
                .expect("request queued behind the held lock");
        }
        drop(held);
        for t in tasks {
            tokio::time::timeout(Duration::from_secs(5), t)
                .await
                .expect("no deadlock")
                .unwrap();
        }
        assert_eq!(*order.lock().unwrap(), (0..10).collect::<Vec<_>>());
        locks.assert_empty();
    }

    #[tokio::test]
    async fn a_dropped_wait_withdraws_and_unblocks_later_requests() {
        let locks = PathLocks::default();
        let (write, remove, mut later) = remove_queued_behind_a_write(&locks).await;
        assert_eq!(locks.len(), 3);
        drop(remove); // the call is aborted while waiting
        assert_eq!(locks.len(), 2);
        assert!(poll_once(&mut later).await.is_some(), "no longer behind");
        drop(later);
        // Timed-out waits are withdrawn too.
        let timed_out =
            tokio::time::timeout(Duration::from_millis(20), locks.changing(p(&["/w"]))).await;
        assert!(timed_out.is_err());
        assert_eq!(locks.len(), 1);
        drop(write);
        locks.assert_empty();
    }

    #[tokio::test]
    async fn a_granted_but_unobserved_wait_releases_when_dropped() {
        let locks = PathLocks::default();
        let held = locks.changing(p(&["/w/a"])).await;
        let waiting = waiting(locks.changing(p(&["/w/a/b"]))).await;
        drop(held); // grants `waiting`, which is dropped before it sees the grant
        drop(waiting);
        locks.assert_empty();
        let again = tokio::time::timeout(Duration::from_secs(1), locks.changing(p(&["/w/a"])));
        drop(again.await.expect("nothing left held"));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn crossing_requests_of_every_mode_exclude_as_they_should_and_never_deadlock() {
        const PATHS: [&str; 8] = [
            "/w", "/w/a", "/w/a/b", "/w/a/b/c", "/w/ab", "/w/c", "/w/c/d", "/x",
        ];
        let locks = Arc::new(PathLocks::default());
        // (task, paths, mode) of every task inside its lock: 0 read, 1 change, 2 exclusive.
        type Inside = Vec<(usize, Vec<PathBuf>, usize)>;
        let inside = Arc::new(Mutex::new(Inside::new()));
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let enter = |inside: &Mutex<Inside>, task: usize, paths: &[PathBuf], mode: usize| {
            let mut inside = inside.lock().unwrap();
            inside.retain(|(t, _, _)| *t != task);
            for (other, held, other_mode) in inside.iter() {
                // Checked independently of the table, straight from the definition.
                let overlap = paths
                    .iter()
                    .any(|p| held.iter().any(|q| p.starts_with(q) || q.starts_with(p)));
                let compatible = matches!((mode, *other_mode), (0, 0) | (0, 1) | (1, 0));
                assert!(
                    !overlap || compatible,
                    "{task} {paths:?} in mode {mode} overlaps {other} {held:?} in mode {other_mode}"
                );
            }
            inside.push((task, paths.to_vec(), mode));
        };
        let mut tasks = Vec::new();
        for task in 0..300 {
            // One to three paths, in a random order: sets cross and nest every which way.
            let paths: Vec<PathBuf> = (0..1 + next(3)).map(|_| PATHS[next(8)].into()).collect();
            let read = next(2) == 0;
            let (locks, inside) = (locks.clone(), inside.clone());
            tasks.push(tokio::spawn(async move {
                let leave = || inside.lock().unwrap().retain(|(t, _, _)| *t != task);
                if read {
                    let _g = locks.read(paths.clone()).await;
                    enter(&inside, task, &paths, 0);
                    tokio::task::yield_now().await;
                    leave();
                } else {
                    let change = locks.changing(paths.clone()).await;
                    enter(&inside, task, &paths, 1);
                    tokio::task::yield_now().await;
                    let _g = change.exclusive().await;
                    enter(&inside, task, &paths, 2);
                    tokio::task::yield_now().await;
                    leave();
                }
            }));
        }
        for t in tasks {
            tokio::time::timeout(Duration::from_secs(10), t)
                .await
                .expect("no deadlock")
                .unwrap();
        }
        locks.assert_empty();
    }

    /// What one read, one change committed, and one release that wakes a waiter cost (nodes and
    /// requests looked at) with `n` reads, `n` changes and `n` waiting changes in the table.
    async fn cost_with(n: usize) -> [usize; 4] {
        let locks = PathLocks::default();
        let mut reads = Vec::new();
        let mut changes = Vec::new();
        let mut waiters = Vec::new();
        for i in 0..n {
            reads.push(locks.read(p(&[&format!("/w/r/{i}")])).await);
            changes.push(locks.changing(p(&[&format!("/w/c/{i}")])).await);
            waiters.push(waiting(locks.changing(p(&[&format!("/w/c/{i}/x")]))).await);
        }
        locks.examined();
        drop(locks.read(p(&["/w/r/new"])).await);
        let read = locks.examined();
        drop(locks.read(p(&["/w/r/7"])).await);
        let read_again = locks.examined();
        drop(locks.exclusive(p(&["/w/c/new"])).await);
        let change = locks.examined();
        // A change held with one waiting behind it; its release grants the waiter.
        let head = locks.changing(p(&["/w/q"])).await;
        let next = waiting(locks.changing(p(&["/w/q"]))).await;
        locks.examined();
        drop(head);
        let wake = locks.examined();
        drop((next, waiters, changes, reads));
        locks.assert_empty();
        [read, read_again, change, wake]
    }

    #[tokio::test]
    async fn acquire_and_release_cost_does_not_grow_with_the_locks_held() {
        let few = cost_with(10).await;
        let many = cost_with(10_000).await;
        assert_eq!(few, many);
        assert!(many.iter().all(|&c| c < 40), "{many:?}");
    }

    /// What releasing the head of `n` changes queued on one path costs.
    async fn release_cost_with_queued(n: usize) -> usize {
        let locks = PathLocks::default();
        let head = locks.changing(p(&["/w/f"])).await;
        let mut queue = Vec::new();
        for _ in 0..n {
            queue.push(waiting(locks.changing(p(&["/w/f"]))).await);
        }
        locks.examined();
        drop(head);
        let cost = locks.examined();
        let second = poll_once(&mut queue[0])
            .await
            .expect("the next one is granted");
        assert!(poll_once(&mut queue[1]).await.is_none());
        drop((second, queue));
        locks.assert_empty();
        cost
    }

    #[tokio::test]
    async fn a_release_looks_at_the_next_waiter_only_not_at_the_whole_queue() {
        assert_eq!(
            release_cost_with_queued(10).await,
            release_cost_with_queued(1_000).await
        );
    }

    #[tokio::test]
    async fn a_change_made_from_the_prompt_of_an_overlapping_change_is_refused_not_queued() {
        let locks = PathLocks::default();
        let asker = |call| Asker {
            call: Some(call),
            answering: &[],
        };
        let prompting = locks.change(p(&["/w/d"]), asker(1)).await.unwrap();
        // Call 2 is made from call 1's confirm handler (call 3 from call 2's).
        for (path, answering) in [
            ("/w/d", &[1][..]),
            ("/w/d/f", &[1]),
            ("/w", &[7, 1]),
            ("/w/d", &[1, 2]),
        ] {
            let nested = Asker {
                call: Some(9),
                answering,
            };
            let refused = locks.change(p(&[path]), nested).await.err();
            assert_eq!(refused, Some(WaitsForItsAsker { call: 1 }), "{path}");
        }
        assert_eq!(locks.len(), 1, "refusals leave nothing behind");
        // Unrelated paths, reads, and calls made by the host (or from another call's prompt)
        // are not refused: they go on or wait as usual.
        let nested = Asker {
            call: Some(2),
            answering: &[1],
        };
        drop(granted(locks.change(p(&["/w/e"]), nested)).await.unwrap());
        drop(granted(locks.read(p(&["/w/d/f"]))).await);
        drop(waiting(locks.change(p(&["/w/d"]), Asker::default())).await);
        let other = Asker {
            call: Some(3),
            answering: &[5],
        };
        drop(waiting(locks.change(p(&["/w/d"]), other)).await);
        // Once committing, the asker no longer waits for an answer: a change waits for it.
        let committing = prompting.exclusive().await;
        let mut after = waiting(locks.change(p(&["/w/d"]), nested)).await;
        drop(committing);
        assert!(poll_once(&mut after).await.unwrap().is_ok());
        drop(after);
        locks.assert_empty();
    }
}
