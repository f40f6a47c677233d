//! What the bindings share to hand a client's metrics to their language: a snapshot's points as
//! plain values (the bindings wrap the core's `MetricsSnapshot` itself for its lookups and
//! quantiles). Each binding helper adds here only what two bindings would otherwise write twice.

use crate::error::{Error, Result};
use crate::observe::{HistogramPoint, Instrument, Metric, MetricValue, MetricsSnapshot};
use crate::observe::{BUCKETS, CATALOG};

/// A point's value as one signed 64-bit number, as a JVM `long` carries it: a counter's count
/// (held at `i64::MAX`, which no counter of a process reaches), an up/down counter's value, a
/// histogram's count.
pub fn value_as_i64(value: &MetricValue) -> i64 {
    match value {
        MetricValue::Counter(n) => saturating(*n),
        MetricValue::UpDownCounter(n) => *n,
        MetricValue::Histogram(h) => saturating(h.count),
    }
}

fn saturating(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// `MetricsSnapshot::counter`, for a binding's `counter(name, attributes)`: checked first, so
/// that a misspelt name or attribute is an error instead of a zero (see `checked`).
pub fn counter(snapshot: &MetricsSnapshot, name: &str, filter: &[(&str, &str)]) -> Result<i64> {
    checked(name, Instrument::Counter, filter)?;
    Ok(saturating(snapshot.counter(name, filter)))
}

/// `MetricsSnapshot::gauge` (an up/down counter), checked as `counter` is.
pub fn gauge(snapshot: &MetricsSnapshot, name: &str, filter: &[(&str, &str)]) -> Result<i64> {
    checked(name, Instrument::UpDownCounter, filter)?;
    Ok(snapshot.gauge(name, filter))
}

/// `MetricsSnapshot::histogram`, checked as `counter` is; `None` when nothing matched.
pub fn histogram(
    snapshot: &MetricsSnapshot,
    name: &str,
    filter: &[(&str, &str)],
) -> Result<Option<HistogramPoint>> {
    checked(name, Instrument::Histogram, filter)?;
    Ok(snapshot.histogram(name, filter))
}

/// The catalog's metric `name`, if it is an `instrument` and has every attribute `filter`
/// names; else `INVALID_ARGUMENT` saying which. The snapshot's own lookups answer 0 for any
/// name: right for a Rust caller that matches on the catalog's constants, a silent wrong
/// answer for a caller typing a name in another language.
fn checked(name: &str, instrument: Instrument, filter: &[(&str, &str)]) -> Result<&'static Metric> {
    let Some(metric) = CATALOG.iter().copied().find(|m| m.name == name) else {
        return Err(Error::invalid_argument(format!(
            "no metric is named {name:?} (zkrecipes.lock.acquisitions, zkrecipes.requests, ...: \
             docs/observability.md lists them)"
        )));
    };
    if metric.instrument != instrument {
        return Err(Error::invalid_argument(format!(
            "{name} is {} {} metric; this lookup reads {} metrics",
            if metric.instrument == Instrument::UpDownCounter {
                "an"
            } else {
                "a"
            },
            metric.instrument.as_str(),
            instrument.as_str()
        )));
    }
    if let Some((unknown, _)) = filter
        .iter()
        .find(|(attribute, _)| !metric.attributes.contains(attribute))
    {
        return Err(Error::invalid_argument(format!(
            "{name} has no attribute {unknown:?} (it has: {})",
            metric.attributes.join(", ")
        )));
    }
    Ok(metric)
}

