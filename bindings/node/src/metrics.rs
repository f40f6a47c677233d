//! A client's metrics (`Client::metrics`): the core's snapshot itself, so that its lookups, its
//! checks of names (`ffi::metrics`) and its quantile estimates answer; `lib/metrics.js` wraps it.

use std::collections::HashMap;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use zkrecipes::ffi::metrics as checked;
use zkrecipes::metrics::{HistogramPoint, MetricValue, MetricsSnapshot};

use crate::errors::IntoJs;
use crate::ordered::Ordered;

#[napi]
pub struct NativeMetrics {
    pub(crate) snapshot: MetricsSnapshot,
}

/// One series as JavaScript reads it: `value` for a counter or an up/down counter, `histogram`
/// for a histogram.
#[napi(object, object_from_js = false)]
pub struct NativeMetricPoint {
    pub name: String,
    pub instrument: String,
    pub unit: String,
    pub description: String,
    #[napi(ts_type = "Record<string, string>")]
    pub attributes: Ordered<String>,
    pub value: Option<f64>,
    pub histogram: Option<NativeHistogram>,
}

/// The attribute filter of a lookup, as the core takes it.
fn filter(attributes: &Option<HashMap<String, String>>) -> Vec<(&str, &str)> {
    attributes
        .iter()
        .flatten()
        .map(|(name, value)| (name.as_str(), value.as_str()))
        .collect()
}

#[napi]
impl NativeMetrics {
    #[napi]
    pub fn points(&self) -> Vec<NativeMetricPoint> {
        self.snapshot
            .points
            .iter()
            .map(|point| {
                let (value, histogram) = match &point.value {
                    MetricValue::Counter(n) => (Some(*n as f64), None),
                    MetricValue::UpDownCounter(n) => (Some(*n as f64), None),
                    MetricValue::Histogram(h) => (None, Some(NativeHistogram { point: h.clone() })),
                };
                NativeMetricPoint {
                    name: point.metric.name.to_string(),
                    instrument: point.metric.instrument.as_str().to_string(),
                    unit: point.metric.unit.to_string(),
                    description: point.metric.description.to_string(),
                    attributes: Ordered(point.attributes.clone()),
                    value,
                    histogram,
                }
            })
            .collect()
    }

    #[napi]
    pub fn counter(
        &self,
        env: &Env,
        name: String,
        attributes: Option<HashMap<String, String>>,
    ) -> napi::Result<f64> {
        let total = checked::counter(&self.snapshot, &name, &filter(&attributes)).into_js(env)?;
        Ok(total as f64)
    }

    #[napi]
    pub fn gauge(
        &self,
        env: &Env,
        name: String,
        attributes: Option<HashMap<String, String>>,
    ) -> napi::Result<f64> {
        let total = checked::gauge(&self.snapshot, &name, &filter(&attributes)).into_js(env)?;
        Ok(total as f64)
    }

    #[napi]
    pub fn histogram(
        &self,
        env: &Env,
        name: String,
        attributes: Option<HashMap<String, String>>,
    ) -> napi::Result<Option<NativeHistogram>> {
        let merged =
            checked::histogram(&self.snapshot, &name, &filter(&attributes)).into_js(env)?;
        Ok(merged.map(|point| NativeHistogram { point }))
    }

    #[napi]
    pub fn to_prometheus(&self) -> String {
        self.snapshot.to_prometheus()
    }
}

/// A duration histogram, in seconds.
#[napi]
pub struct NativeHistogram {
    point: HistogramPoint,
}

#[napi]
impl NativeHistogram {
    #[napi(getter)]
    pub fn count(&self) -> f64 {
        self.point.count as f64
    }

    #[napi(getter)]
    pub fn sum(&self) -> f64 {
        self.point.sum
    }

    #[napi(getter)]
    pub fn min(&self) -> f64 {
        self.point.min
    }

    #[napi(getter)]
    pub fn max(&self) -> f64 {
        self.point.max
    }

    #[napi(getter)]
    pub fn bounds(&self) -> Vec<f64> {
        self.point.bounds.to_vec()
    }

    #[napi(getter)]
    pub fn counts(&self) -> Vec<f64> {
        self.point.counts.iter().map(|n| *n as f64).collect()
    }

    /// The `q` quantile in seconds; null when nothing was recorded.
    #[napi]
    pub fn quantile(&self, env: &Env, q: f64) -> napi::Result<Option<f64>> {
        let h = &self.point;
        let counts: Vec<i64> = h.counts.iter().map(|n| *n as i64).collect();
        checked::quantile(h.count as i64, h.min, h.max, h.bounds, &counts, q).into_js(env)
    }
}
