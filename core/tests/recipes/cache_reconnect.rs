//! A cache on a persistent watch keeps hearing changes after reconnects on the same session:
//! zookeeper-client 0.11.2 does not send persistent watches again when it reconnects (its
//! `resend_watches` never reaches `SetWatches2`), so the server forgets the watch, and a cache
//! that only reloads is deaf from then on until its session changes (found by the torture
//! suite's `cache-matches-server`).
use crate::common;

use std::time::Duration;

use common::*;
use tokio::sync::mpsc::UnboundedReceiver;
use zkrecipes::{Cache, CacheEvent};
use zookeeper_client as zk;

async fn next(events: &mut UnboundedReceiver<CacheEvent>, what: &str) -> CacheEvent {
    tokio::time::timeout(Duration::from_secs(10), events.recv())
        .await
        .unwrap_or_else(|_| panic!("{what}: no event in 10 s"))
        .expect("the stream goes on")
}

#[tokio::test(flavor = "multi_thread")]
async fn tree_and_node_caches_hear_changes_after_every_reconnect_on_the_same_session() {
    let open = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
    let zk = raw().await;
    let root = unique("cache-reconnect");
    zk.create("/test", &[], &open).await.ok();
    zk.create(&root, b"0", &open).await.unwrap();
    let (proxy, c) = behind_proxy(Duration::from_secs(20)).await;
    let session = c.session_id().unwrap();
    let tree = Cache::tree(&c, &root, None).unwrap();
    let node = Cache::node(&c, &root).unwrap();
    tree.start().await.unwrap();
    node.start().await.unwrap();
    let mut tree_events = tree.subscribe();
    let mut node_events = node.subscribe();
    let mut states = c.subscribe();
    for round in 1..=6 {
        proxy.drop_all();
        // Exactly the client's sequence, in every round (issue 47: a tree cache once told no
        // SUSPENDED for an outage and then RECONNECTED twice; the client's own states could
        // lose the disconnect when the reconnect came right after it).
        let state = |s: Result<zkrecipes::ConnectionState, _>| s.expect("client states go on");
        for expected in [
            zkrecipes::ConnectionState::Suspended,
            zkrecipes::ConnectionState::Reconnected,
        ] {
            let got = tokio::time::timeout(Duration::from_secs(10), states.recv())
                .await
                .expect("a client state within 10 s");
            assert_eq!(state(got), expected, "round {round}");
        }
        for events in [&mut tree_events, &mut node_events] {
            assert_eq!(
                next(events, "suspended").await,
                CacheEvent::Suspended,
                "round {round}"
            );
            assert_eq!(
                next(events, "reconnected").await,
                CacheEvent::Reconnected,
                "round {round}"
            );
        }
        assert_eq!(c.session_id().unwrap(), session, "the same session");
        assert!(
            watchers_of(server().port(), &root).contains(&session_hex(session)),
            "round {round}: the server has our watch again"
        );
        let child = format!("{root}/after-{round}");
        zk.create(&child, b"x", &open).await.unwrap();
        let heard = next(&mut tree_events, "the tree cache hears a create").await;
        assert_eq!(heard.name(), "CREATED", "round {round}: {heard:?}");
        assert_eq!(heard.node().unwrap().path, child);
        zk.set_data(&root, round.to_string().as_bytes(), None)
            .await
            .unwrap();
        for events in [&mut tree_events, &mut node_events] {
            let heard = next(events, "a cache hears a data change").await;
            assert_eq!(heard.name(), "CHANGED", "round {round}: {heard:?}");
            assert_eq!(heard.node().unwrap().data, round.to_string().as_bytes());
        }
    }
}
