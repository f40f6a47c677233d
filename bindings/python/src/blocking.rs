//! Blocking and awaitable forms of a core future.
//!
//! Blocking calls release the GIL while they wait and look at Python's signal
//! handlers every 50 ms, so Ctrl-C interrupts a wait; the abandoned core future
//! is dropped, which withdraws whatever it had created on the server.

use std::future::Future;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::IntoPyObjectExt;

use crate::errors::{internal, to_py};
use crate::listener;
use zkrecipes::ffi::Handoff;

use crate::undo::{Undo, Undoable};

const SIGNAL_CHECK: Duration = Duration::from_millis(50);

/// Waits for the future `make` builds (see `wait_then` for why it is built
/// on the runtime, not here).
pub fn wait<T, F>(py: Python<'_>, make: impl FnOnce() -> F + Send + 'static) -> PyResult<T>
where
    T: Send + 'static,
    F: Future<Output = zkrecipes::Result<T>> + Send + 'static,
{
    wait_then(py, make, None::<fn(T) -> Option<Handoff>>)
}

/// `wait` for an operation whose result must not be dropped: a result that
/// was ready when Ctrl-C came is undone (lock released, item put back).
pub fn wait_undoable<T, F>(
    py: Python<'_>,
    make: impl FnOnce() -> F + Send + 'static,
) -> PyResult<T::Out>
where
    T: Undoable,
    F: Future<Output = zkrecipes::Result<T>> + Send + 'static,
{
    let (out, handoff) = wait_then(py, make, Some(|value: T| value.split().1))?.split();
    if let Some(handoff) = handoff {
        handoff.delivered();
    }
    Ok(out)
}

fn wait_then<T, F>(
    py: Python<'_>,
    make: impl FnOnce() -> F + Send + 'static,
    undo: Option<impl FnOnce(T) -> Option<Handoff>>,
) -> PyResult<T>
where
    T: Send + 'static,
    F: Future<Output = zkrecipes::Result<T>> + Send + 'static,
{
    // The waiting thread parks on a plain channel, not inside the runtime: a
    // thread blocked in `block_on` carries the runtime's per-thread context
    // and a deeper stack, which W waiting threads pay W times (issue 17).
    // For the same reason the future is built and boxed on a runtime thread:
    // built here, it took its whole size of this thread's stack (a lock's
    // acquire is about 6 KB, copied on the way), 13 KB more per waiting
    // thread in `make bench` than when it was smaller (issue 32).
    let (done, mut result) = mpsc::sync_channel(1);
    let task = zkrecipes::runtime::runtime().spawn(async move {
        let future = Box::pin(make());
        let _ = done.send(future.await);
    });
    loop {
        let (receiver, received) = py.detach(move || {
            let received = result.recv_timeout(SIGNAL_CHECK);
            (result, received)
        });
        result = receiver;
        match received {
            Ok(outcome) => {
                let value = outcome.map_err(to_py)?;
                // A Ctrl-C that came while a hold or an item was on its way:
                // Python would raise it as soon as this call returns and drop
                // the value, a lock held or an item taken for nobody (found by
                // an adversarial review: every such interrupt lost an item).
                // Raised here instead, with the value undone. What is done and
                // cannot be undone (a release, an ack) is returned: Python
                // raises the Ctrl-C after it, as before.
                let Some(undo) = undo else {
                    return Ok(value);
                };
                if let Err(signal) = py.check_signals() {
                    if let Some(handoff) = undo(value) {
                        handoff.undo();
                    }
                    return Err(signal);
                }
                return Ok(value);
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Err(internal("zkrecipes task failed (panicked)"))
            }
            Err(RecvTimeoutError::Timeout) => {
                if let Err(signal) = py.check_signals() {
                    task.abort();
                    // Finished between the check and the abort: undo, never drop.
                    if let (Ok(Ok(value)), Some(undo)) = (py.detach(move || result.recv()), undo) {
                        if let Some(handoff) = undo(value) {
                            handoff.undo();
                        }
                    }
                    return Err(signal);
                }
            }
        }
    }
}

