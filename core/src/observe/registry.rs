//! A client's metrics: counters, up/down counters and histograms keyed by metric and attribute
//! values, kept in memory and read as a snapshot. One lock around one map: a recording costs
//! well under a microsecond, against a ZooKeeper round trip of a few hundred.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use super::catalog::{Instrument, Metric, BUCKETS, CATALOG};
use super::recordings::{Recorded, Recording, RecordingObserver};
use super::snapshot::{HistogramPoint, MetricPoint, MetricValue, MetricsSnapshot};

/// Past this many distinct recipe paths a client records further paths as `"_other"`: a lock
/// per order id must not grow the client's memory (or a metrics backend) without bound.
pub const MAX_PATHS: usize = 1000;
/// The `path` value of every path past `MAX_PATHS`.
pub const OTHER_PATH: &str = "_other";

#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) struct SeriesKey {
    metric: &'static str,
    /// The values of the metric's attributes, in its order.
    values: Box<[Box<str>]>,
}

enum Series {
    Sum(i64),
    Histogram(Buckets),
}

#[derive(Clone)]
struct Buckets {
    counts: Vec<u64>,
    sum: f64,
    min: f64,
    max: f64,
}

impl Buckets {
    fn new() -> Buckets {
        Buckets {
            counts: vec![0; BUCKETS.len() + 1],
            sum: 0.0,
            min: f64::INFINITY,
            max: 0.0,
        }
    }

    fn record(&mut self, seconds: f64) {
        let at = BUCKETS.partition_point(|bound| *bound < seconds);
        self.counts[at] += 1;
        self.sum += seconds;
        self.min = self.min.min(seconds);
        self.max = self.max.max(seconds);
    }
}

/// One client's metrics.
pub(crate) struct Registry {
    /// Whether anything is recorded (`ClientOptions::metrics`): off, every recording returns
    /// at once and the snapshot is empty.
    enabled: bool,
    /// Whether points carry the recipe's path (`ClientOptions::metric_paths`).
    paths: bool,
    series: Mutex<HashMap<SeriesKey, Series>>,
    seen_paths: Mutex<HashSet<Box<str>>>,
    /// Told of every recording, under the series lock (`observe`); the flag spares the
    /// recordings a look at the list while nobody observes.
    observers: Mutex<Vec<(u64, RecordingObserver)>>,
    observed: AtomicBool,
}

impl Registry {
    pub(crate) fn new(enabled: bool, paths: bool) -> Arc<Registry> {
        Arc::new(Registry {
            enabled,
            paths,
            series: Mutex::new(HashMap::new()),
            seen_paths: Mutex::new(HashSet::new()),
            observers: Mutex::new(Vec::new()),
            observed: AtomicBool::new(false),
        })
    }

    /// Tells `observer` of every recording from now on, and answers what was recorded before:
    /// both under the series lock, so that no recording is in both or in neither.
    pub(crate) fn observe(self: &Arc<Self>, observer: RecordingObserver) -> MetricsSubscription {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        let series = self.series.lock().unwrap();
        let initial = self.snapshot_of(&series);
        let mut observers = self.observers.lock().unwrap();
        observers.push((id, observer));
        self.observed.store(true, Ordering::SeqCst);
        drop((observers, series));
        MetricsSubscription {
            registry: Arc::downgrade(self),
            id,
            initial,
        }
    }

    fn unobserve(&self, id: u64) {
        let _series = self.series.lock().unwrap();
        let mut observers = self.observers.lock().unwrap();
        observers.retain(|(each, _)| *each != id);
        self.observed.store(!observers.is_empty(), Ordering::SeqCst);
    }

    /// Tells the observers of a recording (the series lock is held by the caller).
    fn tell(&self, key: &SeriesKey, value: Recorded) {
        if !self.observed.load(Ordering::SeqCst) {
            return;
        }
        let Some(metric) = CATALOG.iter().copied().find(|m| m.name == key.metric) else {
            return;
        };
        let recording = Recording {
            metric,
            attributes: self.attributes(metric, key),
            value,
        };
        for (_, observer) in self.observers.lock().unwrap().iter() {
            observer(&recording);
        }
    }

