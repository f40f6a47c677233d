//! The multi-lock against a real ZooKeeper: all or none, one deadline, nothing left behind on a
//! timeout, a failure or a cancel, no deadlock whatever order the paths come in, a fencing token
//! per path.
use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::*;
use zkrecipes::ffi::OwnedLock;
use zkrecipes::{ErrorCode, MultiLock, Owner, Wait, WriteLock};

/// A multi-lock over fresh paths (of `names`, in that order) of a client of its own.
async fn over_fresh_paths<const N: usize>(
    names: [&str; N],
) -> ([String; N], zkrecipes::Client, MultiLock) {
    let dirs = names.map(unique);
    let c = client().await;
    let multi = MultiLock::new(&c, &dirs).unwrap();
    (dirs, c, multi)
}

/// A try and an acquire bounded by `timeout` both answer `None`: a path is held.
async fn assert_refused(multi: &MultiLock, timeout: Duration) {
    assert!(multi.try_acquire().await.unwrap().is_none());
    assert!(multi.acquire_timeout(timeout).await.unwrap().is_none());
}

/// How many lock nodes stand under `dir` now.
async fn nodes(dir: &str) -> usize {
    children(server().connect_string(), dir).await.len()
}

/// Waits (on child watches) until `dir` has `n` children.
async fn until_children(zk: &zookeeper_client::Client, dir: &str, n: usize) {
    let wait = async {
        loop {
            let (names, _, watch) = zk.get_and_watch_children(dir).await.unwrap();
            if names.len() == n {
                return;
            }
            watch.changed().await;
        }
    };
    tokio::time::timeout(Duration::from_secs(20), wait)
        .await
        .unwrap_or_else(|_| panic!("{dir} never had {n} children"));
}

#[tokio::test(flavor = "multi_thread")]
async fn all_or_none_and_a_failed_try_leaves_nothing() {
    let ([a, b], _c, multi) = over_fresh_paths(["multi-a", "multi-b"]).await;
    let other = client().await;
    let single_b = WriteLock::new(&other, &b).unwrap();
    let held_b = single_b.acquire().await.unwrap();
    assert_refused(&multi, Duration::from_millis(300)).await;
    // The first path was taken and given back before the answer; the second's attempt is gone.
    assert_eq!(nodes(&a).await, 0, "the partial hold is given back");
    assert_eq!(nodes(&b).await, 1, "only the other holder's node");
    assert!(!multi.is_held());
    held_b.release().await.unwrap();
    let guard = multi.try_acquire().await.unwrap().expect("both free now");
    assert!(guard.is_held() && multi.is_held());
    // A single lock on either path is excluded while the multi-lock holds.
    assert!(WriteLock::new(&other, &a)
        .unwrap()
        .try_acquire()
        .await
        .unwrap()
        .is_none());
    assert!(single_b.try_acquire().await.unwrap().is_none());
    guard.release().await.unwrap();
    assert_eq!((nodes(&a).await, nodes(&b).await), (0, 0));
    assert!(single_b.try_acquire().await.unwrap().is_some());
}

#[tokio::test(flavor = "multi_thread")]
async fn fencing_tokens_come_one_per_path_in_the_order_given() {
    let ([z, a, b], _c, multi) = over_fresh_paths(["multi-t-z", "multi-t-a", "multi-t-b"]).await;
    assert_eq!(multi.dirs(), [z.as_str(), a.as_str(), b.as_str()]);
    let guard = multi.acquire().await.unwrap();
    let zk = raw().await;
    for (dir, token) in [&z, &a, &b].iter().zip(guard.fencing_tokens()) {
        let names = zk.list_children(dir).await.unwrap();
        let (_, stat) = zk.get_data(&format!("{dir}/{}", names[0])).await.unwrap();
        assert_eq!(stat.czxid, *token, "{dir}'s token is its node's czxid");
    }
    // Taken in path order (a, b, z), whatever order given: the czxids say so.
    let t = guard.fencing_tokens().to_vec();
    assert!(t[1] < t[2] && t[2] < t[0], "{t:?}");
    assert_eq!(multi.fencing_tokens(), Some(t.clone()));
    guard.release().await.unwrap();
    assert_eq!(multi.fencing_tokens(), None);
    // Released last taken first: each directory's pzxid is the zxid of its node's delete.
    let mut deleted = Vec::new();
    for dir in [&a, &b, &z] {
        deleted.push(zk.get_data(dir).await.unwrap().1.pzxid);
    }
    assert!(
        deleted[0] > deleted[1] && deleted[1] > deleted[2],
        "{deleted:?}"
    );
}

