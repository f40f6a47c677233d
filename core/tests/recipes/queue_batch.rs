//! Batched takes of the simple queue: `poll_many` and `take_many` (issue 32).

use crate::common;

use std::collections::HashSet;
use std::time::Duration;

use common::*;
use zk_harness::{Cut, Request, Then, ZkServer};
use zkrecipes::{DistributedQueue, ErrorCode, Item, Wait, MAX_BATCH};

fn texts(items: &[Item]) -> Vec<String> {
    items
        .iter()
        .map(|item| String::from_utf8(item.data.clone()).unwrap())
        .collect()
}

/// A batch is the head of the queue in order, claimed in one transaction: a drain of N items in
/// batches of B costs a read per item and one write per batch (plus the listings), not a write
/// per item.
#[tokio::test(flavor = "multi_thread")]
async fn a_batch_is_the_head_in_order_claimed_in_one_write() {
    let server = ZkServer::start_local();
    let c = client_at(server.connect_string(), Duration::from_secs(30)).await;
    let q = DistributedQueue::new(&c, "/batch-order").unwrap();
    let items: Vec<String> = (0..250).map(|i| format!("item-{i}")).collect();
    for item in &items {
        q.offer(item.as_bytes()).await.unwrap();
    }
    let before = server.packets_received();
    let mut got = Vec::new();
    let mut sizes = Vec::new();
    loop {
        let batch = q.poll_many(100).await.unwrap();
        if batch.is_empty() {
            break;
        }
        sizes.push(batch.len());
        got.extend(texts(&batch));
    }
    let requests = server.packets_received() - before;
    assert_eq!(sizes, vec![100, 100, 50]);
    assert_eq!(got, items, "every item once, in queue order");
    // 250 reads + 3 claims + the listings (one per exhausted cache, and the empty one).
    assert!(
        (253..=262).contains(&requests),
        "a read per item and a write per batch expected, got {requests} requests"
    );
    assert_eq!(q.size().await.unwrap(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn batch_sizes_out_of_range_are_refused_before_anything_is_sent() {
    let c = client().await;
    let dir = unique("batch-bad");
    let q = DistributedQueue::new(&c, &dir).unwrap();
    q.offer(b"kept").await.unwrap();
    for bad in [0, MAX_BATCH + 1] {
        let err = q.poll_many(bad).await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument, "{err}");
        assert!(err.message().contains(&format!("got {bad}")), "{err}");
        let err = q.take_many(bad, Duration::ZERO).await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument, "{err}");
    }
    assert_eq!(q.poll().await.unwrap().unwrap(), b"kept", "nothing taken");
}

#[tokio::test(flavor = "multi_thread")]
async fn take_many_waits_for_an_item_and_answers_empty_at_its_deadline() {
    let (a, b) = (client().await, client().await);
    let dir = unique("batch-take");
    let consumer = DistributedQueue::new(&a, &dir).unwrap();
    let producer = DistributedQueue::new(&b, &dir).unwrap();
    assert!(consumer
        .take_many(10, Duration::ZERO)
        .await
        .unwrap()
        .is_empty());
    let started = std::time::Instant::now();
    assert!(consumer
        .take_many(10, Duration::from_millis(200))
        .await
        .unwrap()
        .is_empty());
    assert!(started.elapsed() >= Duration::from_millis(200));
    let waiting = {
        let consumer = consumer.clone();
        tokio::spawn(async move { consumer.take_many(10, Wait::Forever).await })
    };
    producer.offer(b"first").await.unwrap();
    let got = joined(waiting, Duration::from_secs(10), "take_many woke")
        .await
        .unwrap();
    assert_eq!(texts(&got), vec!["first"]);
    for i in 0..5 {
        producer
            .offer(format!("more-{i}").as_bytes())
            .await
            .unwrap();
    }
    let rest = consumer.take_many(3, Duration::from_secs(5)).await.unwrap();
    assert_eq!(texts(&rest), vec!["more-0", "more-1", "more-2"]);
    let rest = consumer.poll_many(10).await.unwrap();
    assert_eq!(texts(&rest), vec!["more-3", "more-4"]);
}

/// Batch consumers and single consumers on one queue: every item exactly once, and each batch
/// consumer receives its items in queue order.
#[tokio::test(flavor = "multi_thread")]
async fn batches_and_single_takes_share_a_queue_exactly_once() {
    let (dir, _producer, q) = recipe("batch-mixed", DistributedQueue::new).await;
    let n = 400;
    let consumers = spawn_consumers(&dir, 4, |q, which| async move {
        let mut mine: Vec<usize> = Vec::new();
        loop {
            let got = if which % 2 == 0 {
                q.take_many(1 + which * 8, Duration::from_secs(3))
                    .await
                    .unwrap()
            } else {
                q.take_item(Duration::from_secs(3))
                    .await
                    .unwrap()
                    .into_iter()
                    .collect()
            };
            if got.is_empty() {
                break;
            }
            for item in got {
                mine.push(number(&item.data));
            }
        }
        // A single take may claim past its head after a lost race (the claim window); a batch
        // always starts at its head.
        assert!(
            which % 2 == 1 || mine.windows(2).all(|w| w[0] < w[1]),
            "batch consumer {which} received out of order: {mine:?}"
        );
        mine
    })
    .await;
    for i in 0..n {
        q.offer(i.to_string().as_bytes()).await.unwrap();
    }
    let seen = gathered(consumers).await;
    assert_n_distinct(&seen, n, "nothing lost, nothing duplicated");
}

/// The connection is cut at a batch's claim, before the server has it (not applied) and after
/// (applied, its reply lost): the claim marker tells which, so the whole batch is delivered
/// exactly once either way, and nothing of it is taken again.
#[tokio::test(flavor = "multi_thread")]
async fn a_batch_claim_cut_off_loses_and_doubles_nothing() {
    for cut in [Cut::Before, Cut::After] {
        let (dir, _c, producer) = recipe("batch-cut", DistributedQueue::new).await;
        for i in 0..6 {
            producer.offer(format!("{i}").as_bytes()).await.unwrap();
        }
        let (proxy, consumer_client) = behind_proxy(Duration::from_secs(10)).await;
        let consumer = DistributedQueue::new(&consumer_client, &dir).unwrap();
        assert_eq!(texts(&consumer.poll_many(1).await.unwrap()), vec!["0"]);
        proxy.cut_at_request(Request::Multi, cut, Then::Reconnect);
        let got = tokio::time::timeout(Duration::from_secs(15), consumer.poll_many(3))
            .await
            .expect("the batch settled after the reconnect")
            .unwrap();
        assert_eq!(proxy.cuts(), 1, "{cut:?}: the claim was cut");
        assert_eq!(
            texts(&got),
            vec!["1", "2", "3"],
            "{cut:?}: the batch delivered once"
        );
        assert_eq!(
            texts(&consumer.poll_many(10).await.unwrap()),
            vec!["4", "5"],
            "{cut:?}"
        );
        consumer_client.close().await;
        assert!(children(server().connect_string(), &dir).await.is_empty());
    }
}

/// A batched take given up at any moment (before its reads, between them and the claim, while
/// the claim is on its way) never loses an item: what was claimed for nobody goes back.
#[tokio::test(flavor = "multi_thread")]
async fn a_batch_take_given_up_at_any_moment_loses_nothing() {
    let c = client().await;
    let dir = unique("batch-cancel");
    let q = DistributedQueue::new(&c, &dir).unwrap();
    let n = 60;
    for i in 0..n {
        q.offer(i.to_string().as_bytes()).await.unwrap();
    }
    let mut delivered = Vec::new();
    for round in 0..120u64 {
        let cut = Duration::from_micros(round * 53 % 3000);
        if let Ok(got) = tokio::time::timeout(cut, q.poll_many(1 + (round as usize % 7))).await {
            delivered.extend(texts(&got.unwrap()));
        }
    }
    // Items on their way back are back before a take that finds the queue empty ends: wait for
    // every one to be either delivered or in the queue again.
    let other = DistributedQueue::new(&client().await, &dir).unwrap();
    eventually(
        "every item delivered or back",
        Duration::from_secs(20),
        || {
            let (delivered, other) = (delivered.len(), other.clone());
            async move { other.size().await.unwrap() + delivered == n }
        },
    )
    .await;
    loop {
        let got = other.poll_many(50).await.unwrap();
        if got.is_empty() {
            break;
        }
        delivered.extend(texts(&got));
    }
    let unique: HashSet<_> = delivered.iter().cloned().collect();
    assert_eq!(
        delivered.len(),
        n,
        "nothing lost, nothing twice: {delivered:?}"
    );
    assert_eq!(unique.len(), n);
    // No claim marker outlives its use: once both objects are closed (their sessions still
    // open), the bookkeeping holds nothing.
    q.close().await.unwrap();
    other.close().await.unwrap();
    let bookkeeping = format!("{dir}.zkrecipes");
    eventually("no claim marker left", Duration::from_secs(10), || async {
        children(server().connect_string(), &bookkeeping)
            .await
            .is_empty()
    })
    .await;
}
