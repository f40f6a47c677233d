//! A queue as the bindings that undo an unseen result drive it (Python, Kotlin).

use std::future::Future;

use crate::error::Result;
use crate::handoff::Handoff;
use crate::queue::{empty, DistributedQueue, Item};
use crate::wait::Wait;

/// Takes whose item travels to its caller in a `Handoff`: the item goes back unless it is
/// marked delivered, and `close` waits for it from the claim on.
pub trait HandedQueue {
    fn poll_handed(&self) -> impl Future<Output = Result<Option<(Item, Handoff)>>> + Send + '_;

    /// `poll_handed`, but an empty queue is `NO_SUCH_ELEMENT` (as `remove`).
    fn remove_handed(&self) -> impl Future<Output = Result<(Item, Handoff)>> + Send + '_;

    fn take_handed(
        &self,
        wait: Wait,
    ) -> impl Future<Output = Result<Option<(Item, Handoff)>>> + Send + '_;

    /// Up to `max` head items in one transaction (`max` as the caller gave it: 1 to
    /// `MAX_BATCH`, else `INVALID_ARGUMENT`); empty, with no handoff, when the queue is.
    fn poll_many_handed(
        &self,
        max: i64,
    ) -> impl Future<Output = Result<(Vec<Item>, Option<Handoff>)>> + Send + '_;

    /// `poll_many_handed` once an item is there, waiting as `wait` says; empty if none came.
    fn take_many_handed(
        &self,
        max: i64,
        wait: Wait,
    ) -> impl Future<Output = Result<(Vec<Item>, Option<Handoff>)>> + Send + '_;
}

/// `ffi::HandedQueue`: the claimed item travels to the binding's caller in a `Handoff`, which
/// holds `close` back from the claim on, with no gap.
impl HandedQueue for DistributedQueue {
    async fn poll_handed(&self) -> Result<Option<(Item, Handoff)>> {
        Ok(self.poll_owed(None).await?.map(|owed| owed.hand_off(self)))
    }

    async fn remove_handed(&self) -> Result<(Item, Handoff)> {
        let owed = self
            .poll_owed(None)
            .await?
            .ok_or_else(|| self.about(empty()))?;
        Ok(owed.hand_off(self))
    }

    async fn take_handed(&self, wait: Wait) -> Result<Option<(Item, Handoff)>> {
        let owed = self.take_until(wait.deadline()).await?;
        Ok(owed.map(|owed| owed.hand_off(self)))
    }

    async fn poll_many_handed(&self, max: i64) -> Result<(Vec<Item>, Option<Handoff>)> {
        self.poll_batch_handed(max).await
    }

    async fn take_many_handed(&self, max: i64, wait: Wait) -> Result<(Vec<Item>, Option<Handoff>)> {
        self.take_batch_handed(max, wait).await
    }
}
