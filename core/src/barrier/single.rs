//! The barrier: up while its node exists (Curator's `DistributedBarrier`, kazoo's `Barrier`).
//!
//! Contract, including failures:
//! - `set` creates the node (persistent, with the client's ACL; missing ancestors open), and a
//!   barrier already up stays up. `remove` deletes it; a barrier already down stays down.
//! - `wait` returns `true` once the node is gone, `false` when the deadline passed. It looks
//!   again after every watch event and every connection change, so a removal that happened
//!   while disconnected releases the waiter at the reconnect (kazoo waits for its timeout),
//!   and a new session loses nothing (the look is repeated on it).
//! - A timeout of zero is a check: one look, answered while the connection is up.

use tokio::time::Instant;

use super::look::{look, wait, Woke};
use crate::client::Client;
use crate::error::{ErrorCode, Result};
use crate::observe::{Waiting, BARRIER_WAIT};
use crate::path;
use crate::wait::Wait;

#[derive(Clone)]
pub struct Barrier {
    client: Client,
    path: String,
}

impl Barrier {
    /// The barrier at `path`. Fails with `INVALID_PATH` before anything is sent.
    pub fn new(client: &Client, path: &str) -> Result<Barrier> {
        path::validate(path)?;
        client.check_open()?;
        Ok(Barrier {
            client: client.clone(),
            path: path.to_string(),
        })
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    /// Puts the barrier up (creates its node).
    pub async fn set(&self) -> Result<()> {
        let set = self.client.ensure_path(&self.path, None).await;
        set.map_err(|err| self.about(err))
    }

    /// Takes the barrier down (deletes its node), releasing every waiter. `NOT_EMPTY` if
    /// somebody created children under it.
    pub async fn remove(&self) -> Result<()> {
        let path = self.path.as_str();
        let removed = self
            .client
            .retrying(None, |zk| async move { zk.delete(path, None).await })
            .await;
        match removed {
            Ok(()) => Ok(()),
            Err(err) if err.code() == ErrorCode::NoNode => Ok(()),
            Err(err) => Err(self.about(err)),
        }
    }

    /// Whether the barrier is up now.
    pub async fn is_set(&self) -> Result<bool> {
        let path = self.path.as_str();
        let stat = self
            .client
            .retrying(None, |zk| async move { zk.check_stat(path).await })
            .await;
        stat.map(|s| s.is_some()).map_err(|err| self.about(err))
    }

    /// Waits until the barrier is down: `true`, or `false` when `wait` ran out first.
    pub async fn wait(&self, wait: impl Into<Wait>) -> Result<bool> {
        let mut waiting = Waiting::begin(&self.client, &BARRIER_WAIT, &self.path);
        let deadline = wait.into().normalized().deadline();
        let waited = self.wait_until(deadline, &mut waiting).await;
        let waited = waited.map_err(|err| self.about(err));
        waiting.end_by(&waited);
        waited
    }

    async fn wait_until(&self, deadline: Option<Instant>, waiting: &mut Waiting) -> Result<bool> {
        let path = self.path.as_str();
        loop {
            let watched =
                self.client.retrying(
                    None,
                    |zk| async move { zk.check_and_watch_stat(path).await },
                );
            let Some((stat, watch)) = look(&self.client, deadline, watched).await? else {
                return Ok(false);
            };
            if stat.is_none() {
                return Ok(true);
            }
            waiting.queued();
            if let Woke::Deadline = wait(&self.client, watch, deadline).await? {
                return Ok(false);
            }
        }
    }

    fn about(&self, err: crate::Error) -> crate::Error {
        self.client.about(err, "barrier", &self.path)
    }
}
