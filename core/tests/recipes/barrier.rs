//! The barrier and the double barrier against a real ZooKeeper: waiters released by the
//! removal (also one made while they were disconnected), the quorum for entering, withdrawn
//! members after a timeout or a cancel, leaving together.
use crate::common;

use std::time::Duration;

use common::*;
use zkrecipes::{Barrier, ConnectionState, DoubleBarrier, ErrorCode, Wait};

const LONG: Wait = Wait::For(Duration::from_secs(20));

#[tokio::test(flavor = "multi_thread")]
async fn a_barrier_holds_waiters_until_removed() {
    let (path, [(a, ours), (_b, theirs)]) = recipes("barrier", Barrier::new).await;
    // Down: a wait passes at once, also a check.
    assert!(!ours.is_set().await.unwrap());
    assert!(ours.wait(Wait::No).await.unwrap());
    ours.set().await.unwrap();
    ours.set().await.unwrap();
    assert!(ours.is_set().await.unwrap());
    assert!(!theirs.wait(Wait::No).await.unwrap());
    assert!(!theirs.wait(Duration::from_millis(100)).await.unwrap());
    let waiter = spawn_on(&theirs, |theirs| async move { theirs.wait(LONG).await });
    until_watched("the waiter watches", &path).await;
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
    let (path, _setter, barrier) = recipe("barrier-cut", Barrier::new).await;
    barrier.set().await.unwrap();
    let (proxy, cut) = behind_proxy(Duration::from_secs(20)).await;
    let waiting = Barrier::new(&cut, &path).unwrap();
    let mut states = cut.subscribe();
    let waiter =
        tokio::spawn(async move { waiting.wait(Wait::For(Duration::from_secs(60))).await });
    until_watched("the waiter watches", &path).await;
    proxy.set_blackhole(true);
    proxy.drop_all();
    until_told(&mut states, ConnectionState::Suspended).await;
    barrier.remove().await.unwrap();
    proxy.set_blackhole(false);
    let released = "released well before its 60 s timeout";
    assert!(joined(waiter, Duration::from_secs(30), released)
        .await
        .unwrap());
}

/// A maker of double-barrier members for `count` members, for `recipes`.
fn members_of(count: u32) -> impl Fn(&zkrecipes::Client, &str) -> zkrecipes::Result<DoubleBarrier> {
    move |c, path| DoubleBarrier::new(c, path, count)
}

/// Member nodes on the server (`ready` included).
async fn nodes(path: &str) -> Vec<String> {
    let mut nodes = children(server().connect_string(), path).await;
    nodes.sort();
    nodes
}

