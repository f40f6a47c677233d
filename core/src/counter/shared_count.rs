//! A shared count on Curator's `SharedCount` layout (also kazoo's `Counter(support_curator=True)`):
//! one persistent node holding a 4-byte big-endian int.
//!
//! Contract, including failures:
//! - `start` creates the node with the seed when it is missing (never overwriting a value) and
//!   reads it; from then on the value is cached and followed by a data watch. It is read again
//!   after every watch event and every reconnect or new session (CURATOR-311: a stale value
//!   after a quorum change), and a read never replaces a newer one (compared by `mzxid`).
//! - Empty data (kazoo creates the node empty) reads as the seed; any other length than 4 is
//!   `INVALID_ARGUMENT` naming it (Curator throws a `BufferUnderflowException`).
//! - `set` is unconditional; `try_set(expected, value)` writes only over the version `expected`
//!   was read at, and answers `false` (with the cache refreshed) when another write came first.
//!   A versioned write whose reply was lost is sent again only if the node is unchanged (looked
//!   at once the session is back, or on the next one after an expiry); otherwise
//!   `CONNECTION_LOSS` says its outcome is unknown.
//! - Subscribers get every value the cache takes, in order, with its version.

use std::sync::{Arc, Mutex, Weak};

use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;
use zookeeper_client as zk;

use crate::client::Client;
use crate::emitter::Emitter;
use crate::error::{Error, ErrorCode, Result};
use crate::observe::{recipe_event, Recipe};
use crate::{path, runtime};

/// A value with the node version it was read at: what `try_set` writes over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VersionedCount {
    pub value: i32,
    pub version: i32,
}

#[derive(Clone)]
pub struct SharedCount {
    core: Arc<Core>,
}

struct Core {
    client: Client,
    path: String,
    seed: i32,
    /// The newest value read, with the `mzxid` it was written at; `None` until started.
    cached: Mutex<Option<(VersionedCount, i64)>>,
    events: Emitter<VersionedCount>,
    /// The follower task; `Closed` once `close` was called (a start racing it stops again).
    follower: Mutex<Follower>,
}

enum Follower {
    Idle,
    Running(tokio::task::AbortHandle),
    Closed,
}

impl SharedCount {
    /// The count at `path`, `seed` when the node is created or empty. `INVALID_PATH` before
    /// anything is sent.
    pub fn new(client: &Client, path: &str, seed: i32) -> Result<SharedCount> {
        path::validate(path)?;
        client.check_open()?;
        let core = Core {
            client: client.clone(),
            path: path.to_string(),
            seed,
            cached: Mutex::new(None),
            events: Emitter::new(64),
            follower: Mutex::new(Follower::Idle),
        };
        Ok(SharedCount {
            core: Arc::new(core),
        })
    }

    pub fn path(&self) -> &str {
        &self.core.path
    }

    /// Creates the node with the seed if it is missing, reads it, and follows it from then on.
    /// Starting twice does nothing more.
    pub async fn start(&self) -> Result<()> {
        let started = self.core.start().await;
        started.map_err(|err| self.core.about(err))
    }

    /// Stops following the node for good; every call after it answers `CLOSED`. Idempotent.
    pub fn close(&self) {
        let was = std::mem::replace(&mut *self.core.follower.lock().unwrap(), Follower::Closed);
        if let Follower::Running(follower) = was {
            follower.abort();
        }
    }

    /// The cached value. `INVALID_ARGUMENT` before `start`, `CLOSED` after `close`.
    pub fn get(&self) -> Result<i32> {
        self.versioned().map(|v| v.value)
    }

    /// The cached value with its version, for `try_set`.
    pub fn versioned(&self) -> Result<VersionedCount> {
        // The count's own close only: with its client closed it keeps the last value it read.
        if self.core.is_closed() {
            return Err(self.core.about(closed()));
        }
        let cached = *self.core.cached.lock().unwrap();
        cached.map(|(v, _)| v).ok_or_else(|| {
            self.core.about(Error::invalid_argument(
                "the shared count is not started: start() it first",
            ))
        })
    }