    /// A series' attributes as the snapshot and recordings give them (`path` left out when off).
    fn attributes(&self, metric: &'static Metric, key: &SeriesKey) -> Vec<(&'static str, String)> {
        metric
            .attributes
            .iter()
            .zip(key.values.iter())
            .filter(|(name, _)| self.paths || **name != "path")
            .map(|(name, value)| (*name, value.to_string()))
            .collect()
    }

    /// The key of `metric` with `values` (one per attribute, in order). A `path` value is
    /// dropped when paths are off, and becomes `"_other"` past `MAX_PATHS` distinct ones.
    pub(crate) fn key(&self, metric: &'static Metric, values: &[&str]) -> SeriesKey {
        debug_assert_eq!(metric.attributes.len(), values.len(), "{}", metric.name);
        if !self.enabled {
            return SeriesKey {
                metric: metric.name,
                values: Box::new([]),
            };
        }
        let values = metric
            .attributes
            .iter()
            .zip(values)
            .map(|(name, value)| match *name {
                "path" => self.path_value(value),
                _ => Box::from(*value),
            })
            .collect();
        SeriesKey {
            metric: metric.name,
            values,
        }
    }

    fn path_value(&self, path: &str) -> Box<str> {
        if !self.paths {
            return Box::from("");
        }
        let mut seen = self.seen_paths.lock().unwrap();
        if seen.contains(path) {
            return Box::from(path);
        }
        if seen.len() >= MAX_PATHS {
            return Box::from(OTHER_PATH);
        }
        seen.insert(Box::from(path));
        Box::from(path)
    }

    /// Adds `delta` to a counter or up/down counter.
    pub(crate) fn add(&self, key: &SeriesKey, delta: i64) {
        if !self.enabled {
            return;
        }
        let mut series = self.series.lock().unwrap();
        match series.entry(key.clone()).or_insert(Series::Sum(0)) {
            Series::Sum(sum) => *sum += delta,
            Series::Histogram(_) => debug_assert!(false, "{} is a histogram", key.metric),
        }
        self.tell(key, Recorded::Add(delta));
    }

    /// Records a duration into a histogram.
    pub(crate) fn record(&self, key: &SeriesKey, duration: Duration) {
        if !self.enabled {
            return;
        }
        let mut series = self.series.lock().unwrap();
        let entry = series
            .entry(key.clone())
            .or_insert_with(|| Series::Histogram(Buckets::new()));
        match entry {
            Series::Histogram(buckets) => buckets.record(duration.as_secs_f64()),
            Series::Sum(_) => debug_assert!(false, "{} is not a histogram", key.metric),
        }
        self.tell(key, Recorded::Seconds(duration.as_secs_f64()));
    }

    /// Counts one of `metric` with `values`.
    pub(crate) fn count(&self, metric: &'static Metric, values: &[&str]) {
        self.add(&self.key(metric, values), 1);
    }

    /// Every series recorded so far, in catalog order, then by attribute values.
    pub(crate) fn snapshot(&self) -> MetricsSnapshot {
        self.snapshot_of(&self.series.lock().unwrap())
    }

    fn snapshot_of(&self, series: &HashMap<SeriesKey, Series>) -> MetricsSnapshot {
        let mut points = Vec::with_capacity(series.len());
        for metric in CATALOG {
            let mut of_metric: Vec<_> = series
                .iter()
                .filter(|(key, _)| key.metric == metric.name)
                .collect();
            of_metric.sort_by(|a, b| a.0.values.cmp(&b.0.values));
            for (key, value) in of_metric {
                let attributes = self.attributes(metric, key);
                let value = match (value, metric.instrument) {
                    (Series::Sum(sum), Instrument::Counter) => MetricValue::Counter(*sum as u64),
                    (Series::Sum(sum), _) => MetricValue::UpDownCounter(*sum),
                    (Series::Histogram(b), _) => MetricValue::Histogram(HistogramPoint {
                        count: b.counts.iter().sum(),
                        sum: b.sum,
                        min: if b.min.is_finite() { b.min } else { 0.0 },
                        max: b.max,
                        bounds: BUCKETS,
                        counts: b.counts.clone(),
                    }),
                };
                points.push(MetricPoint {
                    metric,
                    attributes,
                    value,
                });
            }
        }
        MetricsSnapshot { points }
    }
}