#[tokio::test(flavor = "multi_thread")]
async fn members_enter_only_together_and_leave_together() {
    let (path, members) = recipes::<_, 3>("double", members_of(3)).await;
    let members = members.map(|(_, member)| member);
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
    let waiting = spawn_on(
        &dying,
        |dying| async move { dying.enter(Wait::Forever).await },
    );
    until_child_count("the member is in", &path, 1, Duration::from_secs(20)).await;
    b.close().await;
    let err = waiting.await.unwrap().unwrap_err();
    assert_eq!(err.code(), ErrorCode::Closed, "{err}");
    until_child_count(
        "its node went with the session",
        &path,
        0,
        Duration::from_secs(20),
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
    let cancelled = spawn_on(&ours, |ours| async move { ours.enter(Wait::Forever).await });
    until_child_count("the member is in", &path, 1, Duration::from_secs(20)).await;
    cancelled.abort();
    until_child_count(
        "the cancelled member withdrew",
        &path,
        0,
        Duration::from_secs(20),
    )
    .await;
    for bad in [0u32, u32::MAX] {
        let err = DoubleBarrier::new(&a, &path, bad).err().unwrap();
        assert_eq!(err.code(), ErrorCode::InvalidArgument, "{err}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn two_callers_on_one_member_take_turns_and_a_timed_out_one_withdraws_nothing_of_the_other() {
    let (path, [(_a, shared), (_b, other)]) = recipes("double-shared", members_of(2)).await;
    let first = spawn_on(&shared, |shared| async move { shared.enter(LONG).await });
    until_child_count("the member is in", &path, 1, Duration::from_secs(20)).await;
    // The second caller's turn never comes within its deadline: it answers false and leaves
    // the first caller's node in place.
    assert!(!shared.enter(Duration::from_millis(200)).await.unwrap());
    assert_eq!(nodes(&path).await.len(), 1);
    assert!(other.enter(LONG).await.unwrap());
    assert!(first.await.unwrap().unwrap());
    let (left, other_left) = tokio::join!(shared.leave(LONG), other.leave(LONG));
    assert!(left.unwrap() && other_left.unwrap());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_leave_by_an_outsider_never_closes_the_barrier_on_a_member_inside() {
    let (_path, [(_a, first), (_b, second), (_c, outsider)]) =
        recipes("double-outsider", members_of(2)).await;
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
    let leaving = spawn_on(&two, |two| async move { two.leave(LONG).await });
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
        let (path, [(_a, member), (_b, other)]) =
            recipes(&format!("double-reenter-{round}"), members_of(2)).await;
        let cancelled = {
            let member = member.clone();
            tokio::spawn(async move { member.enter(Wait::Forever).await })
        };
        until_child_count("the member is in", &path, 1, Duration::from_secs(20)).await;
        cancelled.abort();
        // At once again: its node must survive the cancelled enter's withdrawal.
        let again = {
            let member = member.clone();
            tokio::spawn(async move { member.enter(LONG).await })
        };
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
    let (path, [(_a, one), (_b, two)]) = recipes("double-withdraw", members_of(2)).await;
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

#[tokio::test(flavor = "multi_thread")]
async fn a_ready_left_by_a_gone_round_never_opens_the_next_round_without_its_quorum() {
    let (path, [(_a, one), (_b, two)]) = recipes("double-gone-round", members_of(2)).await;
    // What a round leaves when its last member's session ends while it leaves: `ready`, and
    // nobody inside to delete it.
    let zk = raw().await;
    let ready = format!("{path}/ready");
    zk.mkdir(&ready, &open_persistent()).await.unwrap();
    assert!(
        !one.enter(Duration::from_millis(300)).await.unwrap(),
        "alone past a gone round's ready"
    );
    assert!(
        nodes(&path).await.is_empty(),
        "the timed-out member withdrew, and as the last one inside took the gone round's ready"
    );
    zk.create(&ready, &[], &open_persistent()).await.unwrap();
    // The quorum opens it again: whichever enters first is woken by the second's opening.
    let (first, second) = tokio::join!(one.enter(LONG), two.enter(LONG));
    assert!(first.unwrap() && second.unwrap());
    let (first, second) = tokio::join!(one.leave(LONG), two.leave(LONG));
    assert!(first.unwrap() && second.unwrap());
    eventually("nothing left", Duration::from_secs(20), || async {
        nodes(&path).await.is_empty()
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_member_entering_while_the_round_is_inside_passes_on_its_ready() {
    let (_path, [(_a, one), (_b, two), (_c, late)]) = recipes("double-late", members_of(2)).await;
    let (first, second) = tokio::join!(one.enter(LONG), two.enter(LONG));
    assert!(first.unwrap() && second.unwrap());
    // Curator's rule, kept: `ready` is there and the round that opened it is inside.
    assert!(late.enter(Duration::from_secs(5)).await.unwrap());
    let (a, b, c) = tokio::join!(one.leave(LONG), two.leave(LONG), late.leave(LONG));
    assert!(a.unwrap() && b.unwrap() && c.unwrap());
}

/// A leave or a withdrawal cut short after it forgot our member, before the server confirmed
/// the delete (lost with the connection) or before `ready` went, left a ghost member or a
/// `ready` nobody deleted. Leaves and failed enters cut short anywhere leave nothing.
#[tokio::test(flavor = "multi_thread")]
async fn leaves_and_withdrawals_cut_short_anywhere_leave_no_member() {
    use zk_harness::{Cut, Request, Then};
    let (proxy, c) = behind_proxy(Duration::from_secs(20)).await;
    let (alone, pair) = (unique("double-leave-cut"), unique("double-withdraw-cut"));
    for round in 0u64..300 {
        let cut = Duration::from_micros(round * 397 % 30_000);
        // One member of one: in, then a leave cut short.
        let member = DoubleBarrier::new(&c, &alone, 1).unwrap();
        assert!(member.enter(LONG).await.unwrap());
        proxy.cut_at_request(Request::Delete, Cut::Before, Then::Reconnect);
        let _ = tokio::time::timeout(cut, member.leave(LONG)).await;
        proxy.disarm_cut();
        // One member of two: an enter that gives up, its withdrawal cut short.
        let member = DoubleBarrier::new(&c, &pair, 2).unwrap();
        proxy.cut_at_request(Request::Delete, Cut::Before, Then::Reconnect);
        let _ = tokio::time::timeout(cut, member.enter(Wait::No)).await;
        proxy.disarm_cut();
    }
    eventually("no member, no ready", Duration::from_secs(20), || async {
        nodes(&alone).await.is_empty() && nodes(&pair).await.is_empty()
    })
    .await;
}
