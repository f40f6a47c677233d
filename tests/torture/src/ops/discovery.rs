//! Service discovery: every Rust worker registers one DYNAMIC instance of `svc` (its id the
//! worker's name, unique to each process) on a `ServiceDiscovery` of its client, follows the
//! service with a `ServiceCache`, and now and then updates its instance, queries the registry,
//! or unregisters and registers again.
//!
//! Reported: `DISC <w> up` once its register returned, `DISC <w> down` before an unregister,
//! `DISC <w> add <id>` / `DISC <w> del <id>` as its cache tells them, `DISC <w> session` when a
//! new session follows an expiry and `DISC <w> back` when its instance is made again. The
//! driver judges (`checks/discovery.rs`) that a killed worker's instance leaves every other
//! cache within the session timeout and 2 s, and that an instance is back within 2 s of its
//! registrant's new session, outside faults. The worker judges itself at the finish that its
//! cache holds exactly what the registry holds.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast::error::RecvError;
use tokio::time::Instant;
use zkrecipes::{
    ConnectionState, DiscoveryEvent, ServiceCache, ServiceCacheEvent, ServiceDiscovery,
    ServiceInstance,
};

use super::{begin, breathe, counted_call};
use crate::resource::Link;
use crate::worker::Ctx;

/// The one service every worker registers in.
const SERVICE: &str = "svc";
/// How long a finishing worker's cache may take to hold what the registry holds.
const CONVERGE: Duration = Duration::from_secs(10);

pub async fn run(ctx: Arc<Ctx>, seed: u64) {
    if ctx.skips("discovery") {
        return;
    }
    let (mut rng, mut link) = begin(&ctx, seed).await;
    let made = ServiceDiscovery::new(&ctx.client, &ctx.dir("services"));
    let Some(registry) = ctx.made("ServiceDiscovery::new", made) else {
        return;
    };
    let made = registry.service_cache(SERVICE);
    let Some(cache) = ctx.made("ServiceDiscovery::service_cache", made) else {
        return;
    };
    let follower = tokio::spawn(follow(ctx.clone(), cache.clone()));
    let back = tokio::spawn(report_returns(ctx.clone(), registry.clone()));
    if counted_call(
        &ctx,
        "service cache start",
        "disc.cache_start",
        cache.start(),
    )
    .await
    .is_none()
    {
        ctx.stats.bump("disc.cache_start_failed");
    }
    let mut port = 1u16;
    let mut up = register(&ctx, &registry, &mut link, port).await;
    while !ctx.finishing() {
        match rng.u8(..20) {
            0 if up => {
                ctx.stats.bump("op.disc.unregister");
                link.ask(format!("DISC {} down", ctx.name)).await;
                let gone = registry.unregister(SERVICE, &ctx.name);
                up = counted_call(&ctx, "unregister", "disc.unregister", gone)
                    .await
                    .is_none();
            }
            1..=3 if up => {
                ctx.stats.bump("op.disc.update");
                port = port % 60000 + 1;
                let updated = registry.update(instance(&ctx, port));
                counted_call(&ctx, "update", "disc.update", updated).await;
            }
            4..=6 => {
                ctx.stats.bump("op.disc.query");
                let found = registry.query_for_instances(SERVICE);
                counted_call(&ctx, "query_for_instances", "disc.query", found).await;
            }
            _ if !up => up = register(&ctx, &registry, &mut link, port).await,
            _ => tokio::time::sleep(Duration::from_millis(rng.u64(20..200))).await,
        }
        breathe(&mut rng).await;
    }
    converged(&ctx, &registry, &cache).await;
    back.abort();
    // What is left of the registration goes with the registry's close.
    link.ask(format!("DISC {} down", ctx.name)).await;
    counted_call(&ctx, "discovery close", "disc.close", registry.close()).await;
    let _ = follower.await;
}

fn instance(ctx: &Ctx, port: u16) -> ServiceInstance {
    let mut instance = ServiceInstance::new(SERVICE);
    instance.id = ctx.name.clone();
    instance.address = Some("127.0.0.1".into());
    instance.port = Some(port);
    instance
}

/// Registers this worker's instance; `up` is reported once the node exists.
async fn register(ctx: &Ctx, registry: &ServiceDiscovery, link: &mut Link, port: u16) -> bool {
    ctx.stats.bump("op.disc.register");
    let registered = registry.register(instance(ctx, port));
    let up = counted_call(ctx, "register", "disc.register", registered)
        .await
        .is_some();
    if up {
        link.ask(format!("DISC {} up", ctx.name)).await;
    }
    up
}

/// Reports every instance the cache adds and removes, on a link of its own.
async fn follow(ctx: Arc<Ctx>, cache: ServiceCache) {
    let mut link = Link::connect(&ctx.resource).await;
    let mut events = cache.subscribe();
    while let Some(event) = events.recv().await {
        let (what, id) = match &event {
            ServiceCacheEvent::Added(i) => ("add", &i.id),
            ServiceCacheEvent::Removed(i) => ("del", &i.id),
            _ => continue,
        };
        ctx.stats.bump(format!("disc.cache.{what}"));
        link.ask(format!("DISC {} {what} {id}", ctx.name)).await;
    }
}

/// Reports `DISC <w> session` when a new session follows an expiry while the registry keeps
/// the instance (and it was not made again yet), and `DISC <w> back` when it is made again
/// (`REREGISTERED`): the driver judges the time between, outside faults.
async fn report_returns(ctx: Arc<Ctx>, registry: ServiceDiscovery) {
    let mut link = Link::connect(&ctx.resource).await;
    let mut states = ctx.client.subscribe();
    let mut told = registry.subscribe();
    let mut expired = false;
    loop {
        tokio::select! {
            state = states.recv() => match state {
                Ok(ConnectionState::Lost) => expired = true,
                Ok(ConnectionState::Connected | ConnectionState::Reconnected) if expired => {
                    expired = false;
                    if registry.registered().iter().any(|i| i.id == ctx.name) {
                        link.ask(format!("DISC {} session", ctx.name)).await;
                    }
                }
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return,
            },
            event = told.recv() => match event {
                Ok(DiscoveryEvent::Reregistered { .. }) => {
                    ctx.stats.bump("disc.reregistered");
                    expired = false;
                    link.ask(format!("DISC {} back", ctx.name)).await;
                }
                Ok(DiscoveryEvent::RegistrationStopped { error, .. }) => {
                    ctx.violation(format!("the registration stopped: {error}"));
                }
                Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return,
            },
        }
    }
}

/// At the finish: the cache holds exactly the registry's instances (read now) within
/// `CONVERGE`, with the instances every worker keeps changing no more than registers and
/// closes at the finish do.
async fn converged(ctx: &Ctx, registry: &ServiceDiscovery, cache: &ServiceCache) {
    let deadline = Instant::now() + CONVERGE;
    let mut last = String::new();
    while Instant::now() < deadline {
        let cached: BTreeSet<String> = cache.instances().into_iter().map(|i| i.id).collect();
        match registry.query_for_instances(SERVICE).await {
            Ok(found) => {
                let held: BTreeSet<String> = found.into_iter().map(|i| i.id).collect();
                if held == cached {
                    ctx.stats.bump("disc.converged");
                    return;
                }
                last = format!("cache {cached:?}, registry {held:?}");
            }
            Err(err) => last = format!("query failed: {err}"),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    ctx.violation(format!(
        "its service cache did not come to hold the registry's instances within {CONVERGE:?}: {last}"
    ));
}
