//! Queue operations: a producer offering bursts of numbered items, and
//! consumers polling and taking with tiny timeouts, dropping takes mid-way
//! and giving items back. Every item's data is its id (`<worker>-<n>`).

use std::sync::Arc;
use std::time::Duration;

use fastrand::Rng;
use zkrecipes::{DistributedQueue, Item};

use super::{backed_up, begin, breathe, cancel_after, pick, timeout};
use crate::worker::{is_timeout, now_us, watched, Ctx};

/// Consumer tasks per worker (the driver's order bound counts them).
pub const CONSUMERS: usize = 2;

#[derive(Clone, Copy, Debug)]
enum Op {
    Poll,
    PollItem,
    TakeTimeout,
    TakeItem,
    /// A take whose future is dropped mid-way (the item must come back).
    CancelTake,
    CancelPoll,
    /// Takes an item and puts it back with `give_back`.
    GiveBack,
    Peek,
    /// Batched takes: up to a few head items in one claim.
    PollMany,
    TakeMany,
    /// A batched take whose future is dropped mid-way (the whole batch must come back).
    CancelMany,
}

impl Op {
    fn batched(self) -> bool {
        matches!(self, Op::PollMany | Op::TakeMany | Op::CancelMany)
    }
}

const CHAOS_OPS: &[(Op, u32)] = {
    use Op::*;
    &[
        (Poll, 15),
        (PollItem, 15),
        (TakeTimeout, 15),
        (TakeItem, 15),
        (CancelTake, 12),
        (CancelPoll, 10),
        (GiveBack, 6),
        (Peek, 4),
        (PollMany, 8),
        (TakeMany, 8),
        (CancelMany, 6),
    ]
};

/// In the calm phase no take is dropped and nothing given back: the order
/// bound is judged on what is delivered then.
const CALM_OPS: &[(Op, u32)] = {
    use Op::*;
    &[
        (Poll, 25),
        (PollItem, 25),
        (TakeTimeout, 25),
        (TakeItem, 25),
    ]
};

/// An object of its own on the run's queue (a consumer's private one, the producer's): a
/// failure to make one is a violation.
fn open(ctx: &Ctx) -> Option<DistributedQueue> {
    let made = DistributedQueue::new(&ctx.client, &ctx.dir("queue"));
    ctx.made("DistributedQueue::new", made)
}

pub async fn consume(ctx: Arc<Ctx>, task: usize, seed: u64, shared: DistributedQueue) {
    let (mut rng, mut link) = begin(&ctx, seed).await;
    let Some(private) = open(&ctx) else {
        return;
    };
    let me = format!("c{task}");
    while !ctx.finishing() {
        // Task 0 uses the shared object only; the others mix in their own.
        let queue = if task == 0 || rng.bool() {
            &shared
        } else {
            &private
        };
        let op = pick(&mut rng, if ctx.calm() { CALM_OPS } else { CHAOS_OPS });
        ctx.stats.bump(format!("op.queue.{op:?}"));
        if matches!(op, Op::Peek) {
            peek(&ctx, &mut rng, queue).await;
            breathe(&mut rng).await;
            continue;
        }
        // A batch's size is drawn first and reported: a batched claim cut by
        // a session expiry may have taken that many items with it.
        let batch = rng.usize(1..8);
        let up_to = if op.batched() { batch } else { 1 };
        link.ask(format!("TAKING {} {me} {up_to}", ctx.name)).await;
        let taken = take(&ctx, &mut rng, queue, op, batch).await;
        let line = match taken {
            Taken::Item { id, at_us } => format!("GOT {id} {} {me} {at_us}", ctx.name),
            // One GOT per item of a batch (the first ends the take).
            Taken::Items { ids, at_us } if !ids.is_empty() => {
                let (last, before) = ids.split_last().expect("not empty");
                for id in before {
                    link.ask(format!("GOT {id} {} {me} {at_us}", ctx.name))
                        .await;
                }
                format!("GOT {last} {} {me} {at_us}", ctx.name)
            }
            Taken::Items { .. } => format!("TAKEN {} {me} none", ctx.name),
            Taken::Nothing => format!("TAKEN {} {me} none", ctx.name),
            Taken::Cancelled => format!("TAKEN {} {me} cancelled", ctx.name),
            Taken::GaveBack => format!("TAKEN {} {me} gaveback", ctx.name),
            Taken::Error(code) => format!("TAKEN {} {me} error:{code}", ctx.name),
        };
        link.ask(line).await;
        breathe(&mut rng).await;
    }
}

