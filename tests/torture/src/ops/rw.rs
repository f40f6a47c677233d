//! Read/write lock operations on the worker's shared `ReadWriteLock`:
//! both sides, bounded and cancelled acquires, downgrade (write holder takes
//! the read side) and the refused upgrade.

use std::sync::Arc;
use std::time::Duration;

use fastrand::Rng;
use zkrecipes::{ErrorCode, Lock, Owner, ReadWriteLock, Wait};

use super::{begin, breathe, cancel_after, critical, pick, timeout, Held, Holding};
use crate::resource::{Link, Sec};
use crate::worker::{is_timeout, watched, Ctx};
use zkrecipes::ffi::OwnedLock;

#[derive(Clone, Copy, Debug)]
enum Op {
    Acquire,
    AcquireTimeout,
    TryAcquire,
    Cancel,
    Downgrade,
    Upgrade,
}

const OPS: &[(Op, u32)] = {
    use Op::*;
    &[
        (Acquire, 20),
        (AcquireTimeout, 30),
        (TryAcquire, 15),
        (Cancel, 20),
        (Downgrade, 8),
        (Upgrade, 7),
    ]
};

pub async fn run(ctx: Arc<Ctx>, task: usize, seed: u64, shared: ReadWriteLock) {
    let (mut rng, mut link) = begin(&ctx, seed).await;
    let made = ReadWriteLock::new(&ctx.client, &ctx.dir("rw"));
    let Some(private) = ctx.made("ReadWriteLock::new", made) else {
        return;
    };
    while !ctx.finishing() {
        let is_private = rng.bool();
        let rw = if is_private { &private } else { &shared };
        let op = pick(&mut rng, OPS);
        if matches!(op, Op::Downgrade) && ctx.skips("downgrade") {
            continue;
        }
        ctx.stats.bump(format!("op.rw.{op:?}"));
        match op {
            Op::Downgrade => downgrade(&ctx, &mut link, &mut rng, rw).await,
            Op::Upgrade => upgrade(&ctx, &mut link, &mut rng, rw).await,
            _ => {
                let (lock, sec) = if rng.u8(..10) < 6 {
                    (rw.read_lock(), Sec::Read)
                } else {
                    (rw.write_lock(), Sec::Write)
                };
                if let Some(held) = attempt(&ctx, &mut rng, lock, op).await {
                    critical(&ctx, &mut link, sec, &held, &mut rng).await;
                    held.release(&ctx, &mut rng, "rw").await;
                }
            }
        }
        breathe(&mut rng).await;
    }
    let name = format!("private-rw-{task}");
    super::lock::expect_no_holds(&ctx, private.read_lock(), &format!("{name} read")).await;
    super::lock::expect_no_holds(&ctx, private.write_lock(), &format!("{name} write")).await;
}

async fn attempt(ctx: &Ctx, rng: &mut Rng, lock: &Lock, op: Op) -> Option<Held> {
    let got = match op {
        Op::Acquire => lock.acquire().await.map(Some),
        Op::AcquireTimeout => {
            let t = timeout(rng, ctx.rtt);
            watched(ctx, "rw acquire_timeout", t, lock.acquire_timeout(t)).await
        }
        Op::TryAcquire => watched(ctx, "rw try_acquire", Duration::ZERO, lock.try_acquire()).await,
        _ => {
            let after = cancel_after(rng, ctx.rtt);
            match tokio::time::timeout(after, lock.acquire()).await {
                Ok(got) => got.map(Some),
                Err(_) => {
                    ctx.stats.bump("rw.cancel.dropped");
                    return None;
                }
            }
        }
    };
    match got {
        Ok(Some(guard)) => Some(Held::Guard(guard)),
        Ok(None) => None,
        Err(err) if is_timeout(&err) => {
            ctx.violation(format!("rw {op:?} answered TIMEOUT: {err}"));
            None
        }
        // Every acquire here is an owner of its own: a write beside another
        // task's read hold waits for it, never refuses as an upgrade.
        Err(err) if err.code() == ErrorCode::WouldDeadlock => {
            ctx.violation(format!(
                "rw {op:?} without a read hold of its own answered WOULD_DEADLOCK: {err}"
            ));
            None
        }
        Err(err) => {
            ctx.error(&format!("rw.{op:?}"), &err);
            None
        }
    }
}

