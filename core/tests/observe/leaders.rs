//! The latch's and the election's waits and terms, and what a session's expiry takes along.

use super::*;
use zkrecipes::{
    ConnectionState, GroupMember, LeaderElectionSupport, LeaderLatch, NodeMode, PersistentNode,
    WorkQueue,
};

/// Starts `latch` and waits until it leads.
async fn leads(latch: &LeaderLatch) {
    latch.start().await.unwrap();
    let led = latch
        .await_leadership(Duration::from_secs(10))
        .await
        .unwrap();
    assert!(led.is_some());
}

#[tokio::test]
async fn a_latch_counts_its_wait_and_its_term() {
    let records = captured();
    let (path, client, latch) = recipe("observe-latch", |c, p| LeaderLatch::new(c, p, "a")).await;
    leads(&latch).await;
    let at = ("path", path.as_str());
    let leading = client.metrics();
    assert_eq!(leading.gauge("zkrecipes.latch.leaders", &[at]), 1);
    let waits = leading.histogram(
        "zkrecipes.latch.wait.duration",
        &[at, ("outcome", "leader")],
    );
    assert_eq!(waits.unwrap().count, 1);
    latch.close().await.unwrap();

    let closed = client.metrics();
    assert_eq!(closed.gauge("zkrecipes.latch.leaders", &[at]), 0);
    let terms = closed.histogram("zkrecipes.latch.leadership.duration", &[at]);
    assert_eq!(terms.unwrap().count, 1);
    assert_eq!(closed.counter("zkrecipes.latch.lost", &[at]), 0);
    let told = logged(&records, "zkrecipes.latch", &path);
    let at_info: Vec<_> = told
        .iter()
        .filter(|r| r.level == LogLevel::Info)
        .map(|r| r.message.as_str())
        .collect();
    assert!(
        at_info.iter().any(|m| m.contains("leader after")),
        "{told:?}"
    );
    assert!(
        at_info.iter().any(|m| m.contains("stepped down")),
        "{told:?}"
    );
}

