//! A client's metrics fed to the `metrics` crate's facade (feature `metrics-rs`): whatever
//! recorder the program installed (`metrics-exporter-prometheus`, StatsD, …) gets the catalog's
//! names, units and attributes, each recording as it happens.

use metrics::{Label, Unit};

use super::catalog::{Instrument, CATALOG};
use super::recordings::{Recorded, Recording};
use super::registry::MetricsSubscription;
use super::snapshot::MetricValue;
use crate::client::Client;

/// Describes every metric of the catalog to the installed recorder, starts its counters and
/// gauges from what `client` recorded so far, and feeds it every recording until the
/// subscription is dropped. Call it once per client, after installing the recorder.
pub fn export_to_metrics_crate(client: &Client) -> MetricsSubscription {
    for metric in CATALOG {
        let unit = match metric.unit {
            "s" => Unit::Seconds,
            _ => Unit::Count,
        };
        let (name, description) = (metric.name, metric.description);
        match metric.instrument {
            Instrument::Counter => metrics::describe_counter!(name, unit, description),
            Instrument::UpDownCounter => metrics::describe_gauge!(name, unit, description),
            Instrument::Histogram => metrics::describe_histogram!(name, unit, description),
        }
    }
    let subscription = client.observe_metrics(feed);
    for point in &subscription.initial().points {
        let labels = labels(&point.attributes);
        match &point.value {
            MetricValue::Counter(n) => metrics::counter!(point.metric.name, labels).increment(*n),
            MetricValue::UpDownCounter(n) => {
                metrics::gauge!(point.metric.name, labels).increment(*n as f64)
            }
            // Past durations are in buckets, not values: the recorder's histogram starts now.
            MetricValue::Histogram(_) => {}
        }
    }
    subscription
}

fn feed(recording: &Recording) {
    let (name, labels) = (recording.metric.name, labels(&recording.attributes));
    match (recording.metric.instrument, recording.value) {
        (Instrument::Counter, Recorded::Add(n)) => {
            metrics::counter!(name, labels).increment(n.max(0) as u64)
        }
        (Instrument::UpDownCounter, Recorded::Add(n)) => {
            metrics::gauge!(name, labels).increment(n as f64)
        }
        (Instrument::Histogram, Recorded::Seconds(s)) => {
            metrics::histogram!(name, labels).record(s)
        }
        _ => {}
    }
}

fn labels(attributes: &[(&'static str, String)]) -> Vec<Label> {
    attributes
        .iter()
        .map(|(name, value)| Label::new(*name, value.clone()))
        .collect()
}
