//! Rust contestant of `make bench`: `zkrecipes-bench <workload> <connect> [n]`.
//!
//! Protocol shared by every contestant: set up, print `READY`, wait for a line
//! on stdin (the runner reads the server's counters meanwhile), run the measured
//! part, print one JSON line.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::BufRead;
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use zkrecipes::{
    Cache, CacheEvent, Client, ClientOptions, DistributedAtomicLong, DistributedQueue, LatchEvent,
    LeaderElectionSupport, LeaderLatch, ReadWriteLock, Semaphore, ServiceDiscovery,
    ServiceInstance, Tls, Wait, WorkQueue, WorkQueueOptions, WriteLock,
};
use zookeeper_client as zk;

/// The system allocator, counting the bytes allocated and not yet freed while `COUNTING` (set
/// at the start of section 12's cache workload only: the other workloads pay one load of a
/// flag). Section 12's live heap per cached node is the growth of `LIVE`.
struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static LIVE: AtomicIsize = AtomicIsize::new(0);

fn count(bytes: isize) {
    if COUNTING.load(Ordering::Relaxed) {
        LIVE.fetch_add(bytes, Ordering::Relaxed);
    }
}

// SAFETY: every call goes to `System` as is; the counting only reads the sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let ptr = System.alloc(layout);
        if !ptr.is_null() {
            count(layout.size() as isize);
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let ptr = System.alloc_zeroed(layout);
        if !ptr.is_null() {
            count(layout.size() as isize);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        count(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let moved = System.realloc(ptr, layout, new_size);
        if !moved.is_null() {
            count(new_size as isize - layout.size() as isize);
        }
        moved
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Prints READY and waits for the runner's line (it reads the server's counters meanwhile); the
/// measured part starts at the instant returned.
fn ready() -> Instant {
    println!("READY");
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).unwrap();
    Instant::now()
}

/// The measured cycles asked for on stdin after READY: `GO`, one burst of
/// `n`; or bursts `RUN k`, each answered `OK <its median ms>`, until `END`
/// (run.py interleaves two contestants' bursts in section 7).
struct Bursts {
    n: usize,
    answer: bool,
    done: bool,
}

impl Bursts {
    fn new(n: usize) -> Bursts {
        Bursts {
            n,
            answer: false,
            done: false,
        }
    }

    /// How many cycles to run next (`None`: no more).
    fn next(&mut self) -> Option<usize> {
        if self.done {
            return None;
        }
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line).unwrap();
        let mut words = line.split_whitespace();
        match words.next() {
            Some("RUN") => {
                self.answer = true;
                // `RUN 0` is answered `OK 0`, as in the other languages.
                Some(
                    words
                        .next()
                        .and_then(|k| k.parse().ok())
                        .expect("RUN <count>"),
                )
            }
            Some("END") | None => None,
            _ => {
                self.done = true;
                Some(self.n)
            }
        }
    }

    /// A burst ran, with these samples.
    fn ran(&self, burst: &[Duration]) {
        if self.answer {
            let mut sorted = burst.to_vec();
            sorted.sort();
            let median = sorted.get(sorted.len() / 2).copied().unwrap_or_default();
            println!("OK {:.4}", median.as_secs_f64() * 1000.0);
        }
    }
}

/// Resident memory of this process in bytes (Linux).
fn rss() -> i64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: i64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

fn summary(samples: &mut [Duration]) -> String {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let n = samples.len();
    if n == 0 {
        return "\"median_ms\":null,\"p99_ms\":null".into();
    }
    format!(
        "\"median_ms\":{:.4},\"p99_ms\":{:.4}",
        ms(samples[n / 2]),
        ms(samples[(n * 99 / 100).min(n - 1)])
    )
}

/// The result line of a latency workload: `ops` operations since `started`, the samples' median
/// and p99.
fn print_latency(ops: usize, started: Instant, samples: &mut [Duration]) {
    println!(
        "{{\"ops\":{ops},\"seconds\":{:.4},{}}}",
        started.elapsed().as_secs_f64(),
        summary(samples)
    );
}

/// TLS when `ZKRECIPES_BENCH_TLS_CA` names a CA (section 10: the same workloads over TLS).
/// `ZKRECIPES_BENCH_OBSERVE`: `off` records no metrics and forwards no events; `on` records
/// metrics and forwards events at info to a sink that formats each one as a log line (what a
/// binding's logging does, minus the host); unset is the default (metrics on, no subscriber).
fn options() -> ClientOptions {
    let observe = std::env::var("ZKRECIPES_BENCH_OBSERVE").ok();
    if observe.as_deref() == Some("on") {
        static FORWARDING: std::sync::Once = std::sync::Once::new();
        FORWARDING.call_once(|| {
            use zkrecipes::ffi::log;
            log::set_level("zkrecipes", log::LogLevel::Info);
            log::forward_to(Arc::new(|record: log::LogRecord| {
                std::hint::black_box(format!(
                    "{} {}: {} {:?}",
                    record.level.as_str(),
                    record.logger,
                    record.message,
                    record.fields
                ));
            }));
        });
    }
    ClientOptions {
        tls: std::env::var("ZKRECIPES_BENCH_TLS_CA").ok().map(Tls::new),
        metrics: observe.as_deref() != Some("off"),
        ..ClientOptions::default()
    }
}

