//! A client's metrics for Java. `MetricsSnapshot` keeps the core's snapshot behind a handle, so
//! that its lookups (`ffi::metrics`) and Prometheus text are the core's; its points travel
//! packed (`packed_points`, read by `MetricsSnapshot.unpack`), and a `HistogramPoint`'s quantile
//! comes back here as the plain values Java holds.

use jni::objects::{JByteArray, JDoubleArray, JLongArray, JObjectArray, JString};
use jni::Env;
use zkrecipes::ffi::metrics;
use zkrecipes::metrics::{HistogramPoint, MetricPoint, MetricValue, MetricsSnapshot};
use zkrecipes::Client;

use crate::errors::Result;
use crate::export::export;
use crate::handles::{borrow, export_free, into_handle};
use crate::strings::{string, strings};

export! {
    fn Java_io_zkrecipes_Native_clientMetrics<'l>(_env; client: i64) -> i64 {
        Ok(into_handle(unsafe { borrow::<Client>(client) }?.metrics()))
    }
}

export_free!(Java_io_zkrecipes_Native_metricsFree, MetricsSnapshot);

export! {
    fn Java_io_zkrecipes_Native_metricsPoints<'l>(env; snapshot: i64) -> JByteArray<'l> {
        let snapshot = unsafe { borrow::<MetricsSnapshot>(snapshot) }?;
        Ok(env.byte_array_from_slice(&packed_points(&snapshot.points))?)
    }
}

export! {
    fn Java_io_zkrecipes_Native_metricsPrometheus<'l>(env; snapshot: i64) -> JString<'l> {
        let snapshot = unsafe { borrow::<MetricsSnapshot>(snapshot) }?;
        Ok(env.new_string(snapshot.to_prometheus())?)
    }
}

export! {
    /// A counter's sum (`gauge` false) or an up/down counter's (`gauge` true) over the points
    /// whose attributes include `filter` (names and values, one after the other).
    fn Java_io_zkrecipes_Native_metricsValue<'l>(env; snapshot: i64, gauge: bool, name: JString<'l>, filter: JObjectArray<'l, JString<'l>>) -> i64 {
        let snapshot = unsafe { borrow::<MetricsSnapshot>(snapshot) }?;
        let name = string(env, &name)?;
        let filter = pairs(env, &filter)?;
        let filter: Vec<(&str, &str)> = filter.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        Ok(match gauge {
            false => metrics::counter(snapshot, &name, &filter)?,
            true => metrics::gauge(snapshot, &name, &filter)?,
        })
    }
}

export! {
    /// The histogram merged over the matching points, packed as `pack_histogram` packs it;
    /// `null` when nothing matched.
    fn Java_io_zkrecipes_Native_metricsHistogram<'l>(env; snapshot: i64, name: JString<'l>, filter: JObjectArray<'l, JString<'l>>) -> JByteArray<'l> {
        let snapshot = unsafe { borrow::<MetricsSnapshot>(snapshot) }?;
        let name = string(env, &name)?;
        let filter = pairs(env, &filter)?;
        let filter: Vec<(&str, &str)> = filter.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        match metrics::histogram(snapshot, &name, &filter)? {
            Some(histogram) => {
                let mut bytes = Vec::new();
                pack_histogram(&mut bytes, &histogram);
                Ok(env.byte_array_from_slice(&bytes)?)
            }
            None => Ok(JByteArray::null()),
        }
    }
}

export! {
    /// The `q` quantile of a histogram Java holds; NaN when it counted nothing (a quantile
    /// itself is never NaN).
    fn Java_io_zkrecipes_Native_histogramQuantile<'l>(env; count: i64, min: f64, max: f64, bounds: JDoubleArray<'l>, counts: JLongArray<'l>, q: f64) -> f64 {
        let bounds = doubles(env, &bounds)?;
        let counts = longs(env, &counts)?;
        Ok(metrics::quantile(count, min, max, &bounds, &counts, q)?.unwrap_or(f64::NAN))
    }
}

/// `[name, value, name, value, ...]` as pairs; a null anywhere is `INVALID_ARGUMENT`.
fn pairs(env: &mut Env<'_>, flat: &JObjectArray<'_, JString<'_>>) -> Result<Vec<(String, String)>> {
    let flat: Option<Vec<String>> = strings(env, flat)?.into_iter().collect();
    let flat = flat.ok_or_else(|| invalid("an attribute's name or value is null"))?;
    Ok(flat
        .chunks_exact(2)
        .map(|pair| (pair[0].clone(), pair[1].clone()))
        .collect())
}

fn doubles(env: &Env<'_>, array: &JDoubleArray<'_>) -> Result<Vec<f64>> {
    if array.is_null() {
        return Err(invalid("a histogram's bounds are null"));
    }
    let mut values = vec![0.0; array.len(env)?];
    array.get_region(env, 0, &mut values)?;
    Ok(values)
}

