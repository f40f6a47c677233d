//! Semaphore operations: one semaphore path of `max_leases` M for the whole run
//! (the same M in every worker, from the seed), on the worker's shared object
//! and on a private object of the task. Acquires of 1..=M leases: forever
//! (reported `SWAITING`/`SWAITED`, judged by `sem-liveness`), with timeouts
//! from 0 to a few round trips, tries, cancelled mid-way. Every lease held is
//! written under, one section per lease, all of them in force at once
//! (`SBEGIN`/`SEND` with the lease's fencing token); then each is released by
//! `release()`, by drop, by a cancelled release, or (private object only:
//! nobody else's lease is among them) by `release_one()` / `release_all()`.

use std::sync::Arc;
use std::time::Duration;

use fastrand::Rng;

use tokio::task::JoinHandle;
use zkrecipes::ffi::OwnedSemaphore;
use zkrecipes::{Lease, Semaphore, Wait};

use super::{
    begin, breathe, cancel_after, cancelled_wait, counted_call, critical_all, follow_holder_events,
    listener_call, none_held_soon, pick, timeout, told_of_a_pause,
};
use crate::resource::{Link, Sec};
use crate::worker::{is_timeout, watched, Ctx};

/// Semaphore tasks per worker.
pub const TASKS: usize = 2;

#[derive(Clone, Copy, Debug)]
enum Op {
    /// `acquire()`: one lease, as long as it takes.
    Acquire,
    /// `acquire_many(k, Wait::Forever)`.
    AcquireMany,
    /// `acquire_many(k, Wait::For(t))`, t from 0 to a few round trips.
    AcquireTimeout,
    /// `acquire_many(k, Wait::No)` or `try_acquire(Wait::No)`.
    Try,
    /// `try_acquire(Wait::For(t))`.
    TryTimeout,
    /// An acquire (forever or bounded) dropped after a random moment.
    Cancel,
}

const OPS: &[(Op, u32)] = {
    use Op::*;
    &[
        (Acquire, 8),
        (AcquireMany, 6),
        (AcquireTimeout, 26),
        (Try, 16),
        (TryTimeout, 16),
        (Cancel, 28),
    ]
};

pub fn open(ctx: &Ctx, max_leases: u32) -> zkrecipes::Result<Semaphore> {
    Semaphore::new(&ctx.client, &ctx.dir("sem"), max_leases)
}

pub async fn run(ctx: Arc<Ctx>, task: usize, seed: u64, shared: Semaphore) {
    let (mut rng, mut link) = begin(&ctx, seed).await;
    let Some(private) = ctx.made("Semaphore::new", open(&ctx, shared.max_leases())) else {
        return;
    };
    let listener = listen(ctx.clone(), private.clone(), "private-sem");
    let max = shared.max_leases();
    while !ctx.finishing() {
        let is_private = rng.u8(..10) < 4;
        let sem = if is_private { &private } else { &shared };
        let op = pick(&mut rng, OPS);
        let count = match op {
            Op::Acquire | Op::TryTimeout => 1,
            _ => rng.u32(1..=max),
        };
        ctx.stats.bump(format!("op.sem.{op:?}"));
        let epoch = ctx.epoch();
        let leases = attempt(&ctx, &mut link, &mut rng, sem, op, count).await;
        if !leases.is_empty() {
            let since = std::time::Instant::now();
            critical_all(&ctx, &mut link, Sec::Sem, &leases, &mut rng, epoch).await;
            let token = leases[0].fencing_token();
            release(&ctx, &mut rng, sem, is_private, leases).await;
            told_of_a_pause(&ctx, since, epoch, token, || false).await;
        }
        breathe(&mut rng).await;
        tokio::time::sleep(Duration::from_millis(rng.u64(0..15))).await;
    }
    expect_no_leases(&ctx, &private, &format!("private-sem-{task}")).await;
    listener.abort();
}

