//! What a cache tells its client's metrics: each change it reports, by type, and how many
//! nodes it shows now (the up/down counter follows the copy, and goes back to zero when the
//! cache is closed or dropped).

use std::sync::Arc;

use super::CacheEvent;
use crate::client::Client;
use crate::observe::catalog::{CACHE_EVENTS, CACHE_NODES};
use crate::observe::Registry;

pub(super) struct Tally {
    registry: Arc<Registry>,
    root: Box<str>,
    /// The nodes counted into `zkrecipes.cache.nodes` so far.
    counted: i64,
}

impl Tally {
    pub(super) fn new(client: &Client, root: &str) -> Tally {
        Tally {
            registry: client.registry().clone(),
            root: Box::from(root),
            counted: 0,
        }
    }

    /// Counts one reported event (the connection's events are not changes: not counted).
    pub(super) fn saw(&self, event: &CacheEvent) {
        let kind = match event {
            CacheEvent::Created(_) => "added",
            CacheEvent::Changed { .. } => "updated",
            CacheEvent::Deleted(_) => "removed",
            CacheEvent::Initialized => "initialized",
            CacheEvent::Suspended | CacheEvent::Reconnected | CacheEvent::Lost => return,
        };
        self.registry.count(&CACHE_EVENTS, &[&self.root, kind]);
    }

    /// The cache shows `nodes` now.
    pub(super) fn holds(&mut self, nodes: usize) {
        let nodes = i64::try_from(nodes).unwrap_or(i64::MAX);
        let change = nodes - self.counted;
        if change != 0 {
            let key = self.registry.key(&CACHE_NODES, &[&self.root]);
            self.registry.add(&key, change);
            self.counted = nodes;
        }
    }
}

impl Drop for Tally {
    fn drop(&mut self) {
        self.holds(0);
    }
}
