//! The operations workers draw at random, and what they share: holds,
//! critical sections reported to the resource, timeouts, lock listeners.

pub mod barrier;
pub mod cache;
pub mod counter;
pub mod discovery;
pub mod election;
pub mod latch;
pub mod lock;
pub mod queue;
pub mod rw;
pub mod semaphore;
pub mod work_queue;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use fastrand::Rng;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::broadcast::Receiver;
use tokio::task::JoinHandle;
use zkrecipes::{Lock, LockEvent, LockGuard, Owner, Wait};

use crate::resource::{Link, Sec};
use crate::worker::{watched, Ctx};
use zkrecipes::ffi::OwnedLock;

/// Picks one of `choices` by weight.
pub fn pick<T: Copy>(rng: &mut Rng, choices: &[(T, u32)]) -> T {
    let total: u32 = choices.iter().map(|(_, w)| w).sum();
    let mut at = rng.u32(..total);
    for (choice, weight) in choices {
        if at < *weight {
            return *choice;
        }
        at -= weight;
    }
    choices[choices.len() - 1].0
}

/// A timeout for a bounded acquire or take: zero, sub-millisecond, about one
/// round trip, a few, or long enough to wait behind a holder.
pub fn timeout(rng: &mut Rng, rtt: Duration) -> Duration {
    match rng.u8(..10) {
        0 => Duration::ZERO,
        1 => Duration::from_micros(1),
        2 => Duration::from_micros(100),
        3 => Duration::from_micros(300),
        4 => Duration::from_millis(1),
        5 => Duration::from_millis(2),
        6 => rtt,
        7 => rtt * rng.u32(2..6),
        _ => Duration::from_millis(50),
    }
}

/// How long until a future is dropped mid-way: short enough to catch every
/// stage of a call (before its first request, between its requests).
pub fn cancel_after(rng: &mut Rng, rtt: Duration) -> Duration {
    match rng.u8(..4) {
        0 => Duration::from_micros(rng.u64(0..300)),
        1 => Duration::from_micros(rng.u64(300..3000)),
        _ => rtt.mul_f64(rng.f64() * 4.0),
    }
}

/// What a task starts from: its own random stream (from its seed, so that a seed replays) and
/// its own link to the resource (a link's answers come in order: tasks do not share one).
pub async fn begin(ctx: &Ctx, seed: u64) -> (Rng, Link) {
    (Rng::with_seed(seed), Link::connect(&ctx.resource).await)
}

/// A call with no bound of its own, watched for a hang, whose failure under faults is an
/// answer, counted under `stat`: its value, or `None` after an error.
pub async fn counted_call<T>(
    ctx: &Ctx,
    what: &str,
    stat: &str,
    call: impl std::future::Future<Output = zkrecipes::Result<T>>,
) -> Option<T> {
    match watched(ctx, what, Duration::ZERO, call).await {
        Ok(out) => Some(out),
        Err(err) => {
            ctx.error(stat, &err);
            None
        }
    }
}

