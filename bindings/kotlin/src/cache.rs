//! The caches (Curator's `NodeCache`, `PathChildrenCache` and `TreeCache`, one type with a
//! scope) and their events, which a group member's view shares.

use std::sync::Arc;

use tokio::sync::mpsc::UnboundedReceiver;
use zkrecipes::{Cache, CacheEvent, CachedNode, NodeStat};

use crate::client::NativeClient;
use crate::errors::Result;
use crate::tasks::run;
use zkrecipes::ffi::begun;

/// The node's `Stat` as the server sent it.
#[derive(uniffi::Record)]
pub struct NativeNodeStat {
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

#[derive(uniffi::Record)]
pub struct NativeCachedNode {
    pub path: String,
    pub data: Vec<u8>,
    pub stat: NativeNodeStat,
}

impl From<CachedNode> for NativeCachedNode {
    fn from(node: CachedNode) -> Self {
        let NodeStat {
            czxid,
            mzxid,
            pzxid,
            ctime,
            mtime,
            version,
            cversion,
            aversion,
            ephemeral_owner,
            data_length,
            num_children,
        } = node.stat;
        NativeCachedNode {
            path: node.path,
            data: node.data,
            stat: NativeNodeStat {
                czxid,
                mzxid,
                pzxid,
                ctime,
                mtime,
                version,
                cversion,
                aversion,
                ephemeral_owner,
                data_length,
                num_children,
            },
        }
    }
}

/// One event: the core's name, the node as it is now (`CREATED`, `CHANGED`) or was
/// (`DELETED`), and the node before a `CHANGED`.
#[derive(uniffi::Record)]
pub struct NativeCacheEvent {
    pub name: String,
    pub node: Option<NativeCachedNode>,
    pub old: Option<NativeCachedNode>,
}

impl From<CacheEvent> for NativeCacheEvent {
    fn from(event: CacheEvent) -> Self {
        let name = event.name().to_string();
        let (node, old) = match event {
            CacheEvent::Created(node) | CacheEvent::Deleted(node) => (Some(node), None),
            CacheEvent::Changed { old, new } => (Some(new), Some(old)),
            _ => (None, None),
        };
        NativeCacheEvent {
            name,
            node: node.map(Into::into),
            old: old.map(Into::into),
        }
    }
}

/// The core's event names, in its order (the Kotlin enum is tested against them).
#[uniffi::export]
pub fn cache_event_names() -> Vec<String> {
    CacheEvent::names().into_iter().map(String::from).collect()
}

#[derive(uniffi::Object)]
pub struct NativeCache {
    cache: Cache,
    client: zkrecipes::Client,
}

impl NativeCache {
    fn of(client: &NativeClient, cache: zkrecipes::Result<Cache>) -> Result<Arc<Self>> {
        Ok(Arc::new(NativeCache {
            cache: cache?,
            client: client.inner.clone(),
        }))
    }
}

#[uniffi::export]
impl NativeCache {
    #[uniffi::constructor]
    pub fn node(client: &NativeClient, path: String) -> Result<Arc<Self>> {
        NativeCache::of(client, Cache::node(&client.inner, &path))
    }

    #[uniffi::constructor]
    pub fn children(client: &NativeClient, path: String) -> Result<Arc<Self>> {
        NativeCache::of(client, Cache::children(&client.inner, &path))
    }

    /// `max_depth` `None`: all of the subtree; checked by the core.
    #[uniffi::constructor]
    pub fn tree(client: &NativeClient, path: String, max_depth: Option<i64>) -> Result<Arc<Self>> {
        let max_depth = zkrecipes::ffi::max_depth("maxDepth", max_depth.map(i128::from))?;
        NativeCache::of(client, Cache::tree(&client.inner, &path, max_depth))
    }

    pub fn path(&self) -> String {
        self.cache.path().to_string()
    }

    /// Returns once the first load is in the copy; a cancelled call leaves the cache going.
    pub async fn start(&self) -> Result<()> {
        let cache = self.cache.clone();
        run(begun(async move { cache.start().await })).await
    }

    pub fn is_initialized(&self) -> bool {
        self.cache.is_initialized()
    }

    pub fn get(&self, path: String) -> Option<NativeCachedNode> {
        self.cache.get(&path).map(Into::into)
    }

    pub fn snapshot(&self) -> Vec<NativeCachedNode> {
        self.cache.snapshot().into_iter().map(Into::into).collect()
    }

    pub fn children_of(&self, path: String) -> Vec<String> {
        self.cache.children_of(&path)
    }

    pub fn size(&self) -> u32 {
        u32::try_from(self.cache.len()).unwrap_or(u32::MAX)
    }

    pub fn events(&self) -> Arc<NativeCacheEvents> {
        NativeCacheEvents::of(&self.client, self.cache.subscribe())
    }

    /// Stops following and frees the copy; the event flows end. (Not `close`: uniffi's objects
    /// have one, which frees them.)
    pub fn end(&self) {
        self.cache.close();
    }
}

/// A cache's (or a group's) events as Kotlin collects them: `next()` suspends until the next
/// one. None is dropped; the stream ends with the cache or its client.
#[derive(uniffi::Object)]
pub struct NativeCacheEvents {
    source: tokio::sync::Mutex<UnboundedReceiver<CacheEvent>>,
    client: zkrecipes::Client,
}

impl NativeCacheEvents {
    pub fn of(client: &zkrecipes::Client, events: UnboundedReceiver<CacheEvent>) -> Arc<Self> {
        Arc::new(NativeCacheEvents {
            source: tokio::sync::Mutex::new(events),
            client: client.clone(),
        })
    }
}

#[uniffi::export]
impl NativeCacheEvents {
    /// The next event; `None` once the cache or its client is closed (after what was told
    /// before). Receiving needs no runtime context: a cancelled collector just stops polling.
    pub async fn next(&self) -> Option<NativeCacheEvent> {
        let mut events = self.source.lock().await;
        tokio::select! {
            biased;
            event = events.recv() => event.map(Into::into),
            () = self.client.closed() => events.try_recv().ok().map(Into::into),
        }
    }
}
