//! What the bindings share to hand a client's metrics to their language: a snapshot's points as
//! plain values (the bindings wrap the core's `MetricsSnapshot` itself for its lookups and
//! quantiles). Each binding helper adds here only what two bindings would otherwise write twice.

use crate::error::{Error, Result};
use crate::observe::{HistogramPoint, Instrument, Metric, CATALOG};

/// The catalog's metric `name`, as a binding's lookup by name (`counter`, `gauge`, `histogram`)
/// asks for it: `INVALID_ARGUMENT` when no metric has that name, when it is another instrument
/// than `instrument`, or when `attributes` (the filter's names) has one the metric does not
/// carry. Why not just answer 0: a misspelt name or attribute would read as "nothing happened",
/// and a check built on it would pass or fail for the wrong reason.
pub fn metric_for_lookup<'a>(
    name: &str,
    instrument: Instrument,
    attributes: impl IntoIterator<Item = &'a str>,
) -> Result<&'static Metric> {
    let Some(metric) = CATALOG.iter().copied().find(|m| m.name == name) else {
        return Err(Error::invalid_argument(format!(
            "no metric is named {name:?} (zkrecipes::metrics::CATALOG lists them)"
        )));
    };
    if metric.instrument != instrument {
        return Err(Error::invalid_argument(format!(
            "{name} is {}, not {}",
            described(metric.instrument),
            described(instrument)
        )));
    }
    if let Some(unknown) = attributes
        .into_iter()
        .find(|a| !metric.attributes.contains(a))
    {
        return Err(Error::invalid_argument(format!(
            "{name} has no attribute {unknown:?}; its attributes: {}",
            metric.attributes.join(", ")
        )));
    }
    Ok(metric)
}

fn described(instrument: Instrument) -> &'static str {
    match instrument {
        Instrument::Counter => "a counter",
        Instrument::UpDownCounter => "an up/down counter (a gauge)",
        Instrument::Histogram => "a histogram",
    }
}

/// `histogram`'s `q` quantile in seconds (`None` when it recorded nothing), for `q` from 0 to
/// 1 as a binding received it; else `INVALID_ARGUMENT` (the core's estimate would clamp a
/// caller's 99 meant as a percentile to the maximum without a word).
pub fn quantile(histogram: &HistogramPoint, q: f64) -> Result<Option<f64>> {
    if !(0.0..=1.0).contains(&q) {
        return Err(Error::invalid_argument(format!(
            "a quantile is from 0 to 1 (0.99 for the 99th percentile); got {q}"
        )));
    }
    Ok(histogram.quantile(q))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_name_a_metric_of_the_catalog_its_instrument_and_attributes() {
        let found = metric_for_lookup(
            "zkrecipes.lock.acquisitions",
            Instrument::Counter,
            ["outcome"],
        );
        assert_eq!(found.unwrap().name, "zkrecipes.lock.acquisitions");
        let misspelt = metric_for_lookup("zkrecipes.lock.acquisition", Instrument::Counter, []);
        assert!(misspelt
            .unwrap_err()
            .message()
            .contains("no metric is named"));
        let other = metric_for_lookup("zkrecipes.lock.waiters", Instrument::Counter, []);
        assert!(other
            .unwrap_err()
            .message()
            .contains("is an up/down counter (a gauge), not a counter"));
        let attribute = metric_for_lookup(
            "zkrecipes.lock.acquisitions",
            Instrument::Counter,
            ["outcom"],
        );
        assert!(attribute
            .unwrap_err()
            .message()
            .contains("no attribute \"outcom\"; its attributes: path, kind, outcome"));
    }

    #[test]
    fn a_quantile_is_between_0_and_1() {
        let histogram = HistogramPoint {
            count: 1,
            sum: 0.5,
            min: 0.5,
            max: 0.5,
            bounds: crate::observe::BUCKETS,
            counts: vec![0; crate::observe::BUCKETS.len() + 1],
        };
        assert!(quantile(&histogram, 0.5).unwrap().is_some());
        for wrong in [-0.1, 1.5, 99.0, f64::NAN] {
            let err = quantile(&histogram, wrong).unwrap_err();
            assert_eq!(err.code(), crate::ErrorCode::InvalidArgument, "{wrong}");
        }
    }
}
