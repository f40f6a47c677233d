//! Work-queue operations: a producer offering jobs one at a time and in
//! batches (some of them poison: every consumer gives those back, so that
//! `max_deliveries` and `dead/` are exercised), and consumers on a shared
//! object and on private ones of random prefetch, consuming with timeouts
//! from 0 to a few round trips, cancelling a consume mid-wait, closing an
//! object mid-consume, and settling each job by ack, nack, an unsettled
//! drop, a cancelled ack, or a slow ack that watches `lost()`.
//! Every job's data is its id (`<worker>-j<n>`, `p` appended for poison).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use fastrand::Rng;
use zkrecipes::{Delivery, ErrorCode, WorkQueue, WorkQueueOptions};

use super::{backed_up, begin, breathe, cancel_after, counted_call, pick, timeout};
use crate::resource::Link;
use crate::worker::{is_timeout, now_us, watched, Ctx};

/// Every consumer of the run uses this limit (the checks count against it).
pub const MAX_DELIVERIES: u32 = 4;

/// Consumer tasks per worker.
pub const CONSUMERS: usize = 2;

#[derive(Clone, Copy, Debug)]
enum Take {
    /// `consume(Some(t))`, t from 0 to a few round trips.
    Timeout,
    /// `consume(None)` given up (dropped) after a random moment.
    Cancel,
    /// `consume(None)` on a private object that is closed meanwhile.
    Close,
}

#[derive(Clone, Copy, Debug)]
enum Settle {
    Ack,
    Nack,
    /// Dropped unsettled: the job must come back.
    Drop,
    /// The ack's future dropped mid-way: its outcome is unknown.
    CancelAck,
    /// Holds the job for a while, watching `lost()`, then acks.
    Slow,
}

const CHAOS_TAKES: &[(Take, u32)] = &[(Take::Timeout, 70), (Take::Cancel, 22), (Take::Close, 8)];
const CHAOS_SETTLES: &[(Settle, u32)] = {
    use Settle::*;
    &[
        (Ack, 50),
        (Nack, 10),
        (Drop, 10),
        (CancelAck, 5),
        (Slow, 25),
    ]
};

/// A prefetch for a queue object: mostly small, sometimes up to 64.
fn prefetch(rng: &mut Rng) -> usize {
    match rng.u8(..8) {
        0..=3 => 1,
        4 => rng.usize(2..5),
        5 => rng.usize(5..17),
        _ => rng.usize(17..65),
    }
}

pub fn open(ctx: &Ctx, prefetch: usize) -> zkrecipes::Result<WorkQueue> {
    let options = WorkQueueOptions {
        prefetch,
        max_deliveries: Some(MAX_DELIVERIES),
    };
    WorkQueue::with_options(&ctx.client, &ctx.dir("work"), options)
}

/// A task's own object on the run's work queue (`open`): a failure to make one is a violation.
fn made(ctx: &Ctx, prefetch: usize) -> Option<WorkQueue> {
    ctx.made("WorkQueue::with_options", open(ctx, prefetch))
}

pub fn shared(ctx: &Ctx, rng: &mut Rng) -> zkrecipes::Result<(WorkQueue, usize)> {
    let p = prefetch(rng);
    Ok((open(ctx, p)?, p))
}