#[tokio::test]
async fn an_election_counts_waits_and_terms() {
    let (path, [(leader_client, leader), (follower_client, follower)]) =
        recipes::<LeaderElectionSupport, 2>("observe-election", election_member("host")).await;
    leader.start().await.unwrap();
    assert!(leader
        .await_leadership(Duration::from_secs(10))
        .await
        .unwrap());
    follower.start().await.unwrap();
    let at = ("path", path.as_str());
    assert_eq!(
        leader_client
            .metrics()
            .gauge("zkrecipes.election.leaders", &[at]),
        1
    );
    follower.stop().await.unwrap();
    leader.stop().await.unwrap();

    // A stop aborts the member's task, which records as it goes.
    eventually("the leader's term ends", Duration::from_secs(10), || {
        let terms = leader_client
            .metrics()
            .histogram("zkrecipes.election.leadership.duration", &[at]);
        async move { terms.is_some_and(|t| t.count == 1) }
    })
    .await;
    let seen = leader_client.metrics();
    assert_eq!(seen.gauge("zkrecipes.election.leaders", &[at]), 0);
    assert_eq!(seen.counter("zkrecipes.election.lost", &[at]), 0);
    let waits = seen.histogram(
        "zkrecipes.election.wait.duration",
        &[at, ("outcome", "leader")],
    );
    assert_eq!(waits.unwrap().count, 1);
    eventually("the follower's wait ends", Duration::from_secs(10), || {
        let waits = follower_client.metrics().histogram(
            "zkrecipes.election.wait.duration",
            &[at, ("outcome", "cancelled")],
        );
        async move { waits.is_some_and(|w| w.count == 1) }
    })
    .await;
    assert_eq!(
        follower_client
            .metrics()
            .gauge("zkrecipes.election.leaders", &[at]),
        0
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_expired_session_is_counted_once_with_what_it_took() {
    let records = captured();
    let (proxy, client) = behind_proxy(Duration::from_secs(2)).await;
    let latch_path = unique("observe-expiry-latch");
    let latch = LeaderLatch::new(&client, &latch_path, "a").unwrap();
    leads(&latch).await;
    let work_path = unique("observe-expiry-work");
    let work = WorkQueue::new(&client, &work_path).unwrap();
    work.offer(b"job").await.unwrap();
    let delivery = work.consume(Duration::from_secs(10)).await.unwrap();
    let delivery = delivery.expect("the job");
    let group = unique("observe-expiry-group");
    let member = GroupMember::new(&client, &group, "m", vec![]).unwrap();
    member.start().await.unwrap();
    let node_path = unique("observe-expiry-node");
    let node = PersistentNode::new(&client, &node_path, NodeMode::Ephemeral, vec![]).unwrap();
    node.start().await.unwrap();

    let mut states = client.subscribe();
    let session = client.session_id().unwrap();
    proxy.set_blackhole(true);
    until_expired(server().port(), session).await;
    proxy.set_blackhole(false);
    until_told(&mut states, ConnectionState::Lost).await;
    until_told(&mut states, ConnectionState::Reconnected).await;

    let seen = client.metrics();
    assert_eq!(
        seen.counter("zkrecipes.session.state_changes", &[("to", "lost")]),
        1
    );
    // The delivery is settled lost with its session, before its worker touches it again.
    let at_work = ("path", work_path.as_str());
    eventually(
        "the delivery settled lost with its session",
        Duration::from_secs(15),
        || {
            let seen = client.metrics();
            let settled = seen.gauge("zkrecipes.work_queue.in_flight", &[at_work]) == 0
                && seen.counter(
                    "zkrecipes.work_queue.settled",
                    &[at_work, ("outcome", "lost")],
                ) == 1;
            async move { settled }
        },
    )
    .await;
    // The claim went with the session: the ack does not take effect, and counts nothing more.
    assert!(delivery.ack().await.is_err());
    let seen = client.metrics();
    assert_eq!(
        seen.counter(
            "zkrecipes.work_queue.settled",
            &[at_work, ("outcome", "lost")]
        ),
        1
    );
    assert_eq!(seen.gauge("zkrecipes.work_queue.in_flight", &[at_work]), 0);
    // The member and the node come back by themselves, counted as made again.
    let member_path = format!("{group}/m");
    eventually(
        "the member and the node are made again",
        Duration::from_secs(15),
        || {
            let seen = client.metrics();
            let again = |path: &str, kind: &str| {
                seen.counter(
                    "zkrecipes.node.recreations",
                    &[("path", path), ("kind", kind)],
                )
            };
            let both = again(&member_path, "group_member") == 1
                && again(&node_path, "persistent_node") == 1;
            async move { both }
        },
    )
    .await;
    // The latch lost its leadership once, and leads again on the new session.
    let at_latch = ("path", latch_path.as_str());
    eventually("the latch's term is lost", Duration::from_secs(15), || {
        let lost = client
            .metrics()
            .counter("zkrecipes.latch.lost", &[at_latch]);
        async move { lost == 1 }
    })
    .await;
    let led = latch
        .await_leadership(Duration::from_secs(15))
        .await
        .unwrap();
    assert!(led.is_some());
    let seen = client.metrics();
    assert_eq!(seen.counter("zkrecipes.latch.lost", &[at_latch]), 1);
    assert_eq!(seen.gauge("zkrecipes.latch.leaders", &[at_latch]), 1);
    let terms = seen.histogram("zkrecipes.latch.leadership.duration", &[at_latch]);
    assert_eq!(terms.unwrap().count, 1);
    latch.close().await.unwrap();
    member.close().await.unwrap();
    node.close().await.unwrap();

    let warned = |logger, path: &str, text: &str| {
        logged(&records, logger, path)
            .iter()
            .any(|r| r.level == LogLevel::Warn && r.message.contains(text))
    };
    assert!(warned("zkrecipes.latch", &latch_path, "LOST"));
    assert!(warned("zkrecipes.work_queue", &work_path, "LOST"));
    let remade = logged(&records, "zkrecipes.group", &member_path);
    assert!(
        remade
            .iter()
            .any(|r| r.level == LogLevel::Info && r.message.contains("made again")),
        "{remade:?}"
    );
}
