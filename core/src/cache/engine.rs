//! The task that keeps a cache's copy in sync: per session it adds the watch, reads the whole
//! subtree, then turns every batch of watch events into reads of the paths they name; after
//! every reconnect it reads the whole subtree again.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::Weak;
use std::time::Duration;

use futures_util::stream::{self, FuturesUnordered, StreamExt};
use futures_util::FutureExt;
use tokio::sync::watch;
use zookeeper_client as zk;

use super::reads::{read, Ask, Reading, WatchKind};
use super::tree::{depth_below, Again};
use super::{CacheEvent, Shared};
use crate::backoff::Backoff;
use crate::client::{Client, ConnectionState};
use crate::error::{Error, ErrorCode};
use crate::observe::{recipe_event, Recipe};
use crate::path::join;

/// Reads in flight at once: a 10,000-node subtree loads in pipelined batches, without
/// queueing every request at once.
const READS_IN_FLIGHT: usize = 256;
/// Watch events taken into one batch of reads.
const EVENTS_PER_BATCH: usize = 4096;

type Fired = Pin<Box<dyn Future<Output = (WatchKind, String, zk::WatchedEvent)> + Send>>;

/// Why following a session stopped.
enum Stop {
    /// The connection or the session went away: follow the next one.
    Connection,
    /// The cache can do nothing more (closed, or its root cannot be read).
    End(Option<Error>),
}

impl From<zk::Error> for Stop {
    fn from(err: zk::Error) -> Stop {
        let err = Error::from(err);
        if err.is_connection_loss() || err.code() == ErrorCode::SessionExpired {
            Stop::Connection
        } else {
            Stop::End(Some(err))
        }
    }
}

struct Engine {
    shared: Weak<Shared>,
    client: Client,
    root: String,
    max_depth: Option<u32>,
    /// One-shot watches (a server before 3.6, or asked for).
    ordinary: bool,
    persistent: Option<zk::PersistentWatcher>,
    /// The one-shot watches set and not fired yet, so that a read sets no second one.
    armed: HashSet<(WatchKind, String)>,
    fired: FuturesUnordered<Fired>,
    loaded_once: bool,
    /// `SUSPENDED` told and not yet followed by `RECONNECTED`.
    suspended: bool,
}

pub(super) async fn run(shared: Weak<Shared>) {
    let Some(parts) = shared.upgrade() else {
        return;
    };
    let mut engine = Engine {
        client: parts.client.clone(),
        root: parts.root.clone(),
        max_depth: parts.scope.max_depth(),
        ordinary: parts.ordinary_watches,
        shared,
        persistent: None,
        armed: HashSet::new(),
        fired: FuturesUnordered::new(),
        loaded_once: false,
        suspended: false,
    };
    drop(parts);
    let mut states = engine.client.state_changes();
    let mut backoff = Backoff::new(Duration::from_millis(5), Duration::from_secs(1));
    loop {
        let Some(zk) = engine.await_usable(&mut states).await else {
            return;
        };
        match engine.follow_session(&zk, &mut states).await {
            Stop::Connection => {
                // The state may still say usable while the connection is already gone.
                tokio::select! {
                    _ = states.changed() => {}
                    () = backoff.sleep() => {}
                }
            }
            Stop::End(None) => return,
            Stop::End(Some(err)) => {
                if let Some(shared) = engine.shared.upgrade() {
                    // It does not try again: its callers hear the error (`start`).
                    let (path, reason) = (engine.root.as_str(), err.to_string());
                    recipe_event!(
                        Recipe::Cache,
                        ERROR,
                        path,
                        reason,
                        "cache {path}: stopped following: {reason}"
                    );
                    shared.fail(err);
                }
                return;
            }
        }
    }
}

impl Engine {
    fn publish(&self, change: impl FnOnce(&mut super::Tree) -> Vec<CacheEvent>) -> bool {
        match self.shared.upgrade() {
            Some(shared) => {
                shared.publish(change);
                true
            }
            None => false,
        }
    }

    fn tell(&self, event: CacheEvent) -> bool {
        self.publish(|_| vec![event])
    }