/// One consumer task. Task 0 uses the shared object only; the others mix in
/// a private one, and in the calm phase use only that (so that the order
/// check knows every object's prefetch).
pub async fn consume(ctx: Arc<Ctx>, task: usize, seed: u64, shared: (WorkQueue, usize)) {
    let (mut rng, mut link) = begin(&ctx, seed).await;
    let me = format!("wc{task}");
    let (shared, shared_prefetch) = shared;
    let mut private_prefetch = prefetch(&mut rng);
    let Some(mut private) = made(&ctx, private_prefetch) else {
        return;
    };
    let mut told_calm = false;
    while !ctx.finishing() {
        let calm = ctx.calm();
        if calm && !told_calm {
            told_calm = true;
            let (object, p) = if task == 0 {
                ("shared", shared_prefetch)
            } else {
                ("private", private_prefetch)
            };
            link.ask(format!("WQOBJECT {} {object}{task} {p}", ctx.name))
                .await;
        }
        let use_shared = task == 0 || (!calm && rng.bool());
        let queue = if use_shared { &shared } else { &private };
        let take = if calm {
            Take::Timeout
        } else if use_shared {
            pick(&mut rng, &CHAOS_TAKES[..2])
        } else {
            pick(&mut rng, CHAOS_TAKES)
        };
        ctx.stats.bump(format!("op.work.consume_{take:?}"));
        let got = match take {
            Take::Timeout => {
                let t = timeout(&mut rng, ctx.rtt);
                watched(&ctx, "consume(timeout)", t, queue.consume(Some(t))).await
            }
            Take::Cancel => {
                let after = cancel_after(&mut rng, ctx.rtt);
                match tokio::time::timeout(after, queue.consume(None)).await {
                    Ok(got) => got,
                    Err(_) => {
                        ctx.stats.bump("work.consume_cancelled");
                        Ok(None)
                    }
                }
            }
            Take::Close => {
                let got = close_mid_consume(&ctx, &mut rng, &private).await;
                private_prefetch = prefetch(&mut rng);
                if let Some(queue) = made(&ctx, private_prefetch) {
                    private = queue;
                }
                got
            }
        };
        match got {
            Ok(Some(delivery)) => {
                settle(&ctx, &mut link, &mut rng, &me, delivery, calm).await;
            }
            Ok(None) => {}
            Err(err) if is_timeout(&err) => {
                ctx.violation(format!("consume answered TIMEOUT: {err}"))
            }
            Err(err) => ctx.error("work.consume", &err),
        }
        breathe(&mut rng).await;
    }
    for queue in [&shared, &private] {
        counted_call(&ctx, "work queue close", "work.close", queue.close()).await;
    }
}

/// A `consume(None)` on `queue` that `close()` interrupts: it must end, with
/// `CLOSED` or with a job it got first (which is then settled as usual).
async fn close_mid_consume(
    ctx: &Ctx,
    rng: &mut Rng,
    queue: &WorkQueue,
) -> zkrecipes::Result<Option<Delivery>> {
    let consuming = {
        let queue = queue.clone();
        tokio::spawn(async move { queue.consume(None).await })
    };
    tokio::time::sleep(cancel_after(rng, ctx.rtt)).await;
    counted_call(ctx, "close() mid-consume", "work.close", queue.close()).await;
    let ended = watched(ctx, "consume after close()", Duration::ZERO, consuming).await;
    match ended {
        Ok(Err(err)) if err.code() == ErrorCode::Closed => {
            ctx.stats.bump("work.close_interrupted");
            Ok(None)
        }
        Ok(got) => got,
        Err(join) => {
            ctx.violation(format!("consume panicked after close(): {join}"));
            Ok(None)
        }
    }
}

