//! Caches under random writes and faults: every Rust worker writes at random in one small
//! subtree, `<root>/cache` (writes.rs), and follows it with a `Cache::tree` on persistent
//! watches and, one worker in two, a second one on one-shot watches (`with_watches(.., true)`),
//! each of depth 2 or unlimited. Each cache's events are taken by `snapshot_and_subscribe`, at
//! the start or before it, and replayed as they come (replay.rs); its snapshot is looked at
//! now and then for its shape.
//!
//! At the finish a worker stops its writers and says so (`CACHE <w> quiet`); once every live
//! Rust worker has (`CACHEWAIT <w>` answers `GO`), it writes the marker `<root>/cache/marker`
//! and waits until each cache holds the marker at that write or later. Then nothing but
//! other workers' markers changes any more, and (the marker left out):
//!
//! - `CACHEMATCH <w> <cache> ok nodes=<n>`, or `differs`/`failed` with the first differences:
//!   the snapshot against the server's subtree read then (path, data, czxid, mzxid);
//! - `CACHEREPLAY <w> <cache> fits <counts>`, or `misfit` with the first misfits: the events
//!   all fitted, the replayed copy is the snapshot, and the stream ended at `close`.

mod replay;
mod writes;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc::error::TryRecvError;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::Instant;
use zkrecipes::{Cache, CacheEvent, CacheScope, CachedNode};
use zookeeper_client as zk;

use super::begin;
use crate::resource::Link;
use crate::worker::{watched, Ctx};
use replay::{brief, by_path, shape, Replay};

/// The subtree the caches follow, under the run's root.
pub const DIR: &str = "cache";
const MARKER: &str = "marker";
/// How long a worker waits for the others' writers to stop, and a cache for the marker.
const BARRIER: Duration = Duration::from_secs(20);
const MARKER_SEEN: Duration = Duration::from_secs(10);
/// Differences (misfits) a report line carries.
const SHOWN: usize = 4;

struct Followed {
    /// `persistent` or `oneshot`, with the depth: `persistent-d2`, `oneshot-all`.
    name: String,
    cache: Cache,
    max_depth: Option<u32>,
    /// `None` until the cache started (when subscribed after `start`).
    events: Option<UnboundedReceiver<CacheEvent>>,
    replay: Option<Replay>,
}

pub async fn run(ctx: Arc<Ctx>, seed: u64) {
    if ctx.skips("cache") {
        return;
    }
    let (mut rng, mut link) = begin(&ctx, seed).await;
    let root = ctx.dir(DIR);
    let writer = tokio::spawn(writes::run(ctx.clone(), root.clone(), rng.u64(..)));
    let mut followed = Vec::new();
    let mut failed = Vec::new();
    let oneshot = rng.bool();
    for ordinary in [false, true] {
        if ordinary && !oneshot {
            continue;
        }
        let max_depth = if rng.bool() { Some(2) } else { None };
        let name = format!(
            "{}-{}",
            if ordinary { "oneshot" } else { "persistent" },
            max_depth.map_or("all".to_string(), |d| format!("d{d}"))
        );
        let scope = CacheScope::Tree { max_depth };
        let made = Cache::with_watches(&ctx.client, &root, scope, ordinary);
        let Some(cache) = ctx.made("Cache::with_watches", made) else {
            return;
        };
        ctx.stats.bump("cache.started");
        let mut f = Followed {
            name,
            cache,
            max_depth,
            events: None,
            replay: None,
        };
        // Half the caches are subscribed before `start`: the first load's events are replayed too.
        if rng.bool() {
            f.subscribe(&root);
        }
        let budget = ctx.client.session_timeout() * 2;
        match watched(&ctx, "cache start", budget, f.cache.start()).await {
            Ok(()) => {
                f.subscribe(&root);
                followed.push(f);
            }
            Err(err) => failed.push((f.name, format!("start failed: {err}"))),
        }
    }
    while !ctx.finishing() {
        tokio::time::sleep(Duration::from_millis(rng.u64(50..400))).await;
        for f in &mut followed {
            f.take_events();
            ctx.stats.bump("op.cache.snapshot");
            let snapshot = f.cache.snapshot();
            let problems = shape(&root, f.max_depth, &snapshot);
            let replay = f.replay.as_mut().expect("subscribed");
            for problem in problems {
                replay.misfit(format!(
                    "a snapshot at {} events: {problem}",
                    replay.events()
                ));
            }
        }
    }
    let _ = writer.await;
    link.ask(format!("CACHE {} quiet", ctx.name)).await;
    for (name, why) in failed {
        for line in ["CACHEMATCH", "CACHEREPLAY"] {
            link.ask(format!("{line} {} {name} failed {why}", ctx.name))
                .await;
        }
    }
    if !others_quiet(&ctx, &mut link).await {
        for f in followed {
            let why = "unjudged: the writers of another worker did not stop in time";
            for line in ["CACHEMATCH", "CACHEREPLAY"] {
                link.ask(format!("{line} {} {} {why}", ctx.name, f.name))
                    .await;
            }
        }
        return;
    }
    let marked = mark(&ctx, &root).await;
    for f in followed {
        judge(&ctx, &mut link, &root, &marked, f).await;
    }
}

