use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use zk_harness::{FaultProxy, ZkServer};
use zkrecipes::ffi::OwnedLock;
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
    assert!(children_of(&dir).await.is_empty(), "no node may remain");
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
    let (dir, [(_a, holder), (_b, waiter)]) = recipes("lock-timeout", WriteLock::new).await;
    let guard = holder.acquire().await.unwrap();
    let started = std::time::Instant::now();
    assert!(waiter
        .acquire_timeout(Duration::from_millis(300))
        .await
        .unwrap()
        .is_none());
    let took = started.elapsed();
    println!("a 300 ms acquire on a held lock answered in {took:?}");
    // One deadline: never early; late only by the withdrawal of the node
    // (about 5 ms on an idle machine: the bound is for a loaded one).
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(3),
        "took {took:?}"
    );
    until_child_count("waiter node removed", &dir, 1, Duration::from_secs(5)).await;
    guard.release().await.unwrap();
}

/// A timeout shorter than a round trip gets the server's answer, as a try
/// does: a free lock is taken, a held one refused without a node left
/// (`--timeout 1ms` on the CLI failed on a free lock half the time).
#[tokio::test(flavor = "multi_thread")]
async fn a_timeout_below_one_round_trip_answers_like_a_try() {
    let (dir, [(_a, lock), (_b, other)]) = recipes("lock-tiny-timeout", WriteLock::new).await;
    let tiny = [1u64, 100, 1000].map(Duration::from_micros);
    for timeout in tiny.iter().cycle().take(15) {
        let guard = lock.acquire_timeout(*timeout).await.unwrap();
        let guard = guard.unwrap_or_else(|| panic!("a free lock refused with {timeout:?}"));
        guard.release().await.unwrap();
    }
    let holder = other.acquire().await.unwrap();
    for timeout in tiny.iter().cycle().take(15) {
        assert!(lock.acquire_timeout(*timeout).await.unwrap().is_none());
    }
    let refused = "refused attempts left no node";
    until_child_count(refused, &dir, 1, Duration::from_secs(5)).await;
    holder.release().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn reentrant_with_a_hold_count() {
    let (dir, _c, lock) = recipe("lock-reentrant", WriteLock::new).await;
    let me = Owner::unique();
    let first = lock.acquire_as(me, Wait::Forever).await.unwrap().unwrap();
    let second = lock.acquire_as(me, Wait::No).await.unwrap().unwrap();
    assert_eq!(first.fencing_token(), second.fencing_token());
    assert_eq!(lock.hold_count(me), 2);
    assert_eq!(children_of(&dir).await.len(), 1);
    second.release().await.unwrap();
    assert!(lock.is_held());
    first.release().await.unwrap();
    assert!(!lock.is_held());
    assert!(children_of(&dir).await.is_empty());
    let err = lock.unlock_as(me).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotOwner);
}