/// Reports the delivery, then settles it as drawn (poison always by nack).
async fn settle(
    ctx: &Ctx,
    link: &mut Link,
    rng: &mut Rng,
    me: &str,
    delivery: Delivery,
    calm: bool,
) {
    let id = String::from_utf8_lossy(delivery.data()).into_owned();
    let count = delivery.delivery_count();
    let w = &ctx.name;
    if count == 0 || count > MAX_DELIVERIES {
        ctx.violation(format!(
            "{id} delivered with delivery_count {count} (max_deliveries {MAX_DELIVERIES})"
        ));
    }
    let lost_before = ctx.sessions_lost.load(Ordering::SeqCst);
    link.ask(format!("WQGOT {id} {w} {me} {count} {}", now_us()))
        .await;
    let how = if id.ends_with('p') {
        Settle::Nack
    } else if calm {
        Settle::Ack
    } else {
        pick(rng, CHAOS_SETTLES)
    };
    ctx.stats.bump(format!("op.work.{how:?}"));
    let report = |how: String| format!("WQSETTLE {id} {w} {count} {how}");
    match how {
        Settle::Ack | Settle::Slow => {
            if matches!(how, Settle::Slow) {
                let work = Duration::from_millis(rng.u64(20..900));
                tokio::select! {
                    err = delivery.lost() => {
                        ctx.stats.bump(format!("work.lost.{}", err.code()));
                    }
                    () = tokio::time::sleep(work) => {}
                }
            }
            link.ask(report("acking".into())).await;
            // Judged by a loss seen before the ack left: a session that expires while the ack
            // is in flight (a pause right after its reply) may have taken it first (make
            // torture MINUTES=30, seed 765196366: the Java worker's same check).
            let lost_at_ack = ctx.sessions_lost.load(Ordering::SeqCst);
            let acked = watched(ctx, "ack", Duration::ZERO, delivery.ack()).await;
            let line = match acked {
                Ok(()) => {
                    if lost_at_ack != lost_before {
                        ctx.violation(format!(
                            "{id}: ack succeeded although the session that claimed it was lost before it was sent"
                        ));
                    }
                    "acked".to_string()
                }
                Err(err) => {
                    ctx.error("work.ack", &err);
                    format!("ackfail:{}", err.code())
                }
            };
            link.ask(report(line)).await;
        }
        Settle::CancelAck => {
            link.ask(report("acking".into())).await;
            let after = cancel_after(rng, ctx.rtt);
            let line = match tokio::time::timeout(after, delivery.ack()).await {
                Ok(Ok(())) => "acked".to_string(),
                Ok(Err(err)) => format!("ackfail:{}", err.code()),
                Err(_) => "ackcancelled".to_string(),
            };
            link.ask(report(line)).await;
        }
        Settle::Nack => {
            let line = match watched(ctx, "nack", Duration::ZERO, delivery.nack()).await {
                Ok(()) => "nack".to_string(),
                Err(err) => {
                    ctx.error("work.nack", &err);
                    format!("nackfail:{}", err.code())
                }
            };
            link.ask(report(line)).await;
        }
        Settle::Drop => {
            drop(delivery);
            link.ask(report("drop".into())).await;
        }
    }
}

/// Offers jobs one at a time and in batches; `WQOFFER` once acknowledged
/// (with the entry's node name: its place in line), `WQOFFERFAIL` when the
/// offer failed (the job may or may not be in the queue).
pub async fn produce(ctx: Arc<Ctx>, seed: u64) {
    /// The producer pauses while more jobs than this wait: consumers keep up, so that a job
    /// given back is soon at the head again.
    const BACKLOG: usize = 60;
    let (mut rng, mut link) = begin(&ctx, seed).await;
    let Some(queue) = made(&ctx, 1) else {
        return;
    };
    let mut n = 0u64;
    while !ctx.finishing() {
        if backed_up(queue.size().await, BACKLOG).await {
            continue;
        }
        let calm = ctx.calm();
        let batch = if rng.u8(..3) == 0 {
            rng.usize(2..12)
        } else {
            1
        };
        let priority = [50, 100, 100, 100, 150][rng.usize(..5)];
        let ids: Vec<String> = (0..batch)
            .map(|_| {
                n += 1;
                let poison = !calm && rng.u8(..15) == 0;
                format!("{}-j{n}{}", ctx.name, if poison { "p" } else { "" })
            })
            .collect();
        let offered = if batch == 1 {
            ctx.stats.bump("op.work.offer");
            watched(
                ctx.as_ref(),
                "offer",
                Duration::ZERO,
                queue.offer_with_priority(ids[0].as_bytes(), priority),
            )
            .await
            .map(|path| vec![path])
        } else {
            ctx.stats.bump("op.work.offer_all");
            watched(
                ctx.as_ref(),
                "offer_all",
                Duration::ZERO,
                queue.offer_all_with_priority(&ids, priority),
            )
            .await
        };
        match offered {
            Ok(paths) if paths.len() == ids.len() => {
                for (id, path) in ids.iter().zip(paths) {
                    let name = path.rsplit('/').next().unwrap_or_default().to_string();
                    link.ask(format!("WQOFFER {id} {name}")).await;
                }
            }
            Ok(paths) => ctx.violation(format!(
                "offer_all of {} jobs returned {} paths",
                ids.len(),
                paths.len()
            )),
            Err(err) => {
                ctx.error("work.offer", &err);
                for id in &ids {
                    link.ask(format!("WQOFFERFAIL {id}")).await;
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(rng.u64(10..80))).await;
    }
}
