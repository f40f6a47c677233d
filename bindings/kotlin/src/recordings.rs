//! A client's recordings to Kotlin, value by value (`ffi::recordings`), for the Micrometer binder
//! (`io.zkrecipes.kotlin.micrometer.ZkrecipesMetrics`): a duration histogram can only be fed
//! that way. The core's delivery thread calls the feed's sink (`NativeRecordingSink`, a callback
//! interface, as the log sink is: JNA attaches that thread once, as the daemon "zkrecipes-log",
//! `NativeLibrary.kt`), naming each metric by its index in `metric_catalog()`.
//!
//! A feed stops with `stop()` (those queued before still arrive: `MetricsFeed.kt` waits for them
//! and shuts its gate after) or with its client: the subscription knows the client only weakly,
//! so nothing more comes once the client and its recipes are gone.

use std::sync::{Arc, Mutex};

use zkrecipes::ffi::recordings::{flush_recordings, forward_recordings, recordings_dropped};
use zkrecipes::ffi::{base_unit, catalog_index, timeout_setting};
use zkrecipes::metrics::{MetricsSnapshot, MetricsSubscription, Recorded, Recording};
use zkrecipes::metrics::{BUCKETS, CATALOG};

use crate::client::NativeClient;
use crate::errors::Result;
use crate::metrics::{NativeAttribute, NativeMetrics};

/// One metric of the core's catalog, as the binder makes its meter.
#[derive(uniffi::Record)]
pub struct NativeCatalogMetric {
    pub name: String,
    /// `counter`, `up_down_counter` or `histogram`.
    pub instrument: String,
    /// UCUM: `s`, or a count's `{acquisition}`.
    pub unit: String,
    /// The unit as Micrometer's base unit (`ffi::base_unit`): `seconds`, none for a count.
    pub base_unit: Option<String>,
    pub description: String,
    pub attributes: Vec<String>,
}

/// Every metric, in the order a recording's `metric` numbers them.
#[uniffi::export]
pub fn metric_catalog() -> Vec<NativeCatalogMetric> {
    CATALOG
        .iter()
        .map(|metric| NativeCatalogMetric {
            name: metric.name.into(),
            instrument: metric.instrument.as_str().into(),
            unit: metric.unit.into(),
            base_unit: base_unit(metric.unit).map(String::from),
            description: metric.description.into(),
            attributes: metric.attributes.iter().map(|a| a.to_string()).collect(),
        })
        .collect()
}

/// Every duration histogram's bucket bounds, in seconds.
#[uniffi::export]
pub fn metric_buckets() -> Vec<f64> {
    BUCKETS.to_vec()
}

/// Where a feed's recordings go, on the core's delivery thread.
#[uniffi::export(callback_interface)]
pub trait NativeRecordingSink: Send + Sync {
    /// `metric`: its index in `metric_catalog()`; `attributes` in the metric's order; `value`:
    /// the number added to a counter or up/down counter, or a duration in seconds.
    fn recorded(&self, metric: i32, attributes: Vec<NativeAttribute>, value: f64);
}

/// One client's recordings going to one sink.
#[derive(uniffi::Object)]
pub struct NativeMetricsFeed {
    /// Dropped by `stop` (the core's observer goes with it).
    subscription: Mutex<Option<MetricsSubscription>>,
    initial: MetricsSnapshot,
}

#[uniffi::export]
impl NativeMetricsFeed {
    /// What the client had recorded when the feed started, taken at the same moment.
    pub fn initial(&self) -> Arc<NativeMetrics> {
        Arc::new(NativeMetrics::new(self.initial.clone()))
    }

    /// Nothing new is queued for the sink from now on; what is queued still arrives.
    pub fn stop(&self) {
        let subscription = self
            .subscription
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        drop(subscription);
    }
}

#[uniffi::export]
impl NativeClient {
    /// Hands every recording of this client from now on to `sink`.
    pub fn forward_recordings(&self, sink: Box<dyn NativeRecordingSink>) -> Arc<NativeMetricsFeed> {
        let sink: Arc<dyn NativeRecordingSink> = Arc::from(sink);
        let subscription = forward_recordings(
            &self.inner,
            Arc::new(move |recording: Recording| {
                let attributes = recording
                    .attributes
                    .iter()
                    .map(|(name, value)| NativeAttribute {
                        name: name.to_string(),
                        value: value.clone(),
                    })
                    .collect();
                sink.recorded(
                    catalog_index(recording.metric) as i32,
                    attributes,
                    value_of(recording.value),
                );
            }),
        );
        let initial = subscription.initial().clone();
        Arc::new(NativeMetricsFeed {
            subscription: Mutex::new(Some(subscription)),
            initial,
        })
    }
}

/// A recording's number as Kotlin takes it: a count added (exact as a double up to 2^53, far
/// beyond any one addition) or a duration in seconds.
fn value_of(value: Recorded) -> f64 {
    match value {
        Recorded::Add(n) => n as f64,
        Recorded::Seconds(seconds) => seconds,
    }
}

/// Waits until every recording made before the call has reached its feed's sink, `timeout_ms`
/// at the most; `false` then (and at once on the delivery thread itself).
#[uniffi::export]
pub fn flush_metric_recordings(timeout_ms: f64) -> Result<bool> {
    Ok(flush_recordings(timeout_setting(
        "timeout", timeout_ms, "ms",
    )?))
}

/// Recordings refused since the process started because the sinks did not keep up.
#[uniffi::export]
pub fn metric_recordings_dropped() -> i64 {
    i64::try_from(recordings_dropped()).unwrap_or(i64::MAX)
}
