//! A FIFO queue of persistent-sequential `qn-<seq>` nodes, readable and
//! writable by Apache's `DistributedQueue` and Curator's `SimpleDistributedQueue`.
//!
//! Contract, including failures:
//! - FIFO by the server's sequence (compared as integers).
//! - Concurrent consumers never receive the same item: an item is delivered
//!   only to the consumer whose delete of it succeeded.
//! - A consumer caches the sorted children and lists again only when the cache
//!   is exhausted, so draining N items costs about 2N requests in N round trips
//!   (the delete of an item and the read of the next one are sent together),
//!   not N listings. An item's data is read before its delete is sent, so a
//!   connection loss can never lose an item.
//! - `offer` that fails with `CONNECTION_LOSS` may or may not have enqueued
//!   the item (the server may have applied the create before the reply was lost).
//! - Consumers that collide (two claim the same head) spread out: after a lost
//!   race a consumer claims a random one of the next few cached items, so four
//!   consumers drain faster than one instead of fighting over each head. A
//!   single consumer never collides and takes items strictly in order; with
//!   several, order is FIFO up to that small window.
//! - A connection loss during a claim is resolved exactly: the delete is one
//!   transaction with an ephemeral claim marker, so the item is neither lost nor
//!   delivered twice. Only a session that expires in that very moment leaves it
//!   unknown (the `poll` then fails with `SESSION_EXPIRED`).

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use zookeeper_client as zk;

use crate::client::{with_deadline, Client, MAX_PACKET};
use crate::error::{Error, ErrorCode, Result};
use crate::lock::contenders::split_sequence;
use crate::path;

const ITEM_PREFIX: &str = "qn-";

/// Room for the request header, the path and the ACL of a create.
const CREATE_OVERHEAD: usize = 512;

#[derive(Clone)]
pub struct DistributedQueue {
    inner: Arc<Inner>,
}

struct Inner {
    client: Client,
    dir: String,
    cache: tokio::sync::Mutex<Cache>,
}

#[derive(Default)]
struct Cache {
    /// Item names not yet consumed as of our last listing, head first.
    names: VecDeque<String>,
    /// Recent lost races against other consumers; widens the claim window.
    collisions: u32,
    /// The data of the next item, read together with the previous delete.
    prefetched: Option<(String, Vec<u8>)>,
    /// Our claim marker of the last item we took (deleted with the next claim).
    last_marker: Option<String>,
}

impl DistributedQueue {
    /// A queue in directory `dir` (created on first offer).
    pub fn new(client: &Client, dir: &str) -> Result<DistributedQueue> {
        path::validate(dir)?;
        let inner = Inner {
            client: client.clone(),
            dir: dir.to_string(),
            cache: Default::default(),
        };
        Ok(DistributedQueue {
            inner: Arc::new(inner),
        })
    }

    pub fn dir(&self) -> &str {
        &self.inner.dir
    }

    /// The largest payload `offer` accepts on this queue.
    pub fn max_payload(&self) -> usize {
        MAX_PACKET - CREATE_OVERHEAD - self.inner.dir.len()
    }

    /// Appends `data`; returns the item's node path.
    pub async fn offer(&self, data: &[u8]) -> Result<String> {
        if data.len() > self.max_payload() {
            return Err(Error::invalid_argument(format!(
                "payload of {} bytes exceeds the queue limit of {} bytes",
                data.len(),
                self.max_payload()
            )));
        }
        let inner = &self.inner;
        let prefix = format!("{}/{}", inner.dir, ITEM_PREFIX);
        let options = zk::CreateMode::PersistentSequential.with_acls(inner.client.acls());
        loop {
            let created = inner.client.zk()?.create(&prefix, data, &options).await;
            match created {
                Ok((_, sequence)) => return Ok(format!("{prefix}{sequence}")),
                Err(zk::Error::NoNode) => inner.client.ensure_path(&inner.dir, None).await?,
                // Not retried: the create may have been applied (see the contract).
                Err(err) => return Err(err.into()),
            }
        }
    }

