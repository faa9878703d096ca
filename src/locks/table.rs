//! The lock table's data: a tree of path components, each node counting the locks granted on
//! it and on its subtree per mode and queueing by arrival the requests waiting there, and the
//! requests themselves. Granting, upgrading and releasing are [`super::grant`].

use std::collections::{BTreeMap, HashMap};
use std::ffi::{OsStr, OsString};
use std::path::Path;

use tokio::sync::oneshot;

use super::mode::Mode;

pub(super) const ROOT: usize = 0;

pub(super) struct Table {
    /// The tree of path components, by index; `ROOT` is the empty path.
    pub(super) nodes: Vec<Node>,
    pub(super) free_nodes: Vec<usize>,
    pub(super) requests: HashMap<u64, Request>,
    /// The change request of each call that holds or waits for one.
    pub(super) changes_by_call: HashMap<u32, u64>,
    /// Arrival order, from 1; a request's id is the ticket of its first wait.
    pub(super) next_ticket: u64,
    /// Nodes and waiting requests looked at, for the tests' proof that the cost does not grow
    /// with the number of locks held.
    #[cfg(test)]
    pub(super) examined: std::cell::Cell<usize>,
}

#[derive(Default)]
pub(super) struct Node {
    pub(super) parent: usize,
    pub(super) name: OsString,
    pub(super) children: HashMap<OsString, usize>,
    /// Granted locks on exactly this path, per mode.
    pub(super) held_here: [u32; 3],
    /// Granted locks on this path and below it, per mode.
    pub(super) held_within: [u32; 3],
    /// Requests waiting on exactly this path, per mode: ticket → request id.
    pub(super) waiting_here: [BTreeMap<u64, u64>; 3],
    /// Requests waiting on this path or below it, per mode: ticket → (request id, how many of
    /// its paths).
    pub(super) waiting_within: [BTreeMap<u64, (u64, u32)>; 3],
}

pub(super) struct Request {
    /// The call that made it, for a change.
    pub(super) call: Option<u32>,
    /// One node per path; no path of a request lies inside another.
    pub(super) nodes: Vec<usize>,
    pub(super) held: Option<Mode>,
    pub(super) waiting: Option<Waiting>,
}

pub(super) struct Waiting {
    pub(super) mode: Mode,
    pub(super) ticket: u64,
    pub(super) wake: oneshot::Sender<()>,
}

impl Table {
    pub(super) fn new() -> Self {
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

    pub(super) fn ticket(&mut self) -> u64 {
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        ticket
    }

    pub(super) fn request_mut(&mut self, id: u64) -> &mut Request {
        self.requests.get_mut(&id).expect("a request in the table")
    }

    /// The node of `path`, made (with its missing ancestors) if needed.
    pub(super) fn node(&mut self, path: &Path) -> usize {
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

    pub(super) fn add_node(&mut self, parent: usize, name: &OsStr) -> usize {
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
    pub(super) fn prune(&mut self, mut node: usize) {
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
    pub(super) fn up_from(&self, node: usize) -> impl Iterator<Item = usize> + '_ {
        std::iter::successors(Some(node), |&n| (n != ROOT).then(|| self.nodes[n].parent))
    }

    /// Whether a request on `nodes` with `ticket` overlaps a granted lock, or a request waiting
    /// since before `ticket`, in one of the modes `against`.
    pub(super) fn is_blocked(&self, nodes: &[usize], ticket: u64, against: &[Mode]) -> bool {
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

    pub(super) fn count_held(&mut self, nodes: &[usize], mode: Mode, add: bool) {
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

    pub(super) fn enqueue(&mut self, nodes: &[usize], mode: Mode, ticket: u64, id: u64) {
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

    pub(super) fn dequeue(&mut self, nodes: &[usize], mode: Mode, ticket: u64) {
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

    #[cfg(test)]
    pub(super) fn examine(&self) {
        self.examined.set(self.examined.get() + 1);
    }

    #[cfg(not(test))]
    pub(super) fn examine(&self) {}
}
