//! The distributed atomic long against a real ZooKeeper: exact under contention, compare and
//! set, Curator's encoding (and a node of another length refused).
use crate::common;

use common::*;
use zkrecipes::{DistributedAtomicLong, ErrorCode};

#[tokio::test(flavor = "multi_thread")]
async fn increments_from_many_clients_end_at_exactly_their_number() {
    let path = unique("atomic-many");
    let mut tasks = Vec::new();
    for _ in 0..4 {
        let c = client().await;
        let counter = DistributedAtomicLong::new(&c, &path).unwrap();
        tasks.push(tokio::spawn(async move {
            let mut seen = Vec::new();
            for _ in 0..50 {
                let updated = counter.increment().await.unwrap();
                assert_eq!(updated.post_value, updated.pre_value + 1);
                seen.push(updated.post_value);
            }
            (c, seen)
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        let (_client, seen) = task.await.unwrap();
        all.extend(seen);
    }
    all.sort();
    assert_eq!(
        all,
        (1..=200).collect::<Vec<i64>>(),
        "every increment counted once"
    );
    let total = DistributedAtomicLong::new(&client().await, &path).unwrap();
    assert_eq!(total.get().await.unwrap(), 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn compare_and_set_force_set_and_the_encoding() {
    let (path, c, counter) = recipe("atomic-cas", DistributedAtomicLong::new).await;
    assert_eq!(counter.get().await.unwrap(), 0, "missing reads as 0");
    assert!(!counter.compare_and_set(5, 6).await.unwrap());
    assert!(counter.compare_and_set(0, 41).await.unwrap());
    assert_eq!(counter.add(1).await.unwrap().post_value, 42);
    // The swap tells the value it saw, written or not (Curator's AtomicValue).
    let missed = counter.compare_and_swap(7, 8).await.unwrap();
    assert_eq!((missed.pre_value, missed.post_value), (42, 42));
    let swapped = counter.compare_and_swap(42, 43).await.unwrap();
    assert_eq!((swapped.pre_value, swapped.post_value), (42, 43));
    counter.force_set(i64::MAX).await.unwrap();
    assert_eq!(
        counter.increment().await.unwrap().post_value,
        i64::MIN,
        "wraps as Java's long"
    );
    // Curator's bytes: 8, big-endian.
    let zk = raw().await;
    let (data, _) = zk.get_data(&path).await.unwrap();
    assert_eq!(data, i64::MIN.to_be_bytes());
    zk.set_data(&path, &[1, 2, 3], None).await.unwrap();
    let err = counter.get().await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument, "{err}");
    assert!(err.message().contains("3"), "names the length: {err}");
    zk.set_data(&path, &[], None).await.unwrap();
    assert_eq!(counter.get().await.unwrap(), 0, "empty reads as 0");
    let err = DistributedAtomicLong::new(&c, "relative").err().unwrap();
    assert_eq!(err.code(), ErrorCode::InvalidPath);
}
