//! Exponential backoff with jitter, for attempts that must not hammer a server.

use std::time::Duration;

/// Bounded, jittered exponential backoff between retries: a persistent
/// failure must never turn into a request storm against the ensemble.
pub(crate) struct Backoff {
    next: Duration,
    max: Duration,
}

impl Backoff {
    pub(crate) fn new(first: Duration, max: Duration) -> Backoff {
        Backoff { next: first, max }
    }

    /// The next delay: uniformly random in [d/2, d], d doubling up to `max`.
    pub(crate) fn delay(&mut self) -> Duration {
        let d = self.next;
        self.next = (self.next * 2).min(self.max);
        d / 2 + d.mul_f64(fastrand::f64() / 2.0)
    }

    pub(crate) async fn sleep(&mut self) {
        tokio::time::sleep(self.delay()).await;
    }
}
