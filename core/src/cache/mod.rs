//! Caches of a node, of a node's children, or of a subtree (Curator's `NodeCache`,
//! `PathChildrenCache` and `TreeCache`, on `CuratorCache`'s mechanism): a local copy kept in
//! sync by one persistent recursive watch (ZooKeeper 3.6+), with ordinary watches on older
//! servers.
//!
//! Contract, including failures:
//! - The watch is added before the first read, so no change falls between the two.
//! - After every reconnect and every new session the subtree is read again and exactly the
//!   difference is reported: a node deleted and re-created meanwhile is a `Deleted` and a
//!   `Created` (told apart by `czxid`, not by version: CURATOR-391). The server does not replay
//!   what a persistent watch missed while disconnected (ZOOKEEPER-4698), so this is the only
//!   way not to miss a change.
//! - A node is reported present only from a read that found it; a read that finds it gone
//!   removes it with its subtree (kazoo #645 resurrects it). An older read never replaces a
//!   newer one (`mzxid`), and a node whose parent is not cached is not added.
//! - Nothing is reported twice: an event is the difference between two states, one path's
//!   events come in zxid order, and a change that undoes itself between two reads is not seen
//!   (changes are coalesced, as in every ZooKeeper cache).
//! - Nothing is created as a side effect: a missing root is an empty cache until it appears.
//! - `close` (or dropping the last handle) stops the watch and frees the copy.

mod engine;
mod reads;
mod tally;
mod tree;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{mpsc, watch};

use crate::client::Client;
use crate::error::{Error, ErrorCode, Result};
use crate::path;

use tally::Tally;
use tree::Tree;

/// What a cache holds of one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CachedNode {
    pub path: String,
    pub data: Vec<u8>,
    pub stat: NodeStat,
}

/// The node's `Stat` as the server sent it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeStat {
    pub czxid: i64,
    pub mzxid: i64,
    pub pzxid: i64,
    pub ctime: i64,
    pub mtime: i64,
    pub version: i32,
    pub cversion: i32,
    pub aversion: i32,
    pub ephemeral_owner: i64,
    pub data_length: i32,
    pub num_children: i32,
}

/// Every change a cache reports, in the order it saw them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CacheEvent {
    Created(CachedNode),
    Changed {
        old: CachedNode,
        new: CachedNode,
    },
    Deleted(CachedNode),
    /// The first load is complete (once per cache).
    Initialized,
    /// Disconnected: the copy may fall behind until `Reconnected`.
    Suspended,
    /// Connected again and the copy read again: the events before this one brought it up to
    /// date.
    Reconnected,
    /// The session expired; a new one is opened and the copy read again (then `Reconnected`).
    Lost,
}

impl CacheEvent {
    /// The name shared by every language.
    pub fn name(&self) -> &'static str {
        match self {
            CacheEvent::Created(_) => "CREATED",
            CacheEvent::Changed { .. } => "CHANGED",
            CacheEvent::Deleted(_) => "DELETED",
            CacheEvent::Initialized => "INITIALIZED",
            CacheEvent::Suspended => "SUSPENDED",
            CacheEvent::Reconnected => "RECONNECTED",
            CacheEvent::Lost => "LOST",
        }
    }

    /// The node as it is now (`Created`, `Changed`) or was (`Deleted`).
    pub fn node(&self) -> Option<&CachedNode> {
        match self {
            CacheEvent::Created(node) | CacheEvent::Deleted(node) => Some(node),
            CacheEvent::Changed { new, .. } => Some(new),
            _ => None,
        }
    }

    /// Every name, in declaration order (bindings test their enums against it).
    pub fn names() -> Vec<&'static str> {
        vec![
            "CREATED",
            "CHANGED",
            "DELETED",
            "INITIALIZED",
            "SUSPENDED",
            "RECONNECTED",
            "LOST",
        ]
    }
}

/// What a cache covers below its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheScope {
    /// The node itself (Curator's `NodeCache`).
    Node,
    /// The node's children, not the node (Curator's `PathChildrenCache`).
    Children,
    /// The node and its descendants down to `max_depth` levels below it (`None`: all).
    Tree { max_depth: Option<u32> },
}

impl CacheScope {
    fn max_depth(self) -> Option<u32> {
        match self {
            CacheScope::Node => Some(0),
            CacheScope::Children => Some(1),
            CacheScope::Tree { max_depth } => max_depth,
        }
    }

