//! Exclusive lock operations, on the worker's shared lock object (several
//! tasks, each acquire its own owner) and on a private object of the task,
//! all on the same directory.

use std::sync::Arc;
use std::time::Duration;

use fastrand::Rng;
use zkrecipes::{Lock, Wait, WriteLock};

use super::{
    begin, breathe, cancel_after, cancelled_wait, critical, listen_lock, none_held_soon, pick,
    timeout, told_of_a_pause, Held, Holding,
};
use crate::resource::{Link, Sec};
use crate::worker::{is_timeout, watched, Ctx};
use zkrecipes::ffi::OwnedLock;

#[derive(Clone, Copy, Debug)]
enum Op {
    /// `acquire()`: waits as long as it takes (judged by the liveness check).
    Acquire,
    LockAs,
    TryAcquire,
    AcquireTimeout,
    CancelAcquire,
    CancelLockAs,
    Reenter,
}

const OPS: &[(Op, u32)] = {
    use Op::*;
    &[
        (Acquire, 12),
        (LockAs, 22),
        (TryAcquire, 10),
        (AcquireTimeout, 12),
        (CancelAcquire, 12),
        (CancelLockAs, 12),
        (Reenter, 8),
    ]
};

pub async fn run(ctx: Arc<Ctx>, task: usize, seed: u64, shared: Lock) {
    let (mut rng, mut link) = begin(&ctx, seed).await;
    let made = WriteLock::new(&ctx.client, &ctx.dir("lock"));
    let Some(private) = ctx.made("WriteLock::new", made) else {
        return;
    };
    let listener = listen_lock(ctx.clone(), private.clone(), "private-lock");
    while !ctx.finishing() {
        let lock = if rng.u8(..10) < 6 { &shared } else { &private };
        let op = pick(&mut rng, OPS);
        ctx.stats.bump(format!("op.lock.{op:?}"));
        let epoch = ctx.epoch();
        if let Some(held) = attempt(&ctx, &mut link, &mut rng, lock, op).await {
            let since = std::time::Instant::now();
            critical(&ctx, &mut link, Sec::Excl, &held, &mut rng).await;
            let token = held.token();
            held.release(&ctx, &mut rng, "lock").await;
            told_of_a_pause(&ctx, since, epoch, token, || lock.is_held()).await;
        }
        breathe(&mut rng).await;
        // Some air between holds, so that bounded acquires get a chance too.
        tokio::time::sleep(Duration::from_millis(rng.u64(0..15))).await;
    }
    expect_no_holds(&ctx, &private, &format!("private-lock-{task}")).await;
    listener.abort();
}

async fn attempt(ctx: &Ctx, link: &mut Link, rng: &mut Rng, lock: &Lock, op: Op) -> Option<Held> {
    let outcome = |ctx: &Ctx, what: &str, got: zkrecipes::Result<Option<Held>>| match got {
        Ok(Some(held)) => {
            ctx.stats.bump(format!("lock.{what}.got"));
            Some(held)
        }
        Ok(None) => {
            ctx.stats.bump(format!("lock.{what}.none"));
            None
        }
        Err(err) if is_timeout(&err) => {
            ctx.violation(format!(
                "lock {what} answered TIMEOUT instead of None: {err}"
            ));
            None
        }
        Err(err) => {
            ctx.error(&format!("lock.{what}"), &err);
            None
        }
    };
    match op {
        Op::Acquire => {
            link.ask(format!("WAITING {}", ctx.name)).await;
            let got = lock.acquire().await;
            link.ask(format!("WAITED {}", ctx.name)).await;
            outcome(ctx, "acquire", got.map(|g| Some(Held::Guard(g))))
        }
        Op::LockAs => {
            let owner = ctx.owner();
            let t = timeout(rng, ctx.rtt);
            let got = watched(
                ctx,
                "lock_as(Wait::For)",
                t,
                lock.lock_as(owner, Wait::For(t)),
            )
            .await;
            let held = got.map(|token| token.map(|token| Held::owned(lock, owner, token)));
            outcome(ctx, "lock_as", held)
        }
        Op::TryAcquire => {
            let got = watched(ctx, "try_acquire", Duration::ZERO, lock.try_acquire()).await;
            outcome(ctx, "try_acquire", got.map(|g| g.map(Held::Guard)))
        }
        Op::AcquireTimeout => {
            let t = timeout(rng, ctx.rtt);
            let got = watched(ctx, "acquire_timeout", t, lock.acquire_timeout(t)).await;
            outcome(ctx, "acquire_timeout", got.map(|g| g.map(Held::Guard)))
        }
        Op::CancelAcquire => {
            let after = cancel_after(rng, ctx.rtt);
            match tokio::time::timeout(after, lock.acquire()).await {
                Ok(got) => outcome(ctx, "cancel_acquire", got.map(|g| Some(Held::Guard(g)))),
                Err(_) => {
                    ctx.stats.bump("lock.cancel_acquire.dropped");
                    None
                }
            }
        }
        Op::CancelLockAs => {
            let owner = ctx.owner();
            let after = cancel_after(rng, ctx.rtt);
            let wait = cancelled_wait(rng, ctx.rtt);
            match tokio::time::timeout(after, lock.lock_as(owner, wait)).await {
                Ok(got) => {
                    let held = got.map(|token| token.map(|token| Held::owned(lock, owner, token)));
                    outcome(ctx, "cancel_lock_as", held)
                }
                Err(_) => {
                    ctx.stats.bump("lock.cancel_lock_as.dropped");
                    None
                }
            }
        }
        Op::Reenter => reenter(ctx, rng, lock).await,
    }
}