/// Recordings go to the observer while this lives (`Client::observe_metrics`).
pub struct MetricsSubscription {
    registry: Weak<Registry>,
    id: u64,
    /// What was recorded before the observer was added, taken at the same moment: an adapter
    /// starts its counters and up/down counters from it (a histogram's past values are gone).
    initial: MetricsSnapshot,
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

/// A count held while something lasts (a waiter, a holder): the up/down counter goes down
/// again when this is dropped, however the wait or hold ends, a cancelled future's included.
pub(crate) struct Gauge {
    registry: Arc<Registry>,
    key: SeriesKey,
}

impl Gauge {
    pub(crate) fn up(registry: &Arc<Registry>, key: SeriesKey) -> Gauge {
        registry.add(&key, 1);
        Gauge {
            registry: registry.clone(),
            key,
        }
    }
}

impl Drop for Gauge {
    fn drop(&mut self) {
        self.registry.add(&self.key, -1);
    }
}

#[cfg(test)]
mod tests {
    use super::super::catalog::{LOCK_ACQUISITIONS, LOCK_HOLD, LOCK_WAITERS};
    use super::*;

    #[test]
    fn counts_histograms_and_gauges_read_back_as_recorded() {
        let registry = Registry::new(true, true);
        for outcome in ["acquired", "acquired", "timeout"] {
            registry.count(&LOCK_ACQUISITIONS, &["/a", "lock", outcome]);
        }
        let hold = registry.key(&LOCK_HOLD, &["/a", "lock"]);
        registry.record(&hold, Duration::from_millis(3));
        registry.record(&hold, Duration::from_secs(400));
        let waiting = Gauge::up(&registry, registry.key(&LOCK_WAITERS, &["/a", "lock"]));
        let snapshot = registry.snapshot();
        assert_eq!(
            snapshot.counter("zkrecipes.lock.acquisitions", &[("outcome", "acquired")]),
            2
        );
        assert_eq!(
            snapshot.counter("zkrecipes.lock.acquisitions", &[("outcome", "timeout")]),
            1
        );
        assert_eq!(snapshot.gauge("zkrecipes.lock.waiters", &[]), 1);
        let h = snapshot
            .histogram("zkrecipes.lock.hold.duration", &[])
            .unwrap();
        assert_eq!((h.count, h.counts[3], h.counts[BUCKETS.len()]), (2, 1, 1));
        assert_eq!((h.min, h.max), (0.003, 400.0));
        drop(waiting);
        assert_eq!(registry.snapshot().gauge("zkrecipes.lock.waiters", &[]), 0);
    }

    #[test]
    fn paths_can_be_left_out_and_are_capped() {
        let without = Registry::new(true, false);
        without.count(&LOCK_ACQUISITIONS, &["/a", "lock", "acquired"]);
        without.count(&LOCK_ACQUISITIONS, &["/b", "lock", "acquired"]);
        let snapshot = without.snapshot();
        assert_eq!(snapshot.points.len(), 1);
        assert!(snapshot.points[0]
            .attributes
            .iter()
            .all(|(n, _)| *n != "path"));
        assert_eq!(snapshot.counter("zkrecipes.lock.acquisitions", &[]), 2);

        let capped = Registry::new(true, true);
        for n in 0..MAX_PATHS + 5 {
            capped.count(&LOCK_ACQUISITIONS, &[&format!("/l{n}"), "lock", "acquired"]);
        }
        let snapshot = capped.snapshot();
        assert_eq!(snapshot.points.len(), MAX_PATHS + 1);
        assert_eq!(
            snapshot.counter("zkrecipes.lock.acquisitions", &[("path", OTHER_PATH)]),
            5
        );
    }
}
