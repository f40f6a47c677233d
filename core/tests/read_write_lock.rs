mod common;

use std::time::Duration;

use common::*;
use zkrecipes::ffi::OwnedLock;
use zkrecipes::{ErrorCode, ReadWriteLock, Wait};

#[tokio::test(flavor = "multi_thread")]
async fn readers_share_and_a_writer_waits_for_them() {
    let dir = unique("rw-share");
    let (a, b, c) = (client().await, client().await, client().await);
    let r1 = ReadWriteLock::new(&a, &dir).unwrap();
    let r2 = ReadWriteLock::new(&b, &dir).unwrap();
    let w = ReadWriteLock::new(&c, &dir).unwrap();
    let g1 = r1.read_lock().acquire().await.unwrap();
    let g2 = r2
        .read_lock()
        .try_acquire()
        .await
        .unwrap()
        .expect("readers share");
    assert!(
        w.write_lock().try_acquire().await.unwrap().is_none(),
        "writer excluded by readers"
    );
    let writer = w.write_lock().clone();
    let task = tokio::spawn(async move { writer.acquire().await });
    // The queued writer watches the reader before it: it decided to wait.
    let second_reader = g2.lock().node_path_of(g2.owner()).unwrap();
    let writer_session = session_hex(c.session_id().unwrap());
    until(
        "the writer waits on the second reader",
        Duration::from_secs(20),
        || watchers_of(server().port(), &second_reader).contains(&writer_session),
    )
    .await;
    assert!(!task.is_finished(), "writer must wait for both readers");
    g1.release().await.unwrap();
    // A chance for a writer that woke on the first reader's release to get in.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !task.is_finished(),
        "writer must wait for the second reader"
    );
    g2.release().await.unwrap();
    let guard = tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(guard.fencing_token() > 0);
    assert!(w.write_lock().is_held());
    guard.release().await.unwrap();
    // A hold on its way out is no longer reported.
    assert!(!w.write_lock().is_held());
}

