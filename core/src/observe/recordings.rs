//! Every recording as it happens, for what feeds another metrics API (OpenTelemetry, Micrometer,
//! the `metrics` crate): a duration histogram can only be fed value by value, never from a
//! snapshot.

use std::sync::{Arc, Weak};

use super::catalog::Metric;
use super::registry::Registry;
use super::snapshot::MetricsSnapshot;

/// One recording: `value` added to a counter or up/down counter, or a duration in seconds
/// recorded into a histogram.
#[derive(Clone, Debug, PartialEq)]
pub struct Recording {
    pub metric: &'static Metric,
    /// As the snapshot gives them (`path` left out when the client's `metric_paths` is off).
    pub attributes: Vec<(&'static str, String)>,
    pub value: Recorded,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Recorded {
    Add(i64),
    Seconds(f64),
}

/// Told of every recording while the client's metrics lock is held: it must be quick and must
/// not call back into the client (a binding's queues it for the delivery thread).
pub type RecordingObserver = Arc<dyn Fn(&Recording) + Send + Sync>;

/// Recordings go to the observer while this lives (`Client::observe_metrics`).
pub struct MetricsSubscription {
    pub(super) registry: Weak<Registry>,
    pub(super) id: u64,
    /// What was recorded before the observer was added, taken at the same moment: an adapter
    /// starts its counters and up/down counters from it (a histogram's past values are gone).
    pub(super) initial: MetricsSnapshot,
}

impl MetricsSubscription {
    pub fn initial(&self) -> &MetricsSnapshot {
        &self.initial
    }
}

impl Drop for MetricsSubscription {
    fn drop(&mut self) {
        if let Some(registry) = self.registry.upgrade() {
            registry.unobserve(self.id);
        }
    }
}

impl std::fmt::Debug for MetricsSubscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetricsSubscription")
            .field("id", &self.id)
            .finish()
    }
}
