//! What `Client::metrics` answers: every series recorded so far, with lookups, percentile
//! estimates and the Prometheus text exposition format (what `--metrics-addr` serves).

use std::fmt::Write;

use super::catalog::{Instrument, Metric};

/// Every series a client has recorded, in catalog order.
#[derive(Clone, Debug, Default)]
pub struct MetricsSnapshot {
    pub points: Vec<MetricPoint>,
}

/// One series: a metric with one set of attribute values.
#[derive(Clone, Debug)]
pub struct MetricPoint {
    pub metric: &'static Metric,
    /// `(name, value)` in the metric's attribute order (`path` left out when paths are off).
    pub attributes: Vec<(&'static str, String)>,
    pub value: MetricValue,
}

#[derive(Clone, Debug, PartialEq)]
pub enum MetricValue {
    Counter(u64),
    UpDownCounter(i64),
    Histogram(HistogramPoint),
}

/// A duration histogram: `counts[i]` values were at most `bounds[i]` seconds (and above the
/// bound before); the last count is everything above the last bound.
#[derive(Clone, Debug, PartialEq)]
pub struct HistogramPoint {
    pub count: u64,
    /// Seconds.
    pub sum: f64,
    pub min: f64,
    pub max: f64,
    pub bounds: &'static [f64],
    pub counts: Vec<u64>,
}

impl HistogramPoint {
    /// The `q` quantile (0..=1) in seconds, interpolated inside its bucket as Prometheus'
    /// `histogram_quantile` does and kept within the recorded minimum and maximum; `None`
    /// when nothing was recorded.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        let rank = q.clamp(0.0, 1.0) * self.count as f64;
        let mut below = 0u64;
        for (at, count) in self.counts.iter().enumerate() {
            if *count > 0 && (below + count) as f64 >= rank {
                let lower = if at == 0 { 0.0 } else { self.bounds[at - 1] };
                let upper = self.bounds.get(at).copied().unwrap_or(self.max);
                let within = (rank - below as f64) / *count as f64;
                let estimate = lower + (upper - lower) * within;
                return Some(estimate.clamp(self.min, self.max));
            }
            below += count;
        }
        Some(self.max)
    }

    fn merge(&mut self, other: &HistogramPoint) {
        if other.count == 0 {
            return;
        }
        self.min = if self.count == 0 {
            other.min
        } else {
            self.min.min(other.min)
        };
        self.max = self.max.max(other.max);
        self.count += other.count;
        self.sum += other.sum;
        for (mine, theirs) in self.counts.iter_mut().zip(&other.counts) {
            *mine += theirs;
        }
    }
}

impl MetricsSnapshot {
    fn matching<'a>(
        &'a self,
        name: &'a str,
        filter: &'a [(&str, &str)],
    ) -> impl Iterator<Item = &'a MetricPoint> {
        self.points.iter().filter(move |p| {
            p.metric.name == name
                && filter
                    .iter()
                    .all(|(k, v)| p.attributes.iter().any(|(n, value)| n == k && value == v))
        })
    }

    /// The sum of counter `name` over the points whose attributes include `filter`.
    pub fn counter(&self, name: &str, filter: &[(&str, &str)]) -> u64 {
        self.matching(name, filter)
            .map(|p| match p.value {
                MetricValue::Counter(n) => n,
                _ => 0,
            })
            .sum()
    }

    /// The sum of up/down counter `name` over the points whose attributes include `filter`.
    pub fn gauge(&self, name: &str, filter: &[(&str, &str)]) -> i64 {
        self.matching(name, filter)
            .map(|p| match p.value {
                MetricValue::UpDownCounter(n) => n,
                _ => 0,
            })
            .sum()
    }

    /// Histogram `name` merged over the points whose attributes include `filter`.
    pub fn histogram(&self, name: &str, filter: &[(&str, &str)]) -> Option<HistogramPoint> {
        let mut merged: Option<HistogramPoint> = None;
        for point in self.matching(name, filter) {
            if let MetricValue::Histogram(h) = &point.value {
                match merged.as_mut() {
                    None => merged = Some(h.clone()),
                    Some(m) => m.merge(h),
                }
            }
        }
        merged
    }

    /// The Prometheus text exposition format (version 0.0.4): dots become underscores, a
    /// duration gets `_seconds`, a counter `_total` (its family's name too, as the format
    /// wants), an up/down counter is a gauge.
    pub fn to_prometheus(&self) -> String {
        let mut text = String::new();
        let mut previous: Option<&str> = None;
        for point in &self.points {
            let metric = point.metric;
            let base = prometheus_name(metric);
            if previous != Some(metric.name) {
                let kind = match metric.instrument {
                    Instrument::Counter => "counter",
                    Instrument::UpDownCounter => "gauge",
                    Instrument::Histogram => "histogram",
                };
                let _ = writeln!(text, "# HELP {base} {}", metric.description);
                let _ = writeln!(text, "# TYPE {base} {kind}");
                previous = Some(metric.name);
            }
            let labels = |extra: Option<(&str, String)>| {
                let mut pairs: Vec<String> = point
                    .attributes
                    .iter()
                    .map(|(n, v)| format!("{n}=\"{}\"", escape_label(v)))
                    .collect();
                if let Some((n, v)) = extra {
                    pairs.push(format!("{n}=\"{v}\""));
                }
                match pairs.is_empty() {
                    true => String::new(),
                    false => format!("{{{}}}", pairs.join(",")),
                }
            };
            match &point.value {
                MetricValue::Counter(n) => {
                    let _ = writeln!(text, "{base}{} {n}", labels(None));
                }
                MetricValue::UpDownCounter(n) => {
                    let _ = writeln!(text, "{base}{} {n}", labels(None));
                }
                MetricValue::Histogram(h) => {
                    let mut cumulative = 0;
                    for (at, count) in h.counts.iter().enumerate() {
                        cumulative += count;
                        let le = match h.bounds.get(at) {
                            Some(bound) => bound.to_string(),
                            None => "+Inf".to_string(),
                        };
                        let _ = writeln!(
                            text,
                            "{base}_bucket{} {cumulative}",
                            labels(Some(("le", le)))
                        );
                    }
                    let _ = writeln!(text, "{base}_sum{} {}", labels(None), h.sum);
                    let _ = writeln!(text, "{base}_count{} {}", labels(None), h.count);
                }
            }
        }
        text
    }
}

