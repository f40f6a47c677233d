//! The bindings' contract: what the Python, Node.js, Java and Kotlin bindings and the command
//! line use besides the Rust API, hidden from the Rust documentation.
//!
//! A binding passes its caller's values as it received them (any sign, any width, the
//! language's own conventions) and converts the answers; every rule on those values is decided
//! here, once, with the message naming what the caller gave. What a Rust user needs is in the
//! crate root, not here.

mod barrier;
mod cache;
mod catalog;
mod client;
mod counter;
mod delivery;
mod discovery;
mod group;
mod guard_slot;
mod latch;
mod lock;
pub mod log;
mod log_fields;
mod log_line;
pub mod metrics;
mod queue;
pub mod recordings;
mod security;
mod semaphore;
mod work_queue;

pub use crate::event::{Event, EventDetails};
pub use crate::handoff::Handoff;
pub use crate::semaphore::LeaseSlot;
pub use crate::work_queue::DeliverySlot;
pub use barrier::member_count;
pub use cache::max_depth;
pub use catalog::{base_unit, catalog_index};
pub use client::{pem, pem_is_text, timeout_setting};
pub use counter::{int32, int64};
pub use discovery::{
    down_policy, millis, payload, port, provider_strategy, spring_payload, InstanceFields,
};
pub use group::node_mode;
pub use guard_slot::{GuardSlot, HeldGuard};
pub use latch::latch_id;
pub use lock::OwnedLock;
pub use log_fields::integer_field;
pub use log_line::log_line;
pub use queue::HandedQueue;
pub use security::SecuritySettings;
pub use semaphore::{lease_count, OwnedSemaphore};
pub use work_queue::{work_queue_options, work_queue_options_java};

/// A stream of events a binding relays to its listeners, in order, until it ends: a cache's
/// (`Cache::subscribe`), a service cache's (`ServiceCache::subscribe`, whose events are parsed
/// as they are read). One relay per binding serves every such stream.
pub trait EventStream<T>: Send + 'static {
    /// The next event; `None` once the stream ended.
    fn next_event(&mut self) -> impl std::future::Future<Output = Option<T>> + Send + '_;
}

impl<T: Send + 'static> EventStream<T> for tokio::sync::mpsc::UnboundedReceiver<T> {
    fn next_event(&mut self) -> impl std::future::Future<Output = Option<T>> + Send + '_ {
        self.recv()
    }
}

impl EventStream<crate::ServiceCacheEvent> for crate::ServiceCacheEvents {
    fn next_event(
        &mut self,
    ) -> impl std::future::Future<Output = Option<crate::ServiceCacheEvent>> + Send + '_ {
        self.recv()
    }
}

/// `operation`, polled once here, on the caller's thread, so that what it does before its first
/// wait happens when called: `Cache::start`, `PersistentNode::start` and `GroupMember::start`
/// launch what goes on after a cancel only when first polled, and an operation a binding's caller
/// cancelled before its task first ran would never have launched it.
pub fn begun<F>(operation: F) -> impl std::future::Future<Output = F::Output> + Send + 'static
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let _context = crate::runtime::runtime().enter();
    let mut operation = Box::pin(operation);
    // The task polls it again at once: a wake-up given to this waker is never needed.
    let first = operation
        .as_mut()
        .poll(&mut std::task::Context::from_waker(std::task::Waker::noop()));
    async move {
        match first {
            std::task::Poll::Ready(done) => done,
            std::task::Poll::Pending => operation.await,
        }
    }
}
