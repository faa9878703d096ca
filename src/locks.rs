//! Per-path serialisation (SPEC §2): calls touching the same canonical path run one after the
//! other, so a change is never lost to a concurrent one; calls on different paths run in parallel.
//!
//! Locks are hierarchical: a lock on `/w/a` also covers everything below it (`/w/a/b`), compared
//! by whole components (`/w/ab` is unrelated). Each call's paths are acquired all at once, never
//! piecemeal, so calls locking crossing sets cannot deadlock. Requests are served in arrival
//! order as far as conflicts allow: a request waits while it conflicts with a held request or
//! with an earlier waiting one (so a recursive `remove_dir` is not starved by writes below it),
//! and proceeds at once otherwise.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tokio::sync::oneshot;

/// The lock table: every request holding or waiting, in arrival order. Empty when no call holds
/// or waits for a lock.
#[derive(Default)]
pub struct PathLocks {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    next_id: u64,
    requests: Vec<Request>,
}

struct Request {
    id: u64,
    paths: Vec<PathBuf>,
    /// `Some` while waiting: sent (and taken) when the request is granted.
    wake: Option<oneshot::Sender<()>>,
}

/// A granted request; dropping it releases its paths and lets waiters behind it proceed.
pub struct PathGuard<'a> {
    locks: &'a PathLocks,
    id: u64,
}

impl PathLocks {
    /// Waits until no held request and no earlier waiting request conflicts with `paths`, then
    /// holds all of them until the guard is dropped. Paths of one request never conflict with
    /// each other. Dropping the returned future while it waits withdraws the request.
    pub async fn lock(&self, mut paths: Vec<PathBuf>) -> PathGuard<'_> {
        paths.sort();
        paths.dedup();
        let (wake, granted) = oneshot::channel();
        let id = {
            let mut state = self.state();
            let id = state.next_id;
            state.next_id += 1;
            state.requests.push(Request {
                id,
                paths,
                wake: Some(wake),
            });
            // Only the new request can have become grantable.
            let newest = state.requests.len() - 1;
            state.grant_if_free(newest);
            id
        };
        // Made before waiting, so a cancelled wait withdraws the request (granted or not).
        let guard = PathGuard { locks: self, id };
        // The sender is dropped unsent only when the guard removes the request, so either
        // outcome means the request is granted here.
        let _ = granted.await;
        guard
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.state().requests.len()
    }
}

impl State {
    /// Grants the request at `index` if it waits and conflicts with no held request and no
    /// earlier waiting one.
    fn grant_if_free(&mut self, index: usize) {
        let request = &self.requests[index];
        if request.wake.is_none() {
            return;
        }
        let blocked = self.requests.iter().enumerate().any(|(j, other)| {
            j != index
                && (j < index || other.wake.is_none())
                && conflicts(&request.paths, &other.paths)
        });
        if !blocked {
            if let Some(wake) = self.requests[index].wake.take() {
                let _ = wake.send(());
            }
        }
    }

    /// Removes the request `id` and grants what it was holding back: only waiting requests
    /// that conflict with it can have become free (re-checking every waiter on every release
    /// made 1,000 queued calls quadratic).
    fn remove(&mut self, id: u64) {
        let Some(position) = self.requests.iter().position(|r| r.id == id) else {
            return;
        };
        let removed = self.requests.remove(position);
        for index in position..self.requests.len() {
            if self.requests[index].wake.is_some()
                && conflicts(&removed.paths, &self.requests[index].paths)
            {
                self.grant_if_free(index);
            }
        }
    }
}

/// Whether some path of `a` equals, contains or lies inside some path of `b`, by whole
/// components.
fn conflicts(a: &[PathBuf], b: &[PathBuf]) -> bool {
    a.iter()
        .any(|p| b.iter().any(|q| nested(p, q) || nested(q, p)))
}

fn nested(inner: &Path, outer: &Path) -> bool {
    inner.starts_with(outer)
}

