//! Several consumers of one queue: they split the backlog between them (by
//! the claim markers each lists with its claims) instead of racing for the
//! head, and a consumer that stops polling, joins late or leaves holds back
//! nobody.
use crate::common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use zk_harness::ZkServer;
use zkrecipes::{DistributedQueue, Wait, CLAIM_WINDOW};

type Delivered = Arc<Mutex<Vec<usize>>>;

/// `consumers` queue objects, each on a session of its own, draining `dir`
/// until it is empty, each adding the items' numbers to `delivered` as they
/// come; how many each consumer took.
async fn drain(connect: &str, dir: &str, consumers: usize, delivered: &Delivered) -> Vec<usize> {
    let mut tasks = Vec::new();
    for _ in 0..consumers {
        let c = client_at(connect, Duration::from_secs(30)).await;
        let queue = DistributedQueue::new(&c, dir).unwrap();
        let delivered = delivered.clone();
        tasks.push(tokio::spawn(async move {
            let mut taken = 0;
            while let Some(item) = queue.poll().await.unwrap() {
                delivered.lock().unwrap().push(number(&item));
                taken += 1;
            }
            queue.close().await.unwrap();
            drop(c);
            taken
        }));
    }
    let mut shares = Vec::new();
    for t in tasks {
        shares.push(t.await.unwrap());
    }
    shares
}

/// A queue of the items `0..items` (of `name`) and an early consumer of it, which took the
/// first `first` of them; then `joining` consumers drain it beside, in a task of their own.
/// Everything taken goes to `delivered`.
async fn early_consumer_and_joiners(
    name: &str,
    items: usize,
    first: usize,
    joining: usize,
    delivered: &Delivered,
) -> (DistributedQueue, tokio::task::JoinHandle<Vec<usize>>) {
    let (dir, _c, _producer) = numbered_queue(name, items).await;
    let early = DistributedQueue::new(&client().await, &dir).unwrap();
    for _ in 0..first {
        let item = early.poll().await.unwrap().unwrap();
        delivered.lock().unwrap().push(number(&item));
    }
    let (connect, delivered) = (server().connect_string(), delivered.clone());
    let joiners = tokio::spawn(async move { drain(connect, &dir, joining, &delivered).await });
    (early, joiners)
}

/// Every item of `0..items` delivered once, none overtaken by more than `bound` later ones.
fn assert_fair(delivered: &Delivered, items: usize, bound: usize) {
    let delivered = delivered.lock().unwrap();
    assert_each_once(&delivered, items);
    assert_overtaken_at_most(&delivered, bound);
}

/// Four consumers each take a share, and the drain costs at most three
/// requests per item (the claim, and one multi-read of the next item's data
/// and of the claim markers), where racing for the head cost 6.6: every lost
/// race is a whole claim transaction.
#[tokio::test(flavor = "multi_thread")]
async fn four_consumers_split_the_backlog_at_three_requests_per_item_at_most() {
    let server = ZkServer::start_local();
    let dir = "/split";
    let producer = DistributedQueue::new(
        &client_at(server.connect_string(), Duration::from_secs(30)).await,
        dir,
    )
    .unwrap();
    let items = 2000;
    offer_numbered(&producer, 0..items).await;
    let before = server.packets_received();
    let delivered = Delivered::default();
    let shares = drain(server.connect_string(), dir, 4, &delivered).await;
    let requests = server.packets_received() - before;
    assert_each_once(&delivered.lock().unwrap(), items);
    let per_item = requests as f64 / items as f64;
    println!("4 consumers: shares {shares:?}, {requests} requests ({per_item:.2} per item)");
    assert!(
        shares.iter().all(|&taken| taken >= items / 10),
        "every consumer takes a share: {shares:?}"
    );
    // Sessions' connects and closes are counted too (a few dozen requests). A 3.5 server has no
    // multiRead: the read after each claim goes as two pipelined reads (3.36 per item measured).
    let old_server = zk_harness::server_version().is_some_and(|v| v.starts_with("3.5"));
    let bound = if old_server { 3.6 } else { 3.0 };
    assert!(
        per_item <= bound,
        "{per_item:.2} requests per item (bound {bound})"
    );
    assert_overtaken_at_most(&delivered.lock().unwrap(), (CLAIM_WINDOW - 1) * 4);
}

/// A consumer that took one item and then stopped polling keeps its claim
/// marker, so the others count it: its share must not wait for it. An item
/// that stays at the head over a claim of the others, while its consumer
/// claims nothing, is taken by them, in order.
#[tokio::test(flavor = "multi_thread")]
async fn a_consumer_that_stops_polling_holds_back_none_of_its_share() {
    let items = 300;
    let (dir, _c, _producer) = numbered_queue("idle-peer", items).await;
    let idle = DistributedQueue::new(&client().await, &dir).unwrap();
    assert_eq!(
        idle.poll().await.unwrap().map(|item| number(&item)),
        Some(0)
    );
    let delivered = Delivered::new(Mutex::new(vec![0]));
    drain(server().connect_string(), &dir, 2, &delivered).await;
    assert_fair(&delivered, items, (CLAIM_WINDOW - 1) * 3);
    idle.close().await.unwrap();
}

/// Consumers that join in the middle of a drain and one that leaves in the
/// middle change how the backlog is split: each consumer lists the queue
/// afresh when the set changes, so no item is skipped for long.
#[tokio::test(flavor = "multi_thread")]
async fn consumers_joining_and_leaving_mid_drain_skip_nothing() {
    let items = 600;
    let delivered = Delivered::default();
    let (leaver, joined) = early_consumer_and_joiners("churn", items, 50, 3, &delivered).await;
    // The leaver goes on beside the three that joined, then leaves.
    for _ in 0..50 {
        match leaver.poll().await.unwrap() {
            Some(item) => delivered.lock().unwrap().push(number(&item)),
            None => break,
        }
    }
    leaver.close().await.unwrap();
    joined.await.unwrap();
    assert_fair(&delivered, items, CLAIM_WINDOW * 4);
}