#[tokio::test(flavor = "multi_thread")]
async fn reader_waits_only_for_the_writer_before_it() {
    let dir = unique("rw-fifo");
    let (a, b, c) = (client().await, client().await, client().await);
    let writer = ReadWriteLock::new(&a, &dir).unwrap();
    let early_reader = ReadWriteLock::new(&b, &dir).unwrap();
    let late_reader = ReadWriteLock::new(&c, &dir).unwrap();
    let r = early_reader.read_lock().acquire().await.unwrap();
    // Writer queues behind the reader; a later reader queues behind the writer (no starvation).
    let w = writer.write_lock().clone();
    let wt = tokio::spawn(async move { w.acquire().await });
    eventually("writer queued", Duration::from_secs(5), || async {
        children(server().connect_string(), &dir).await.len() == 2
    })
    .await;
    assert!(
        late_reader
            .read_lock()
            .try_acquire()
            .await
            .unwrap()
            .is_none(),
        "reader behind a waiting writer waits"
    );
    r.release().await.unwrap();
    let w = tokio::time::timeout(Duration::from_secs(5), wt)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    w.release().await.unwrap();
    let g = late_reader
        .read_lock()
        .acquire_timeout(Duration::from_secs(5))
        .await
        .unwrap()
        .expect("free");
    g.release().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn write_holder_may_downgrade_and_reader_cannot_upgrade() {
    let dir = unique("rw-grade");
    let c = client().await;
    let other = client().await;
    let rw = ReadWriteLock::new(&c, &dir).unwrap();
    let w = rw.write_lock().acquire().await.unwrap();
    // Rust has no caller identity: the read side is taken as the write guard's owner.
    let r = tokio::time::timeout(
        Duration::from_secs(5),
        rw.read_lock().acquire_as(w.owner(), Wait::Forever),
    )
    .await
    .expect("downgrade must not wait")
    .unwrap()
    .unwrap();
    w.release().await.unwrap();
    // Still a reader, on the write hold's node (no deadlock with a writer
    // queued meanwhile): other writers wait, and so do other readers until the
    // downgraded read is released.
    let foreign = ReadWriteLock::new(&other, &dir).unwrap();
    assert!(foreign.write_lock().try_acquire().await.unwrap().is_none());
    assert!(foreign.read_lock().try_acquire().await.unwrap().is_none());
    let err = rw
        .write_lock()
        .lock_as(r.owner(), Wait::For(Duration::from_secs(30)))
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::WouldDeadlock);
    r.release().await.unwrap();
    assert!(children(server().connect_string(), &dir).await.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn curator_and_kazoo_reader_names_are_understood() {
    let dir = unique("rw-foreign");
    let raw = raw().await;
    let open =
        zookeeper_client::CreateMode::Persistent.with_acls(zookeeper_client::Acls::anyone_all());
    raw.mkdir(&dir, &open).await.unwrap();
    let eph = zookeeper_client::CreateMode::EphemeralSequential
        .with_acls(zookeeper_client::Acls::anyone_all());
    // A kazoo reader: our reader shares with it, our writer waits for it.
    let (_, _) = raw
        .create(&format!("{dir}/abc__rlock__"), b"kazoo", &eph)
        .await
        .unwrap();
    let c = client().await;
    let rw = ReadWriteLock::new(&c, &dir).unwrap();
    rw.read_lock()
        .try_acquire()
        .await
        .unwrap()
        .expect("shares with a kazoo reader")
        .release()
        .await
        .unwrap();
    assert!(rw.write_lock().try_acquire().await.unwrap().is_none());
    // A Curator writer blocks our reader.
    let rw2 = ReadWriteLock::new(&client().await, &dir).unwrap();
    let (_, _) = raw
        .create(&format!("{dir}/_c_0-__WRIT__"), b"curator", &eph)
        .await
        .unwrap();
    assert!(rw2.read_lock().try_acquire().await.unwrap().is_none());
}

/// Found by a review: a write acquire right after the object's read hold
/// began its release (`is_held` already false) was refused as an upgrade
/// (`WOULD_DEADLOCK`) in 192 of 200 tries. A read hold on its way out is no
/// upgrade: the write waits for its node to go, and gets the lock.
#[tokio::test(flavor = "multi_thread")]
async fn a_write_after_the_read_hold_began_its_release_waits_for_it() {
    let dir = unique("rw-releasing");
    let c = client().await;
    let rw = ReadWriteLock::new(&c, &dir).unwrap();
    for _ in 0..50 {
        let read = rw.read_lock().acquire().await.unwrap();
        let releasing = tokio::spawn(read.release());
        while rw.read_lock().is_held() {
            tokio::task::yield_now().await;
        }
        let write = rw
            .write_lock()
            .acquire_timeout(Duration::from_secs(10))
            .await
            .expect("a read hold being released is no upgrade")
            .expect("the write lock once the read node is gone");
        releasing.await.unwrap().unwrap();
        write.release().await.unwrap();
    }
    assert!(children(server().connect_string(), &dir).await.is_empty());
}

/// Issue 48: two tasks share one read/write lock object, one reading, the
/// other asking for the write side. Neither has a caller identity, so the
/// writer is another owner: it waits for the read hold (it was refused with
/// `WOULD_DEADLOCK`, which crashed the demo's Node worker), and it is granted
/// once the read is released. A named owner that holds the read side is still
/// refused at once.
#[tokio::test(flavor = "multi_thread")]
async fn a_write_of_another_task_waits_for_the_objects_read_hold() {
    let dir = unique("rw-two-tasks");
    let c = client().await;
    let rw = ReadWriteLock::new(&c, &dir).unwrap();
    let read = rw.read_lock().acquire().await.unwrap();
    let writer = rw.write_lock().clone();
    let write = tokio::spawn(async move { writer.acquire().await });
    // The write's node is in line behind the read node and watches it: it waits.
    let read_node = read.lock().node_path_of(read.owner()).unwrap();
    let session = session_hex(c.session_id().unwrap());
    until(
        "the writer watches the read node",
        Duration::from_secs(20),
        || watchers_of(server().port(), &read_node).contains(&session),
    )
    .await;
    assert!(
        !write.is_finished(),
        "the write must wait for the read hold"
    );
    // The reader's own upgrade (its owner named) is still refused at once.
    let upgrade = rw
        .write_lock()
        .lock_as(read.owner(), Wait::For(Duration::from_secs(30)))
        .await
        .unwrap_err();
    assert_eq!(upgrade.code(), ErrorCode::WouldDeadlock);
    read.release().await.unwrap();
    let write = tokio::time::timeout(Duration::from_secs(20), write)
        .await
        .expect("the write is granted once the read is released")
        .unwrap()
        .unwrap();
    assert!(rw.write_lock().is_held());
    write.release().await.unwrap();
    assert!(children(server().connect_string(), &dir).await.is_empty());
}
