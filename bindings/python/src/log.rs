//! The library's events to Python's `logging` (the package's `_logs.py` makes the records):
//! the level tables between the two, the sink, and the host's levels told to the core.
//!
//! The core delivers on its own thread ("zkrecipes-log"), never on a runtime thread nor under a
//! recipe's lock, so a handler may block or call the library. That thread attaches to Python
//! for each record (`host_calls`); at interpreter exit it stops, as the listeners' thread does.

use std::sync::Arc;

use pyo3::prelude::*;
use zkrecipes::ffi::log::{self, LogLevel, LogRecord, LOGGERS};
use zkrecipes::ffi::{integer_field, timeout_setting};

use crate::errors::IntoPyResult;
use crate::host_calls;

/// Python's number for a core level. Trace has no level of Python's own: `DEBUG - 5`, which
/// the package names `TRACE`.
fn python_level(level: LogLevel) -> i32 {
    match level {
        LogLevel::Off => 0,
        LogLevel::Error => 40,
        LogLevel::Warn => 30,
        LogLevel::Info => 20,
        LogLevel::Debug => 10,
        LogLevel::Trace => 5,
    }
}

/// Sends every record to `deliver(logger, level, message, fields, dropped)` from now on (the
/// core's delivery thread calls it, attached to Python). An exception that escapes `deliver`
/// goes to `sys.unraisablehook`; the next record is delivered all the same.
#[pyfunction]
pub fn _forward_logs(deliver: Py<PyAny>) {
    let deliver = Arc::new(deliver);
    log::forward_to(Arc::new(move |record: LogRecord| {
        host_calls::attached(|py| {
            let delivered = fields(py, &record.fields).and_then(|fields| {
                let args = (
                    record.logger,
                    python_level(record.level),
                    record.message,
                    fields,
                    record.dropped,
                );
                deliver.call1(py, args)
            });
            if let Err(err) = delivered {
                err.write_unraisable(py, Some(deliver.bind(py)));
            }
        });
    }));
}

/// The record's fields as `(name, value)` pairs, the library's integer fields (`fencing_token`,
/// `waited_ms`, …) as `int`, the others as `str`.
fn fields<'py>(
    py: Python<'py>,
    fields: &[(&'static str, String)],
) -> PyResult<Vec<(&'static str, Bound<'py, PyAny>)>> {
    fields
        .iter()
        .map(|(name, text)| {
            let value = match integer_field(name, text) {
                Some(integer) => integer.into_pyobject(py)?.into_any(),
                None => text.into_pyobject(py)?.into_any(),
            };
            Ok((*name, value))
        })
        .collect()
}

/// Tells the core, for each of its loggers, the most verbose level Python's `logging` shows
/// there now (`Logger.isEnabledFor`, which counts the logger's own level, its parents',
/// `logging.disable` and a disabled logger): an event below it is never made.
#[pyfunction]
pub fn _refresh_log_levels(py: Python<'_>) -> PyResult<()> {
    let logging = py.import("logging")?;
    for name in LOGGERS {
        let logger = logging.call_method1("getLogger", (*name,))?;
        let mut failed = None;
        let level = log::most_verbose_shown(|level| {
            let shown = logger
                .call_method1("isEnabledFor", (python_level(level),))
                .and_then(|shown| shown.is_truthy());
            // A logging setup that raises here keeps its events flowing, and the caller hears why.
            shown.unwrap_or_else(|err| {
                failed.get_or_insert(err);
                true
            })
        });
        log::set_level(name, level);
        if let Some(err) = failed {
            return Err(err);
        }
    }
    Ok(())
}

/// Waits up to `timeout` seconds (with the GIL released: delivery needs it) until every event
/// emitted before the call has reached `logging`; `False` if the deadline came first.
#[pyfunction]
pub fn _flush_logs(py: Python<'_>, timeout: f64) -> PyResult<bool> {
    let timeout = timeout_setting("timeout", timeout, "s").into_py_result()?;
    Ok(py.detach(|| log::flush(timeout)))
}

/// The names of the library's loggers and the levels as `logging` numbers them, for the package.
pub fn add_constants(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("LOGGERS", LOGGERS.to_vec())?;
    m.add("TRACE", python_level(LogLevel::Trace))?;
    Ok(())
}