/// A consumer that started alone and takes 10 ms per item, joined by a fast
/// one. The slow one used to pick past the head after its first lost race
/// (as consumers did before the split), skipping items that the fast one
/// then took for gone by its marker: they waited for the slow one, overtaken
/// by up to 345 later items (found by an adversarial review).
#[tokio::test(flavor = "multi_thread")]
async fn a_slow_consumer_that_started_alone_skips_nothing_when_a_fast_one_joins() {
    let items = 400;
    let delivered = Delivered::default();
    let (slow, fast) = early_consumer_and_joiners("slow-first", items, 10, 1, &delivered).await;
    while let Some(item) = slow.poll().await.unwrap() {
        delivered.lock().unwrap().push(number(&item));
        // The slow consumer's work on the item.
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    fast.await.unwrap();
    slow.close().await.unwrap();
    assert_fair(&delivered, items, CLAIM_WINDOW * 2);
}

/// An item given back is in line again at its place, for its own consumer
/// too: it used to be found only once the consumer's cache was used up
/// (overtaken by 722 of 800 with one consumer, found by an adversarial
/// review).
#[tokio::test(flavor = "multi_thread")]
async fn an_item_given_back_is_the_next_one_taken() {
    let dir = unique("given-back");
    let queue = DistributedQueue::new(&client().await, &dir).unwrap();
    offer_numbered(&queue, 0..50).await;
    let first = queue.poll_item().await.unwrap().unwrap();
    assert_eq!(number(&first.data), 0);
    queue.give_back(&first).await.unwrap();
    let again = queue.poll_item().await.unwrap().unwrap();
    assert_eq!(again, first, "the given-back item comes first again");
    assert_eq!(number(&queue.poll().await.unwrap().unwrap()), 1);
    queue.close().await.unwrap();
}

/// The same through a binding's path: a take whose caller gave up (an
/// interrupted Java thread, a cancelled Python task) gives its item back in
/// the background, and the same object takes it again within its next few
/// takes (one already on its way when the item came back may come first), not
/// after the other 49.
#[tokio::test(flavor = "multi_thread")]
async fn an_item_abandoned_by_its_caller_is_taken_again_at_once() {
    use zkrecipes::ffi::HandedQueue;
    let dir = unique("abandoned");
    let queue = DistributedQueue::new(&client().await, &dir).unwrap();
    offer_numbered(&queue, 0..50).await;
    let (first, handoff) = queue.take_handed(Wait::Forever).await.unwrap().unwrap();
    assert_eq!(number(&first.data), 0);
    handoff.undo();
    // Given back in the background: wait until it is in the queue again.
    let zk = raw().await;
    let path = format!("{dir}/{}", first.name);
    loop {
        let (stat, watch) = zk.check_and_watch_stat(&path).await.unwrap();
        if stat.is_some() {
            break;
        }
        watch.changed().await;
    }
    let mut next_few = Vec::new();
    for _ in 0..5 {
        let (item, handoff) = queue.take_handed(Wait::Forever).await.unwrap().unwrap();
        handoff.delivered();
        next_few.push(number(&item.data));
    }
    assert!(
        next_few.contains(&0),
        "the abandoned item is taken again at once: {next_few:?}"
    );
    queue.close().await.unwrap();
}

/// A consumer whose listing went stale (another consumer took most of what
/// it listed) lists afresh after two reads that found their item gone,
/// instead of reading its way through the gone items, a round trip each: a
/// take given 100 ms behind three draining consumers ran for 3.7 s so, found
/// by an adversarial review. For a batch and for a single take.
#[tokio::test(flavor = "multi_thread")]
async fn a_consumer_behind_a_stale_listing_lists_afresh_instead_of_walking_it() {
    let server = ZkServer::start_local();
    for batch in [true, false] {
        let dir = format!("/stale-{batch}");
        let connect = server.connect_string();
        let producer =
            DistributedQueue::new(&client_at(connect, Duration::from_secs(30)).await, &dir)
                .unwrap();
        offer_numbered(&producer, 0..600).await;
        // Lists all 600 and takes the head.
        let behind =
            DistributedQueue::new(&client_at(connect, Duration::from_secs(30)).await, &dir)
                .unwrap();
        let first = behind.poll_many(1).await.unwrap();
        assert_eq!(
            first.iter().map(|i| number(&i.data)).collect::<Vec<_>>(),
            [0]
        );
        // Another consumer takes the next 500 in one claim.
        let other = DistributedQueue::new(&client_at(connect, Duration::from_secs(30)).await, &dir)
            .unwrap();
        assert_eq!(other.poll_many(500).await.unwrap().len(), 500);
        let before = server.packets_received();
        let next = if batch {
            let items = behind.take_many(1, Wait::No).await.unwrap();
            items.iter().map(|i| number(&i.data)).collect::<Vec<_>>()
        } else {
            let item = behind.take_item(Wait::No).await.unwrap();
            item.iter().map(|i| number(&i.data)).collect::<Vec<_>>()
        };
        let requests = server.packets_received() - before;
        assert_eq!(next.len(), 1, "a try finds an item that is there: {next:?}");
        assert!(next[0] > 500, "{next:?} was taken already");
        assert!(
            requests < 50,
            "batch {batch}: {requests} requests for one item behind a stale listing"
        );
    }
}