    /// Every value the cache takes from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<VersionedCount> {
        self.core.events.subscribe()
    }

    /// The value on the server now, without starting (or creating anything): the seed while
    /// the node is missing or empty.
    pub async fn read(&self) -> Result<i32> {
        self.core.check_open().map_err(|err| self.core.about(err))?;
        let read = self.core.read_fresh().await;
        let read = read.map_err(|err| self.core.about(err))?;
        Ok(read.map_or(self.core.seed, |v| v.value))
    }

    /// Adds `delta` (wrapping as Java's `int`) with a versioned write repeated until it
    /// applies; the value written and its version.
    pub async fn add(&self, delta: i32) -> Result<VersionedCount> {
        self.core.check_open().map_err(|err| self.core.about(err))?;
        let added = self.core.add(delta).await;
        added.map_err(|err| self.core.about(err))
    }

    /// Writes `value` whatever the count is.
    pub async fn set(&self, value: i32) -> Result<()> {
        self.core.check_open().map_err(|err| self.core.about(err))?;
        let set = self.core.set(value, None).await;
        set.map(|_| ()).map_err(|err| self.core.about(err))
    }

    /// Writes `value` only if the count is still at `expected`'s version: `false` otherwise
    /// (the cache then holds the newer value).
    pub async fn try_set(&self, expected: VersionedCount, value: i32) -> Result<bool> {
        self.core.check_open().map_err(|err| self.core.about(err))?;
        let set = self.core.set(value, Some(expected.version)).await;
        set.map_err(|err| self.core.about(err))
    }
}

impl Core {
    fn about(&self, err: Error) -> Error {
        self.client.about(err, "shared count", &self.path)
    }

    fn is_closed(&self) -> bool {
        matches!(*self.follower.lock().unwrap(), Follower::Closed)
    }

    fn check_open(&self) -> Result<()> {
        if self.is_closed() {
            return Err(closed());
        }
        self.client.check_open()
    }

    async fn start(self: &Arc<Self>) -> Result<()> {
        self.check_open()?;
        if matches!(*self.follower.lock().unwrap(), Follower::Running(_)) {
            return Ok(());
        }
        self.create_seeded().await?;
        let (watch, read) = self.read_watched().await;
        read?;
        let follower = runtime::handle().spawn(follow(Arc::downgrade(self), watch));
        let mut slot = self.follower.lock().unwrap();
        match &*slot {
            // Another start won meanwhile: one follower is enough.
            Follower::Running(_) => follower.abort(),
            // Closed while this start was on its way: it stays closed.
            Follower::Closed => {
                follower.abort();
                return Err(closed());
            }
            Follower::Idle => *slot = Follower::Running(follower.abort_handle()),
        }
        Ok(())
    }

    async fn create_seeded(&self) -> Result<()> {
        let path = self.path.as_str();
        let seed = self.seed.to_be_bytes();
        let seed = &seed;
        let acls = self.client.acls();
        loop {
            let created = self
                .client
                .retrying(None, |zk| async move {
                    let options = zk::CreateMode::Persistent.with_acls(acls);
                    zk.create(path, seed, &options).await
                })
                .await;
            match created {
                Ok(_) => return Ok(()),
                Err(err) if err.code() == ErrorCode::NodeExists => return Ok(()),
                Err(err) if err.code() == ErrorCode::NoNode => {
                    let parent = &self.path[..self.path.rfind('/').unwrap_or(0).max(1)];
                    self.client.ensure_container(parent, None).await?;
                }
                Err(err) => return Err(err),
            }
        }
    }

    /// Reads the node with a data watch and caches what it holds. The watch comes back even
    /// when the value cannot be decoded (the next valid write is still followed), and a missing
    /// node gets an `exists` watch (its creation is followed).
    async fn read_watched(&self) -> (Option<zk::OneshotWatcher>, Result<()>) {
        let path = self.path.as_str();
        loop {
            let read = self
                .client
                .retrying(None, |zk| async move { zk.get_and_watch_data(path).await })
                .await;
            match read {
                Ok((data, stat, watch)) => {
                    let decoded = self.decode(&data).map(|value| self.cache(value, &stat));
                    return (Some(watch), decoded);
                }
                Err(err) if err.code() == ErrorCode::NoNode => {
                    let exists = self
                        .client
                        .retrying(
                            None,
                            |zk| async move { zk.check_and_watch_stat(path).await },
                        )
                        .await;
                    match exists {
                        Ok((None, watch)) => return (Some(watch), Ok(())),
                        // Created between the two reads: read it.
                        Ok((Some(_), _)) => continue,
                        Err(err) => return (None, Err(err)),
                    }
                }
                Err(err) => return (None, Err(err)),
            }
        }
    }

    /// Takes `value` unless the cache holds a newer one.
    fn cache(&self, value: i32, stat: &zk::Stat) {
        let versioned = VersionedCount {
            value,
            version: stat.version,
        };
        let mut cached = self.cached.lock().unwrap();
        if cached.is_some_and(|(_, mzxid)| mzxid >= stat.mzxid) {
            return;
        }
        *cached = Some((versioned, stat.mzxid));
        drop(cached);
        self.events.emit(versioned);
    }

