//! The lock table: modes, order, withdrawal, deadlock freedom and cost.

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
