//! A client's metrics: the core's `MetricsSnapshot` as Python objects. The lookups, the merge of
//! histograms and the quantile estimate are the core's; this file only converts.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use zkrecipes::ffi::metrics;
use zkrecipes::metrics::{HistogramPoint as CoreHistogram, MetricPoint as CorePoint};
use zkrecipes::metrics::{MetricValue, MetricsSnapshot as CoreSnapshot};

use crate::errors::IntoPyResult;

/// What a client had recorded when `Client.metrics()` was called.
#[pyclass(module = "zkrecipes", name = "MetricsSnapshot", frozen)]
pub struct MetricsSnapshot {
    inner: CoreSnapshot,
}

impl From<CoreSnapshot> for MetricsSnapshot {
    fn from(inner: CoreSnapshot) -> Self {
        MetricsSnapshot { inner }
    }
}

/// One series: a metric with one set of attribute values.
#[pyclass(module = "zkrecipes", name = "MetricPoint", frozen)]
pub struct MetricPoint {
    inner: CorePoint,
}

/// A duration histogram, in seconds.
#[pyclass(module = "zkrecipes", name = "HistogramPoint", frozen)]
pub struct HistogramPoint {
    inner: CoreHistogram,
}

/// The keyword arguments of a lookup as the core's filter: every value must be a `str`.
fn attribute_filter(attributes: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<(String, String)>> {
    let Some(attributes) = attributes else {
        return Ok(Vec::new());
    };
    attributes
        .iter()
        .map(|(name, value)| {
            let name: String = name.extract()?;
            let value: String = value.extract().map_err(|_| {
                PyTypeError::new_err(format!(
                    "the metric attribute {name} must be a str, got {}",
                    value
                        .get_type()
                        .name()
                        .map_or_else(|_| "?".to_string(), |n| n.to_string())
                ))
            })?;
            Ok((name, value))
        })
        .collect()
}

/// The filter as the core's lookups take it.
fn borrowed(filter: &[(String, String)]) -> Vec<(&str, &str)> {
    filter
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect()
}

#[pymethods]
impl MetricsSnapshot {
    /// Every series, in the catalog's order.
    #[getter]
    fn points(&self) -> Vec<MetricPoint> {
        self.inner
            .points
            .iter()
            .map(|point| MetricPoint {
                inner: point.clone(),
            })
            .collect()
    }

    /// The sum of counter `name` over the series whose attributes include these.
    #[pyo3(signature = (name, /, **attributes))]
    fn counter(&self, name: &str, attributes: Option<&Bound<'_, PyDict>>) -> PyResult<i64> {
        let filter = attribute_filter(attributes)?;
        metrics::counter(&self.inner, name, &borrowed(&filter)).into_py_result()
    }

    /// The sum of up/down counter `name` (how many wait or hold now) over the matching series.
    #[pyo3(signature = (name, /, **attributes))]
    fn gauge(&self, name: &str, attributes: Option<&Bound<'_, PyDict>>) -> PyResult<i64> {
        let filter = attribute_filter(attributes)?;
        metrics::gauge(&self.inner, name, &borrowed(&filter)).into_py_result()
    }

    /// Histogram `name` merged over the matching series; `None` when none matched.
    #[pyo3(signature = (name, /, **attributes))]
    fn histogram(
        &self,
        name: &str,
        attributes: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Option<HistogramPoint>> {
        let filter = attribute_filter(attributes)?;
        let merged = metrics::histogram(&self.inner, name, &borrowed(&filter)).into_py_result()?;
        Ok(merged.map(|inner| HistogramPoint { inner }))
    }

    /// The Prometheus text exposition format (version 0.0.4).
    fn to_prometheus(&self) -> String {
        self.inner.to_prometheus()
    }

    fn __repr__(&self) -> String {
        format!(
            "<zkrecipes.MetricsSnapshot of {} points>",
            self.inner.points.len()
        )
    }
}

#[pymethods]
impl MetricPoint {
    #[getter]
    fn name(&self) -> &'static str {
        self.inner.metric.name
    }

    /// `"counter"`, `"up_down_counter"` or `"histogram"`.
    #[getter]
    fn instrument(&self) -> &'static str {
        self.inner.metric.instrument.as_str()
    }

    /// UCUM, as OpenTelemetry writes it: `"s"`, or a count's `"{acquisition}"`.
    #[getter]
    fn unit(&self) -> &'static str {
        self.inner.metric.unit
    }

    #[getter]
    fn description(&self) -> &'static str {
        self.inner.metric.description
    }

    /// The attributes, in the metric's order (a new dict at each call).
    #[getter]
    fn attributes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (name, value) in &self.inner.attributes {
            dict.set_item(*name, value)?;
        }
        Ok(dict)
    }

    /// A counter's or an up/down counter's value; `None` for a histogram.
    #[getter]
    fn value(&self) -> Option<i128> {
        match &self.inner.value {
            MetricValue::Counter(n) => Some(i128::from(*n)),
            MetricValue::UpDownCounter(n) => Some(i128::from(*n)),
            MetricValue::Histogram(_) => None,
        }
    }

    /// A histogram's distribution; `None` for a counter.
    #[getter]
    fn histogram(&self) -> Option<HistogramPoint> {
        match &self.inner.value {
            MetricValue::Histogram(h) => Some(HistogramPoint { inner: h.clone() }),
            _ => None,
        }
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let attributes = self.attributes(py)?.repr()?;
        let value = match &self.inner.value {
            MetricValue::Counter(n) => n.to_string(),
            MetricValue::UpDownCounter(n) => n.to_string(),
            MetricValue::Histogram(h) => format!("histogram of {}", h.count),
        };
        Ok(format!(
            "<zkrecipes.MetricPoint {} {attributes} {value}>",
            self.inner.metric.name
        ))
    }
}

#[pymethods]
impl HistogramPoint {
    /// How many durations were recorded.
    #[getter]
    fn count(&self) -> u64 {
        self.inner.count
    }

    /// Their sum, in seconds.
    #[getter]
    fn sum(&self) -> f64 {
        self.inner.sum
    }

    #[getter]
    fn min(&self) -> f64 {
        self.inner.min
    }

    #[getter]
    fn max(&self) -> f64 {
        self.inner.max
    }

    /// The buckets' upper bounds, in seconds (the last bucket, above them all, has none).
    #[getter]
    fn bounds(&self) -> Vec<f64> {
        self.inner.bounds.to_vec()
    }

    /// How many durations each bucket holds (not cumulative): one more than `bounds`.
    #[getter]
    fn counts(&self) -> Vec<u64> {
        self.inner.counts.clone()
    }

    /// The `q` quantile (0 to 1) in seconds, estimated within its bucket as Prometheus'
    /// `histogram_quantile` does; `None` when nothing was recorded.
    fn quantile(&self, q: f64) -> PyResult<Option<f64>> {
        let h = &self.inner;
        // The shared rule takes a histogram as plain values (as the JVM's points hand it back).
        let long = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        let counts: Vec<i64> = h.counts.iter().map(|n| long(*n)).collect();
        metrics::quantile(long(h.count), h.min, h.max, h.bounds, &counts, q).into_py_result()
    }

    fn __repr__(&self) -> String {
        format!(
            "<zkrecipes.HistogramPoint count={} sum={}s min={}s max={}s>",
            self.inner.count, self.inner.sum, self.inner.min, self.inner.max
        )
    }
}
