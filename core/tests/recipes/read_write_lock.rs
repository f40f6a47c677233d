use crate::common;

use std::time::Duration;

use common::*;
use zkrecipes::ffi::OwnedLock;
use zkrecipes::{ErrorCode, ReadWriteLock, Wait};

#[tokio::test(flavor = "multi_thread")]
async fn readers_share_and_a_writer_waits_for_them() {
    let (_dir, [(_a, r1), (_b, r2), (c, w)]) = recipes("rw-share", ReadWriteLock::new).await;
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
    let waits = "the writer waits on the second reader";
    until_watched_by(waits, &second_reader, c.session_id().unwrap()).await;
    assert!(!task.is_finished(), "writer must wait for both readers");
    g1.release().await.unwrap();
    // A chance for a writer that woke on the first reader's release to get in.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !task.is_finished(),
        "writer must wait for the second reader"
    );
    g2.release().await.unwrap();
    let guard = joined(task, Duration::from_secs(5), "the task")
        .await
        .unwrap();
    assert!(guard.fencing_token() > 0);
    assert!(w.write_lock().is_held());
    guard.release().await.unwrap();
    // A hold on its way out is no longer reported.
    assert!(!w.write_lock().is_held());
}

#[tokio::test(flavor = "multi_thread")]
async fn reader_waits_only_for_the_writer_before_it() {
    let (dir, [(_a, writer), (_b, early_reader), (_c, late_reader)]) =
        recipes("rw-fifo", ReadWriteLock::new).await;
    let r = early_reader.read_lock().acquire().await.unwrap();
    // Writer queues behind the reader; a later reader queues behind the writer (no starvation).
    let wt = spawn_on(writer.write_lock(), |w| async move { w.acquire().await });
    until_child_count("writer queued", &dir, 2, Duration::from_secs(5)).await;
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
    let w = joined(wt, Duration::from_secs(5), "the writer")
        .await
        .unwrap();
    w.release().await.unwrap();
    let g = acquired_within(late_reader.read_lock(), Duration::from_secs(5), "free").await;
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
    assert_upgrade_refused(&rw, r.owner()).await;
    r.release().await.unwrap();
    assert!(children_of(&dir).await.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn curator_and_kazoo_reader_names_are_understood() {
    let (dir, raw) = foreign_dir("rw-foreign", &[]).await;
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
    let (dir, _c, rw) = recipe("rw-releasing", ReadWriteLock::new).await;
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
    assert!(children_of(&dir).await.is_empty());
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
    let watches = "the writer watches the read node";
    until_watched_by(watches, &read_node, c.session_id().unwrap()).await;
    assert!(
        !write.is_finished(),
        "the write must wait for the read hold"
    );
    // The reader's own upgrade (its owner named) is still refused at once.
    assert_upgrade_refused(&rw, read.owner()).await;
    read.release().await.unwrap();
    let write = joined(write, Duration::from_secs(20), "the write")
        .await
        .unwrap();
    assert!(rw.write_lock().is_held());
    write.release().await.unwrap();
    assert!(children_of(&dir).await.is_empty());
}

/// A write of `owner`, who holds the read side of `rw`: an upgrade, refused at once (its
/// 30 s wait would be for itself).
async fn assert_upgrade_refused(rw: &ReadWriteLock, owner: zkrecipes::Owner) {
    let wait = Wait::For(Duration::from_secs(30));
    let err = rw.write_lock().lock_as(owner, wait).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::WouldDeadlock);
}