/// Two multi-locks over the same paths given in opposite orders, each waiting as long as it
/// takes: taken in one order, they never wait for each other in a circle.
#[tokio::test(flavor = "multi_thread")]
async fn opposite_orders_never_deadlock_and_never_overlap() {
    let (a, b) = (unique("multi-d-a"), unique("multi-d-b"));
    let inside = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for forward in [true, false, true, false] {
        let c = client().await;
        let dirs = if forward { [&a, &b] } else { [&b, &a] };
        let multi = MultiLock::new(&c, &dirs).unwrap();
        let inside = inside.clone();
        tasks.push(tokio::spawn(async move {
            for _ in 0..8 {
                let guard = multi.acquire().await.unwrap();
                assert!(!inside.swap(true, Ordering::SeqCst), "two holders at once");
                tokio::task::yield_now().await;
                inside.store(false, Ordering::SeqCst);
                guard.release().await.unwrap();
            }
            c.close().await;
        }));
    }
    let all = futures_util::future::try_join_all(tasks);
    tokio::time::timeout(Duration::from_secs(60), all)
        .await
        .expect("no deadlock")
        .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancelled_acquire_gives_back_what_it_took() {
    let ([a, b], _c, multi) = over_fresh_paths(["multi-c-a", "multi-c-b"]).await;
    let other = client().await;
    let held_b = WriteLock::new(&other, &b).unwrap().acquire().await.unwrap();
    let waiting = spawn_on(
        &multi,
        |multi| async move { multi.acquire().await.map(|_| ()) },
    );
    // Queued on b (its node beside the holder's) means a is taken.
    let zk = raw().await;
    until_children(&zk, &b, 2).await;
    assert_eq!(nodes(&a).await, 1, "the multi-lock took a before b");
    waiting.abort();
    assert!(waiting.await.unwrap_err().is_cancelled());
    let single_a = WriteLock::new(&other, &a).unwrap();
    let got = single_a
        .acquire_timeout(Duration::from_secs(20))
        .await
        .unwrap();
    assert!(got.is_some(), "a is given back after the cancel");
    held_b.release().await.unwrap();
    until_children(&zk, &b, 0).await;
    assert_eq!(nodes(&b).await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn reentrant_per_owner_and_released_as_often_as_taken() {
    let ([a, b], _c, multi) = over_fresh_paths(["multi-r-a", "multi-r-b"]).await;
    let owner = Owner::unique();
    let first = multi.lock_as(owner, Wait::No).await.unwrap().unwrap();
    let again = multi.lock_as(owner, Wait::No).await.unwrap().unwrap();
    assert_eq!(first, again, "the same holds, counted twice");
    assert_eq!(multi.hold_count(owner), 2);
    multi.unlock_as(owner).await.unwrap();
    assert!(multi.is_held_by(owner));
    multi.unlock_as(owner).await.unwrap();
    assert!(!multi.is_held_by(owner));
    assert_eq!((nodes(&a).await, nodes(&b).await), (0, 0));
    let err = multi.unlock_as(owner).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotOwner);
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_paths_are_refused_before_anything_is_sent() {
    let c = client().await;
    let a = unique("multi-bad");
    let none: [&str; 0] = [];
    let cases = [
        (MultiLock::new(&c, &none), ErrorCode::InvalidArgument),
        (MultiLock::new(&c, &[&a, &a]), ErrorCode::InvalidArgument),
        (
            MultiLock::new(&c, &[a.as_str(), "relative"]),
            ErrorCode::InvalidPath,
        ),
    ];
    for (made, code) in cases {
        assert_eq!(made.unwrap_err().code(), code);
    }
    assert_eq!(nodes(&a).await, 0);
}

/// A holder hears `LOST` when any of its locks is lost (here an operator deletes one node), and
/// the multi-lock is no longer held; the release then reports the loss.
#[tokio::test(flavor = "multi_thread")]
async fn losing_one_lock_is_told_as_lost() {
    let ([a, b], _c, multi) = over_fresh_paths(["multi-l-a", "multi-l-b"]).await;
    let mut events = multi.subscribe();
    let guard = multi.acquire().await.unwrap();
    let zk = raw().await;
    let node = zk.list_children(&b).await.unwrap().remove(0);
    zk.delete(&format!("{b}/{node}"), None).await.unwrap();
    let event = next_within(&mut events, Duration::from_secs(20)).await;
    assert_eq!(event.name(), "LOST");
    assert!(!multi.is_held() && !guard.is_held());
    assert!(
        guard.release().await.is_err(),
        "the loss is the release's answer"
    );
    assert_eq!(
        nodes(&a).await,
        0,
        "the lock still held is released all the same"
    );
}

/// A session that expires while the multi-lock waits for a later path takes the earlier holds
/// with it: the acquire must not answer with a lock another client holds now. It takes every
/// lock again on the new session, or none (found by a review: it answered true beside another
/// client's hold of the first path).
#[tokio::test(flavor = "multi_thread")]
async fn a_session_lost_while_waiting_takes_every_lock_again_on_the_next() {
    let (a, b) = (unique("multi-s-a"), unique("multi-s-b"));
    let (proxy, cut) = behind_proxy(Duration::from_secs(2)).await;
    let (other, third) = (client().await, client().await);
    let held_b = WriteLock::new(&other, &b).unwrap().acquire().await.unwrap();
    let multi = MultiLock::new(&cut, &[&b, &a]).unwrap();
    let waiting = spawn_on(&multi, |multi| async move {
        multi.acquire_timeout(Duration::from_secs(60)).await
    });
    let zk = raw().await;
    until_children(&zk, &b, 2).await;
    let first_session = cut.session_id().unwrap();
    proxy.set_blackhole(true);
    until_expired(server().port(), first_session).await;
    // Another client takes the first path the expiry freed, and the second is let go.
    let held_a = WriteLock::new(&third, &a).unwrap().acquire().await.unwrap();
    held_b.release().await.unwrap();
    proxy.set_blackhole(false);
    // Back on a new session, it lines up on the first path again behind the other holder.
    until_children(&zk, &a, 2).await;
    assert!(
        !waiting.is_finished(),
        "answered while another client holds {a}"
    );
    held_a.release().await.unwrap();
    let guard = joined(waiting, Duration::from_secs(60), "the multi-lock").await;
    let guard = guard.unwrap().expect("every lock, on the new session");
    let session = cut.session_id().unwrap();
    assert_ne!(session, first_session);
    for dir in [&a, &b] {
        let names = zk.list_children(dir).await.unwrap();
        assert_eq!(names.len(), 1, "{dir}: {names:?}");
        let (_, stat) = zk.get_data(&format!("{dir}/{}", names[0])).await.unwrap();
        assert_eq!(
            stat.ephemeral_owner, session,
            "{dir} held on the new session"
        );
    }
    guard.release().await.unwrap();
}

/// A try, or a deadline that passed on the first path, looks at the others together: a late
/// answer costs one more look, not one per path.
#[tokio::test(flavor = "multi_thread")]
async fn after_the_deadline_the_other_paths_are_looked_at_together() {
    let dirs: Vec<String> = (0..12)
        .map(|i| unique(&format!("multi-many-{i:02}")))
        .collect();
    let c = client().await;
    let other = client().await;
    let last = dirs.iter().max().unwrap().clone();
    let held = WriteLock::new(&other, &last)
        .unwrap()
        .acquire()
        .await
        .unwrap();
    let multi = MultiLock::new(&c, &dirs).unwrap();
    assert_refused(&multi, Duration::from_millis(1)).await;
    for dir in &dirs {
        let expected = usize::from(*dir == last);
        assert_eq!(nodes(dir).await, expected, "{dir}");
    }
    held.release().await.unwrap();
    let guard = multi.try_acquire().await.unwrap().expect("every path free");
    assert_eq!(guard.fencing_tokens().len(), 12);
    guard.release().await.unwrap();
}
