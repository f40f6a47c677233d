//! The shared count against a real ZooKeeper: seeded once, followed by every object, versioned
//! writes, Curator's encoding (kazoo's empty node reads as the seed).
use crate::common;

use std::time::Duration;

use common::*;
use zkrecipes::{ErrorCode, SharedCount};

#[tokio::test(flavor = "multi_thread")]
async fn a_count_is_seeded_once_followed_everywhere_and_written_by_version() {
    let path = unique("count");
    let (a, b) = (client().await, client().await);
    let ours = SharedCount::new(&a, &path, 7).unwrap();
    let err = ours.get().unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument, "{err}");
    ours.start().await.unwrap();
    assert_eq!(ours.get().unwrap(), 7);
    // A second object's seed never overwrites the value.
    let theirs = SharedCount::new(&b, &path, 100).unwrap();
    theirs.start().await.unwrap();
    assert_eq!(theirs.get().unwrap(), 7);
    let mut changes = ours.subscribe();
    theirs.set(8).await.unwrap();
    let seen = tokio::time::timeout(Duration::from_secs(20), changes.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(seen.value, 8, "followed by the watch");
    assert_eq!(ours.get().unwrap(), 8);
    // Versioned: the first writer over a version wins; the other is told and refreshed.
    let read = ours.versioned().unwrap();
    assert!(theirs
        .try_set(theirs.versioned().unwrap(), 9)
        .await
        .unwrap());
    assert!(!ours.try_set(read, 10).await.unwrap());
    assert_eq!(ours.get().unwrap(), 9);
    assert!(ours.try_set(ours.versioned().unwrap(), 10).await.unwrap());
    // Curator's bytes: 4, big-endian.
    let zk = raw().await;
    assert_eq!(zk.get_data(&path).await.unwrap().0, 10i32.to_be_bytes());
    ours.close();
    theirs.close();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_empty_node_reads_as_the_seed_and_another_length_is_refused() {
    // kazoo's Counter creates the node empty.
    let (path, zk) = made_by_raw("count-empty").await;
    let c = client().await;
    let count = SharedCount::new(&c, &path, 3).unwrap();
    count.start().await.unwrap();
    assert_eq!(count.get().unwrap(), 3);
    zk.set_data(&path, &[1, 2], None).await.unwrap();
    let other = SharedCount::new(&c, &path, 3).unwrap();
    let err = other.start().await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument, "{err}");
    assert!(err.message().contains("2"), "names the length: {err}");
    count.close();
}

/// The next value the count takes, within a deadline.
async fn next_value(
    changes: &mut tokio::sync::broadcast::Receiver<zkrecipes::VersionedCount>,
) -> i32 {
    tokio::time::timeout(Duration::from_secs(20), changes.recv())
        .await
        .expect("a change in time")
        .expect("the count goes on")
        .value
}

#[tokio::test(flavor = "multi_thread")]
async fn a_count_follows_a_recreated_node_and_goes_on_after_a_bad_value() {
    let path = unique("count-follow");
    let c = client().await;
    let count = SharedCount::new(&c, &path, 1).unwrap();
    count.start().await.unwrap();
    let mut changes = count.subscribe();
    let zk = raw().await;
    // Deleted and created again by someone else: followed through an exists watch.
    zk.delete(&path, None).await.unwrap();
    zk.create(&path, &5i32.to_be_bytes(), &open_persistent())
        .await
        .unwrap();
    assert_eq!(next_value(&mut changes).await, 5);
    // A value of another length is not taken, and the next good one is.
    zk.set_data(&path, b"\x01\x02", None).await.unwrap();
    zk.set_data(&path, &9i32.to_be_bytes(), None).await.unwrap();
    assert_eq!(next_value(&mut changes).await, 9);
    assert_eq!(count.get().unwrap(), 9);
    // Closed for good: every call answers CLOSED, a start too.
    count.close();
    for err in [
        count.get().unwrap_err(),
        count.start().await.unwrap_err(),
        count.set(1).await.unwrap_err(),
    ] {
        assert_eq!(err.code(), ErrorCode::Closed, "{err}");
    }
    // A close while a start is on its way wins: the count is not followed afterwards.
    let other = SharedCount::new(&c, &path, 1).unwrap();
    let starting = tokio::spawn({
        let other = other.clone();
        async move { other.start().await }
    });
    other.close();
    let started = starting.await.unwrap();
    assert!(
        started.is_err() || other.get().is_err(),
        "closed stays closed"
    );
    assert_eq!(other.get().unwrap_err().code(), ErrorCode::Closed);
}
