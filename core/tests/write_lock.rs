mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use zk_harness::{FaultProxy, ZkServer};
use zkrecipes::{ConnectionState, ErrorCode, LockEvent, Owner, Wait, WriteLock};

#[tokio::test(flavor = "multi_thread")]
async fn twenty_contenders_never_overlap_and_tokens_strictly_increase() {
    let dir = unique("lock-20");
    let clients = [
        client().await,
        client().await,
        client().await,
        client().await,
    ];
    let inside = Arc::new(AtomicBool::new(false));
    let tokens = Arc::new(Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for i in 0..20 {
        let lock = WriteLock::new(&clients[i % clients.len()], &dir).unwrap();
        let (inside, tokens) = (inside.clone(), tokens.clone());
        tasks.push(tokio::spawn(async move {
            for _ in 0..3 {
                let guard = lock.acquire().await.unwrap();
                assert!(!inside.swap(true, Ordering::SeqCst), "two holders at once");
                tokens.lock().unwrap().push(guard.fencing_token());
                tokio::time::sleep(Duration::from_millis(2)).await;
                inside.store(false, Ordering::SeqCst);
                guard.release().await.unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let tokens = tokens.lock().unwrap().clone();
    assert_eq!(tokens.len(), 60);
    assert!(
        tokens.windows(2).all(|w| w[0] < w[1]),
        "fencing tokens must strictly increase: {tokens:?}"
    );
    assert!(
        children(server().connect_string(), &dir).await.is_empty(),
        "no node may remain"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn uncontended_cycle_costs_three_requests() {
    // A private server: nobody else's packets in its counters.
    let server = ZkServer::start_local();
    let client = client_at(server.connect_string(), Duration::from_secs(30)).await;
    let lock = WriteLock::new(&client, "/bench/lock").unwrap();
    lock.acquire().await.unwrap().release().await.unwrap(); // creates the directory
    let cycles = 200;
    let before = server.packets_received();
    for _ in 0..cycles {
        lock.acquire().await.unwrap().release().await.unwrap();
    }
    let per_cycle = (server.packets_received() - before) as f64 / cycles as f64;
    println!("requests per uncontended acquire+release: {per_cycle:.3}");
    assert!(
        (2.95..=3.05).contains(&per_cycle),
        "create + list + delete expected, measured {per_cycle}"
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn try_acquire_on_held_lock_costs_one_request_and_leaves_nothing() {
    let server = ZkServer::start_local();
    let holder_client = client_at(server.connect_string(), Duration::from_secs(30)).await;
    let other_client = client_at(server.connect_string(), Duration::from_secs(30)).await;
    let holder = WriteLock::new(&holder_client, "/t/held").unwrap();
    let other = WriteLock::new(&other_client, "/t/held").unwrap();
    let guard = holder.acquire().await.unwrap();
    let before = server.packets_received();
    for _ in 0..50 {
        assert!(other.try_acquire().await.unwrap().is_none());
    }
    let per_try = (server.packets_received() - before) as f64 / 50.0;
    println!("requests per try_acquire on a held lock: {per_try:.3}");
    assert!(per_try <= 1.05, "one listing expected, measured {per_try}");
    assert_eq!(children(server.connect_string(), "/t/held").await.len(), 1);
    guard.release().await.unwrap();
    let got = other.try_acquire().await.unwrap().expect("free lock");
    got.release().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn timeout_is_one_deadline_and_leaves_no_node() {
    let dir = unique("lock-timeout");
    let (a, b) = (client().await, client().await);
    let holder = WriteLock::new(&a, &dir).unwrap();
    let waiter = WriteLock::new(&b, &dir).unwrap();
    let guard = holder.acquire().await.unwrap();
    let started = std::time::Instant::now();
    assert!(waiter
        .acquire_timeout(Duration::from_millis(300))
        .await
        .unwrap()
        .is_none());
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(2),
        "took {took:?}"
    );
    eventually("waiter node removed", Duration::from_secs(5), || async {
        children(server().connect_string(), &dir).await.len() == 1
    })
    .await;
    guard.release().await.unwrap();
}

/// A timeout shorter than a round trip gets the server's answer, as a try
/// does: a free lock is taken, a held one refused without a node left
/// (`--timeout 1ms` on the CLI failed on a free lock half the time).
#[tokio::test(flavor = "multi_thread")]
async fn a_timeout_below_one_round_trip_answers_like_a_try() {
    let dir = unique("lock-tiny-timeout");
    let (a, b) = (client().await, client().await);
    let lock = WriteLock::new(&a, &dir).unwrap();
    let tiny = [1u64, 100, 1000].map(Duration::from_micros);
    for timeout in tiny.iter().cycle().take(15) {
        let guard = lock.acquire_timeout(*timeout).await.unwrap();
        let guard = guard.unwrap_or_else(|| panic!("a free lock refused with {timeout:?}"));
        guard.release().await.unwrap();
    }
    let holder = WriteLock::new(&b, &dir).unwrap().acquire().await.unwrap();
    for timeout in tiny.iter().cycle().take(15) {
        assert!(lock.acquire_timeout(*timeout).await.unwrap().is_none());
    }
    eventually(
        "refused attempts left no node",
        Duration::from_secs(5),
        || async { children(server().connect_string(), &dir).await.len() == 1 },
    )
    .await;
    holder.release().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn reentrant_with_a_hold_count() {
    let dir = unique("lock-reentrant");
    let c = client().await;
    let lock = WriteLock::new(&c, &dir).unwrap();
    let me = Owner::unique();
    let first = lock.acquire_as(me, Wait::Forever).await.unwrap().unwrap();
    let second = lock.acquire_as(me, Wait::No).await.unwrap().unwrap();
    assert_eq!(first.fencing_token(), second.fencing_token());
    assert_eq!(lock.hold_count(me), 2);
    assert_eq!(children(server().connect_string(), &dir).await.len(), 1);
    second.release().await.unwrap();
    assert!(lock.is_held());
    first.release().await.unwrap();
    assert!(!lock.is_held());
    assert!(children(server().connect_string(), &dir).await.is_empty());
    let err = lock.unlock_as(me).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotOwner);
}

/// Defect 7: two tasks sharing one `Lock` both "held" it (one fixed owner).
#[tokio::test(flavor = "multi_thread")]
async fn tasks_sharing_one_lock_object_exclude_each_other() {
    let dir = unique("lock-shared-object");
    let c = client().await;
    let lock = WriteLock::new(&c, &dir).unwrap();
    let inside = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for _ in 0..6 {
        let (lock, inside) = (lock.clone(), inside.clone());
        tasks.push(tokio::spawn(async move {
            for _ in 0..4 {
                let guard = lock.acquire().await.unwrap();
                assert!(
                    !inside.swap(true, Ordering::SeqCst),
                    "two holders in one object"
                );
                tokio::time::sleep(Duration::from_millis(2)).await;
                inside.store(false, Ordering::SeqCst);
                guard.release().await.unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let held = lock.acquire().await.unwrap();
    assert!(
        lock.try_acquire().await.unwrap().is_none(),
        "a second caller must not re-enter"
    );
    assert!(lock
        .acquire_timeout(Duration::from_millis(100))
        .await
        .unwrap()
        .is_none());
    held.release().await.unwrap();
    assert!(children(server().connect_string(), &dir).await.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn waiter_survives_vanished_predecessor() {
    let dir = unique("lock-vanish");
    let (a, b, c) = (client().await, client().await, client().await);
    let holder = WriteLock::new(&a, &dir).unwrap();
    let middle = WriteLock::new(&b, &dir).unwrap();
    let last = WriteLock::new(&c, &dir).unwrap();
    let guard = holder.acquire().await.unwrap();
    let middle_task =
        tokio::spawn(async move { middle.acquire_timeout(Duration::from_secs(30)).await });
    eventually("middle queued", Duration::from_secs(5), || async {
        children(server().connect_string(), &dir).await.len() == 2
    })
    .await;
    let last_task = {
        let last = last.clone();
        tokio::spawn(async move { last.acquire_timeout(Duration::from_secs(30)).await })
    };
    eventually("last queued", Duration::from_secs(5), || async {
        children(server().connect_string(), &dir).await.len() == 3
    })
    .await;
    // An operator deletes the middle waiter's node: the last waiter's predecessor vanishes.
    let raw = raw().await;
    let mut nodes = children(server().connect_string(), &dir).await;
    nodes.sort_by_key(|n| n[n.len() - 10..].to_string());
    raw.delete(&format!("{dir}/{}", nodes[1]), None)
        .await
        .unwrap();
    guard.release().await.unwrap();
    let got = tokio::time::timeout(Duration::from_secs(10), last_task)
        .await
        .expect("last waiter stranded")
        .unwrap();
    let got = got.unwrap().expect("last acquires");
    got.release().await.unwrap();
    let middle_got = middle_task
        .await
        .unwrap()
        .unwrap()
        .expect("middle re-queued and acquires");
    middle_got.release().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn holder_is_told_when_its_node_is_deleted() {
    let dir = unique("lock-deleted");
    let c = client().await;
    let lock = WriteLock::new(&c, &dir).unwrap();
    let mut events = lock.subscribe();
    let guard = lock.acquire().await.unwrap();
    assert!(matches!(
        events.recv().await.unwrap(),
        LockEvent::Acquired { .. }
    ));
    raw()
        .await
        .delete(&lock.node_path().unwrap(), None)
        .await
        .unwrap();
    let event = tokio::time::timeout(Duration::from_secs(5), events.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(event, LockEvent::Lost { .. }), "{event:?}");
    assert!(!lock.is_held());
    drop(guard);
}

#[tokio::test(flavor = "multi_thread")]
async fn holder_is_told_when_session_expires_and_client_gets_a_new_session() {
    let proxy = FaultProxy::start(server().connect_string());
    let c = client_at(&proxy.connect_string(), Duration::from_secs(2)).await;
    let mut states = c.subscribe();
    let dir = unique("lock-expiry");
    let lock = WriteLock::new(&c, &dir).unwrap();
    let mut events = lock.subscribe();
    let _guard = lock.acquire().await.unwrap();
    let _ = events.recv().await;
    let first_session = c.session_id().unwrap();
    // A partition longer than the session timeout: the server expires the session.
    proxy.set_blackhole(true);
    tokio::time::sleep(Duration::from_secs(4)).await;
    proxy.set_blackhole(false);
    // SUSPENDED as soon as the connection is seen to be gone, then LOST.
    let event = tokio::time::timeout(Duration::from_secs(20), events.recv())
        .await
        .expect("SUSPENDED in time")
        .unwrap();
    assert_eq!(event, LockEvent::Suspended);
    let event = tokio::time::timeout(Duration::from_secs(20), events.recv())
        .await
        .expect("LOST in time")
        .unwrap();
    assert!(matches!(event, LockEvent::Lost { .. }), "{event:?}");
    assert!(!lock.is_held());
    let mut seen = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), async {
        while let Ok(state) = states.recv().await {
            seen.push(state);
            if state == ConnectionState::Reconnected && seen.contains(&ConnectionState::Lost) {
                break;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no new session; states {seen:?}"));
    assert!(seen.contains(&ConnectionState::Suspended), "{seen:?}");
    assert_ne!(c.session_id().unwrap(), first_session);
    // The same client works on its new session.
    let again = lock
        .acquire_timeout(Duration::from_secs(10))
        .await
        .unwrap()
        .expect("lock on the new session");
    again.release().await.unwrap();
    c.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn waiter_survives_connection_drops() {
    let proxy = FaultProxy::start(server().connect_string());
    let dir = unique("lock-drops");
    let holder_client = client().await;
    let waiter_client = client_at(&proxy.connect_string(), Duration::from_secs(10)).await;
    let holder = WriteLock::new(&holder_client, &dir).unwrap();
    let waiter = WriteLock::new(&waiter_client, &dir).unwrap();
    let guard = holder.acquire().await.unwrap();
    let task = tokio::spawn(async move { waiter.acquire_timeout(Duration::from_secs(30)).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    proxy.drop_all();
    tokio::time::sleep(Duration::from_millis(300)).await;
    proxy.drop_all();
    guard.release().await.unwrap();
    let got = tokio::time::timeout(Duration::from_secs(15), task)
        .await
        .expect("waiter stranded")
        .unwrap();
    got.unwrap().expect("acquired").release().await.unwrap();
    assert!(children(server().connect_string(), &dir).await.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn foreign_children_are_ignored_and_participants_listed_in_order() {
    let dir = unique("lock-foreign");
    let raw = raw().await;
    raw.mkdir(
        &dir,
        &zookeeper_client::CreateMode::Persistent.with_acls(zookeeper_client::Acls::anyone_all()),
    )
    .await
    .unwrap();
    raw.create(
        &format!("{dir}/config"),
        b"x",
        &zookeeper_client::CreateMode::Persistent.with_acls(zookeeper_client::Acls::anyone_all()),
    )
    .await
    .unwrap();
    let opts = |id: &str| zkrecipes::ClientOptions {
        identity: Some(id.into()),
        ..options(Duration::from_secs(10))
    };
    let a = zkrecipes::Client::connect(server().connect_string(), opts("alpha"))
        .await
        .unwrap();
    let b = zkrecipes::Client::connect(server().connect_string(), opts("beta"))
        .await
        .unwrap();
    let first = WriteLock::new(&a, &dir).unwrap();
    let second = WriteLock::new(&b, &dir).unwrap();
    let guard = first.acquire().await.unwrap();
    let task = tokio::spawn(async move { second.acquire().await.map(|g| (g, ())) });
    eventually("second queued", Duration::from_secs(5), || async {
        first.participants().await.unwrap().len() == 2
    })
    .await;
    let who: Vec<String> = first
        .participants()
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.identity)
        .collect();
    assert_eq!(who, ["alpha", "beta"]);
    guard.release().await.unwrap();
    let (g, ()) = task.await.unwrap().unwrap();
    g.release().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn close_releases_held_locks() {
    let dir = unique("lock-close");
    let a = client().await;
    let b = client().await;
    let holder = WriteLock::new(&a, &dir).unwrap();
    let waiter = WriteLock::new(&b, &dir).unwrap();
    let mut events = holder.subscribe();
    let _guard = holder.acquire().await.unwrap();
    let _ = events.recv().await;
    a.close().await;
    assert_eq!(a.state(), ConnectionState::Closed);
    let got = waiter
        .acquire_timeout(Duration::from_secs(5))
        .await
        .unwrap()
        .expect("released by close");
    assert_eq!(
        tokio::time::timeout(Duration::from_secs(5), events.recv())
            .await
            .unwrap()
            .unwrap(),
        LockEvent::Released
    );
    let err = holder.acquire().await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Closed);
    a.close().await; // twice is harmless
    got.release().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_paths_are_refused_before_sending() {
    let c = client().await;
    for bad in [
        "",
        "relative",
        "/trailing/",
        "//double",
        "/a/./b",
        "/a/../b",
        "/ctl\u{1}",
        "/zookeeper/quota",
    ] {
        let err = WriteLock::new(&c, bad).err().expect(bad);
        assert_eq!(err.code(), ErrorCode::InvalidPath, "{bad:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn cancelled_acquire_leaves_no_node() {
    let dir = unique("lock-cancel");
    let (a, b) = (client().await, client().await);
    let holder = WriteLock::new(&a, &dir).unwrap();
    let waiter = WriteLock::new(&b, &dir).unwrap();
    let guard = holder.acquire().await.unwrap();
    let task = tokio::spawn(async move { waiter.acquire().await.map(|_| ()) });
    eventually("waiter queued", Duration::from_secs(5), || async {
        children(server().connect_string(), &dir).await.len() == 2
    })
    .await;
    task.abort();
    eventually(
        "cancelled waiter's node removed",
        Duration::from_secs(5),
        || async { children(server().connect_string(), &dir).await.len() == 1 },
    )
    .await;
    guard.release().await.unwrap();
}