/// The first hold of `owner` on a side of the lock (`lock_as`, waiting up to 100 ms): `None`
/// when not granted in time, or failed (counted under `stat`).
async fn first_hold(
    ctx: &Ctx,
    rng: &mut Rng,
    lock: &Lock,
    owner: Owner,
    what: &str,
    stat: &str,
) -> Option<Held> {
    let t = Duration::from_millis(rng.u64(5..100));
    match watched(ctx, what, t, lock.lock_as(owner, Wait::For(t))).await {
        Ok(token) => token.map(|token| Held::owned(lock, owner, token)),
        Err(err) => {
            ctx.error(stat, &err);
            None
        }
    }
}

/// The write holder takes the read side as the same owner: granted without
/// waiting for anybody (its own writer does not block it). Then the write
/// hold is released and the read hold written under.
async fn downgrade(ctx: &Ctx, link: &mut Link, rng: &mut Rng, rw: &ReadWriteLock) {
    let owner = ctx.owner();
    let (what, stat) = ("write lock_as (downgrade)", "rw.downgrade.write");
    let Some(write) = first_hold(ctx, rng, rw.write_lock(), owner, what, stat).await else {
        return;
    };
    critical(ctx, link, Sec::Write, &write, rng).await;
    let epoch = ctx.epoch();
    let bound = Duration::from_secs(2);
    let read = watched(
        ctx,
        "read lock_as (downgrade)",
        bound,
        rw.read_lock().lock_as(owner, Wait::For(bound)),
    )
    .await;
    let read = match read {
        Ok(Some(token)) => Some(Held::owned(rw.read_lock(), owner, token)),
        Ok(None) if ctx.steady(epoch) && write.still_held() => {
            // Reported as a hang: excused only if a fault explains it.
            ctx.stats.bump("rw.downgrade.refused");
            ctx.alarm(format!(
                "HANG {} 2000 downgrade: the write holder was not granted the read lock within 2 s",
                ctx.name
            ));
            None
        }
        Ok(None) => None,
        Err(err) => {
            ctx.error("rw.downgrade.read", &err);
            None
        }
    };
    write.release(ctx, rng, "rw").await;
    if let Some(read) = read {
        ctx.stats.bump("rw.downgrade.done");
        critical(ctx, link, Sec::Read, &read, rng).await;
        read.release(ctx, rng, "rw").await;
    }
}

/// A read holder asking for the write side as the same owner must be told
/// WOULD_DEADLOCK at once, not wait for itself.
async fn upgrade(ctx: &Ctx, link: &mut Link, rng: &mut Rng, rw: &ReadWriteLock) {
    let owner = ctx.owner();
    let (what, stat) = ("read lock_as (upgrade)", "rw.upgrade.read");
    let Some(read) = first_hold(ctx, rng, rw.read_lock(), owner, what, stat).await else {
        return;
    };
    let wait = Wait::For(Duration::from_millis(200));
    match rw.write_lock().lock_as(owner, wait).await {
        Err(err) if err.code() == ErrorCode::WouldDeadlock => ctx.stats.bump("rw.upgrade.refused"),
        Err(err) => ctx.error("rw.upgrade.write", &err),
        Ok(got) => {
            // Legitimate only if the read hold was lost just before.
            if read.still_held() {
                ctx.violation(format!(
                    "upgrade of a held read lock answered {got:?}, not WOULD_DEADLOCK"
                ));
            }
            if got.is_some() {
                let _ = rw.write_lock().unlock_as(owner).await;
            }
        }
    }
    critical(ctx, link, Sec::Read, &read, rng).await;
    read.release(ctx, rng, "rw").await;
}
