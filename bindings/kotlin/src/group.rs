//! Curator's `PersistentNode` and `GroupMember`.

use std::sync::Arc;

use zkrecipes::{GroupMember, PersistentNode};

use crate::cache::NativeCacheEvents;
use crate::client::NativeClient;
use crate::errors::Result;
use crate::tasks::run;
use zkrecipes::ffi::begun;

#[derive(uniffi::Object)]
pub struct NativePersistentNode {
    node: PersistentNode,
}

#[uniffi::export]
impl NativePersistentNode {
    #[uniffi::constructor]
    pub fn new(
        client: &NativeClient,
        path: String,
        mode: String,
        data: Vec<u8>,
    ) -> Result<Arc<Self>> {
        let mode = zkrecipes::ffi::node_mode(&mode)?;
        Ok(Arc::new(NativePersistentNode {
            node: PersistentNode::new(&client.inner, &path, mode, data)?,
        }))
    }

    pub fn path(&self) -> String {
        self.node.path().to_string()
    }

    /// The actual path once the node exists; a cancelled call leaves the node being kept.
    pub async fn start(&self) -> Result<String> {
        let node = self.node.clone();
        run(begun(async move { node.start().await })).await
    }

    pub fn actual_path(&self) -> Option<String> {
        self.node.actual_path()
    }

    pub fn data(&self) -> Vec<u8> {
        self.node.data()
    }

    pub async fn set_data(&self, data: Vec<u8>) -> Result<()> {
        let node = self.node.clone();
        run(async move { node.set_data(data).await }).await
    }

    /// Stops re-creating the node and deletes it, confirmed.
    pub async fn close_async(&self) -> Result<()> {
        let node = self.node.clone();
        run(async move { node.close().await }).await
    }

    /// `close_async()` for a thread that may block (its error is dropped: the node is no longer
    /// kept either way, and an ephemeral one goes with its session).
    pub fn close_blocking(&self) {
        let node = self.node.clone();
        crate::tasks::block(async move {
            let _ = node.close().await;
        });
    }
}

/// One member: its id and payload.
#[derive(uniffi::Record)]
pub struct NativeMember {
    pub id: String,
    pub payload: Vec<u8>,
}

#[derive(uniffi::Object)]
pub struct NativeGroupMember {
    member: GroupMember,
    client: zkrecipes::Client,
}

#[uniffi::export]
impl NativeGroupMember {
    #[uniffi::constructor]
    pub fn new(
        client: &NativeClient,
        group: String,
        id: String,
        payload: Vec<u8>,
    ) -> Result<Arc<Self>> {
        Ok(Arc::new(NativeGroupMember {
            member: GroupMember::new(&client.inner, &group, &id, payload)?,
            client: client.inner.clone(),
        }))
    }

    pub fn id(&self) -> String {
        self.member.id().to_string()
    }

    pub fn group(&self) -> String {
        self.member.group().to_string()
    }

    /// Joins; returns once this member is in its own view.
    pub async fn start(&self) -> Result<()> {
        let member = self.member.clone();
        run(begun(async move { member.start().await })).await
    }

    /// Every member, by id, this one included once started.
    pub fn members(&self) -> Vec<NativeMember> {
        self.member
            .members()
            .into_iter()
            .map(|(id, payload)| NativeMember { id, payload })
            .collect()
    }

    pub async fn set_payload(&self, payload: Vec<u8>) -> Result<()> {
        let member = self.member.clone();
        run(async move { member.set_payload(payload).await }).await
    }

    pub fn events(&self) -> Arc<NativeCacheEvents> {
        NativeCacheEvents::of(&self.client, self.member.subscribe())
    }

    /// Leaves (the member's node deleted, confirmed); the event flows end.
    pub async fn close_async(&self) -> Result<()> {
        let member = self.member.clone();
        run(async move { member.close().await }).await
    }

    /// `close_async()` for a thread that may block.
    pub fn close_blocking(&self) {
        let member = self.member.clone();
        crate::tasks::block(async move {
            let _ = member.close().await;
        });
    }
}
