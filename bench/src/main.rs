//! Rust contestant of `make bench`: `zkrecipes-bench <workload> <connect> [n]`.
//!
//! Protocol shared by every contestant: set up, print `READY`, wait for a line
//! on stdin (the runner reads the server's counters meanwhile), run the measured
//! part, print one JSON line.

use std::io::BufRead;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use zkrecipes::{
    Client, ClientOptions, DistributedQueue, LatchEvent, LeaderElectionSupport, LeaderLatch,
    ReadWriteLock, Semaphore, Tls, Wait, WorkQueue, WorkQueueOptions, WriteLock,
};

fn ready() {
    println!("READY");
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).unwrap();
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

/// TLS when `ZKRECIPES_BENCH_TLS_CA` names a CA (section 10: the same workloads over TLS).
fn options() -> ClientOptions {
    ClientOptions {
        tls: std::env::var("ZKRECIPES_BENCH_TLS_CA").ok().map(Tls::new),
        ..ClientOptions::default()
    }
}

async fn connect(connect: &str) -> Client {
    Client::connect(connect, options()).await.expect("connect")
}

#[tokio::main]
async fn main() -> zkrecipes::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (workload, zk) = (args[1].as_str(), args[2].as_str());
    let n: usize = args.get(3).map(|s| s.parse().unwrap()).unwrap_or(2000);
    let root = format!("/bench/rust-{}", std::process::id());
    match workload {
        // 1. Uncontended acquire + release.
        "cycle" => {
            let client = connect(zk).await;
            let lock = WriteLock::new(&client, &format!("{root}/cycle"))?;
            for _ in 0..50 {
                lock.acquire().await?.release().await?;
            }
            ready();
            let mut samples = Vec::with_capacity(n);
            let started = Instant::now();
            for _ in 0..n {
                let t = Instant::now();
                lock.acquire().await?.release().await?;
                samples.push(t.elapsed());
            }
            println!(
                "{{\"ops\":{n},\"seconds\":{:.4},{}}}",
                started.elapsed().as_secs_f64(),
                summary(&mut samples)
            );
            client.close().await;
        }
        // 10. Connect (with the TLS handshake when TLS) and close, one at a time.
        "connect" => {
            ready();
            let mut samples = Vec::with_capacity(n);
            let started = Instant::now();
            for _ in 0..n {
                let t = Instant::now();
                let client = connect(zk).await;
                samples.push(t.elapsed());
                client.close().await;
            }
            println!(
                "{{\"ops\":{n},\"seconds\":{:.4},{}}}",
                started.elapsed().as_secs_f64(),
                summary(&mut samples)
            );
        }
        // 2. Try-acquire on a lock held by another client.
        "try" => {
            let (holder_client, client) = (connect(zk).await, connect(zk).await);
            let dir = format!("{root}/try");
            let _held = WriteLock::new(&holder_client, &dir)?.acquire().await?;
            let lock = WriteLock::new(&client, &dir)?;
            ready();
            let mut samples = Vec::with_capacity(n);
            let started = Instant::now();
            for _ in 0..n {
                let t = Instant::now();
                assert!(lock.try_acquire().await?.is_none());
                samples.push(t.elapsed());
            }
            println!(
                "{{\"ops\":{n},\"seconds\":{:.4},{}}}",
                started.elapsed().as_secs_f64(),
                summary(&mut samples)
            );
        }
        // 3. Contended: 8 clients x n acquisitions of one lock.
        "contended" => {
            let dir = format!("{root}/contended");
            let mut locks = Vec::new();
            for _ in 0..8 {
                locks.push(WriteLock::new(&connect(zk).await, &dir)?);
            }
            ready();
            let started = Instant::now();
            let inside = Arc::new(AtomicBool::new(false));
            let tasks: Vec<_> = locks
                .into_iter()
                .map(|lock| {
                    let inside = inside.clone();
                    tokio::spawn(async move {
                        for _ in 0..n {
                            let g = lock.acquire().await.unwrap();
                            assert!(!inside.swap(true, Ordering::SeqCst));
                            inside.store(false, Ordering::SeqCst);
                            g.release().await.unwrap();
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
            println!(
                "{{\"ops\":{},\"seconds\":{secs:.4},\"finish_s\":[{}]}}",
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
            ready();
            let started = Instant::now();
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
        // 5. Queue: drain n items with `consumers` consumers (offering is set-up).
        "queue" => {
            let consumers: usize = args.get(4).map(|s| s.parse().unwrap()).unwrap_or(1);
            let dir = format!("{root}/queue-{n}-{consumers}");
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
            ready();
            let started = Instant::now();
            let taken = Arc::new(AtomicUsize::new(0));
            let tasks: Vec<_> = queues
                .into_iter()
                .map(|q| {
                    let taken = taken.clone();
                    tokio::spawn(async move {
                        while q.poll().await.unwrap().is_some() {
                            taken.fetch_add(1, Ordering::SeqCst);
                        }
                    })
                })
                .collect();
            for t in tasks {
                t.await.unwrap();
            }
            let secs = started.elapsed().as_secs_f64();
            assert_eq!(taken.load(Ordering::SeqCst), n);
            println!("{{\"ops\":{n},\"seconds\":{secs:.4},\"offer_seconds\":{offer_secs:.4}}}");
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
            ready();
            let started = Instant::now();
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
            ready();
            let started = Instant::now();
            for chunk in items.chunks(1000) {
                q.offer_all(chunk).await?;
            }
            println!(
                "{{\"ops\":{n},\"seconds\":{:.4}}}",
                started.elapsed().as_secs_f64()
            );
        }
        // 6. Election: from the leader's stop() to the next member's ELECTED_COMPLETE.
        "election" => {
            let rounds = n;
            let mut samples = Vec::new();
            let (a, b) = (connect(zk).await, connect(zk).await);
            ready();
            let started = Instant::now();
            for round in 0..rounds {
                let election_root = format!("{root}/election-{round}");
                let first = LeaderElectionSupport::new(&a, &election_root, "a")?;
                let second = LeaderElectionSupport::new(&b, &election_root, "b")?;
                first.start().await?;
                second.start().await?;
                let mut events = second.subscribe();
                let t = Instant::now();
                first.stop().await?;
                while events.recv().await.unwrap().name() != "ELECTED_COMPLETE" {}
                samples.push(t.elapsed());
                second.stop().await?;
            }
            println!(
                "{{\"ops\":{rounds},\"seconds\":{:.4},{}}}",
                started.elapsed().as_secs_f64(),
                summary(&mut samples)
            );
        }
        // 11a. Semaphore: acquire + release of one lease of three, uncontended.
        "semaphore" => {
            let client = connect(zk).await;
            let semaphore = Semaphore::new(&client, &format!("{root}/semaphore"), 3)?;
            for _ in 0..50 {
                semaphore.acquire().await?.release().await?;
            }
            ready();
            let mut samples = Vec::with_capacity(n);
            let started = Instant::now();
            for _ in 0..n {
                let t = Instant::now();
                semaphore.acquire().await?.release().await?;
                samples.push(t.elapsed());
            }
            println!(
                "{{\"ops\":{n},\"seconds\":{:.4},{}}}",
                started.elapsed().as_secs_f64(),
                summary(&mut samples)
            );
            client.close().await;
        }
        // 11b. Latch hand-over: from the leader's close() to the next latch's IS_LEADER.
        "latch" => {
            let rounds = n;
            let mut samples = Vec::new();
            let (a, b) = (connect(zk).await, connect(zk).await);
            ready();
            let started = Instant::now();
            for round in 0..rounds {
                let path = format!("{root}/latch-{round}");
                let first = LeaderLatch::new(&a, &path, "a")?;
                first.start().await?;
                first.await_leadership(Wait::Forever).await?;
                let second = LeaderLatch::new(&b, &path, "b")?;
                let mut events = second.subscribe();
                // In line once start() returns.
                second.start().await?;
                let t = Instant::now();
                first.close().await?;
                while !matches!(events.recv().await, Ok(LatchEvent::IsLeader { .. })) {}
                samples.push(t.elapsed());
                second.close().await?;
            }
            println!(
                "{{\"ops\":{rounds},\"seconds\":{:.4},{}}}",
                started.elapsed().as_secs_f64(),
                summary(&mut samples)
            );
        }
        // 8a. Scale: n lock objects made (none acquired), then dropped.
        "objects" => {
            let client = connect(zk).await;
            ready();
            let started = Instant::now();
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
            ready();
            let started = Instant::now();
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
            ready();
            let started = Instant::now();
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
            ready();
            let rounds = 50;
            let mut samples = Vec::with_capacity(rounds);
            let started = Instant::now();
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