/// An instance of the service `bench`, as the discovery workloads register it.
fn bench_instance(id: &str, port: u16) -> ServiceInstance {
    let mut instance = ServiceInstance::new("bench");
    instance.id = id.to_string();
    instance.address = Some("127.0.0.1".into());
    instance.port = Some(port);
    instance
}

async fn connect(connect: &str) -> Client {
    Client::connect(connect, options()).await.expect("connect")
}

fn open() -> zk::CreateOptions<'static> {
    zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all())
}

/// Section 12's tree at `tree`: `parents` nodes under it with `children` leaves each, data of
/// at most 10 bytes, one transaction per parent (as the other contestants build it); a plain
/// ZooKeeper client of its own (set-up, not measured). The number of nodes, `tree` included.
async fn build_tree(zk_connect: &str, tree: &str, parents: usize, children: usize) -> usize {
    let raw = zk::Client::connect(zk_connect).await.expect("connect");
    let mut path = String::new();
    for part in tree.split('/').filter(|p| !p.is_empty()) {
        path = format!("{path}/{part}");
        match raw.create(&path, &[], &open()).await {
            Ok(_) | Err(zk::Error::NodeExists) => {}
            Err(err) => panic!("create {path}: {err}"),
        }
    }
    let commits: Vec<_> = (0..parents)
        .map(|p| {
            let (raw, tree) = (raw.clone(), tree.to_string());
            tokio::spawn(async move {
                let mut multi = raw.new_multi_writer();
                let parent = leaf_parent(&tree, p);
                multi
                    .add_create(&parent, format!("parent-{p:03}").as_bytes(), &open())
                    .unwrap();
                for c in 0..children {
                    let data = format!("data-{:05}", p * children + c);
                    multi
                        .add_create(&format!("{parent}/c-{c:03}"), data.as_bytes(), &open())
                        .unwrap();
                }
                multi.commit().await.expect("the tree's transaction");
            })
        })
        .collect();
    for commit in commits {
        commit.await.unwrap();
    }
    1 + parents + parents * children
}

fn leaf_parent(tree: &str, p: usize) -> String {
    format!("{tree}/p-{p:03}")
}

/// Leaf `i` of the tree, spread over the parents (distinct for `i < parents * children`).
fn leaf(tree: &str, parents: usize, i: usize) -> String {
    format!("{}/c-{:03}", leaf_parent(tree, i % parents), i / parents)
}

/// Sets `data` on `path` through `writer`: the time from the setData to the cache's CHANGED
/// event of that node with that data (whether the reply comes before or after it).
async fn change(
    writer: &zk::Client,
    events: &mut tokio::sync::mpsc::UnboundedReceiver<CacheEvent>,
    path: &str,
    data: &str,
) -> Duration {
    let t = Instant::now();
    let seen = async {
        loop {
            match events.recv().await.expect("the cache goes on") {
                CacheEvent::Changed { new, .. }
                    if new.path == path && new.data == data.as_bytes() =>
                {
                    return t.elapsed();
                }
                _ => {}
            }
        }
    };
    let (written, seen) = tokio::join!(writer.set_data(path, data.as_bytes(), None), seen);
    written.expect("setData");
    seen
}

/// One round of section 6: `a`'s member leads, `b`'s waits; the time from `a`'s stop() to `b`'s
/// ELECTED_COMPLETE.
async fn election_hand_over(a: &Client, b: &Client, root: &str) -> zkrecipes::Result<Duration> {
    let first = LeaderElectionSupport::new(a, root, "a")?;
    let second = LeaderElectionSupport::new(b, root, "b")?;
    first.start().await?;
    second.start().await?;
    let mut events = second.subscribe();
    let t = Instant::now();
    first.stop().await?;
    while events.recv().await.unwrap().name() != "ELECTED_COMPLETE" {}
    let took = t.elapsed();
    second.stop().await?;
    Ok(took)
}

/// One round of section 11b: `a`'s latch leads, `b`'s is in line; the time from `a`'s close()
/// to `b`'s IS_LEADER.
async fn latch_hand_over(a: &Client, b: &Client, path: &str) -> zkrecipes::Result<Duration> {
    let first = LeaderLatch::new(a, path, "a")?;
    first.start().await?;
    first.await_leadership(Wait::Forever).await?;
    let second = LeaderLatch::new(b, path, "b")?;
    let mut events = second.subscribe();
    // In line once start() returns.
    second.start().await?;
    let t = Instant::now();
    first.close().await?;
    while !matches!(events.recv().await, Ok(LatchEvent::IsLeader { .. })) {}
    let took = t.elapsed();
    second.close().await?;
    Ok(took)
}

