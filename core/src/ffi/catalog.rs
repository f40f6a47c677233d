//! The metric catalog as the bindings' adapters to other metrics APIs take it (Micrometer in
//! Java and Kotlin): a recording names its metric by its index in `CATALOG` across the boundary
//! (no name to look up per recording), and a unit goes to the APIs that name units in words and
//! put them into a metric's name (Micrometer's `baseUnit`, which its Prometheus naming appends).

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::observe::{Metric, CATALOG};

/// `metric`'s position in `CATALOG`, found by name: a `const` metric has no one address to
/// compare.
pub fn catalog_index(metric: &Metric) -> usize {
    static INDEX: OnceLock<HashMap<&'static str, usize>> = OnceLock::new();
    let index = INDEX.get_or_init(|| {
        CATALOG
            .iter()
            .enumerate()
            .map(|(at, metric)| (metric.name, at))
            .collect()
    });
    // Every recording's metric is one of the catalog's (the registry looks it up there).
    index[metric.name]
}

/// `seconds` for `s`; none for a count (`{acquisition}`, or `1`): UCUM's braces only annotate
/// the unit 1, and the catalog's unit written into a name would make
/// `zkrecipes_lock_acquisitions__acquisition__total` of what `to_prometheus` names
/// `zkrecipes_lock_acquisitions_total`. Any other unit as it is.
pub fn base_unit(ucum: &str) -> Option<&str> {
    match ucum {
        "s" => Some("seconds"),
        "1" | "" => None,
        annotation if annotation.starts_with('{') && annotation.ends_with('}') => None,
        unit => Some(unit),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::{prometheus_name, Instrument};

    /// What Micrometer's Prometheus naming makes of a meter named as the catalog names it, with
    /// this base unit, is the core's own Prometheus name: the dots as underscores, the base unit
    /// appended (a timer's seconds, a counter's or gauge's unit), then a counter's `_total`.
    #[test]
    fn a_base_unit_gives_the_cores_prometheus_names() {
        for metric in CATALOG {
            let mut name = metric.name.replace('.', "_");
            if let Some(unit) = base_unit(metric.unit) {
                name = format!("{name}_{unit}");
            }
            if metric.instrument == Instrument::Counter {
                name.push_str("_total");
            }
            assert_eq!(name, prometheus_name(metric), "{}", metric.name);
        }
        assert_eq!(base_unit("{acquisition}"), None);
        assert_eq!(base_unit("s"), Some("seconds"));
        assert_eq!(base_unit("By"), Some("By"));
    }

    #[test]
    fn every_metric_is_found_at_its_place() {
        for (at, metric) in CATALOG.iter().enumerate() {
            assert_eq!(catalog_index(metric), at);
        }
    }
}