    fn decode(&self, data: &[u8]) -> Result<i32> {
        match data.len() {
            0 => Ok(self.seed),
            4 => Ok(i32::from_be_bytes(data.try_into().expect("4 bytes"))),
            n => Err(Error::invalid_argument(format!(
                "a shared count's node holds 4 bytes (big-endian), this one {n}"
            ))),
        }
    }

    /// `true` once written; `false` when `version` was not the node's any more.
    async fn set(&self, value: i32, version: Option<i32>) -> Result<bool> {
        let data = value.to_be_bytes();
        loop {
            let zk = self.client.zk()?;
            let session = zk.session_id().0;
            let written = zk.set_data(&self.path, &data, version).await;
            drop(zk);
            match written.map_err(Error::from) {
                Ok(stat) => {
                    super::count_update(&self.client, &self.path, "shared_count", true);
                    self.cache(value, &stat);
                    return Ok(true);
                }
                Err(err) if err.code() == ErrorCode::BadVersion => {
                    super::count_update(&self.client, &self.path, "shared_count", false);
                    self.read_watched().await.1?;
                    return Ok(false);
                }
                Err(err) if err.code() == ErrorCode::NoNode && version.is_none() => {
                    self.create_seeded().await?;
                }
                Err(err) if err.is_connection_loss() => match version {
                    // Unconditional: sent again as it is (applied twice, it writes the same value).
                    None => self.client.await_usable(session, None).await?,
                    Some(version) => {
                        let path = &self.path;
                        super::confirm_not_applied(
                            &self.client,
                            path,
                            session,
                            Some(version),
                            "write",
                        )
                        .await?
                    }
                },
                Err(err) => return Err(err),
            }
        }
    }

    async fn read_fresh(&self) -> Result<Option<VersionedCount>> {
        match self.client.read_if_present(&self.path).await? {
            Some((data, stat)) => Ok(Some(VersionedCount {
                value: self.decode(&data)?,
                version: stat.version,
            })),
            None => Ok(None),
        }
    }

    async fn add(&self, delta: i32) -> Result<VersionedCount> {
        loop {
            let Some(now) = self.read_fresh().await? else {
                self.create_seeded().await?;
                continue;
            };
            let value = now.value.wrapping_add(delta);
            if self.set(value, Some(now.version)).await? {
                return Ok(VersionedCount {
                    value,
                    version: now.version.wrapping_add(1),
                });
            }
        }
    }
}

fn closed() -> Error {
    Error::new(ErrorCode::Closed, "the shared count was closed")
}

/// Follows the node while the count object lives: reads again after every watch event and
/// every connection change (a new session, a reconnect to another server).
async fn follow(core: Weak<Core>, watch: Option<zk::OneshotWatcher>) {
    let Some(client) = core.upgrade().map(|c| c.client.clone()) else {
        return;
    };
    let mut states = client.subscribe();
    let mut fired = armed(watch);
    loop {
        tokio::select! {
            // Spent: never polled again (a read that sets no new watch leaves it pending).
            () = &mut fired => fired = armed(None),
            state = states.recv() => match state {
                Err(RecvError::Closed) => return,
                Ok(state) if !state.is_usable() => continue,
                _ => {}
            },
            _ = client.closed() => return,
        }
        let Some(core) = core.upgrade() else { return };
        let (next, read) = core.read_watched().await;
        match read {
            Ok(()) => {}
            Err(err) if err.code() == ErrorCode::Closed => return,
            Err(err) => {
                // Read again at the next event or connection change.
                let (path, reason) = (core.path.as_str(), err.to_string());
                recipe_event!(
                    Recipe::Counter,
                    WARN,
                    path,
                    reason,
                    "shared count {path}: cannot read the value: {reason}"
                );
            }
        }
        // A new watch replaces the old one only once set: a state change keeps the old one.
        if next.is_some() {
            fired = armed(next);
        }
    }
}

/// The watch's firing as a future that can be polled again after another branch won.
fn armed(
    watch: Option<zk::OneshotWatcher>,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
    Box::pin(async move {
        match watch {
            Some(watch) => {
                watch.changed().await;
            }
            None => std::future::pending::<()>().await,
        }
    })
}

impl Drop for Core {
    fn drop(&mut self) {
        if let Follower::Running(follower) = self.follower.get_mut().unwrap() {
            follower.abort();
        }
    }
}
