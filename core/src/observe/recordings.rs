//! Every recording as it happens, for what feeds another metrics API (OpenTelemetry, Micrometer,
//! the `metrics` crate): a duration histogram can only be fed value by value, never from a
//! snapshot.

use std::sync::Arc;

use super::catalog::Metric;

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
