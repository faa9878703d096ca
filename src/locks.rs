//! Per-path serialisation (SPEC §2): calls touching the same canonical path run one after the
//! other, so a change is never lost to a concurrent one; calls on different paths run in parallel.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::sync::OwnedMutexGuard;

type Slot = Arc<tokio::sync::Mutex<()>>;

/// The lock table. Entries exist only while some call holds or waits for them.
#[derive(Default)]
pub struct PathLocks {
    slots: Mutex<HashMap<PathBuf, Slot>>,
}

/// Held locks; released (and their table entries dropped when unused) on drop.
pub struct PathGuard<'a> {
    locks: &'a PathLocks,
    held: Vec<(PathBuf, OwnedMutexGuard<()>)>,
}

impl PathLocks {
    /// Locks every path, in sorted order so two calls locking overlapping sets cannot deadlock.
    pub async fn lock(&self, mut paths: Vec<PathBuf>) -> PathGuard<'_> {
        paths.sort();
        paths.dedup();
        let mut held = Vec::with_capacity(paths.len());
        for path in paths {
            let slot = {
                let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
                slots.entry(path.clone()).or_default().clone()
            };
            held.push((path, slot.lock_owned().await));
        }
        PathGuard { locks: self, held }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.slots.lock().unwrap().len()
    }
}

impl Drop for PathGuard<'_> {
    fn drop(&mut self) {
        let held = std::mem::take(&mut self.held);
        let mut slots = self.locks.slots.lock().unwrap_or_else(|e| e.into_inner());
        for (path, guard) in held {
            drop(guard);
            if slots
                .get(&path)
                .is_some_and(|slot| Arc::strong_count(slot) == 1)
            {
                slots.remove(&path);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

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
            t.await.unwrap();
        }
        assert_eq!(max_inside.load(Ordering::SeqCst), 1);
        assert_eq!(locks.len(), 0);
    }
}
