//! Blocking and awaitable forms of a core future.
//!
//! Blocking calls release the GIL while they wait and look at Python's signal
//! handlers every 50 ms, so Ctrl-C interrupts a wait; the abandoned core future
//! is dropped, which withdraws whatever it had created on the server.

use std::future::Future;
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::IntoPyObjectExt;

use crate::errors::{internal, to_py};
use crate::listener;

const SIGNAL_CHECK: Duration = Duration::from_millis(50);

pub fn wait<T, F>(py: Python<'_>, future: F) -> PyResult<T>
where
    T: Send + 'static,
    F: Future<Output = zkrecipes::Result<T>> + Send + 'static,
{
    let runtime = zkrecipes::runtime::runtime();
    let mut task = runtime.spawn(future);
    loop {
        let finished = py.detach(|| {
            runtime.block_on(async { tokio::time::timeout(SIGNAL_CHECK, &mut task).await })
        });
        match finished {
            Ok(Ok(result)) => return result.map_err(to_py),
            Ok(Err(join_error)) => {
                return Err(internal(format!("zkrecipes task failed: {join_error}")))
            }
            Err(_) => {
                if let Err(signal) = py.check_signals() {
                    task.abort();
                    return Err(signal);
                }
            }
        }
    }
}

/// An `asyncio.Future` of the running loop, resolved with `future`'s result.
///
/// The result is handed over on the listener thread, which the package stops
/// at interpreter exit: a runtime thread that touched Python while the
/// interpreter finalizes would be torn down mid-call and crash the process.
/// Cancelling the Python future drops the core future (withdrawing any node it
/// created).
pub fn awaitable<'py, T, F>(py: Python<'py>, future: F) -> PyResult<Bound<'py, PyAny>>
where
    T: for<'a> IntoPyObject<'a> + Send + 'static,
    F: Future<Output = zkrecipes::Result<T>> + Send + 'static,
{
    let event_loop = py.import("asyncio")?.call_method0("get_running_loop")?;
    let py_future = event_loop.call_method0("create_future")?;
    let (target, event_loop) = (py_future.clone().unbind(), event_loop.unbind());
    let task = zkrecipes::runtime::runtime().spawn(async move {
        let result = future.await;
        listener::deliver(Box::new(move || {
            Python::attach(|py| {
                let (ok, value) = match result.map_err(to_py).and_then(|v| v.into_py_any(py)) {
                    Ok(value) => (true, value),
                    Err(err) => (false, err.into_value(py).into_any()),
                };
                let resolve = py
                    .import("zkrecipes._native")
                    .and_then(|m| m.getattr("_resolve"));
                // A closed loop means nobody awaits any more: nothing to report.
                if let Ok(resolve) = resolve {
                    let _ = event_loop.call_method1(
                        py,
                        "call_soon_threadsafe",
                        (resolve, target, ok, value),
                    );
                }
            })
        }));
    });
    py_future.call_method1(
        "add_done_callback",
        (CancelOnDone {
            task: task.abort_handle(),
        },),
    )?;
    Ok(py_future)
}

/// Done-callback of an awaitable: a cancelled Python future cancels the core future.
#[pyclass(module = "zkrecipes._native")]
struct CancelOnDone {
    task: tokio::task::AbortHandle,
}

#[pymethods]
impl CancelOnDone {
    fn __call__(&self, future: &Bound<'_, PyAny>) -> PyResult<()> {
        if future.call_method0("cancelled")?.is_truthy()? {
            self.task.abort();
        }
        Ok(())
    }
}

/// Sets an awaitable's outcome on its loop, unless it was cancelled meanwhile.
#[pyfunction]
pub fn _resolve(future: &Bound<'_, PyAny>, ok: bool, value: &Bound<'_, PyAny>) -> PyResult<()> {
    if future.call_method0("done")?.is_truthy()? {
        return Ok(());
    }
    future.call_method1(if ok { "set_result" } else { "set_exception" }, (value,))?;
    Ok(())
}
