//! Group membership on Curator's `GroupMember` layout: member `<group>/<id>`, an ephemeral node
//! whose data is the member's payload, kept by a `PersistentNode` (so a member whose session
//! expired joins again by itself), and the membership read from a children cache of
//! `<group>` (so a member that dies leaves everybody's view).
//!
//! Contract, including failures:
//! - The id is the node's name: one that is empty, `.`, `..` or holds `/` is `INVALID_ARGUMENT`
//!   before anything is sent. Two live members with one id are refused by the node rule: the
//!   second waits until the first is gone instead of taking its node over.
//! - `members` always includes this member once started (Curator's rule), with its payload.
//! - `close` deletes the member's node, confirmed, and stops the cache.

use std::collections::BTreeMap;

use tokio::sync::mpsc;

use super::PersistentNode;
use crate::cache::{Cache, CacheEvent};
use crate::client::Client;
use crate::error::{Error, ErrorCode, Result};
use crate::path;

#[derive(Clone)]
pub struct GroupMember {
    id: String,
    group: String,
    node: PersistentNode,
    cache: Cache,
}

impl GroupMember {
    /// Member `id` of the group at `group`, with `payload` as its data.
    pub fn new(client: &Client, group: &str, id: &str, payload: Vec<u8>) -> Result<GroupMember> {
        path::validate(group)?;
        path::check_node_name("a member id", id)
            .map_err(|err| client.about(err, "group member", group))?;
        let member = path::join(group, id);
        Ok(GroupMember {
            id: id.to_string(),
            group: group.to_string(),
            node: PersistentNode::group_member(client, &member, payload)?,
            cache: Cache::children(client, group)?,
        })
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn group(&self) -> &str {
        &self.group
    }

    /// Joins (returns once this member's node exists) and loads the membership.
    /// The view then holds this member too: a subscriber after `start` never hears its own
    /// join.
    pub async fn start(&self) -> Result<()> {
        self.cache.start().await.map_err(as_member)?;
        let mut events = self.cache.subscribe();
        let ours = self.node.start().await.map_err(as_member)?;
        while self.cache.get(&ours).is_none() {
            if events.recv().await.is_none() {
                return Err(closed());
            }
        }
        Ok(())
    }

    /// Every member's id with its payload, this member included once started.
    pub fn members(&self) -> BTreeMap<String, Vec<u8>> {
        let mut members: BTreeMap<String, Vec<u8>> = self
            .cache
            .snapshot()
            .into_iter()
            .map(|node| {
                (
                    node.path[node.path.rfind('/').unwrap_or(0) + 1..].to_string(),
                    node.data,
                )
            })
            .collect();
        if self.node.actual_path().is_some() {
            // Ours before the cache has seen it (just joined): with the payload it was made with.
            members
                .entry(self.id.clone())
                .or_insert_with(|| self.node.data());
        }
        members
    }

    /// Membership changes from now on: `CREATED` (joined), `CHANGED` (new payload), `DELETED`
    /// (left), and the connection events.
    pub fn subscribe(&self) -> mpsc::UnboundedReceiver<CacheEvent> {
        self.cache.subscribe()
    }

    /// A new payload, written now and kept for every re-join.
    pub async fn set_payload(&self, payload: Vec<u8>) -> Result<()> {
        self.node.set_data(payload).await
    }

    /// Leaves the group (the member's node deleted, confirmed) and stops following it.
    pub async fn close(&self) -> Result<()> {
        let left = self.node.close().await;
        self.cache.close();
        left
    }
}

impl std::fmt::Debug for GroupMember {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupMember")
            .field("group", &self.group)
            .field("id", &self.id)
            .finish()
    }
}

fn closed() -> Error {
    Error::new(ErrorCode::Closed, "the group member was closed")
}

/// The member's parts (its view, its node) close with it: their `CLOSED` is the member's,
/// named as such (found by the Kotlin review: "the cache was closed").
fn as_member(err: Error) -> Error {
    if err.code() == ErrorCode::Closed && !err.message().contains("client") {
        closed()
    } else {
        err
    }
}