    /// Whether the root itself is shown (a children cache tracks it but never shows it).
    fn shows_root(self) -> bool {
        self != CacheScope::Children
    }
}

#[derive(Clone)]
pub struct Cache {
    shared: Arc<Shared>,
}

struct Shared {
    client: Client,
    root: String,
    scope: CacheScope,
    ordinary_watches: bool,
    state: Mutex<State>,
    /// `true` once the first load is in the copy.
    initialized: watch::Sender<bool>,
    engine: Mutex<Option<tokio::task::AbortHandle>>,
}

struct State {
    tree: Tree,
    subscribers: Vec<mpsc::UnboundedSender<CacheEvent>>,
    /// Why the cache stopped, if it stopped by itself (no permission to read its root).
    failure: Option<Error>,
    closed: bool,
    /// Its numbers, kept with the copy they count.
    tally: Tally,
}

impl Cache {
    /// A cache of the node at `path`.
    pub fn node(client: &Client, path: &str) -> Result<Cache> {
        Cache::new(client, path, CacheScope::Node)
    }

    /// A cache of the children of `path` (with their data).
    pub fn children(client: &Client, path: &str) -> Result<Cache> {
        Cache::new(client, path, CacheScope::Children)
    }

    /// A cache of the subtree at `path`, `max_depth` levels deep (`None`: all of it).
    pub fn tree(client: &Client, path: &str, max_depth: Option<u32>) -> Result<Cache> {
        Cache::new(client, path, CacheScope::Tree { max_depth })
    }

    /// `INVALID_PATH` before anything is sent; nothing is sent before `start`.
    pub fn new(client: &Client, path: &str, scope: CacheScope) -> Result<Cache> {
        Cache::with_watches(client, path, scope, false)
    }

    /// As `new`; `ordinary_watches` uses one-shot data and child watches as on a server
    /// before 3.6 even where persistent watches exist (the fallback is then tested on any
    /// server).
    pub fn with_watches(
        client: &Client,
        path: &str,
        scope: CacheScope,
        ordinary_watches: bool,
    ) -> Result<Cache> {
        path::validate(path)?;
        client.check_open()?;
        let shared = Shared {
            client: client.clone(),
            root: path.to_string(),
            scope,
            ordinary_watches,
            state: Mutex::new(State {
                tree: Tree::new(path),
                subscribers: Vec::new(),
                failure: None,
                closed: false,
                tally: Tally::new(client, path),
            }),
            initialized: watch::channel(false).0,
            engine: Mutex::new(None),
        };
        Ok(Cache {
            shared: Arc::new(shared),
        })
    }

    pub fn path(&self) -> &str {
        &self.shared.root
    }

    pub fn scope(&self) -> CacheScope {
        self.shared.scope
    }

    /// Starts following the subtree and returns once the first load is in the copy (the
    /// cache goes on if this call is cancelled). Starting again only waits for that load.
    /// `CLOSED` once closed; the server's error (`NO_AUTH`) if the root cannot be read.
    pub async fn start(&self) -> Result<()> {
        self.launch()?;
        self.await_initialized(None).await
    }

    /// Waits until the first load is in the copy; `TIMEOUT` after `timeout`.
    pub async fn await_initialized(&self, timeout: Option<Duration>) -> Result<()> {
        let mut initialized = self.shared.initialized.subscribe();
        let loaded = async {
            loop {
                if let Some(err) = self.stopped() {
                    return Err(err);
                }
                if *initialized.borrow_and_update() {
                    return Ok(());
                }
                tokio::select! {
                    changed = initialized.changed() => if changed.is_err() {
                        return Err(Error::closed());
                    },
                    // Its engine ends with the client: the first load can never come.
                    () = self.shared.client.closed() => return Err(Error::closed()),
                }
            }
        };
        let waited = match timeout {
            None => loaded.await,
            Some(timeout) => match tokio::time::timeout(timeout, loaded).await {
                Ok(waited) => waited,
                Err(_) => Err(Error::new(
                    ErrorCode::Timeout,
                    "the cache's first load did not complete in time",
                )),
            },
        };
        waited.map_err(|err| self.about(err))
    }

    fn launch(&self) -> Result<()> {
        let shared = &self.shared;
        shared
            .client
            .start_once(self.stopped(), &shared.engine, || {
                engine::run(Arc::downgrade(shared))
            })
            .map_err(|err| self.about(err))
    }

    fn stopped(&self) -> Option<Error> {
        let state = self.shared.state.lock().unwrap();
        if state.closed {
            return Some(Error::new(ErrorCode::Closed, "the cache was closed"));
        }
        state.failure.clone()
    }