/// The `q` quantile in seconds (`HistogramPoint::quantile`) of a histogram a binding handed to
/// its language as plain values and got back from it (the JVM's immutable points): `Ok(None)`
/// when it counted nothing. `INVALID_ARGUMENT` for a `q` outside [0, 1] (a NaN included: the
/// core's clamp would answer the maximum for it), bounds other than the library's buckets, or
/// counts that do not add up to `count` — what the library never hands out.
pub fn quantile(
    count: i64,
    min: f64,
    max: f64,
    bounds: &[f64],
    counts: &[i64],
    q: f64,
) -> Result<Option<f64>> {
    if !(0.0..=1.0).contains(&q) {
        return Err(Error::invalid_argument(format!(
            "a quantile must be within [0, 1], got {q}"
        )));
    }
    if bounds != BUCKETS || counts.len() != BUCKETS.len() + 1 {
        return Err(Error::invalid_argument(format!(
            "a histogram has the library's {} bounds and {} counts, got {} and {}",
            BUCKETS.len(),
            BUCKETS.len() + 1,
            bounds.len(),
            counts.len()
        )));
    }
    let counts: Vec<u64> = counts
        .iter()
        .map(|n| u64::try_from(*n))
        .collect::<Result<_, _>>()
        .map_err(|_| Error::invalid_argument("a histogram's counts are never negative"))?;
    if u64::try_from(count).ok() != Some(counts.iter().sum()) {
        return Err(Error::invalid_argument(format!(
            "a histogram's count is the sum of its counts, got {count} for {}",
            counts.iter().sum::<u64>()
        )));
    }
    let histogram = HistogramPoint {
        count: count as u64,
        sum: 0.0, // not part of a quantile
        min,
        max,
        bounds: BUCKETS,
        counts,
    };
    Ok(histogram.quantile(q))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::catalog::{LOCK_ACQUISITIONS, LOCK_WAITERS};
    use crate::observe::MetricPoint;

    fn snapshot() -> MetricsSnapshot {
        MetricsSnapshot {
            points: vec![
                MetricPoint {
                    metric: &LOCK_ACQUISITIONS,
                    attributes: vec![
                        ("path", "/a".into()),
                        ("kind", "lock".into()),
                        ("outcome", "timeout".into()),
                    ],
                    value: MetricValue::Counter(u64::MAX),
                },
                MetricPoint {
                    metric: &LOCK_WAITERS,
                    attributes: vec![("path", "/a".into()), ("kind", "lock".into())],
                    value: MetricValue::UpDownCounter(-2),
                },
            ],
        }
    }

    #[test]
    fn lookups_refuse_unknown_names_instruments_and_attributes() {
        let seen = snapshot();
        let acquisitions = "zkrecipes.lock.acquisitions";
        assert_eq!(
            counter(&seen, acquisitions, &[("outcome", "timeout")]).unwrap(),
            i64::MAX
        );
        assert_eq!(counter(&seen, acquisitions, &[("path", "/b")]).unwrap(), 0);
        assert_eq!(gauge(&seen, "zkrecipes.lock.waiters", &[]).unwrap(), -2);
        assert_eq!(
            histogram(&seen, "zkrecipes.lock.wait.duration", &[]).unwrap(),
            None
        );
        let typo = counter(&seen, "zkrecipes.lock.acquisition", &[]).unwrap_err();
        assert!(typo.message().contains("no metric is named"), "{typo}");
        let wrong = gauge(&seen, acquisitions, &[]).unwrap_err();
        assert!(
            wrong
                .message()
                .contains("is a counter metric; this lookup reads up_down_counter"),
            "{wrong}"
        );
        let attribute = counter(&seen, acquisitions, &[("paht", "/a")]).unwrap_err();
        assert!(
            attribute.message().contains("path, kind, outcome"),
            "{attribute}"
        );
        assert_eq!(value_as_i64(&MetricValue::Counter(u64::MAX)), i64::MAX);
    }

    #[test]
    fn a_quantile_of_plain_values_is_the_cores_and_bad_values_are_refused() {
        let mut counts = vec![0i64; BUCKETS.len() + 1];
        counts[2] = 90; // 0.001..0.0025
        counts[11] = 10; // 1.0..2.5
        let p50 = quantile(100, 0.002, 2.0, BUCKETS, &counts, 0.5)
            .unwrap()
            .unwrap();
        assert!((0.001..=0.0025).contains(&p50), "{p50}");
        assert_eq!(
            quantile(100, 0.002, 2.0, BUCKETS, &counts, 1.0).unwrap(),
            Some(2.0)
        );
        let none = vec![0i64; BUCKETS.len() + 1];
        assert_eq!(quantile(0, 0.0, 0.0, BUCKETS, &none, 0.5).unwrap(), None);
        for q in [f64::NAN, -0.1, 1.5] {
            assert!(quantile(100, 0.002, 2.0, BUCKETS, &counts, q).is_err());
        }
        assert!(quantile(100, 0.002, 2.0, &BUCKETS[1..], &counts, 0.5).is_err());
        assert!(quantile(99, 0.002, 2.0, BUCKETS, &counts, 0.5).is_err());
        counts[0] = -1;
        assert!(quantile(99, 0.002, 2.0, BUCKETS, &counts, 0.5).is_err());
    }
}
