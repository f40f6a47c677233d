//! A real 3-node ensemble: the lock and the queue survive the loss of the
//! ZooKeeper leader, and the restarted member rejoins.
mod common;

use std::time::Duration;

use common::*;
use zk_harness::Ensemble;
use zkrecipes::{DistributedQueue, LockEvent, WriteLock};

#[tokio::test(flavor = "multi_thread")]
async fn lock_and_queue_survive_killing_the_zookeeper_leader() {
    let mut ensemble = Ensemble::start(3);
    let connect = ensemble.connect_string();
    let a = client_at(&connect, Duration::from_secs(10)).await;
    let b = client_at(&connect, Duration::from_secs(10)).await;
    let holder = WriteLock::new(&a, "/ens/lock").unwrap();
    let waiter = WriteLock::new(&b, "/ens/lock").unwrap();
    let queue = DistributedQueue::new(&a, "/ens/queue").unwrap();
    for i in 0..20 {
        queue.offer(format!("{i}").as_bytes()).await.unwrap();
    }
    let mut events = holder.subscribe();
    let guard = holder.acquire().await.unwrap();
    let _ = events.recv().await;
    let leader = ensemble.leader().expect("a quorum leader");
    ensemble.kill(leader);
    // The sessions move to the survivors; the holder keeps its lock.
    assert!(waiter
        .acquire_timeout(Duration::from_secs(3))
        .await
        .unwrap()
        .is_none());
    assert!(holder.is_held());
    // Losing the quorum leader drops every client connection (the followers stop serving
    // until a new leader is elected): the holder is told SUSPENDED, then RECONNECTED, and
    // never LOST: the session survived.
    let seen = until_reconnected(&mut events).await;
    assert!(
        !seen.iter().any(|e| matches!(e, LockEvent::Lost { .. })),
        "{seen:?}"
    );
    assert!(seen.contains(&LockEvent::Suspended), "{seen:?}");
    for i in 0..20 {
        assert_eq!(
            queue.poll().await.unwrap().unwrap(),
            format!("{i}").as_bytes()
        );
    }
    ensemble.restart(leader);
    let token = guard.fencing_token();
    guard.release().await.unwrap();
    let next = waiter
        .acquire_timeout(Duration::from_secs(20))
        .await
        .unwrap()
        .expect("waiter acquires");
    assert!(
        next.fencing_token() > token,
        "fencing tokens increase across a leader change"
    );
    assert!(!matches!(events.try_recv(), Ok(LockEvent::Lost { .. })));
    next.release().await.unwrap();
}

/// The same over TLS (client certificate and x509 identity, creator ACLs): the
/// holder's session moves to a survivor by a new TLS handshake and keeps its lock.
#[tokio::test(flavor = "multi_thread")]
async fn a_tls_lock_holder_survives_losing_the_zookeeper_leader() {
    let certs_dir =
        std::env::temp_dir().join(format!("zkrecipes-ens-certs-{}", std::process::id()));
    let certs = zk_harness::secure::Certs::generate(&certs_dir);
    let mut ensemble = Ensemble::start_tls(3, &certs);
    let tls = zkrecipes::Tls::new(certs.path("ca.pem"))
        .identity(certs.path("client.pem"), certs.path("client-key.pem"));
    let options = zkrecipes::ClientOptions {
        tls: Some(tls),
        ..options(Duration::from_secs(10))
    };
    let connect = ensemble.tls_connect_string();
    let a = zkrecipes::Client::connect(&connect, options.clone())
        .await
        .unwrap();
    let b = zkrecipes::Client::connect(&connect, options).await.unwrap();
    assert!(a.is_tls());
    let holder = WriteLock::new(&a, "/ens-tls/lock").unwrap();
    let waiter = WriteLock::new(&b, "/ens-tls/lock").unwrap();
    let mut events = holder.subscribe();
    let guard = holder.acquire().await.unwrap();
    let _ = events.recv().await;
    let session = a.session_id().unwrap();
    ensemble.kill(ensemble.leader().expect("a quorum leader"));
    let seen = until_reconnected(&mut events).await;
    assert!(
        !seen.iter().any(|e| matches!(e, LockEvent::Lost { .. })),
        "{seen:?}"
    );
    assert_eq!(
        a.session_id().unwrap(),
        session,
        "the same session, over a new TLS connection"
    );
    assert!(holder.is_held());
    assert!(waiter
        .acquire_timeout(Duration::from_secs(2))
        .await
        .unwrap()
        .is_none());
    guard.release().await.unwrap();
    waiter
        .acquire_timeout(Duration::from_secs(20))
        .await
        .unwrap()
        .expect("the waiter gets it after the release")
        .release()
        .await
        .unwrap();
    let _ = std::fs::remove_dir_all(certs_dir);
}

/// A holder's events up to and including `RECONNECTED` (within 30 s).
async fn until_reconnected(
    events: &mut tokio::sync::broadcast::Receiver<LockEvent>,
) -> Vec<LockEvent> {
    let mut seen = Vec::new();
    while seen.last() != Some(&LockEvent::Reconnected) {
        let event = tokio::time::timeout(Duration::from_secs(30), events.recv())
            .await
            .unwrap_or_else(|_| panic!("no RECONNECTED within 30 s: {seen:?}"))
            .unwrap();
        seen.push(event);
    }
    seen
}