/// Runs `future` in a task of its own, started now: a Ctrl-C or a cancelled await stops the
/// waiting for it, never the operation (a close that must delete, a start that must begin
/// even if its caller stops waiting before the runtime first polls it).
pub fn detached<T, F>(what: &'static str, future: F) -> impl Future<Output = zkrecipes::Result<T>>
where
    T: Send + 'static,
    F: Future<Output = zkrecipes::Result<T>> + Send + 'static,
{
    let running = zkrecipes::runtime::runtime().spawn(future);
    async move {
        running.await.unwrap_or_else(|failed| {
            let message = format!("{what} failed: {failed}");
            Err(zkrecipes::Error::new(
                zkrecipes::ErrorCode::Internal,
                message,
            ))
        })
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
    resolved_on_loop(
        py,
        false,
        async move { future.await.map(|value| (value, None)) },
    )
}

/// `awaitable` for an operation whose result must not be dropped: if the
/// awaiting task was cancelled by the time the result arrives, it is undone
/// (lock released, item put back). The future resolves to `(value, undo)`:
/// a task cancelled after that (its wake-up already scheduled) never sees
/// the value, and `zkrecipes._undoable` calls `undo` for it.
pub fn awaitable_undoable<'py, T, F>(py: Python<'py>, future: F) -> PyResult<Bound<'py, PyAny>>
where
    T: Undoable,
    F: Future<Output = zkrecipes::Result<T>> + Send + 'static,
{
    resolved_on_loop(py, true, async move { future.await.map(Undoable::split) })
}

fn resolved_on_loop<'py, T, F>(
    py: Python<'py>,
    paired: bool,
    future: F,
) -> PyResult<Bound<'py, PyAny>>
where
    T: for<'a> IntoPyObject<'a> + Send + 'static,
    F: Future<Output = zkrecipes::Result<(T, Option<Handoff>)>> + Send + 'static,
{
    let event_loop = py.import("asyncio")?.call_method0("get_running_loop")?;
    let py_future = event_loop.call_method0("create_future")?;
    let (target, event_loop) = (py_future.clone().unbind(), event_loop.unbind());
    let task = zkrecipes::runtime::runtime().spawn(async move {
        let result = future.await;
        listener::deliver(Box::new(move || {
            Python::attach(|py| {
                let (value, undo) = match result {
                    Ok((value, undo)) => (Ok(value), undo.map(Undo::new)),
                    Err(err) => (Err(err), None),
                };
                let undo = match undo {
                    Some(undo) => Py::new(py, undo).map(|u| u.into_any()).ok(),
                    None => None,
                };
                let value = value.map_err(to_py).and_then(|v| match paired {
                    true => (v, undo.as_ref().map(|u| u.clone_ref(py))).into_py_any(py),
                    false => v.into_py_any(py),
                });
                let (ok, value) = match value {
                    Ok(value) => (true, value),
                    Err(err) => (false, err.into_value(py).into_any()),
                };
                let resolve = py
                    .import("zkrecipes._native")
                    .and_then(|m| m.getattr("_resolve"));
                // A closed loop means nobody awaits any more: undo what was obtained.
                let scheduled = resolve.and_then(|resolve| {
                    event_loop.call_method1(
                        py,
                        "call_soon_threadsafe",
                        (
                            resolve,
                            target,
                            ok,
                            value,
                            undo.as_ref().map(|u| u.clone_ref(py)),
                        ),
                    )
                });
                if scheduled.is_err() {
                    if let Some(undo) = undo {
                        let _ = undo.call0(py);
                    }
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

/// Sets an awaitable's outcome on its loop, unless it was cancelled meanwhile:
/// then whatever the operation obtained is undone.
#[pyfunction]
#[pyo3(signature = (future, ok, value, undo=None))]
pub fn _resolve(
    future: &Bound<'_, PyAny>,
    ok: bool,
    value: &Bound<'_, PyAny>,
    undo: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    if future.call_method0("done")?.is_truthy()? {
        if let Some(undo) = undo {
            undo.call0()?;
        }
        return Ok(());
    }
    future.call_method1(if ok { "set_result" } else { "set_exception" }, (value,))?;
    Ok(())
}