/// The leases an operation got (all `count` of them, or none).
async fn attempt(
    ctx: &Ctx,
    link: &mut Link,
    rng: &mut Rng,
    sem: &Semaphore,
    op: Op,
    count: u32,
) -> Vec<Lease> {
    let got: zkrecipes::Result<Option<Vec<Lease>>> = match op {
        Op::Acquire => {
            link.ask(format!("SWAITING {}", ctx.name)).await;
            let got = sem.acquire().await;
            link.ask(format!("SWAITED {}", ctx.name)).await;
            got.map(|lease| Some(vec![lease]))
        }
        Op::AcquireMany => {
            link.ask(format!("SWAITING {}", ctx.name)).await;
            let got = sem.acquire_many(count, Wait::Forever).await;
            link.ask(format!("SWAITED {}", ctx.name)).await;
            if matches!(got, Ok(None)) {
                ctx.violation(format!(
                    "acquire_many({count}, Wait::Forever) answered None"
                ));
            }
            got
        }
        Op::AcquireTimeout => {
            let t = timeout(rng, ctx.rtt);
            watched(
                ctx,
                "semaphore acquire_many(Wait::For)",
                t,
                sem.acquire_many(count, Wait::For(t)),
            )
            .await
        }
        Op::Try => {
            let tried = if count == 1 && rng.bool() {
                let got = sem.try_acquire(Wait::No);
                watched(ctx, "semaphore try_acquire(Wait::No)", Duration::ZERO, got)
                    .await
                    .map(|lease| lease.map(|lease| vec![lease]))
            } else {
                let got = sem.acquire_many(count, Wait::No);
                watched(ctx, "semaphore acquire_many(Wait::No)", Duration::ZERO, got).await
            };
            tried
        }
        Op::TryTimeout => {
            let t = timeout(rng, ctx.rtt);
            watched(
                ctx,
                "semaphore try_acquire(Wait::For)",
                t,
                sem.try_acquire(Wait::For(t)),
            )
            .await
            .map(|lease| lease.map(|lease| vec![lease]))
        }
        Op::Cancel => {
            let after = cancel_after(rng, ctx.rtt);
            let wait = cancelled_wait(rng, ctx.rtt);
            match tokio::time::timeout(after, sem.acquire_many(count, wait)).await {
                Ok(got) => got,
                Err(_) => {
                    ctx.stats.bump("sem.cancel.dropped");
                    return Vec::new();
                }
            }
        }
    };
    match got {
        Ok(Some(leases)) => {
            ctx.stats.bump(format!("sem.{op:?}.got"));
            if leases.len() != count as usize {
                ctx.violation(format!(
                    "semaphore {op:?} of {count} lease(s) returned {}",
                    leases.len()
                ));
            }
            leases
        }
        Ok(None) => {
            ctx.stats.bump(format!("sem.{op:?}.none"));
            Vec::new()
        }
        Err(err) if is_timeout(&err) => {
            ctx.violation(format!(
                "semaphore {op:?} answered TIMEOUT instead of None: {err}"
            ));
            Vec::new()
        }
        Err(err) => {
            ctx.error(&format!("sem.{op:?}"), &err);
            Vec::new()
        }
    }
}

/// Ends every lease: one by one (`release()`, drop, a cancelled release), or
/// on the private object, all at once by `release_one()` per lease or by
/// `release_all()` (the object holds no lease but these).
async fn release(ctx: &Ctx, rng: &mut Rng, sem: &Semaphore, private: bool, leases: Vec<Lease>) {
    if private && rng.u8(..5) == 0 {
        if rng.bool() {
            ctx.stats.bump("sem.release_all");
            watched(
                ctx,
                "semaphore release_all",
                Duration::ZERO,
                sem.release_all(),
            )
            .await;
        } else {
            for _ in 0..leases.len() {
                ctx.stats.bump("sem.release_one");
                let releasing = sem.release_one();
                counted_call(ctx, "semaphore release_one", "sem.release_one", releasing).await;
            }
        }
        // Released already: their own release answers NOT_OWNER in the background.
        drop(leases);
        return;
    }
    for lease in leases {
        match rng.u8(..20) {
            n if n <= 11 || (n >= 15 && ctx.skips("cancel-release")) => {
                ctx.stats.bump("sem.release");
                counted_call(ctx, "lease release", "sem.release", lease.release()).await;
            }
            12..=14 => {
                ctx.stats.bump("sem.release_by_drop");
                drop(lease);
            }
            _ => {
                ctx.stats.bump("sem.release_cancelled");
                let after = cancel_after(rng, ctx.rtt);
                let _ = tokio::time::timeout(after, lease.release()).await;
            }
        }
    }
}

/// Follows a semaphore object's events: SUSPENDED / LOST / RECONNECTED are
/// reported at once (SUSPENDED and LOST end every hold of the worker, as a
/// lock's do), and every event calls back into the library (`lease_nodes()`,
/// `held()`) in a task of its own, one at a time.
pub fn listen(ctx: Arc<Ctx>, sem: Semaphore, object: &'static str) -> JoinHandle<()> {
    let events = sem.subscribe();
    follow_holder_events(ctx, events, object, move |ctx, _| {
        let sem = sem.clone();
        async move {
            listener_call(&ctx, "lease_nodes", sem.lease_nodes()).await;
            let _ = sem.held();
        }
    })
}

/// After every lease of `sem` was released or dropped, the object must hold
/// none (background releases get a moment).
pub async fn expect_no_leases(ctx: &Ctx, sem: &Semaphore, object: &str) {
    if none_held_soon(|| sem.held()).await {
        return;
    }
    ctx.violation(format!(
        "{object} object still reports {} lease(s) 2 s after every lease was released",
        sem.held()
    ));
}
