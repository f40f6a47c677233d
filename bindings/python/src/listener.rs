//! Core events to Python callables.
//!
//! Callbacks run on one library thread (not a runtime thread), in event
//! order, so a listener may itself call blocking zkrecipes methods. An
//! exception from a listener goes to `sys.unraisablehook`; the recipe goes on.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use tokio::sync::broadcast;
use tokio::task::AbortHandle;
use zkrecipes::ffi::{Event, EventStream};

use crate::errors::to_py;

pub type Delivery = Box<dyn FnOnce() + Send>;

/// Set at interpreter exit: from then on no listener is called, because
/// attaching a thread to a finalizing interpreter crashes the process.
static SHUTDOWN: AtomicBool = AtomicBool::new(false);
/// Held by the dispatcher while it delivers, so that shutdown can wait for it.
static DELIVERING: Mutex<()> = Mutex::new(());

fn dispatcher() -> &'static std::sync::mpsc::Sender<Delivery> {
    static DISPATCHER: OnceLock<std::sync::mpsc::Sender<Delivery>> = OnceLock::new();
    DISPATCHER.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel::<Delivery>();
        std::thread::Builder::new()
            .name("zkrecipes-listeners".into())
            .spawn(move || {
                for deliver in rx {
                    let _delivering = DELIVERING.lock().unwrap_or_else(|e| e.into_inner());
                    if !SHUTDOWN.load(Ordering::SeqCst) {
                        deliver();
                    }
                }
            })
            .expect("listener thread");
        tx
    })
}

/// Registered with `atexit` by the package: stops deliveries (the listeners', the log records'
/// and the metric recordings') and waits a moment for the one in progress (with the GIL
/// released, which it needs).
#[pyfunction]
pub fn _shutdown(py: Python<'_>) {
    SHUTDOWN.store(true, Ordering::SeqCst);
    py.detach(|| crate::host_calls::wait_for_call_at_exit(&DELIVERING));
    // The core's delivery thread (log records, metric recordings) attaches to Python too.
    crate::host_calls::shutdown(py);
}

/// Runs `delivery` (which attaches to Python) on the listener thread, in order.
pub fn deliver(delivery: Delivery) {
    let _ = dispatcher().send(delivery);
}

/// A registered listener; `cancel()` stops deliveries.
#[pyclass(module = "zkrecipes._native")]
pub struct Subscription {
    task: AbortHandle,
}

#[pymethods]
impl Subscription {
    fn cancel(&self) {
        self.task.abort();
    }
}

/// Calls `callback(name, fencing_token, reason)` for every event of `events`
/// (`reason` is the `ZkError` of a `LOST` or `FAILED`, else `None`).
pub fn forward<E: Event>(events: broadcast::Receiver<E>, callback: Py<PyAny>) -> Subscription {
    relay(events, callback, |py, event| {
        let details = event.details();
        let reason = details.reason.map(|r| to_py(r).into_value(py));
        let args = (details.name, details.fencing_token, reason);
        Ok(args.into_pyobject(py)?.unbind())
    })
}

/// Calls `callback(*args(value))` for every value of `values`, in order, on the listener
/// thread (a lagging listener skips to the oldest value still kept, then goes on in order).
pub fn relay<T: Clone + Send + 'static>(
    mut values: broadcast::Receiver<T>,
    callback: Py<PyAny>,
    args: fn(Python<'_>, T) -> PyResult<Py<PyTuple>>,
) -> Subscription {
    let callback = Arc::new(callback);
    let task = zkrecipes::runtime::runtime().spawn(async move {
        loop {
            let value = match values.recv().await {
                Ok(value) => value,
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return,
            };
            call_later(&callback, args, value);
        }
    });
    Subscription {
        task: task.abort_handle(),
    }
}

/// `relay` for a stream that never drops a value (a cache's events): every value, in order,
/// until the stream ends (the recipe closed or dropped).
pub fn relay_all<T: Send + 'static>(
    mut values: impl EventStream<T>,
    callback: Py<PyAny>,
    args: fn(Python<'_>, T) -> PyResult<Py<PyTuple>>,
) -> Subscription {
    let callback = Arc::new(callback);
    let task = zkrecipes::runtime::runtime().spawn(async move {
        while let Some(value) = values.next_event().await {
            call_later(&callback, args, value);
        }
    });
    Subscription {
        task: task.abort_handle(),
    }
}

/// Queues `callback(*args(value))` on the listener thread.
fn call_later<T: Send + 'static>(
    callback: &Arc<Py<PyAny>>,
    args: fn(Python<'_>, T) -> PyResult<Py<PyTuple>>,
    value: T,
) {
    let callback = callback.clone();
    deliver(Box::new(move || {
        Python::attach(|py| {
            let called = args(py, value).and_then(|args| callback.call1(py, args.bind(py)));
            if let Err(err) = called {
                err.write_unraisable(py, Some(callback.bind(py)));
            }
        })
    }));
}