/// Unmeasured cycles before the measured ones (set by run.py, the same in every language).
fn warmup() -> usize {
    std::env::var("ZKRECIPES_BENCH_WARMUP")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1000)
}

#[tokio::main]
async fn main() -> zkrecipes::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (workload, zk) = (args[1].as_str(), args[2].as_str());
    let n: usize = args.get(3).map(|s| s.parse().unwrap()).unwrap_or(2000);
    let root = format!("/bench/rust-{}", std::process::id());
    if workload == "cache" {
        COUNTING.store(true, Ordering::Relaxed);
    }
    match workload {
        // 1. Uncontended acquire + release.
        "cycle" => {
            let client = connect(zk).await;
            let lock = WriteLock::new(&client, &format!("{root}/cycle"))?;
            for _ in 0..warmup() {
                lock.acquire().await?.release().await?;
            }
            println!("READY");
            let mut samples = Vec::with_capacity(n);
            let started = Instant::now();
            let mut bursts = Bursts::new(n);
            while let Some(burst) = bursts.next() {
                let from = samples.len();
                for _ in 0..burst {
                    let t = Instant::now();
                    lock.acquire().await?.release().await?;
                    samples.push(t.elapsed());
                }
                bursts.ran(&samples[from..]);
            }
            let measured: Duration = samples.iter().sum();
            // Between bursts the other contestant runs: only the cycles count.
            let seconds = if bursts.answer {
                measured
            } else {
                started.elapsed()
            };
            println!(
                "{{\"ops\":{},\"seconds\":{:.4},{}}}",
                samples.len(),
                seconds.as_secs_f64(),
                summary(&mut samples)
            );
            client.close().await;
        }
        // 10. Connect (with the TLS handshake when TLS) and close, one at a time.
        "connect" => {
            let mut samples = Vec::with_capacity(n);
            let started = ready();
            for _ in 0..n {
                let t = Instant::now();
                let client = connect(zk).await;
                samples.push(t.elapsed());
                client.close().await;
            }
            print_latency(n, started, &mut samples);
        }
        // 2. Try-acquire on a lock held by another client.
        "try" => {
            let (holder_client, client) = (connect(zk).await, connect(zk).await);
            let dir = format!("{root}/try");
            let _held = WriteLock::new(&holder_client, &dir)?.acquire().await?;
            let lock = WriteLock::new(&client, &dir)?;
            let mut samples = Vec::with_capacity(n);
            let started = ready();
            for _ in 0..n {
                let t = Instant::now();
                assert!(lock.try_acquire().await?.is_none());
                samples.push(t.elapsed());
            }
            print_latency(n, started, &mut samples);
        }
        // 3. Contended: 8 clients x n acquisitions of one lock.
        "contended" => {
            let dir = format!("{root}/contended");
            let mut locks = Vec::new();
            for _ in 0..8 {
                locks.push(WriteLock::new(&connect(zk).await, &dir)?);
            }
            let started = ready();
            let inside = Arc::new(AtomicBool::new(false));
            // Where a hand-off's time goes: when each acquire returned, and when each release
            // was called and returned (its delete's round trip).
            let acquired = Arc::new(std::sync::Mutex::new(Vec::new()));
            let releases = Arc::new(std::sync::Mutex::new(Vec::new()));
            let tasks: Vec<_> = locks
                .into_iter()
                .map(|lock| {
                    let (inside, acquired, releases) =
                        (inside.clone(), acquired.clone(), releases.clone());
                    tokio::spawn(async move {
                        for _ in 0..n {
                            let g = lock.acquire().await.unwrap();
                            acquired.lock().unwrap().push(started.elapsed());
                            assert!(!inside.swap(true, Ordering::SeqCst));
                            inside.store(false, Ordering::SeqCst);
                            let release = started.elapsed();
                            g.release().await.unwrap();
                            releases.lock().unwrap().push((release, started.elapsed()));
                        }
                        started.elapsed().as_secs_f64()
                    })
                })
                .collect();
            let mut finish = Vec::new();
            for t in tasks {
                finish.push(format!("{:.4}", t.await.unwrap()));
            }
            let secs = started.elapsed().as_secs_f64();
            let (handoff_ms, delete_ms) =
                hand_off_phases(&acquired.lock().unwrap(), &releases.lock().unwrap());
            println!(
                "{{\"ops\":{},\"seconds\":{secs:.4},\"finish_s\":[{}],\"handoff_median_ms\":{handoff_ms:.4},\"release_median_ms\":{delete_ms:.4}}}",
                8 * n,
                finish.join(",")
            );
        }
        // 4. Read-heavy read/write lock: 8 readers loop while 1 writer does n writes.
        "rw" => {
            let dir = format!("{root}/rw");
            let mut readers = Vec::new();
            for _ in 0..8 {
                readers.push(ReadWriteLock::new(&connect(zk).await, &dir)?);
            }
            let writer = ReadWriteLock::new(&connect(zk).await, &dir)?;
            let started = ready();
            let stop = Arc::new(AtomicBool::new(false));
            let reads = Arc::new(AtomicUsize::new(0));
            let tasks: Vec<_> = readers
                .into_iter()
                .map(|rw| {
                    let (stop, reads) = (stop.clone(), reads.clone());
                    tokio::spawn(async move {
                        while !stop.load(Ordering::SeqCst) {
                            rw.read_lock()
                                .acquire()
                                .await
                                .unwrap()
                                .release()
                                .await
                                .unwrap();
                            reads.fetch_add(1, Ordering::SeqCst);
                        }
                    })
                })
                .collect();
            let mut samples = Vec::new();
            for _ in 0..n {
                let t = Instant::now();
                writer.write_lock().acquire().await?.release().await?;
                samples.push(t.elapsed());
            }
            stop.store(true, Ordering::SeqCst);
            for t in tasks {
                t.await.unwrap();
            }
            let secs = started.elapsed().as_secs_f64();
            let reads = reads.load(Ordering::SeqCst);
            println!(
                "{{\"ops\":{},\"seconds\":{secs:.4},\"reads\":{reads},\"writes\":{n},\"writer\":{{{}}}}}",
                reads + n,
                summary(&mut samples)
            );
        }
        // 5. Queue: drain n items with `consumers` consumers (offering is set-up), each taking
        // one item at a time, or `batch` at a time (`poll_many`) when given.
        "queue" => {
            let consumers: usize = args.get(4).map(|s| s.parse().unwrap()).unwrap_or(1);
            let batch: usize = args.get(5).map(|s| s.parse().unwrap()).unwrap_or(0);
            let dir = format!("{root}/queue-{n}-{consumers}-{batch}");
            let producer = connect(zk).await;
            let q = DistributedQueue::new(&producer, &dir)?;
            let offer_started = Instant::now();
            let items: Vec<usize> = (0..n).collect();
            for chunk in items.chunks(64) {
                let offers: Vec<_> = chunk
                    .iter()
                    .map(|&i| {
                        let q = q.clone();
                        tokio::spawn(async move { q.offer(format!("item-{i}").as_bytes()).await })
                    })
                    .collect();
                for o in offers {
                    o.await.unwrap()?;
                }
            }
            let offer_secs = offer_started.elapsed().as_secs_f64();
            let mut queues = Vec::new();
            for _ in 0..consumers {
                queues.push(DistributedQueue::new(&connect(zk).await, &dir)?);
            }
            let started = ready();
            // Each item's sequence, in the order the items were delivered (across consumers).
            let delivered = Arc::new(std::sync::Mutex::new(Vec::with_capacity(n)));
            let tasks: Vec<_> = queues
                .into_iter()
                .map(|q| {
                    let delivered = delivered.clone();
                    tokio::spawn(async move {
                        let record = |items: &[zkrecipes::Item]| {
                            let mut delivered = delivered.lock().unwrap();
                            delivered.extend(items.iter().map(|item| sequence_of(&item.name)));
                        };
                        if batch > 0 {
                            loop {
                                let items = q.poll_many(batch).await.unwrap();
                                if items.is_empty() {
                                    break;
                                }
                                record(&items);
                            }
                        } else {
                            while let Some(item) = q.poll_item().await.unwrap() {
                                record(std::slice::from_ref(&item));
                            }
                        }
                    })
                })
                .collect();
            for t in tasks {
                t.await.unwrap();
            }
            let secs = started.elapsed().as_secs_f64();
            let delivered = delivered.lock().unwrap();
            assert_eq!(delivered.len(), n);
            println!(
                "{{\"ops\":{n},\"seconds\":{secs:.4},\"offer_seconds\":{offer_secs:.4},\"overtaken_max\":{}}}",
                most_overtaken(&delivered)
            );
        }
        // 9. At-least-once work queue: drain of n items by `consumers`, each
        // claiming `prefetch` per transaction and acknowledging as it goes
        // (acks of one consumer are committed together while one is in flight).
        "workqueue" => {
            let consumers: usize = args.get(4).map(|s| s.parse().unwrap()).unwrap_or(1);
            let prefetch: usize = args.get(5).map(|s| s.parse().unwrap()).unwrap_or(64);
            // Milliseconds of work per job (waiting, as for I/O), one job in
            // hand per consumer: what several consumers are for.
            let work_ms: u64 = args.get(6).map(|s| s.parse().unwrap()).unwrap_or(0);
            let path = format!("{root}/work-{n}-{consumers}-{prefetch}-{work_ms}");
            let producer = WorkQueue::new(&connect(zk).await, &path)?;
            let items: Vec<String> = (0..n).map(|i| format!("item-{i}")).collect();
            producer.offer_all(&items).await?;
            let options = WorkQueueOptions {
                prefetch,
                ..Default::default()
            };
            let mut queues = Vec::new();
            for _ in 0..consumers {
                queues.push(WorkQueue::with_options(
                    &connect(zk).await,
                    &path,
                    options.clone(),
                )?);
            }
            let started = ready();
            let tasks: Vec<_> = queues
                .into_iter()
                .map(|q| {
                    tokio::spawn(async move {
                        let mut acks = tokio::task::JoinSet::new();
                        let mut done = 0;
                        while let Some(job) = q.consume(Some(Duration::ZERO)).await.unwrap() {
                            if work_ms > 0 {
                                tokio::time::sleep(Duration::from_millis(work_ms)).await;
                            }
                            acks.spawn(job.ack());
                            done += 1;
                            // Acks in flight are bounded like a worker pool's.
                            while acks.len() > prefetch {
                                acks.join_next().await.unwrap().unwrap().unwrap();
                            }
                        }
                        while let Some(ack) = acks.join_next().await {
                            ack.unwrap().unwrap();
                        }
                        done
                    })
                })
                .collect();
            let mut total = 0;
            for t in tasks {
                total += t.await.unwrap();
            }
            assert_eq!(total, n);
            println!(
                "{{\"ops\":{n},\"seconds\":{:.4}}}",
                started.elapsed().as_secs_f64()
            );
        }
        // 9b. Batched offers: n items in `offer_all` calls of 1,000.
        "offerall" => {
            let q = WorkQueue::new(&connect(zk).await, &format!("{root}/offer-all"))?;
            let items: Vec<String> = (0..n).map(|i| format!("item-{i}")).collect();
            let started = ready();
            for chunk in items.chunks(1000) {
                q.offer_all(chunk).await?;
            }
            println!(
                "{{\"ops\":{n},\"seconds\":{:.4}}}",
                started.elapsed().as_secs_f64()
            );
        }
        // 6. Election: from the leader's stop() to the next member's ELECTED_COMPLETE; 11b. latch
        // hand-over: from the leader's close() to the next latch's IS_LEADER.
        "election" | "latch" => {
            let (a, b) = (connect(zk).await, connect(zk).await);
            let mut samples = Vec::with_capacity(n);
            let started = ready();
            for round in 0..n {
                let path = format!("{root}/{workload}-{round}");
                samples.push(if workload == "election" {
                    election_hand_over(&a, &b, &path).await?
                } else {
                    latch_hand_over(&a, &b, &path).await?
                });
            }
            print_latency(n, started, &mut samples);
        }
        // 14a. Service discovery: register + unregister of one DYNAMIC instance (Curator's
        // layout and JSON), uncontended.
        "register" => {
            let client = connect(zk).await;
            let discovery = ServiceDiscovery::new(&client, &format!("{root}/services"))?;
            let instance = bench_instance("one", 8080);
            for _ in 0..50 {
                discovery.register(instance.clone()).await?;
                discovery.unregister("bench", "one").await?;
            }
            let mut samples = Vec::with_capacity(n);
            let started = ready();
            for _ in 0..n {
                let t = Instant::now();
                discovery.register(instance.clone()).await?;
                discovery.unregister("bench", "one").await?;
                samples.push(t.elapsed());
            }
            print_latency(n, started, &mut samples);
            discovery.close().await?;
            client.close().await;
        }
        // 14b. `query_for_instances` of a service of `instances` instances (registered by
        // another client), read now from the server.
        "discover" => {
            let instances: usize = args.get(4).map(|s| s.parse().unwrap()).unwrap_or(20);
            let base = format!("{root}/services");
            let registrant = connect(zk).await;
            let registry = ServiceDiscovery::new(&registrant, &base)?;
            for i in 0..instances {
                registry
                    .register(bench_instance(&format!("i{i}"), 8000 + i as u16))
                    .await?;
            }
            let client = connect(zk).await;
            let discovery = ServiceDiscovery::new(&client, &base)?;
            for _ in 0..20 {
                discovery.query_for_instances("bench").await?;
            }
            let mut samples = Vec::with_capacity(n);
            let started = ready();
            for _ in 0..n {
                let t = Instant::now();
                let found = discovery.query_for_instances("bench").await?;
                samples.push(t.elapsed());
                assert_eq!(found.len(), instances, "every instance found");
            }
            print_latency(n, started, &mut samples);
            registry.close().await?;
            client.close().await;
            registrant.close().await;
        }
        // 14c. A service cache's view of a change: another client updates an instance (its
        // port); the time until this client's cache tells CHANGED with the new port.
        "servicecache" => {
            let base = format!("{root}/services");
            let registrant = connect(zk).await;
            let registry = ServiceDiscovery::new(&registrant, &base)?;
            registry.register(bench_instance("one", 1)).await?;
            let client = connect(zk).await;
            let discovery = ServiceDiscovery::new(&client, &base)?;
            let cache = discovery.service_cache("bench")?;
            cache.start().await?;
            let mut events = cache.subscribe();
            let mut port = 1u16;
            let mut samples = Vec::with_capacity(n);
            let mut started = Instant::now();
            for round in 0..20 + n {
                if round == 20 {
                    started = ready();
                }
                port = port % 60000 + 1;
                let t = Instant::now();
                registry.update(bench_instance("one", port)).await?;
                loop {
                    match events.recv().await {
                        Some(zkrecipes::ServiceCacheEvent::Changed { new, .. })
                            if new.port == Some(port) =>
                        {
                            break
                        }
                        Some(_) => {}
                        None => panic!("the service cache ended"),
                    }
                }
                if round >= 20 {
                    samples.push(t.elapsed());
                }
            }
            print_latency(n, started, &mut samples);
            cache.close();
            registry.close().await?;
            client.close().await;
            registrant.close().await;
        }
        // 11a. Semaphore: acquire + release of one lease of three, uncontended.
        "semaphore" => {
            let client = connect(zk).await;
            let semaphore = Semaphore::new(&client, &format!("{root}/semaphore"), 3)?;
            for _ in 0..50 {
                semaphore.acquire().await?.release().await?;
            }
            let mut samples = Vec::with_capacity(n);
            let started = ready();
            for _ in 0..n {
                let t = Instant::now();
                semaphore.acquire().await?.release().await?;
                samples.push(t.elapsed());
            }
            print_latency(n, started, &mut samples);
            client.close().await;
        }
        // 12a. Atomic long: `clients` clients (a session each) increment one counter n times
        // each, at once; every increment's value is distinct and the last one is exact.
        "atomic" => {
            let clients: usize = args.get(4).map(|s| s.parse().unwrap()).unwrap_or(4);
            let path = format!("{root}/atomic");
            let mut counters = Vec::new();
            for _ in 0..clients {
                counters.push(DistributedAtomicLong::new(&connect(zk).await, &path)?);
            }
            let warm_up = DistributedAtomicLong::new(&connect(zk).await, &format!("{root}/warm"))?;
            for _ in 0..50 {
                warm_up.increment().await?;
            }
            // The node exists before the measured part (no create in it).
            counters[0].force_set(0).await?;
            let started = ready();
            let tasks: Vec<_> = counters
                .iter()
                .cloned()
                .map(|counter| {
                    tokio::spawn(async move {
                        let mut seen = Vec::with_capacity(n);
                        let mut samples = Vec::with_capacity(n);
                        for _ in 0..n {
                            let t = Instant::now();
                            seen.push(counter.increment().await.unwrap().post_value);
                            samples.push(t.elapsed());
                        }
                        (seen, samples)
                    })
                })
                .collect();
            let (mut seen, mut samples) = (Vec::new(), Vec::new());
            for task in tasks {
                let (s, d) = task.await.unwrap();
                seen.extend(s);
                samples.extend(d);
            }
            let secs = started.elapsed().as_secs_f64();
            let total = (clients * n) as i64;
            seen.sort_unstable();
            assert!(
                seen.iter().copied().eq(1..=total),
                "the increments returned duplicate or missing values"
            );
            let last = counters[0].get().await?;
            assert_eq!(last, total, "the counter's final value");
            println!(
                "{{\"ops\":{total},\"seconds\":{secs:.4},\"clients\":{clients},\"final\":{last},{}}}",
                summary(&mut samples)
            );
        }
        // 12b. Tree cache, initial load of a `parents` × `children` tree: memory per node of
        // the process's first cache (held; live heap and RSS), then `rounds` loads from start()
        // to loaded.
        "cache" => {
            let parents = n;
            let children: usize = args.get(4).map(|s| s.parse().unwrap()).unwrap_or(100);
            let rounds: usize = args.get(5).map(|s| s.parse().unwrap()).unwrap_or(5);
            let tree = format!("{root}/tree");
            let nodes = build_tree(zk, &tree, parents, children).await;
            let client = connect(zk).await;
            let (before, heap_before) = (rss(), LIVE.load(Ordering::Relaxed));
            let t = Instant::now();
            let cache = Cache::tree(&client, &tree, None)?;
            cache.start().await?;
            let cold = t.elapsed();
            let (held, heap_held) = (rss(), LIVE.load(Ordering::Relaxed));
            assert_eq!(cache.len(), nodes);
            cache.close();
            let mut samples = Vec::with_capacity(rounds);
            let started = ready();
            for _ in 0..rounds {
                let t = Instant::now();
                let cache = Cache::tree(&client, &tree, None)?;
                cache.start().await?;
                samples.push(t.elapsed());
                assert_eq!(cache.len(), nodes);
                cache.close();
            }
            let secs = started.elapsed().as_secs_f64();
            let each: Vec<String> = samples
                .iter()
                .map(|d| format!("{:.1}", d.as_secs_f64() * 1000.0))
                .collect();
            println!(
                "{{\"ops\":{},\"seconds\":{secs:.4},\"nodes\":{nodes},\"rounds\":{rounds},\"rounds_ms\":[{}],\
                 \"cold_ms\":{:.1},\"heap_bytes_per_node\":{:.0},\"rss_bytes_per_node\":{:.0},{}}}",
                rounds * nodes,
                each.join(","),
                cold.as_secs_f64() * 1000.0,
                (heap_held - heap_before) as f64 / nodes as f64,
                (held - before) as f64 / nodes as f64,
                summary(&mut samples)
            );
            client.close().await;
        }
        // 12c. Cache events: from another client's setData to the tree cache's CHANGED event
        // of that node, n changes one after another (distinct leaves).
        "cacheevents" => {
            let parents: usize = args.get(4).map(|s| s.parse().unwrap()).unwrap_or(100);
            let children: usize = args.get(5).map(|s| s.parse().unwrap()).unwrap_or(100);
            let tree = format!("{root}/tree");
            build_tree(zk, &tree, parents, children).await;
            let client = connect(zk).await;
            let writer = zk::Client::connect(zk).await.expect("connect");
            let cache = Cache::tree(&client, &tree, None)?;
            cache.start().await?;
            let mut events = cache.subscribe();
            let leaves = parents * children;
            let warm_up = 10.min(leaves.saturating_sub(n));
            for j in 0..warm_up {
                let path = leaf(&tree, parents, leaves - 1 - j);
                change(&writer, &mut events, &path, &format!("warm-{j}")).await;
            }
            let mut samples = Vec::with_capacity(n);
            let started = ready();
            for i in 0..n {
                let path = leaf(&tree, parents, i);
                samples.push(change(&writer, &mut events, &path, &format!("change-{i:05}")).await);
            }
            println!(
                "{{\"ops\":{n},\"seconds\":{:.4},\"nodes\":{},{}}}",
                started.elapsed().as_secs_f64(),
                cache.len(),
                summary(&mut samples)
            );
            cache.close();
            client.close().await;
        }
        // 8a. Scale: n lock objects made (none acquired), then dropped.
        "objects" => {
            let client = connect(zk).await;
            let started = ready();
            let before = rss();
            let locks: Vec<WriteLock> = (0..n)
                .map(|i| WriteLock::new(&client, &format!("{root}/objects/l-{i}")))
                .collect::<zkrecipes::Result<_>>()?;
            let peak = rss();
            drop(locks);
            let after = rss();
            println!(
                "{{\"ops\":{n},\"seconds\":{:.4},\"bytes_per_object\":{:.0},\"retained_mb\":{:.1}}}",
                started.elapsed().as_secs_f64(),
                (peak - before) as f64 / n as f64,
                (after - before) as f64 / 1e6
            );
            client.close().await;
        }
        // 8b. Scale: n distinct locks held at once by one client (each one's
        // object and its hold).
        "held" => {
            let client = connect(zk).await;
            let started = ready();
            let before = rss();
            let mut guards = Vec::with_capacity(n);
            for i in 0..n {
                let lock = WriteLock::new(&client, &format!("{root}/held/l-{i}"))?;
                guards.push(lock.acquire().await?);
            }
            let held = rss();
            println!(
                "{{\"ops\":{n},\"seconds\":{:.4},\"bytes_per_held_lock\":{:.0}}}",
                started.elapsed().as_secs_f64(),
                (held - before) as f64 / n as f64
            );
            for guard in guards {
                guard.release().await?;
            }
            client.close().await;
        }
        // 8c. Scale: n waiters queued on one lock (over 10 clients), then the
        // chain of hand-offs. Memory per waiter while they wait.
        "herd" => {
            let dir = format!("{root}/herd");
            let mut clients = Vec::new();
            for _ in 0..10 {
                clients.push(connect(zk).await);
            }
            let holder = WriteLock::new(&clients[0], &dir)?.acquire().await?;
            let before = rss();
            let (queued_tx, mut queued) = tokio::sync::mpsc::unbounded_channel();
            let waiters: Vec<_> = (0..n)
                .map(|i| {
                    let lock = WriteLock::new(&clients[i % 10], &dir).unwrap();
                    let queued = queued_tx.clone();
                    tokio::spawn(async move {
                        let acquiring = lock.acquire();
                        tokio::pin!(acquiring);
                        // Queued once its node exists: give the create a moment.
                        let guard = tokio::select! {
                            g = &mut acquiring => g,
                            _ = tokio::time::sleep(Duration::from_millis(200)) => {
                                let _ = queued.send(());
                                acquiring.await
                            }
                        };
                        guard.unwrap().release().await.unwrap();
                    })
                })
                .collect();
            for _ in 0..n {
                queued.recv().await;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
            let waiting = rss();
            let started = ready();
            holder.release().await?;
            for w in waiters {
                w.await.unwrap();
            }
            println!(
                "{{\"ops\":{n},\"seconds\":{:.4},\"bytes_per_waiter\":{:.0},\"rss_mb\":{:.1}}}",
                started.elapsed().as_secs_f64(),
                (waiting - before) as f64 / n as f64,
                waiting as f64 / 1e6
            );
        }
        // 8d. Scale: `size()` of a queue with an n-item backlog.
        "size" => {
            let client = connect(zk).await;
            let q = DistributedQueue::new(&client, &format!("{root}/deep"))?;
            let items: Vec<usize> = (0..n).collect();
            for chunk in items.chunks(256) {
                let offers: Vec<_> = chunk
                    .iter()
                    .map(|_| {
                        let q = q.clone();
                        tokio::spawn(async move { q.offer(b"item").await })
                    })
                    .collect();
                for o in offers {
                    o.await.unwrap()?;
                }
            }
            let rounds = 50;
            let mut samples = Vec::with_capacity(rounds);
            let started = ready();
            for _ in 0..rounds {
                let t = Instant::now();
                assert_eq!(q.size().await?, n);
                samples.push(t.elapsed());
            }
            println!(
                "{{\"ops\":{rounds},\"seconds\":{:.4},\"backlog\":{n},{}}}",
                started.elapsed().as_secs_f64(),
                summary(&mut samples)
            );
            client.close().await;
        }
        other => panic!("unknown workload {other}"),
    }
    Ok(())
}

