//! Leader election: one member per worker, started for the whole run with
//! occasional stop/start, `await_leadership` with small timeouts, and a
//! listener that reports leadership and calls back into the library.
//!
//! `LEADER <w> on` is reported only while the member says it leads, and
//! `off` *before* a stop: a report mutex makes the listener's "on" and the
//! task's "off then stop" exclusive, so a late "on" cannot follow a stop.

use std::sync::Arc;
use std::time::Duration;

use fastrand::Rng;

use tokio::sync::Mutex;
use zkrecipes::{ElectionEvent, LeaderElectionSupport};

use super::{breathe, counted_call, listener_call, next_event, CallBack};
use crate::resource::Link;
use crate::worker::{watched, Ctx};

pub async fn run(ctx: Arc<Ctx>, seed: u64) {
    let mut rng = Rng::with_seed(seed);
    let link = Arc::new(Mutex::new(Link::connect(&ctx.resource).await));
    let made = LeaderElectionSupport::new(&ctx.client, &ctx.dir("election"), &ctx.name);
    let Some(member) = ctx.made("LeaderElectionSupport::new", made) else {
        return;
    };
    let listener = listen(ctx.clone(), member.clone(), link.clone());
    let mut started = start(&ctx, &member, &link).await;
    while !ctx.finishing() {
        match rng.u8(..20) {
            0 => {
                if started {
                    stop(&ctx, &member, &link).await;
                }
                started = start(&ctx, &member, &link).await;
            }
            1..=8 => {
                ctx.stats.bump("op.election.await_leadership");
                let t = Duration::from_millis(rng.u64(0..30));
                if let Err(err) = watched(
                    &ctx,
                    "await_leadership",
                    t,
                    member.await_leadership(Some(t)),
                )
                .await
                {
                    ctx.error("election.await_leadership", &err);
                }
            }
            9..=12 => {
                ctx.stats.bump("op.election.leader_host_name");
                let named = member.leader_host_name();
                counted_call(&ctx, "leader_host_name", "election.leader_host_name", named).await;
            }
            _ => {
                if !started {
                    started = start(&ctx, &member, &link).await;
                }
                tokio::time::sleep(Duration::from_millis(rng.u64(20..150))).await;
            }
        }
        breathe(&mut rng).await;
    }
    stop(&ctx, &member, &link).await;
    listener.abort();
}

async fn start(ctx: &Ctx, member: &LeaderElectionSupport, link: &Mutex<Link>) -> bool {
    ctx.stats.bump("op.election.start");
    match watched(ctx, "election start", Duration::ZERO, member.start()).await {
        Ok(()) => {
            link.lock()
                .await
                .ask(format!("ELECT {} start", ctx.name))
                .await;
            true
        }
        Err(err) => {
            ctx.error("election.start", &err);
            false
        }
    }
}

/// "off" is reported before the stop: once it is recorded, nobody may be
/// elected because of us until we stopped.
async fn stop(ctx: &Ctx, member: &LeaderElectionSupport, link: &Mutex<Link>) {
    ctx.stats.bump("op.election.stop");
    let mut link = link.lock().await;
    link.ask(format!("LEADER {} off", ctx.name)).await;
    link.ask(format!("ELECT {} stop", ctx.name)).await;
    counted_call(ctx, "election stop", "election.stop", member.stop()).await;
}

fn listen(
    ctx: Arc<Ctx>,
    member: LeaderElectionSupport,
    link: Arc<Mutex<Link>>,
) -> tokio::task::JoinHandle<()> {
    let mut events = member.subscribe();
    tokio::spawn(async move {
        let calls = CallBack::default();
        while let Some(event) = next_event(&ctx, &mut events).await {
            ctx.stats.bump(format!("event.election.{}", event.name()));
            match event {
                ElectionEvent::ElectedComplete | ElectionEvent::Reconnected => {
                    let mut link = link.lock().await;
                    if member.is_leader() {
                        link.ask(format!("LEADER {} on", ctx.name)).await;
                    }
                }
                ElectionEvent::Suspended | ElectionEvent::Failed(_) | ElectionEvent::StopStart => {
                    let line = format!("LEADER {} off", ctx.name);
                    let suspended = matches!(event, ElectionEvent::Suspended);
                    let mut link = link.lock().await;
                    link.ask(line).await;
                    if suspended {
                        link.ask(format!("SUSPENDED {} election", ctx.name)).await;
                    }
                }
                _ => {}
            }
            let member = member.clone();
            calls.spawn(&ctx, |ctx| async move {
                listener_call(&ctx, "leader_host_name", member.leader_host_name()).await;
            });
        }
    })
}