    /// Waits for a usable session, telling `SUSPENDED` and `LOST` on the way; `None` once the
    /// client is closed or the cache dropped.
    async fn await_usable(
        &mut self,
        states: &mut watch::Receiver<ConnectionState>,
    ) -> Option<zk::Client> {
        loop {
            let state = *states.borrow_and_update();
            match state {
                ConnectionState::Closed => return None,
                state if state.is_usable() => return self.client.zk().ok(),
                ConnectionState::Lost => {
                    self.suspended = true;
                    if !self.tell(CacheEvent::Lost) {
                        return None;
                    }
                }
                _ => self.note_suspended()?,
            }
            states.changed().await.ok()?;
        }
    }

    fn note_suspended(&mut self) -> Option<()> {
        if !self.suspended {
            self.suspended = true;
            self.tell(CacheEvent::Suspended).then_some(())
        } else {
            Some(())
        }
    }

    async fn follow_session(
        &mut self,
        zk: &zk::Client,
        states: &mut watch::Receiver<ConnectionState>,
    ) -> Stop {
        let session = zk.session_id().0;
        // The last session's watches are gone with it.
        self.persistent = None;
        self.armed.clear();
        self.fired = FuturesUnordered::new();
        loop {
            if let Err(stop) = self.add_watch(zk).await {
                return stop;
            }
            if let Err(stop) = self.reload(zk).await {
                return stop;
            }
            let told = if !self.loaded_once {
                self.loaded_once = true;
                // Told before `start` returns: a subscriber after `start` never sees it.
                let told = self.tell(CacheEvent::Initialized);
                if let Some(shared) = self.shared.upgrade() {
                    shared.initialized.send_replace(true);
                }
                told
            } else {
                self.suspended = false;
                self.tell(CacheEvent::Reconnected)
            };
            if !told {
                return Stop::End(None);
            }
            // Follows the events until the connection changes.
            let stopped = self.follow_events(zk, states, session).await;
            match stopped {
                Ok(()) => {} // reconnected on the same session: read everything again
                Err(stop) => return stop,
            }
        }
    }

    /// Adds the persistent watch, before the reload that follows: at the start of a session,
    /// and again after every reconnect on the same session, because zookeeper-client 0.11.2
    /// did not send persistent watches again on a reconnect (`resend_watches` never reached
    /// `SetWatches2`; our fork sends them, vendor/zookeeper-client/FORK.md), so the server had
    /// forgotten the one it had; adding it again costs a request per reconnect and holds with
    /// any client. The new watcher replaces the old one before that is dropped, so that
    /// dropping it removes nothing on the server.
    async fn add_watch(&mut self, zk: &zk::Client) -> Result<(), Stop> {
        if self.ordinary {
            return Ok(());
        }
        if self.client.has_no_persistent_watches() {
            // An earlier cache of this client was refused: asking again would cost a reconnect.
            self.ordinary = true;
            return Ok(());
        }
        let mode = if self.max_depth == Some(0) {
            zk::AddWatchMode::Persistent
        } else {
            zk::AddWatchMode::PersistentRecursive
        };
        match zk.watch(&self.root, mode).await {
            Ok(watcher) => self.persistent = Some(watcher),
            Err(zk::Error::Unimplemented) => {
                // ZooKeeper before 3.6: it closes the connection too (this client's recipes hear
                // SUSPENDED and RECONNECTED, once).
                self.client.refuses_persistent_watches();
                let path = self.root.as_str();
                recipe_event!(
                    Recipe::Cache,
                    WARN,
                    path,
                    "cache {path}: the server has no persistent watches (ZooKeeper before 3.6) and \
                     closed the connection on the request; this client's caches use one-shot watches"
                );
                self.ordinary = true;
            }
            Err(err) => return Err(Stop::from(err)),
        }
        Ok(())
    }

