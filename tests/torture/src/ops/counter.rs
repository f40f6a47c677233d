//! Distributed atomic long: one task per worker that only ever adds one, to two counters of the
//! run. `<root>/counter`: `increment`, a `compare_and_set(v, v + 1)` over a value just read, and
//! now and then a `get`. `<root>/counter-cancelled`: increments dropped after a random moment,
//! apart, so that their unknown outcomes leave the first counter's bound tight (a lost reply
//! counted twice is one more than it allows).
//!
//! Every attempt is reported before the call (`CTRY <w> <counter> <n>`) and after it (`CDONE <w>
//! <counter> <n> ok <post value>`, `unknown <code>` for `CONNECTION_LOSS` — the recipe says the
//! write may or may not have applied —, `cancelled` for a call dropped mid-way, `none` for a
//! compare-and-set that declined, `failed <code>` for any other error: nothing written). An
//! attempt with no `CDONE` (its worker was killed) may have applied too. `counter-exact` judges
//! each final value against these.

use std::sync::Arc;
use std::time::Duration;

use fastrand::Rng;
use zkrecipes::{DistributedAtomicLong, ErrorCode};

use super::{begin, breathe, cancel_after, counted_call};
use crate::resource::Link;
use crate::worker::{watched, Ctx};

/// The counters' nodes, under the run's root: the exact one, the one of cancelled increments.
pub const NODES: [&str; 2] = [EXACT, CANCELLED];
const EXACT: &str = "counter";
const CANCELLED: &str = "counter-cancelled";

pub async fn run(ctx: Arc<Ctx>, seed: u64) {
    if ctx.skips("counter") {
        return;
    }
    let (mut rng, mut link) = begin(&ctx, seed).await;
    let open = |node: &str| DistributedAtomicLong::new(&ctx.client, &ctx.dir(node));
    let (counter, dropped) = match (open(EXACT), open(CANCELLED)) {
        (Ok(counter), Ok(dropped)) => (counter, dropped),
        (Err(err), _) | (_, Err(err)) => {
            return ctx.violation(format!("DistributedAtomicLong::new failed: {err}"))
        }
    };
    let mut n = 0u64;
    while !ctx.finishing() {
        n += 1;
        match rng.u8(..10) {
            0..=5 => increment(&ctx, &mut link, &counter, n).await,
            6..=7 => add_by_compare(&ctx, &mut link, &counter, n).await,
            8 => cancelled(&ctx, &mut link, &mut rng, &dropped, n).await,
            _ => {
                ctx.stats.bump("op.counter.get");
                counted_call(&ctx, "counter get", "counter.get", counter.get()).await;
            }
        }
        breathe(&mut rng).await;
        // A modest share of the mix: a few increments a second per worker.
        tokio::time::sleep(Duration::from_millis(rng.u64(0..40))).await;
    }
}

async fn increment(ctx: &Ctx, link: &mut Link, counter: &DistributedAtomicLong, n: u64) {
    ctx.stats.bump("op.counter.increment");
    link.ask(format!("CTRY {} {EXACT} {n}", ctx.name)).await;
    let answered = watched(
        ctx,
        "counter increment",
        Duration::ZERO,
        counter.increment(),
    )
    .await;
    let done = match answered {
        Ok(updated) => {
            if updated.post_value != updated.pre_value.wrapping_add(1) {
                ctx.violation(format!("increment answered {updated:?}"));
            }
            format!("ok {}", updated.post_value)
        }
        Err(err) => outcome_of(ctx, "counter.increment", &err),
    };
    link.ask(format!("CDONE {} {EXACT} {n} {done}", ctx.name))
        .await;
}

/// Adds one by compare-and-set over the value just read: the read is outside the attempt
/// (it writes nothing), a declined set is `none`.
async fn add_by_compare(ctx: &Ctx, link: &mut Link, counter: &DistributedAtomicLong, n: u64) {
    ctx.stats.bump("op.counter.compare_and_set");
    let read = watched(ctx, "counter get", Duration::ZERO, counter.get()).await;
    let seen = match read {
        Ok(seen) => seen,
        Err(err) => return ctx.error("counter.get", &err),
    };
    let next = seen.wrapping_add(1);
    link.ask(format!("CTRY {} {EXACT} {n}", ctx.name)).await;
    let set = watched(
        ctx,
        "counter compare_and_set",
        Duration::ZERO,
        counter.compare_and_set(seen, next),
    )
    .await;
    let done = match set {
        Ok(true) => format!("ok {next}"),
        Ok(false) => {
            ctx.stats.bump("counter.compare_and_set.declined");
            "none".to_string()
        }
        Err(err) => outcome_of(ctx, "counter.compare_and_set", &err),
    };
    link.ask(format!("CDONE {} {EXACT} {n} {done}", ctx.name))
        .await;
}

/// An increment dropped after a random moment: before its read, between its read and its
/// write, with its write on its way, or not at all (it answered first).
async fn cancelled(
    ctx: &Ctx,
    link: &mut Link,
    rng: &mut Rng,
    counter: &DistributedAtomicLong,
    n: u64,
) {
    ctx.stats.bump("op.counter.increment_cancelled");
    link.ask(format!("CTRY {} {CANCELLED} {n}", ctx.name)).await;
    let after = cancel_after(rng, ctx.rtt);
    let done = match tokio::time::timeout(after, counter.increment()).await {
        Ok(Ok(updated)) => format!("ok {}", updated.post_value),
        Ok(Err(err)) => outcome_of(ctx, "counter.increment", &err),
        Err(_) => "cancelled".to_string(),
    };
    link.ask(format!("CDONE {} {CANCELLED} {n} {done}", ctx.name))
        .await;
}

/// `unknown <code>` for the answer that says the write may have applied, `failed <code>` for
/// the others.
fn outcome_of(ctx: &Ctx, op: &str, err: &zkrecipes::Error) -> String {
    ctx.error(op, err);
    if err.code() == ErrorCode::ConnectionLoss {
        format!("unknown {}", err.code())
    } else {
        format!("failed {}", err.code())
    }
}
