//! Apache Curator 5.9 (`InterProcessMutex`, `InterProcessReadWriteLock`,
//! `SimpleDistributedQueue`) on the same paths as ours, in both directions.
mod common;

use std::time::Duration;

use common::*;
use zkrecipes::{DistributedQueue, LockGuard, ReadWriteLock, WriteLock};

fn curator(args: &[&str]) -> Driver {
    Driver::spawn(
        &zk_harness::curator_classpath(),
        "tests/interop/CuratorDriver.java",
        args,
    )
}

async fn expect(driver: Driver, line: &str) -> Driver {
    let (driver, got) = tokio::time::timeout(Duration::from_secs(30), driver.line())
        .await
        .expect(line);
    assert_eq!(got, line);
    driver
}

/// The name of a hold's lock node inside its directory.
fn node_name(guard: &LockGuard) -> String {
    let path = guard.lock().node_path_of(guard.owner()).expect("held");
    path.rsplit('/').next().unwrap().to_string()
}

/// The `CHILDREN` line a driver started with `children` prints right after `ACQUIRED`.
async fn children_when_acquired(driver: Driver) -> (Driver, Vec<String>) {
    let (driver, line) = tokio::time::timeout(Duration::from_secs(30), driver.line())
        .await
        .expect("CHILDREN");
    let listed = line.strip_prefix("CHILDREN ").expect(&line);
    let names = listed.split(',').filter(|n| !n.is_empty());
    (driver, names.map(str::to_string).collect())
}

#[tokio::test(flavor = "multi_thread")]
async fn curator_mutex_holder_excludes_ours() {
    let dir = unique("curator-mutex-1");
    let c = client().await;
    let ours = WriteLock::new(&c, &dir).unwrap();
    let driver = expect(
        curator(&["mutex", server().connect_string(), &dir, "1500"]),
        "WAITING",
    )
    .await;
    let driver = expect(driver, "ACQUIRED").await;
    assert!(
        ours.try_acquire().await.unwrap().is_none(),
        "Curator holds it"
    );
    let guard = ours
        .acquire_timeout(Duration::from_secs(20))
        .await
        .unwrap()
        .expect("after Curator releases");
    // Curator's node goes only with its release: still there means we got in while it held.
    assert_eq!(
        children(server().connect_string(), &dir).await,
        [node_name(&guard)],
        "we must wait for Curator's release"
    );
    let driver = expect(driver, "RELEASED").await;
    guard.release().await.unwrap();
    driver.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn our_holder_excludes_curator_mutex() {
    let dir = unique("curator-mutex-2");
    let c = client().await;
    let ours = WriteLock::new(&c, &dir).unwrap();
    let guard = ours.acquire().await.unwrap();
    let mut driver = expect(
        curator(&["mutex", server().connect_string(), &dir, "10", "children"]),
        "WAITING",
    )
    .await;
    // Curator's waiter watches the node before its own, ours: it decided to
    // wait. Had it got in, it would have said so instead.
    let printed = peer_waits_on(
        &mut driver,
        &guard.lock().node_path_of(guard.owner()).unwrap(),
        c.session_id().unwrap(),
    )
    .await;
    assert_eq!(printed, None, "Curator got in while we held");
    let ours_node = node_name(&guard);
    guard.release().await.unwrap();
    let driver = expect(driver, "ACQUIRED").await;
    let (driver, seen) = children_when_acquired(driver).await;
    assert!(
        !seen.contains(&ours_node),
        "Curator got in while we held: {seen:?}"
    );
    let driver = expect(driver, "RELEASED").await;
    driver.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn read_write_locks_interoperate_with_curator() {
    let dir = unique("curator-rw");
    let c = client().await;
    let ours = ReadWriteLock::new(&c, &dir).unwrap();
    // A Curator writer excludes our reader and our writer.
    let driver = expect(
        curator(&["write", server().connect_string(), &dir, "1200"]),
        "WAITING",
    )
    .await;
    let driver = expect(driver, "ACQUIRED").await;
    assert!(ours.read_lock().try_acquire().await.unwrap().is_none());
    assert!(ours.write_lock().try_acquire().await.unwrap().is_none());
    let read = ours
        .read_lock()
        .acquire_timeout(Duration::from_secs(20))
        .await
        .unwrap()
        .expect("after Curator's writer");
    // The writer's node goes only with its release.
    assert_eq!(
        children(server().connect_string(), &dir).await,
        [node_name(&read)],
        "our reader must wait for Curator's writer"
    );
    let driver = expect(driver, "RELEASED").await;
    driver.finish();
    // Our reader shares with a Curator reader, and excludes a Curator writer.
    let reader = expect(
        curator(&["read", server().connect_string(), &dir, "10"]),
        "WAITING",
    )
    .await;
    let reader = expect(reader, "ACQUIRED").await;
    let reader = expect(reader, "RELEASED").await;
    reader.finish();
    let mut writer = expect(
        curator(&["write", server().connect_string(), &dir, "10", "children"]),
        "WAITING",
    )
    .await;
    let printed = peer_waits_on(
        &mut writer,
        &read.lock().node_path_of(read.owner()).unwrap(),
        c.session_id().unwrap(),
    )
    .await;
    assert_eq!(
        printed, None,
        "Curator's writer got in while our reader held"
    );
    let read_node = node_name(&read);
    read.release().await.unwrap();
    let writer = expect(writer, "ACQUIRED").await;
    let (writer, seen) = children_when_acquired(writer).await;
    assert!(
        !seen.contains(&read_node),
        "Curator's writer got in while our reader held: {seen:?}"
    );
    let writer = expect(writer, "RELEASED").await;
    writer.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn queues_cross_over_with_curator_in_order() {
    let dir = unique("curator-queue");
    let c = client().await;
    let q = DistributedQueue::new(&c, &dir).unwrap();
    let driver = expect(
        curator(&["offer", server().connect_string(), &dir, "25"]),
        "OFFERED 25",
    )
    .await;
    driver.finish();
    for i in 0..25 {
        assert_eq!(
            q.poll().await.unwrap().unwrap(),
            format!("curator-{i}").as_bytes()
        );
    }
    for i in 0..25 {
        q.offer(format!("ours-{i}").as_bytes()).await.unwrap();
    }
    let mut driver = curator(&["drain", server().connect_string(), &dir, "25"]);
    for i in 0..25 {
        driver = expect(driver, &format!("ITEM ours-{i}")).await;
    }
    driver.finish();
    assert_eq!(q.size().await.unwrap(), 0);
}
