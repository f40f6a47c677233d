use crate::common;

use std::time::Duration;

use common::*;
use tokio::sync::broadcast;
use zkrecipes::{ElectionEvent, ErrorCode, LeaderElectionSupport};

async fn next_names(
    events: &mut broadcast::Receiver<ElectionEvent>,
    n: usize,
) -> Vec<&'static str> {
    let mut names = Vec::new();
    for _ in 0..n {
        let event = tokio::time::timeout(Duration::from_secs(20), events.recv())
            .await
            .expect("event in time")
            .unwrap();
        names.push(event.name());
    }
    names
}

const LEADER_START: [&str; 7] = [
    "START",
    "OFFER_START",
    "OFFER_COMPLETE",
    "DETERMINE_START",
    "DETERMINE_COMPLETE",
    "ELECTED_START",
    "ELECTED_COMPLETE",
];
const FOLLOWER_START: [&str; 7] = [
    "START",
    "OFFER_START",
    "OFFER_COMPLETE",
    "DETERMINE_START",
    "DETERMINE_COMPLETE",
    "READY_START",
    "READY_COMPLETE",
];

/// What a follower says when the leader before it stops and it leads.
const ELECTED_NEXT: [&str; 4] = [
    "DETERMINE_START",
    "DETERMINE_COMPLETE",
    "ELECTED_START",
    "ELECTED_COMPLETE",
];

/// Whether `member` leads within 5 s.
async fn leads_within_5s(member: &LeaderElectionSupport) -> bool {
    let wait = Some(Duration::from_secs(5));
    member.await_leadership(wait).await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn three_members_elect_one_leader_with_apache_event_order_and_hand_over_on_stop() {
    let root = unique("election");
    let clients = [client().await, client().await, client().await];
    let members: Vec<_> = clients
        .iter()
        .enumerate()
        .map(|(i, c)| LeaderElectionSupport::new(c, &root, &format!("host-{i}")).unwrap())
        .collect();
    let mut events: Vec<_> = members.iter().map(|m| m.subscribe()).collect();
    for m in &members {
        m.start().await.unwrap();
    }
    assert_eq!(next_names(&mut events[0], 7).await, LEADER_START);
    assert_eq!(next_names(&mut events[1], 7).await, FOLLOWER_START);
    assert_eq!(next_names(&mut events[2], 7).await, FOLLOWER_START);
    assert_eq!(members.iter().filter(|m| m.is_leader()).count(), 1);
    assert!(members[0].is_leader());
    assert_eq!(
        members[2].leader_host_name().await.unwrap().as_deref(),
        Some("host-0")
    );
    assert!(!members[1]
        .await_leadership(Some(Duration::from_millis(200)))
        .await
        .unwrap());

    members[0].stop().await.unwrap();
    assert_eq!(
        next_names(&mut events[0], 2).await,
        ["STOP_START", "STOP_COMPLETE"]
    );
    assert!(leads_within_5s(&members[1]).await);
    assert_eq!(next_names(&mut events[1], 4).await, ELECTED_NEXT);
    assert_eq!(members.iter().filter(|m| m.is_leader()).count(), 1);
    assert_eq!(
        members[2].leader_host_name().await.unwrap().as_deref(),
        Some("host-1")
    );

    members[1].stop().await.unwrap();
    assert!(leads_within_5s(&members[2]).await);
    // The third member's predecessor did not change when the first leader stopped: no herd.
    // Whatever it said since its READY (however late) is queued before its leadership's events,
    // so the next four are exactly those of the second leader's stop.
    assert_eq!(
        next_names(&mut events[2], 4).await,
        ELECTED_NEXT,
        "the third member reacted to a change that was not its predecessor's"
    );
    members[2].stop().await.unwrap();
    assert!(children(server().connect_string(), &root).await.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn leader_that_loses_its_session_is_told_and_offers_again() {
    let root = unique("election-loss");
    let (proxy, fragile) = behind_proxy(Duration::from_secs(2)).await;
    let steady = client().await;
    let first = LeaderElectionSupport::new(&fragile, &root, "fragile").unwrap();
    let second = LeaderElectionSupport::new(&steady, &root, "steady").unwrap();
    let mut first_events = first.subscribe();
    first.start().await.unwrap();
    second.start().await.unwrap();
    assert_eq!(next_names(&mut first_events, 7).await, LEADER_START);
    proxy.set_blackhole(true);
    // The server expires the fragile session; the other member takes over.
    assert!(second
        .await_leadership(Some(Duration::from_secs(15)))
        .await
        .unwrap());
    proxy.set_blackhole(false);
    // Told at once that it may no longer lead, then that it does not.
    let suspended = next_within(&mut first_events, Duration::from_secs(20)).await;
    assert_eq!(suspended, ElectionEvent::Suspended);
    let failed = next_within(&mut first_events, Duration::from_secs(20)).await;
    assert!(matches!(failed, ElectionEvent::Failed(_)), "{failed:?}");
    assert!(!first.is_leader());
    // On its new session it offers itself again and follows.
    assert_eq!(
        next_names(&mut first_events, 6).await,
        [
            "OFFER_START",
            "OFFER_COMPLETE",
            "DETERMINE_START",
            "DETERMINE_COMPLETE",
            "READY_START",
            "READY_COMPLETE"
        ]
    );
    assert_eq!(
        first.leader_host_name().await.unwrap().as_deref(),
        Some("steady")
    );
    second.stop().await.unwrap();
    assert!(leads_within_5s(&first).await);
    first.stop().await.unwrap();
    fragile.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn foreign_children_do_not_disturb_an_election() {
    let (root, _raw) = foreign_dir("election-foreign", &[("aaa-0000000000", b"")]).await;
    let c = client().await;
    let member = LeaderElectionSupport::new(&c, &root, "solo").unwrap();
    member.start().await.unwrap();
    assert!(member.is_leader());
    assert_eq!(
        member.leader_host_name().await.unwrap().as_deref(),
        Some("solo")
    );
    member.stop().await.unwrap();
}

/// Closing the client is a deliberate shutdown: a started member reports
/// `STOP_START, STOP_COMPLETE` (as a `stop` would), never `FAILED(CLOSED)`.
#[tokio::test(flavor = "multi_thread")]
async fn closing_the_client_stops_a_started_member_without_a_failure() {
    let (_root, c, member) = recipe("close-stops", election_member("m")).await;
    let mut events = member.subscribe();
    member.start().await.unwrap();
    assert!(member.is_leader());
    c.close().await;
    let mut names = Vec::new();
    while let Ok(Ok(event)) = tokio::time::timeout(Duration::from_secs(2), events.recv()).await {
        names.push(event.name());
        if event.name() == "STOP_COMPLETE" {
            break;
        }
    }
    assert_eq!(
        names[names.len() - 2..],
        ["STOP_START", "STOP_COMPLETE"],
        "{names:?}"
    );
    assert!(!names.contains(&"FAILED"), "{names:?}");
    assert!(!member.is_leader());
    // Stopped for good: stop answers at once, start reports the closed client.
    member.stop().await.unwrap();
    assert_eq!(member.start().await.unwrap_err().code(), ErrorCode::Closed);
}
