//! The counters when a write's connection drops on its way, through the fault proxy's cut at
//! one request: a write lost before the server is sent again and counted once; a write whose
//! reply was lost, or that another client overtook meanwhile, answers `CONNECTION_LOSS` and is
//! never counted twice; under random cuts the total stays within what was acknowledged and
//! what was answered "unknown"; a shared count's cache follows a change made during an outage.
use crate::common;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::*;
use zk_harness::{Cut, FaultProxy, Request, Then};
use zkrecipes::{Client, ConnectionState, DistributedAtomicLong, ErrorCode, SharedCount};

/// A counter on a fresh path (of `name`) of a client behind a fault proxy of its own (with a
/// session of `session`), incremented once, to 1: the path, the proxy, the client, the counter.
async fn counted_once_behind_proxy(
    name: &str,
    session: Duration,
) -> (String, FaultProxy, Client, DistributedAtomicLong) {
    let path = unique(name);
    let (proxy, c) = behind_proxy(session).await;
    let counter = DistributedAtomicLong::new(&c, &path).unwrap();
    counter.increment().await.unwrap();
    (path, proxy, c, counter)
}

/// A shared count on a fresh path (of `name`, seeded with `seed`), started, of a client behind
/// a fault proxy of its own: the path, the proxy, the client, the count.
async fn count_behind_proxy(name: &str, seed: i32) -> (String, FaultProxy, Client, SharedCount) {
    let path = unique(name);
    let (proxy, c) = behind_proxy(Duration::from_secs(10)).await;
    let count = SharedCount::new(&c, &path, seed).unwrap();
    count.start().await.unwrap();
    (path, proxy, c, count)
}

/// Every wait of this file gives up after this long.
const DEADLINE: Duration = Duration::from_secs(15);

/// The counter's value as the server holds it, read by a client of its own.
async fn on_server(path: &str) -> i64 {
    let c = client().await;
    let value = DistributedAtomicLong::new(&c, path)
        .unwrap()
        .get()
        .await
        .unwrap();
    c.close().await;
    value
}

async fn within<T>(what: &str, fut: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(DEADLINE, fut)
        .await
        .unwrap_or_else(|_| panic!("{what}: not within {DEADLINE:?}"))
}

