//! A lock as the bindings drive it: the calls of `lock/write_lock/owned.rs`, and the same calls
//! of a multi-lock (`lock/multi_lock.rs`), whose token is one per path.

use std::future::Future;

use crate::error::Result;
use crate::handoff::Handoff;
use crate::lock::multi_lock::MultiLock;
use crate::lock::write_lock::{Lock, Owner};
use crate::wait::Wait;

/// The lock calls of a binding, whose callers name an owner (a thread, an asyncio task) and
/// get a fencing token where Rust gets a guard.
pub trait OwnedLock {
    /// What a hold is fenced with: one token, or one per path of a multi-lock.
    type Token: Send + 'static;

    /// Acquires for `owner`: the fencing token, `None` if not obtained (never `TIMEOUT`).
    /// Dropping the future withdraws the attempt's node.
    fn lock_as(
        &self,
        owner: Owner,
        wait: Wait,
    ) -> impl Future<Output = Result<Option<Self::Token>>> + Send + '_;

    /// Drops one hold of `owner` (at zero deletes the node, confirmed): `NOT_OWNER` if `owner`
    /// holds nothing, the loss's error if its hold was lost. Starts when called and runs to its
    /// end even if the future is dropped.
    fn unlock_as(&self, owner: Owner) -> impl Future<Output = Result<()>> + Send + 'static;

    /// Releases the oldest hold, whoever its owner (Node, whose callers have no identity).
    fn unlock_one(&self) -> impl Future<Output = Result<()>> + Send + 'static;

    /// For a caller that gave up after `lock_as` succeeded: the hold is released, never kept.
    fn abandon_acquired(&self, owner: Owner);

    /// Releases every hold of this object, whoever its owner (a binding's `close()`): no
    /// other thread's hold is stranded on the server.
    fn release_all(&self) -> impl Future<Output = ()> + Send + '_;

    /// For a hold carried to its caller across threads: released unless the `Handoff` is
    /// marked delivered.
    fn handoff_acquired(&self, owner: Owner) -> Handoff;
}

/// The calls are the recipe's own (`pub(crate)`), offered to the bindings.
macro_rules! owned_lock {
    ($recipe:ident, $token:ty) => {
        impl OwnedLock for $recipe {
            type Token = $token;

            fn lock_as(
                &self,
                owner: Owner,
                wait: Wait,
            ) -> impl Future<Output = Result<Option<$token>>> + Send + '_ {
                $recipe::lock_as(self, owner, wait)
            }

            fn unlock_as(&self, owner: Owner) -> impl Future<Output = Result<()>> + Send + 'static {
                $recipe::unlock_as(self, owner)
            }

            fn unlock_one(&self) -> impl Future<Output = Result<()>> + Send + 'static {
                $recipe::unlock_one(self)
            }

            fn abandon_acquired(&self, owner: Owner) {
                $recipe::abandon_acquired(self, owner)
            }

            fn release_all(&self) -> impl Future<Output = ()> + Send + '_ {
                $recipe::release_all(self)
            }

            fn handoff_acquired(&self, owner: Owner) -> Handoff {
                $recipe::handoff_acquired(self, owner)
            }
        }
    };
}

owned_lock!(Lock, i64);
owned_lock!(MultiLock, Vec<i64>);
