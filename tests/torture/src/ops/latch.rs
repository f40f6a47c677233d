//! Leader latch: one participant per worker on one path, started for the
//! whole run with an occasional close + new latch + start,
//! `await_leadership` with small timeouts, looks at the participants, and a
//! listener that reports leadership with its fencing token and calls back
//! into the latch (`participants()`, `has_leadership()`).
//!
//! `LATCH <w> on <token>` is reported only while the latch says it leads (and
//! with the token it says), `LATCH <w> off` on NOT_LEADER and SUSPENDED, and
//! *before* a close: a report mutex makes the listener's "on" and the task's
//! "off then close" exclusive, so that a late "on" cannot follow a close.
//! Each listener has a link of its own: it is aborted when its latch is
//! replaced, which must not leave an answer unread on a shared link.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast::error::RecvError;
use tokio::sync::Mutex;
use tokio::task::JoinHandle;
use zkrecipes::{LatchEvent, LeaderLatch};

use super::{begin, breathe, counted_call, listener_call, CallBack};
use crate::resource::Link;
use crate::worker::{watched, Ctx};

pub async fn run(ctx: Arc<Ctx>, seed: u64) {
    let (mut rng, mut link) = begin(&ctx, seed).await;
    let gate = Arc::new(Mutex::new(()));
    let (mut latch, mut listener) = match open(&ctx, &gate) {
        Some(opened) => opened,
        None => return,
    };
    let mut started = start(&ctx, &latch).await;
    while !ctx.finishing() {
        match rng.u8(..20) {
            0 => {
                close(&ctx, &latch, &mut link, &gate).await;
                listener.abort();
                (latch, listener) = match open(&ctx, &gate) {
                    Some(opened) => opened,
                    None => return,
                };
                started = start(&ctx, &latch).await;
            }
            1..=8 if started => {
                ctx.stats.bump("op.latch.await_leadership");
                let t = Duration::from_millis(rng.u64(0..30));
                match watched(&ctx, "await_leadership", t, latch.await_leadership(t)).await {
                    Ok(Some(_)) => ctx.stats.bump("latch.await_leadership.leads"),
                    Ok(None) => {}
                    Err(err) => ctx.error("latch.await_leadership", &err),
                }
            }
            9..=11 => {
                ctx.stats.bump("op.latch.participants");
                let listed = latch.participants();
                let participants =
                    counted_call(&ctx, "latch participants", "latch.participants", listed).await;
                let participants = participants.unwrap_or_default();
                let leaders = participants.iter().filter(|p| p.is_leader).count();
                if leaders > 1 {
                    ctx.violation(format!(
                        "participants() names {leaders} leaders: {participants:?}"
                    ));
                }
            }
            12..=13 => {
                ctx.stats.bump("op.latch.leader");
                counted_call(&ctx, "latch leader", "latch.leader", latch.leader()).await;
                let leads = latch.has_leadership();
                ctx.stats.bump(if leads {
                    "latch.leads"
                } else {
                    "latch.follows"
                });
                let _ = latch.fencing_token();
            }
            _ => {
                if !started {
                    started = start(&ctx, &latch).await;
                }
                tokio::time::sleep(Duration::from_millis(rng.u64(20..150))).await;
            }
        }
        breathe(&mut rng).await;
    }
    close(&ctx, &latch, &mut link, &gate).await;
    listener.abort();
}

fn open(ctx: &Arc<Ctx>, gate: &Arc<Mutex<()>>) -> Option<(LeaderLatch, JoinHandle<()>)> {
    let made = LeaderLatch::new(&ctx.client, &ctx.dir("latch"), &ctx.name);
    let latch = ctx.made("LeaderLatch::new", made)?;
    let listener = listen(ctx.clone(), latch.clone(), gate.clone());
    Some((latch, listener))
}

async fn start(ctx: &Ctx, latch: &LeaderLatch) -> bool {
    ctx.stats.bump("op.latch.start");
    match watched(ctx, "latch start", Duration::ZERO, latch.start()).await {
        Ok(()) => true,
        Err(err) => {
            ctx.error("latch.start", &err);
            false
        }
    }
}

/// "off" is reported before the close, under the report mutex: once it is
/// recorded, nobody may be told to lead because of us until we closed.
async fn close(ctx: &Ctx, latch: &LeaderLatch, link: &mut Link, gate: &Mutex<()>) {
    ctx.stats.bump("op.latch.close");
    let _reporting = gate.lock().await;
    link.ask(format!("LATCH {} off", ctx.name)).await;
    counted_call(ctx, "latch close", "latch.close", latch.close()).await;
    if latch.has_leadership() {
        ctx.violation("a closed latch still reports leadership".into());
    }
}

fn listen(ctx: Arc<Ctx>, latch: LeaderLatch, gate: Arc<Mutex<()>>) -> JoinHandle<()> {
    let mut events = latch.subscribe();
    tokio::spawn(async move {
        let mut link = Link::connect(&ctx.resource).await;
        let calls = CallBack::default();
        loop {
            let event = match events.recv().await {
                Ok(event) => Some(event),
                // Missed events: the latch's own state is reported below.
                Err(RecvError::Lagged(_)) => {
                    ctx.stats.bump("listener.lagged");
                    None
                }
                Err(RecvError::Closed) => return,
            };
            if let Some(event) = &event {
                ctx.stats.bump(format!("event.latch.{}", event.name()));
            }
            {
                let _reporting = gate.lock().await;
                match &event {
                    Some(LatchEvent::Suspended) => {
                        ctx.disturb();
                        link.ask(format!("LATCH {} off", ctx.name)).await;
                        link.ask(format!("SUSPENDED {} latch", ctx.name)).await;
                    }
                    Some(LatchEvent::NotLeader { .. }) => {
                        link.ask(format!("LATCH {} off", ctx.name)).await;
                    }
                    // IS_LEADER, RECONNECTED, or missed events: "on" only with what the
                    // latch says now (an old IS_LEADER may be read after a loss).
                    _ => {
                        if let (true, Some(token)) = (latch.has_leadership(), latch.fencing_token())
                        {
                            link.ask(format!("LATCH {} on {token}", ctx.name)).await;
                        } else if event.is_none() {
                            link.ask(format!("LATCH {} off", ctx.name)).await;
                        }
                    }
                }
            }
            let latch = latch.clone();
            calls.spawn(&ctx, |ctx| async move {
                listener_call(&ctx, "latch_participants", latch.participants()).await;
                let _ = latch.has_leadership();
            });
        }
    })
}