    /// The head item, or `None` when the queue is empty.
    pub async fn peek(&self) -> Result<Option<Vec<u8>>> {
        let mut cache = self.inner.cache.lock().await;
        loop {
            let Some(head) = self.inner.head(&mut cache).await? else {
                return Ok(None);
            };
            let path = format!("{}/{}", self.inner.dir, head);
            let p = path.as_str();
            let data = self
                .inner
                .client
                .retrying(None, |zk| async move {
                    match zk.get_data(p).await {
                        Ok((data, _)) => Ok(Some(data)),
                        Err(zk::Error::NoNode) => Ok(None),
                        Err(err) => Err(err),
                    }
                })
                .await?;
            match data {
                Some(data) => return Ok(Some(data)),
                None => {
                    cache.names.pop_front();
                }
            }
        }
    }

    /// Removes and returns the head item, or `None` when the queue is empty.
    pub async fn poll(&self) -> Result<Option<Vec<u8>>> {
        let mut cache = self.inner.cache.lock().await;
        loop {
            let Some(item) = self.inner.next_claim(&mut cache).await? else {
                return Ok(None);
            };
            // The data is in hand before the delete is sent: a delete whose reply is
            // lost can never take an item's data with it.
            let data = match cache.prefetched.take() {
                Some((name, data)) if name == item => data,
                _ => match self.inner.read(&item).await? {
                    Some(data) => data,
                    None => {
                        cache.collisions += 1;
                        continue;
                    }
                },
            };
            let next = cache.names.front().cloned();
            let (claimed, prefetched) = self
                .inner
                .claim(&item, next, &mut cache.last_marker)
                .await?;
            cache.prefetched = prefetched;
            if claimed {
                cache.collisions = cache.collisions.saturating_sub(1);
                return Ok(Some(data));
            }
            cache.collisions += 1;
        }
    }

    /// Like `peek`, but an empty queue is `NO_SUCH_ELEMENT`.
    pub async fn element(&self) -> Result<Vec<u8>> {
        self.peek().await?.ok_or_else(empty)
    }

    /// Like `poll`, but an empty queue is `NO_SUCH_ELEMENT`.
    pub async fn remove(&self) -> Result<Vec<u8>> {
        self.poll().await?.ok_or_else(empty)
    }

    /// Waits for an item as long as it takes.
    pub async fn take(&self) -> Result<Vec<u8>> {
        Ok(self
            .take_until(None)
            .await?
            .expect("an unbounded take ends with an item"))
    }

    /// Waits for an item up to `timeout` (one deadline); `None` if none came.
    pub async fn take_timeout(&self, timeout: Duration) -> Result<Option<Vec<u8>>> {
        self.take_until(Some(Instant::now() + timeout)).await
    }

    async fn take_until(&self, deadline: Option<Instant>) -> Result<Option<Vec<u8>>> {
        loop {
            if let Some(data) = self.poll().await? {
                return Ok(Some(data));
            }
            // Empty as of the listing poll just made: arm a child watch, and
            // look once more since an item may have arrived in between.
            let dir = self.inner.dir.as_str();
            let watched = self
                .inner
                .client
                .retrying(deadline, |zk| async move {
                    zk.get_and_watch_children(dir).await
                })
                .await;
            let (children, _, watcher) = match watched {
                Ok(watched) => watched,
                Err(err) if err.code() == ErrorCode::NoNode => {
                    match self.inner.client.ensure_path(dir, deadline).await {
                        Ok(()) => continue,
                        Err(err) if err.code() == ErrorCode::Timeout => return Ok(None),
                        Err(err) => return Err(err),
                    }
                }
                Err(err) if err.code() == ErrorCode::Timeout => return Ok(None),
                Err(err) => return Err(err),
            };
            if children.iter().any(|c| item_sequence(c).is_some()) {
                continue;
            }
            let woke = with_deadline(deadline, async {
                tokio::select! {
                    _ = watcher.changed() => Ok(()),
                    _ = self.inner.client.closed() => Err(Error::closed()),
                }
            })
            .await;
            match woke {
                Ok(result) => result?,
                Err(_) => return Ok(None),
            }
        }
    }

    /// Number of items (one listing).
    pub async fn size(&self) -> Result<usize> {
        Ok(self.inner.list().await?.len())
    }
}

impl Inner {
    /// The cached head, listing again when the cache is exhausted.
    async fn head(&self, cache: &mut Cache) -> Result<Option<String>> {
        if cache.names.is_empty() {
            cache.names = self.list().await?;
        }
        Ok(cache.names.front().cloned())
    }

