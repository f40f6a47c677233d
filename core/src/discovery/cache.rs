//! A service's instances kept in memory (Curator's `ServiceCache`): the children cache of
//! `<base>/<name>` (one persistent recursive watch, ordinary watches before ZooKeeper 3.6),
//! read as instances.
//!
//! Contract: every answer comes from one consistent copy of the registry (the cache's atomic
//! snapshot), never a torn read; after a disconnect or a new session the copy is read again and
//! exactly the difference is reported (the cache's contract). A node whose data is no instance
//! is left out, as the queries leave it out. Nothing is created: a service not yet registered
//! is an empty cache until it appears (Curator's cache creates the service's node).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc;

use super::{instance::ServiceInstance, parse_listed};
use crate::cache::{Cache, CacheEvent, CachedNode};
use crate::client::Client;
use crate::error::{Error, ErrorCode, Result};
use crate::path;

/// What a service cache reports, in the order its cache saw the changes.
#[derive(Clone, Debug, PartialEq)]
pub enum ServiceCacheEvent {
    Added(ServiceInstance),
    Changed {
        old: Box<ServiceInstance>,
        new: Box<ServiceInstance>,
    },
    Removed(ServiceInstance),
    /// The first load is complete.
    Initialized,
    /// Disconnected: the instances may fall behind until `Reconnected`.
    Suspended,
    /// Connected again and read again.
    Reconnected,
    /// The session expired; the instances are read again under the next one.
    Lost,
}

impl ServiceCacheEvent {
    /// The name shared by every language.
    pub fn name(&self) -> &'static str {
        match self {
            ServiceCacheEvent::Added(_) => "ADDED",
            ServiceCacheEvent::Changed { .. } => "CHANGED",
            ServiceCacheEvent::Removed(_) => "REMOVED",
            ServiceCacheEvent::Initialized => "INITIALIZED",
            ServiceCacheEvent::Suspended => "SUSPENDED",
            ServiceCacheEvent::Reconnected => "RECONNECTED",
            ServiceCacheEvent::Lost => "LOST",
        }
    }

    /// Every name, in declaration order (bindings test their enums against it).
    pub fn names() -> Vec<&'static str> {
        vec![
            "ADDED",
            "CHANGED",
            "REMOVED",
            "INITIALIZED",
            "SUSPENDED",
            "RECONNECTED",
            "LOST",
        ]
    }
}

#[derive(Clone)]
pub struct ServiceCache {
    name: String,
    cache: Cache,
    /// Each node's instance as last parsed, by path, with the node's `(czxid, mzxid)`: an
    /// answer parses only what changed since the previous one.
    parsed: Arc<Mutex<HashMap<String, Parsed>>>,
}

type Parsed = ((i64, i64), Option<ServiceInstance>);

impl ServiceCache {
    pub(super) fn new(client: &Client, base: &str, name: &str) -> Result<ServiceCache> {
        path::check_node_name("a service name", name)?;
        Ok(ServiceCache {
            name: name.to_string(),
            cache: Cache::children(client, &path::join(base, name))?,
            parsed: Arc::default(),
        })
    }

    /// The service's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Starts following the service and returns once the first load is in (it goes on if this
    /// call is cancelled). `CLOSED` once closed.
    pub async fn start(&self) -> Result<()> {
        self.cache.start().await.map_err(as_service_cache)
    }

    /// Waits until the first load is in; `TIMEOUT` after `timeout`.
    pub async fn await_initialized(&self, timeout: Option<Duration>) -> Result<()> {
        self.cache
            .await_initialized(timeout)
            .await
            .map_err(as_service_cache)
    }

    /// Every instance now, sorted by node name, from one consistent copy.
    pub fn instances(&self) -> Vec<ServiceInstance> {
        self.parse(self.cache.snapshot())
    }

    /// The instances now and every change after them, atomically.
    pub fn instances_and_subscribe(&self) -> (Vec<ServiceInstance>, ServiceCacheEvents) {
        let (nodes, events) = self.cache.snapshot_and_subscribe();
        (self.parse(nodes), ServiceCacheEvents { events })
    }

    /// Every change from now on; the stream ends when the cache is closed.
    pub fn subscribe(&self) -> ServiceCacheEvents {
        ServiceCacheEvents {
            events: self.cache.subscribe(),
        }
    }

    /// Stops following and frees the copy. Idempotent.
    pub fn close(&self) {
        self.cache.close();
        self.parsed.lock().unwrap().clear();
    }

    fn parse(&self, nodes: Vec<CachedNode>) -> Vec<ServiceInstance> {
        let mut parsed = self.parsed.lock().unwrap();
        let mut kept = HashMap::with_capacity(nodes.len());
        let mut instances = Vec::with_capacity(nodes.len());
        for node in nodes {
            let version = (node.stat.czxid, node.stat.mzxid);
            let instance = match parsed.remove(&node.path) {
                Some((known, instance)) if known == version => instance,
                _ => parse_listed(&node.path, &node.data),
            };
            instances.extend(instance.clone());
            kept.insert(node.path, (version, instance));
        }
        *parsed = kept;
        instances
    }
}

impl std::fmt::Debug for ServiceCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceCache")
            .field("name", &self.name)
            .field("cache", &self.cache)
            .finish()
    }
}

/// A service cache's events as instances.
pub struct ServiceCacheEvents {
    events: mpsc::UnboundedReceiver<CacheEvent>,
}

impl ServiceCacheEvents {
    /// The next event; `None` once the cache is closed. A node whose data is no instance is
    /// not reported (one that becomes an instance is `Added`, one that stops being one is
    /// `Removed`).
    pub async fn recv(&mut self) -> Option<ServiceCacheEvent> {
        loop {
            let event = self.events.recv().await?;
            if let Some(event) = as_instance_event(event) {
                return Some(event);
            }
        }
    }

    /// The next event if one is waiting.
    pub fn try_recv(&mut self) -> Option<ServiceCacheEvent> {
        while let Ok(event) = self.events.try_recv() {
            if let Some(event) = as_instance_event(event) {
                return Some(event);
            }
        }
        None
    }
}

fn as_instance_event(event: CacheEvent) -> Option<ServiceCacheEvent> {
    let instance = |node: &CachedNode| parse_listed(&node.path, &node.data);
    Some(match event {
        CacheEvent::Created(node) => ServiceCacheEvent::Added(instance(&node)?),
        CacheEvent::Deleted(node) => ServiceCacheEvent::Removed(instance(&node)?),
        CacheEvent::Changed { old, new } => match (instance(&old), instance(&new)) {
            (Some(old), Some(new)) => ServiceCacheEvent::Changed {
                old: Box::new(old),
                new: Box::new(new),
            },
            (None, Some(new)) => ServiceCacheEvent::Added(new),
            (Some(old), None) => ServiceCacheEvent::Removed(old),
            (None, None) => return None,
        },
        CacheEvent::Initialized => ServiceCacheEvent::Initialized,
        CacheEvent::Suspended => ServiceCacheEvent::Suspended,
        CacheEvent::Reconnected => ServiceCacheEvent::Reconnected,
        CacheEvent::Lost => ServiceCacheEvent::Lost,
    })
}

/// The cache's `CLOSED` is the service cache's, named as such.
fn as_service_cache(err: Error) -> Error {
    if err.code() == ErrorCode::Closed && !err.message().contains("client") {
        Error::new(ErrorCode::Closed, "the service cache was closed")
    } else {
        err
    }
}
