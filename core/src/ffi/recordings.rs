//! A binding's adapter to its ecosystem's metrics API (OpenTelemetry, Micrometer): every
//! recording of a client handed to the binding on the delivery thread (`ffi::delivery`), in
//! order; a duration histogram can only be fed value by value.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::metrics::{MetricsSubscription, Recording};
use crate::Client;

/// Recordings refused because the host's adapter did not keep up (the delivery queue was full).
static RECORDINGS_DROPPED: AtomicU64 = AtomicU64::new(0);

/// Every recording of `client` from now on handed to `sink` on the delivery thread, in order,
/// until the subscription is dropped; its `initial()` is what came before.
pub fn forward_recordings(
    client: &Client,
    sink: Arc<dyn Fn(Recording) + Send + Sync>,
) -> MetricsSubscription {
    client.observe_metrics(move |recording| {
        let (sink, recording) = (sink.clone(), recording.clone());
        if !super::delivery::later(move || sink(recording)) {
            RECORDINGS_DROPPED.fetch_add(1, Ordering::Relaxed);
        }
    })
}

/// How many recordings were refused since the process started: an adapter's numbers are short
/// by these.
pub fn recordings_dropped() -> u64 {
    RECORDINGS_DROPPED.load(Ordering::Relaxed)
}

/// Waits until every recording made before this call has reached its sink (as `ffi::log::flush`).
pub fn flush_recordings(timeout: Duration) -> bool {
    super::delivery::flush(timeout)
}