    /// `Ok` when the same session is usable again after a disconnect (the caller reloads).
    async fn follow_events(
        &mut self,
        zk: &zk::Client,
        states: &mut watch::Receiver<ConnectionState>,
        session: i64,
    ) -> Result<(), Stop> {
        loop {
            tokio::select! {
                event = next_event(&mut self.persistent, &mut self.fired) => {
                    let mut dirty = BTreeSet::new();
                    self.take(event, &mut dirty);
                    while dirty.len() < EVENTS_PER_BATCH {
                        match next_event(&mut self.persistent, &mut self.fired).now_or_never() {
                            Some(event) => self.take(event, &mut dirty),
                            None => break,
                        }
                    }
                    match self.refresh(zk, dirty).await {
                        Ok(()) => {}
                        // Lost mid-batch: the reload after the reconnect catches up.
                        Err(Stop::Connection) => return self.reconnected(states, session).await,
                        Err(stop) => return Err(stop),
                    }
                }
                changed = states.changed() => {
                    if changed.is_err() {
                        return Err(Stop::End(None));
                    }
                    // Marked seen: `borrow` left the change unseen, and the next wait woke at
                    // once for it, a second reload and a second RECONNECTED (issue 47).
                    let state = *states.borrow_and_update();
                    if !state.is_usable() || self.client.session_id().ok() != Some(session) {
                        return self.reconnected(states, session).await;
                    }
                    // Usable again, the disconnect before it coalesced away by the watch (the
                    // client publishes one before every reconnect): it happened, so it is told.
                    self.note_suspended().ok_or(Stop::End(None))?;
                    return Ok(());
                }
            }
        }
    }

    /// After a disconnect: `Ok` once the same session is back, `Connection` if a new one is.
    async fn reconnected(
        &mut self,
        states: &mut watch::Receiver<ConnectionState>,
        session: i64,
    ) -> Result<(), Stop> {
        let Some(zk) = self.await_usable(states).await else {
            return Err(Stop::End(None));
        };
        if zk.session_id().0 == session {
            Ok(())
        } else {
            Err(Stop::Connection)
        }
    }

    /// Notes the path an event names, if the cache covers it.
    fn take(&mut self, event: Event, dirty: &mut BTreeSet<String>) {
        let (path, event) = match event {
            Event::Persistent(event) => {
                if event.event_type == zk::EventType::Session {
                    if event.session_state.is_terminated() {
                        // Polling it again would panic; the next session adds a new one.
                        self.persistent = None;
                    }
                    return;
                }
                (event.path.clone(), event)
            }
            Event::Oneshot(kind, path, event) => {
                self.armed.remove(&(kind, path.clone()));
                (path, event)
            }
        };
        if event.event_type == zk::EventType::Session {
            return;
        }
        // A persistent (not recursive) watch on a node cache's root also reports its children.
        if event.event_type == zk::EventType::NodeChildrenChanged && !self.ordinary {
            return;
        }
        if self.covers(&path) {
            dirty.insert(path);
        }
    }

    fn covers(&self, path: &str) -> bool {
        match depth_below(&self.root, path) {
            Some(depth) => self.max_depth.is_none_or(|max| depth <= max),
            None => false,
        }
    }

    fn goes_below(&self, path: &str) -> bool {
        let depth = depth_below(&self.root, path).unwrap_or(0);
        self.max_depth.is_none_or(|max| depth < max)
    }

    fn ask(&self, path: String) -> Ask {
        let below = self.goes_below(&path);
        Ask {
            list_children: below,
            arm_data: self.ordinary && !self.armed.contains(&(WatchKind::Data, path.clone())),
            arm_children: self.ordinary
                && below
                && !self.armed.contains(&(WatchKind::Children, path.clone())),
            is_root: path == self.root,
            path,
        }
    }

    /// Only the node's data and stat: enough to place a child read under it.
    fn ask_stat(&self, path: String) -> Ask {
        Ask {
            list_children: false,
            arm_children: false,
            ..self.ask(path)
        }
    }

