//! A semaphore as the bindings drive it: counts as their callers give them, and the releases
//! of callers that give back a permit rather than a lease.

use std::future::Future;

use crate::error::Result;
use crate::semaphore::Semaphore;

/// A semaphore's `max_leases`, or a number of leases to acquire, as a binding received it:
/// at least 1 (and at most 2^31-1), else `INVALID_ARGUMENT` naming `name` and the number.
pub fn lease_count(name: &str, value: i64) -> Result<u32> {
    crate::semaphore::lease_count(name, value)
}

/// Releases by whoever calls, not by lease (`threading.Semaphore`'s `release()`).
pub trait OwnedSemaphore {
    /// Releases the oldest lease this object holds, whoever took it; `NOT_OWNER` when it holds
    /// none. Starts when called.
    fn release_one(&self) -> impl Future<Output = Result<()>> + Send + 'static;

    /// Releases every lease this object holds (a binding's `close()`).
    fn release_all(&self) -> impl Future<Output = ()> + Send + '_;
}

impl OwnedSemaphore for Semaphore {
    fn release_one(&self) -> impl Future<Output = Result<()>> + Send + 'static {
        Semaphore::release_one(self)
    }

    fn release_all(&self) -> impl Future<Output = ()> + Send + '_ {
        Semaphore::release_all(self)
    }
}