    /// Stops following and frees the copy; every subscriber's stream ends. Idempotent.
    pub fn close(&self) {
        self.shared.close();
    }

    pub fn is_initialized(&self) -> bool {
        *self.shared.initialized.borrow()
    }

    /// The cached node at `path` (`None` if not cached, or outside the cache's scope).
    pub fn get(&self, path: &str) -> Option<CachedNode> {
        let state = self.shared.state.lock().unwrap();
        let node = state.tree.get(path)?;
        self.shared.shows(&node.path).then_some(node)
    }

    /// Every cached node, sorted by path.
    pub fn snapshot(&self) -> Vec<CachedNode> {
        self.shared.snapshot(&self.shared.state.lock().unwrap())
    }

    /// How many nodes are cached (and shown).
    pub fn len(&self) -> usize {
        self.shared.shown(&self.shared.state.lock().unwrap().tree)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The names of the cached children of `path`, sorted.
    pub fn children_of(&self, path: &str) -> Vec<String> {
        self.shared.state.lock().unwrap().tree.children_of(path)
    }

    /// Every event from now on; the stream ends when the cache is closed. Events are kept for
    /// a slow reader (never dropped), so read them or drop the receiver.
    pub fn subscribe(&self) -> mpsc::UnboundedReceiver<CacheEvent> {
        self.snapshot_and_subscribe().1
    }

    /// The copy now and every event after it, atomically: replaying the events over the
    /// snapshot gives the copy at any later moment.
    pub fn snapshot_and_subscribe(&self) -> (Vec<CachedNode>, mpsc::UnboundedReceiver<CacheEvent>) {
        let (sender, receiver) = mpsc::unbounded_channel();
        let mut state = self.shared.state.lock().unwrap();
        let snapshot = self.shared.snapshot(&state);
        if !state.closed {
            state.subscribers.push(sender);
        }
        (snapshot, receiver)
    }

    fn about(&self, err: Error) -> Error {
        self.shared.client.about(err, "cache", &self.shared.root)
    }
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache")
            .field("path", &self.shared.root)
            .field("scope", &self.shared.scope)
            .field("initialized", &self.is_initialized())
            .finish()
    }
}

impl Shared {
    fn shows(&self, path: &str) -> bool {
        self.scope.shows_root() || path != self.root
    }

    /// How many nodes of `tree` are shown (a children cache's root is not).
    fn shown(&self, tree: &Tree) -> usize {
        let hidden_root = !self.scope.shows_root() && tree.contains(&self.root);
        tree.len() - usize::from(hidden_root)
    }

    fn snapshot(&self, state: &State) -> Vec<CachedNode> {
        let nodes = state.tree.nodes();
        nodes.filter(|n| self.shows(&n.path)).collect()
    }

    /// Applies a change to the copy and tells the subscribers, under one lock: a subscriber's
    /// snapshot and its events never overlap or leave a gap.
    fn publish(&self, change: impl FnOnce(&mut Tree) -> Vec<CacheEvent>) {
        let mut state = self.state.lock().unwrap();
        if state.closed {
            return;
        }
        let events = change(&mut state.tree);
        let shown: Vec<CacheEvent> = events
            .into_iter()
            .filter(|e| match e.node() {
                Some(node) => self.shows(&node.path),
                None => true,
            })
            .collect();
        // Counted before anybody hears of them: a subscriber's look at the metrics after an
        // event finds it there.
        for event in &shown {
            state.tally.saw(event);
        }
        let nodes = self.shown(&state.tree);
        state.tally.holds(nodes);
        for event in shown {
            state
                .subscribers
                .retain(|subscriber| subscriber.send(event.clone()).is_ok());
        }
    }

    fn fail(&self, err: Error) {
        self.state.lock().unwrap().failure = Some(err);
        // Wakes `start` and `await_initialized`, which then see the failure.
        self.initialized.send_modify(|_| {});
    }

    fn close(&self) {
        if let Some(engine) = self.engine.lock().unwrap().take() {
            engine.abort();
        }
        let mut state = self.state.lock().unwrap();
        state.closed = true;
        state.subscribers.clear();
        state.tree = Tree::new(&self.root);
        state.tally.holds(0);
        drop(state);
        self.initialized.send_modify(|_| {});
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        if let Some(engine) = self.engine.get_mut().unwrap().take() {
            engine.abort();
        }
        crate::memory::object_dropped();
    }
}