/// The Prometheus family name: `zkrecipes.lock.wait.duration` →
/// `zkrecipes_lock_wait_duration_seconds`, `zkrecipes.lock.acquisitions` →
/// `zkrecipes_lock_acquisitions_total`.
pub fn prometheus_name(metric: &Metric) -> String {
    let base = metric.name.replace('.', "_");
    match (metric.unit, metric.instrument) {
        ("s", _) => format!("{base}_seconds"),
        (_, Instrument::Counter) => format!("{base}_total"),
        _ => base,
    }
}

fn escape_label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::super::catalog::{BUCKETS, LOCK_ACQUISITIONS, LOCK_WAIT, LOCK_WAITERS};
    use super::*;

    fn histogram(values: &[f64]) -> HistogramPoint {
        let mut counts = vec![0; BUCKETS.len() + 1];
        for v in values {
            counts[BUCKETS.partition_point(|b| b < v)] += 1;
        }
        HistogramPoint {
            count: values.len() as u64,
            sum: values.iter().sum(),
            min: values.iter().cloned().fold(f64::INFINITY, f64::min),
            max: values.iter().cloned().fold(0.0, f64::max),
            bounds: BUCKETS,
            counts,
        }
    }

    #[test]
    fn quantiles_stay_within_their_bucket_and_the_recorded_range() {
        let h = histogram(
            &[0.002; 90]
                .iter()
                .chain(&[2.0; 10])
                .cloned()
                .collect::<Vec<_>>(),
        );
        let p50 = h.quantile(0.5).unwrap();
        assert!((0.001..=0.0025).contains(&p50), "{p50}");
        let p99 = h.quantile(0.99).unwrap();
        assert!((1.0..=2.0).contains(&p99), "{p99}");
        assert_eq!(h.quantile(1.0), Some(2.0));
        assert_eq!(histogram(&[]).quantile(0.5), None);
    }

    #[test]
    fn prometheus_text_names_types_and_escapes() {
        let snapshot = MetricsSnapshot {
            points: vec![
                MetricPoint {
                    metric: &LOCK_ACQUISITIONS,
                    attributes: vec![
                        ("path", "/a\"b".into()),
                        ("kind", "lock".into()),
                        ("outcome", "acquired".into()),
                    ],
                    value: MetricValue::Counter(3),
                },
                MetricPoint {
                    metric: &LOCK_WAITERS,
                    attributes: vec![],
                    value: MetricValue::UpDownCounter(2),
                },
                MetricPoint {
                    metric: &LOCK_WAIT,
                    attributes: vec![("kind", "lock".into())],
                    value: MetricValue::Histogram(histogram(&[0.002, 7.0])),
                },
            ],
        };
        let text = snapshot.to_prometheus();
        assert!(text.contains("# TYPE zkrecipes_lock_acquisitions_total counter\n"));
        assert!(text.contains(
            "zkrecipes_lock_acquisitions_total{path=\"/a\\\"b\",kind=\"lock\",outcome=\"acquired\"} 3\n"
        ));
        assert!(text.contains("# TYPE zkrecipes_lock_waiters gauge\nzkrecipes_lock_waiters 2\n"));
        assert!(text.contains(
            "zkrecipes_lock_wait_duration_seconds_bucket{kind=\"lock\",le=\"0.0025\"} 1\n"
        ));
        assert!(text.contains(
            "zkrecipes_lock_wait_duration_seconds_bucket{kind=\"lock\",le=\"+Inf\"} 2\n"
        ));
        assert!(text.contains("zkrecipes_lock_wait_duration_seconds_count{kind=\"lock\"} 2\n"));
    }
}
