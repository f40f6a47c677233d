//! The leader latch against a real ZooKeeper: one leader with a fencing token, hand-over on
//! close, the lifecycle's errors, a leader cut off or deleted (told, and lining up again), and
//! what a dropped latch leaves (nothing).
use crate::common;

use std::time::Duration;

use common::*;
use tokio::sync::broadcast;
use zkrecipes::{ErrorCode, LatchEvent, LeaderLatch, Wait};

const LONG: Wait = Wait::For(Duration::from_secs(20));

/// Starts `latch`, and its events from before the start on.
async fn start_following(latch: &LeaderLatch) -> broadcast::Receiver<LatchEvent> {
    let events = latch.subscribe();
    latch.start().await.unwrap();
    events
}

/// A maker of latches of id `id`, for `recipe`.
fn latch_of(id: &str) -> impl Fn(&zkrecipes::Client, &str) -> zkrecipes::Result<LeaderLatch> + '_ {
    move |c, path| LeaderLatch::new(c, path, id)
}

async fn next_event(events: &mut broadcast::Receiver<LatchEvent>) -> LatchEvent {
    tokio::time::timeout(Duration::from_secs(30), events.recv())
        .await
        .expect("an event within 30 s")
        .expect("the latch's events")
}

#[tokio::test(flavor = "multi_thread")]
async fn one_leader_and_the_next_takes_over_with_a_higher_token() {
    let path = unique("latch-handover");
    let (a, b) = (client().await, client().await);
    let first = LeaderLatch::new(&a, &path, "first").unwrap();
    let second = LeaderLatch::new(&b, &path, "second").unwrap();
    let mut first_events = first.subscribe();
    let mut second_events = second.subscribe();
    first.start().await.unwrap();
    let token = first
        .await_leadership(LONG)
        .await
        .unwrap()
        .expect("alone: leads");
    assert_eq!(first.fencing_token(), Some(token));
    assert_eq!(
        next_event(&mut first_events).await,
        LatchEvent::IsLeader {
            fencing_token: token
        }
    );
    second.start().await.unwrap();
    assert!(!second.has_leadership());
    assert_eq!(second.await_leadership(Wait::No).await.unwrap(), None);
    assert_eq!(
        second
            .await_leadership(Duration::from_millis(100))
            .await
            .unwrap(),
        None
    );
    let participants = second.participants().await.unwrap();
    let ids: Vec<(&str, bool)> = participants
        .iter()
        .map(|p| (p.id.as_str(), p.is_leader))
        .collect();
    assert_eq!(ids, [("first", true), ("second", false)]);
    assert!(participants[0].node.contains("-latch-"), "Curator's names");
    assert_eq!(second.leader().await.unwrap().unwrap().id, "first");

    first.close().await.unwrap();
    assert!(!first.has_leadership());
    assert_eq!(
        next_event(&mut first_events).await,
        LatchEvent::NotLeader { reason: None }
    );
    let next = second
        .await_leadership(LONG)
        .await
        .unwrap()
        .expect("the next");
    assert!(
        next > token,
        "fencing tokens increase: {next} after {token}"
    );
    assert_eq!(next_event(&mut second_events).await.name(), "IS_LEADER");
    second.close().await.unwrap();
    assert_eq!(
        children(server().connect_string(), &path).await,
        Vec::<String>::new()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_lifecycle_answers_with_typed_errors() {
    let (path, c, latch) = recipe("latch-lifecycle", latch_of("me")).await;
    let err = latch.await_leadership(Wait::No).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument, "{err}");
    assert!(err.message().contains("start"), "{err}");
    // Two callers: the second returns once the first one's join put the node in line.
    let (first, second) = (latch.start(), latch.start());
    second.await.unwrap();
    assert_eq!(
        children(server().connect_string(), &path).await.len(),
        1,
        "in line when the second start returned"
    );
    first.await.unwrap();
    latch.start().await.unwrap();
    assert!(latch.is_started());
    assert_eq!(
        children(server().connect_string(), &path).await.len(),
        1,
        "one node for two starts"
    );
    latch.close().await.unwrap();
    latch.close().await.unwrap();
    assert!(latch.is_closed());
    let err = latch.start().await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Closed, "{err}");
    let err = latch.await_leadership(LONG).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Closed, "{err}");
    for bad in ["", "no-slash", "/trailing/"] {
        let err = LeaderLatch::new(&c, bad, "me").err().expect("a bad path");
        assert_eq!(err.code(), ErrorCode::InvalidPath, "{bad:?}: {err}");
    }
    let err = LeaderLatch::new(&c, &path, &"x".repeat(2 << 20))
        .err()
        .unwrap();
    assert_eq!(err.code(), ErrorCode::InvalidArgument, "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_waiter_closed_while_waiting_and_a_dropped_latch_leave_nothing() {
    let path = unique("latch-withdraw");
    let (a, b) = (client().await, client().await);
    let leader = LeaderLatch::new(&a, &path, "leader").unwrap();
    leader.start().await.unwrap();
    let waiter = LeaderLatch::new(&b, &path, "waiter").unwrap();
    waiter.start().await.unwrap();
    // A waiter blocked in await_leadership hears the close as CLOSED.
    let blocked = {
        let waiter = waiter.clone();
        tokio::spawn(async move { waiter.await_leadership(Wait::Forever).await })
    };
    waiter.close().await.unwrap();
    let err = blocked.await.unwrap().unwrap_err();
    assert_eq!(err.code(), ErrorCode::Closed, "{err}");
    assert!(
        err.message().contains("latch was closed"),
        "not the client: {err}"
    );
    assert_eq!(children(server().connect_string(), &path).await.len(), 1);
    let dropped = LeaderLatch::new(&b, &path, "dropped").unwrap();
    dropped.start().await.unwrap();
    assert_eq!(children(server().connect_string(), &path).await.len(), 2);
    drop(dropped);
    eventually(
        "the dropped latch's node is withdrawn",
        Duration::from_secs(20),
        || async { children(server().connect_string(), &path).await.len() == 1 },
    )
    .await;
    leader.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deleted_leader_node_ends_the_leadership_and_the_latch_lines_up_again() {
    let (_path, _c, latch) = recipe("latch-deleted", latch_of("me")).await;
    let mut events = start_following(&latch).await;
    let first = latch.await_leadership(LONG).await.unwrap().unwrap();
    assert_eq!(next_event(&mut events).await.name(), "IS_LEADER");
    let node = latch.node_path().unwrap();
    raw().await.delete(&node, None).await.unwrap();
    let lost = next_event(&mut events).await;
    assert_eq!(lost.name(), "NOT_LEADER");
    let reason = lost.reason().expect("a reason");
    assert!(reason.contains(&node), "names the node: {reason}");
    // Alone again on a new node: leads again, with a new token.
    match next_event(&mut events).await {
        LatchEvent::IsLeader { fencing_token } => assert!(fencing_token > first),
        other => panic!("expected IS_LEADER, got {other:?}"),
    }
    assert_ne!(latch.node_path().unwrap(), node);
    latch.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_leader_cut_off_past_its_session_is_told_and_never_leads_beside_the_next() {
    let (proxy, cut) = behind_proxy(Duration::from_secs(2)).await;
    let path = unique("latch-cut");
    let latch = LeaderLatch::new(&cut, &path, "cut").unwrap();
    let mut events = start_following(&latch).await;
    latch.await_leadership(LONG).await.unwrap().unwrap();
    assert_eq!(next_event(&mut events).await.name(), "IS_LEADER");
    let session = cut.session_id().unwrap();
    let other_client = client().await;
    let other = LeaderLatch::new(&other_client, &path, "other").unwrap();
    other.start().await.unwrap();
    proxy.set_blackhole(true);
    assert_eq!(next_event(&mut events).await, LatchEvent::Suspended);
    let lost = next_event(&mut events).await;
    assert_eq!(lost.name(), "NOT_LEADER", "{lost:?}");
    assert!(!latch.has_leadership());
    // The other leads only once the server expired the cut session: never both at once. (Next
    // in line, it leads on the cut node's delete, which the server makes as it closes that
    // session; the session may leave the server's list a moment later.)
    let token = other
        .await_leadership(LONG)
        .await
        .unwrap()
        .expect("the next leader");
    eventually(
        "the cut session is gone",
        Duration::from_secs(5),
        || async { !has_session(server().port(), session) },
    )
    .await;
    assert!(!latch.has_leadership());
    proxy.set_blackhole(false);
    // The cut latch lines up again on its client's next session, behind the leader.
    eventually(
        "the cut latch is back in line",
        Duration::from_secs(30),
        || async { latch_ids(&other).await == ["other", "cut"] },
    )
    .await;
    assert!(!latch.has_leadership());
    assert_eq!(other.fencing_token(), Some(token));
    other.close().await.unwrap();
    latch
        .await_leadership(LONG)
        .await
        .unwrap()
        .expect("leads after the other left");
    latch.close().await.unwrap();
}
