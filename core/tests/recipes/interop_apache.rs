//! Apache ZooKeeper's own recipes (Debian's `zookeeper` package) on the same
//! paths as ours: each excludes the other, and queues cross over in order.
use crate::common;

use std::time::Duration;

use common::*;
use zkrecipes::{DistributedQueue, WriteLock};

fn apache(args: &[&str]) -> Driver {
    for jar in APACHE_JARS {
        assert!(
            std::path::Path::new(jar).exists(),
            "{jar} missing: install Debian's `zookeeper` package"
        );
    }
    Driver::spawn(
        &APACHE_JARS.join(":"),
        "tests/interop/ApacheDriver.java",
        args,
    )
}

const APACHE_JARS: [&str; 5] = [
    "/usr/share/java/zookeeper.jar",
    "/usr/share/java/zookeeper-recipes-lock.jar",
    "/usr/share/java/zookeeper-recipes-queue.jar",
    "/usr/share/java/zookeeper-recipes-election.jar",
    "/usr/share/java/slf4j-nop.jar",
];

#[tokio::test(flavor = "multi_thread")]
async fn apache_write_lock_holder_excludes_ours() {
    let (dir, _c, ours) = recipe("apache-lock-1", WriteLock::new).await;
    // Apache's WriteLock needs its directory; ours creates it on first use.
    ours.acquire().await.unwrap().release().await.unwrap();
    let driver = apache(&["hold", server().connect_string(), &dir, "1500"]);
    let (driver, waiting) = driver.line().await;
    assert_eq!(waiting, "WAITING");
    let (driver, acquired) = driver.line().await;
    assert!(acquired.starts_with("ACQUIRED"), "{acquired}");
    assert!(
        ours.try_acquire().await.unwrap().is_none(),
        "Apache holds it"
    );
    let guard = acquired_within(&ours, Duration::from_secs(20), "after Apache releases").await;
    // Apache's node goes only with its release: still there means we got in while it held.
    let ours_node = guard.lock().node_path_of(guard.owner()).unwrap();
    let ours_node = ours_node.rsplit('/').next().unwrap();
    assert_eq!(
        children(server().connect_string(), &dir).await,
        [ours_node],
        "we must wait for Apache's release ({acquired})"
    );
    let (driver, released) = driver.line().await;
    assert_eq!(released, "RELEASED");
    guard.release().await.unwrap();
    driver.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn our_holder_excludes_apache_write_lock() {
    let (dir, c, _ours, guard) = held_lock("apache-lock-2").await;
    let driver = apache(&["hold", server().connect_string(), &dir, "10"]);
    let (mut driver, waiting) = driver.line().await;
    assert_eq!(waiting, "WAITING");
    // Apache's contender queues behind ours and must not get in while we
    // hold: its watch on our node says it decided to wait; had it got in, it
    // would have printed ACQUIRED instead.
    let printed = peer_waits_on(
        &mut driver,
        &guard.lock().node_path_of(guard.owner()).unwrap(),
        c.session_id().unwrap(),
    )
    .await;
    assert_eq!(printed, None, "Apache got in while we held");
    guard.release().await.unwrap();
    let (driver, acquired) = driver.line_within(Duration::from_secs(20)).await;
    assert!(acquired.starts_with("ACQUIRED"), "{acquired}");
    driver.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn apache_offers_we_poll_in_order_and_back() {
    let (dir, _c, q) = recipe("apache-queue", DistributedQueue::new).await;
    q.offer(b"warm-up").await.unwrap(); // creates the directory Apache's queue needs
    assert_eq!(q.poll().await.unwrap().unwrap(), b"warm-up");
    let driver = apache(&["offer", server().connect_string(), &dir, "25"]);
    let (driver, offered) = driver.line().await;
    assert_eq!(offered, "OFFERED 25");
    driver.finish();
    poll_theirs_and_offer_ours(&q, "apache").await;
    let mut driver = apache(&["drain", server().connect_string(), &dir, "25"]);
    for i in 0..25 {
        let (d, line) = driver.line().await;
        driver = d;
        assert_eq!(line, format!("ITEM ours-{i}"));
    }
    driver.finish();
    assert_eq!(q.size().await.unwrap(), 0);
}