/// Defect 7: two tasks sharing one `Lock` both "held" it (one fixed owner).
#[tokio::test(flavor = "multi_thread")]
async fn tasks_sharing_one_lock_object_exclude_each_other() {
    let (dir, _c, lock) = recipe("lock-shared-object", WriteLock::new).await;
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
    assert!(children_of(&dir).await.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn waiter_survives_vanished_predecessor() {
    let (dir, [(_a, holder), (_b, middle), (_c, last)]) =
        recipes("lock-vanish", WriteLock::new).await;
    let guard = holder.acquire().await.unwrap();
    let within_30s =
        |lock: WriteLock| async move { lock.acquire_timeout(Duration::from_secs(30)).await };
    let middle_task = spawn_on(&middle, within_30s);
    until_child_count("middle queued", &dir, 2, Duration::from_secs(5)).await;
    let last_task = spawn_on(&last, within_30s);
    until_child_count("last queued", &dir, 3, Duration::from_secs(5)).await;
    // An operator deletes the middle waiter's node: the last waiter's predecessor vanishes.
    let raw = raw().await;
    let mut nodes = children_of(&dir).await;
    nodes.sort_by_key(|n| n[n.len() - 10..].to_string());
    raw.delete(&format!("{dir}/{}", nodes[1]), None)
        .await
        .unwrap();
    guard.release().await.unwrap();
    let got = joined(last_task, Duration::from_secs(10), "the last waiter").await;
    let got = got.unwrap().expect("last acquires");
    got.release().await.unwrap();
    let middle_got = joined(middle_task, Duration::from_secs(60), "the middle waiter").await;
    let middle_got = middle_got.unwrap().expect("middle re-queued and acquires");
    middle_got.release().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn holder_is_told_when_its_node_is_deleted() {
    let (_dir, _c, lock) = recipe("lock-deleted", WriteLock::new).await;
    let (guard, mut events) = held_with_events(&lock).await;
    raw()
        .await
        .delete(&lock.node_path().unwrap(), None)
        .await
        .unwrap();
    let event = next_within(&mut events, Duration::from_secs(5)).await;
    assert!(matches!(event, LockEvent::Lost { .. }), "{event:?}");
    assert!(!lock.is_held());
    drop(guard);
}

#[tokio::test(flavor = "multi_thread")]
async fn holder_is_told_when_session_expires_and_client_gets_a_new_session() {
    let (proxy, c) = behind_proxy(Duration::from_secs(2)).await;
    let mut states = c.subscribe();
    let lock = WriteLock::new(&c, &unique("lock-expiry")).unwrap();
    let (_guard, mut events) = held_with_events(&lock).await;
    let first_session = c.session_id().unwrap();
    // A partition longer than the session timeout: the server expires the session.
    proxy.set_blackhole(true);
    until_expired(server().port(), first_session).await;
    proxy.set_blackhole(false);
    // SUSPENDED as soon as the connection is seen to be gone, then LOST.
    let event = next_within(&mut events, Duration::from_secs(20)).await;
    assert_eq!(event, LockEvent::Suspended);
    let event = next_within(&mut events, Duration::from_secs(20)).await;
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
    let again = acquired_within(&lock, Duration::from_secs(10), "lock on the new session").await;
    again.release().await.unwrap();
    c.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn waiter_survives_connection_drops() {
    let (dir, _holder_client, holder) = recipe("lock-drops", WriteLock::new).await;
    let (proxy, waiter_client) = behind_proxy(Duration::from_secs(10)).await;
    let waiter = WriteLock::new(&waiter_client, &dir).unwrap();
    let guard = holder.acquire().await.unwrap();
    let mut states = waiter_client.subscribe();
    let task = tokio::spawn(async move { waiter.acquire_timeout(Duration::from_secs(30)).await });
    until_child_count("waiter queued", &dir, 2, Duration::from_secs(20)).await;
    // Two drops in a row, the second once the waiter's client is back.
    for _ in 0..2 {
        proxy.drop_all();
        for expected in [ConnectionState::Suspended, ConnectionState::Reconnected] {
            let state = next_within(&mut states, Duration::from_secs(20)).await;
            assert_eq!(state, expected);
        }
    }
    guard.release().await.unwrap();
    let got = joined(task, Duration::from_secs(15), "the waiter").await;
    got.unwrap().expect("acquired").release().await.unwrap();
    assert!(children_of(&dir).await.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn foreign_children_are_ignored_and_participants_listed_in_order() {
    let (dir, _raw) = foreign_dir("lock-foreign", &[("config", b"x")]).await;
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
    let (_dir, [(a, holder), (_b, waiter)]) = recipes("lock-close", WriteLock::new).await;
    let (_guard, mut events) = held_with_events(&holder).await;
    a.close().await;
    assert_eq!(a.state(), ConnectionState::Closed);
    let got = acquired_within(&waiter, Duration::from_secs(5), "released by close").await;
    assert_eq!(
        next_within(&mut events, Duration::from_secs(5)).await,
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
    let (dir, [(_a, holder), (_b, waiter)]) = recipes("lock-cancel", WriteLock::new).await;
    let guard = holder.acquire().await.unwrap();
    let task = tokio::spawn(async move { waiter.acquire().await.map(|_| ()) });
    until_child_count("waiter queued", &dir, 2, Duration::from_secs(5)).await;
    task.abort();
    let removed = "cancelled waiter's node removed";
    until_child_count(removed, &dir, 1, Duration::from_secs(5)).await;
    guard.release().await.unwrap();
}

/// README: "no herd": a waiter watches only the contender it waits for, so a
/// release wakes one waiter. 50 waiters (ten on each of five sessions: the
/// server counts requests, whichever session sends them) queue behind a
/// holder on a server of this test's own; the 51 hand-offs that follow must
/// cost a fixed number of requests each, not one per waiter still queued.
#[tokio::test(flavor = "multi_thread")]
async fn a_release_wakes_one_waiter_not_the_herd() {
    const WAITERS: usize = 50;
    let server = ZkServer::start_local();
    let connect = server.connect_string();
    let dir = "/herd/lock";
    let holder_client = client_at(connect, Duration::from_secs(30)).await;
    let mut clients = Vec::new();
    for _ in 0..5 {
        clients.push(client_at(connect, Duration::from_secs(30)).await);
    }
    let holder = WriteLock::new(&holder_client, dir).unwrap();
    let guard = holder.acquire().await.unwrap();
    let mut waiters = Vec::new();
    for i in 0..WAITERS {
        let lock = WriteLock::new(&clients[i % clients.len()], dir).unwrap();
        waiters.push(tokio::spawn(async move {
            lock.acquire().await.unwrap().release().await.unwrap();
        }));
    }
    eventually("every waiter queued", Duration::from_secs(30), || async {
        children(connect, dir).await.len() == WAITERS + 1
    })
    .await;
    // Every waiter has armed its watch (here: one data watch each, on the
    // node before its own, and the holder's child watch), or, for any other
    // way of waiting, the server has heard nothing for 300 ms: from here on,
    // only the hand-offs send requests (a setup request arriving later would
    // add 1/51 to the measure, against a margin of 1). Every `mntr` counts
    // as a packet itself: one a look.
    let look = || {
        let stats = zk_harness::mntr(server.port());
        let number = |key: &str| {
            stats
                .get(key)
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or(0)
        };
        (number("zk_watch_count"), number("zk_packets_received"))
    };
    let (started, mut last, mut quiet) = (std::time::Instant::now(), 0, 0);
    loop {
        let (watches, packets) = look();
        quiet = if packets == last + 1 { quiet + 1 } else { 0 };
        last = packets;
        if watches == WAITERS as u64 + 1 || quiet == 3 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the waiters did not settle within 30 s ({watches} watches)"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let before = server.packets_received();
    guard.release().await.unwrap();
    for waiter in waiters {
        tokio::time::timeout(Duration::from_secs(60), waiter)
            .await
            .expect("the line of waiters moves on")
            .unwrap();
    }
    let requests = server.packets_received() - before - 1;
    let per_release = requests as f64 / (WAITERS + 1) as f64;
    println!(
        "{WAITERS} waiters: {requests} requests for {} releases, {per_release:.2} each",
        WAITERS + 1
    );
    assert!(
        per_release <= 3.0,
        "a release must wake one waiter (delete + one listing), measured {per_release:.2} \
         requests per release with {WAITERS} waiters"
    );
    assert!(children(connect, dir).await.is_empty());
}

/// A waiter that was next in line when it last looked takes the lock on its
/// blocker's delete without looking again: with two contenders, a hand-off
/// costs the holder's delete and nothing else (it cost a listing more). Five
/// hand-offs on a server of this test's own; the fewest requests any took
/// must be the delete alone (a client's ping may land in one window).
#[tokio::test(flavor = "multi_thread")]
async fn next_in_line_takes_the_lock_on_its_blockers_delete() {
    let server = ZkServer::start_local();
    let connect = server.connect_string();
    let (a, b) = (
        client_at(connect, Duration::from_secs(30)).await,
        client_at(connect, Duration::from_secs(30)).await,
    );
    let dir = "/next-in-line/lock";
    let (holder, waiter) = (
        WriteLock::new(&a, dir).unwrap(),
        WriteLock::new(&b, dir).unwrap(),
    );
    let mut fewest = u64::MAX;
    for _ in 0..5 {
        let guard = holder.acquire().await.unwrap();
        let (acquired, got) = tokio::sync::oneshot::channel();
        let waiting = {
            let waiter = waiter.clone();
            tokio::spawn(async move {
                let guard = waiter.acquire().await.unwrap();
                let _ = acquired.send(());
                guard
            })
        };
        // Settled: the waiter watches its own node (sent after the watch on
        // its blocker, on one session: the server has both).
        eventually(
            "the waiter's watches set",
            Duration::from_secs(10),
            || async {
                let mut nodes = children(connect, dir).await;
                nodes.sort_by_key(|n| n[n.len() - 10..].to_string());
                nodes.len() == 2
                    && !watchers_of(server.port(), &format!("{dir}/{}", nodes[1])).is_empty()
            },
        )
        .await;
        let before = server.packets_received();
        guard.release().await.unwrap();
        tokio::time::timeout(Duration::from_secs(10), got)
            .await
            .expect("the waiter takes the lock")
            .unwrap();
        // Less the `mntr` of this look.
        fewest = fewest.min(server.packets_received() - before - 1);
        let guard = waiting.await.unwrap();
        assert!(guard.is_held());
        guard.release().await.unwrap();
    }
    assert_eq!(
        fewest, 1,
        "a hand-off to the next in line: the holder's delete and nothing else"
    );
    assert!(children(connect, dir).await.is_empty());
}

/// The retry rule (`Backoff` in client.rs): "a persistent failure must never
/// turn into a request storm against the ensemble". A server whose
/// `jute.maxbuffer` (4 KiB here) is below the client's idea of it drops the
/// connection of every create that carries an 8 KiB identity: each retry of
/// the acquire costs a reconnect, counted at a proxy. After a second or two of
/// backing off, retries come at most every half second (the jittered 1 s
/// cap); a hot loop makes hundreds a second. The timed acquire still answers
/// `None` at its deadline.
#[tokio::test(flavor = "multi_thread")]
async fn an_acquire_that_keeps_failing_backs_off() {
    let server = ZkServer::start_local_with(&["-Djute.maxbuffer=4096"]);
    let proxy = FaultProxy::start(server.connect_string());
    let options = zkrecipes::ClientOptions {
        identity: Some("i".repeat(8 * 1024)),
        ..options(Duration::from_secs(10))
    };
    let c = zkrecipes::Client::connect(&proxy.connect_string(), options)
        .await
        .unwrap();
    let lock = WriteLock::new(&c, "/backoff/lock").unwrap();
    let acquiring = tokio::spawn(async move { lock.acquire_timeout(Duration::from_secs(6)).await });
    // The length of the measurement, not a synchronisation: retries are
    // counted from 2 s to 5 s into the failing acquire.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let before = proxy.connections();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let retries = proxy.connections() - before;
    println!("{retries} reconnects in 3 s of a failing acquire");
    let answer = tokio::time::timeout(Duration::from_secs(30), acquiring)
        .await
        .expect("a timed acquire answers")
        .unwrap();
    assert!(
        retries <= 10,
        "{retries} retries (reconnects) in 3 s of an acquire whose create the server refuses: \
         a hot loop, not a backoff"
    );
    assert!(
        matches!(answer, Ok(None)),
        "a timed acquire answers None at its deadline"
    );
    c.close().await;
}
