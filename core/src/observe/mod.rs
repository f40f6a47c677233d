//! What the library tells about itself: `tracing` events on one target per recipe, and each
//! client's metrics (counters, up/down counters, duration histograms) with a snapshot. Decided
//! here once; the bindings forward the events to their language's logging and convert the
//! snapshot (`ffi::log`, `ffi::metrics`).

pub mod catalog;
mod events;
#[cfg(feature = "metrics-rs")]
mod metrics_crate;
mod recordings;
mod registry;
mod requests;
mod snapshot;
mod wait_calls;
mod waits;

pub use catalog::{Instrument, Metric, BUCKETS, CATALOG};
pub use events::TARGETS;
#[cfg(feature = "metrics-rs")]
pub use metrics_crate::export_to_metrics_crate;
pub use recordings::{Recorded, Recording, RecordingObserver};
pub use registry::{MetricsSubscription, MAX_PATHS, OTHER_PATH};
pub use snapshot::{prometheus_name, HistogramPoint, MetricPoint, MetricValue, MetricsSnapshot};
pub use wait_calls::{WaitCall, WAIT_CALLS};

pub(crate) use events::{millis, recipe_event, session_hex, Recipe};
pub(crate) use registry::{Gauge, Registry};
pub(crate) use requests::{request_observer, state_changed};
pub(crate) use wait_calls::*;
pub(crate) use waits::*;
