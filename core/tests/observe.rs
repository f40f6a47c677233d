//! The numbers and events every recipe records, read back through `Client::metrics` and the
//! bindings' log forwarding, checked against what each test did.
mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use zkrecipes::ffi::log::{self, LogLevel, LogRecord};
use zkrecipes::Lock;

#[path = "observe/feeds.rs"]
mod feeds;
#[path = "observe/leaders.rs"]
mod leaders;
#[path = "observe/others.rs"]
mod others;
#[path = "observe/queues.rs"]
mod queues;
#[path = "observe/spans.rs"]
mod spans;

/// Every record forwarded from now on, for the tests of this binary (one sink per process).
fn captured() -> Arc<Mutex<Vec<LogRecord>>> {
    static RECORDS: std::sync::OnceLock<Arc<Mutex<Vec<LogRecord>>>> = std::sync::OnceLock::new();
    RECORDS
        .get_or_init(|| {
            let records = Arc::new(Mutex::new(Vec::new()));
            let sink = records.clone();
            log::set_level("zkrecipes", LogLevel::Debug);
            log::forward_to(Arc::new(move |record| sink.lock().unwrap().push(record)));
            records
        })
        .clone()
}

fn logged(records: &Mutex<Vec<LogRecord>>, logger: &str, path: &str) -> Vec<LogRecord> {
    assert!(log::flush(Duration::from_secs(10)), "the log queue drains");
    let records = records.lock().unwrap();
    records
        .iter()
        .filter(|r| r.logger == logger && r.fields.iter().any(|(n, v)| *n == "path" && v == path))
        .cloned()
        .collect()
}

#[tokio::test]
async fn a_lock_counts_acquisitions_by_outcome_waits_and_holds() {
    let records = captured();
    let (path, holder, lock) = recipe("observe-lock", Lock::new).await;
    let waiter_client = client().await;
    let waiter = Lock::new(&waiter_client, &path).unwrap();

    let held = lock.acquire().await.unwrap();
    for _ in 0..3 {
        assert!(waiter
            .acquire_timeout(Duration::from_millis(20))
            .await
            .unwrap()
            .is_none());
    }
    let waiting = spawn_on(&waiter, |w| async move { w.acquire().await });
    until_child_count("the waiter's node", &path, 2, Duration::from_secs(10)).await;
    let mid = waiter_client.metrics();
    assert_eq!(mid.gauge("zkrecipes.lock.waiters", &[("path", &path)]), 1);
    held.release().await.unwrap();
    let second = joined(waiting, Duration::from_secs(10), "the waiter's acquire")
        .await
        .unwrap();
    let token = second.fencing_token();
    second.release().await.unwrap();

    let seen = waiter_client.metrics();
    let at = [("path", path.as_str())];
    assert_eq!(
        seen.counter(
            "zkrecipes.lock.acquisitions",
            &[at[0], ("outcome", "timeout")]
        ),
        3
    );
    assert_eq!(
        seen.counter(
            "zkrecipes.lock.acquisitions",
            &[at[0], ("outcome", "acquired")]
        ),
        1
    );
    assert_eq!(seen.gauge("zkrecipes.lock.waiters", &at), 0);
    assert_eq!(seen.gauge("zkrecipes.lock.holders", &at), 0);
    let waits = seen.histogram("zkrecipes.lock.wait.duration", &at).unwrap();
    assert_eq!(waits.count, 4);
    let timeouts = seen
        .histogram(
            "zkrecipes.lock.wait.duration",
            &[at[0], ("outcome", "timeout")],
        )
        .unwrap();
    assert!(
        timeouts.min >= 0.02,
        "a timed-out wait lasts its timeout: {}",
        timeouts.min
    );
    assert_eq!(
        seen.histogram("zkrecipes.lock.hold.duration", &at)
            .unwrap()
            .count,
        1
    );
    assert!(seen.counter("zkrecipes.requests", &[("op", "create")]) >= 4);
    assert_eq!(
        seen.counter("zkrecipes.session.state_changes", &[("to", "connected")]),
        1
    );
    let holder_seen = holder.metrics();
    assert_eq!(
        holder_seen.counter(
            "zkrecipes.lock.acquisitions",
            &[at[0], ("outcome", "acquired")]
        ),
        1
    );

    // The contended acquire is told at info, with its token and wait.
    let events = logged(&records, "zkrecipes.lock", &path);
    let acquired = events
        .iter()
        .find(|r| {
            r.level == LogLevel::Info
                && r.fields
                    .iter()
                    .any(|(n, v)| *n == "outcome" && v == "acquired")
        })
        .expect("an info event for the contended acquire");
    assert!(
        acquired
            .fields
            .contains(&("fencing_token", token.to_string())),
        "{acquired:?}"
    );
    assert!(acquired.fields.iter().any(|(n, _)| *n == "waited_ms"));
    assert!(events
        .iter()
        .any(|r| r.level == LogLevel::Info && r.message.contains("released after holding")));
}

#[tokio::test]
async fn a_lease_lost_with_its_session_is_counted_and_warned() {
    let records = captured();
    let path = unique("observe-lease");
    let (proxy, client) = behind_proxy(Duration::from_secs(2)).await;
    let semaphore = zkrecipes::Semaphore::new(&client, &path, 1).unwrap();
    let lease = semaphore.acquire().await.unwrap();
    proxy.set_blackhole(true);
    eventually("the lease is lost", Duration::from_secs(20), || {
        let lost = client
            .metrics()
            .counter("zkrecipes.semaphore.lost", &[("path", &path)]);
        async move { lost == 1 }
    })
    .await;
    proxy.set_blackhole(false);
    drop(lease);
    let seen = client.metrics();
    assert_eq!(
        seen.gauge("zkrecipes.semaphore.holders", &[("path", &path)]),
        0
    );
    assert!(seen.counter("zkrecipes.session.state_changes", &[("to", "suspended")]) >= 1);
    let warned = logged(&records, "zkrecipes.semaphore", &path);
    assert!(
        warned
            .iter()
            .any(|r| r.level == LogLevel::Warn && r.message.contains("LOST")),
        "{warned:?}"
    );
}
