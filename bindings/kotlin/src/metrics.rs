//! A client's metrics for Kotlin: `NativeMetrics` keeps the core's snapshot, so that its lookups
//! (`ffi::metrics`) and Prometheus text are the core's; its points are records that
//! `Metrics.kt` turns into data classes, and a histogram's quantile comes back here as the plain
//! values Kotlin holds.

use std::collections::HashMap;

use zkrecipes::ffi::metrics;
use zkrecipes::metrics::{HistogramPoint, MetricValue, MetricsSnapshot};

use crate::errors::Result;

/// One series: the catalog's text, the attributes in the metric's order, the value
/// (`ffi::metrics::value_as_i64`) and a histogram's buckets.
#[derive(uniffi::Record)]
pub struct NativeMetricPoint {
    pub name: String,
    /// `counter`, `up_down_counter` or `histogram`.
    pub instrument: String,
    pub unit: String,
    pub description: String,
    pub attributes: Vec<NativeAttribute>,
    pub value: i64,
    pub histogram: Option<NativeHistogram>,
}

#[derive(uniffi::Record)]
pub struct NativeAttribute {
    pub name: String,
    pub value: String,
}

/// A duration histogram in seconds, as `HistogramPoint` has it.
#[derive(uniffi::Record)]
pub struct NativeHistogram {
    pub count: i64,
    pub sum: f64,
    pub min: f64,
    pub max: f64,
    pub bounds: Vec<f64>,
    pub counts: Vec<i64>,
}

impl From<&HistogramPoint> for NativeHistogram {
    fn from(histogram: &HistogramPoint) -> Self {
        NativeHistogram {
            count: histogram.count as i64,
            sum: histogram.sum,
            min: histogram.min,
            max: histogram.max,
            bounds: histogram.bounds.to_vec(),
            counts: histogram.counts.iter().map(|n| *n as i64).collect(),
        }
    }
}

#[derive(uniffi::Object)]
pub struct NativeMetrics {
    snapshot: MetricsSnapshot,
}

impl NativeMetrics {
    pub fn new(snapshot: MetricsSnapshot) -> Self {
        NativeMetrics { snapshot }
    }
}

fn filter_of(attributes: &HashMap<String, String>) -> Vec<(&str, &str)> {
    attributes
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect()
}

#[uniffi::export]
impl NativeMetrics {
    pub fn points(&self) -> Vec<NativeMetricPoint> {
        self.snapshot
            .points
            .iter()
            .map(|point| NativeMetricPoint {
                name: point.metric.name.into(),
                instrument: point.metric.instrument.as_str().into(),
                unit: point.metric.unit.into(),
                description: point.metric.description.into(),
                attributes: point
                    .attributes
                    .iter()
                    .map(|(name, value)| NativeAttribute {
                        name: name.to_string(),
                        value: value.clone(),
                    })
                    .collect(),
                value: metrics::value_as_i64(&point.value),
                histogram: match &point.value {
                    MetricValue::Histogram(h) => Some(h.into()),
                    _ => None,
                },
            })
            .collect()
    }

    pub fn counter(&self, name: String, attributes: HashMap<String, String>) -> Result<i64> {
        Ok(metrics::counter(
            &self.snapshot,
            &name,
            &filter_of(&attributes),
        )?)
    }

    pub fn gauge(&self, name: String, attributes: HashMap<String, String>) -> Result<i64> {
        Ok(metrics::gauge(
            &self.snapshot,
            &name,
            &filter_of(&attributes),
        )?)
    }

    pub fn histogram(
        &self,
        name: String,
        attributes: HashMap<String, String>,
    ) -> Result<Option<NativeHistogram>> {
        let merged = metrics::histogram(&self.snapshot, &name, &filter_of(&attributes))?;
        Ok(merged.as_ref().map(NativeHistogram::from))
    }

    pub fn to_prometheus(&self) -> String {
        self.snapshot.to_prometheus()
    }
}

/// The `q` quantile in seconds of a histogram Kotlin holds; `None` when it counted nothing.
#[uniffi::export]
pub fn histogram_quantile(histogram: NativeHistogram, q: f64) -> Result<Option<f64>> {
    Ok(metrics::quantile(
        histogram.count,
        histogram.min,
        histogram.max,
        &histogram.bounds,
        &histogram.counts,
        q,
    )?)
}