enum Taken {
    /// With the wall-clock time the call returned: the delivery order
    /// across processes, free of the delay of reporting it.
    Item {
        id: String,
        at_us: u64,
    },
    /// A batch, in queue order (empty: nothing there).
    Items {
        ids: Vec<String>,
        at_us: u64,
    },
    Nothing,
    Cancelled,
    GaveBack,
    /// Failed with this code (a claim cut by a session expiry has an
    /// unknown outcome: SESSION_EXPIRED).
    Error(zkrecipes::ErrorCode),
}

async fn take(ctx: &Ctx, rng: &mut Rng, queue: &DistributedQueue, op: Op, max: usize) -> Taken {
    let data = |ctx: &Ctx, what: &str, got: zkrecipes::Result<Option<Vec<u8>>>| match got {
        Ok(Some(data)) => Taken::Item {
            at_us: now_us(),
            id: String::from_utf8_lossy(&data).into_owned(),
        },
        Ok(None) => Taken::Nothing,
        Err(err) if is_timeout(&err) => {
            ctx.violation(format!("queue {what} answered TIMEOUT: {err}"));
            Taken::Error(err.code())
        }
        Err(err) => {
            ctx.error(&format!("queue.{what}"), &err);
            Taken::Error(err.code())
        }
    };
    let item = |got: zkrecipes::Result<Option<Item>>| got.map(|i| i.map(|i| i.data));
    match op {
        Op::Poll => data(
            ctx,
            "poll",
            watched(ctx, "poll", Duration::ZERO, queue.poll()).await,
        ),
        Op::PollItem => data(
            ctx,
            "poll_item",
            item(watched(ctx, "poll_item", Duration::ZERO, queue.poll_item()).await),
        ),
        Op::TakeTimeout => {
            let t = timeout(rng, ctx.rtt);
            data(
                ctx,
                "take_timeout",
                watched(ctx, "take_timeout", t, queue.take_timeout(t)).await,
            )
        }
        Op::TakeItem => {
            let t = timeout(rng, ctx.rtt);
            data(
                ctx,
                "take_item",
                item(watched(ctx, "take_item", t, queue.take_item(Some(t))).await),
            )
        }
        Op::CancelTake | Op::CancelPoll => {
            let after = cancel_after(rng, ctx.rtt);
            let got = if matches!(op, Op::CancelTake) {
                tokio::time::timeout(after, queue.take_item(None)).await
            } else {
                tokio::time::timeout(after, queue.poll_item()).await
            };
            match got {
                Ok(got) => data(ctx, "cancellable_take", item(got)),
                Err(_) => Taken::Cancelled,
            }
        }
        Op::GiveBack => {
            let got = watched(ctx, "poll_item", Duration::ZERO, queue.poll_item()).await;
            match got {
                Ok(Some(item)) => {
                    match watched(ctx, "give_back", Duration::ZERO, queue.give_back(&item)).await {
                        Ok(()) => Taken::GaveBack,
                        // A session that expired while the give-back was on
                        // its way leaves it unknown (the queue's contract):
                        // the item may be back, and taken by somebody else.
                        Err(err) if err.code() == zkrecipes::ErrorCode::SessionExpired => {
                            ctx.error("queue.give_back", &err);
                            Taken::Error(err.code())
                        }
                        // Not back in the queue: this consumer keeps it.
                        Err(err) => {
                            ctx.error("queue.give_back", &err);
                            data(ctx, "give_back", Ok(Some(item.data)))
                        }
                    }
                }
                other => data(ctx, "poll_item", item(other)),
            }
        }
        Op::PollMany | Op::TakeMany | Op::CancelMany => {
            let got = match op {
                Op::PollMany => {
                    watched(ctx, "poll_many", Duration::ZERO, queue.poll_many(max)).await
                }
                Op::TakeMany => {
                    let t = timeout(rng, ctx.rtt);
                    watched(ctx, "take_many", t, queue.take_many(max, t)).await
                }
                _ => {
                    let after = cancel_after(rng, ctx.rtt);
                    match tokio::time::timeout(after, queue.take_many(max, None)).await {
                        Ok(got) => got,
                        Err(_) => return Taken::Cancelled,
                    }
                }
            };
            match got {
                Ok(items) => Taken::Items {
                    at_us: now_us(),
                    ids: items
                        .iter()
                        .map(|item| String::from_utf8_lossy(&item.data).into_owned())
                        .collect(),
                },
                Err(err) if is_timeout(&err) => {
                    ctx.violation(format!("queue batched take answered TIMEOUT: {err}"));
                    Taken::Error(err.code())
                }
                Err(err) => {
                    ctx.error("queue.take_many", &err);
                    Taken::Error(err.code())
                }
            }
        }
        Op::Peek => Taken::Nothing,
    }
}

