//! The shared count against a real ZooKeeper: seeded once, followed by every object, versioned
//! writes, Curator's encoding (kazoo's empty node reads as the seed).
mod common;

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
    let path = unique("count-empty");
    let zk = raw().await;
    // kazoo's Counter creates the node empty.
    zk.create(
        "/test",
        &[],
        &zookeeper_client::CreateMode::Persistent.with_acls(zookeeper_client::Acls::anyone_all()),
    )
    .await
    .ok();
    zk.create(
        &path,
        &[],
        &zookeeper_client::CreateMode::Persistent.with_acls(zookeeper_client::Acls::anyone_all()),
    )
    .await
    .unwrap();
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
