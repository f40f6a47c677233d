//! A queue as the bindings that undo an unseen result drive it (Python, Kotlin).

use std::future::Future;

use crate::error::Result;
use crate::handoff::Handoff;
use crate::queue::Item;
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
