//! Barriers, caches, counters and the multi-lock.

use super::*;
use zkrecipes::{Barrier, Cache, CacheEvent, DistributedAtomicLong, DoubleBarrier, MultiLock};
use zkrecipes::{SharedCount, WriteLock};

#[tokio::test]
async fn barriers_count_waits_by_kind_and_outcome() {
    let (path, client, barrier) = recipe("observe-barrier", Barrier::new).await;
    barrier.set().await.unwrap();
    assert!(!barrier.wait(Duration::from_millis(50)).await.unwrap());
    let waiter = spawn_on(&barrier, |b| async move {
        b.wait(Duration::from_secs(10)).await
    });
    let at = ("path", path.as_str());
    eventually("the waiter waits", Duration::from_secs(10), || {
        let waiting = client.metrics().gauge("zkrecipes.barrier.waiters", &[at]);
        async move { waiting == 1 }
    })
    .await;
    barrier.remove().await.unwrap();
    assert!(joined(waiter, Duration::from_secs(10), "the barrier wait")
        .await
        .unwrap());

    let double = unique("observe-double");
    let first = DoubleBarrier::new(&client, &double, 2).unwrap();
    let second = DoubleBarrier::new(&client, &double, 2).unwrap();
    let entering = spawn_on(
        &first,
        |b| async move { b.enter(Duration::from_secs(10)).await },
    );
    assert!(second.enter(Duration::from_secs(10)).await.unwrap());
    assert!(joined(entering, Duration::from_secs(10), "the first enter")
        .await
        .unwrap());
    let leaving = spawn_on(
        &first,
        |b| async move { b.leave(Duration::from_secs(10)).await },
    );
    assert!(second.leave(Duration::from_secs(10)).await.unwrap());
    assert!(joined(leaving, Duration::from_secs(10), "the first leave")
        .await
        .unwrap());

    let seen = client.metrics();
    let waits = |path: &str, kind: &str, outcome: &str| {
        let filter = [("path", path), ("kind", kind), ("outcome", outcome)];
        let waits = seen.histogram("zkrecipes.barrier.wait.duration", &filter);
        waits.map_or(0, |w| w.count)
    };
    assert_eq!(waits(&path, "single", "timeout"), 1);
    assert_eq!(waits(&path, "single", "passed"), 1);
    assert_eq!(waits(&double, "enter", "passed"), 2);
    assert_eq!(waits(&double, "leave", "passed"), 2);
    assert_eq!(seen.gauge("zkrecipes.barrier.waiters", &[]), 0);
}

#[tokio::test]
async fn a_cache_counts_its_changes_and_nodes() {
    let (path, raw) = foreign_dir("observe-cache", &[("a", b"1"), ("b", b"2")]).await;
    let client = client().await;
    let cache = Cache::children(&client, &path).unwrap();
    cache.start().await.unwrap();
    let mut events = cache.subscribe();
    raw.create(&format!("{path}/c"), b"3", &open_persistent())
        .await
        .unwrap();
    assert_eq!(next_event(&mut events).await.name(), "CREATED");
    raw.set_data(&format!("{path}/c"), b"4", None)
        .await
        .unwrap();
    assert_eq!(next_event(&mut events).await.name(), "CHANGED");
    raw.delete(&format!("{path}/a"), None).await.unwrap();
    assert_eq!(next_event(&mut events).await.name(), "DELETED");

    let seen = client.metrics();
    let at = ("path", path.as_str());
    let saw = |kind| seen.counter("zkrecipes.cache.events", &[at, ("type", kind)]);
    assert_eq!(
        (
            saw("added"),
            saw("updated"),
            saw("removed"),
            saw("initialized")
        ),
        (3, 1, 1, 1),
        "two children loaded, one created, changed and another deleted (the root not shown)"
    );
    assert_eq!(seen.gauge("zkrecipes.cache.nodes", &[at]), 2);
    cache.close();
    assert_eq!(client.metrics().gauge("zkrecipes.cache.nodes", &[at]), 0);
}

#[tokio::test]
async fn counters_count_updates_and_conflicts() {
    let (path, client, long) = recipe("observe-long", DistributedAtomicLong::new).await;
    for _ in 0..3 {
        long.increment().await.unwrap();
    }
    let count_path = unique("observe-count");
    let first = SharedCount::new(&client, &count_path, 0).unwrap();
    let second = SharedCount::new(&client, &count_path, 0).unwrap();
    first.start().await.unwrap();
    second.start().await.unwrap();
    let stale = second.versioned().unwrap();
    assert!(first.try_set(first.versioned().unwrap(), 5).await.unwrap());
    assert!(!second.try_set(stale, 6).await.unwrap(), "written over");

    let seen = client.metrics();
    let updates = |path: &str, kind: &str, outcome: &str| {
        let filter = [("path", path), ("kind", kind), ("outcome", outcome)];
        seen.counter("zkrecipes.counter.updates", &filter)
    };
    assert_eq!(updates(&path, "atomic_long", "updated"), 3);
    assert_eq!(updates(&path, "atomic_long", "conflict"), 0);
    assert_eq!(updates(&count_path, "shared_count", "updated"), 1);
    assert_eq!(updates(&count_path, "shared_count", "conflict"), 1);
}

#[tokio::test]
async fn a_multi_lock_counts_one_wait_over_its_paths() {
    let (first, second) = (unique("observe-multi-a"), unique("observe-multi-b"));
    let client = client().await;
    let multi = MultiLock::new(&client, &[&second, &first]).unwrap();
    let guard = multi.acquire().await.unwrap();
    let paths = format!("{second},{first}");
    let seen = client.metrics();
    let acquisitions = |path: &str, outcome: &str| {
        let filter = [("path", path), ("outcome", outcome)];
        seen.counter("zkrecipes.lock.acquisitions", &filter)
    };
    assert_eq!(acquisitions(&paths, "acquired"), 1);
    let multi_kind = [("path", paths.as_str()), ("kind", "multi")];
    assert_eq!(seen.counter("zkrecipes.lock.acquisitions", &multi_kind), 1);
    assert_eq!(
        acquisitions(&first, "acquired"),
        0,
        "its locks count no wait"
    );
    let one = [("path", first.as_str()), ("kind", "lock")];
    assert_eq!(seen.gauge("zkrecipes.lock.holders", &one), 1);
    guard.release().await.unwrap();

    let other = common::client().await;
    let held = WriteLock::new(&other, &first)
        .unwrap()
        .acquire()
        .await
        .unwrap();
    assert!(multi.try_acquire().await.unwrap().is_none());
    held.release().await.unwrap();
    let seen = client.metrics();
    assert_eq!(
        seen.counter(
            "zkrecipes.lock.acquisitions",
            &[multi_kind[0], ("outcome", "timeout")]
        ),
        1
    );
    assert_eq!(seen.gauge("zkrecipes.lock.waiters", &multi_kind), 0);
    assert_eq!(seen.gauge("zkrecipes.lock.holders", &one), 0);
    let holds = seen.histogram("zkrecipes.lock.hold.duration", &one);
    assert_eq!(holds.unwrap().count, 1);
}

/// The cache's next event; fails after 10 s.
async fn next_event(events: &mut tokio::sync::mpsc::UnboundedReceiver<CacheEvent>) -> CacheEvent {
    let next = tokio::time::timeout(Duration::from_secs(10), events.recv()).await;
    next.expect("an event in time").expect("an event")
}
