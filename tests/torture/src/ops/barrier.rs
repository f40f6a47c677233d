//! Barriers. The plain barrier: a worker sets a fresh barrier
//! (`<dir>/barrier/<w>-<task tag>-<n>`), announces it (`BSET`), keeps it up for a while
//! and removes it (`BREMOVE start`, then `ok`/`err:<code>`); the others ask the
//! resource for one that is up (`BPICK`), see it up themselves (`is_set`) and
//! wait on it with a long timeout (`BWAIT`/`BWAITED`), or look at it (a
//! zero-timeout wait).
//!
//! The double barrier: rounds on fresh paths (`<dir>/dbarrier/round-<k>`),
//! each handed by the resource to `member_count` distinct workers (`DJOIN`),
//! so that they agree on `k` without talking. A member reports `ENTERING`
//! before `enter`, its outcome, `LEAVING` before `leave` and its outcome.
//! Waits still under way at the finish are cancelled (and reported so), so
//! that a barrier nobody removes does not hold the finish up.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use fastrand::Rng;
use zkrecipes::{Barrier, DoubleBarrier};

use super::{begin, breathe, counted_call};
use crate::resource::Link;
use crate::worker::{is_timeout, watched, Ctx};

/// Plain-barrier tasks per worker (each sets and waits).
pub const TASKS: usize = 2;

/// How a wait of a barrier ended.
enum Waited<T> {
    Done(zkrecipes::Result<T>),
    /// Given up (dropped) at the finish.
    Cancelled,
}

/// Awaits `fut` until the worker is told to finish; then drops it.
async fn until_finish<T>(ctx: &Ctx, fut: impl Future<Output = zkrecipes::Result<T>>) -> Waited<T> {
    let mut fut = std::pin::pin!(fut);
    loop {
        tokio::select! {
            out = &mut fut => return Waited::Done(out),
            () = tokio::time::sleep(Duration::from_millis(50)) => {
                if ctx.finishing() {
                    return Waited::Cancelled;
                }
            }
        }
    }
}

pub async fn run_barrier(ctx: Arc<Ctx>, seed: u64) {
    let (mut rng, mut link) = begin(&ctx, seed).await;
    let mut n = 0u64;
    // Two tasks of one worker name their barriers apart.
    let tag = rng.u32(..);
    while !ctx.finishing() {
        match rng.u8(..10) {
            0..=2 => {
                n += 1;
                let path = format!("{}/{}-{tag:08x}-{n}", ctx.dir("barrier"), ctx.name);
                set_and_remove(&ctx, &mut link, &mut rng, &path).await;
            }
            3..=8 => wait_on_one(&ctx, &mut link, &mut rng, tag).await,
            _ => look_at_one(&ctx, &mut link).await,
        }
        breathe(&mut rng).await;
        tokio::time::sleep(Duration::from_millis(rng.u64(0..100))).await;
    }
}

/// The barrier at `path` (a failure to make it is a violation).
fn barrier(ctx: &Ctx, path: &str) -> Option<Barrier> {
    ctx.made("Barrier::new", Barrier::new(&ctx.client, path))
}