async fn until_cut(proxy: &FaultProxy, cuts: u64) {
    until("the proxy cuts at the write", DEADLINE, || {
        proxy.cuts() >= cuts
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_increment_lost_on_its_way_is_sent_again_and_counted_once() {
    let (path, proxy, c, counter) =
        counted_once_behind_proxy("atomic-lost-request", Duration::from_secs(10)).await;
    let connections = proxy.connections();
    proxy.cut_at_request(Request::SetData, Cut::Before, Then::Reconnect);
    let updated = within("the increment", counter.increment()).await.unwrap();
    assert_eq!(proxy.cuts(), 1, "the write's connection was cut");
    assert!(proxy.connections() > connections, "the client reconnected");
    assert_eq!((updated.pre_value, updated.post_value), (1, 2));
    assert_eq!(on_server(&path).await, 2, "counted exactly once");
    c.close().await;
}

/// Nothing else wrote, but the node changed (by our own write, which no read can tell from
/// another client's identical one): the answer is "unknown", and the value moved by exactly one.
#[tokio::test(flavor = "multi_thread")]
async fn an_increment_applied_with_its_reply_lost_is_counted_once() {
    let (path, proxy, c, counter) =
        counted_once_behind_proxy("atomic-lost-reply", Duration::from_secs(10)).await;
    proxy.cut_at_request(Request::SetData, Cut::After, Then::Reconnect);
    let answered = within("the increment", counter.increment()).await;
    assert_eq!(proxy.cuts(), 1, "the write's connection was cut");
    let err = answered.expect_err("an outcome no read can confirm is not a success");
    assert_eq!(err.code(), ErrorCode::ConnectionLoss, "{err}");
    assert!(err.message().contains("may or may not"), "{err}");
    assert_eq!(on_server(&path).await, 2, "applied once, never sent again");
    // The counter goes on from there.
    assert_eq!(counter.increment().await.unwrap().post_value, 3);
    c.close().await;
}

/// The write is cut (before the server, or after it applied), the client is held off, and
/// another client increments three times meanwhile: the node changed, so the cut increment
/// answers CONNECTION_LOSS, and the value is the other's three plus ours exactly when it
/// reached the server.
#[tokio::test(flavor = "multi_thread")]
async fn an_increment_overtaken_while_cut_off_answers_connection_loss_and_counts_at_most_once() {
    for (cut, ours) in [(Cut::Before, 0), (Cut::After, 1)] {
        let (path, proxy, c, counter) =
            counted_once_behind_proxy("atomic-overtaken", Duration::from_secs(10)).await;
        let zk = raw().await;
        let (_, _, changed) = zk.get_and_watch_data(&path).await.unwrap();
        proxy.cut_at_request(Request::SetData, cut, Then::Hold);
        let pending = {
            let counter = counter.clone();
            tokio::spawn(async move { counter.increment().await })
        };
        until_cut(&proxy, 1).await;
        if cut == Cut::After {
            within("the cut write applied", changed.changed()).await;
            assert_eq!(on_server(&path).await, 2);
        }
        let other = client().await;
        let theirs = DistributedAtomicLong::new(&other, &path).unwrap();
        for _ in 0..3 {
            theirs.increment().await.unwrap();
        }
        proxy.set_blackhole(false);
        let answered = within("the cut increment", pending).await.unwrap();
        let err = answered.expect_err("the node changed meanwhile: the outcome is unknown");
        assert_eq!(err.code(), ErrorCode::ConnectionLoss, "{cut:?}: {err}");
        assert_eq!(
            on_server(&path).await,
            1 + 3 + ours,
            "{cut:?}: the other's three, ours at most once"
        );
        other.close().await;
        c.close().await;
    }
}

/// Resolves once the server has forgotten `session` (`dump` lists every session it tracks).
async fn until_forgotten(session: i64) {
    let hex = session_hex(session);
    until("the server expires the cut-off session", DEADLINE, || {
        zk_harness::four_letter(server().port(), "dump").is_ok_and(|dump| !dump.contains(&hex))
    })
    .await;
}

/// Found by writing these tests: a write cut off past its session answered SESSION_EXPIRED
/// whether it had applied or not, and a caller retrying on it counted it twice. The next
/// session decides as the same one would: lost on its way, sent again; applied, unknown.
#[tokio::test(flavor = "multi_thread")]
async fn an_increment_cut_off_past_its_session_is_decided_on_the_next_one() {
    for cut in [Cut::Before, Cut::After] {
        let (path, proxy, c, counter) =
            counted_once_behind_proxy("atomic-expired", Duration::from_secs(1)).await;
        let session = c.session_id().unwrap();
        proxy.cut_at_request(Request::SetData, cut, Then::Hold);
        let pending = {
            let counter = counter.clone();
            tokio::spawn(async move { counter.increment().await })
        };
        until_cut(&proxy, 1).await;
        until_forgotten(session).await;
        proxy.set_blackhole(false);
        let answered = within("the cut increment", pending).await.unwrap();
        match (cut, answered) {
            (Cut::Before, Ok(updated)) => assert_eq!(updated.post_value, 2),
            (Cut::After, Err(err)) => assert_eq!(err.code(), ErrorCode::ConnectionLoss, "{err}"),
            (cut, answered) => panic!("{cut:?}: answered {answered:?}"),
        }
        assert_ne!(c.session_id().unwrap(), session, "decided on a new session");
        assert_eq!(
            on_server(&path).await,
            1 + 1,
            "{cut:?}: counted exactly once"
        );
        c.close().await;
    }
}

/// A tiny xorshift: the chaos is repeatable by seed, without a dependency.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// What one client's increments were answered.
#[derive(Default)]
struct Answers {
    acknowledged: Vec<i64>,
    unknown: usize,
}

#[tokio::test(flavor = "multi_thread")]
async fn increments_under_random_cuts_end_between_acknowledged_and_unknown() {
    const CLIENTS: usize = 3;
    const INCREMENTS: usize = 40;
    let path = unique("atomic-chaos");
    let done = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    let mut chaos = Vec::new();
    for n in 0..CLIENTS {
        let proxy = Arc::new(FaultProxy::start(server().connect_string()));
        let c = client_at(&proxy.connect_string(), Duration::from_secs(10)).await;
        let counter = DistributedAtomicLong::new(&c, &path).unwrap();
        tasks.push(tokio::spawn(async move {
            let mut answers = Answers::default();
            for _ in 0..INCREMENTS {
                match within("an increment", counter.increment()).await {
                    Ok(updated) => {
                        assert_eq!(updated.post_value, updated.pre_value + 1);
                        answers.acknowledged.push(updated.post_value);
                    }
                    Err(err) if err.code() == ErrorCode::ConnectionLoss => answers.unknown += 1,
                    Err(err) => panic!("an increment answered {err}"),
                }
            }
            c.close().await;
            answers
        }));
        let done = done.clone();
        chaos.push(tokio::spawn(async move {
            let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (n as u64 + 1));
            while !done.load(Ordering::SeqCst) {
                // Spaced faults at random moments (the pause only spreads them out).
                tokio::time::sleep(Duration::from_millis(rng.below(25))).await;
                match rng.below(4) {
                    0 => proxy.drop_all(),
                    1 => proxy.cut_at_request(Request::SetData, Cut::Before, Then::Reconnect),
                    2 => proxy.cut_at_request(Request::SetData, Cut::After, Then::Reconnect),
                    _ => proxy.cut_at_request(Request::GetData, Cut::After, Then::Reconnect),
                }
            }
            proxy.cuts()
        }));
    }
    let mut acknowledged = Vec::new();
    let mut unknown = 0;
    for task in tasks {
        let answers = within("a client's increments", task).await.unwrap();
        acknowledged.extend(answers.acknowledged);
        unknown += answers.unknown;
    }
    done.store(true, Ordering::SeqCst);
    let mut cuts = 0;
    for task in chaos {
        cuts += task.await.unwrap();
    }
    assert_eq!(acknowledged.len() + unknown, CLIENTS * INCREMENTS);
    let distinct: HashSet<i64> = acknowledged.iter().copied().collect();
    assert_eq!(
        distinct.len(),
        acknowledged.len(),
        "a post value acknowledged twice: {acknowledged:?}"
    );
    let total = on_server(&path).await;
    let (low, high) = (
        acknowledged.len() as i64,
        (acknowledged.len() + unknown) as i64,
    );
    assert!(
        (low..=high).contains(&total),
        "total {total} outside [acknowledged {low}, acknowledged + unknown {high}] ({cuts} cuts)"
    );
    assert!(
        acknowledged.iter().all(|v| *v <= total),
        "an acknowledged value above the total"
    );
    assert!(cuts > 0, "no write was cut");
}

/// Waits for the client to say it lost the connection.
async fn until_suspended(c: &Client) {
    let mut states = c.subscribe();
    within("SUSPENDED", async {
        while c.state() != ConnectionState::Suspended {
            let _ = states.recv().await;
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_follower_reads_a_change_made_while_it_was_cut_off_at_reconnect() {
    let (path, proxy, c, follower) = count_behind_proxy("count-outage", 5).await;
    assert_eq!(follower.get().unwrap(), 5);
    let mut seen = follower.subscribe();
    proxy.set_blackhole(true);
    proxy.drop_all();
    until_suspended(&c).await;
    let other = client().await;
    let writer = SharedCount::new(&other, &path, 5).unwrap();
    writer.set(41).await.unwrap();
    writer.add(1).await.unwrap();
    proxy.set_blackhole(false);
    let newest = within("the change, once reconnected", async {
        loop {
            let v = seen.recv().await.unwrap();
            assert_ne!(v.value, 5, "an older value after the outage");
            if v.value == 42 {
                return v;
            }
        }
    })
    .await;
    assert_eq!(follower.get().unwrap(), 42);
    assert_eq!(follower.versioned().unwrap(), newest);
    let zk = raw().await;
    let (_, stat) = zk.get_data(&path).await.unwrap();
    assert_eq!(newest.version, stat.version, "the version of the node now");
    follower.close();
    other.close().await;
    c.close().await;
}

/// A shared count's versioned write under the same rule: lost on its way, sent again; cut off
/// while another client added, CONNECTION_LOSS with the other's add and ours at most once.
#[tokio::test(flavor = "multi_thread")]
async fn a_shared_count_write_cut_off_is_sent_again_only_over_an_unchanged_count() {
    let (path, proxy, c, count) = count_behind_proxy("count-cut", 0).await;
    proxy.cut_at_request(Request::SetData, Cut::Before, Then::Reconnect);
    let read = count.versioned().unwrap();
    assert!(within("try_set", count.try_set(read, 10)).await.unwrap());
    assert_eq!(proxy.cuts(), 1);
    assert_eq!(count.read().await.unwrap(), 10, "written once");
    let other = client().await;
    let theirs = SharedCount::new(&other, &path, 0).unwrap();
    for (cut, ours, base) in [(Cut::Before, 0, 10), (Cut::After, 1, 11)] {
        proxy.cut_at_request(Request::SetData, cut, Then::Hold);
        let pending = {
            let count = count.clone();
            tokio::spawn(async move { count.add(1).await })
        };
        until_cut(&proxy, if ours == 0 { 2 } else { 3 }).await;
        theirs.add(1).await.unwrap();
        proxy.set_blackhole(false);
        let err = within("the cut add", pending)
            .await
            .unwrap()
            .expect_err("the count changed meanwhile: the outcome is unknown");
        assert_eq!(err.code(), ErrorCode::ConnectionLoss, "{cut:?}: {err}");
        assert_eq!(
            count.read().await.unwrap(),
            base + 1 + ours,
            "{cut:?}: the other's add, ours at most once"
        );
    }
    count.close();
    other.close().await;
    c.close().await;
}