fn longs(env: &Env<'_>, array: &JLongArray<'_>) -> Result<Vec<i64>> {
    if array.is_null() {
        return Err(invalid("a histogram's counts are null"));
    }
    let mut values = vec![0; array.len(env)?];
    array.get_region(env, 0, &mut values)?;
    Ok(values)
}

fn invalid(message: &str) -> crate::errors::BindingError {
    zkrecipes::Error::new(zkrecipes::ErrorCode::InvalidArgument, message).into()
}

/// Every point, one after the other: the name, instrument, unit and description (strings: a
/// 4-byte big-endian length, then UTF-8), the number of attributes (4 bytes) and each name and
/// value (strings), the value (8 bytes: `ffi::metrics::value_as_i64`), then 1 and the histogram
/// (`pack_histogram`) for a histogram, else 0. Big-endian throughout, as Java's `ByteBuffer`.
fn packed_points(points: &[MetricPoint]) -> Vec<u8> {
    let mut bytes = Vec::new();
    for point in points {
        let metric = point.metric;
        for text in [
            metric.name,
            metric.instrument.as_str(),
            metric.unit,
            metric.description,
        ] {
            pack_str(&mut bytes, text);
        }
        bytes.extend_from_slice(&(point.attributes.len() as u32).to_be_bytes());
        for (name, value) in &point.attributes {
            pack_str(&mut bytes, name);
            pack_str(&mut bytes, value);
        }
        bytes.extend_from_slice(&metrics::value_as_i64(&point.value).to_be_bytes());
        match &point.value {
            MetricValue::Histogram(histogram) => {
                bytes.push(1);
                pack_histogram(&mut bytes, histogram);
            }
            _ => bytes.push(0),
        }
    }
    bytes
}

/// The count (8 bytes), the sum, minimum and maximum (8-byte doubles), the number of bounds
/// (4 bytes) and each bound, the number of counts (4 bytes) and each count (8 bytes).
fn pack_histogram(bytes: &mut Vec<u8>, histogram: &HistogramPoint) {
    bytes.extend_from_slice(&(histogram.count as i64).to_be_bytes());
    for double in [histogram.sum, histogram.min, histogram.max] {
        bytes.extend_from_slice(&double.to_be_bytes());
    }
    bytes.extend_from_slice(&(histogram.bounds.len() as u32).to_be_bytes());
    for bound in histogram.bounds {
        bytes.extend_from_slice(&bound.to_be_bytes());
    }
    bytes.extend_from_slice(&(histogram.counts.len() as u32).to_be_bytes());
    for count in &histogram.counts {
        bytes.extend_from_slice(&(*count as i64).to_be_bytes());
    }
}

pub(crate) fn pack_str(bytes: &mut Vec<u8>, text: &str) {
    bytes.extend_from_slice(&(text.len() as u32).to_be_bytes());
    bytes.extend_from_slice(text.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use zkrecipes::metrics::{catalog, BUCKETS};

    #[test]
    fn a_packed_point_is_its_text_attributes_value_and_histogram_in_order() {
        let mut counts = vec![0; BUCKETS.len() + 1];
        counts[3] = 2;
        let histogram = HistogramPoint {
            count: 2,
            sum: 0.008,
            min: 0.003,
            max: 0.005,
            bounds: BUCKETS,
            counts,
        };
        let points = [
            MetricPoint {
                metric: &catalog::REQUESTS,
                attributes: vec![("op", "create".into())],
                value: MetricValue::Counter(3),
            },
            MetricPoint {
                metric: &catalog::LOCK_HOLD,
                attributes: vec![],
                value: MetricValue::Histogram(histogram.clone()),
            },
        ];
        let bytes = packed_points(&points);
        let mut expected = Vec::new();
        for text in [
            "zkrecipes.requests",
            "counter",
            "{request}",
            catalog::REQUESTS.description,
        ] {
            pack_str(&mut expected, text);
        }
        expected.extend_from_slice(&1u32.to_be_bytes());
        pack_str(&mut expected, "op");
        pack_str(&mut expected, "create");
        expected.extend_from_slice(&3i64.to_be_bytes());
        expected.push(0);
        let first = expected.len();
        assert_eq!(bytes[..first], expected[..]);
        let mut second = Vec::new();
        for text in [
            "zkrecipes.lock.hold.duration",
            "histogram",
            "s",
            catalog::LOCK_HOLD.description,
        ] {
            pack_str(&mut second, text);
        }
        second.extend_from_slice(&0u32.to_be_bytes());
        second.extend_from_slice(&2i64.to_be_bytes());
        second.push(1);
        pack_histogram(&mut second, &histogram);
        assert_eq!(bytes[first..], second[..]);
        // The count, three doubles, the bounds and the counts, each list after its length.
        let mut alone = Vec::new();
        pack_histogram(&mut alone, &histogram);
        let n = BUCKETS.len();
        assert_eq!(alone.len(), 8 + 3 * 8 + 4 + 8 * n + 4 + 8 * (n + 1));
        assert_eq!(alone[8..16], 0.008f64.to_be_bytes());
    }
}