/// Takes the lock twice for one owner: the second hold must be the same
/// token at once (no wait, no request), and counted.
async fn reenter(ctx: &Ctx, rng: &mut Rng, lock: &Lock) -> Option<Held> {
    let owner = ctx.owner();
    let epoch = ctx.epoch();
    let t = Duration::from_millis(rng.u64(1..60));
    let first = match watched(
        ctx,
        "lock_as (reenter)",
        t,
        lock.lock_as(owner, Wait::For(t)),
    )
    .await
    {
        Ok(Some(token)) => token,
        Ok(None) => {
            ctx.stats.bump("lock.reenter.none");
            return None;
        }
        Err(err) => {
            if is_timeout(&err) {
                ctx.violation(format!("lock_as answered TIMEOUT: {err}"));
            } else {
                ctx.error("lock.reenter", &err);
            }
            return None;
        }
    };
    let (count, token) = match lock.lock_as(owner, Wait::No).await {
        Ok(Some(again)) if again == first => {
            ctx.stats.bump("lock.reenter.got");
            if lock.hold_count(owner) != 2 {
                ctx.violation(format!(
                    "reentered lock counts {} holds, not 2",
                    lock.hold_count(owner)
                ));
            }
            (2, first)
        }
        // The first hold may have been lost in between (a new acquire then
        // gives a new token, or none): legitimate only if the loss was told.
        Ok(again) => {
            if untold_loss(ctx, epoch).await {
                ctx.violation(format!(
                    "reentrant acquire by the holder of token {first} answered {again:?} without any SUSPENDED/LOST"
                ));
            } else {
                ctx.stats.bump("lock.reenter.after_loss");
            }
            again.map_or((1, first), |again| (1, again))
        }
        // The session may have been lost in between: that is an answer.
        Err(err) => {
            ctx.error("lock.reenter.second", &err);
            (1, first)
        }
    };
    Some(Held::Owned {
        lock: lock.clone(),
        owner,
        count,
        token,
    })
}

/// Whether nothing was told (SUSPENDED/LOST) since `epoch`, after a moment
/// for the listener to pass an event on.
async fn untold_loss(ctx: &Ctx, epoch: u64) -> bool {
    tokio::time::sleep(Duration::from_millis(300)).await;
    ctx.epoch() == epoch
}

/// After every hold of `lock` was released or dropped, the object must not
/// report one (a phantom hold makes `is_held`, `fencing_token` and
/// `unlock_one` lie). Background releases get a moment.
pub async fn expect_no_holds(ctx: &Ctx, lock: &Lock, object: &str) {
    if none_held_soon(|| lock.holders()).await {
        return;
    }
    ctx.violation(format!(
        "{object} object still reports {} hold(s) (token {:?}) 2 s after every hold was released",
        lock.holders(),
        lock.fencing_token()
    ));
}
