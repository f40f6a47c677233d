//! Curator's `LeaderLatch`.

use std::sync::Arc;

use tokio::sync::watch;
use zkrecipes::{LatchParticipant, LeaderLatch};

use crate::client::NativeClient;
use crate::errors::Result;
use crate::events::NativeEvents;
use crate::tasks::{run, wait};

#[derive(uniffi::Object)]
pub struct NativeLatch {
    latch: LeaderLatch,
    client: zkrecipes::Client,
    /// Set once a close returned: the latch's event flows end then (after what was emitted
    /// before), instead of waiting for events a closed latch never sends.
    closed: watch::Sender<bool>,
}

/// One participant, the leader first.
#[derive(uniffi::Record)]
pub struct NativeLatchParticipant {
    pub id: String,
    pub node: String,
    pub is_leader: bool,
}

impl From<LatchParticipant> for NativeLatchParticipant {
    fn from(p: LatchParticipant) -> Self {
        NativeLatchParticipant {
            id: p.id,
            node: p.node,
            is_leader: p.is_leader,
        }
    }
}

#[uniffi::export]
impl NativeLatch {
    /// `id` `None`: the client's identity (`ffi::latch_id`).
    #[uniffi::constructor]
    pub fn new(client: &NativeClient, path: String, id: Option<String>) -> Result<Arc<Self>> {
        let id = zkrecipes::ffi::latch_id(&client.inner, id.as_deref());
        Ok(Arc::new(NativeLatch {
            latch: LeaderLatch::new(&client.inner, &path, &id)?,
            client: client.inner.clone(),
            closed: watch::Sender::new(false),
        }))
    }

    /// Returns once in line (leading or not); a started latch: nothing; a closed one: `CLOSED`.
    pub async fn start(&self) -> Result<()> {
        run(self.latch.start()).await
    }

    /// Withdraws the node; a leader's `NOT_LEADER` is emitted before this returns.
    pub async fn close_async(&self) -> Result<()> {
        let closing = self.latch.close();
        let closed = self.closed.clone();
        run(async move {
            closing.await?;
            closed.send_replace(true);
            Ok(())
        })
        .await
    }

    /// `close_async()` for a thread that may block.
    pub fn close_blocking(&self) {
        let closing = self.latch.close();
        crate::tasks::block(async move {
            let _ = closing.await;
        });
        self.closed.send_replace(true);
    }

    pub fn has_leadership(&self) -> bool {
        self.latch.has_leadership()
    }

    pub fn fencing_token(&self) -> Option<i64> {
        self.latch.fencing_token()
    }

    /// 0 latent, 1 started, 2 closed.
    pub fn state(&self) -> u8 {
        if self.latch.is_closed() {
            2
        } else {
            u8::from(self.latch.is_started())
        }
    }

    pub fn id(&self) -> String {
        self.latch.id().to_string()
    }

    pub fn path(&self) -> String {
        self.latch.path().to_string()
    }

    /// Our node's path while leading.
    pub fn node_path(&self) -> Option<String> {
        self.latch.node_path()
    }

    /// The fencing token once leading; `None` if `timeout_ms` passed first.
    pub async fn await_leadership(&self, timeout_ms: f64) -> Result<Option<i64>> {
        let wait = wait(timeout_ms)?;
        let latch = self.latch.clone();
        run(async move { latch.await_leadership(wait).await }).await
    }

    pub async fn participants(&self) -> Result<Vec<NativeLatchParticipant>> {
        let latch = self.latch.clone();
        let all = run(async move { latch.participants().await }).await?;
        Ok(all.into_iter().map(Into::into).collect())
    }

    pub async fn leader(&self) -> Result<Option<NativeLatchParticipant>> {
        let latch = self.latch.clone();
        Ok(run(async move { latch.leader().await })
            .await?
            .map(Into::into))
    }

    pub fn events(&self) -> Arc<NativeEvents> {
        NativeEvents::latch(
            &self.client,
            self.latch.subscribe(),
            self.closed.subscribe(),
        )
    }
}