/// Sets a fresh barrier, keeps it up for a while, removes it (again until
/// the removal is confirmed, or gives up after a few tries).
async fn set_and_remove(ctx: &Ctx, link: &mut Link, rng: &mut Rng, path: &str) {
    ctx.stats.bump("op.barrier.set");
    let Some(barrier) = barrier(ctx, path) else {
        return;
    };
    match watched(ctx, "barrier set", Duration::ZERO, barrier.set()).await {
        Ok(()) => {
            link.ask(format!("BSET {} {path}", ctx.name)).await;
            let up = Duration::from_millis(rng.u64(100..2500));
            let until = tokio::time::Instant::now() + up;
            while tokio::time::Instant::now() < until && !ctx.finishing() {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        Err(err) => {
            // Maybe set anyway (a lost reply): nobody was told, it is only taken down.
            ctx.error("barrier.set", &err);
            let _ = barrier.remove().await;
            return;
        }
    }
    ctx.stats.bump("op.barrier.remove");
    link.ask(format!("BREMOVE {} {path} start", ctx.name)).await;
    for _ in 0..10 {
        match watched(ctx, "barrier remove", Duration::ZERO, barrier.remove()).await {
            Ok(()) => {
                link.ask(format!("BREMOVE {} {path} ok", ctx.name)).await;
                return;
            }
            Err(err) => {
                ctx.error("barrier.remove", &err);
                link.ask(format!("BREMOVE {} {path} err:{}", ctx.name, err.code()))
                    .await;
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
    ctx.stats.bump("barrier.remove_given_up");
}

/// A barrier that is up now, as the resource knows (or `None`).
async fn pick(ctx: &Ctx, link: &mut Link) -> Option<String> {
    let answer = link.ask(format!("BPICK {}", ctx.name)).await;
    (answer != "NONE" && answer.starts_with('/')).then_some(answer)
}

/// Waits on a barrier that is up, with a long timeout: released once it is removed.
async fn wait_on_one(ctx: &Ctx, link: &mut Link, rng: &mut Rng, tag: u32) {
    let Some(path) = pick(ctx, link).await else {
        ctx.stats.bump("barrier.none_up");
        tokio::time::sleep(Duration::from_millis(rng.u64(20..150))).await;
        return;
    };
    let Some(barrier) = barrier(ctx, &path) else {
        return;
    };
    // Seen up by this session first: its later reads are never older (a follower that has
    // not applied the set yet would show it down, and release a waiter that never saw it).
    match watched(ctx, "barrier is_set", Duration::ZERO, barrier.is_set()).await {
        Ok(true) => {}
        Ok(false) => return ctx.stats.bump("barrier.wait.not_seen_up"),
        Err(err) => return ctx.error("barrier.is_set", &err),
    }
    ctx.stats.bump("op.barrier.wait");
    let t = Duration::from_millis(rng.u64(3000..8000));
    link.ask(format!(
        "BWAIT {} {tag:08x} {path} {}",
        ctx.name,
        t.as_millis()
    ))
    .await;
    let how = match until_finish(ctx, watched(ctx, "barrier wait", t, barrier.wait(t))).await {
        Waited::Done(Ok(true)) => "released".to_string(),
        Waited::Done(Ok(false)) => "timeout".to_string(),
        Waited::Done(Err(err)) => {
            if is_timeout(&err) {
                ctx.violation(format!("barrier wait answered TIMEOUT: {err}"));
            }
            ctx.error("barrier.wait", &err);
            format!("err:{}", err.code())
        }
        Waited::Cancelled => "cancelled".to_string(),
    };
    ctx.stats.bump(format!("barrier.wait.{how}"));
    link.ask(format!("BWAITED {} {tag:08x} {path} {how}", ctx.name))
        .await;
}

/// A zero-timeout wait (a check) and `is_set` on a barrier that is up.
async fn look_at_one(ctx: &Ctx, link: &mut Link) {
    let Some(path) = pick(ctx, link).await else {
        return;
    };
    let Some(barrier) = barrier(ctx, &path) else {
        return;
    };
    ctx.stats.bump("op.barrier.look");
    match watched(
        ctx,
        "barrier wait(0)",
        Duration::ZERO,
        barrier.wait(Duration::ZERO),
    )
    .await
    {
        Ok(down) => ctx.stats.bump(if down {
            "barrier.look.down"
        } else {
            "barrier.look.up"
        }),
        Err(err) => ctx.error("barrier.look", &err),
    }
    counted_call(ctx, "barrier is_set", "barrier.is_set", barrier.is_set()).await;
}

pub async fn run_double(ctx: Arc<Ctx>, seed: u64) {
    let (mut rng, mut link) = begin(&ctx, seed).await;
    let members = ctx.dbarrier_members;
    while !ctx.finishing() {
        let answer = link.ask(format!("DJOIN {} {members}", ctx.name)).await;
        let Some(round) = answer
            .strip_prefix("ROUND ")
            .and_then(|k| k.parse::<u64>().ok())
        else {
            return ctx.violation(format!("DJOIN answered {answer:?}"));
        };
        let path = format!("{}/round-{round}", ctx.dir("dbarrier"));
        let made = DoubleBarrier::new(&ctx.client, &path, members);
        let Some(barrier) = ctx.made("DoubleBarrier::new", made) else {
            return;
        };
        // Members come at different moments: the first waits for the others.
        tokio::time::sleep(Duration::from_millis(rng.u64(0..800))).await;
        round_trip(&ctx, &mut link, &mut rng, &barrier, round).await;
        breathe(&mut rng).await;
    }
}

/// How a stage of a double-barrier round is named: `op` in counters (`enter`), the report
/// before it (`ENTERING`) and its success (`ENTERED`); its other outcomes are `ENTER_TIMEOUT`,
/// `ENTER_ERROR:<code>` and `ENTER_CANCELLED`.
struct Stage {
    op: &'static str,
    going: &'static str,
    done: &'static str,
}

const ENTER: Stage = Stage {
    op: "enter",
    going: "ENTERING",
    done: "ENTERED",
};

const LEAVE: Stage = Stage {
    op: "leave",
    going: "LEAVING",
    done: "LEFT",
};

/// One member's round: enter (its outcome reported), then a moment of work
/// and leave.
async fn round_trip(ctx: &Ctx, link: &mut Link, rng: &mut Rng, barrier: &DoubleBarrier, k: u64) {
    let t = Duration::from_millis(rng.u64(1000..5000));
    if !pass(ctx, link, k, &ENTER, t, barrier.enter(t)).await {
        return;
    }
    tokio::time::sleep(Duration::from_millis(rng.u64(0..300))).await;
    if rng.u8(..4) == 0 {
        ctx.stats.bump("op.dbarrier.members");
        let members = barrier.members();
        counted_call(ctx, "double barrier members", "dbarrier.members", members).await;
        let ready = barrier.is_ready();
        counted_call(ctx, "double barrier is_ready", "dbarrier.is_ready", ready).await;
    }
    let t = Duration::from_secs(8);
    pass(ctx, link, k, &LEAVE, t, barrier.leave(t)).await;
}

/// A stage of round `k`, reported before and with its outcome; whether it passed.
async fn pass(
    ctx: &Ctx,
    link: &mut Link,
    k: u64,
    stage: &Stage,
    t: Duration,
    wait: impl Future<Output = zkrecipes::Result<bool>>,
) -> bool {
    let report = |what: &str| format!("DBAR {} {k} {what}", ctx.name);
    let op = stage.op;
    ctx.stats.bump(format!("op.dbarrier.{op}"));
    link.ask(report(stage.going)).await;
    let label = format!("double barrier {op}");
    let failed = op.to_uppercase();
    let what = match until_finish(ctx, watched(ctx, &label, t, wait)).await {
        Waited::Done(Ok(true)) => stage.done.to_string(),
        Waited::Done(Ok(false)) => format!("{failed}_TIMEOUT"),
        Waited::Done(Err(err)) => {
            ctx.error(&format!("dbarrier.{op}"), &err);
            format!("{failed}_ERROR:{}", err.code())
        }
        Waited::Cancelled => format!("{failed}_CANCELLED"),
    };
    ctx.stats.bump(format!("dbarrier.{what}"));
    link.ask(report(&what)).await;
    what == stage.done
}