impl Followed {
    fn subscribe(&mut self, root: &str) {
        if self.events.is_none() {
            let (snapshot, events) = self.cache.snapshot_and_subscribe();
            self.replay = Some(Replay::new(root, self.max_depth, snapshot));
            self.events = Some(events);
        }
    }

    /// Replays the events that came so far.
    fn take_events(&mut self) {
        let (Some(events), Some(replay)) = (self.events.as_mut(), self.replay.as_mut()) else {
            return;
        };
        loop {
            match events.try_recv() {
                Ok(event) => replay.apply(&event),
                Err(TryRecvError::Empty) => return,
                Err(TryRecvError::Disconnected) => {
                    replay.misfit("the event stream ended before close".to_string());
                    self.events = None;
                    return;
                }
            }
        }
    }
}

/// Waits until the writers of every live Rust worker have stopped.
async fn others_quiet(ctx: &Ctx, link: &mut Link) -> bool {
    let deadline = Instant::now() + BARRIER;
    while Instant::now() < deadline {
        if link.ask(format!("CACHEWAIT {}", ctx.name)).await == "GO" {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// Writes the marker (and the root, if a writer deleted it); the client, and the marker's
/// `mzxid`.
async fn mark(ctx: &Ctx, root: &str) -> Result<(zk::Client, i64), String> {
    let deadline = Instant::now() + MARKER_SEEN;
    let mut last = String::from("no connection");
    while Instant::now() < deadline {
        let Some(zk) = writes::connect(ctx).await else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        match write_marker(&zk, root, ctx.name.as_bytes()).await {
            Ok(mzxid) => return Ok((zk, mzxid)),
            Err(err) => last = err.to_string(),
        }
    }
    Err(format!("cannot write the marker: {last}"))
}

async fn write_marker(zk: &zk::Client, root: &str, data: &[u8]) -> Result<i64, zk::Error> {
    match zk.create(root, b"", &writes::open()).await {
        Ok(_) | Err(zk::Error::NodeExists) => {}
        Err(err) => return Err(err),
    }
    let marker = format!("{root}/{MARKER}");
    loop {
        match zk.set_data(&marker, data, None).await {
            Ok(stat) => return Ok(stat.mzxid),
            Err(zk::Error::NoNode) => {}
            Err(err) => return Err(err),
        }
        match zk.create(&marker, data, &writes::open()).await {
            Ok((stat, _)) => return Ok(stat.mzxid),
            Err(zk::Error::NodeExists) => {}
            Err(err) => return Err(err),
        }
    }
}

/// Compares one cache with the server once it holds the marker, replays its last events,
/// closes it, and reports both verdicts.
async fn judge(
    ctx: &Ctx,
    link: &mut Link,
    root: &str,
    marked: &Result<(zk::Client, i64), String>,
    mut f: Followed,
) {
    let w = &ctx.name;
    let marker = format!("{root}/{MARKER}");
    let matched = match marked {
        Err(why) => format!("failed {why}"),
        Ok((zk, mzxid)) => match_server(zk, root, &marker, *mzxid, &f).await,
    };
    link.ask(format!("CACHEMATCH {w} {} {matched}", f.name))
        .await;
    f.take_events();
    let snapshot = f.cache.snapshot();
    f.cache.close();
    let mut replay = f.replay.take().expect("subscribed");
    for problem in shape(root, f.max_depth, &snapshot) {
        replay.misfit(format!("the last snapshot: {problem}"));
    }
    for difference in replay.differences(&snapshot, &marker) {
        replay.misfit(format!("at the end: {difference}"));
    }
    if let Some(mut events) = f.events.take() {
        // Events published before `close` are still to come; then the stream ends.
        let ended = tokio::time::timeout(Duration::from_secs(2), async {
            while let Some(event) = events.recv().await {
                replay.apply(&event);
            }
        })
        .await;
        if ended.is_err() {
            replay.misfit("the event stream did not end at close".to_string());
        }
    }
    for (name, n) in &replay.counts {
        for _ in 0..*n {
            ctx.stats.bump(format!("event.cache.{name}"));
        }
    }
    let (misfits, first) = replay.misfits();
    let verdict = if misfits == 0 {
        let counts: Vec<String> = replay
            .counts
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        format!("fits events={} {}", replay.events(), counts.join(" "))
    } else {
        format!(
            "misfit {misfits} of {} events: {}",
            replay.events(),
            first[..first.len().min(SHOWN)].join(" | ")
        )
    };
    link.ask(format!("CACHEREPLAY {w} {} {verdict}", f.name))
        .await;
}

async fn match_server(
    zk: &zk::Client,
    root: &str,
    marker: &str,
    mzxid: i64,
    f: &Followed,
) -> String {
    let deadline = Instant::now() + MARKER_SEEN;
    while f.cache.get(marker).is_none_or(|m| m.stat.mzxid < mzxid) {
        if Instant::now() >= deadline {
            let held = f
                .cache
                .get(marker)
                .map_or("nothing".to_string(), |m| brief(&m));
            return format!(
                "differs the marker written at mzxid {mzxid:#x} not seen in {MARKER_SEEN:?} (it holds {held})"
            );
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let snapshot = f.cache.snapshot();
    let server = match server_tree(zk, root, f.max_depth).await {
        Ok(server) => server,
        Err(err) => return format!("failed reading the server's tree: {err}"),
    };
    let cached = by_path(&snapshot, marker);
    let mut differences = Vec::new();
    for (path, node) in &cached {
        match server.get(*path) {
            None => differences.push(format!("cached {} is gone on the server", brief(node))),
            Some(there) if *there != triple(node) => differences.push(format!(
                "cached {} where the server has [{} czxid={:#x} mzxid={:#x}]",
                brief(node),
                String::from_utf8_lossy(&there.0),
                there.1,
                there.2
            )),
            Some(_) => {}
        }
    }
    for (path, there) in server.iter().filter(|(p, _)| *p != marker) {
        if !cached.contains_key(path.as_str()) {
            differences.push(format!(
                "the server's {path} [{} czxid={:#x} mzxid={:#x}] is not cached",
                String::from_utf8_lossy(&there.0),
                there.1,
                there.2
            ));
        }
    }
    if differences.is_empty() {
        format!("ok nodes={}", cached.len())
    } else {
        format!(
            "differs {} of {} nodes: {}",
            differences.len(),
            cached.len().max(server.len()),
            differences[..differences.len().min(SHOWN)].join(" | ")
        )
    }
}

fn triple(node: &CachedNode) -> (Vec<u8>, i64, i64) {
    (node.data.clone(), node.stat.czxid, node.stat.mzxid)
}

/// The subtree as the server has it, `max_depth` levels deep: path → (data, czxid, mzxid).
async fn server_tree(
    zk: &zk::Client,
    root: &str,
    max_depth: Option<u32>,
) -> Result<BTreeMap<String, (Vec<u8>, i64, i64)>, zk::Error> {
    let mut found = BTreeMap::new();
    let mut level = vec![(root.to_string(), 0)];
    while let Some((path, depth)) = level.pop() {
        let (data, stat) = match zk.get_data(&path).await {
            Ok(read) => read,
            Err(zk::Error::NoNode) => continue,
            Err(err) => return Err(err),
        };
        found.insert(path.clone(), (data, stat.czxid, stat.mzxid));
        if max_depth.is_none_or(|max| depth < max) {
            let children = match zk.list_children(&path).await {
                Ok(children) => children,
                Err(zk::Error::NoNode) => Vec::new(),
                Err(err) => return Err(err),
            };
            level.extend(
                children
                    .into_iter()
                    .map(|c| (format!("{path}/{c}"), depth + 1)),
            );
        }
    }
    Ok(found)
}