/// The medians of a contended lock's hand-off (from a holder's release call to the next
/// acquire's return) and of the release call itself (its delete's round trip), in ms. The lock
/// excludes, so the next acquisition after a release began is the one that release handed to.
fn hand_off_phases(acquired: &[Duration], releases: &[(Duration, Duration)]) -> (f64, f64) {
    let mut acquired = acquired.to_vec();
    acquired.sort_unstable();
    let mut handoffs = Vec::new();
    let mut deletes = Vec::new();
    for &(called, returned) in releases {
        deletes.push((returned - called).as_secs_f64() * 1000.0);
        let next = acquired.partition_point(|&at| at < called);
        if let Some(&at) = acquired.get(next) {
            handoffs.push((at - called).as_secs_f64() * 1000.0);
        }
    }
    (median(&mut handoffs), median(&mut deletes))
}

fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_unstable_by(f64::total_cmp);
    values[values.len() / 2]
}

/// An item's sequence from its node name (`qn-0000000042`).
fn sequence_of(name: &str) -> i64 {
    name.rsplit('-')
        .next()
        .and_then(|digits| digits.parse().ok())
        .expect("a queue item's name ends in its sequence")
}

/// The queue's order bound as measured: the most later items (higher sequences) any item saw
/// delivered before it. `delivered` is the sequences in delivery order; O(n log n) with a
/// Fenwick tree over the items' ranks.
fn most_overtaken(delivered: &[i64]) -> usize {
    let mut sorted = delivered.to_vec();
    sorted.sort_unstable();
    let n = sorted.len();
    let mut tree = vec![0usize; n + 1];
    let mut worst = 0;
    for (seen, sequence) in delivered.iter().enumerate() {
        let rank = sorted.binary_search(sequence).expect("delivered once") + 1;
        // Delivered so far with a rank at most this one's.
        let (mut at, mut lower) = (rank, 0);
        while at > 0 {
            lower += tree[at];
            at &= at - 1;
        }
        worst = worst.max(seen - lower);
        let mut at = rank;
        while at <= n {
            tree[at] += 1;
            at += at & at.wrapping_neg();
        }
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::most_overtaken;

    #[test]
    fn counts_the_later_items_delivered_before_each() {
        assert_eq!(most_overtaken(&[]), 0);
        assert_eq!(most_overtaken(&[10, 11, 12]), 0);
        // 10 comes after 12 and 11.
        assert_eq!(most_overtaken(&[12, 11, 10]), 2);
        assert_eq!(most_overtaken(&[11, 12, 13, 10, 14]), 3);
    }
}