impl Drop for PathGuard<'_> {
    fn drop(&mut self) {
        self.locks.state().remove(self.id);
    }
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

    type Waiting<'a> = Pin<Box<dyn Future<Output = PathGuard<'a>> + 'a>>;

    /// A write holding `/w/a/b`; a recursive remove of `/w/a` waiting for it; and a later write
    /// to `/w/a/c`, free of held locks, waiting behind the remove.
    async fn remove_queued_behind_a_write(
        locks: &PathLocks,
    ) -> (PathGuard<'_>, Waiting<'_>, Waiting<'_>) {
        let write = locks.lock(p(&["/w/a/b"])).await;
        let mut remove: Waiting<'_> = Box::pin(locks.lock(p(&["/w/a"])));
        assert!(poll_once(&mut remove).await.is_none());
        let mut later: Waiting<'_> = Box::pin(locks.lock(p(&["/w/a/c"])));
        assert!(poll_once(&mut later).await.is_none());
        (write, remove, later)
    }

    /// Whether a lock on `b` must wait while `a` is held.
    async fn blocks(a: &[&str], b: &[&str]) -> bool {
        let locks = PathLocks::default();
        let held = locks.lock(p(a)).await;
        let mut waiting = Box::pin(locks.lock(p(b)));
        let blocked = poll_once(&mut waiting).await.is_none();
        drop(held);
        if blocked {
            assert!(
                poll_once(&mut waiting).await.is_some(),
                "granted on release"
            );
        }
        drop(waiting);
        assert_eq!(locks.len(), 0);
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
                let _g = locks
                    .lock(vec![PathBuf::from("/a"), PathBuf::from("/b")])
                    .await;
                let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                max_inside.fetch_max(now, Ordering::SeqCst);
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
        assert_eq!(locks.len(), 0);
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
                    let _g = locks.lock(paths).await;
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
        assert_eq!(locks.len(), 0);
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
        let g = tokio::time::timeout(
            Duration::from_secs(1),
            locks.lock(p(&["/w/a", "/w/a2", "/w/a/b", "/w/a"])),
        )
        .await
        .expect("no self-deadlock");
        let mut inner = Box::pin(locks.lock(p(&["/w/a/b/c"])));
        assert!(poll_once(&mut inner).await.is_none());
        drop(g);
        assert!(poll_once(&mut inner).await.is_some());
        drop(inner);
        assert_eq!(locks.len(), 0);
    }

    #[tokio::test]
    async fn a_later_conflicting_request_never_overtakes_an_earlier_waiter() {
        let locks = PathLocks::default();
        let (write, mut remove, mut later) = remove_queued_behind_a_write(&locks).await;
        // A request conflicting with nothing proceeds at once despite the waiters.
        let unrelated = poll_once(&mut Box::pin(locks.lock(p(&["/w/ab"]))))
            .await
            .expect("unrelated path is not queued");
        drop(write);
        assert!(poll_once(&mut later).await.is_none(), "still behind remove");
        let removing = poll_once(&mut remove).await.expect("remove goes first");
        assert!(poll_once(&mut later).await.is_none());
        drop(removing);
        assert!(poll_once(&mut later).await.is_some());
        drop((later, remove, unrelated));
        assert_eq!(locks.len(), 0);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn waiters_are_served_in_arrival_order() {
        let locks = Arc::new(PathLocks::default());
        let order = Arc::new(Mutex::new(Vec::new()));
        let held = locks.lock(p(&["/w"])).await;
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
                let _g = task_locks.lock(p(&[&path])).await;
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
        assert_eq!(locks.len(), 0);
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
            tokio::time::timeout(Duration::from_millis(20), locks.lock(p(&["/w"]))).await;
        assert!(timed_out.is_err());
        assert_eq!(locks.len(), 1);
        drop(write);
        assert_eq!(locks.len(), 0);
    }

    #[tokio::test]
    async fn a_granted_but_unobserved_wait_releases_when_dropped() {
        let locks = PathLocks::default();
        let held = locks.lock(p(&["/w/a"])).await;
        let mut waiting = Box::pin(locks.lock(p(&["/w/a/b"])));
        assert!(poll_once(&mut waiting).await.is_none());
        drop(held); // grants `waiting`, which is dropped before it sees the grant
        drop(waiting);
        assert_eq!(locks.len(), 0);
        let again = tokio::time::timeout(Duration::from_secs(1), locks.lock(p(&["/w/a"])));
        drop(again.await.expect("nothing left held"));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn crossing_multi_path_requests_exclude_and_never_deadlock() {
        const PATHS: [&str; 8] = [
            "/w", "/w/a", "/w/a/b", "/w/a/b/c", "/w/ab", "/w/c", "/w/c/d", "/x",
        ];
        let locks = Arc::new(PathLocks::default());
        let inside = Arc::new(Mutex::new(Vec::<(usize, Vec<PathBuf>)>::new()));
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let mut tasks = Vec::new();
        for task in 0..200 {
            // One to three paths, in a random order: sets cross and nest every which way.
            let paths: Vec<PathBuf> = (0..1 + next(3)).map(|_| PATHS[next(8)].into()).collect();
            let (locks, inside) = (locks.clone(), inside.clone());
            tasks.push(tokio::spawn(async move {
                let _g = locks.lock(paths.clone()).await;
                {
                    let mut inside = inside.lock().unwrap();
                    for (other, held) in inside.iter() {
                        // Checked independently of `conflicts`, straight from the definition.
                        let overlap = paths
                            .iter()
                            .any(|p| held.iter().any(|q| p.starts_with(q) || q.starts_with(p)));
                        assert!(!overlap, "{task} {paths:?} overlaps {other} {held:?}");
                    }
                    inside.push((task, paths));
                }
                tokio::task::yield_now().await;
                inside.lock().unwrap().retain(|(t, _)| *t != task);
            }));
        }
        for t in tasks {
            tokio::time::timeout(Duration::from_secs(10), t)
                .await
                .expect("no deadlock")
                .unwrap();
        }
        assert_eq!(locks.len(), 0);
    }
}