    /// Reads at once (pipelined), in order.
    async fn read_all(&mut self, zk: &zk::Client, asks: Vec<Ask>) -> Result<Vec<Reading>, Stop> {
        let root = self.root.clone();
        let reads = stream::iter(asks)
            .map(|ask| {
                let zk = zk.clone();
                let root = root.clone();
                async move {
                    let path = ask.path.clone();
                    match read(zk, ask).await {
                        // A node this client may not read is left out, as if absent; the root
                        // must be readable.
                        Err(zk::Error::NoAuth) if path != root => {
                            recipe_event!(
                                Recipe::Cache,
                                WARN,
                                path = root.as_str(),
                                node = path.as_str(),
                                "cache {root}: no permission to read {path}: left out"
                            );
                            Ok(Reading {
                                path,
                                found: None,
                                children: None,
                                listed_pzxid: None,
                                watches: Vec::new(),
                            })
                        }
                        read => read,
                    }
                }
            })
            .buffered(READS_IN_FLIGHT);
        let readings: Vec<Result<Reading, zk::Error>> = reads.collect().await;
        let mut done = Vec::with_capacity(readings.len());
        for reading in readings {
            let mut reading = reading?;
            for (kind, watch) in reading.watches.drain(..) {
                let path = reading.path.clone();
                if self.armed.insert((kind, path.clone())) {
                    self.fired.push(Box::pin(async move {
                        let event = watch.changed().await;
                        (kind, path, event)
                    }));
                }
            }
            done.push(reading);
        }
        Ok(done)
    }

    /// Reads the whole subtree, level by level, and takes it as the new copy.
    async fn reload(&mut self, zk: &zk::Client) -> Result<(), Stop> {
        let mut found = BTreeMap::new();
        let mut listed = HashMap::new();
        let mut level = vec![self.root.clone()];
        while !level.is_empty() {
            let mut next = Vec::new();
            let asks = level.into_iter().map(|path| self.ask(path)).collect();
            for reading in self.read_all(zk, asks).await? {
                if let Some(children) = reading.children {
                    next.extend(children.iter().map(|child| join(&reading.path, child)));
                }
                if let Some(pzxid) = reading.listed_pzxid {
                    listed.insert(reading.path.clone(), pzxid);
                }
                if let Some(node) = reading.found {
                    found.insert(reading.path, node);
                }
            }
            level = next;
        }
        if self.publish(|tree| tree.replace(found, &listed)) {
            Ok(())
        } else {
            Err(Stop::End(None))
        }
    }

    /// Reads the paths events named (and, with one-shot watches, the children they revealed)
    /// and takes what was found; a node read under an older copy of its parent is read again
    /// with the parent's stat (tree.rs).
    async fn refresh(&mut self, zk: &zk::Client, mut dirty: BTreeSet<String>) -> Result<(), Stop> {
        let mut parents = BTreeSet::new();
        while !dirty.is_empty() || !parents.is_empty() {
            let stats = parents.into_iter().filter(|p| !dirty.contains(p));
            let mut asks: Vec<Ask> = stats.map(|path| self.ask_stat(path)).collect();
            asks.extend(dirty.into_iter().map(|path| self.ask(path)));
            let readings = self.read_all(zk, asks).await?;
            dirty = BTreeSet::new();
            let mut again = Again::default();
            let shared = self.shared.upgrade().ok_or(Stop::End(None))?;
            let mut readings = readings;
            // Parents first: a node is added only under a cached parent.
            readings.sort_by_key(|r| (r.path.matches('/').count(), r.path.clone()));
            shared.publish(|tree| {
                let mut events = Vec::new();
                let mut listings = Vec::new();
                for reading in readings {
                    let listed = reading.listed_pzxid;
                    events.extend(tree.apply(&reading.path, reading.found, listed, &mut again));
                    if let Some(children) = reading.children {
                        listings.push((reading.path, children));
                    }
                }
                // Compared with the copy once the whole batch is in it: a child's own read in
                // this batch may have found it gone before the listing found it created again
                // (and re-armed the child watch past that create), so only the copy after both
                // tells that it must be read again.
                for (path, children) in listings {
                    dirty.extend(tree.unlike_listing(&path, &children));
                }
                events
            });
            dirty.extend(again.nodes);
            parents = again.parents;
        }
        Ok(())
    }
}

enum Event {
    Persistent(zk::WatchedEvent),
    Oneshot(WatchKind, String, zk::WatchedEvent),
}

async fn next_event(
    persistent: &mut Option<zk::PersistentWatcher>,
    fired: &mut FuturesUnordered<Fired>,
) -> Event {
    let from_persistent = async {
        match persistent {
            Some(watcher) => watcher.changed().await,
            None => std::future::pending().await,
        }
    };
    let from_oneshot = async {
        match fired.next().await {
            Some(fired) => fired,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        event = from_persistent => Event::Persistent(event),
        (kind, path, event) = from_oneshot => Event::Oneshot(kind, path, event),
    }
}
