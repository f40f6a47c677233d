//! The barrier and the double barrier against a real ZooKeeper: waiters released by the
//! removal (also one made while they were disconnected), the quorum for entering, withdrawn
//! members after a timeout or a cancel, leaving together.
mod common;

use std::time::Duration;

use common::*;
use zk_harness::FaultProxy;
use zkrecipes::{Barrier, DoubleBarrier, ErrorCode, Wait};

const LONG: Wait = Wait::For(Duration::from_secs(20));

#[tokio::test(flavor = "multi_thread")]
async fn a_barrier_holds_waiters_until_removed() {
    let path = unique("barrier");
    let (a, b) = (client().await, client().await);
    let ours = Barrier::new(&a, &path).unwrap();
    // Down: a wait passes at once, also a check.
    assert!(!ours.is_set().await.unwrap());
    assert!(ours.wait(Wait::No).await.unwrap());
    ours.set().await.unwrap();
    ours.set().await.unwrap();
    assert!(ours.is_set().await.unwrap());
    let theirs = Barrier::new(&b, &path).unwrap();
    assert!(!theirs.wait(Wait::No).await.unwrap());
    assert!(!theirs.wait(Duration::from_millis(100)).await.unwrap());
    let waiter = {
        let theirs = theirs.clone();
        tokio::spawn(async move { theirs.wait(LONG).await })
    };
    eventually("the waiter watches", Duration::from_secs(20), || async {
        !watchers_of(server().port(), &path).is_empty()
    })
    .await;
    assert!(!waiter.is_finished());
    ours.remove().await.unwrap();
    ours.remove().await.unwrap();
    assert!(waiter.await.unwrap().unwrap());
    let err = Barrier::new(&a, "relative").err().unwrap();
    assert_eq!(err.code(), ErrorCode::InvalidPath);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_removal_while_the_waiter_is_disconnected_releases_it_at_the_reconnect() {
    // kazoo's Barrier ignores the disconnect's event and misses the removal until its timeout.
    let path = unique("barrier-cut");
    let setter = client().await;
    let barrier = Barrier::new(&setter, &path).unwrap();
    barrier.set().await.unwrap();
    let proxy = FaultProxy::start(server().connect_string());
    let cut = client_at(&proxy.connect_string(), Duration::from_secs(20)).await;
    let waiting = Barrier::new(&cut, &path).unwrap();
    let mut states = cut.subscribe();
    let waiter =
        tokio::spawn(async move { waiting.wait(Wait::For(Duration::from_secs(60))).await });
    eventually("the waiter watches", Duration::from_secs(20), || async {
        !watchers_of(server().port(), &path).is_empty()
    })
    .await;
    proxy.set_blackhole(true);
    proxy.drop_all();
    loop {
        let state = tokio::time::timeout(Duration::from_secs(30), states.recv())
            .await
            .unwrap()
            .unwrap();
        if state.as_str() == "SUSPENDED" {
            break;
        }
    }
    barrier.remove().await.unwrap();
    proxy.set_blackhole(false);
    let released = tokio::time::timeout(Duration::from_secs(30), waiter)
        .await
        .expect("released well before its 60 s timeout");
    assert!(released.unwrap().unwrap());
}

/// Member nodes on the server (`ready` included).
async fn nodes(path: &str) -> Vec<String> {
    let mut nodes = children(server().connect_string(), path).await;
    nodes.sort();
    nodes
}

#[tokio::test(flavor = "multi_thread")]
async fn members_enter_only_together_and_leave_together() {
    let path = unique("double");
    let mut members = Vec::new();
    for _ in 0..3 {
        let c = client().await;
        members.push(DoubleBarrier::new(&c, &path, 3).unwrap());
    }
    // Two of three: neither passes; a timed-out enter withdraws its node.
    let (one, two) = (members[0].clone(), members[1].clone());
    let first = tokio::spawn(async move { one.enter(LONG).await });
    assert!(!two.enter(Duration::from_millis(300)).await.unwrap());
    assert_eq!(
        nodes(&path).await,
        [members[0].node_path().rsplit('/').next().unwrap()]
    );
    assert!(!first.is_finished());
    let entering: Vec<_> = members[1..]
        .iter()
        .cloned()
        .map(|m| tokio::spawn(async move { m.enter(LONG).await }))
        .collect();
    assert!(first.await.unwrap().unwrap());
    for e in entering {
        assert!(e.await.unwrap().unwrap());
    }
    assert!(members[0].is_ready().await.unwrap());
    assert_eq!(members[0].members().await.unwrap().len(), 3);
    let leaving: Vec<_> = members
        .iter()
        .cloned()
        .map(|m| tokio::spawn(async move { m.leave(LONG).await }))
        .collect();
    for l in leaving {
        assert!(l.await.unwrap().unwrap());
    }
    eventually("nothing left", Duration::from_secs(20), || async {
        nodes(&path).await.is_empty()
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dead_member_does_not_count_and_a_cancelled_enter_withdraws() {
    let path = unique("double-dead");
    let (a, b) = (client().await, client().await);
    let ours = DoubleBarrier::new(&a, &path, 2).unwrap();
    let dying = DoubleBarrier::new(&b, &path, 3).unwrap();
    // A member whose client closes while it waits: its node goes, nobody passes on it.
    let waiting = {
        let dying = dying.clone();
        tokio::spawn(async move { dying.enter(Wait::Forever).await })
    };
    eventually("the member is in", Duration::from_secs(20), || async {
        nodes(&path).await.len() == 1
    })
    .await;
    b.close().await;
    let err = waiting.await.unwrap().unwrap_err();
    assert_eq!(err.code(), ErrorCode::Closed, "{err}");
    eventually(
        "its node went with the session",
        Duration::from_secs(20),
        || async { nodes(&path).await.is_empty() },
    )
    .await;
    assert!(
        !ours.enter(Duration::from_millis(300)).await.unwrap(),
        "one member of two"
    );
    assert!(
        nodes(&path).await.is_empty(),
        "the timed-out member withdrew"
    );
    // A cancelled enter withdraws in the background.
    let cancelled = {
        let ours = ours.clone();
        tokio::spawn(async move { ours.enter(Wait::Forever).await })
    };
    eventually("the member is in", Duration::from_secs(20), || async {
        nodes(&path).await.len() == 1
    })
    .await;
    cancelled.abort();
    eventually(
        "the cancelled member withdrew",
        Duration::from_secs(20),
        || async { nodes(&path).await.is_empty() },
    )
    .await;
    for bad in [0u32, u32::MAX] {
        let err = DoubleBarrier::new(&a, &path, bad).err().unwrap();
        assert_eq!(err.code(), ErrorCode::InvalidArgument, "{err}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn two_callers_on_one_member_take_turns_and_a_timed_out_one_withdraws_nothing_of_the_other() {
    let path = unique("double-shared");
    let (a, b) = (client().await, client().await);
    let shared = DoubleBarrier::new(&a, &path, 2).unwrap();
    let first = {
        let shared = shared.clone();
        tokio::spawn(async move { shared.enter(LONG).await })
    };
    eventually("the member is in", Duration::from_secs(20), || async {
        nodes(&path).await.len() == 1
    })
    .await;
    // The second caller's turn never comes within its deadline: it answers false and leaves
    // the first caller's node in place.
    assert!(!shared.enter(Duration::from_millis(200)).await.unwrap());
    assert_eq!(nodes(&path).await.len(), 1);
    let other = DoubleBarrier::new(&b, &path, 2).unwrap();
    assert!(other.enter(LONG).await.unwrap());
    assert!(first.await.unwrap().unwrap());
    let (left, other_left) = tokio::join!(shared.leave(LONG), other.leave(LONG));
    assert!(left.unwrap() && other_left.unwrap());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_leave_by_an_outsider_never_closes_the_barrier_on_a_member_inside() {
    let path = unique("double-outsider");
    let (a, b, c) = (client().await, client().await, client().await);
    let first = DoubleBarrier::new(&a, &path, 2).unwrap();
    let second = DoubleBarrier::new(&b, &path, 2).unwrap();
    let (entered, other) = tokio::join!(first.enter(LONG), second.enter(LONG));
    assert!(entered.unwrap() && other.unwrap());
    // The higher member (`two`) leaves at once while the lowest (`one`) is still inside; an
    // object that never entered leaves too.
    let lowest = first.members().await.unwrap()[0].clone();
    let (one, two) = if first.node_path().ends_with(&lowest) {
        (first, second)
    } else {
        (second, first)
    };
    let leaving = {
        let two = two.clone();
        tokio::spawn(async move { two.leave(LONG).await })
    };
    let outsider = DoubleBarrier::new(&c, &path, 2).unwrap();
    eventually("two is out", Duration::from_secs(20), || async {
        one.members().await.unwrap().len() == 1
    })
    .await;
    assert!(outsider.leave(Wait::No).await.unwrap());
    assert!(
        one.is_ready().await.unwrap(),
        "ready stays while a member is inside"
    );
    assert!(one.leave(LONG).await.unwrap());
    assert!(leaving.await.unwrap().unwrap());
    assert!(
        !one.is_ready().await.unwrap(),
        "the last to leave deleted ready"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancelled_enter_never_withdraws_the_next_enter_of_the_same_member() {
    for round in 0..10 {
        let path = unique(&format!("double-reenter-{round}"));
        let (a, b) = (client().await, client().await);
        let member = DoubleBarrier::new(&a, &path, 2).unwrap();
        let cancelled = {
            let member = member.clone();
            tokio::spawn(async move { member.enter(Wait::Forever).await })
        };
        eventually("the member is in", Duration::from_secs(20), || async {
            nodes(&path).await.len() == 1
        })
        .await;
        cancelled.abort();
        // At once again: its node must survive the cancelled enter's withdrawal.
        let again = {
            let member = member.clone();
            tokio::spawn(async move { member.enter(LONG).await })
        };
        let other = DoubleBarrier::new(&b, &path, 2).unwrap();
        assert!(other.enter(LONG).await.unwrap(), "round {round}");
        assert!(again.await.unwrap().unwrap(), "round {round}");
        // A withdrawal takes this member out and leaves the barrier open for the other.
        member.withdraw().await.unwrap();
        let theirs = other.node_path().rsplit('/').next().unwrap().to_string();
        let mut expected = vec!["ready".to_string(), theirs];
        expected.sort();
        assert_eq!(nodes(&path).await, expected);
        assert!(other.leave(LONG).await.unwrap());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_last_member_to_withdraw_closes_the_barrier_for_the_next_round() {
    let path = unique("double-withdraw");
    let (a, b) = (client().await, client().await);
    let one = DoubleBarrier::new(&a, &path, 2).unwrap();
    let two = DoubleBarrier::new(&b, &path, 2).unwrap();
    let (entered, other) = tokio::join!(one.enter(LONG), two.enter(LONG));
    assert!(entered.unwrap() && other.unwrap());
    one.withdraw().await.unwrap();
    assert!(two.is_ready().await.unwrap(), "a member is still inside");
    two.withdraw().await.unwrap();
    assert!(
        nodes(&path).await.is_empty(),
        "nobody inside: ready went too"
    );
    // The next round on the path needs its quorum again.
    assert!(!one.enter(Duration::from_millis(200)).await.unwrap());
}
