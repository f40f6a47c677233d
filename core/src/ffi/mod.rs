//! The bindings' contract: what the Python, Node.js, Java and Kotlin bindings and the command
//! line use besides the Rust API, hidden from the Rust documentation.
//!
//! A binding passes its caller's values as it received them (any sign, any width, the
//! language's own conventions) and converts the answers; every rule on those values is decided
//! here, once, with the message naming what the caller gave. What a Rust user needs is in the
//! crate root, not here.

mod guard_slot;
mod lock;
mod queue;

use std::time::Duration;

pub use crate::event::{Event, EventDetails};
pub use crate::handoff::Handoff;
pub use crate::security_settings::SecuritySettings;
pub use crate::semaphore::LeaseSlot;
pub use crate::work_queue::DeliverySlot;
pub use guard_slot::GuardSlot;
pub use lock::OwnedLock;
pub use queue::HandedQueue;

use crate::error::{Error, Result};
use crate::work_queue::{bad_max_deliveries, bad_prefetch, WorkQueueOptions, MAX_PREFETCH};

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

/// A latch participant's id as a binding received it: the caller's, or this client's identity
/// (host and process, as an election member's) when it gave none.
pub fn latch_id(client: &crate::Client, id: Option<&str>) -> String {
    id.map_or_else(|| client.identity().to_string(), str::to_string)
}

/// A timeout setting as a binding receives it, in `unit` (`"s"` or `"ms"`): a number in
/// (0, 1 day], else `INVALID_ARGUMENT` naming the setting and the number.
pub fn timeout_setting(name: &str, value: f64, unit: &str) -> Result<Duration> {
    let per_second = if unit == "ms" { 1000.0 } else { 1.0 };
    let seconds = value / per_second;
    if !seconds.is_finite() || seconds <= 0.0 || seconds > 86_400.0 {
        return Err(Error::invalid_argument(format!(
            "{name} must be in (0, {}] {unit}, got {value}",
            86_400.0 * per_second
        )));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// Work queue options from numbers as a binding received them: `prefetch` 1–1000,
/// `max_deliveries` at least 1 or `None` for no limit.
pub fn work_queue_options(prefetch: i64, max_deliveries: Option<i64>) -> Result<WorkQueueOptions> {
    let options = WorkQueueOptions {
        prefetch: usize::try_from(prefetch)
            .ok()
            .filter(|p| (1..=MAX_PREFETCH).contains(p))
            .ok_or_else(|| bad_prefetch(prefetch))?,
        max_deliveries: match max_deliveries {
            None => None,
            Some(max) => Some(
                u32::try_from(max)
                    .ok()
                    .filter(|m| *m >= 1)
                    .ok_or_else(|| bad_max_deliveries(max))?,
            ),
        },
    };
    Ok(options)
}

/// A semaphore's `max_leases`, or a number of leases to acquire, as a binding received it:
/// at least 1 (and at most 2^31-1), else `INVALID_ARGUMENT` naming `name` and the number.
pub fn lease_count(name: &str, value: i64) -> Result<u32> {
    crate::semaphore::lease_count(name, value)
}

/// A double barrier's `member_count` as a binding received it: 1 to 2^31-1, else
/// `INVALID_ARGUMENT` naming `name` and the number.
pub fn member_count(name: &str, value: i64) -> Result<u32> {
    crate::semaphore::lease_count(name, value)
}

/// Java's convention for `work_queue_options`: an `int` cannot be absent, so `maxDeliveries`
/// 0 means no limit (and a negative one is refused, naming it).
pub fn work_queue_options_java(prefetch: i64, max_deliveries: i64) -> Result<WorkQueueOptions> {
    work_queue_options(prefetch, (max_deliveries != 0).then_some(max_deliveries))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_are_checked_in_their_unit() {
        assert_eq!(
            timeout_setting("t", 1500.0, "ms").unwrap(),
            Duration::from_millis(1500)
        );
        assert_eq!(
            timeout_setting("t", 2.5, "s").unwrap(),
            Duration::from_millis(2500)
        );
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 86_401.0] {
            let err = timeout_setting("session_timeout", bad, "s").unwrap_err();
            assert!(
                err.message()
                    .starts_with("session_timeout must be in (0, 86400] s"),
                "{err}"
            );
        }
    }

    #[test]
    fn java_max_deliveries_zero_is_no_limit() {
        assert_eq!(work_queue_options_java(1, 0).unwrap().max_deliveries, None);
        assert_eq!(
            work_queue_options_java(1, 3).unwrap().max_deliveries,
            Some(3)
        );
        let err = work_queue_options_java(1, -1).unwrap_err();
        assert!(err.message().contains("got -1"), "{err}");
        let err = work_queue_options(0, None).unwrap_err();
        assert!(err.message().contains("between 1 and 1000, got 0"), "{err}");
    }
}