    /// The item to claim next: the head, or after lost races a random one of
    /// the first 2^collisions (at most 16) cached items, dropping those before it.
    async fn next_claim(&self, cache: &mut Cache) -> Result<Option<String>> {
        if self.head(cache).await?.is_none() {
            return Ok(None);
        }
        if cache.collisions > 0 {
            let window = (1usize << cache.collisions.min(4)).min(cache.names.len());
            cache.names.drain(..fastrand::usize(..window));
        }
        Ok(cache.names.pop_front())
    }

    async fn list(&self) -> Result<VecDeque<String>> {
        let dir = self.dir.as_str();
        let children = match self
            .client
            .retrying(None, |zk| async move { zk.list_children(dir).await })
            .await
        {
            Ok(children) => children,
            Err(err) if err.code() == ErrorCode::NoNode => return Ok(VecDeque::new()),
            Err(err) => return Err(err),
        };
        let mut items: Vec<(i64, String)> = children
            .into_iter()
            .filter_map(|c| item_sequence(&c).map(|s| (s, c)))
            .collect();
        items.sort();
        Ok(items.into_iter().map(|(_, name)| name).collect())
    }

    async fn read(&self, name: &str) -> Result<Option<Vec<u8>>> {
        let path = format!("{}/{}", self.dir, name);
        let p = path.as_str();
        self.client
            .retrying(None, |zk| async move {
                match zk.get_data(p).await {
                    Ok((data, _)) => Ok(Some(data)),
                    Err(zk::Error::NoNode) => Ok(None),
                    Err(err) => Err(err),
                }
            })
            .await
    }

    /// Takes `name` (whose data the caller holds) and, in the same round trip,
    /// reads the data of `next`. `false` if another consumer got `name` first.
    ///
    /// The delete is one transaction with the creation of an ephemeral claim
    /// marker (and the removal of our previous one): after a connection loss the
    /// marker tells whether *our* delete happened, so an item is neither lost nor
    /// delivered twice. Still one write and one round trip per item.
    async fn claim(
        &self,
        name: &str,
        next: Option<String>,
        last_marker: &mut Option<String>,
    ) -> Result<(bool, Option<(String, Vec<u8>)>)> {
        let path = format!("{}/{}", self.dir, name);
        let next_path = next.as_ref().map(|n| format!("{}/{}", self.dir, n));
        let ephemeral = zk::CreateMode::Ephemeral.with_acls(self.client.acls());
        loop {
            let zk = self.client.zk()?;
            let session = zk.session_id().0;
            let marker = format!("{}/claim-{:x}-{}", self.dir, session as u64, name);
            let mut transaction = zk.new_multi_writer();
            transaction.add_delete(&path, None)?;
            transaction.add_create(&marker, &[], &ephemeral)?;
            if let Some(previous) = last_marker.as_deref() {
                transaction.add_delete(previous, None)?;
            }
            let committed = transaction.commit();
            let read_next = next_path.as_deref().map(|p| zk.get_data(p));
            let (committed, next_data) = tokio::join!(committed, async {
                match read_next {
                    Some(read) => read.await.ok(),
                    None => None,
                }
            });
            drop(zk);
            let prefetched = next.clone().zip(next_data.map(|(data, _)| data));
            match committed {
                Ok(_) => {
                    *last_marker = Some(marker);
                    return Ok((true, prefetched));
                }
                Err(zk::MultiWriteError::OperationFailed {
                    index: 0,
                    source: zk::Error::NoNode,
                }) => {
                    return Ok((false, prefetched));
                }
                // Our previous marker is gone (a new session): claim without it.
                Err(zk::MultiWriteError::OperationFailed {
                    index: 2,
                    source: zk::Error::NoNode,
                }) => {
                    *last_marker = None;
                }
                Err(zk::MultiWriteError::RequestFailed {
                    source: zk::Error::ConnectionLoss,
                }) => {
                    self.client.await_usable(session, None).await?;
                    let m = marker.as_str();
                    let ours = self
                        .client
                        .retrying(None, |zk| async move { zk.check_stat(m).await })
                        .await?;
                    if ours.is_some() {
                        *last_marker = Some(marker);
                        return Ok((true, None));
                    }
                    // Not applied: the item is still there, or somebody else took it.
                }
                Err(err) => return Err(zk::Error::from(err).into()),
            }
        }
    }
}

fn item_sequence(name: &str) -> Option<i64> {
    let (prefix, sequence) = split_sequence(name)?;
    (prefix == ITEM_PREFIX).then_some(sequence)
}

fn empty() -> Error {
    Error::new(ErrorCode::NoSuchElement, "the queue is empty")
}
