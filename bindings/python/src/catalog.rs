//! The core's metric catalog and histogram bounds as plain Python values, for the package's
//! `zkrecipes.metrics.CATALOG` and the adapters that make one instrument per metric
//! (`zkrecipes.opentelemetry`), and the waits the package's OpenTelemetry spans are made around
//! (`zkrecipes._spans`): named, typed and described once, in the core.

use pyo3::prelude::*;
use zkrecipes::metrics::{BUCKETS, CATALOG, WAIT_CALLS};

/// `METRIC_CATALOG`: `(name, instrument, unit, description, attributes)` of every metric, in
/// the catalog's order; `HISTOGRAM_BUCKETS`: every duration histogram's upper bounds in seconds;
/// `WAIT_SPANS`: `(call, span name, outcome of a wait that got what it waited for, kind)` of
/// every wait (`("read_lock.acquire", "zkrecipes.lock.acquire", "acquired", "read")`).
pub fn add_constants(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let catalog: Vec<_> = CATALOG
        .iter()
        .map(|metric| {
            (
                metric.name,
                metric.instrument.as_str(),
                metric.unit,
                metric.description,
                metric.attributes.to_vec(),
            )
        })
        .collect();
    m.add("METRIC_CATALOG", catalog)?;
    m.add("HISTOGRAM_BUCKETS", BUCKETS.to_vec())?;
    let waits: Vec<_> = WAIT_CALLS
        .iter()
        .map(|wait| (wait.call, wait.span, wait.success, wait.kind))
        .collect();
    m.add("WAIT_SPANS", waits)?;
    Ok(())
}