/// Back-pressure for a producer: whether more than `backlog` items wait (`waiting`, a
/// `size()`), after a moment for the consumers to catch up. Consumers must keep up, or
/// nothing offered in the calm phase is delivered before the run ends.
pub async fn backed_up(waiting: zkrecipes::Result<usize>, backlog: usize) -> bool {
    let backed_up = waiting.is_ok_and(|waiting| waiting > backlog);
    if backed_up {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    backed_up
}

/// The wait of an acquire that is dropped mid-way: forever, or bounded as `timeout` draws it.
pub fn cancelled_wait(rng: &mut Rng, rtt: Duration) -> Wait {
    if rng.bool() {
        Wait::Forever
    } else {
        Wait::For(timeout(rng, rtt))
    }
}

/// Whether `holds` (an object's count of holds or leases) is 0 within 2 s of the last release:
/// background releases (a dropped guard's, a cancelled one's) get that moment.
pub async fn none_held_soon(holds: impl Fn() -> usize) -> bool {
    for _ in 0..20 {
        if holds() == 0 {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

/// A short random pause between operations, so that 2 cores keep up.
pub async fn breathe(rng: &mut Rng) {
    tokio::time::sleep(Duration::from_millis(rng.u64(1..12))).await;
}

/// A hold of some lock: by guard, or by owner (released with `unlock_as`).
pub enum Held {
    Guard(LockGuard),
    Owned {
        lock: Lock,
        owner: Owner,
        count: u32,
        token: i64,
    },
}

/// Whatever a critical section is written under: a lock hold, a semaphore lease.
pub trait Holding {
    fn token(&self) -> i64;
    /// Whether the recipe still reports the hold (not lost, not released).
    fn still_held(&self) -> bool;
}

impl Holding for Held {
    fn token(&self) -> i64 {
        match self {
            Held::Guard(g) => g.fencing_token(),
            Held::Owned { token, .. } => *token,
        }
    }

    fn still_held(&self) -> bool {
        match self {
            Held::Guard(g) => g.is_held(),
            Held::Owned { lock, owner, .. } => lock.is_held_by(*owner),
        }
    }
}

impl Holding for zkrecipes::Lease {
    fn token(&self) -> i64 {
        self.fencing_token()
    }

    fn still_held(&self) -> bool {
        self.is_held()
    }
}

impl Held {
    /// A single hold of `owner`, taken by `lock_as`.
    pub fn owned(lock: &Lock, owner: Owner, token: i64) -> Held {
        Held::Owned {
            lock: lock.clone(),
            owner,
            count: 1,
            token,
        }
    }

    /// Releases every hold count: confirmed, dropped (background), or
    /// abandoned half-way (a dropped release future) — all must end the hold.
    pub async fn release(self, ctx: &Ctx, rng: &mut Rng, what: &str) {
        match self {
            Held::Guard(guard) => match rng.u8(..20) {
                n if n <= 11 || (n >= 15 && ctx.skips("cancel-release")) => {
                    let stat = format!("{what}.release");
                    ctx.stats.bump(&stat);
                    counted_call(ctx, "release", &stat, guard.release()).await;
                }
                12..=14 => {
                    ctx.stats.bump(format!("{what}.release_by_drop"));
                    drop(guard);
                }
                _ => {
                    ctx.stats.bump(format!("{what}.release_cancelled"));
                    let after = cancel_after(rng, ctx.rtt);
                    let _ = tokio::time::timeout(after, guard.release()).await;
                }
            },
            Held::Owned {
                lock, owner, count, ..
            } => {
                for _ in 0..count {
                    if rng.u8(..5) == 0 && !ctx.skips("cancel-release") {
                        ctx.stats.bump(format!("{what}.unlock_cancelled"));
                        let after = cancel_after(rng, ctx.rtt);
                        if tokio::time::timeout(after, lock.unlock_as(owner))
                            .await
                            .is_err()
                        {
                            // The rest of the holds cannot be released
                            // while that release is under way.
                            return;
                        }
                    } else {
                        let stat = format!("{what}.unlock_as");
                        ctx.stats.bump(&stat);
                        counted_call(ctx, "unlock_as", &stat, lock.unlock_as(owner)).await;
                    }
                }
            }
        }
    }
}

/// One to a few critical sections under `held`, each reported as
/// `BEGIN … END`. Writing stops (`ABORT`, or no `BEGIN`) as soon as a
/// recipe said SUSPENDED or LOST, the connection is down, or the hold is
/// gone; a `STALE` answer ends the hold's writing too.
pub async fn critical(ctx: &Ctx, link: &mut Link, sec: Sec, held: &Held, rng: &mut Rng) {
    sections(ctx, link, sec, &[held], rng, ctx.epoch()).await;
}

/// Sections under several holds at once (a semaphore's leases): each round
/// begins one section per hold, then ends them all, so that every hold is in
/// force at the resource at the same time. The rules of `critical` apply.
pub async fn critical_all<H: Holding>(
    ctx: &Ctx,
    link: &mut Link,
    sec: Sec,
    holds: &[H],
    rng: &mut Rng,
    epoch: u64,
) {
    let holds: Vec<&H> = holds.iter().collect();
    sections(ctx, link, sec, &holds, rng, epoch).await;
}

/// A hold whose holder was frozen for well past its session (the server
/// expired it and may have handed the lock on) must have been reported lost —
/// SUSPENDED or LOST — by the time its release has returned and the recipes
/// had a moment to pass the news on; a release that quietly "succeeds" and an
/// object that still reports the hold are what this catches.
pub async fn told_of_a_pause(
    ctx: &Ctx,
    since: std::time::Instant,
    epoch: u64,
    token: i64,
    still_held: impl Fn() -> bool,
) {
    let session = ctx.client.session_timeout();
    let Some(pause) = ctx.paused_since(since) else {
        return;
    };
    if pause < session + session / 2 {
        return;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    if ctx.steady(epoch) {
        ctx.violation(format!(
            "frozen for {pause:?} (session {session:?}) while holding token {token}: never told SUSPENDED/LOST{}",
            if still_held() { "; the object still reports the hold" } else { "; its release reported success" }
        ));
    } else {
        ctx.stats.bump("sections.pause_told");
    }
}

async fn sections<H: Holding>(
    ctx: &Ctx,
    link: &mut Link,
    sec: Sec,
    holds: &[&H],
    rng: &mut Rng,
    epoch: u64,
) {
    let p = sec.prefix();
    let sections = if rng.u8(..8) == 0 { rng.u32(2..5) } else { 1 };
    for n in 0..sections {
        // The holds whose section began (a STALE answer ends that hold's writing).
        let mut begun = Vec::with_capacity(holds.len());
        let mut stale = false;
        for held in holds {
            if !ctx.steady(epoch) || !held.still_held() {
                ctx.stats.bump("sections.given_up");
                break;
            }
            let token = held.token();
            let answer = link.ask(format!("{p}BEGIN {} {token}", ctx.name)).await;
            if answer == "STALE" {
                ctx.stats.bump("sections.stale");
                stale = true;
                break;
            }
            begun.push(*held);
        }
        if !begun.is_empty() {
            tokio::time::sleep(Duration::from_micros(rng.u64(0..5000))).await;
        }
        let mut aborted = false;
        for held in &begun {
            let token = held.token();
            // Once one hold is found lost, every open section of this round stops.
            if aborted || !ctx.steady(epoch) || !held.still_held() {
                link.ask(format!("{p}ABORT {} {token}", ctx.name)).await;
                ctx.stats.bump("sections.aborted");
                aborted = true;
                continue;
            }
            link.ask(format!("{p}END {} {token}", ctx.name)).await;
            ctx.stats.bump("sections");
        }
        if aborted || stale || begun.len() < holds.len() {
            return;
        }
        if n + 1 < sections {
            tokio::time::sleep(Duration::from_millis(rng.u64(0..40))).await;
        }
    }
}

/// The next event a listener hears: `None` once its object is gone; a lag (the listener fell
/// behind) is counted and passed over.
pub async fn next_event<E: Clone>(ctx: &Ctx, events: &mut Receiver<E>) -> Option<E> {
    loop {
        match events.recv().await {
            Ok(event) => return Some(event),
            Err(RecvError::Lagged(_)) => ctx.stats.bump("listener.lagged"),
            Err(RecvError::Closed) => return None,
        }
    }
}

/// A listener's calls back into the library: each in a task of its own, so that reporting is
/// never held up by one, and one at a time: an event that comes while one runs is counted and
/// makes none.
#[derive(Clone, Default)]
pub struct CallBack(Arc<AtomicBool>);

impl CallBack {
    /// Runs `call` (given the worker's context) unless one still runs.
    pub fn spawn<F>(&self, ctx: &Arc<Ctx>, call: impl FnOnce(Arc<Ctx>) -> F)
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        if self.0.swap(true, Ordering::SeqCst) {
            ctx.stats.bump("listener.callback_skipped");
            return;
        }
        let busy = self.0.clone();
        let call = call(ctx.clone());
        tokio::spawn(async move {
            call.await;
            busy.store(false, Ordering::SeqCst);
        });
    }
}

/// A listener's call `name` back into the library, counted as `listener.<name>` (its
/// errors too).
pub async fn listener_call<T>(
    ctx: &Ctx,
    name: &str,
    call: impl std::future::Future<Output = zkrecipes::Result<T>>,
) -> Option<T> {
    let stat = format!("listener.{name}");
    ctx.stats.bump(&stat);
    counted_call(ctx, &format!("{name}() in a listener"), &stat, call).await
}

/// Follows a lock object's events: reports SUSPENDED / LOST / RECONNECTED at
/// once, and on every event calls back into the library (in a task of its
/// own, one at a time, so that reporting is never held up by a call).
pub fn listen_lock(ctx: Arc<Ctx>, lock: Lock, object: &'static str) -> JoinHandle<()> {
    let events = lock.subscribe();
    follow_holder_events(ctx, events, object, move |ctx, connection_event| {
        let lock = lock.clone();
        async move { callback(&ctx, &lock, connection_event).await }
    })
}

/// Follows the events of a lock or semaphore object: each is reported (`report_lock_event`),
/// then `call` back into the library (told whether it was a connection event) in a task of
/// its own, one at a time.
pub fn follow_holder_events<C, F>(
    ctx: Arc<Ctx>,
    mut events: Receiver<LockEvent>,
    object: &'static str,
    call: C,
) -> JoinHandle<()>
where
    C: Fn(Arc<Ctx>, bool) -> F + Send + 'static,
    F: std::future::Future<Output = ()> + Send + 'static,
{
    tokio::spawn(async move {
        let mut link = Link::connect(&ctx.resource).await;
        let calls = CallBack::default();
        while let Some(event) = next_event(&ctx, &mut events).await {
            let connection_event = report_lock_event(&ctx, &mut link, object, &event).await;
            calls.spawn(&ctx, |ctx| call(ctx, connection_event));
        }
    })
}

/// Counts an event of a lock or a semaphore object and reports a connection event (SUSPENDED,
/// LOST, RECONNECTED) at once: SUSPENDED and LOST end every hold of the worker. Whether it
/// was one.
async fn report_lock_event(ctx: &Ctx, link: &mut Link, object: &str, event: &LockEvent) -> bool {
    ctx.stats.bump(format!("event.{object}.{}", event.name()));
    if matches!(event, LockEvent::Suspended | LockEvent::Lost { .. }) {
        ctx.disturb();
    }
    let connection_event = !matches!(event, LockEvent::Acquired { .. } | LockEvent::Released);
    if connection_event {
        link.ask(format!("{} {} {object}", event.name(), ctx.name))
            .await;
    }
    connection_event
}

/// What a listener does from inside an event: look at the contenders, and
/// after a connection event try the lock (an acquire after an ACQUIRED would
/// feed itself forever).
async fn callback(ctx: &Ctx, lock: &Lock, try_lock: bool) {
    listener_call(ctx, "participants", lock.participants()).await;
    if !try_lock {
        return;
    }
    ctx.stats.bump("listener.try_acquire");
    let tried = watched(
        ctx,
        "acquire_timeout(1ms) in a listener",
        Duration::from_millis(1),
        lock.acquire_timeout(Duration::from_millis(1)),
    )
    .await;
    match tried {
        Ok(Some(guard)) => {
            counted_call(
                ctx,
                "release in a listener",
                "listener.release",
                guard.release(),
            )
            .await;
        }
        Ok(None) => {}
        Err(err) if crate::worker::is_timeout(&err) => {
            ctx.violation("acquire_timeout(1ms) in a listener answered TIMEOUT".into())
        }
        Err(err) => ctx.error("listener.try_acquire", &err),
    }
}