async fn peek(ctx: &Ctx, rng: &mut Rng, queue: &DistributedQueue) {
    let outcome = match rng.u8(..3) {
        0 => watched(ctx, "peek", Duration::ZERO, queue.peek())
            .await
            .map(|_| ()),
        1 => watched(ctx, "size", Duration::ZERO, queue.size())
            .await
            .map(|_| ()),
        _ => match watched(ctx, "element", Duration::ZERO, queue.element()).await {
            Err(err) if err.code() == zkrecipes::ErrorCode::NoSuchElement => Ok(()),
            other => other.map(|_| ()),
        },
    };
    if let Err(err) = outcome {
        ctx.error("queue.peek", &err);
    }
}

/// Offers bursts of items; `OFFER` only once the offer was acknowledged,
/// `OFFERFAIL` when it failed (the item may or may not be in the queue).
pub async fn produce(ctx: Arc<Ctx>, seed: u64) {
    /// The producer pauses while more items than this wait in the queue.
    const BACKLOG: usize = 150;
    let (mut rng, mut link) = begin(&ctx, seed).await;
    let Some(queue) = open(&ctx) else {
        return;
    };
    let mut n = 0u64;
    while !ctx.finishing() {
        if backed_up(queue.size().await, BACKLOG).await {
            continue;
        }
        // A backlog in the calm phase: several consumers then race for the head.
        let burst = if ctx.calm() {
            rng.u64(5..25)
        } else {
            rng.u64(1..8)
        };
        for _ in 0..burst {
            n += 1;
            let id = format!("{}-{n}", ctx.name);
            ctx.stats.bump("op.queue.offer");
            match watched(
                ctx.as_ref(),
                "offer",
                Duration::ZERO,
                queue.offer(id.as_bytes()),
            )
            .await
            {
                Ok(path) => {
                    let seq = path
                        .rsplit("qn-")
                        .next()
                        .and_then(|s| s.parse::<i64>().ok());
                    match seq {
                        Some(seq) => link.ask(format!("OFFER {id} {seq}")).await,
                        None => {
                            ctx.violation(format!("offer returned the path {path}"));
                            continue;
                        }
                    };
                }
                Err(err) => {
                    ctx.error("queue.offer", &err);
                    link.ask(format!("OFFERFAIL {id}")).await;
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(rng.u64(10..80))).await;
    }
}
